#!/usr/bin/python3
"""Runs exports oomplan was not developed on through oomplan-run and compares the outputs with PyTorch's.

What: for each model below (torchvision 0.14 and small modules of our own that exercise ops the test
models lack: ConvTranspose 2-D/3-D, Conv1d, Conv3d, GroupNorm, InstanceNorm, PReLU, Mish/ELU/SELU/
Softplus/Softsign/Hardtanh, pixel_shuffle/unshuffle, nearest/trilinear/bicubic Resize, TopK, CumSum,
ArgMax, Trilu, Einsum, a T5 relative-position bias, GridSample, Loop and sequences), it
  1. exports the model with Debian's PyTorch 1.13 (random weights from a fixed seed, dynamic axes)
     from dummy inputs of one size;
  2. runs PyTorch on inputs of another size and writes them as input_<i>.pb / the outputs as the
     reference, and runs the same model in float64 (ref64/, where PyTorch can);
  3. runs `oomplan-run MODEL --inputs-dir IN --output-dir OUT --poison --check=unplanned` (the input
     files bind the dynamic dims) and compares every output: |ours - ref| <= 1e-4 + 1e-3 |ref|, ref
     the float64 run's output where there is one (both fp32 runs approximate it; PyTorch's own
     rounding is not our error), else PyTorch's fp32 one; integers exactly;
  4. plans the model with `oomplan MODEL --batch 4` plus the other dims it needs.
Exit 0 when every model passes, 1 otherwise.

Usage (Debian's interpreter: python3-torch, python3-torchvision):
    /usr/bin/python3 utils/check/check_unseen_runtime.py WORKDIR [--tool build/tools/oomplan-run/oomplan-run]
        [--only unet,swin_t] [--extended] [--export-only] [--backend cpu|cuda|cuda-on-cpu]
--backend cuda-on-cpu rehearses the CUDA run on the CPU: the ops CUDA lacks run as host steps, which
the report lists per model (docs/cuda.md).
"""
import argparse
import copy
import math
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from onnx import numpy_helper
import torchvision.ops as tvops
from torchvision.models.detection._utils import _topk_min

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import unseen_arch as ua  # noqa: E402

tv = torchvision.models
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class UNet(nn.Module):
    def __init__(s, c=16):
        super().__init__()
        def blk(i, o): return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(), nn.Conv2d(o, o, 3, padding=1), nn.ReLU())
        s.d1, s.d2, s.d3 = blk(3, c), blk(c, 2*c), blk(2*c, 4*c)
        s.u2 = nn.ConvTranspose2d(4*c, 2*c, 2, stride=2); s.c2 = blk(4*c, 2*c)
        s.u1 = nn.ConvTranspose2d(2*c, c, 2, stride=2); s.c1 = blk(2*c, c)
        s.out = nn.Conv2d(c, 2, 1)
    def forward(s, x):
        a = s.d1(x); b = s.d2(F.max_pool2d(a, 2)); c = s.d3(F.max_pool2d(b, 2))
        y = s.c2(torch.cat([s.u2(c), b], 1)); y = s.c1(torch.cat([s.u1(y), a], 1))
        return torch.sigmoid(s.out(y))

class DCGAN(nn.Module):
    def __init__(s, nz=64, ngf=16):
        super().__init__()
        s.m = nn.Sequential(nn.ConvTranspose2d(nz, ngf*8, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf*8), nn.ReLU(True),
            nn.ConvTranspose2d(ngf*8, ngf*4, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf*4), nn.ReLU(True),
            nn.ConvTranspose2d(ngf*4, ngf*2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf*2), nn.LeakyReLU(0.2),
            nn.ConvTranspose2d(ngf*2, 3, 4, 2, 1, bias=False), nn.Tanh())
    def forward(s, z): return s.m(z)

class WhisperLike(nn.Module):
    def __init__(s, n_mels=40, d=64):
        super().__init__()
        s.c1 = nn.Conv1d(n_mels, d, 3, padding=1); s.c2 = nn.Conv1d(d, d, 3, stride=2, padding=1)
        layer = nn.TransformerEncoderLayer(d, 4, 128, dropout=0.0, activation="gelu", batch_first=True, norm_first=True)
        s.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False); s.ln = nn.LayerNorm(d)
    def forward(s, x):
        x = F.gelu(s.c1(x)); x = F.gelu(s.c2(x)).permute(0, 2, 1)
        return s.ln(s.enc(x))

