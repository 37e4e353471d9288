#!/usr/bin/env python3
"""Writes cal-NAME.json as oomplan-run --json would on a device whose kernels
reach known efficiencies of the H200's datasheet roofline (67 TFLOP/s FP32,
989.4 bf16, 4.8 TB/s), so calibrate_profile.py's answer is known by hand:
fp32 0.5, tensor cores 0.8, memory 0.9, convolutions 0.4, depthwise 0.25
and the fused attention 0.2 of what the efficiencies before them give, 4 us
a launch.

    fake_calibration_runs.py DIR
"""
import json
import os
import sys

FP32, BF16, BW = 67e12, 989.4e12, 4.8e12
F = 4  # bytes of a float

# Predicted seconds by hand (FLOPs and bytes of utils/gpu/calibration's models).
gemm = 2 * 4096 ** 3                                    # FLOPs, 4096^3
sgemm = gemm / (FP32 * 0.5)                             # compute-bound
bgemm = gemm / (BF16 * 0.8)
add = 3 * 67108864 * F / (BW * 0.9)                     # a, b, y
transpose = 2 * 64 * 512 * 768 * F / (BW * 0.9)         # x, y
layernorm = (2 * 32768 * 768 + 2 * 768) * F / (BW * 0.9)  # x, y, scale, bias
chain = 256 * 4e-6                                      # 256 launches
conv3x3 = 2 * (32 * 256 * 56 * 56) * (256 * 9) / (FP32 * 0.5) / 0.4
conv3x3s = 2 * (8 * 512 * 7 * 7) * (512 * 9) / (FP32 * 0.5) / 0.4
conv1x1 = 2 * (32 * 256 * 14 * 14) * 1024 / (FP32 * 0.5) / 0.4
# Depthwise is memory-bound: x and y, 32*384*28*28 floats each, the
# weights 384*9.
dwconv = (2 * 32 * 384 * 28 * 28 + 384 * 9) * F / (BW * 0.9) / 0.25
dwconvs = (2 * 8 * 576 * 14 * 14 + 576 * 9) * F / (BW * 0.9) / 0.25
# Attention, fused into one OomplanAttention: 8*12*128 query rows, each over
# 128 keys of 2*64 + 2*64 + 5 FLOPs, compute-bound (its q, k, v and y move
# 4 * 8*12*128*64 floats, its scratch none): 0.2 of that.
attn = 8 * 12 * 128 * 128 * (2 * 64 + 2 * 64 + 5) / (FP32 * 0.5) / 0.2
bmm = 1e-4  # a check, sets nothing

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for name, secs in dict(sgemm=sgemm, bgemm=bgemm, add=add, transpose=transpose,
                       layernorm=layernorm, chain=chain, conv3x3=conv3x3, conv3x3s=conv3x3s,
                       conv1x1=conv1x1, dwconv=dwconv, dwconvs=dwconvs, attn=attn, bmm=bmm).items():
    with open(os.path.join(out, "cal-%s.json" % name), "w") as f:
        json.dump({"seconds": {"run": secs * 2, "steps_warm_median": secs}}, f)
