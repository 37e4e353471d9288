#!/usr/bin/python3
"""Benchmark: oomplan-run against ONNX Runtime on the four real models (issue 12, item 7).

What: for each model and size (compare_runtime.SIZES, or --sizes), both runtimes run the same seeded
inputs with 2 threads (--threads), interleaved (R rounds; the runtime that goes first alternates between rounds),
each round in fresh processes:
  - oomplan-run MODEL --batch B [--seq S] --inputs-dir IN --threads 2 --json [--repeat 2]: the "run"
    phase (the steps only; planning and weight loading are reported apart) of its first, cold run (first
    touch of the arena's pages, OpenBLAS's first call), and, when the tool has --repeat, the median of the
    warm repeats;
  - node utils/run_onnxruntime.mjs MODEL --inputs-dir IN --threads 2 --warmup 1 --iterations 2: default
    session options (optimization "all", CPU arena and memory pattern on); latency is the median of the
    warm runs, and its first run is shown too;
  - memory: each process's peak RSS growth during its runs (VmHWM reset after loading, minus VmRSS
    before the first run), as both tools measure it; and the whole process's peak RSS minus its RSS
    before loading the model (ORT: VmRSS before session creation; oomplan-run: GNU time's maximum RSS
    minus that of a run of ONNX's one-node test_relu), which counts weights and loading too.
Medians over the rounds are printed as a markdown table (first ratio = ours first / ORT first, warm ratio =
ours warm / ORT warm, memory ratio = ours / ORT), with the load average before and after; --json FILE keeps every sample.

Usage:
    /usr/bin/python3 utils/bench_runtime.py --models DIR --tool build/tools/oomplan-run/oomplan-run
        [--only resnet50,bert_like] [--sizes resnet50:8,bert_like:8x128] [--rounds 3] [--threads 2] [--json FILE]
"""
import argparse
import json
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


# oomplan-run's whole-process peak RSS comes from GNU time; its start-up RSS (code, ONNX schema
# registry) is that of a run of a one-node model, subtracted as ORT's RSS before session creation is.
TIME = ("/usr/bin/time", "-f", "HX_MAXRSS_KB %M")
TRIVIAL = "/usr/share/libonnx-testdata/data/node/test_relu"


def max_rss(stderr):
    for line in stderr.splitlines():
        if line.startswith("HX_MAXRSS_KB "):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no GNU time output in: {stderr[-300:]}")


def baseline_rss(tool):
    p = subprocess.run([*TIME, tool, f"{TRIVIAL}/model.onnx", f"--inputs-dir={TRIVIAL}/test_data_set_0",
                        "--threads=2"], capture_output=True, text=True)
    if p.returncode != 0:
        cr.die(f"baseline run on {TRIVIAL} failed: {p.stderr.strip()}")
    return max_rss(p.stderr)


