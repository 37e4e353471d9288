#!/usr/bin/env bash
# Builds the libFuzzer targets (test/fuzz) and runs each for SECONDS.
#
#   utils/ci/fuzz.sh SECONDS [TARGET...]     e.g. utils/ci/fuzz.sh 60
#
# Targets: fuzz-onnx-binary, fuzz-onnx-text, fuzz-minimalloc-csv,
# fuzz-onnx-runtime (default: all).
# The build goes to $FUZZ_BUILD_DIR (build-fuzz): clang-14, ASan + UBSan +
# fuzzer coverage, assertions on. Seed corpora are generated at run time from
# the models under test/ and Debian's libonnx-testdata; each target's corpus
# lives in $FUZZ_BUILD_DIR/corpus/TARGET and grows across runs. At most
# $FUZZ_JOBS (2) targets run at once. Crash, timeout, leak and out-of-memory
# inputs, and each target's log, go to $FUZZ_OUT ($FUZZ_BUILD_DIR/findings);
# the script exits 1 if any target found something. An input slower than
# $FUZZ_TIMEOUT seconds (10) is a finding: raise it for long runs on a
# loaded machine, where a starved process can pass 10 s on a fast input.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ $# -lt 1 || ! $1 =~ ^[0-9]+$ ]]; then
  echo "usage: utils/ci/fuzz.sh SECONDS [TARGET...]" >&2
  exit 2