class T5Attn(nn.Module):
    def __init__(s, d=64, h=4, nb=32, maxd=128):
        super().__init__()
        s.h, s.nb, s.maxd = h, nb, maxd
        s.q, s.k, s.v, s.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        s.rel = nn.Embedding(nb, h); s.ln = nn.LayerNorm(d)
        s.ff = nn.Sequential(nn.Linear(d, 4*d), nn.ReLU(), nn.Linear(4*d, d))
    def bucket(s, rp):
        nb = s.nb // 2
        ret = (rp > 0).to(torch.long) * nb
        n = torch.abs(rp)
        me = nb // 2
        small = n < me
        large = me + (torch.log(n.float() / me) / math.log(s.maxd / me) * (nb - me)).to(torch.long)
        large = torch.min(large, torch.full_like(large, nb - 1))
        return ret + torch.where(small, n, large)
    def forward(s, x, mask):
        B, L, D = x.shape
        q = s.q(x).view(B, L, s.h, -1); k = s.k(x).view(B, L, s.h, -1); v = s.v(x).view(B, L, s.h, -1)
        sc = torch.einsum("bqhd,bkhd->bhqk", q, k)
        pos = torch.arange(L)
        rp = pos[None, :] - pos[:, None]
        bias = s.rel(s.bucket(rp)).permute(2, 0, 1).unsqueeze(0)
        sc = sc + bias
        sc = sc.masked_fill(mask[:, None, None, :] == 0, float("-inf"))
        a = torch.softmax(sc, -1)
        y = torch.einsum("bhqk,bkhd->bqhd", a, v).reshape(B, L, D)
        y = s.ln(x + s.o(y))
        return y + s.ff(y)

class NormZoo(nn.Module):
    def __init__(s):
        super().__init__()
        s.c = nn.Conv2d(3, 32, 3, padding=1, dilation=1); s.gn = nn.GroupNorm(8, 32)
        s.c2 = nn.Conv2d(32, 32, 3, padding=2, dilation=2); s.inn = nn.InstanceNorm2d(32, affine=True)
        s.ps = nn.Conv2d(32, 12, 1); s.pr = nn.PReLU(32)
    def forward(s, x):
        y = F.silu(s.gn(s.c(x)))
        y = F.interpolate(y, scale_factor=2, mode="nearest")
        y = F.mish(s.inn(s.c2(y))) + F.elu(y) + F.softplus(y) * 0.1 + F.selu(y) * 0.01
        y = s.pr(y)
        y = F.avg_pool2d(y, 3, stride=2, padding=1, count_include_pad=False, ceil_mode=True)
        y = F.pixel_shuffle(s.ps(y), 2)
        return F.leaky_relu(y, 0.1) + F.softsign(y) + F.hardtanh(y, -0.5, 0.5)

class TopKZoo(nn.Module):
    def __init__(s):
        super().__init__(); s.l = nn.Linear(32, 32)
    def forward(s, x):
        y = s.l(x)
        v, i = torch.topk(y, 4, dim=-1)
        c = torch.cumsum(y, dim=1)
        am = torch.argmax(y, dim=-1)
        mx = torch.amax(y, dim=1)
        return v, i, c, am, mx, torch.log_softmax(y, -1)

class STN(nn.Module):
    def __init__(s):
        super().__init__(); s.loc = nn.Sequential(nn.Conv2d(3, 8, 5, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 6))
        s.conv = nn.Conv2d(3, 4, 3, padding=1)
    def forward(s, x):
        h, w = x.shape[2], x.shape[3]
        ys = torch.linspace(-1, 1, 32).view(32, 1).expand(32, 32)
        xs = torch.linspace(-1, 1, 32).view(1, 32).expand(32, 32)
        base = torch.stack([xs, ys], -1).unsqueeze(0)
        off = s.loc(x).view(-1, 1, 1, 6)[..., :2] * 0.1
        y = F.grid_sample(x, base + off, align_corners=False)
        return s.conv(y)
class Misc(nn.Module):
    def __init__(s):
        super().__init__(); s.c = nn.Conv3d(2, 4, 3, padding=1); s.ct = nn.ConvTranspose3d(4, 2, 2, stride=2); s.inn = nn.InstanceNorm3d(4, affine=True)
    def forward(s, x):
        y = s.inn(s.c(x))
        y = F.interpolate(y, scale_factor=2, mode="trilinear", align_corners=False)
        z = s.ct(F.max_pool3d(y, 2))
        w = F.pixel_unshuffle(z.flatten(1, 2), 2)
        b = F.interpolate(w, scale_factor=1.5, mode="bicubic", align_corners=False)
        return b, torch.cumsum(b, dim=1), b.argmax(dim=1), torch.tril(b[:, 0])
