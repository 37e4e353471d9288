#!/usr/bin/python3
"""Exports extra real PyTorch models for utils/check/compare_shapes_with_runtime.py.

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
  squeezenet, googlenet, shufflenet, efficientnet, densenet, convnext, vit, deeplabv3:
                  torchvision squeezenet1_0 (ceil_mode pools), googlenet (no aux heads),
                  shufflenet_v2_x1_0 (channel shuffle), efficientnet_b0, densenet121,
                  convnext_tiny, vit_b_16 (class token Expand + Concat), deeplabv3_mobilenet_v3_large;
                  [batch, 3, height, width] for squeezenet, shufflenet, efficientnet, convnext
                  and deeplabv3, [batch, 3, 224, 224] for the others; opsets 13 to 17

Usage:
    /usr/bin/python3 utils/export/export_runtime_check_models.py OUTDIR [NAME...]

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


def _cnn(name, make, opset, dynamic_hw=False, size=(224, 224)):
    axes = {0: "batch", 2: "height", 3: "width"} if dynamic_hw else {0: "batch"}
    out_axes = {0: "batch", 2: "height", 3: "width"} if dynamic_hw else {0: "batch"}
    return (name, make, [torch.randn(2, 3, *size)], ["input"], ["output"],
            {"input": axes, "output": out_axes}, opset)


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
    tv = torchvision.models
    yield _cnn("squeezenet", lambda: tv.squeezenet1_0(weights=None), 13, True)
    yield _cnn("googlenet", lambda: tv.googlenet(weights=None, aux_logits=False,
                                                 init_weights=False), 14)
    yield _cnn("shufflenet", lambda: tv.shufflenet_v2_x1_0(weights=None), 15, True)
    yield _cnn("efficientnet", lambda: tv.efficientnet_b0(weights=None), 16, True)
    yield _cnn("densenet", lambda: tv.densenet121(weights=None), 13)
    yield _cnn("convnext", lambda: tv.convnext_tiny(weights=None), 17, True)
    yield _cnn("vit", lambda: _random_head(tv.vit_b_16(weights=None)), 17)
    yield _cnn("deeplabv3", lambda: tv.segmentation.deeplabv3_mobilenet_v3_large(
        weights=None, weights_backbone=None, aux_loss=False), 17, True, (160, 192))


def _random_head(vit):
    """torchvision's ViT starts with a zero head, which would make every logit 0 (a comparison
    that cannot fail)."""
    with torch.no_grad():
        vit.heads.head.weight.normal_(0, 0.05)
    return vit


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
        # Gradients stay enabled: under no_grad, eval-mode nn.MultiheadAttention takes its
        # fused fast path (aten::_native_multi_head_attention), which torch 1.13 cannot export.
        torch.onnx.export(model, tuple(inputs), path, input_names=in_names,
                          output_names=out_names, dynamic_axes=axes, opset_version=opset,
                          do_constant_folding=True)
        print(f"wrote {path} (opset {opset})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
