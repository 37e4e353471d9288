#!/usr/bin/env python3
"""PyTorch eager latency of the four test models on a GPU, as oomplan-run's
warm run measures its own: inputs from host memory, outputs back to host
memory, the median of timed runs after warm-ups. FP32 with TF32 off (the
CUDA backend runs full FP32: cuBLAS default math with FP32 compute, cuDNN FMA math), eval
mode, no autograd. The architectures are the ones test/models was exported
from (utils/export/definitions.py; torchvision for the CNNs), with random weights.

Usage: torch_eager_latency.py MODEL --batch N [--seq S] [--iters 20]
Prints one JSON object: model, batch, seq, median_s, min_s, device.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "export"))
from definitions import BertLike, GPTLike  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model",
                    choices=["resnet50", "mobilenet_v2", "bert_like", "gpt_like"])
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warm", type=int, default=5)
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    torch.manual_seed(0)
    if a.model in ("resnet50", "mobilenet_v2"):
        m = getattr(torchvision.models, a.model)(weights=None)
        inputs = (torch.randn(a.batch, 3, 224, 224),)
    elif a.model == "bert_like":
        m = BertLike()
        inputs = (torch.randint(0, 30522, (a.batch, a.seq)),
                  torch.ones(a.batch, a.seq, dtype=torch.int64))
    else:
        m = GPTLike()
        inputs = (torch.randint(0, 50257, (a.batch, a.seq)),)
    m = m.eval().to(dev)
    times = []
    with torch.no_grad():
        for i in range(a.warm + a.iters):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            out = m(*[x.to(dev) for x in inputs])
            outs = out if isinstance(out, tuple) else (out,)
            host = [o.cpu() for o in outs]  # synchronizes
            dt = time.perf_counter() - t0
            if i >= a.warm:
                times.append(dt)
    del host
    print(json.dumps({"model": a.model, "batch": a.batch, "seq": a.seq,
                      "median_s": statistics.median(times), "min_s": min(times),
                      "device": torch.cuda.get_device_name(0),
                      "torch": torch.__version__}))


if __name__ == "__main__":
    main()
