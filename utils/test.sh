#!/usr/bin/env bash
# The one test command (README, .ci/run): install, build, run every test.
# BUILD_DIR and extra CMake flags (for example -DOOMPLAN_SANITIZE=ON) may be
# given in the environment: BUILD_DIR=build-asan CMAKE_FLAGS=-DOOMPLAN_SANITIZE=ON
set -euo pipefail
cd "$(dirname "$0")/.."
bash utils/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_FLAGS:-} >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)"