fi
SECS=$1
shift
TARGETS=("$@")
[[ ${#TARGETS[@]} -gt 0 ]] ||
  TARGETS=(fuzz-onnx-binary fuzz-onnx-text fuzz-minimalloc-csv fuzz-onnx-runtime)
BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
OUT=${FUZZ_OUT:-$BUILD/findings}
JOBS=${FUZZ_JOBS:-2}

if ! command -v clang++-14 >/dev/null ||
  ! ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a \
    >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq -o DPkg::Lock::Timeout=600 clang-14 libclang-rt-14-dev >/dev/null
fi

# Assertions stay on (no NDEBUG): an assert is a finding too. No debug
# information by default (reports name functions, not lines; 8 to 14% of
# the build's compile time): FUZZ_DEBUG=-gline-tables-only in a fresh
# FUZZ_BUILD_DIR for a build that replays findings with line numbers.
LAUNCHER=()
command -v ccache >/dev/null && LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [[ ! -f $BUILD/CMakeCache.txt ]]; then
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$BUILD" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 ${FUZZ_DEBUG:--g0}" \
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1" "${LAUNCHER[@]}" \
    -DOOMPLAN_FUZZ=ON -DOOMPLAN_BUILD_TESTS=OFF -DOOMPLAN_ENABLE_CUDA=OFF >/dev/null
fi
# Only the fuzz targets and the libraries they link, and the targets in
# $FUZZ_ALSO_BUILD (utils/test.sh: the two tools, whose runtime tests CI
# runs in this sanitized build). FUZZ_RUN=0 stops after the build;
# FUZZ_BUILD=0 runs the binaries already built (a long run while the tree
# changes under it).
if [[ ${FUZZ_BUILD:-1} != 0 ]]; then
  # shellcheck disable=SC2086 # a list of target names
  cmake --build "$BUILD" -j "$(nproc)" --target "${TARGETS[@]}" ${FUZZ_ALSO_BUILD:-}
fi
if [[ ${FUZZ_RUN:-1} == 0 ]]; then
  exit 0
fi

# Seeds, named by content so that repeated runs add nothing twice.
seed() { # seed DIR PREFIX FILE...
  local dir=$1 prefix=$2 sum f
  shift 2
  mkdir -p "$dir"
  if [[ -z $prefix ]]; then
    sha1sum "$@" | while read -r sum f; do
      [[ -f $dir/$sum ]] || cp "$f" "$dir/$sum"
    done
    return
  fi
  # One process for all files (a pipeline per file took 20 to 40 s for the
  # runtime target's 1,900 seeds); PREFIX is printf's \xHH escapes.
  python3 - "$dir" "$prefix" "$@" <<'PY'
import hashlib, os, sys
d = sys.argv[1]
prefix = sys.argv[2].encode().decode("unicode_escape").encode("latin-1")
for f in sys.argv[3:]:
    with open(f, "rb") as fh:
        data = prefix + fh.read()
    out = os.path.join(d, hashlib.sha1(data).hexdigest())
    if not os.path.exists(out):
        with open(out, "wb") as fh:
            fh.write(data)
PY
}
SEEDS=$BUILD/seeds
declare -A MAXLEN
TESTDATA=/usr/share/libonnx-testdata/data
for t in "${TARGETS[@]}"; do
  case $t in
  fuzz-onnx-binary)
    mapfile -t files < <( (find test -name '*.onnx' -size -64k
      [[ -d $TESTDATA ]] && find "$TESTDATA" -name model.onnx -size -64k) | sort)
    seed "$SEEDS/$t" '' "${files[@]}"
    MAXLEN[$t]=65536 ;;
  fuzz-onnx-text)
    mapfile -t files < <(find test -name '*.onnxtxt' | sort)
    seed "$SEEDS/$t" '' "${files[@]}"
    MAXLEN[$t]=65536 ;;
  fuzz-onnx-runtime)
    # A four-byte header says how to run the model that follows
    # (test/fuzz/FuzzONNXRuntime.cpp): binary models as they are, and with
    # their first dim at 3, run twice with --poison; text models as they are.
    mapfile -t files < <(
      [[ -d $TESTDATA ]] && find "$TESTDATA/node" -name model.onnx -size -16k | sort)
    if [[ ${#files[@]} -gt 0 ]]; then
      seed "$SEEDS/$t" '\x00\xff\x00\x00' "${files[@]}"
      seed "$SEEDS/$t" '\x28\x00\x03\x02' "${files[@]}"
    fi
    mapfile -t files < <(find test/lit/run -name '*.onnxtxt' -size -8k | sort)
    seed "$SEEDS/$t" '\x01\xff\x00\x00' "${files[@]}"
    MAXLEN[$t]=20480 ;;
  fuzz-minimalloc-csv)
    # The first byte picks the alignment (0: 1 byte, 8: 256 bytes).
    mapfile -t files < <(find test -name '*.csv' -size -16k | sort)
    seed "$SEEDS/$t" '\x00' "${files[@]}"
    seed "$SEEDS/$t" '\x08' "${files[@]}"
    MAXLEN[$t]=16384 ;;
  *)
    echo "fuzz.sh: unknown target '$t'" >&2
    exit 2 ;;
  esac
done

# One target: the corpus folder first (libFuzzer adds new inputs there), the
# seeds second. -timeout and -rss_limit_mb make a hang or a blow-up a finding:
# the targets skip inputs that are merely big (test/fuzz/FuzzModel.h).
run_one() {
  local t=$1
  mkdir -p "$BUILD/corpus/$t"
  UBSAN_OPTIONS=print_stacktrace=1 nice -n "${FUZZ_NICE:-0}" \
    "$BUILD/test/fuzz/$t" -max_total_time="$SECS" -timeout="${FUZZ_TIMEOUT:-10}" \
    -rss_limit_mb=2048 -max_len="${MAXLEN[$t]}" -print_final_stats=1 \
    -artifact_prefix="$OUT/$t-" "$BUILD/corpus/$t" "$SEEDS/$t" \
    >"$OUT/$t.log" 2>&1
}
mkdir -p "$OUT"
declare -A PIDS
for t in "${TARGETS[@]}"; do
  while [[ $(jobs -rp | wc -l) -ge $JOBS ]]; do wait -n || true; done
  echo "fuzz.sh: $t for $SECS s (log: $OUT/$t.log)"
  run_one "$t" &
  PIDS[$t]=$!
done

STATUS=0
for t in "${TARGETS[@]}"; do
  rc=0
  wait "${PIDS[$t]}" || rc=$?
  log=$OUT/$t.log
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  corp=$(grep -o 'corp: [0-9]*/[0-9a-zA-Z]*' "$log" | tail -1 | cut -d' ' -f2)
  if [[ $rc -eq 0 ]]; then
    echo "fuzz.sh: $t: ok, ${execs:-?} executions, corpus ${corp:-?} (inputs/bytes)"
  else
    STATUS=1
    echo "fuzz.sh: $t: FAILED (exit $rc) after ${execs:-?} executions; reproducers:"
    ls "$OUT/$t-"* 2>/dev/null | sed 's/^/  /' || true
    grep -m3 -E 'ERROR: |runtime error|fuzz: ' "$log" | sed 's/^/  /' || true
  fi
done
exit $STATUS