class DetectPost(nn.Module):
    # torchvision's detection post-processing, data-dependent end to end:
    # candidates above a score threshold (NonZero), the best min(50, count)
    # of them (TopK with k from ReduceMin), batched NMS (an If on "no box
    # left?", NonMaxSuppression with INT64_MAX boxes per class), the kept
    # boxes gathered. Random scores and boxes: no ties to break.
    def forward(s, boxes, scores, labels):
        idx = torch.where(scores > 0.3)[0]
        sc, bx, lb = scores[idx], boxes[idx], labels[idx]
        k = _topk_min(sc, 50, 0)
        v, i = sc.topk(k)
        keep = tvops.batched_nms(bx[i], v, lb[i], 0.5)
        return bx[i][keep], v[keep], lb[i][keep]


@torch.jit.script_if_tracing
def _grow(x: torch.Tensor) -> torch.Tensor:
    # A scripted loop of constant count whose carried value grows by a
    # Concat each time (as torchvision's mask pasting does, with a count
    # known here): a Loop with a carried tensor of three shapes.
    res = torch.zeros(0, x.size(2))
    for i in range(3):
        res = torch.cat((res, x[:, i] * float(i + 1)))
    return res


class LoopZoo(nn.Module):
    """torch.tensor_split (exported as a Loop building a sequence, as
    torchvision's MViT does), torch.split with a list, a scripted loop."""
    def __init__(s):
        super().__init__()
        s.l = nn.Linear(8, 8)

    def forward(s, x):
        cls, rest = torch.tensor_split(s.l(x), (1,), dim=1)
        parts = torch.split(rest, [2, 3], dim=1)
        return cls * 2, _grow(rest), parts[1].sum(1)


def random_boxes(n, g):
    xy = torch.rand(n, 2, generator=g) * 20  # dense: NMS suppresses some
    return torch.cat([xy, xy + 1 + torch.rand(n, 2, generator=g) * 30], dim=1)


def cnn(name, make, opset, size, dyn_hw, test_size):
    axes = {0: "batch", 2: "height", 3: "width"} if dyn_hw else {0: "batch"}
    return dict(name=name, make=make, opset=opset, inputs=[torch.randn(2, 3, *size)], in_names=["input"],
                plan=["--dim", "height=96", "--dim", "width=96"] if dyn_hw else [],
                out_names=["output"], axes={"input": axes, "output": axes if dyn_hw else {0: "batch"}},
                test=[torch.randn(3, 3, *test_size)])

