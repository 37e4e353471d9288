#!/usr/bin/env bash
# The CUDA backend's GPU checks in one run, on a machine with an NVIDIA GPU
# (the lent H200). Prepared in advance: run utils/gpu/gpu-bundle.sh here first,
# then on the GPU machine, from the repository root:
#
#   bash utils/gpu/gpu-check.sh            # with .gpu.tgz beside it; $OUT gets the results
#
# It writes gpu-results.md (for docs/gpu-results.md) and gpu-results.jsonl
# (every raw record) to $OUT (or ./gpu-out), and checks, recording numbers:
#   0. that the carried binaries start and see the GPU (a tiny model);
#   1. every CUDA kernel against the CPU backend (RuntimeCUDATests);
#   2. the four test models at two sizes: outputs against the CPU executor
#      (rtol 1e-3), device allocations against the plan, the context and
#      handle overhead, warm latency, and the predicted step time (oomplan's
#      H200 profile) against the steps' time on the device;
#   3. fitted plans (the fitter's choice at 60% of the unfitted need, weight
#      streaming at 80%) under their budgets as measured, their outputs
#      against the unfitted run's, their time overhead against the
#      prediction;
#   4. latency against PyTorch eager at batch 8 (resnet50, bert_like), the
#      kernels' times per op type and the slowest steps against the H200
#      profile, (4b) single-kernel models (utils/gpu/calibration) that measure
#      the profile's efficiencies on their own, the profile they give
#      (utils/gpu/calibrate_profile.py, h200-calibrated.json in the results)
#      and section 2's cases predicted with it, (4d) PyTorch eager's own
#      memory efficiency and kernel floor on the same shapes (a training
#      plan's runtime), (4c) op profiles of the
#      int4 decode step and gpt_like;
#   5. exports oomplan was not developed on (utils/check/check_unseen_runtime.py,
#      carried by gpu-bundle.sh when every op has a CUDA kernel): against
#      PyTorch 1.13's outputs, or against the CPU executor on random weights;
#      then (5b, 5c) half and quantized versions of test models, (5d) the
#      opset 23 to 25 function ops and ONNX Runtime's contrib ops
#      (utils/check/check_function_ops.py's and check_contrib_ops.py's models),
#      (5e) an int4 LLM's decode step and prompt (genai_llm.py);
#   6. the ONNX node tests whose ops all have CUDA kernels (expected outputs);
#   7. with the time left, the kernel tests under compute-sanitizer.
# 5 to 5e and 7 come last: no bar names them (6, the node tests, which the
# issue's list does, runs before 5).
# Section 3 plans with --overhead 0: its budget is for the allocations,
# which the run measures apart from the context.
# Each step is bounded by a timeout and the whole by GPU_CHECK_SECONDS (480);
# a failed step is recorded, the rest go on.
# A dry run of the script's plumbing without a GPU (here):
#   GPU_CHECK_BACKEND=cpu GPU_CHECK_QUICK=1 PYTHON=/usr/bin/python3 bash utils/gpu/gpu-check.sh
# or GPU_CHECK_BACKEND=cuda-on-cpu, which also runs the device path of the
# executor (staging, host steps) as on a GPU.
set -uo pipefail
BACKEND=${GPU_CHECK_BACKEND:-cuda}
PY=${PYTHON:-python3}
# The sizes (GPU_CHECK_QUICK=1: tiny ones, for a dry run on a CPU).
R8="--batch 8" R32="--batch 32" B8="--batch 8 --seq 128" B32="--batch 32 --seq 128"
R2="--batch 2"
G8="--batch 8 --seq 128" G2="--batch 2 --seq 512" FIT="--batch 8 --seq 512"
if [ "${GPU_CHECK_QUICK:-0}" = 1 ]; then
  R8="--batch 1" R32="--batch 2" B8="--batch 1 --seq 16" B32="--batch 2 --seq 16"
  R2="--batch 1"
  G8="--batch 1 --seq 16" G2="--batch 1 --seq 32" FIT="--batch 1 --seq 64"
fi
cd "$(dirname "$0")/../.."
root=$(pwd)
out=${OUT:-$root/gpu-out}
mkdir -p "$out"
res=$out/gpu-results.md
raw=$out/gpu-results.jsonl
: >"$res"
: >"$raw"
work=$(mktemp -d /tmp/oomplan-gpu.XXXXXX)
say() { echo "$*" | tee -a "$res"; }
# One deadline for the whole script (the device tool stops a command at 600 s
# and a lease has 15 minutes): each step's timeout is cut to what is left, a
# step that would start with under 20 s left is skipped and says so.
start=$SECONDS
DEADLINE=${GPU_CHECK_SECONDS:-480}
left() { # cap: prints min(cap, seconds left - 5), at least 1
  local l=$((DEADLINE - (SECONDS - start) - 5))
  [ "$l" -gt "$1" ] && l=$1
  [ "$l" -lt 1 ] && l=1
  echo "$l"
}
have_time() { # step name
  if [ $((DEADLINE - (SECONDS - start))) -lt 20 ]; then
    say "**SKIPPED** (out of time, $((SECONDS - start)) s of $DEADLINE): $1"
    return 1
  fi
}
elapsed() { say "(at $((SECONDS - start)) s)"; }
# GPU_CHECK_SECTIONS="1 2 3": run only those (0 always runs; 4 reads 2's
# runs; the others, in the order they run: 4b 4d 4c 6 5 5b 5c 5d 5e 7). A
# lease is 15 minutes: a second run takes what the first left.
want() {
  [ -z "${GPU_CHECK_SECTIONS:-}" ] && return 0
  case " $GPU_CHECK_SECTIONS " in *" $1 "*) return 0 ;; esac
  return 1
}
status=0
fail() { say "**FAILED**: $*"; status=1; }

say "# oomplan GPU check, $(date -u +%Y-%m-%dT%H:%MZ)"
say ""
say '```'
timeout 20 nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 | tee -a "$res"
say '```'

if [ ! -f .gpu.tgz ]; then
  fail "no .gpu.tgz: run utils/gpu/gpu-bundle.sh on the build machine and carry it"
  exit 1
fi
tar -xzf .gpu.tgz -C "$work"
B=$work/.gpu

