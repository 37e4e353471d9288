#!/usr/bin/env python3
"""The CPU runtime on float16 and bfloat16 versions of real exports.

    /usr/bin/python3 utils/check/check_float16_runtime.py WORK [--only a,b] [--types float16,bfloat16]

Takes the exports of utils/check/check_unseen_runtime.py (run with --export-only
into WORK first, or let this script do it: it needs python3-torch), converts
each model and its float inputs with utils/export/to_float16.py, runs oomplan-run
on it (--poison --check=unplanned: every buffer at its planned offset, and
bit-identical to a run with a buffer per tensor), and compares the outputs
with PyTorch's float32 outputs (for a model whose outputs jump, such as
NMS, with the float32 model run on the same rounded inputs). The figure is the largest difference over
the output's largest magnitude; a model passes when it is within BOUND
(float16 3e-2, bfloat16 1e-1: a few roundings of 2^-11 and 2^-8 per op over
tens of ops; docs/float16.md has the measured figures) and nothing is NaN
where the reference is finite.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "export"))
import to_float16  # noqa: E402

BOUND = {"float16": 3e-2, "bfloat16": 1e-1}


def load_dir(d, prefix):
    out, i = [], 0
    while os.path.exists(os.path.join(d, f"{prefix}_{i}.pb")):
        out.append(onnx.load_tensor(os.path.join(d, f"{prefix}_{i}.pb")))
        i += 1
    return out


def as_float(t):
    if t.data_type == TensorProto.BFLOAT16:
        bits = np.frombuffer(t.raw_data, dtype=np.uint16).astype(np.uint32) << 16
        return bits.view(np.float32).reshape(tuple(t.dims)).astype(np.float64)
    return numpy_helper.to_array(t).astype(np.float64)


def convert_input(t, target):
    if t.data_type != TensorProto.FLOAT:
        return t
    c = TensorProto()
    c.CopyFrom(t)
    to_float16.convert_tensor(c, target)
    return c


def rounded_run(tool, d, kind, w):
    """The float32 model on inputs rounded to KIND: what the rounding of the
    inputs alone does (NMS picks other boxes when two scores round alike)."""
    target = TensorProto.FLOAT16 if kind == "float16" else TensorProto.BFLOAT16
    rin, rout = os.path.join(w, "rounded_in"), os.path.join(w, "rounded_out")
    os.makedirs(rin, exist_ok=True)
    for k, t in enumerate(load_dir(os.path.join(d, "in"), "input")):
        if t.data_type == TensorProto.FLOAT:
            x = as_float(convert_input(t, target)).astype(np.float32)
            t = numpy_helper.from_array(x, t.name)
        onnx.save_tensor(t, os.path.join(rin, f"input_{k}.pb"))
    r = subprocess.run([tool, os.path.join(d, "model.onnx"), "--inputs-dir", rin, "--output-dir", rout,
                        "--threads=2"], capture_output=True, text=True)
    return rout if r.returncode == 0 else None


def compare(outs, refs):
    """The largest difference over each output's largest magnitude, and
    notes on integer outputs; None and why when they cannot be compared."""
    worst, notes = 0.0, []
    for k, (a, b) in enumerate(zip(outs, refs)):
        if b.data_type not in (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16,
                               TensorProto.BFLOAT16):
            # Indices (ArgMax, TopK) of values rounded to 16 bits may pick
            # another of two near-equal elements: counted, not failed.
            x, y = numpy_helper.to_array(a), numpy_helper.to_array(b)
            if x.shape != y.shape:
                return None, f"output {k}: dims {list(x.shape)} against {list(y.shape)}"
            if not np.array_equal(x, y):
                notes.append(f"output {k}: {int((x != y).sum())} of {y.size} integers differ")
            continue
        x, y = as_float(a), as_float(b)
        if x.shape != y.shape:
            return None, f"output {k}: dims {list(x.shape)} against {list(y.shape)}"
        finite = np.isfinite(y)
        if np.any(~np.isfinite(x[finite])):
            return None, f"output {k}: non-finite values where the reference is finite"
        scale = float(np.max(np.abs(y[finite]))) if finite.any() else 0.0
        if scale > 0:
            worst = max(worst, float(np.max(np.abs(x[finite] - y[finite]))) / scale)
    return worst, "; ".join(notes)


def run_one(tool, d, name, kind):
    target = TensorProto.FLOAT16 if kind == "float16" else TensorProto.BFLOAT16
    w = os.path.join(d, kind)
    os.makedirs(os.path.join(w, "in"), exist_ok=True)
    m = onnx.load(os.path.join(d, "model.onnx"))
    to_float16.convert_graph(m.graph, target, to_float16.kept_names(m.graph))
    mp = os.path.join(w, "model.onnx")
    onnx.save(m, mp)
    for k, t in enumerate(load_dir(os.path.join(d, "in"), "input")):
        onnx.save_tensor(convert_input(t, target), os.path.join(w, "in", f"input_{k}.pb"))
    out = os.path.join(w, "out")
    r = subprocess.run([tool, mp, "--inputs-dir", os.path.join(w, "in"), "--output-dir", out,
                        "--poison", "--check=unplanned", "--threads=2"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1][-300:]
    outs = load_dir(out, "output")
    worst, why = compare(outs, load_dir(os.path.join(d, "ref"), "output"))
    if worst is not None and worst > BOUND[kind]:
        # A discontinuous model (thresholds, NMS): against the float32 model
        # on the same rounded inputs instead, which must agree.
        rout = rounded_run(tool, d, kind, w)
        if rout:
            again, why2 = compare(outs, load_dir(rout, "output"))
            if again is not None:
                return again, (f"{worst:.2e} against PyTorch; against float32 on the "
                               f"rounded inputs" + (f"; {why2}" if why2 else ""))
    return worst, why


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work")
    ap.add_argument("--tool", default=os.path.join(ROOT, "build", "tools", "oomplan-run", "oomplan-run"))
    ap.add_argument("--only", default="")
    ap.add_argument("--types", default="float16,bfloat16")
    a = ap.parse_args()
    if not os.path.isdir(a.work) or not os.listdir(a.work):
        cmd = [sys.executable, os.path.join(ROOT, "utils", "check", "check_unseen_runtime.py"), a.work, "--export-only"]
        if a.only:
            cmd += ["--only", a.only]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    only = set(filter(None, a.only.split(",")))
    failed = 0
    for name in sorted(os.listdir(a.work)):
        d = os.path.join(a.work, name)
        if (only and name not in only) or not os.path.exists(os.path.join(d, "model.onnx")):
            continue
        cols = []
        for kind in a.types.split(","):
            worst, why = run_one(a.tool, d, name, kind)
            if worst is None:
                cols.append(f"{kind} FAIL ({why})")
                failed += 1
            else:
                ok = worst <= BOUND[kind]
                failed += not ok
                cols.append(f"{kind} {'pass' if ok else 'FAIL'} {worst:.2e}" + (f" ({why})" if why else ""))
        print(f"{name}: " + "; ".join(cols), flush=True)
    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