def models():
    yield dict(name="unet", plan=["--dim", "h=64", "--dim", "w=64"], make=UNet, opset=13, inputs=[torch.randn(2, 3, 64, 80)], in_names=["x"], out_names=["y"],
               axes={"x": {0: "batch", 2: "h", 3: "w"}, "y": {0: "batch", 2: "h", 3: "w"}}, test=[torch.randn(3, 3, 48, 96)])
    yield dict(name="dcgan", make=DCGAN, opset=13, inputs=[torch.randn(2, 64, 1, 1)], in_names=["z"], out_names=["img"],
               axes={"z": {0: "batch"}, "img": {0: "batch"}}, test=[torch.randn(5, 64, 1, 1)])
    yield dict(name="whisper_like", plan=["--dim", "frames=100"], make=WhisperLike, opset=17, inputs=[torch.randn(2, 40, 32)], in_names=["mel"], out_names=["h"],
               axes={"mel": {0: "batch", 2: "frames"}, "h": {0: "batch", 1: "t"}}, test=[torch.randn(3, 40, 50)])
    m = torch.ones(2, 12, dtype=torch.long); m[1, 9:] = 0
    mt = torch.ones(3, 20, dtype=torch.long); mt[2, 13:] = 0
    yield dict(name="t5_attn", plan=["--seq", "32"], make=T5Attn, opset=14, inputs=[torch.randn(2, 12, 64), m], in_names=["x", "mask"], out_names=["y"],
               axes={"x": {0: "batch", 1: "seq"}, "mask": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}, test=[torch.randn(3, 20, 64), mt])
    yield dict(name="normzoo", plan=["--dim", "h=32", "--dim", "w=32"], make=NormZoo, opset=13, inputs=[torch.randn(2, 3, 20, 24)], in_names=["x"], out_names=["y"],
               axes={"x": {0: "batch", 2: "h", 3: "w"}, "y": {0: "batch", 2: "h2", 3: "w2"}}, test=[torch.randn(3, 3, 17, 30)])
    yield dict(name="topkzoo", plan=["--seq", "16"], make=TopKZoo, opset=13, inputs=[torch.randn(2, 10, 32)], in_names=["x"],
               out_names=["v", "i", "c", "am", "mx", "ls"], axes={"x": {0: "batch", 1: "seq"}}, test=[torch.randn(3, 7, 32)])
    yield cnn("resnext", lambda: tv.resnext50_32x4d(weights=None), 13, (96, 96), True, (64, 80))
    yield cnn("regnet", lambda: tv.regnet_y_400mf(weights=None), 13, (96, 96), True, (64, 96))
    yield cnn("mnasnet", lambda: tv.mnasnet0_5(weights=None), 13, (96, 96), True, (64, 96))
    yield cnn("mobilenet_v3_small", lambda: tv.mobilenet_v3_small(weights=None), 14, (96, 96), True, (64, 96))
    yield cnn("inception_v3", lambda: tv.inception_v3(weights=None, aux_logits=False, init_weights=False), 13, (299, 299), False, (299, 299))
    yield cnn("alexnet", lambda: tv.alexnet(weights=None), 13, (224, 224), False, (224, 224))
    yield cnn("swin_t", lambda: tv.swin_t(weights=None), 17, (224, 224), False, (224, 224))
    yield dict(name="r3d_18", make=lambda: tv.video.r3d_18(weights=None), opset=13, inputs=[torch.randn(2, 3, 8, 64, 64)],
               in_names=["clip"], out_names=["logits"], axes={"clip": {0: "batch"}, "logits": {0: "batch"}}, test=[torch.randn(3, 3, 8, 64, 64)])
    yield cnn("efficientnet_v2", lambda: tv.efficientnet_v2_s(weights=None), 17, (96, 96), True, (64, 96))
    yield cnn("wide_resnet", lambda: tv.wide_resnet50_2(weights=None), 13, (64, 64), False, (64, 64))


def detect_post():
    g = torch.Generator().manual_seed(7)
    mk = lambda n: [random_boxes(n, g), torch.rand(n, generator=g),
                    torch.randint(0, 3, (n,), generator=g)]
    n = {0: "n"}
    return dict(name="detect_post", make=DetectPost, opset=13, inputs=mk(200),
                in_names=["boxes", "scores", "labels"], out_names=["b", "s", "l"],
                axes={"boxes": n, "scores": n, "labels": n, "b": {0: "k"}, "s": {0: "k"},
                      "l": {0: "k"}}, test=mk(300))


def models_more():
    yield detect_post()
    yield dict(name="stn", make=STN, opset=16, inputs=[torch.randn(2, 3, 32, 32)], in_names=["x"],
               out_names=["y"], axes={"x": {0: "b"}, "y": {0: "b"}}, test=[torch.randn(3, 3, 32, 32)])
    yield dict(name="loopzoo", make=LoopZoo, opset=16, inputs=[torch.randn(2, 6, 8)], in_names=["x"],
               out_names=["c", "g", "p"], axes={"x": {0: "b"}, "c": {0: "b"}, "g": {0: "n"}, "p": {0: "b"}},
               test=[torch.randn(3, 6, 8)])
    yield dict(name="misc3d", make=Misc, opset=16, inputs=[torch.randn(2, 2, 4, 8, 8)], in_names=["x"],
               out_names=["b", "c", "a", "t"], axes={"x": {0: "b"}}, test=[torch.randn(3, 2, 4, 8, 8)])


class LSTMTagger(nn.Module):
    def __init__(s):
        super().__init__(); s.e = nn.Embedding(100, 32); s.l = nn.LSTM(32, 48, num_layers=2, bidirectional=True, batch_first=True); s.o = nn.Linear(96, 7)
    def forward(s, x): return F.log_softmax(s.o(s.l(s.e(x))[0]), -1)
class GRUEnc(nn.Module):
    def __init__(s):
        super().__init__(); s.g = nn.GRU(16, 24, num_layers=1); s.o = nn.Linear(24, 3)
    def forward(s, x): y, h = s.g(x); return s.o(y), h
