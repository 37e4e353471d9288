#!/usr/bin/python3
"""Exports extra real PyTorch models for utils/compare_shapes_with_runtime.py.

What: writes OUTDIR/<name>.onnx for small models that are NOT in test/models/, each exported by
Debian's PyTorch (python3-torch 1.13, python3-torchvision 0.14; run with /usr/bin/python3) with
dynamic axes named "batch", "seq", "height" and "width", at opsets 13 to 17, so that the shape
analysis is checked against a run of graphs it was not developed on:

  resnet18        torchvision resnet18 (weights=None), input [batch, 3, 224, 224], opset 13
  lraspp          torchvision lraspp_mobilenet_v3_large (weights=None, segmentation:
                  Hardswish, squeeze-excite, bilinear Resize to the input size),
                  input [batch, 3, height, width], opset 16
  tiny_gpt        Embedding + positions from arange(seq) + 2 nn.TransformerEncoder layers
                  (batch_first, GELU, causal mask built from seq) + LM head, input int64
                  [batch, seq], opset 17 (LayerNormalization)
  lstm            2-layer bidirectional nn.LSTM (batch_first) + Linear, input [batch, seq, 64],
                  opset 14
  gru             2-layer nn.GRU (batch_first) with h0 from the input's batch, input
                  [batch, seq, 32], opset 15

Usage:
    /usr/bin/python3 utils/export_runtime_check_models.py OUTDIR [NAME...]

How: models are built with fixed seeds and random weights (nothing is downloaded), put in eval
mode, and exported with torch.onnx.export from dummy inputs whose dynamic sizes (batch 2, seq 16,
224x224 or 160x192) differ from the sizes the check binds, so that constant folding of a traced
size would show up as a mismatch. Weights stay inside the .onnx files (OUTDIR is scratch space;
nothing is written to the repository).
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torchvision


class TinyGPT(nn.Module):
    def __init__(self, vocab=1000, d=128, heads=4, layers=2, ff=256, max_pos=512):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_pos, d)
        layer = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        seq = ids.shape[1]
        pos = torch.arange(seq, device=ids.device).unsqueeze(0)
        x = self.tok(ids) + self.pos(pos)
        mask = torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)
        x = self.blocks(x, mask=mask)
        return self.head(self.ln(x)) / math.sqrt(x.shape[-1])


class LSTMModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(64, 96, num_layers=2, batch_first=True, bidirectional=True)
        self.out = nn.Linear(192, 10)

    def forward(self, x):
        y, (h, c) = self.rnn(x)
        return self.out(y), h, c


class GRUModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(32, 48, num_layers=2, batch_first=True)

    def forward(self, x):
        h0 = torch.zeros(2, x.shape[0], 48)
        y, h = self.rnn(x, h0)
        return y.mean(dim=1), h


def models():
    yield ("resnet18", lambda: torchvision.models.resnet18(weights=None),
           [torch.randn(2, 3, 224, 224)], ["input"], ["output"],
           {"input": {0: "batch"}, "output": {0: "batch"}}, 13)
    yield ("lraspp", lambda: torchvision.models.segmentation.lraspp_mobilenet_v3_large(
               weights=None, weights_backbone=None),
           [torch.randn(2, 3, 160, 192)], ["input"], ["out"],
           {"input": {0: "batch", 2: "height", 3: "width"},
            "out": {0: "batch", 2: "height", 3: "width"}}, 16)
    yield ("tiny_gpt", TinyGPT, [torch.randint(0, 1000, (2, 16))], ["input_ids"], ["logits"],
           {"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}, 17)
    yield ("lstm", LSTMModel, [torch.randn(2, 16, 64)], ["x"], ["y", "h", "c"],
           {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}, "h": {1: "batch"},
            "c": {1: "batch"}}, 14)
    yield ("gru", GRUModel, [torch.randn(2, 16, 32)], ["x"], ["y", "h"],
           {"x": {0: "batch", 1: "seq"}, "y": {0: "batch"}, "h": {1: "batch"}}, 15)


class _Wrap(nn.Module):
    """Segmentation models return a dict; export its 'out' tensor."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        r = self.m(x)
        return r["out"] if isinstance(r, dict) else r


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    outdir, only = sys.argv[1], set(sys.argv[2:])
    os.makedirs(outdir, exist_ok=True)
    for i, (name, make, inputs, in_names, out_names, axes, opset) in enumerate(models()):
        if only and name not in only:
            continue
        torch.manual_seed(1234 + i)
        model = _Wrap(make()).eval()
        path = os.path.join(outdir, f"{name}.onnx")
        with torch.no_grad():
            torch.onnx.export(model, tuple(inputs), path, input_names=in_names,
                              output_names=out_names, dynamic_axes=axes, opset_version=opset,
                              do_constant_folding=True)
        print(f"wrote {path} (opset {opset})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
