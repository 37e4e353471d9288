#!/usr/bin/python3
"""Runs torchvision detection exports through oomplan-run and compares the detections with PyTorch's.

What: for each model (torchvision 0.14 detection: fasterrcnn_mobilenet_v3_large_320_fpn,
fasterrcnn_resnet50_fpn, retinanet_resnet50_fpn), it
  1. builds it with random weights from a fixed seed (He's scale, so the features and scores are
     not all equal), score threshold 0 for the R-CNNs (random weights score below the default 0.05);
  2. exports it with Debian's PyTorch 1.13 (opset 13, one 3x320x320 image) and runs PyTorch on the
     same image;
  3. runs `oomplan-run MODEL --inputs-dir IN --output-dir OUT` (data-dependent sizes evaluated during
     the run, the exports' Ifs flattened: docs/runtime.md, docs/shapes.md);
  4. compares: the same number of detections; the detections (label, box to 0.1 px) found by both,
     and the largest score difference among them. With random weights many scores nearly tie, so
     the last places of a top-k cut may differ and are reported, not failed: a model fails when the
     counts differ, or fewer than 90% of the detections match and the sorted scores differ by more
     than 1e-6 (the same scores selected, tied detections ordered otherwise, passes).
Exit 0 when every model passes, 1 otherwise.

Usage: /usr/bin/python3 utils/check/check_detection_runtime.py WORKDIR [--tool PATH] [--only a,b]
       [--backend cpu|cuda|cuda-on-cpu]
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
import torchvision
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# ssdlite320_mobilenet_v3_large runs too (--only), but with random weights its scores tie across
# anchors (41 distinct values among its 300 detections: its ReLU6/hardswish saturate), so the
# per-class top-k cut, and then NMS, break ties their own way: 157 of 300 equal, their scores within
# 1.9e-9.
MODELS = ["fasterrcnn_mobilenet_v3_large_320_fpn", "fasterrcnn_resnet50_fpn",
          "retinanet_resnet50_fpn"]


def export(name, work):
    torch.manual_seed(0)
    kw = dict(box_score_thresh=0.0) if "rcnn" in name else {}
    m = getattr(torchvision.models.detection, name)(weights=None, weights_backbone=None, **kw).eval()
    with torch.no_grad():
        for p in m.parameters():
            # He's scale: smaller weights shrink the features to nothing and
            # the scores to the biases' (every anchor ties).
            if p.dim() > 1:
                p.normal_(0, (2.0 / p[0].numel()) ** 0.5)
            else:
                p.uniform_(-0.1, 0.1)
    x = torch.rand(3, 320, 320)
    d = os.path.join(work, name)
    os.makedirs(os.path.join(d, "in"), exist_ok=True)
    torch.onnx.export(m, ([x],), os.path.join(d, "model.onnx"), opset_version=13,
                      input_names=["images"])
    with torch.no_grad():
        ref = m([x])[0]
    onnx.save_tensor(numpy_helper.from_array(x.numpy(), "images"),
                     os.path.join(d, "in", "input_0.pb"))
    return d, {k: v.numpy() for k, v in ref.items()}


def ours(d, tool, backend):
    out = os.path.join(d, "out")
    r = subprocess.run([tool, os.path.join(d, "model.onnx"), "--inputs-dir", os.path.join(d, "in"),
                        "--output-dir", out, "--poison", "--backend=" + backend],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()[-300:]
    g = onnx.load(os.path.join(d, "model.onnx"), load_external_data=False).graph
    got = {}
    for i in range(len(g.output)):
        a = numpy_helper.to_array(onnx.load_tensor(os.path.join(out, f"output_{i}.pb")))
        # Outputs by kind: boxes [K, 4] float, labels int64, scores float [K].
        got["boxes" if a.ndim == 2 else "labels" if a.dtype == np.int64 else "scores"] = a
    return got, ""


def compare(a, b):
    n = len(b["scores"])
    if len(a["scores"]) != n:
        return False, f"{len(a['scores'])} detections against PyTorch's {n}"
    key = lambda bx, l: (int(l),) + tuple(np.round(bx, 1))
    ma = {key(x, l): s for x, l, s in zip(a["boxes"], a["labels"], a["scores"])}
    mb = {key(x, l): s for x, l, s in zip(b["boxes"], b["labels"], b["scores"])}
    both = ma.keys() & mb.keys()
    diff = max((abs(float(ma[k]) - float(mb[k])) for k in both), default=0.0)
    # Ties: the same scores selected, the tied detections ordered otherwise.
    sorted_diff = float(np.max(np.abs(np.sort(a["scores"]) - np.sort(b["scores"])))) if n else 0.0
    ties = len(np.unique(b["scores"]))
    ok = n == 0 or len(both) >= 0.9 * n or sorted_diff <= 1e-6
    return ok, (f"{n} detections ({ties} distinct scores), {len(both)} equal (label, box to 0.1 "
                f"px), their scores within {diff:.2e}; sorted scores within {sorted_diff:.2e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work")
    ap.add_argument("--tool", default=os.path.join(ROOT, "build", "tools", "oomplan-run", "oomplan-run"))
    ap.add_argument("--only", default="")
    ap.add_argument("--backend", default="cpu",
                    help="oomplan-run's --backend (cuda-on-cpu: the CUDA run's host steps on the CPU)")
    a = ap.parse_args()
    only = set(filter(None, a.only.split(",")))
    failed = 0
    for name in MODELS:
        if only and name not in only:
            continue
        d, ref = export(name, a.work)
        got, err = ours(d, a.tool, a.backend)
        if got is None:
            print(f"{name}: FAIL: oomplan-run: {err}")
            failed += 1
            continue
        ok, msg = compare(got, ref)
        print(f"{name}: {'pass' if ok else 'FAIL'}: {msg}")
        failed += not ok
    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
