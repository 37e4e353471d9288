#!/usr/bin/env bash
# The runtime's sanitizer campaign: every ONNX node test through oomplan-run
# built with AddressSanitizer and UndefinedBehaviorSanitizer, with its own
# inputs and with input dims changed (utils/check/sanitizer_campaign.py says which
# runs and what counts as a finding). Exits 1 when there is a finding.
#
#   utils/check/sanitizer-campaign.sh [ARGS...]     e.g. utils/check/sanitizer-campaign.sh --jobs 2
#
# The build goes to $ASAN_BUILD_DIR (build-asan): -DOOMPLAN_SANITIZE=ON, -O1,
# assertions on (no NDEBUG), without CUDA; ASAN_BUILD=0 reuses what is
# there. ARGS go to sanitizer_campaign.py (--jobs, --timeout, --out, --node-dir).
# The runtime's unit tests in that build check the arena poisoning itself:
#   cmake --build build-asan --target RuntimeTests && build-asan/test/unit/Runtime/RuntimeTests
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${ASAN_BUILD_DIR:-build-asan}
if [[ ${ASAN_BUILD:-1} != 0 ]]; then
  if [[ ! -f $BUILD/CMakeCache.txt ]]; then
    cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
      "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1" -DOOMPLAN_SANITIZE=ON \
      -DOOMPLAN_ENABLE_CUDA=OFF -DOOMPLAN_PYTHON=OFF >/dev/null
  fi
  cmake --build "$BUILD" -j "${JOBS:-$(nproc)}" --target oomplan-run
fi
exec python3 utils/check/sanitizer_campaign.py "$BUILD/tools/oomplan-run/oomplan-run" "$@"
