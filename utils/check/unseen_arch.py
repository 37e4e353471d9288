"""More architectures for check_unseen_runtime.py: the shapes today's models take that
the first lists lacked (LLaMA-style decoder, CLIP pooling, diffusion block, YOLO head, dense MoE,
TransformerDecoder)."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

tv = torchvision.models


class RMSNorm(nn.Module):
    def __init__(s, d, eps=1e-6):
        super().__init__(); s.w = nn.Parameter(torch.ones(d) + 0.1 * torch.randn(d)); s.eps = eps
    def forward(s, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + s.eps) * s.w


def rotate_half(x):
    a, b = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-b, a), dim=-1)


def repeat_kv(x, n):
    """Hugging Face's LLaMA: each KV head n times, by expand and reshape. (torch.repeat_interleave
    exports from PyTorch 1.13 with dynamic axes as invalid ONNX: each piece is reshaped with
    [0, -1, 0, 0], whose zeros copy the wrong axes of the rank-5 piece; docs/shapes.md.)"""
    b, h, t, d = x.shape
    return x[:, :, None].expand(b, h, n, t, d).reshape(b, h * n, t, d)


class LlamaLike(nn.Module):
    """RMSNorm, rotary position embedding (cos/sin from arange), grouped-query attention
    (repeat_kv of the KV heads), causal mask from triu, SwiGLU MLP, untied head."""
    def __init__(s, d=64, h=4, kvh=2, layers=2, vocab=300):
        super().__init__()
        s.h, s.kvh, s.dh = h, kvh, d // h
        s.emb = nn.Embedding(vocab, d)
        s.n1 = nn.ModuleList([RMSNorm(d) for _ in range(layers)])
        s.n2 = nn.ModuleList([RMSNorm(d) for _ in range(layers)])
        s.q = nn.ModuleList([nn.Linear(d, d, bias=False) for _ in range(layers)])
        s.kv = nn.ModuleList([nn.Linear(d, 2 * kvh * s.dh, bias=False) for _ in range(layers)])
        s.o = nn.ModuleList([nn.Linear(d, d, bias=False) for _ in range(layers)])
        s.gate = nn.ModuleList([nn.Linear(d, 3 * d, bias=False) for _ in range(layers)])
        s.up = nn.ModuleList([nn.Linear(d, 3 * d, bias=False) for _ in range(layers)])
        s.down = nn.ModuleList([nn.Linear(3 * d, d, bias=False) for _ in range(layers)])
        s.nf = RMSNorm(d); s.head = nn.Linear(d, vocab, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, s.dh, 2).float() / s.dh))
        s.register_buffer("inv", inv)

    def forward(s, ids):
        b, t = ids.shape
        x = s.emb(ids)
        f = torch.arange(t, dtype=torch.float32)[:, None] * s.inv[None, :]
        e = torch.cat((f, f), -1)
        cos, sin = e.cos()[None, None], e.sin()[None, None]
        mask = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        for i in range(len(s.q)):
            y = s.n1[i](x)
            q = s.q[i](y).view(b, t, s.h, s.dh).transpose(1, 2)
            k, v = s.kv[i](y).view(b, t, 2 * s.kvh, s.dh).transpose(1, 2).chunk(2, dim=1)
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            k, v = repeat_kv(k, s.h // s.kvh), repeat_kv(v, s.h // s.kvh)
            a = (q @ k.transpose(-1, -2)) / math.sqrt(s.dh) + mask
            a = a.softmax(-1) @ v
            x = x + s.o[i](a.transpose(1, 2).reshape(b, t, -1))
            y = s.n2[i](x)
            x = x + s.down[i](F.silu(s.gate[i](y)) * s.up[i](y))
        return s.head(s.nf(x))


class ClipText(nn.Module):
    """CLIP's text tower pooling: causal encoder, then the features at each sequence's argmax
    token (the end-of-text id is the largest), gathered with advanced indexing, L2-normalised."""
    def __init__(s, d=64, vocab=200):
        super().__init__()
        s.emb = nn.Embedding(vocab, d); s.pos = nn.Parameter(torch.randn(64, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, 4, 128, dropout=0.0, activation="gelu", batch_first=True, norm_first=True)
        s.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        s.ln = nn.LayerNorm(d); s.proj = nn.Parameter(torch.randn(d, 32) * 0.1)
    def forward(s, ids):
        t = ids.shape[1]
        x = s.emb(ids) + s.pos[:t]
        m = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        x = s.ln(s.enc(x, mask=m))
        f = x[torch.arange(x.shape[0]), ids.argmax(dim=-1)] @ s.proj
        return f / f.norm(dim=-1, keepdim=True)


class DiffusionBlock(nn.Module):
    """A diffusion UNet's res block and cross attention: sinusoidal timestep embedding, GroupNorm,
    SiLU, the embedding broadcast over space, attention of pixels over a text context, nearest
    upsampling and a skip Concat."""
    def __init__(s, c=32, ctx=48):
        super().__init__()
        s.c = c
        s.t1 = nn.Linear(c, 4 * c); s.t2 = nn.Linear(4 * c, c)
        s.inp = nn.Conv2d(4, c, 3, padding=1)
        s.g1 = nn.GroupNorm(8, c); s.c1 = nn.Conv2d(c, c, 3, padding=1)
        s.g2 = nn.GroupNorm(8, c); s.c2 = nn.Conv2d(c, c, 3, padding=1)
        s.gn = nn.GroupNorm(8, c); s.q = nn.Linear(c, c); s.k = nn.Linear(ctx, c); s.v = nn.Linear(ctx, c)
        s.o = nn.Linear(c, c)
        s.down = nn.Conv2d(c, c, 3, stride=2, padding=1)
        s.up = nn.Conv2d(c, c, 3, padding=1)
        s.out = nn.Conv2d(2 * c, 4, 3, padding=1)
    def temb(s, t):
        half = s.c // 2
        fr = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32) / half)
        a = t[:, None].float() * fr[None]
        return torch.cat([a.cos(), a.sin()], -1)
    def forward(s, x, t, ctx):
        e = s.t2(F.silu(s.t1(s.temb(t))))
        h0 = s.inp(x)
        h = s.c1(F.silu(s.g1(h0))) + e[:, :, None, None]
        h = h0 + s.c2(F.silu(s.g2(h)))
        b, c, hh, ww = h.shape
        q = s.q(s.gn(h).flatten(2).transpose(1, 2))
        a = (q @ s.k(ctx).transpose(1, 2) / math.sqrt(c)).softmax(-1) @ s.v(ctx)
        h = h + s.o(a).transpose(1, 2).reshape(b, c, hh, ww)
        d = s.down(h)
        u = s.up(F.interpolate(d, scale_factor=2.0, mode="nearest"))
        return s.out(torch.cat([u, h], 1))


class YoloHead(nn.Module):
    """A YOLO-style neck and decode: SiLU convs, SPPF (three chained max pools), chunk, upsample +
    concat, and the head's box decode with a meshgrid of cell offsets and per-anchor sizes."""
    def __init__(s, na=3, nc=5):
        super().__init__()
        s.na, s.no = na, nc + 5
        s.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.SiLU(), nn.Conv2d(16, 32, 3, 2, 1), nn.SiLU())
        s.c2 = nn.Sequential(nn.Conv2d(32, 64, 3, 2, 1), nn.SiLU())
        s.sppf = nn.Conv2d(4 * 32, 64, 1)
        s.red = nn.Conv2d(64, 32, 1)
        s.fuse = nn.Conv2d(64, 32, 3, padding=1)
        s.det = nn.Conv2d(32, na * s.no, 1)
        s.register_buffer("anchors", torch.tensor([[10., 13.], [16., 30.], [33., 23.]]))
    def forward(s, x):
        a = s.stem(x)
        b = s.c2(a)
        l, r = b.chunk(2, 1)
        p1 = F.max_pool2d(r, 5, 1, 2); p2 = F.max_pool2d(p1, 5, 1, 2); p3 = F.max_pool2d(p2, 5, 1, 2)
        b = F.silu(s.sppf(torch.cat([l, p1, p2, p3], 1)))
        u = F.interpolate(F.silu(s.red(b)), scale_factor=2.0, mode="nearest")
        y = s.det(F.silu(s.fuse(torch.cat([u, a], 1))))
        n, _, h, w = y.shape
        y = y.view(n, s.na, s.no, h, w).permute(0, 1, 3, 4, 2).sigmoid()
        gy, gx = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
        grid = torch.stack((gx, gy), 2).view(1, 1, h, w, 2).float()
        xy = (y[..., :2] * 2 - 0.5 + grid) * 4.0
        wh = (y[..., 2:4] * 2) ** 2 * s.anchors.view(1, s.na, 1, 1, 2)
        return torch.cat((xy, wh, y[..., 4:]), -1).view(n, -1, s.no)


