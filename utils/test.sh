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
# That build (ASan + UBSan) also links oomplan and oomplan-run, and while
# the fuzzers run, the lit tests that run plans (run/, fuse/) run again on
# them: there the arena's bytes that no live buffer owns are poisoned
# (lib/Runtime/ArenaShadow.h), so a kernel reading past its buffer inside
# the arena is an ASan report (exit 86, a failed test), as it would be
# outside it. About 40 s of CPU; the fuzzers' minute absorbs the wall time.
if [[ ${FUZZ_SECONDS:-60} -gt 0 ]]; then
  FUZZ_BUILD_DIR=${FUZZ_BUILD_DIR:-build-fuzz}
  export FUZZ_BUILD_DIR
  FUZZ_RUN=0 FUZZ_ALSO_BUILD="oomplan oomplan-run" \
    bash utils/ci/fuzz.sh "${FUZZ_SECONDS:-60}"
  FUZZ_BUILD=0 FUZZ_JOBS=${FUZZ_JOBS:-4} \
    bash utils/ci/fuzz.sh "${FUZZ_SECONDS:-60}" &
  fuzz_pid=$!
  lit_rc=0
  python3 /usr/lib/llvm-14/build/utils/lit/lit.py -q \
    --param tools_dir="$PWD/$FUZZ_BUILD_DIR/tools" --param cuda=OFF \
    "$BUILD_DIR/test/run" "$BUILD_DIR/test/fuse" || lit_rc=$?
  fuzz_rc=0
  wait "$fuzz_pid" || fuzz_rc=$?
  if [[ $lit_rc -ne 0 ]]; then
    echo "test.sh: the runtime's lit tests failed in the sanitizer build" >&2
  fi
  [[ $lit_rc -eq 0 && $fuzz_rc -eq 0 ]]
fi
