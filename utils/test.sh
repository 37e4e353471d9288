#!/usr/bin/env bash
# The one test command (README, .ci/run): install, build, run every test,
# then the fuzzers.
# BUILD_DIR and extra CMake flags (for example -DOOMPLAN_SANITIZE=ON) may be
# given in the environment: BUILD_DIR=build-asan CMAKE_FLAGS=-DOOMPLAN_SANITIZE=ON
set -euo pipefail
cd "$(dirname "$0")/.."
bash utils/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
# One build, at -O2 (the shipped build's optimizer, less CMake's -O3, for
# about 10% less compile time) with assertions on: no -DNDEBUG, so every
# assert stays in (ours, and those in LLVM's headers: ArrayRef and
# SmallVector bounds, casts), in every test, the unit tests included: one
# build serves every suite (docs/development.md). Nothing in lib/
# depends on NDEBUG but the asserts themselves.
# CUDA (when the toolkit is there) is compiled to PTX only: nothing runs it
# here, the compiler still checks every kernel, and ptxas's SASS pass was a
# third of the CUDA compile time (utils/gpu/gpu-bundle.sh builds SASS for the
# GPU machine). ctest runs one job more than cores (many tests wait on
# subprocesses: 181 s -> 165 s); the build does not (a third compile job
# made it 28 s slower).
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE=-O2 -DCMAKE_C_FLAGS_RELEASE=-O2 \
  -DCMAKE_CUDA_ARCHITECTURES=90-virtual \
  -DOOMPLAN_UNIT_TESTS=ON ${CMAKE_FLAGS:-} >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(($(nproc) + 1))"

# Each libFuzzer target for FUZZ_SECONDS (60; 0 skips), in its own clang
# build (utils/ci/fuzz.sh; docs/development.md#fuzzing).
# The four targets run at once (FUZZ_JOBS=4) on the two cores: each still
# gets its 60 s, and the step's wall time stays one minute.
if [[ ${FUZZ_SECONDS:-60} -gt 0 ]]; then
  FUZZ_JOBS=${FUZZ_JOBS:-4} bash utils/ci/fuzz.sh "${FUZZ_SECONDS:-60}"
fi