# The CUDA libraries: the toolkit's, else those of PyTorch's nvidia-*
# packages. Only our binaries get them (and our carried libraries) on their
# library path: $PY keeps its own.
cudalibs=""
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -e "$d/libcublas.so.13" ] && cudalibs="$cudalibs:$d"
done
site=$($PY -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null)
for s in $site; do
  for d in "$s"/nvidia/*/lib "$s"/nvidia/cu13/lib; do
    [ -d "$d" ] && cudalibs="$cudalibs:$d"
  done
done
# Each of cudart, cuBLAS and cuDNN: wherever ldconfig knows it.
for l in libcudart.so.13 libcublas.so.13 libcudnn.so.9; do
  p=$(ldconfig -p 2>/dev/null | awk -v l="$l" '$1 == l {print $NF; exit}')
  [ -n "$p" ] && cudalibs="$cudalibs:$(dirname "$p")"
done
export OOMPLAN_LIBS="$B/lib$cudalibs"
say ""
say "Library path of our binaries: \`$OOMPLAN_LIBS\`"
for t in oomplan oomplan-run RuntimeCUDATests; do
  printf '#!/bin/sh\nLD_LIBRARY_PATH="%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "%s/bin/%s" "$@"\n' \
    "$OOMPLAN_LIBS" "$B" "$t" >"$work/$t"
  chmod +x "$work/$t"
done
RUN=$work/oomplan-run
PLAN=$work/oomplan

say ""
say "## 0. The binaries start on this machine"
if ! timeout 60 "$RUN" test/lit/run/Inputs/add.onnxtxt --batch 2 --backend=$BACKEND >"$work/tiny.txt" 2>&1; then
  cat "$work/tiny.txt" | tee -a "$res"
  LD_LIBRARY_PATH="$OOMPLAN_LIBS" ldd "$B/bin/oomplan-run" 2>&1 | tee -a "$res"
  timeout 30 find / -xdev \( -name 'libcudnn.so*' -o -name 'libcublas.so*' -o -name 'libcudart.so*' \) \
    2>/dev/null | head -n 20 | tee -a "$res"
  fail "oomplan-run --backend=$BACKEND does not start; nothing else can run"
  exit 1
fi
say '```'
cat "$work/tiny.txt" | tee -a "$res"
say '```'

elapsed
say ""
if want 1; then
say "## 1. CUDA kernels against the CPU backend"
timeout "$(left 120)" "$work/RuntimeCUDATests" --gtest_brief=1 >"$work/kernels.txt" 2>&1 || fail "RuntimeCUDATests"
say '```'
tail -n 15 "$work/kernels.txt" | tee -a "$res"
say '```'
fi

# One model at one size: CPU and CUDA runs on the same seeded weights and
# inputs, compared; the CUDA run's JSON and oomplan's predicted step time.
# After a run: rc 0 is a run whose checks hold; rc 1 with its whole JSON
# written is a run whose checks failed (allocations or high-water not equal
# to the plan, outputs differing from the unplanned run): its numbers are
# what this script is for, so they are kept and the failure is recorded.
# Anything else (a timeout, a crash, an error before the run) ends the case.
ran() { # what rc prefix: prefix.json, prefix.err
  if [ "$2" = 0 ]; then return 0; fi
  if [ "$2" = 1 ] && $PY -c 'import json,sys; json.load(open(sys.argv[1]))["seconds"]' "$3.json" 2>/dev/null; then
    fail "$1: its checks failed (exit 1; numbers kept): $(tail -n 2 "$3.err")"
    return 0
  fi
  fail "$1 (exit $2): $(tail -n 2 "$3.err")"
  return 1
}

model_case() { # name-or-path args... (CMP_ARGS: compare_outputs.py's bounds)
  have_time "$*" || return
  local name=$1 model=test/models/$1.onnx
  if [ -f "$1" ]; then model=$1 name=$(basename "$1" .onnx); fi
  shift
  local tag
  tag="$name$(echo "$*" | tr -d ' -')"
  local cpu=$work/$tag-cpu cu=$work/$tag-cuda
  # RUN_ARGS: oomplan-run's alone (given inputs), not the planner's.
  # shellcheck disable=SC2086
  timeout "$(left 120)" "$RUN" "$model" "$@" ${RUN_ARGS:-} --random-weights --seed 1 \
    --threads "$(nproc)" --output-dir "$cpu" --json >"$cpu.json" 2>"$cpu.err"
  ran "$tag: CPU run" $? "$cpu" || return
  # shellcheck disable=SC2086
  timeout "$(left 120)" "$RUN" "$model" "$@" ${RUN_ARGS:-} --random-weights --seed 1 \
    --backend=$BACKEND --repeat 10 --output-dir "$cu" --json >"$cu.json" 2>"$cu.err"
  ran "$tag: CUDA run" $? "$cu" || return
  local cmp crc
  # shellcheck disable=SC2086
  cmp=$($PY utils/gpu/compare_outputs.py "$cpu" "$cu" ${CMP_ARGS:-})
  crc=$?
  [ $crc -gt 1 ] && fail "$tag: comparing the outputs: $cmp"
  # --backend=cuda: the planner's bound on the run's allocations, made
  # without asking the GPU (each library workspace at its limit).
  timeout "$(left 60)" "$PLAN" "$model" "$@" --device H200 \
    --backend=cuda --emit=json -o "$work/$tag-plan.json" 2>/dev/null
  $PY - "$tag" "$cu.json" "$cpu.json" "$work/$tag-plan.json" "$cmp" "$BACKEND" <<'PY' | tee -a "$res"
import json, sys
tag, cu, cpu, plan, cmp, backend = sys.argv[1:]
c = json.load(open(cu)); p = json.load(open(cpu))
try:
    m = json.loads(cmp)
except Exception:
    m = {"error": "no comparison: " + cmp[:200]}
m.setdefault("ok", False)
m.setdefault("outputs", [])
try:
    pj = json.load(open(plan))
    pred = sum(s.get("seconds", 0) for s in pj["schedule"])
    bound = pj["total_bytes"]
except Exception:
    pred = bound = None
d = c.get("device", {})
warm = c["seconds"].get("run_warm_median", c["seconds"]["run"])
# The steps alone on the device (timing events), without the copies of
# inputs and outputs through host memory: what the cost model predicts.
steps = c["seconds"].get("steps_warm_median", c["seconds"].get("steps"))
worst = max((o.get("beyond", 0) for o in m["outputs"]), default=0)
nr = max((o.get("norm_rel", 0) for o in m["outputs"]), default=0)
# The largest difference against the output's own scale (max |ref|): where
# an element cancels to near zero, rtol on it alone says little.
sr = max((o.get("max_abs_diff", 0) / max(o.get("max_abs_ref", 0), 1e-30)
          for o in m["outputs"]), default=0)
rec = {"case": tag, "outputs_ok": m["ok"], "beyond_rtol": worst, "norm_rel": nr,
       "allocated": d.get("allocated_bytes"), "plan_device": d.get("plan_device_bytes"),
       "alloc_equal": d.get("equal"), "measured": d.get("measured_bytes"),
       "first_run_drop": d.get("first_run_drop_bytes"),
       "later_runs_drop": d.get("later_runs_drop_bytes"),
       "context": d.get("context_bytes"), "handles": d.get("handle_bytes"),
       "planner_bound": bound,
       # None: no device allocations to compare (the CPU backend's dry run),
       # or not CUDA's (cuda-on-cpu plans the CPU kernels' workspaces).
       "under_bound": None if bound is None or d.get("allocated_bytes") is None or backend != "cuda"
                      else d["allocated_bytes"] <= bound,
       "warm_s": warm, "steps_s": steps, "scale_rel": sr, "cpu_run_s": p["seconds"]["run"], "predicted_s": pred,
       "ok": c.get("ok")}
open(sys.argv[2] + ".rec", "w").write(json.dumps(rec))
ratio = (steps / pred) if pred and steps else float("nan")
print(f"| {tag} | {'yes' if m['ok'] else 'NO'} {m.get('error', '')}({worst} beyond, norm-rel {nr:.1e}, max diff / max ref {sr:.1e}) | "
      f"{rec['allocated']} / {rec['plan_device']} {'equal' if rec['alloc_equal'] else 'DIFFERENT'} | "
      f"{bound} {({True: 'holds', False: 'BELOW THE RUN'}).get(rec['under_bound'], 'not compared')} | "
      f"{rec['measured']} | {rec['first_run_drop']} + {rec['later_runs_drop']} | {rec['context']} + {rec['handles']} | "
      f"{warm*1e3:.2f} ms | {steps*1e3 if steps else float('nan'):.2f} ms | "
      f"{pred*1e3 if pred else float('nan'):.2f} ms ({ratio:.2f}x) |")
PY
  cat "$cu.json.rec" >>"$raw" 2>/dev/null && echo >>"$raw"
}

# Section 2's cases (model, then its sizes); 4b predicts them again with
# the profile it measures.
CASES2=("resnet50 $R8" "resnet50 $R32" "mobilenet_v2 $R8" "mobilenet_v2 $R32"
  "bert_like $B8" "bert_like $B32" "gpt_like $G8" "gpt_like $G2")

elapsed
if want 2; then
say ""
say "## 2. Four models at two sizes: CUDA against the CPU executor"
say ""
say "| case | outputs within rtol 1e-3 | device allocations / plan | oomplan --backend=cuda bound (no GPU asked) | free-memory drop at allocation | drop during the first run + over the later ones (CUDA graph) | context + handles | CUDA warm run (median of 10) | its steps on the device | predicted steps (H200 profile; measured / predicted, bar 2x) |"
say "|---|---|---|---|---|---|---|---|---|---|"
for c in "${CASES2[@]}"; do
  # shellcheck disable=SC2086
  model_case $c
done
fi

elapsed
if want 3; then
say ""
say "## 3. Fitted plans: gpt_like $FIT under budgets below the unfitted need"
say ""
say "Two fits of the same plan: the fitter's own choice at 60% of the need, and weight streaming"
say "(--micro-batches=1) at 80%: the weights stay in pinned host memory and are prefetched on the"
say "copy stream ahead of the steps that read them. Each fitted run's outputs against the unfitted"
say "run's on the same backend (rtol 1e-3, atol 1e-5 + 1e-5 max |ref|: a micro-batch's products"
say "have other shapes, so cuBLAS may sum in another order)."
need=""
have_time "the fitted plan" &&
  need=$(timeout "$(left 120)" "$RUN" test/models/gpt_like.onnx $FIT --random-weights \
  --backend=$BACKEND --device H200 --overhead 0 --repeat 5 --json --output-dir "$work/unfitted-out" 2>/dev/null |
  tee "$work/unfitted.json" |
  $PY -c 'import json,sys; print(json.load(sys.stdin)["plan_total_bytes"])')
if [ -n "$need" ]; then
  for fitcase in "60 fitted" "80 streamed --micro-batches=1"; do
  read -r pct ftag fargs <<<"$fitcase"
  budget=$((need * pct / 100))
  say ""
  if have_time "the $ftag run"; then
    # shellcheck disable=SC2086
    timeout "$(left 120)" "$RUN" test/models/gpt_like.onnx $FIT --random-weights $fargs \
      --backend=$BACKEND --device H200 --overhead 0 --budget "$budget" --repeat 5 --json \
      --output-dir "$work/$ftag-out" >"$work/$ftag.json" 2>"$work/$ftag.err"
    ran "the $ftag gpt_like $FIT run" $? "$work/$ftag"
  fi
  # The prediction of the plan the run fits: with the CUDA backend's
  # workspaces (gpt_like has products only: the bounds are the run's 32 MiB).
  # shellcheck disable=SC2086
  timeout "$(left 60)" "$PLAN" test/models/gpt_like.onnx $FIT $fargs --device H200 --overhead 0 \
    $([ "$BACKEND" = cuda ] && echo --backend=cuda) \
    --budget "$budget" --emit=json -o "$work/$ftag-plan.json" 2>/dev/null
  cmp=$($PY utils/gpu/compare_outputs.py "$work/unfitted-out" "$work/$ftag-out" --scale-atol 1e-5 2>&1)
  $PY - "$work/unfitted.json" "$work/$ftag.json" "$work/$ftag-plan.json" "$budget" "$pct" "$cmp" <<'PY' | tee -a "$res"
import json, sys
budget, pct, cmp = int(sys.argv[4]), sys.argv[5], sys.argv[6]
try:
    u = json.load(open(sys.argv[1])); f = json.load(open(sys.argv[2]))
except Exception as e:
    print(f"- at {pct}%: not measured, the fitted run wrote no JSON ({e})")
    sys.exit(0)
try:
    fit = json.load(open(sys.argv[3]))["fit"]
    pred = fit["predicted_seconds"] / fit["base_seconds"]
    strategy = fit["strategy"]
except Exception:
    pred, strategy = float("nan"), "?"
try:
    m = json.loads(cmp)
    same = "yes" if m.get("ok") else "NO"
    nr = max((o.get("norm_rel", 0) for o in m.get("outputs", [])), default=0)
    same += f" (norm-rel {nr:.1e})"
except Exception:
    same = "not compared: " + cmp[:200]
d = f.get("device", {})
uw = u["seconds"].get("steps_warm_median", u["seconds"].get("run_warm_median", u["seconds"]["run"]))
fw = f["seconds"].get("steps_warm_median", f["seconds"].get("run_warm_median", f["seconds"]["run"]))
under = None
if "allocated_bytes" in d:
    under = d["allocated_bytes"] <= budget and d.get("measured_bytes", 0) <= budget
print(f"- at {pct}% of the unfitted need {u['plan_total_bytes']} bytes: budget {budget}; fitted: {f.get('fitted')} ({strategy}), plan {f['plan_total_bytes']} bytes")
print(f"  - device allocations {d.get('allocated_bytes')} bytes, free-memory drop {d.get('measured_bytes')}: "
      f"{'not measured (no device)' if under is None else 'under the budget' if under else 'OVER THE BUDGET'}")
print(f"  - outputs equal to the unfitted run's within the bound: {same}")
print(f"  - steps on the device: unfitted {uw*1e3:.2f} ms, fitted {fw*1e3:.2f} ms: measured {fw/uw:.3f}x, predicted {pred:.3f}x")
PY
  done
elif [ $((DEADLINE - (SECONDS - start))) -ge 20 ]; then
  fail "the unfitted gpt_like $FIT run"
fi
fi

elapsed
if want 4; then
say ""
say "## 4. Latency against PyTorch eager (FP32, TF32 off, inputs and outputs through host memory)"
say ""
say "| case | oomplan CUDA warm | PyTorch eager | ratio (bar 1.5x) |"
say "|---|---|---|---|"
for c in "resnet50 $R8" "bert_like $B8" "mobilenet_v2 $R8" "gpt_like $G8"; do
  have_time "PyTorch eager $c" || break
  set -- $c
  name=$1
  shift
  tag="$name$(echo "$*" | tr -d ' -')"
  t=$(timeout "$(left 90)" $PY utils/gpu/torch_eager_latency.py "$name" "$@" 2>"$work/torch-$tag.err")
  [ -n "$t" ] && echo "$t" >>"$raw"
  [ "$name" = bert_like ] && bert_torch=$t
  $PY - "$work/$tag-cuda.json" "$t" "$tag" <<'PY' | tee -a "$res"
import json, sys
try:
    c = json.load(open(sys.argv[1])); t = json.loads(sys.argv[2])
    w = c["seconds"].get("run_warm_median", c["seconds"]["run"])
    print(f"| {sys.argv[3]} | {w*1e3:.2f} ms | {t['median_s']*1e3:.2f} ms | {w/t['median_s']:.2f}x |")
except Exception as e:
    print(f"| {sys.argv[3]} | ? | ? | not measured ({e}) |")
PY
done

# One bert_like b8 variant on CUDA beside PyTorch's time: its warm latency,
# and (compare=yes) its outputs against the CPU run of section 2 (the same
# seeded weights and inputs). Each runs only with time left.
bert_variant() { # label file-tag compare env-assignment extra-args...
  local label=$1 vtag=$2 compare=$3 envset=$4
  shift 4
  have_time "bert_like, $label" || return
  local extra=("$@") cmp="-"
  set -- $B8
  local btag
  btag="bert_like$(echo "$*" | tr -d ' -')"
  env $envset timeout "$(left 90)" "$RUN" test/models/bert_like.onnx "$@" "${extra[@]}" \
    --random-weights --seed 1 --backend=$BACKEND --repeat 10 --output-dir "$work/bert_like-$vtag" \
    --json >"$work/bert_like-$vtag.json" 2>"$work/bert_like-$vtag.err"
  [ "$compare" = yes ] && cmp=$($PY utils/gpu/compare_outputs.py "$work/$btag-cpu" "$work/bert_like-$vtag" 2>&1)
  $PY - "$work/bert_like-$vtag.json" "${bert_torch:-}" "$cmp" "$label" <<'PY' | tee -a "$res"
import json, sys
label = sys.argv[4]
try:
    c = json.load(open(sys.argv[1]))
    w = c["seconds"].get("run_warm_median", c["seconds"]["run"])
except Exception as e:
    print(f"| bert_like{label} | ? | ? | not measured ({e}) |")
    sys.exit(0)
if sys.argv[3] != "-":
    try:
        m = json.loads(sys.argv[3])
        ok = "outputs match the CPU" if m.get("ok") else "OUTPUTS DIFFER from the CPU"
    except Exception:
        ok = "outputs not compared"
    label += f" ({ok})"
try:  # the CUDA number stands without PyTorch's
    t = json.loads(sys.argv[2])["median_s"]
    print(f"| bert_like{label} | {w*1e3:.2f} ms | {t*1e3:.2f} ms | {w/t:.2f}x |")
except Exception:
    print(f"| bert_like{label} | {w*1e3:.2f} ms | ? | PyTorch not measured |")
PY
}
# The fused attention kernels are simple rather than fast (docs/cuda.md):
# the same run unfused (cuBLAS batched products and the softmax kernel)
# says whether --fuse=auto should keep attention on CUDA, and the row
# kernel (OOMPLAN_CUDA_ATTENTION=rows) whether the tiled one, the default
# since the first GPU run, still is the faster.
bert_variant " --fuse=none" unfused no "" --fuse=none
bert_variant ", row attention kernel" rows yes OOMPLAN_CUDA_ATTENTION=rows

say ""
say "Kernel times against the cost model's H200 profile, per op type (seconds per run):"
say ""
say "| case | op type | measured (--profile: timing events around each step in the CUDA graph's replays, mean of 5 warm runs) | predicted | ratio |"
say "|---|---|---|---|---|"
for c in "resnet50 $R8" "bert_like $B8" "mobilenet_v2 $R32"; do
  have_time "the profile of $c" || break
  set -- $c
  name=$1
  shift
  tag="$name$(echo "$*" | tr -d ' -')"
  timeout "$(left 120)" "$RUN" "test/models/$name.onnx" "$@" --random-weights --backend=$BACKEND \
    --repeat 5 --profile --json >"$work/$tag-prof.json" 2>/dev/null
  $PY - "$tag" "$work/$tag-prof.json" "$work/$tag-plan.json" <<'PY' | tee -a "$res"
import collections, json, sys
tag = sys.argv[1]
try:
    got = json.load(open(sys.argv[2]))["op_seconds"]
    pred = collections.defaultdict(float)
    for st in json.load(open(sys.argv[3]))["schedule"]:
        pred[st.get("op")] += st.get("seconds", 0)
    for op, sec in sorted(got.items(), key=lambda t: -t[1])[:8]:
        p = pred.get(op, 0)
        print(f"| {tag} | {op} | {sec*1e3:.3f} ms | {p*1e3:.3f} ms | "
              f"{(sec / p) if p else float('nan'):.2f}x |")
except Exception as e:
    print(f"| {tag} | ? | not measured ({e}) | | |")
PY
done
# The slowest steps of each, against their own predictions (matched by node
# name): which convolutions, products or kernels of ours the time goes to.
say ""
say "The slowest steps (--profile's step_seconds, by node, against the plan's step):"
say ""
say "| case | step | op | node | measured | predicted | ratio |"
say "|---|---|---|---|---|---|---|"
for c in "resnet50 $R8" "bert_like $B8" "mobilenet_v2 $R32"; do
  set -- $c
  name=$1
  shift
  tag="$name$(echo "$*" | tr -d ' -')"
  $PY - "$tag" "$work/$tag-prof.json" "$work/$tag-plan.json" <<'PY' | tee -a "$res"
import json, sys
tag = sys.argv[1]
try:
    steps = json.load(open(sys.argv[2]))["step_seconds"]
    pred = {s.get("node"): s.get("seconds") or 0
            for s in json.load(open(sys.argv[3]))["schedule"] if s.get("node")}
    for s in sorted(steps, key=lambda t: -t["seconds"])[:6]:
        p = pred.get(s["node"])
        if p is None:
            tail = "not matched | |"
        else:
            tail = f"{p*1e6:.1f} us | " + (f"{s['seconds']/p:.2f}x |" if p else "|")
        print(f"| {tag} | {s['index']} | {s['op']} | {s['node']} | {s['seconds']*1e6:.1f} us | {tail}")
except Exception as e:
    print(f"| {tag} | ? | | | not measured ({e}) | | |")
PY
done
fi
# Single-kernel models (utils/gpu/calibration): what one product, convolution,
# elementwise pass or kernel launch takes on this device against the H200
# profile's roofline, independent of the test models (whose step times
# check the profile; these set it: docs/fitting.md).
if want 4b && have_time "the calibration kernels"; then
say ""
say "## 4b. Single-kernel models: the H200 profile's efficiencies"
say ""
say "| model | steps on the device (median of 20 warm runs) | predicted (H200 profile) | measured / predicted |"
say "|---|---|---|---|"
for m in utils/gpu/calibration/*.onnxtxt; do
  have_time "calibration $m" || break
  c=$(basename "$m" .onnxtxt)
  timeout "$(left 60)" "$RUN" "$m" --backend=$BACKEND --repeat 20 --json >"$work/cal-$c.json" 2>"$work/cal-$c.err"
  timeout "$(left 30)" "$PLAN" "$m" --device H200 --backend=cuda --emit=json \
    -o "$work/cal-$c-plan.json" 2>/dev/null
  $PY - "$c" "$work/cal-$c.json" "$work/cal-$c-plan.json" <<'PY2' | tee -a "$res"
import json, sys
c = sys.argv[1]
try:
    r = json.load(open(sys.argv[2]))["seconds"]
    got = r.get("steps_warm_median", r.get("steps"))
    pred = sum(s.get("seconds", 0) for s in json.load(open(sys.argv[3]))["schedule"])
    print(f"| {c} | {got*1e6:.1f} us | {pred*1e6:.1f} us | {got/pred:.2f}x |")
except Exception as e:
    print(f"| {c} | not measured ({e}) | | |")
PY2
done
# The profile these kernels give (utils/gpu/calibrate_profile.py: each
# efficiency from the kernels that depend on it alone), written beside the
# results, and section 2's cases predicted with it: a check of the cost
# model whose numbers come from none of the four models.
say ""
say "The H200 profile as these kernels measure it (\`utils/gpu/calibrate_profile.py\`, written to h200-calibrated.json):"
say ""
if timeout "$(left 120)" $PY utils/gpu/calibrate_profile.py --oomplan "$PLAN" --measured "$work" \
    --out "$out/h200-calibrated.json" >"$work/calibrate.txt" 2>&1; then
  tee -a "$res" <"$work/calibrate.txt"
  say ""
  say "Section 2's cases predicted with it (steps on the device, section 2's runs; bar 2x):"
  say ""
  say "| case | measured | predicted (H200 profile) | ratio | predicted (calibrated) | ratio |"
  say "|---|---|---|---|---|---|"
  for c in "${CASES2[@]}"; do
    have_time "the calibrated prediction of $c" || break
    set -- $c
    name=$1
    shift
    tag="$name$(echo "$*" | tr -d ' -')"
    timeout "$(left 60)" "$PLAN" "test/models/$name.onnx" "$@" --device "$out/h200-calibrated.json" \
      --backend=cuda --emit=json -o "$work/$tag-calplan.json" 2>/dev/null
    $PY - "$tag" "$work/$tag-cuda.json" "$work/$tag-plan.json" "$work/$tag-calplan.json" <<'PY2' | tee -a "$res"
import json, sys
tag = sys.argv[1]
def pred(path):
    try:
        return sum(s.get("seconds") or 0 for s in json.load(open(path))["schedule"])
    except Exception:
        return None
try:
    r = json.load(open(sys.argv[2]))["seconds"]
    got = r.get("steps_warm_median", r.get("steps"))
except Exception:
    got = None
b, c = pred(sys.argv[3]), pred(sys.argv[4])
f = lambda s: f"{s*1e3:.2f} ms" if s else "not measured"
x = lambda p: f"{got/p:.2f}x" if got and p else ""
print(f"| {tag} | {f(got)} | {f(b)} | {x(b)} | {f(c)} | {x(c)} |")
if got and c:  # for the summary's line on the calibrated profile
    with open(sys.argv[2] + ".cal", "w") as out:
        out.write(json.dumps({"calibrated_case": tag, "steps_s": got, "predicted_s": c}))
PY2
    cat "$work/$tag-cuda.json.cal" >>"$raw" 2>/dev/null && echo >>"$raw"
  done
else
  say "not calibrated: $(tail -n 3 "$work/calibrate.txt")"
fi
fi

# PyTorch eager's own memory efficiency and launch floor on the same
# kernels' shapes (utils/gpu/torch_calibration.py): the H200 row's are
# oomplan-run's (a CUDA graph of its own kernels), and a training plan's
# time is PyTorch's (DeviceProfile's eager values, eagerProfile). Recorded
# beside the results (h200-pytorch.json) and added to h200-calibrated.json
# as its eager_memory_efficiency and eager_kernel_us.
if want 4d && [ "$BACKEND" = cuda ] && have_time "PyTorch's own efficiencies"; then
say ""
say "## 4d. PyTorch eager's memory efficiency and kernel floor (same shapes as 4b's add, transpose, layernorm, chain)"
say ""
if timeout "$(left 90)" $PY utils/gpu/torch_calibration.py --bandwidth-gbps 4800 \
    >"$out/h200-pytorch.json" 2>"$work/torch-cal.err"; then
  $PY - "$out/h200-pytorch.json" "$work" <<'PY2' | tee -a "$res"
import json, os, sys
t = json.load(open(sys.argv[1]))
print("| kernel | PyTorch eager (median of 20, CUDA events) | its efficiency | oomplan-run (4b, graph replays) |")
print("|---|---|---|---|")
for k in ("add", "transpose", "layernorm", "chain"):
    ours = ""
    try:
        r = json.load(open(os.path.join(sys.argv[2], f"cal-{k}.json")))["seconds"]
        ours = f"{r.get('steps_warm_median', r.get('steps')) * 1e6:.1f} us"
    except Exception:
        pass
    eff = f"{t[k]['efficiency']:.3f}" if "efficiency" in t[k] else f"{t['kernel_us']:.2f} us a kernel"
    print(f"| {k} | {t[k]['seconds'] * 1e6:.1f} us | {eff} | {ours} |")
print()
print(f"PyTorch's memory efficiency (geometric mean) {t['memory_efficiency']:.4f}, kernel floor {t['kernel_us']:.3f} us; {t['device']}")
cal = os.path.join(os.path.dirname(sys.argv[1]), "h200-calibrated.json")
if os.path.exists(cal):
    p = json.load(open(cal))
    p["eager_memory_efficiency"] = round(min(t["memory_efficiency"], 1.0), 4)
    p["eager_kernel_us"] = round(t["kernel_us"], 3)
    with open(cal, "w") as f:
        json.dump(p, f, indent=1)
        f.write("\n")
    print(f"(added to h200-calibrated.json: eager_memory_efficiency {p['eager_memory_efficiency']}, eager_kernel_us {p['eager_kernel_us']})")
PY2
else
  say "not measured: $(tail -n 3 "$work/torch-cal.err")"
fi
fi

# Where a model's step time goes, per op type (--profile: timing events
# around each step in the CUDA graph's replays, each step paying an event
# pair; mean of 5 warm runs).
if want 4c; then
say ""
say "## 4c. Per-op-type step times of the int4 LLM's decode step and gpt_like"
say ""
say "| case | op type | measured (--profile) |"
say "|---|---|---|"
for c in "$B/llm/llm.onnx --batch 1 --dim sequence_length=1,total_sequence_length=1024,past_sequence_length=1023 --input input_ids=$B/llm/dec/input_0.pb --input attention_mask=$B/llm/dec/input_1.pb" \
         "test/models/gpt_like.onnx $G2"; do
  have_time "the profile of $c" || break
  pc=$(basename "${c%% *}" .onnx)
  # shellcheck disable=SC2086
  timeout "$(left 60)" "$RUN" $c --random-weights --backend=$BACKEND --repeat 5 --profile --json \
    >"$work/prof4c-$pc.json" 2>/dev/null
  $PY - "$pc" "$work/prof4c-$pc.json" <<'PY2' | tee -a "$res"
import json, sys
try:
    got = json.load(open(sys.argv[2]))["op_seconds"]
    for op, sec in sorted(got.items(), key=lambda t: -t[1])[:8]:
        print(f"| {sys.argv[1]} | {op} | {sec*1e3:.3f} ms |")
except Exception as e:
    print(f"| {sys.argv[1]} | ? | not measured ({e}) |")
PY2
done
fi

if want 6 && have_time "the ONNX node tests"; then
say ""
say "## 6. ONNX node tests with every op on CUDA (expected outputs, rtol 1e-3)"
# Its own deadline, 15 s inside the timeout: the results so far are
# written even when the node tests do not all finish.
conf_s=$(left 150)
# GPU_CHECK_NODE_FILTER: a regex of the tests to run (a second run's
# rest: those a deadline cut and those a fix is for).
timeout "$conf_s" $PY utils/ci/run_onnx_conformance.py --tool "$RUN" --data "$B" \
  ${GPU_CHECK_NODE_FILTER:+--filter "$GPU_CHECK_NODE_FILTER"} \
  --suites node --backend $BACKEND --jobs 8 --timeout 120 --deadline $((conf_s > 30 ? conf_s - 15 : conf_s / 2)) \
  --results "$out/conformance-cuda.json" >"$work/conf.txt" 2>&1 || true
say '```'
tail -n 12 "$work/conf.txt" | tee -a "$res"
say '```'
fi

if want 5 && [ -f "$B/unseen/list.txt" ] && have_time "the unseen exports"; then
say ""
say "## 5. Exports oomplan was not developed on, on CUDA"
say ""
say "ref: against PyTorch 1.13's outputs (atol 1e-4 + rtol 1e-3, the CPU backend's bar in"
say "check_unseen_runtime.py); cpu: weights left behind, random (--seed 1) on both backends, against"
say "the CPU executor (rtol 1e-3, atol 1e-5 + 1e-5 max |ref|: random weights give outputs in the"
say "hundreds, whose near-zero elements differ by the rounding of terms of that size)."
say ""
say "| export | against | outputs | largest difference / largest \\|ref\\| | CUDA run's memory |"
say "|---|---|---|---|---|"
while read -r name mode; do
  have_time "unseen export $name" || break
  u=$B/unseen/$name
  ex=()
  [ "$mode" = cpu ] && ex=(--random-weights --seed 1)
  ref=$u/ref
  if [ "$mode" = cpu ]; then
    ref=$work/unseen-$name-cpu
    timeout "$(left 60)" "$RUN" "$u/model.onnx" --inputs-dir "$u/in" "${ex[@]}" \
      --threads "$(nproc)" --output-dir "$ref" >"$ref.txt" 2>&1 ||
      { fail "unseen $name: CPU run: $(tail -n 1 "$ref.txt")"; continue; }
  fi
  got=$work/unseen-$name-cuda
  timeout "$(left 60)" "$RUN" "$u/model.onnx" --inputs-dir "$u/in" "${ex[@]}" \
    --backend=$BACKEND --output-dir "$got" >"$got.txt" 2>&1 ||
    { fail "unseen $name: CUDA run: $(tail -n 1 "$got.txt")"; continue; }
  tol=(--scale-atol 1e-5)
  [ "$mode" = ref ] && tol=(--atol 1e-4)
  cmp=$($PY utils/gpu/compare_outputs.py "$ref" "$got" "${tol[@]}")
  [ $? = 0 ] || fail "unseen $name: outputs differ"
  $PY - "$name" "$mode" "$cmp" "$got.txt" <<'PY' | tee -a "$res"
import json, sys
name, mode, cmp, log = sys.argv[1:]
try:
    m = json.loads(cmp)
except Exception:
    m = {"ok": False, "outputs": [], "error": cmp[:120]}
o = m.get("outputs", [])
d = max((x.get("max_abs_diff", 0) / max(x.get("max_abs_ref", 0), 1e-30) for x in o), default=0)
beyond = sum(x.get("beyond", 0) for x in o)
lines = [l.strip() for l in open(log)]
# The device allocations against the plan (CUDA), else the plan's total.
mem = next((l for l in lines if " allocations " in l),
           next((l for l in lines if l.startswith("plan total")), ""))
# Steps CUDA has no kernel for ran on the host (docs/cuda.md, host steps).
host = next((l for l in lines if " ran on the host " in l), "")
if host:
    mem = mem[:100] + "; host steps:" + host.split(":", 2)[-1].split(";")[0]
print(f"| {name} | {mode} | {'yes' if m.get('ok') else 'NO ' + m.get('error', '') + f'({beyond} beyond)'} | "
      f"{d:.1e} | {mem[:200]} |")
PY
done <"$B/unseen/list.txt"
elapsed
fi

if want 5b; then
say ""
say "## 5b. float16 and bfloat16 models: CUDA against the CPU executor"
say ""
say "test/models converted by utils/export/to_float16.py, random weights. MatMul and the elementwise"
say "ops run natively on half storage; the rest on float copies (HalfInFloat.h). Bound: rtol"
say "2e-2 + 5e-3 max |ref| (two backends rounding to 16 bits in another order). No bar names it."
say ""
say "| case | outputs within the bound | device allocations / plan | oomplan --backend=cuda bound (no GPU asked) | free-memory drop at allocation | drop during the first run + over the later ones (CUDA graph) | context + handles | CUDA warm run (median of 10) | its steps on the device | predicted steps (H200 profile; measured / predicted) |"
say "|---|---|---|---|---|---|---|---|---|---|"
if [ -d "$B/half" ]; then
  for h in resnet50_f16 resnet50_bf16; do
    CMP_ARGS="--rtol 2e-2 --scale-atol 5e-3" model_case "$B/half/$h.onnx" $R8
  done
  for h in bert_like_f16 bert_like_bf16; do
    CMP_ARGS="--rtol 2e-2 --scale-atol 5e-3" model_case "$B/half/$h.onnx" $B8
  done
else
  say "(skipped: the bundle has no .gpu/half)"
fi
fi

if want 5c; then
say ""
say "## 5c. Quantized models: CUDA against the CPU executor"
say ""
say "test/models converted by utils/export/to_quantized.py, random weights (8-bit weights every byte"
say "value): resnet50 in the QOperator form (QuantizeLinear, QLinearConv, DequantizeLinear per"
say "convolution), bert_like dynamically quantized (DynamicQuantizeLinear, MatMulInteger, Cast, Mul"
say "per linear layer). The integer kernels are exact on both backends; an activation rounding"
say "differently upstream of a DynamicQuantizeLinear may take the next integer, one quantization"
say "step. Bound: rtol 1e-2 + 1e-3 max |ref|. No bar names it."
say ""
say "| case | outputs within the bound | device allocations / plan | oomplan --backend=cuda bound (no GPU asked) | free-memory drop at allocation | drop during the first run + over the later ones (CUDA graph) | context + handles | CUDA warm run (median of 10) | its steps on the device | predicted steps (H200 profile; measured / predicted) |"
say "|---|---|---|---|---|---|---|---|---|---|"
if [ -d "$B/quant" ]; then
  # The direct quantized convolution is slow next to cuDNN's: batch 2.
  CMP_ARGS="--rtol 1e-2 --scale-atol 1e-3" model_case "$B/quant/resnet50_qop.onnx" $R2
  CMP_ARGS="--rtol 1e-2 --scale-atol 1e-3" model_case "$B/quant/bert_like_dynq.onnx" $B8
  # Its own spread: the CPU executor against itself with attention unfused
  # (float sums in another order, as on another device) moves activations
  # across quantization steps too; on the build machine by as much as CUDA
  # did on the first GPU run (docs/gpu-results.md).
  if have_time "bert_like_dynq's own spread"; then
    dq="bert_like_dynq$(echo "$B8" | tr -d ' -')"
    # shellcheck disable=SC2086
    timeout "$(left 120)" "$RUN" "$B/quant/bert_like_dynq.onnx" $B8 --random-weights --seed 1 \
      --threads "$(nproc)" --fuse=none --output-dir "$work/$dq-unfused" >/dev/null 2>&1
    spread=$($PY utils/gpu/compare_outputs.py "$work/$dq-cpu" "$work/$dq-unfused" --rtol 1e-2 --scale-atol 1e-3)
    $PY - "$spread" <<'PY' | tee -a "$res"
import json, sys
try:
    o = json.loads(sys.argv[1])["outputs"]
    print("- the CPU executor against itself, attention unfused (the model's own spread): " +
          "; ".join(f"{x['output']}: {x['beyond']} beyond, norm-rel {x['norm_rel']:.1e}" for x in o))
except Exception as e:
    print(f"- its own spread not measured ({e})")
PY
  fi
else
  say "(skipped: the bundle has no .gpu/quant)"
fi
fi

if want 5d && [ -d "$B/fnops" ] && have_time "the function-op models"; then
say ""
say "## 5d. Opset 23 to 25 function ops and ONNX Runtime's contrib ops: CUDA against the CPU executor"
say ""
say "utils/check/check_function_ops.py's models (Attention in every form, RMSNormalization,"
say "RotaryEmbedding, Swish, TensorScatter) with their inputs, imported as ONNX's function bodies,"
say "and utils/check/check_contrib_ops.py's (MatMulNBits, GroupQueryAttention, the fused norms and GELUs),"
say "and utils/check/check_new_opsets.py's (opsets 18 to 22: Pad's modes, GroupNormalization, DeformConv, ...)."
say "Bound: rtol 1e-3, atol 1e-5. No bar names it."
say ""
fn_pass=0 fn_all=0
for u in "$B"/fnops/*/ "$B"/newops/*/; do
  [ -d "$u" ] || continue
  have_time "function-op model $u" || break
  name=$(basename "$(dirname "$u")")-$(basename "$u")
  fn_all=$((fn_all + 1))
  ref=$work/fnops-$name-cpu got=$work/fnops-$name-cuda
  timeout "$(left 60)" "$RUN" "$u/model.onnx" --inputs-dir "$u/in" --output-dir "$ref" \
    >"$ref.txt" 2>&1 || { fail "fnops $name: CPU run: $(tail -n 1 "$ref.txt")"; continue; }
  timeout "$(left 60)" "$RUN" "$u/model.onnx" --inputs-dir "$u/in" --backend=$BACKEND \
    --output-dir "$got" >"$got.txt" 2>&1 ||
    { fail "fnops $name: CUDA run: $(tail -n 1 "$got.txt")"; continue; }
  if $PY utils/gpu/compare_outputs.py "$ref" "$got" >"$got.cmp" 2>&1; then
    fn_pass=$((fn_pass + 1))
  else
    fail "fnops $name: outputs differ: $(head -c 300 "$got.cmp")"
  fi
done
say "$fn_pass of $fn_all function-op models: CUDA outputs within the bound of the CPU executor's"
fi

if want 5e && [ -d "$B/llm" ]; then
say ""
say "## 5e. An int4 LLM as ONNX Runtime's GenAI builder writes it: CUDA against the CPU executor"
say ""
say "test/lit/frontend/Inputs/genai_llm.py at 4 layers, hidden 2048, 16 query and 4 KV heads of"
say "128, MLP 5632, vocabulary 32000 (random weights: 4-bit MatMulNBits, GroupQueryAttention with"
say "rotary): a decode step after a cache of 1023 (MatMulNBits' GEMV, no workspace) and a prompt of"
say "256 (dequantized tiles through cuBLAS). Every step on the device."
say "Bound: rtol 1e-3 + 1e-4 max |ref|. No bar names it."
say ""
say "| case | outputs within the bound | device allocations / plan | oomplan --backend=cuda bound (no GPU asked) | free-memory drop at allocation | drop during the first run + over the later ones (CUDA graph) | context + handles | CUDA warm run (median of 10) | its steps on the device | predicted steps (H200 profile; measured / predicted) |"
say "|---|---|---|---|---|---|---|---|---|---|"
for c in dec:1:1024:1023 pre:256:256:1; do
  IFS=: read -r tag s t p <<<"$c"
  RUN_ARGS="--input input_ids=$B/llm/$tag/input_0.pb --input attention_mask=$B/llm/$tag/input_1.pb" \
    CMP_ARGS="--rtol 1e-3 --scale-atol 1e-4" model_case "$B/llm/llm.onnx" --batch 1 \
    --dim "sequence_length=$s,total_sequence_length=$t,past_sequence_length=$p"
done
fi

elapsed

# With what time is left: the kernel tests under compute-sanitizer (out of
# bounds and misaligned accesses, then shared-memory races), which name the
# kernel and the thread where a bug is. Slow, so last.
# GPU_CHECK_SANITIZER_TOOLS (default "memcheck racecheck") and
# GPU_CHECK_SANITIZER_FILTER, a gtest filter: racecheck alone on the
# kernels with shared memory, for a short second run.
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if want 7 && [ "$BACKEND" = cuda ] && [ -x "$san" ]; then
  for tool in ${GPU_CHECK_SANITIZER_TOOLS:-memcheck racecheck}; do
    have_time "compute-sanitizer --tool $tool" || break
    say ""
    say "## 7. compute-sanitizer --tool $tool on the kernel tests"
    timeout "$(left 200)" "$san" --tool $tool --error-exitcode 9 --print-limit 20 \
      "$work/RuntimeCUDATests" --gtest_brief=1 ${GPU_CHECK_SANITIZER_FILTER:+--gtest_filter="$GPU_CHECK_SANITIZER_FILTER"} \
      >"$work/sanitizer-$tool.txt" 2>&1
    rc=$?
    [ $rc = 9 ] && fail "compute-sanitizer --tool $tool found errors"
    [ $rc = 124 ] && say "(stopped at its timeout: what it found so far is below)"
    say '```'
    grep -E "^=========|PASSED|FAILED" "$work/sanitizer-$tool.txt" | head -n 40 | tee -a "$res"
    say '```'
  done
fi
elapsed
say ""
# The H200 profile's default --overhead, against which the summary puts
# what this run measured outside the plan.
prof_overhead=$(timeout 30 "$PLAN" test/lit/run/Inputs/add.onnxtxt --batch 2 --device H200 \
  --emit=json -o "$work/overhead.json" 2>/dev/null &&
  $PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["report"]["overhead_bytes"])' "$work/overhead.json")
$PY utils/gpu/gpu_summary.py "$raw" "${prof_overhead:-}" | tee -a "$res"
# Every log and JSON record (not the output tensors) for a look afterwards.
cp "$work/kernels.txt" "$out/" 2>/dev/null
(cd "$work" && tar -czf "$out/gpu-logs.tgz" --exclude='*.pb' -- *.err *.json *.txt *.rec 2>/dev/null)
echo "gpu-check: results in $res (status $status)"
exit $status