class MoE(nn.Module):
    """A mixture-of-experts layer computed densely (every expert on every token), weighted by a
    top-2 gate scattered back into a dense gate matrix (TopK, Softmax, ScatterElements), as
    exporters see a switch layer without dynamic dispatch."""
    def __init__(s, d=32, e=4):
        super().__init__()
        s.g = nn.Linear(d, e, bias=False)
        s.w1 = nn.Parameter(torch.randn(e, d, 64) * 0.1); s.w2 = nn.Parameter(torch.randn(e, 64, d) * 0.1)
    def forward(s, x):
        logits = s.g(x)
        v, i = logits.topk(2, dim=-1)
        gate = torch.zeros_like(logits).scatter(-1, i, v.softmax(-1))
        h = F.gelu(torch.einsum("btd,edf->btef", x, s.w1))
        y = torch.einsum("btef,efd->bted", h, s.w2)
        return x + (gate.unsqueeze(-1) * y).sum(2), gate


class TorchTD(nn.Module):
    """nn.TransformerDecoder: causal self-attention (the mask built with triu from the target's
    length), cross attention to a memory of another length, post-norm."""
    def __init__(s, d=64):
        super().__init__()
        l = nn.TransformerDecoderLayer(d, 4, 128, dropout=0.0, batch_first=True)
        s.t = nn.TransformerDecoder(l, 2)
    def forward(s, tgt, mem):
        n = tgt.shape[1]
        m = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
        return s.t(tgt, mem, tgt_mask=m)