class TorchTE(nn.Module):
    def __init__(s):
        super().__init__(); l = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True, norm_first=True, activation="gelu"); s.t = nn.TransformerEncoder(l, 2, enable_nested_tensor=False)
    def forward(s, x, m): return s.t(x, src_key_padding_mask=m)
class MHA(nn.Module):
    def __init__(s):
        super().__init__(); s.a = nn.MultiheadAttention(32, 4, batch_first=True)
    def forward(s, q, k): return s.a(q, k, k, need_weights=True)
class Seg(nn.Module):
    def __init__(s, m): super().__init__(); s.m = m
    def forward(s, x): return s.m(x)["out"]

class KVDecoder(nn.Module):
    """One decoding step of a GPT-style decoder with a KV cache: past keys and values of dynamic
    length are concatenated with the new tokens' (as a serving loop feeds them), causal mask offset
    by the past length, the new cache returned."""
    def __init__(s, d=64, h=4, layers=2, vocab=500):
        super().__init__()
        s.h, s.dh = h, d // h
        s.emb = nn.Embedding(vocab, d)
        s.qkv = nn.ModuleList([nn.Linear(d, 3 * d) for _ in range(layers)])
        s.proj = nn.ModuleList([nn.Linear(d, d) for _ in range(layers)])
        s.ln = nn.ModuleList([nn.LayerNorm(d) for _ in range(layers)])
        s.mlp = nn.ModuleList([nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d)) for _ in range(layers)])
        s.head = nn.Linear(d, vocab)

    def forward(s, ids, past_k, past_v):
        # past_k, past_v: [layers, batch, heads, past, dh]
        x = s.emb(ids)
        b, t = ids.shape
        ks, vs = [], []
        for i in range(len(s.qkv)):
            q, k, v = s.qkv[i](s.ln[i](x)).split(x.shape[-1], dim=-1)
            q, k, v = (z.reshape(b, t, s.h, s.dh).transpose(1, 2) for z in (q, k, v))
            k = torch.cat([past_k[i], k], dim=2)
            v = torch.cat([past_v[i], v], dim=2)
            ks.append(k); vs.append(v)
            p = past_k.shape[3]
            a = q @ k.transpose(-1, -2) / math.sqrt(s.dh)
            qi = torch.arange(t).unsqueeze(1) + p
            ki = torch.arange(p + t).unsqueeze(0)
            a = a.masked_fill(ki > qi, float("-inf")).softmax(-1)
            x = x + s.proj[i]((a @ v).transpose(1, 2).reshape(b, t, -1))
            x = x + s.mlp[i](x)
        return s.head(x), torch.stack(ks), torch.stack(vs)


def random_head(vit):
    """torchvision's ViT starts with a zero head: every logit would be 0, whatever the body computes."""
    with torch.no_grad():
        vit.heads.head.weight.normal_(0, 0.05)
    return vit