def one_round(args, path, batch, seq, in_dir, first_ours):
    res = {}
    order = ["ours", "ort"] if first_ours else ["ort", "ours"]
    for who in order:
        if who == "ours":
            extra = [f"--repeat={args.repeat}"] if args.repeat else []
            rc, j, err, cmd = cr.run_oomplan(args.tool, path, batch, seq, in_dir, None, extra,
                                             threads=args.threads, prefix=TIME)
            if rc != 0 or not j or not j.get("ok"):
                raise RuntimeError(f"oomplan-run exit {rc}: {err}\n  {' '.join(cmd)}")
            regions = {r["region"]: r for r in j["regions"]}
            warm = j["seconds"].get("run_repeats") or []
            res["ours"] = {"run_s": statistics.median(warm) if warm else j["seconds"]["run"],
                           "first_s": j["seconds"]["run"], "op_seconds": j.get("op_seconds"), "load_s": j["seconds"]["load"],
                           "plan_s": j["seconds"]["plan"], "rss": j["rss_growth_bytes"],
                           "arena": regions["arena"]["planned_bytes"],
                           "io": regions["io"]["planned_bytes"],
                           "outputs": sum(o["bytes"] for o in j["outputs"]),
                           "hw_equal": all(r["equal"] for r in j["regions"]),
                           "process_peak": max_rss(err) - args.baseline}
        else:
            o, err, cmd = cr.run_ort(path, in_dir, None, threads=args.threads, warmup=1, iterations=2)
            if o is None:
                raise RuntimeError(f"ONNX Runtime: {err}\n  {' '.join(cmd)}")
            res["ort"] = {"warm_s": o["median_s"], "first_s": o["first_run_s"],
                          "rss": o["rss_growth_bytes"], "version": o["ort_version"],
                          "process_peak": o["process_peak_growth_bytes"]}
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", required=True)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--sizes", default="", help="e.g. resnet50:8,bert_like:8x128 (default: SIZES)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2, help="threads of both runtimes (the bar: 2)")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    if not os.access(args.tool, os.X_OK):
        cr.die(f"{args.tool} is not an executable")
    # Warm runs of the plan when oomplan-run has --repeat (else its one cold run is the latency).
    help_text = subprocess.run([args.tool, "--help"], capture_output=True, text=True).stdout
    args.repeat = 2 if "--repeat" in help_text else 0
    args.baseline = baseline_rss(args.tool)
    sizes = parse_sizes(args.sizes) if args.sizes else dict(cr.SIZES)
    names = [n for n in args.only.split(",") if n] or list(sizes)
    for n in names:
        if n not in sizes:
            cr.die(f"no size for model {n}")
        if not os.path.exists(os.path.join(args.models, f"{n}.onnx")):
            cr.die(f"{args.models}/{n}.onnx not found; export it with utils/export_runtime_models.py")
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
            ours = {k: med([r["ours"][k] for r in rounds])
                    for k in ("run_s", "first_s", "load_s", "rss", "process_peak")}
            ort = {k: med([r["ort"][k] for r in rounds]) for k in ("warm_s", "first_s", "rss", "process_peak")}
            o0 = rounds[0]["ours"]
            rows.append((n, batch, seq or "-", ours["first_s"], ours["run_s"] if args.repeat else None,
                         ort["first_s"], ort["warm_s"], ours["first_s"] / ort["first_s"],
                         ours["run_s"] / ort["warm_s"] if args.repeat else None,
                         o0["arena"], o0["outputs"], ours["rss"],
                         int(ort["rss"]), ours["rss"] / ort["rss"],
                         all(r["ours"]["hw_equal"] for r in rounds), int(ours["process_peak"]),
                         int(ort["process_peak"]), ours["process_peak"] / ort["process_peak"]))
            print(f"{n} batch {batch} seq {seq}: ours {[round(r['ours']['run_s'], 3) for r in rounds]} s,"
                  f" ort warm {[round(r['ort']['warm_s'], 3) for r in rounds]} s, rss ours "
                  f"{[r['ours']['rss'] for r in rounds]}, ort {[r['ort']['rss'] for r in rounds]}",
                  file=sys.stderr, flush=True)
    load_after = os.getloadavg()
    print(f"ONNX Runtime {samples[0]['rounds'][0]['ort']['version'] if samples else '?'}, "
          f"{args.threads} threads, "
          f"{args.rounds} interleaved rounds, medians; load average before "
          f"{load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, after "
          f"{load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}\n")
    def f(x, spec):
        return "-" if x is None else format(x, spec)
    print("| model | batch | seq | ours first s | ours warm s | ORT first s | ORT warm s | first ratio "
          "| warm ratio | planned arena | outputs | RSS growth ours | RSS growth ORT | memory ratio "
          "| high-water = plan | process peak ours | process peak ORT | ratio |")
    print("|" + "---|" * 18)
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.3f} | {f(r[4], '.3f')} | {r[5]:.3f} | {r[6]:.3f} | "
              f"{r[7]:.2f} | {f(r[8], '.2f')} | {r[9]:,} | {r[10]:,} | {int(r[11]):,} | {r[12]:,} | "
              f"{r[13]:.2f} | {'yes' if r[14] else 'NO'} | {r[15]:,} | {r[16]:,} | {r[17]:.2f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"load_before": load_before, "load_after": load_after, "samples": samples}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
