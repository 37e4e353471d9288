#!/usr/bin/python3
"""Benchmark: oomplan-run against ONNX Runtime on the four real models.

What: for each model and size (compare_runtime.SIZES, or --sizes), both runtimes run the same seeded
inputs with the same threads (--threads, 2 for the bar), interleaved (R rounds; the runtime that goes first
alternates between rounds), each round in fresh processes, back to back:
  - oomplan-run MODEL --batch B [--seq S] --inputs-dir IN --threads T --json --repeat W: the "run" phase
    (the steps only; planning and weight loading are reported apart) of its first run, and the median of
    the W warm runs after it;
  - node utils/bench/run_onnxruntime.mjs MODEL --inputs-dir IN --threads T --warmup 0 --iterations W: default
    session options (optimization "all", CPU arena and memory pattern on); first run and the median of the
    W runs after it. Like for like: both are the first run after loading, then W more runs.
Memory, three definitions (docs/benchmarks.md says which the bar uses and why), each measured inside each
process over its FIRST run (the all-runs figures are kept in --json):
  - run growth: VmHWM (reset after loading / session creation) minus VmRSS before the first run;
  - process growth: the process's peak RSS from before the model is read (ORT: before session creation)
    to the end of the first run, minus VmRSS then; it counts planning/session creation and loading;
  - beyond weights: process growth minus the model's weight bytes (the planned weights region), which both
    runtimes must hold and no plan can shrink.
Any other model runs with --model NAME=PATH:INPUT=DIMS[:INPUT=DIMS...] (seeded uniform [0, 1) floats,
for image models; repeatable); --only then selects among the four. The geometric mean of the warm
ratios closes the table.
Medians over the rounds are printed as a markdown table (ratios = ours / ORT), with the load average before
and after; --json FILE keeps every sample.

Usage:
    /usr/bin/python3 utils/bench/bench_runtime.py --models DIR --tool build/tools/oomplan-run/oomplan-run
        [--only resnet50,bert_like] [--sizes resnet50:8,bert_like:8x128] [--rounds 3] [--warm 3]
        [--threads 2] [--json FILE]
    /usr/bin/python3 utils/bench/bench_runtime.py --models /tmp/models --tool build/tools/oomplan-run/oomplan-run \
        --only none --model det=det.onnx:x=1x3x640x640 --model cls=cls.onnx:x=8x3x48x192
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no utils/__pycache__ in the working tree
import compare_runtime as cr  # noqa: E402


def parse_sizes(text):
    sizes = {}
    for item in filter(None, text.split(",")):
        name, _, dims = item.partition(":")
        if name not in cr.SIZES or not dims:
            cr.die(f"bad --sizes item '{item}' (MODEL:B or MODEL:BxS, MODEL in {list(cr.SIZES)})")
        b, _, s = dims.partition("x")
        sizes.setdefault(name, []).append((int(b), int(s) if s else None))
    return sizes


def parse_model(text):
    """NAME=PATH:INPUT=DIMS[:INPUT=DIMS...] -> (name, path, [(input, dims)])."""
    name, _, rest = text.partition("=")
    path, *specs = rest.split(":")
    inputs = []
    for spec in specs:
        iname, _, dims = spec.partition("=")
        try:
            inputs.append((iname, tuple(int(d) for d in dims.split("x"))))
        except ValueError:
            cr.die(f"bad --model input '{spec}' (INPUT=DxDxD)")
    if not name or not os.path.exists(path) or not inputs:
        cr.die(f"bad --model '{text}' (NAME=PATH:INPUT=DIMS, PATH must exist)")
    return name, path, inputs


def model_inputs(path, inputs, seed):
    """Seeded uniform floats in graph-input order (input_<i>.pb means graph input i)."""
    import numpy as np
    import onnx
    order = [i.name for i in onnx.load(path, load_external_data=False).graph.input]
    given = dict(inputs)
    missing = [n for n in order if n not in given] + [n for n in given if n not in order]
    if missing:
        cr.die(f"{path}: --model must give exactly the graph inputs {order}, not {list(given)}")
    rng = np.random.default_rng(seed)
    return [(n, rng.random(given[n], dtype=np.float32)) for n in order]


def one_round(args, path, batch, seq, in_dir, first_ours):
    res = {}
    order = ["ours", "ort"] if first_ours else ["ort", "ours"]
    for who in order:
        if who == "ours":
            rc, j, err, cmd = cr.run_oomplan(args.tool, path, batch, seq, in_dir, None,
                                             [f"--repeat={args.warm}"], threads=args.threads)
            if rc != 0 or not j or not j.get("ok"):
                raise RuntimeError(f"oomplan-run exit {rc}: {err}\n  {' '.join(cmd)}")
            regions = {r["region"]: r for r in j["regions"]}
            sec = j["seconds"]
            res["ours"] = {"first_s": sec["run"], "warm_s": sec.get("run_warm_median", sec["run"]),
                           "load_s": sec["load"], "plan_s": sec["plan"],
                           "run_growth": j["rss_growth_first_run_bytes"],
                           "run_growth_all": j["rss_growth_bytes"],
                           "process": j["process_peak_growth_first_run_bytes"],
                           "process_all": j["process_peak_growth_bytes"],
                           "weights": regions["weights"]["planned_bytes"],
                           "arena": regions["arena"]["planned_bytes"],
                           "outputs": sum(o["bytes"] for o in j["outputs"]),
                           "hw_equal": all(r["equal"] for r in j["regions"])}
        else:
            o, err, cmd = cr.run_ort(path, in_dir, None, threads=args.threads, warmup=0,
                                     iterations=args.warm)
            if o is None:
                raise RuntimeError(f"ONNX Runtime: {err}\n  {' '.join(cmd)}")
            res["ort"] = {"warm_s": o["median_s"], "first_s": o["first_run_s"],
                          "run_growth": o["rss_growth_first_run_bytes"],
                          "run_growth_all": o["rss_growth_bytes"],
                          "process": o["process_peak_growth_first_run_bytes"],
                          "process_all": o["process_peak_growth_bytes"],
                          "version": o["ort_version"]}
    w = res["ours"]["weights"]  # the same model: the same weight bytes for both
    for who in ("ours", "ort"):
        res[who]["beyond_weights"] = res[who]["process"] - w
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", required=True)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--sizes", default="", help="e.g. resnet50:8,bert_like:8x128 (default: SIZES)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warm", type=int, default=3, help="warm runs after the first, both runtimes")
    ap.add_argument("--threads", type=int, default=2, help="threads of both runtimes (the bar: 2)")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--json", default="")
    ap.add_argument("--model", action="append", default=[],
                    help="NAME=PATH:INPUT=DIMS[:INPUT=DIMS...], another model (repeatable)")
    args = ap.parse_args()
    if not os.access(args.tool, os.X_OK):
        cr.die(f"{args.tool} is not an executable")
    sizes = parse_sizes(args.sizes) if args.sizes else dict(cr.SIZES)
    names = [n for n in args.only.split(",") if n and n != "none"] if args.only else list(sizes)
    for n in names:
        if n not in sizes:
            cr.die(f"no size for model {n}")
        if not os.path.exists(os.path.join(args.models, f"{n}.onnx")):
            cr.die(f"{args.models}/{n}.onnx not found; export it with utils/export/export_runtime_models.py")
    work = tempfile.mkdtemp(prefix="oomplan-bench-")
    load_before = os.getloadavg()
    rows, samples = [], []
    med = statistics.median
    for n in names:
        path = os.path.join(args.models, f"{n}.onnx")
        for batch, seq in sizes[n]:
            in_dir = os.path.join(work, f"{n}_{batch}_{seq}")
            cr.write_inputs(cr.make_inputs(n, batch, seq, args.seed), in_dir)
            rounds = [one_round(args, path, batch, seq, in_dir, r % 2 == 0) for r in range(args.rounds)]
            samples.append({"model": n, "batch": batch, "seq": seq, "rounds": rounds})
            keys = ("first_s", "warm_s", "run_growth", "process", "beyond_weights")
            ours = {k: med([r["ours"][k] for r in rounds]) for k in keys}
            ort = {k: med([r["ort"][k] for r in rounds]) for k in keys}
            rows.append((n, batch, seq or "-", ours, ort, rounds[0]["ours"],
                         all(r["ours"]["hw_equal"] for r in rounds)))
            print(f"{n} batch {batch} seq {seq}: ours warm {[round(r['ours']['warm_s'], 3) for r in rounds]} s,"
                  f" ort warm {[round(r['ort']['warm_s'], 3) for r in rounds]} s", file=sys.stderr, flush=True)
    for spec in args.model:
        n, path, inputs = parse_model(spec)
        in_dir = os.path.join(work, n)
        cr.write_inputs(model_inputs(path, inputs, args.seed), in_dir)
        shape = " ".join(f"{i}={'x'.join(map(str, d))}" for i, d in inputs)
        rounds = [one_round(args, path, None, None, in_dir, r % 2 == 0) for r in range(args.rounds)]
        samples.append({"model": n, "path": path, "inputs": shape, "rounds": rounds})
        keys = ("first_s", "warm_s", "run_growth", "process", "beyond_weights")
        ours = {k: med([r["ours"][k] for r in rounds]) for k in keys}
        ort = {k: med([r["ort"][k] for r in rounds]) for k in keys}
        rows.append((n, shape, "-", ours, ort, rounds[0]["ours"], all(r["ours"]["hw_equal"] for r in rounds)))
        print(f"{n} {shape}: ours warm {[round(r['ours']['warm_s'], 4) for r in rounds]} s,"
              f" ort warm {[round(r['ort']['warm_s'], 4) for r in rounds]} s", file=sys.stderr, flush=True)
    load_after = os.getloadavg()
    print(f"ONNX Runtime {samples[0]['rounds'][0]['ort']['version'] if samples else '?'}, "
          f"{args.threads} threads, "
          f"{args.rounds} interleaved rounds, medians; load average before "
          f"{load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, after "
          f"{load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}\n")
    print("| model | batch | seq | ours first s | ORT first s | first ratio | ours warm s | ORT warm s "
          "| warm ratio | high-water = plan |")
    print("|" + "---|" * 10)
    for n, b, q, o, t, o0, hw in rows:
        print(f"| {n} | {b} | {q} | {o['first_s']:.3f} | {t['first_s']:.3f} | {o['first_s'] / t['first_s']:.2f} "
              f"| {o['warm_s']:.3f} | {t['warm_s']:.3f} | {o['warm_s'] / t['warm_s']:.2f} | {'yes' if hw else 'NO'} |")
    if rows:
        ratios = [o["warm_s"] / t["warm_s"] for _, _, _, o, t, _, _ in rows]
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"\ngeometric mean of the warm ratios: {geo:.2f} (worst {max(ratios):.2f})")
    print()
    print("| model | batch | seq | weights | planned arena | run growth ours | ORT | ratio | process growth ours "
          "| ORT | ratio | beyond weights ours | ORT | ratio |")
    print("|" + "---|" * 14)
    for n, b, q, o, t, o0, hw in rows:
        cells = []
        for k in ("run_growth", "process", "beyond_weights"):
            cells += [f"{int(o[k]):,}", f"{int(t[k]):,}", f"{o[k] / t[k]:.2f}" if t[k] > 0 else "-"]
        print(f"| {n} | {b} | {q} | {o0['weights']:,} | {o0['arena']:,} | " + " | ".join(cells) + " |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"load_before": load_before, "load_after": load_after, "samples": samples}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
