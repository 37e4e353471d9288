#!/usr/bin/env python3
"""Compares two folders of ONNX TensorProto outputs (output_<i>.pb), as
oomplan-run --output-dir writes them: the CUDA run against the CPU run.

Usage: compare_outputs.py REF_DIR GOT_DIR [--rtol 1e-3] [--atol 1e-5] [--scale-atol 0]

Prints one JSON object: per output, the element count, how many elements
differ by more than atol + rtol * |ref|, the largest absolute difference,
the largest |ref|, and the norm-relative error ||got - ref|| / ||ref||.
--scale-atol S adds S * max |ref| (over the finite elements) to atol: for runs whose
sums go in another order (other threads, another device) on weights of no
meaning, where an element that cancels to near zero differs by the
rounding of its terms, which scale with the output, not with the element.
A NaN or infinity in the reference must be matched exactly. Integer and
bool outputs must be equal. Exit 0 when every element is
within the bound, 1 otherwise (2 on missing or unreadable files).
"""
import argparse
import glob
import json
import os
import sys

import numpy as np
from onnx import TensorProto, numpy_helper


def load(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ref")
    ap.add_argument("got")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--scale-atol", type=float, default=0.0)
    a = ap.parse_args()
    refs = sorted(glob.glob(os.path.join(a.ref, "output_*.pb")))
    if not refs:
        print(json.dumps({"error": "no output_*.pb in " + a.ref}))
        return 2
    out, ok = [], True
    for r in refs:
        g = os.path.join(a.got, os.path.basename(r))
        if not os.path.exists(g):
            print(json.dumps({"error": "missing " + g}))
            return 2
        x, y = load(r), load(g)
        rec = {"output": os.path.basename(r), "elements": int(x.size)}
        if x.shape != y.shape or x.dtype != y.dtype:
            rec["mismatch"] = f"{x.dtype}{list(x.shape)} vs {y.dtype}{list(y.shape)}"
            ok = False
        elif x.dtype.kind == "f":
            x64, y64 = x.astype(np.float64), y.astype(np.float64)
            # Non-finite reference elements must be matched exactly (NaN by
            # NaN, an infinity by the same one); the scale and the norms
            # are those of the finite ones, so that one inf or NaN in the
            # reference neither widens nor voids the bound elsewhere.
            fin = np.isfinite(x64)
            xf, yf = np.where(fin, x64, 0.0), np.where(fin, y64, 0.0)
            scale = float(np.abs(xf).max(initial=0))
            d = np.abs(yf - xf)
            atol = a.atol + a.scale_atol * scale
            bad = fin & ~(d <= atol + a.rtol * np.abs(xf))  # NaN got: bad
            nonfin = ~fin & ~((np.isnan(x64) & np.isnan(y64)) | (x64 == y64))
            # The figures leave out the NaNs of got, which "nan" counts.
            dr = np.where(np.isnan(d), 0.0, d)
            rec.update(beyond=int(bad.sum()) + int(nonfin.sum()),
                       max_abs_diff=float(dr.max(initial=0)),
                       max_abs_ref=scale,
                       norm_rel=float(np.linalg.norm(dr) / max(np.linalg.norm(xf), 1e-30)),
                       nan=int((np.isnan(y64) & fin).sum()))
            ok = ok and rec["beyond"] == 0
        else:
            rec["beyond"] = int((x != y).sum())
            ok = ok and rec["beyond"] == 0
        out.append(rec)
    print(json.dumps({"ok": ok, "outputs": out}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
