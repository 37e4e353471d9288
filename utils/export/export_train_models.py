#!/usr/bin/python3
"""Training-mode, graph-only ONNX exports of torchvision models and of our own transformer variants.

What: OUTDIR/<case>.onnx for every case of CASES (or those named), exported the way a user exports a
model for training: torch.onnx.export(..., training=TrainingMode.TRAINING, do_constant_folding=False),
opset 17, a dynamic "batch" axis (and "seq" for token models). The large floating-point initializers are
then stripped (their data points to a <case>.stripped.bin that does not exist, as in test/models/train),
so each file is a few hundred kB; small and integer initializers (shape constants) stay. Nothing is
downloaded: every model is built with weights=None from a fixed seed.

utils/bench/measure_torch_peak.py builds the same modules through build() and measures PyTorch's peak for
one steady-state Adam step; this file is the single list of cases both use.

Usage (Debian's interpreter: python3-torch 1.13, python3-torchvision 0.14):
    /usr/bin/python3 utils/export/export_train_models.py OUTDIR [CASE...]
    /usr/bin/python3 utils/export/export_train_models.py --list
"""
import math
import os
import sys

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torchvision
except ImportError as e:  # clear message instead of a traceback
    sys.exit(f"export_train_models.py: error: {e}; run with /usr/bin/python3 "
             "(Debian python3-torch, python3-torchvision)")


# ---------------------------------------------------------------- our own transformer / UNet variants
class RMSNorm(nn.Module):
    """T5/Llama RMSNorm written out: x * rsqrt(mean(x^2) + eps) * w."""

    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class T5Encoder(nn.Module):
    """T5-style encoder: RMSNorm pre-norm, a relative-position bias computed in-graph from seq
    (Range, Sub, Abs, Min), packed-free q/k/v projections without bias, ReLU FFN, dropout 0.1."""

    def __init__(self, vocab=4000, d=256, layers=4, heads=4, ff=1024, buckets=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.rel = nn.Embedding(buckets, heads)
        self.heads, self.buckets = heads, buckets
        self.drop = nn.Dropout(0.1)
        self.layers = nn.ModuleList()
        for _ in range(layers):
            self.layers.append(nn.ModuleDict({
                "n1": RMSNorm(d), "q": nn.Linear(d, d, bias=False), "k": nn.Linear(d, d, bias=False),
                "v": nn.Linear(d, d, bias=False), "o": nn.Linear(d, d, bias=False), "n2": RMSNorm(d),
                "wi": nn.Linear(d, ff, bias=False), "wo": nn.Linear(ff, d, bias=False)}))
        self.norm = RMSNorm(d)

    def forward(self, ids):
        b, s = ids.shape
        i = torch.arange(s)
        rel = torch.clamp((i.unsqueeze(0) - i.unsqueeze(1)).abs(), max=self.buckets - 1)
        bias = self.rel(rel).permute(2, 0, 1).unsqueeze(0)  # [1, h, s, s]
        x = self.drop(self.emb(ids))
        h = self.heads
        for L in self.layers:
            y = L["n1"](x)
            q, k, v = (L[n](y).view(b, s, h, -1).transpose(1, 2) for n in ("q", "k", "v"))
            att = F.softmax(q @ k.transpose(-1, -2) + bias, dim=-1)
            att = self.drop(att)
            o = (att @ v).transpose(1, 2).reshape(b, s, -1)
            x = x + self.drop(L["o"](o))
            y = L["n2"](x)
            x = x + self.drop(L["wo"](self.drop(F.relu(L["wi"](y)))))
        return self.drop(self.norm(x))


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class Llama(nn.Module):
    """Llama-style decoder: RMSNorm, rotary embeddings, a packed qkv projection whose output is
    split, causal mask, SwiGLU FFN (silu(w1 x) * w3 x), no dropout, no biases, untied LM head."""

    def __init__(self, vocab=4000, d=256, layers=4, heads=4, ff=688, max_pos=512):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.heads = heads
        self.layers = nn.ModuleList()
        for _ in range(layers):
            self.layers.append(nn.ModuleDict({
                "n1": RMSNorm(d), "qkv": nn.Linear(d, 3 * d, bias=False), "o": nn.Linear(d, d, bias=False),
                "n2": RMSNorm(d), "w1": nn.Linear(d, ff, bias=False), "w3": nn.Linear(d, ff, bias=False),
                "w2": nn.Linear(ff, d, bias=False)}))
        self.norm = RMSNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        hd = d // heads
        inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
        t = torch.arange(max_pos).float()[:, None] * inv[None, :]
        self.register_buffer("cos", torch.cat((t, t), -1).cos())
        self.register_buffer("sin", torch.cat((t, t), -1).sin())

    def forward(self, ids):
        b, s = ids.shape
        x = self.emb(ids)
        h = self.heads
        cos, sin = self.cos[:s], self.sin[:s]
        i = torch.arange(s)
        mask = torch.zeros(s, s).masked_fill(i.unsqueeze(0) > i.unsqueeze(1), float("-inf"))
        for L in self.layers:
            q, k, v = L["qkv"](L["n1"](x)).split(x.shape[-1], dim=-1)
            q, k, v = (t.view(b, s, h, -1).transpose(1, 2) for t in (q, k, v))
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            att = F.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + mask, dim=-1)
            x = x + L["o"]((att @ v).transpose(1, 2).reshape(b, s, -1))
            y = L["n2"](x)
            x = x + L["w2"](F.silu(L["w1"](y)) * L["w3"](y))
        return self.head(self.norm(x))


