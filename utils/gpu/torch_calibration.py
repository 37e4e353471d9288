#!/usr/bin/env python3
"""PyTorch eager's own memory efficiency and per-kernel floor on a GPU, for
the cost model of training plans (which PyTorch runs, --runtime=pytorch-cuda)
beside the one of oomplan-run's kernels that utils/gpu/calibrate_profile.py
measures (docs/fitting.md). The products and convolutions are cuBLAS's and
cuDNN's in both, so their efficiencies carry over; the elementwise,
transpose and normalization kernels and the launch floor do not: oomplan-run
replays a CUDA graph of its own kernels, PyTorch launches its own one by one.

The same shapes as utils/gpu/calibration's memory-bound models and its chain:
  add        a + b over 67,108,864 floats (3 x 256 MiB moved)
  transpose  x.transpose(1, 2).contiguous(), x [64, 512, 768] (2 x 96 MiB)
  layernorm  layer_norm over [32768, 768] (2 x 96 MiB)
  chain      256 chained negations of 1,024 floats (launch-bound)
Each timed with CUDA events around the op, median of --iters after warm-ups.

    torch_calibration.py [--bandwidth-gbps 4800] [--iters 20] [--device cuda]

Prints one JSON object: each op's median seconds and its efficiency (bytes
moved / bandwidth / seconds), memory_efficiency (their geometric mean, as
calibrate_profile.py takes oomplan-run's), kernel_us (chain / 256), device.
--device cpu runs the same code without a GPU (a rehearsal of the plumbing:
its times mean nothing for a GPU).
"""
import argparse
import json
import math
import statistics
import time

import torch
import torch.nn.functional as F

CHAIN = 256


def timed(fn, dev, iters, warm=3):
    """Median seconds of fn() over iters runs, after warm-ups."""
    times = []
    for i in range(warm + iters):
        if dev.type == "cuda":
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            dt = start.elapsed_time(end) / 1e3
        else:
            t0 = time.perf_counter()
            fn()
            dt = time.perf_counter() - t0
        if i >= warm:
            times.append(dt)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bandwidth-gbps", type=float, default=4800.0,
                    help="the datasheet's memory bandwidth (H200: 4800)")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--scale", type=int, default=1,
                    help="divide the large shapes by this (a CPU rehearsal)")
    a = ap.parse_args()
    dev = torch.device(a.device)
    bw = a.bandwidth_gbps * 1e9
    n = 67108864 // a.scale
    x3 = torch.randn(64 // a.scale, 512, 768, device=dev)
    xa, xb = torch.randn(n, device=dev), torch.randn(n, device=dev)
    x2 = torch.randn(32768 // a.scale, 768, device=dev)
    w, b = torch.randn(768, device=dev), torch.randn(768, device=dev)
    small = torch.randn(1024, device=dev)

    def chain():
        t = small
        for _ in range(CHAIN):
            t = torch.neg(t)
        return t

    with torch.no_grad():
        cases = {
            "add": (lambda: torch.add(xa, xb), 3 * 4 * n),
            "transpose": (lambda: x3.transpose(1, 2).contiguous(),
                          2 * 4 * x3.numel()),
            "layernorm": (lambda: F.layer_norm(x2, (768,), w, b),
                          2 * 4 * x2.numel() + 2 * 4 * 768),
        }
        out = {"device": torch.cuda.get_device_name(dev)
               if dev.type == "cuda" else "cpu (a rehearsal)",
               "bandwidth_gbps": a.bandwidth_gbps}
        effs = []
        for name, (fn, moved) in cases.items():
            s = timed(fn, dev, a.iters)
            eff = moved / bw / s
            out[name] = {"seconds": s, "bytes": moved, "efficiency": eff}
            effs.append(eff)
        out["memory_efficiency"] = math.exp(
            sum(math.log(e) for e in effs) / len(effs))
        s = timed(chain, dev, a.iters)
        out["chain"] = {"seconds": s, "kernels": CHAIN}
        out["kernel_us"] = s / CHAIN * 1e6
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