def models_extended():
    """--extended: more exports (and MViT, which needed Loop
    and sequences); slower, so not in the default list."""
    yield cnn("mobilenet_v2", lambda: tv.mobilenet_v2(weights=None), 13, (96, 96), True, (64, 96))
    yield cnn("regnet_x", lambda: tv.regnet_x_400mf(weights=None), 13, (96, 96), True, (64, 96))
    yield cnn("vit_b_32", lambda: random_head(tv.vit_b_32(weights=None)), 17, (224, 224), False, (224, 224))
    yield cnn("fcn", lambda: Seg(tv.segmentation.fcn_resnet50(weights=None, weights_backbone=None, aux_loss=False)),
              13, (96, 96), True, (64, 96))
    yield cnn("vgg11_bn", lambda: tv.vgg11_bn(weights=None), 13, (224, 224), False, (224, 224))
    yield cnn("googlenet", lambda: tv.googlenet(weights=None, aux_logits=False, init_weights=True), 13, (96, 96),
              True, (64, 96))
    yield cnn("shufflenet05", lambda: tv.shufflenet_v2_x0_5(weights=None), 13, (96, 96), True, (64, 96))
    yield cnn("convnext_small", lambda: tv.convnext_small(weights=None), 17, (64, 64), True, (64, 96))
    yield cnn("efficientnet_b3", lambda: tv.efficientnet_b3(weights=None), 13, (96, 96), True, (64, 96))
    yield cnn("deeplab_r50", lambda: Seg(tv.segmentation.deeplabv3_resnet50(weights=None, weights_backbone=None,
                                                                            aux_loss=False)), 13, (96, 96), True, (64, 96))
    yield cnn("densenet161", lambda: tv.densenet161(weights=None), 13, (64, 64), True, (64, 96))
    for name, make in (("mc3_18", tv.video.mc3_18), ("r2plus1d", tv.video.r2plus1d_18)):
        yield dict(name=name, make=lambda make=make: make(weights=None), opset=13, inputs=[torch.randn(2, 3, 8, 64, 64)],
                   in_names=["clip"], out_names=["logits"], axes={"clip": {0: "batch"}, "logits": {0: "batch"}},
                   test=[torch.randn(3, 3, 8, 64, 64)])
    yield dict(name="lstm_tagger", plan=["--seq", "20"], make=LSTMTagger, opset=13, inputs=[torch.randint(0, 100, (2, 9))],
               in_names=["ids"], out_names=["y"], axes={"ids": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}},
               test=[torch.randint(0, 100, (3, 14))])
    yield dict(name="gru_enc", plan=["--seq", "20"], make=GRUEnc, opset=13, inputs=[torch.randn(9, 2, 16)], in_names=["x"],
               out_names=["y", "h"], axes={"x": {0: "seq", 1: "batch"}, "y": {0: "seq", 1: "batch"}, "h": {1: "batch"}},
               test=[torch.randn(14, 3, 16)])
    m = torch.zeros(2, 12, dtype=torch.bool); m[1, 9:] = True
    mt = torch.zeros(3, 20, dtype=torch.bool); mt[2, 13:] = True
    yield dict(name="torch_te", plan=["--seq", "32"], make=TorchTE, opset=14, inputs=[torch.randn(2, 12, 64), m],
               in_names=["x", "mask"], out_names=["y"],
               axes={"x": {0: "batch", 1: "seq"}, "mask": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}},
               test=[torch.randn(3, 20, 64), mt])
    yield dict(name="mha", plan=["--dim", "lq=8", "--dim", "lk=16"], make=MHA, opset=14,
               inputs=[torch.randn(2, 5, 32), torch.randn(2, 7, 32)], in_names=["q", "k"], out_names=["y", "w"],
               axes={"q": {0: "batch", 1: "lq"}, "k": {0: "batch", 1: "lk"}, "y": {0: "batch", 1: "lq"},
                     "w": {0: "batch", 1: "lq", 2: "lk"}}, test=[torch.randn(3, 6, 32), torch.randn(3, 11, 32)])
    kv = {0: "layers", 1: "batch", 3: "past"}
    yield dict(name="kv_decoder", plan=["--dim", "past=128", "--dim", "layers=2", "--seq", "1"], make=KVDecoder, opset=14,
               inputs=[torch.randint(0, 500, (2, 3)), torch.randn(2, 2, 4, 5, 16), torch.randn(2, 2, 4, 5, 16)],
               in_names=["ids", "past_k", "past_v"], out_names=["logits", "k", "v"],
               axes={"ids": {0: "batch", 1: "seq"}, "past_k": kv, "past_v": kv, "logits": {0: "batch", 1: "seq"},
                     "k": {1: "batch", 3: "total"}, "v": {1: "batch", 3: "total"}},
               test=[torch.randint(0, 500, (3, 1)), torch.randn(2, 3, 4, 9, 16), torch.randn(2, 3, 4, 9, 16)])
    # 51 Loops (torch.tensor_split) building sequences; fixed 16 x 224 x 224 input. Every tensor in an
    # allocation of its own would not fit this machine's memory, so no --check=unplanned.
    yield dict(name="mvit_v2_s", make=lambda: tv.video.mvit_v2_s(weights=None), opset=17,
               inputs=[torch.randn(1, 3, 16, 224, 224)], in_names=["clip"], out_names=["logits"],
               axes={"clip": {0: "batch"}, "logits": {0: "batch"}}, test=[torch.randn(1, 3, 16, 224, 224)],
               run=["--poison"])