class ResBlock(nn.Module):
    def __init__(self, cin, cout, groups=8):
        super().__init__()
        self.n1, self.c1 = nn.GroupNorm(groups, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.n2, self.c2 = nn.GroupNorm(groups, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        y = self.c1(F.silu(self.n1(x)))
        y = self.c2(F.silu(self.n2(y)))
        return self.skip(x) + y


class UNetSmall(nn.Module):
    """Diffusion-UNet-ish: GroupNorm + SiLU residual blocks, strided-conv downsampling, nearest
    upsampling by a scale factor (a Resize whose scales the exporter builds with Concat), skip concats."""

    def __init__(self, c=64):
        super().__init__()
        self.inp = nn.Conv2d(3, c, 3, padding=1)
        self.d1, self.down1 = ResBlock(c, c), nn.Conv2d(c, c, 3, stride=2, padding=1)
        self.d2, self.down2 = ResBlock(c, 2 * c), nn.Conv2d(2 * c, 2 * c, 3, stride=2, padding=1)
        self.mid = ResBlock(2 * c, 2 * c)
        self.u2 = ResBlock(4 * c, 2 * c)
        self.u1 = ResBlock(3 * c, c)
        self.out = nn.Sequential(nn.GroupNorm(8, c), nn.SiLU(), nn.Conv2d(c, 3, 3, padding=1))

    def forward(self, x):
        h0 = self.d1(self.inp(x))
        h1 = self.d2(self.down1(h0))
        m = self.mid(self.down2(h1))
        m = F.interpolate(m, scale_factor=2.0, mode="nearest")
        m = self.u2(torch.cat([m, h1], 1))
        m = F.interpolate(m, scale_factor=2.0, mode="nearest")
        m = self.u1(torch.cat([m, h0], 1))
        return self.out(m)


class DCGANGenerator(nn.Module):
    """DCGAN's generator: ConvTranspose2d upsampling from a [N, nz, 1, 1] latent, BatchNorm, ReLU,
    Tanh (ConvTranspose's backward and a latent input that needs no gradient)."""

    def __init__(self, nz=100, ngf=64):
        super().__init__()
        self.m = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 8), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
            nn.ConvTranspose2d(ngf, 3, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, z):
        return self.m(z)


class SpeechEncoder(nn.Module):
    """Whisper-style audio encoder: two Conv1d + GELU over [N, mels, frames] (the second strided),
    learned positions, pre-norm nn.TransformerEncoder layers (batch_first, GELU), final LayerNorm."""

    def __init__(self, mels=80, d=256, layers=4, heads=4, frames=400):
        super().__init__()
        self.c1 = nn.Conv1d(mels, d, 3, padding=1)
        self.c2 = nn.Conv1d(d, d, 3, stride=2, padding=1)
        self.pos = nn.Parameter(torch.randn(frames // 2, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.1, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.ln = nn.LayerNorm(d)

    def forward(self, x):
        x = F.gelu(self.c2(F.gelu(self.c1(x)))).permute(0, 2, 1)
        return self.ln(self.enc(x + self.pos))


class LSTMTagger(nn.Module):
    """A 2-layer bidirectional LSTM over [N, T, features] and a per-step classifier (ONNX LSTM)."""

    def __init__(self, feat=64, hidden=128, classes=32):
        super().__init__()
        self.rnn = nn.LSTM(feat, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, classes)

    def forward(self, x):
        return self.out(self.rnn(x)[0])


class GRUEncoder(nn.Module):
    """A 3-layer unidirectional GRU over [N, T, features] (batch_first) and a classifier on the last
    step's output and on the final hidden state of every layer."""

    def __init__(self, feat=80, hidden=192, classes=16):
        super().__init__()
        self.rnn = nn.GRU(feat, hidden, num_layers=3, batch_first=True)
        self.out = nn.Linear(hidden, classes)

    def forward(self, x):
        y, h = self.rnn(x)
        return self.out(y[:, -1]) + self.out(h).sum(0)


class Seq2Seq(nn.Module):
    """An encoder-decoder nn.Transformer (2 + 2 post-norm layers, ReLU, dropout 0.1): the decoder reads
    the token ids shifted by one under a causal mask and cross-attends to the encoder's output."""

    def __init__(self, vocab=4000, d=256, heads=4, layers=2, ff=1024):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.t = nn.Transformer(d, heads, layers, layers, ff, dropout=0.1, batch_first=True)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids):
        s = ids.shape[1]
        src = self.emb(ids)
        tgt = self.emb(torch.roll(ids, 1, dims=1))
        mask = torch.triu(torch.full((s, s), float("-inf")), diagonal=1)
        return self.head(self.t(src, tgt, tgt_mask=mask))


class MoE(nn.Module):
    """A Mixtral-style block stack: RMSNorm, causal self-attention, and a mixture of 4 SwiGLU experts
    routed top-2 per token (TopK over the router's softmax, a scatter-built mask, every expert run
    densely and weighted: the routing ops of sparse models without data-dependent shapes)."""

    def __init__(self, vocab=4000, d=192, heads=4, layers=2, experts=4, ff=384):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.heads, self.experts = heads, experts
        self.layers = nn.ModuleList()
        for _ in range(layers):
            self.layers.append(nn.ModuleDict({
                "n1": RMSNorm(d), "qkv": nn.Linear(d, 3 * d, bias=False), "o": nn.Linear(d, d, bias=False),
                "n2": RMSNorm(d), "router": nn.Linear(d, experts, bias=False),
                "w1": nn.ModuleList(nn.Linear(d, ff, bias=False) for _ in range(experts)),
                "w3": nn.ModuleList(nn.Linear(d, ff, bias=False) for _ in range(experts)),
                "w2": nn.ModuleList(nn.Linear(ff, d, bias=False) for _ in range(experts))}))
        self.norm = RMSNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        b, s = ids.shape
        x = self.emb(ids)
        h = self.heads
        i = torch.arange(s)
        mask = torch.zeros(s, s).masked_fill(i.unsqueeze(0) > i.unsqueeze(1), float("-inf"))
        for L in self.layers:
            q, k, v = L["qkv"](L["n1"](x)).split(x.shape[-1], dim=-1)
            q, k, v = (t.view(b, s, h, -1).transpose(1, 2) for t in (q, k, v))
            att = F.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + mask, dim=-1)
            x = x + L["o"]((att @ v).transpose(1, 2).reshape(b, s, -1))
            y = L["n2"](x)
            probs = F.softmax(L["router"](y), dim=-1)
            top, idx = probs.topk(2, dim=-1)
            gate = torch.zeros_like(probs).scatter(-1, idx, top / top.sum(-1, keepdim=True))
            out = 0
            for e in range(self.experts):
                ex = L["w2"][e](F.silu(L["w1"][e](y)) * L["w3"][e](y))
                out = out + ex * gate[..., e:e + 1]
            x = x + out
        return self.head(self.norm(x))


class RecurrentStack(nn.Module):
    """nn.LSTM / nn.GRU / nn.RNN of any depth and direction and a per-step classifier; batch_first,
    or fed time-major (the [N, T, F] input transposed and made contiguous before the layer)."""

    def __init__(self, kind, feat, hidden, layers, bidirectional, batch_first=True):
        super().__init__()
        self.batch_first = batch_first
        self.rnn = getattr(nn, kind)(feat, hidden, num_layers=layers, batch_first=batch_first,
                                     bidirectional=bidirectional)
        self.out = nn.Linear(hidden * (2 if bidirectional else 1), 10)

    def forward(self, x):
        if not self.batch_first:
            x = x.transpose(0, 1).contiguous()
        return self.out(self.rnn(x)[0])


def recurrent(*args, **kw):
    return lambda: RecurrentStack(*args, **kw)


class Wav2VecLike(nn.Module):
    """wav2vec 2.0's shape: a strided Conv1d feature encoder over raw audio (GroupNorm on the first
    layer, GELU), a projection, a grouped positional Conv1d with a long kernel (128 taps, 16
    groups) added to the features, and pre-norm transformer layers."""

    def __init__(self, d=256, layers=2):
        super().__init__()
        convs, cin = [], 1
        for i, (k, st) in enumerate([(10, 5), (3, 2), (3, 2), (2, 2)]):
            convs += [nn.Conv1d(cin, 128, k, st, bias=False)]
            if i == 0:
                convs += [nn.GroupNorm(128, 128)]
            convs += [nn.GELU()]
            cin = 128
        self.fe = nn.Sequential(*convs)
        self.proj = nn.Linear(128, d)
        self.pos = nn.Conv1d(d, d, 128, padding=64, groups=16)
        layer = nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.1, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, wav):
        f = self.proj(self.fe(wav).transpose(1, 2))
        p = F.gelu(self.pos(f.transpose(1, 2))[:, :, :-1]).transpose(1, 2)
        return self.enc(f + p)


