#!/usr/bin/env bash
# The one test command (README, .ci/run): install, build, run every test, in
# a Release build and then in a build with assertions enabled.
# BUILD_DIR and extra CMake flags (for example -DOOMPLAN_SANITIZE=ON) may be
# given in the environment: BUILD_DIR=build-asan CMAKE_FLAGS=-DOOMPLAN_SANITIZE=ON
set -euo pipefail
cd "$(dirname "$0")/.."
bash utils/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
# -O2, not CMake's Release default -O3: the same tests, about 10% less
# compile time (the runtime's kernel files most: Binary.cpp 15.2 s -> 11.3 s).
# With the assertions pass on, each test runs once, in the pass where it
# says most (docs/development.md#ci): this Release pass runs the suites that
# check what users get from the shipped build (the consistency suite, the
# ONNX conformance run, the import of libonnx-testdata, the embedding and
# packaging tests, the runtime's lit tests); the assertions pass builds and
# runs the gtest unit tests and every other lit folder.
UNIT=ON
RELEASE_TESTS=()
if [ "${ASSERT_BUILD:-1}" != 0 ]; then
  UNIT=OFF
  RELEASE_TESTS=(-R '^(consistency|conformance|layering|lit\.(consistency|frontend|run)|embed\..*)$')
fi
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG" \
  -DOOMPLAN_UNIT_TESTS=$UNIT ${CMAKE_FLAGS:-} >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" "${RELEASE_TESTS[@]}"

# Once more with assertions: Release defines NDEBUG, which compiles out every
# assert (ours and those in LLVM headers: ArrayRef bounds, casts). -O1 without
# -DNDEBUG keeps this build fast. ASSERT_BUILD=0 skips it.
if [ "${ASSERT_BUILD:-1}" != 0 ]; then
  ASSERT_DIR=${ASSERT_BUILD_DIR:-$BUILD_DIR-assert}
  # The Python module and the ThreadSanitizer build test packaging and
  # threads, not asserts: the Release pass runs them.
  cmake -S . -B "$ASSERT_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE=-O1 -DCMAKE_C_FLAGS_RELEASE=-O1 \
    -DOOMPLAN_PYTHON=OFF -DOOMPLAN_TSAN_TEST=OFF -DOOMPLAN_UNIT_TESTS=ON \
    ${CMAKE_FLAGS:-} >/dev/null
  cmake --build "$ASSERT_DIR" -j "$(nproc)"
  # The tests the Release pass ran, except lit.run (the runtime's tests run
  # in both: kernels are where -O2 and assertions each catch something).
  ctest --test-dir "$ASSERT_DIR" --output-on-failure -j "$(nproc)" \
    -E '^(consistency|conformance|layering|lit\.consistency|lit\.frontend|embed\..*)$'
fi
# Each libFuzzer target for FUZZ_SECONDS (60; 0 skips), in its own clang
# build (utils/fuzz.sh; docs/development.md#fuzzing).
# The three targets run at once (FUZZ_JOBS=3): each still gets its 60 s.
if [[ ${FUZZ_SECONDS:-60} -gt 0 ]]; then
  FUZZ_JOBS=${FUZZ_JOBS:-3} bash utils/fuzz.sh "${FUZZ_SECONDS:-60}"
fi