def models_new():
    """Architectures the lists above lack (utils/check/unseen_arch.py), and torchvision's
    SqueezeNet (ceil_mode pools) and detection-free segmentation heads."""
    ids = lambda b, t, g: torch.randint(0, 200, (b, t), generator=g)
    g = torch.Generator().manual_seed(3)
    yield dict(name="llama_like", plan=["--seq", "64"], make=ua.LlamaLike, opset=14, inputs=[ids(2, 9, g)],
               in_names=["ids"], out_names=["logits"], axes={"ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}},
               test=[ids(3, 13, g)])
    yield dict(name="clip_text", plan=["--seq", "32"], make=ua.ClipText, opset=14, inputs=[ids(2, 9, g)],
               in_names=["ids"], out_names=["f"], axes={"ids": {0: "batch", 1: "seq"}, "f": {0: "batch"}},
               test=[ids(3, 13, g)])
    yield dict(name="diffusion_block", plan=["--dim", "h=32", "--dim", "w=32", "--dim", "ctx=16"],
               make=ua.DiffusionBlock, opset=14,
               inputs=[torch.randn(2, 4, 16, 16), torch.tensor([3, 500]), torch.randn(2, 7, 48)],
               in_names=["x", "t", "ctx"], out_names=["y"],
               axes={"x": {0: "batch", 2: "h", 3: "w"}, "t": {0: "batch"}, "ctx": {0: "batch", 1: "ctx"},
                     "y": {0: "batch", 2: "h", 3: "w"}},
               test=[torch.randn(3, 4, 24, 16), torch.tensor([1, 250, 999]), torch.randn(3, 5, 48)])
    yield cnn("yolo_head", ua.YoloHead, 14, (64, 64), True, (96, 64))
    yield dict(name="moe", plan=["--seq", "16"], make=ua.MoE, opset=14, inputs=[torch.randn(2, 5, 32)], in_names=["x"],
               out_names=["y", "gate"], axes={"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"},
                                             "gate": {0: "batch", 1: "seq"}}, test=[torch.randn(3, 7, 32)])
    yield dict(name="torch_td", plan=["--seq", "16", "--dim", "mem=24"], make=ua.TorchTD, opset=14,
               inputs=[torch.randn(2, 5, 64), torch.randn(2, 7, 64)], in_names=["tgt", "mem"], out_names=["y"],
               axes={"tgt": {0: "batch", 1: "seq"}, "mem": {0: "batch", 1: "mem"}, "y": {0: "batch", 1: "seq"}},
               test=[torch.randn(3, 6, 64), torch.randn(3, 11, 64)])
    yield cnn("squeezenet", lambda: tv.squeezenet1_1(weights=None), 13, (96, 96), True, (67, 97))
    yield cnn("lraspp", lambda: Seg(tv.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None)),
              14, (96, 96), True, (64, 96))


def export(m, out):
    torch.manual_seed(4321 + m["seed"])
    model = m["make"]().eval()
    with torch.no_grad():  # non-trivial running statistics
        for p in model.modules():
            if isinstance(p, (nn.BatchNorm2d, nn.BatchNorm3d)):
                p.running_mean.uniform_(-0.2, 0.2)
                p.running_var.uniform_(0.5, 1.5)
    d = os.path.join(out, m["name"])
    os.makedirs(os.path.join(d, "in"), exist_ok=True)
    os.makedirs(os.path.join(d, "ref"), exist_ok=True)
    torch.onnx.export(model, tuple(m["inputs"]), os.path.join(d, "model.onnx"),
                      input_names=m["in_names"], output_names=m["out_names"],
                      dynamic_axes=m["axes"], opset_version=m["opset"])
    with torch.no_grad():
        r = model(*m["test"])
    r = r if isinstance(r, (tuple, list)) else (r,)
    for k, t in enumerate(m["test"]):
        onnx.save_tensor(numpy_helper.from_array(t.numpy(), m["in_names"][k]),
                         os.path.join(d, "in", f"input_{k}.pb"))
    for k, t in enumerate(r):
        onnx.save_tensor(numpy_helper.from_array(t.numpy()), os.path.join(d, "ref", f"output_{k}.pb"))
    # The same model in float64: the answer both fp32 runs approximate. Where
    # it runs, our outputs are held to it, so that PyTorch's own fp32
    # rounding (fcn_resnet50: 1.7e-4 from it, where ours is 1.0e-4) is not
    # counted against us.
    shutil.rmtree(os.path.join(d, "ref64"), ignore_errors=True)
    try:
        model64 = copy.deepcopy(model).double()
        test64 = [t.double() if t.is_floating_point() else t for t in m["test"]]
        with torch.no_grad():
            r64 = model64(*test64)
        r64 = r64 if isinstance(r64, (tuple, list)) else (r64,)
        os.makedirs(os.path.join(d, "ref64"), exist_ok=True)
        for k, t in enumerate(r64):
            onnx.save_tensor(numpy_helper.from_array(t.numpy()),
                             os.path.join(d, "ref64", f"output_{k}.pb"))
    except Exception as e:  # an op without a float64 kernel: the fp32 reference alone
        print(f"{m['name']}: no float64 reference ({type(e).__name__}: {str(e)[:120]})")
    return d