class SegmentationOut(nn.Module):
    """torchvision's segmentation models return a dict: train its 'out' tensor."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)["out"]


def lraspp():
    return SegmentationOut(torchvision.models.segmentation.lraspp_mobilenet_v3_large(
        weights=None, weights_backbone=None))


# ---------------------------------------------------------------- the cases
def tv(name, **kw):
    return lambda: getattr(torchvision.models, name)(weights=None, **kw)


def vit_small():
    from torchvision.models.vision_transformer import VisionTransformer
    return VisionTransformer(image_size=64, patch_size=8, num_layers=4, num_heads=4, hidden_dim=256,
                             mlp_dim=1024, dropout=0.1, attention_dropout=0.1)


# case -> (constructor, family, batch, input, seq or None, vocab for token models); input is an image
# size (a [batch, 3, size, size] input), a tuple (the dims after batch), or None for token models.
CASES = {
    "alexnet": (tv("alexnet"), "alexnet", 4, 224, None, None),
    "vgg11": (tv("vgg11"), "vgg", 2, 224, None, None),
    "resnet18": (tv("resnet18"), "resnet", 8, 64, None, None),
    "resnext50_32x4d": (tv("resnext50_32x4d"), "resnext", 4, 64, None, None),
    "wide_resnet50_2": (tv("wide_resnet50_2"), "wide_resnet", 2, 64, None, None),
    "squeezenet1_1": (tv("squeezenet1_1"), "squeezenet", 8, 64, None, None),
    "densenet121": (tv("densenet121"), "densenet", 4, 64, None, None),
    "googlenet": (tv("googlenet", aux_logits=False, init_weights=True), "googlenet", 4, 64, None, None),
    "inception_v3": (tv("inception_v3", aux_logits=False, init_weights=True), "inception", 2, 96, None, None),
    "shufflenet_v2_x1_0": (tv("shufflenet_v2_x1_0"), "shufflenet", 8, 64, None, None),
    "mobilenet_v3_small": (tv("mobilenet_v3_small"), "mobilenet_v3", 8, 64, None, None),
    "mnasnet0_5": (tv("mnasnet0_5"), "mnasnet", 8, 64, None, None),
    "efficientnet_b0": (tv("efficientnet_b0"), "efficientnet", 4, 64, None, None),
    "efficientnet_v2_s": (tv("efficientnet_v2_s"), "efficientnet_v2", 2, 64, None, None),
    "regnet_y_400mf": (tv("regnet_y_400mf"), "regnet", 8, 64, None, None),
    "convnext_tiny": (tv("convnext_tiny"), "convnext", 2, 64, None, None),
    "vit_small": (vit_small, "vit", 4, 64, None, None),
    "vit_b_32": (tv("vit_b_32"), "vit", 2, 224, None, None),
    "swin_t": (tv("swin_t"), "swin", 2, 64, None, None),
    "t5_encoder": (T5Encoder, "t5 (own)", 4, None, 128, 4000),
    "llama": (Llama, "llama (own)", 4, None, 128, 4000),
    "unet_gn": (UNetSmall, "unet (own)", 4, 32, None, None),
    "r3d_18": (lambda: torchvision.models.video.r3d_18(weights=None), "video resnet (3D conv)", 2,
               (3, 8, 64, 64), None, None),
    "lraspp": (lraspp, "segmentation (bilinear Resize)", 4, 96, None, None),
    "dcgan": (DCGANGenerator, "gan generator (ConvTranspose)", 8, (100, 1, 1), None, None),
    "speech_encoder": (SpeechEncoder, "speech encoder (Conv1d + transformer)", 4, (80, 400), None, None),
    "lstm": (LSTMTagger, "recurrent (LSTM)", 8, (64, 64), None, None),
    "gru": (GRUEncoder, "recurrent (GRU)", 8, (100, 80), None, None),
    "lstm_1layer": (recurrent("LSTM", 32, 96, 1, False), "recurrent (LSTM, 1 layer)", 16, (50, 32),
                    None, None),
    "lstm_3bi": (recurrent("LSTM", 32, 64, 3, True), "recurrent (LSTM, 3 bidirectional)", 4, (80, 32),
                 None, None),
    "gru_2bi": (recurrent("GRU", 48, 128, 2, True), "recurrent (GRU, 2 bidirectional)", 6, (40, 48),
                None, None),
    "rnn_tanh": (recurrent("RNN", 32, 256, 2, False), "recurrent (tanh RNN)", 8, (60, 32), None, None),
    "lstm_time_major": (recurrent("LSTM", 32, 128, 2, True, batch_first=False),
                        "recurrent (LSTM, time-major)", 8, (30, 32), None, None),
    "wav2vec_like": (Wav2VecLike, "speech (wav2vec-style, long grouped Conv1d)", 4, (1, 16000), None,
                     None),
    "seq2seq": (Seq2Seq, "encoder-decoder transformer (own)", 4, None, 64, 4000),
    "moe": (MoE, "mixture of experts, top-2 routing (own)", 4, None, 64, 4000),
}


# Registered buffers export as initializers, exactly like parameters: a float buffer read through a
# differentiable op (Llama's rotary cos/sin tables, sliced and multiplied) would count as a trained
# weight, with a gradient and Adam state, and make the products that read it keep their other operand.
# The user says which initializers are buffers with --freeze, as here.
OOMPLAN_ARGS = {"llama": ["--freeze=cos", "--freeze=sin"]}


def oomplan_args(case):
    """Extra oomplan arguments a user passes for this case (buffers to freeze)."""
    return OOMPLAN_ARGS.get(case, [])


def build(case, batch=None, seq=None):
    """The model (train mode, fp32, seeded) and its inputs for case at batch (and seq)."""
    make, _, b0, size, s0, vocab = CASES[case]
    torch.manual_seed(0)
    model = make().train()
    b = batch or b0
    if vocab:
        inputs = (torch.randint(0, vocab, (b, seq or s0)),)
    elif isinstance(size, tuple):
        inputs = (torch.randn(b, *size),)
    else:
        inputs = (torch.randn(b, 3, size, size),)
    return model, inputs


def randomize(model):
    """Distinct parameters (the exporter deduplicates bit-identical initializers)."""
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.02)
    return model


def strip(path, case, min_elems=64):
    """Removes the data of floating-point initializers with min_elems or more elements."""
    import onnx
    m = onnx.load(path)
    for init in m.graph.initializer:
        n = 1
        for d in init.dims:
            n *= d
        if init.data_type not in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16,
                                  onnx.TensorProto.DOUBLE, onnx.TensorProto.BFLOAT16) or n < min_elems:
            continue
        size = n * {onnx.TensorProto.DOUBLE: 8, onnx.TensorProto.FLOAT: 4}.get(init.data_type, 2)
        init.ClearField("raw_data")
        init.ClearField("float_data")
        init.ClearField("double_data")
        init.ClearField("int32_data")
        init.data_location = onnx.TensorProto.EXTERNAL
        del init.external_data[:]
        for k, v in (("location", case + ".stripped.bin"), ("offset", "0"), ("length", str(size))):
            e = init.external_data.add()
            e.key, e.value = k, v
    onnx.save(m, path)


def exportable_stochastic_depth(self, x):
    """torchvision.ops.StochasticDepth(mode="row") as torch 1.13 can export it: its bernoulli_ has no
    ONNX symbolic, a comparison of uniform noise is the same distribution. Both keep one [N, 1, ...]
    noise tensor for backward and not the input (mul by a tensor that needs no gradient)."""
    if not self.training or self.p == 0.0:
        return x
    survival = 1.0 - self.p
    size = [x.shape[0]] + [1] * (x.ndim - 1) if self.mode == "row" else [1] * x.ndim
    noise = (torch.rand(size, dtype=x.dtype) < survival).to(x.dtype)
    return x * (noise / survival)


def export(case, outdir):
    torchvision.ops.StochasticDepth.forward = exportable_stochastic_depth
    model, inputs = build(case, batch=2)
    randomize(model)
    vocab = CASES[case][5]
    path = os.path.join(outdir, case + ".onnx")
    axes = {"input": {0: "batch"}}
    if vocab:
        axes = {"input": {0: "batch", 1: "seq"}}
    outs = model(*inputs)
    nout = len(outs) if isinstance(outs, tuple) else 1
    names = ["output"] if nout == 1 else ["output%d" % i for i in range(nout)]
    for n in names:
        axes[n] = {0: "batch"}
    torch.onnx.export(model, inputs, path, opset_version=17, input_names=["input"], output_names=names,
                      dynamic_axes=axes, training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False)
    strip(path, case)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)", flush=True)


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    if sys.argv[1] == "--list":
        for c, v in CASES.items():
            print(c, v[1], "batch", v[2], "image", v[3], "seq", v[4])
        return 0
    outdir, only = sys.argv[1], sys.argv[2:]
    unknown = [n for n in only if n not in CASES]
    if unknown:
        sys.exit(f"export_train_models.py: error: unknown case(s) {unknown}; see --list")
    os.makedirs(outdir, exist_ok=True)
    failed = []
    for case in CASES:
        if not only or case in only:
            try:
                export(case, outdir)
            except Exception as e:  # report and go on: one architecture must not hide the others
                print(f"export_train_models.py: {case}: {type(e).__name__}: {e}", file=sys.stderr)
                failed.append(case)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
