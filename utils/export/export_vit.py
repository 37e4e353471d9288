#!/usr/bin/env python3
"""Exports torchvision's vit_b_16 (random weights, eval mode) and a bare
nn.MultiheadAttention to ONNX, to check which attention patterns the fusion
transform (lib/Transforms/FusionAttention.cpp) recognises in real exports.

Usage: /usr/bin/python3 utils/export/export_vit.py OUT_DIR
Writes OUT_DIR/vit_b_16.onnx (dynamic batch) and OUT_DIR/mha.onnx.
Needs torch 1.13 and torchvision 0.14 (not needed by any test).
"""
import os
import sys

import torch
import torchvision


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    vit = torchvision.models.vit_b_16(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    torch.onnx.export(vit, x, os.path.join(out, "vit_b_16.onnx"),
                      input_names=["x"], output_names=["logits"],
                      dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}},
                      opset_version=17)
    mha = torch.nn.MultiheadAttention(64, 4, batch_first=True).eval()
    q = torch.randn(2, 16, 64)
    torch.onnx.export(mha, (q, q, q), os.path.join(out, "mha.onnx"),
                      input_names=["q", "k", "v"], output_names=["y", "w"],
                      dynamic_axes={"q": {0: "batch", 1: "seq"},
                                    "k": {0: "batch", 1: "seq"},
                                    "v": {0: "batch", 1: "seq"}},
                      opset_version=17)


if __name__ == "__main__":
    main()
