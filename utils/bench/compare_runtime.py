#!/usr/bin/python3
"""Runs the four real models with oomplan-run and with ONNX Runtime and compares them.

What: for each model of utils/export/export_runtime_models.py at two sizes (SIZES below), it
  1. writes seeded inputs (numpy default_rng(seed); images N(0,1), token ids uniform in the vocabulary,
     BERT's attention mask 1 except the last quarter of every second row) as input_<i>.pb;
  2. runs `oomplan-run MODEL --batch B [--seq S] --inputs-dir IN --output-dir OUT --poison
     --check=unplanned --threads 2 --json`: the planned run with every buffer poisoned after its last
     use, then a second run with every tensor in its own allocation that must be bit-identical;
  3. runs ONNX Runtime (utils/bench/run_onnxruntime.mjs, default session options, 2 threads) on the same files;
  4. compares every output: |ours - ort| <= atol + rtol * |ort| elementwise (rtol 1e-3, atol 1e-4), no NaN;
     and checks that every region's measured high-water equals the plan (oomplan-run's "equal").
With --fitted it also runs gpt_like with --budget below its weights (a fitted plan: weights streamed from
the host region) and requires outputs bit-identical to the unfitted plan's and a device high-water
(weights + io + arena regions) under the budget.

Usage:
    /usr/bin/python3 utils/bench/compare_runtime.py --models DIR --tool build/tools/oomplan-run/oomplan-run
        [--only resnet50,bert_like] [--small] [--fitted] [--work DIR] [--seed N]
    DIR holds the exported models (utils/export/export_runtime_models.py DIR); ONNX Runtime comes from
    ORT_NODE_DIR (default /tmp/ort). Exit 0 when every case passes, 1 when one fails, 2 on bad usage.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
RTOL, ATOL = 1e-3, 1e-4

# (batch, seq) per model: a small size and the size of the latency bar.
SIZES = {
    "resnet50": [(1, None), (8, None)],
    "mobilenet_v2": [(1, None), (8, None)],
    "bert_like": [(1, 32), (8, 128)],
    "gpt_like": [(1, 32), (2, 128)],
}
VOCAB = {"bert_like": 30522, "gpt_like": 50257}
# gpt_like's weights are about 497 MB; a fitted plan under 300 MB must stream them.
FIT_BUDGET = "300MB"
FIT_BUDGET_BYTES = 300_000_000


def die(msg):
    print(f"compare_runtime.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def make_inputs(model, batch, seq, seed):
    """Graph inputs in graph-input order (what input_<i>.pb means to both runtimes)."""
    rng = np.random.default_rng(seed)
    if model in ("resnet50", "mobilenet_v2"):
        return [("input", rng.standard_normal((batch, 3, 224, 224), dtype=np.float32))]
    ids = rng.integers(0, VOCAB[model], size=(batch, seq), dtype=np.int64)
    if model == "gpt_like":
        return [("input_ids", ids)]
    mask = np.ones((batch, seq), dtype=np.int64)
    mask[1::2, seq - seq // 4:] = 0  # padding in every second row, never a whole row
    return [("input_ids", ids), ("attention_mask", mask)]


def write_inputs(inputs, folder):
    os.makedirs(folder, exist_ok=True)
    for i, (name, arr) in enumerate(inputs):
        t = numpy_helper.from_array(arr, name)
        with open(os.path.join(folder, f"input_{i}.pb"), "wb") as f:
            f.write(t.SerializeToString())


def read_outputs(folder):
    out, i = [], 0
    while os.path.exists(os.path.join(folder, f"output_{i}.pb")):
        out.append(numpy_helper.to_array(onnx.load_tensor(os.path.join(folder, f"output_{i}.pb"))))
        i += 1
    return out


def size_args(batch, seq):
    """No batch: a model of --model, whose input files bind every dim."""
    return ([f"--batch={batch}"] if batch else []) + ([f"--seq={seq}"] if seq else [])


def run_oomplan(tool, model_path, batch, seq, in_dir, out_dir, extra, threads=2, prefix=()):
    cmd = [*prefix, tool, model_path, *size_args(batch, seq), f"--inputs-dir={in_dir}", f"--threads={threads}",
           "--json", *extra] + ([f"--output-dir={out_dir}"] if out_dir else [])
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        j = json.loads(p.stdout)
    except json.JSONDecodeError:
        j = None
    return p.returncode, j, p.stderr.strip(), cmd


def run_ort(model_path, in_dir, out_dir, threads=2, warmup=0, iterations=0):
    cmd = ["node", os.path.join(HERE, "run_onnxruntime.mjs"), model_path, "--inputs-dir", in_dir,
           "--threads", str(threads), "--warmup", str(warmup), "--iterations", str(iterations)]
    if out_dir:
        cmd += ["--output-dir", out_dir]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip(), cmd
    return json.loads(p.stdout), "", cmd


def compare_arrays(ours, ref):
    """(ok, text): ours within RTOL/ATOL of ref elementwise."""
    if ours.shape != ref.shape:
        return False, f"shape {ours.shape} vs {ref.shape}"
    if ours.dtype != ref.dtype:
        return False, f"type {ours.dtype} vs {ref.dtype}"
    if not np.issubdtype(ref.dtype, np.floating):
        bad = int(np.count_nonzero(ours != ref))
        return bad == 0, f"{bad} of {ref.size} differ"
    a, b = ours.astype(np.float64), ref.astype(np.float64)
    if np.isnan(a).any() or np.isnan(b).any():
        return False, f"NaN (ours {int(np.isnan(a).sum())}, ort {int(np.isnan(b).sum())})"
    err = np.abs(a - b)
    bad = int(np.count_nonzero(err > ATOL + RTOL * np.abs(b)))
    rel = float(np.max(err / (ATOL + RTOL * np.abs(b))))
    return bad == 0, f"max |d| {err.max():.2e}, max |d|/tol {rel:.3f}, {bad} of {ref.size} out"


def check_case(args, model, batch, seq, work):
    tag = f"{model} batch {batch}" + (f" seq {seq}" if seq else "")
    path = os.path.join(args.models, f"{model}.onnx")
    case = os.path.join(work, f"{model}_b{batch}" + (f"_s{seq}" if seq else ""))
    in_dir, ours_dir, ort_dir = (os.path.join(case, d) for d in ("in", "oomplan", "ort"))
    write_inputs(make_inputs(model, batch, seq, args.seed), in_dir)
    t0 = time.time()
    rc, j, err, cmd = run_oomplan(args.tool, path, batch, seq, in_dir, ours_dir,
                                  ["--poison", "--check=unplanned"])
    t1 = time.time()
    if rc != 0 or not j:
        print(f"FAIL {tag}: oomplan-run exit {rc}: {err or (j and j.get('error'))}\n  {' '.join(cmd)}")
        return False, None
    ort, oerr, ocmd = run_ort(path, in_dir, ort_dir)
    t2 = time.time()
    if ort is None:
        print(f"FAIL {tag}: ONNX Runtime: {oerr}\n  {' '.join(ocmd)}")
        return False, None
    ok = bool(j.get("ok")) and j.get("check_unplanned", {}).get("identical") is True
    hw = all(r["equal"] for r in j["regions"])
    lines = []
    ours, ref = read_outputs(ours_dir), read_outputs(ort_dir)
    if len(ours) != len(ref):
        ok = False
        lines.append(f"  {len(ours)} outputs vs ONNX Runtime's {len(ref)}")
    for i, (a, b) in enumerate(zip(ours, ref)):
        good, text = compare_arrays(a, b)
        ok &= good
        lines.append(f"  output {i} {list(b.shape)}: {'ok' if good else 'MISMATCH'} ({text})")
    regions = ", ".join(f"{r['region']} {r['planned_bytes']}/{r['high_water_aligned_bytes']}"
                        for r in j["regions"])
    print(f"{'PASS' if ok and hw else 'FAIL'} {tag}: poison + unplanned identical="
          f"{j.get('check_unplanned', {}).get('identical')}, high-water==plan {hw} "
          f"(planned/measured: {regions}); rss growth ours {j['rss_growth_bytes']}, "
          f"ort {ort['rss_growth_bytes']}; {t1 - t0:.1f} s + {t2 - t1:.1f} s")
    print("\n".join(lines))
    return ok and hw, ours


def check_fitted(args, work):
    """gpt_like under a budget below its weights: identical outputs, device peak under the budget."""
    batch, seq = 1, 32
    path = os.path.join(args.models, "gpt_like.onnx")
    in_dir = os.path.join(work, "gpt_fit", "in")
    write_inputs(make_inputs("gpt_like", batch, seq, args.seed), in_dir)
    outs = {}
    for name, extra in (("unfitted", []), ("fitted", [f"--budget={FIT_BUDGET}", "--poison",
                                                      "--check=unplanned"])):
        out_dir = os.path.join(work, "gpt_fit", name)
        rc, j, err, cmd = run_oomplan(args.tool, path, batch, seq, in_dir, out_dir, extra)
        if rc != 0 or not j or not j.get("ok"):
            print(f"FAIL gpt_like fitted ({name}): exit {rc}: {err}\n  {' '.join(cmd)}")
            return False
        outs[name] = (read_outputs(out_dir), j)
    (a, ja), (b, jb) = outs["unfitted"], outs["fitted"]
    same = len(a) == len(b) and all(x.tobytes() == y.tobytes() for x, y in zip(a, b))
    regions = {r["region"]: r for r in jb["regions"]}
    device = sum(regions[r]["high_water_aligned_bytes"] for r in ("weights", "io", "arena"))
    weights = next(r["planned_bytes"] for r in ja["regions"] if r["region"] == "weights")
    ok = same and jb.get("fitted") and device < FIT_BUDGET_BYTES < weights
    print(f"{'PASS' if ok else 'FAIL'} gpt_like fitted batch {batch} seq {seq} --budget={FIT_BUDGET}: "
          f"fitted={jb.get('fitted')}, outputs bit-identical to unfitted {same}, unfitted weights "
          f"{weights}, fitted device high-water {device} (weights {regions['weights']['high_water_aligned_bytes']}"
          f" + io {regions['io']['high_water_aligned_bytes']} + arena "
          f"{regions['arena']['high_water_aligned_bytes']}), host {regions['host']['planned_bytes']}, "
          f"all regions high-water==plan {all(r['equal'] for r in jb['regions'])}")
    return bool(ok)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", required=True, help="folder with the exported models")
    ap.add_argument("--tool", required=True, help="oomplan-run binary")
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--small", action="store_true", help="only the first (small) size of each model")
    ap.add_argument("--fitted", action="store_true", help="also run the fitted gpt_like case")
    ap.add_argument("--work", default="", help="scratch folder (default: a temporary one)")
    ap.add_argument("--seed", type=int, default=12)
    args = ap.parse_args()
    if not os.access(args.tool, os.X_OK):
        die(f"{args.tool} is not an executable")
    names = [n for n in args.only.split(",") if n] or list(SIZES)
    for n in names:
        if n not in SIZES:
            die(f"unknown model {n}; choose from {list(SIZES)}")
        if not os.path.exists(os.path.join(args.models, f"{n}.onnx")):
            die(f"{args.models}/{n}.onnx not found; export it with utils/export/export_runtime_models.py")
    work = args.work or tempfile.mkdtemp(prefix="oomplan-compare-")
    ok = True
    for n in names:
        for batch, seq in SIZES[n][:1] if args.small else SIZES[n]:
            ok &= check_case(args, n, batch, seq, work)[0]
    if args.fitted:
        ok &= check_fitted(args, work)
    print("all passed" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