def load(d):
    out, i = [], 0
    while os.path.exists(os.path.join(d, f"output_{i}.pb")):
        out.append(numpy_helper.to_array(onnx.load_tensor(os.path.join(d, f"output_{i}.pb"))))
        i += 1
    return out


def compare(ours, ref, ref64=None):
    """Ours against PyTorch's fp32 outputs (ref), floats within 1e-4 + 1e-3 |ref|; where a float64
    run's outputs (ref64) exist, a float output is held to those instead, with the same tolerance."""
    msgs, ok = [], len(ours) == len(ref)
    for k, (a, b) in enumerate(zip(ours, ref)):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False, [f"output {k}: {a.dtype}{list(a.shape)} against {b.dtype}{list(b.shape)}"]
        if a.dtype.kind in "iub":
            bad = int((a != b).sum())
        else:
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            exact = ref64[k] if ref64 and k < len(ref64) and ref64[k].shape == a.shape else None
            t = b64 if exact is None else exact.astype(np.float64)
            bad = int((np.abs(a64 - t) > 1e-4 + 1e-3 * np.abs(t)).sum()) + int(np.isnan(a64).sum())
            msgs.append(f"output {k} max |diff| {np.max(np.abs(a64 - b64)) if a64.size else 0:.2e}"
                        + ("" if exact is None else
                           f" (float64: ours {np.max(np.abs(a64 - t)) if a64.size else 0:.2e},"
                           f" PyTorch fp32 {np.max(np.abs(b64 - t)) if a64.size else 0:.2e})"))
        ok = ok and bad == 0
        if bad:
            msgs.append(f"output {k}: {bad} values differ")
    return ok, msgs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work")
    ap.add_argument("--tool", default=os.path.join(ROOT, "build", "tools", "oomplan-run", "oomplan-run"))
    ap.add_argument("--planner", default=os.path.join(ROOT, "build", "tools", "oomplan", "oomplan"))
    ap.add_argument("--only", default="")
    ap.add_argument("--extended", action="store_true", help="also the slower models_extended()")
    ap.add_argument("--backend", default="cpu",
                    help="oomplan-run's --backend (cuda-on-cpu: the CUDA run's host steps on the CPU)")
    ap.add_argument("--export-only", action="store_true",
                    help="only export WORK/NAME/{model.onnx,in,ref} (utils/gpu/gpu-bundle.sh carries them)")
    a = ap.parse_args()
    only = set(filter(None, a.only.split(",")))
    failed = 0
    extended = list(models_extended()) if a.extended else []
    for i, m in enumerate(list(models()) + list(models_more()) + list(models_new()) + extended):
        m["seed"] = i
        if only and m["name"] not in only:
            continue
        d = export(m, a.work)
        if a.export_only:
            print(f"{m['name']}: exported to {d}")
            continue
        mp, out = os.path.join(d, "model.onnx"), os.path.join(d, "out")
        r = subprocess.run([a.tool, mp, "--inputs-dir", os.path.join(d, "in"), "--output-dir", out,
                            *m.get("run", ["--poison", "--check=unplanned"]), "--threads=2",
                            "--backend=" + a.backend],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{m['name']}: FAIL: oomplan-run exit {r.returncode}: {r.stderr.strip()[-300:]}")
            failed += 1
            continue
        ok, msgs = compare(load(out), load(os.path.join(d, "ref")), load(os.path.join(d, "ref64")))
        p = subprocess.run([a.planner, mp, "--batch", "4", *m.get("plan", [])], capture_output=True,
                           text=True)
        if p.returncode != 0:
            ok = False
            msgs.append(f"oomplan exit {p.returncode}: {p.stderr.strip()[-200:]}")
        # Steps the backend's device lacks, run on the host (docs/cuda.md).
        host = [l.split(":", 2)[-1].split(";")[0].strip() for l in r.stdout.splitlines()
                if " ran on the host " in l]
        if host:
            msgs.append("host steps: " + host[0])
        print(f"{m['name']}: {'pass' if ok else 'FAIL'}: " + "; ".join(msgs))
        failed += not ok
    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
