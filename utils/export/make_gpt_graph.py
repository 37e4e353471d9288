#!/usr/bin/env python3
"""Write a GPT- or Llama-shaped ONNX graph of any size, without weights.

Usage:
  make_gpt_graph.py OUT.onnx [--arch gpt|llama] [--layers N] [--hidden H]
                    [--heads A] [--kv-heads K] [--ffn F] [--vocab V]
                    [--max-pos P] [--dropout R] [--preset NAME]

oomplan plans memory from shapes and never reads weights, so the
initializers here point at external data ("<OUT>.weights.bin") that is never
written: a 175B-parameter graph is a few hundred kilobytes. Batch and
sequence are the symbols "batch" and "seq" (bind them with --batch/--seq).

The op patterns are those of a training-mode torch.onnx export (opset 17),
so that `oomplan --train` applies the same saved-tensor rules as to a real
export: Linear layers are MatMul(x, Transpose(W)) (+ bias Add), LayerNorm is
LayerNormalization, GELU is the erf form (Div by sqrt 2, Erf, Add 1, Mul x,
Mul 0.5), attention is MatMul, Div by sqrt(d), Add of a causal mask bias,
Softmax, Dropout (training_mode true), MatMul. The Llama form has RMSNorm as
torch exports LlamaRMSNorm (Pow, ReduceMean, Add eps, Sqrt, Reciprocal, Mul,
Mul weight), rotary embeddings (Cos/Sin of positions times a Constant
inv_freq, rotate_half by Slice/Neg/Concat), grouped-query attention (the
query heads of one key/value head are folded into the sequence axis by a
Reshape, as FlashAttention and Megatron-LM compute it, so key and value are
never repeated in memory), a SwiGLU MLP (Sigmoid, Mul, Mul) and no dropout.

Presets (--preset) set the architecture numbers of published models:
gpt3-175b (96 x 12288, 96 heads), gpt3-layer (the 175B layer shape, 1
layer), llama2-7b (32 x 4096, 32 heads, ffn 11008, vocab 32000), llama2-70b
(80 x 8192, 64 heads, 8 kv heads, ffn 28672, vocab 32000).
"""
import argparse
import math
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

PRESETS = {
    "gpt3-175b": dict(arch="gpt", layers=96, hidden=12288, heads=96,
                      ffn=4 * 12288, vocab=50257, max_pos=2048),
    "gpt3-layer": dict(arch="gpt", layers=1, hidden=12288, heads=96,
                       ffn=4 * 12288, vocab=50257, max_pos=2048),
    "llama2-7b": dict(arch="llama", layers=32, hidden=4096, heads=32,
                      kv_heads=32, ffn=11008, vocab=32000, max_pos=4096),
    "llama2-70b": dict(arch="llama", layers=80, hidden=8192, heads=64,
                       kv_heads=8, ffn=28672, vocab=32000, max_pos=4096),
}


class Builder:
    """Nodes, initializers (external, absent) and unique names."""

    def __init__(self, data_file):
        self.nodes = []
        self.inits = []
        self.data_file = data_file
        self.offset = 0
        self.counter = {}

    def name(self, base):
        n = self.counter.get(base, 0)
        self.counter[base] = n + 1
        return base if n == 0 else "%s_%d" % (base, n)

    def weight(self, name, dims):
        t = TensorProto()
        t.name = name
        t.data_type = TensorProto.FLOAT
        t.dims.extend(dims)
        t.data_location = TensorProto.EXTERNAL
        length = 4 * int(np.prod(dims))
        for k, v in (("location", self.data_file), ("offset", self.offset),
                     ("length", length)):
            e = t.external_data.add()
            e.key, e.value = k, str(v)
        self.offset += length
        self.inits.append(t)
        return name

    def const(self, base, value, dtype=np.int64):
        out = self.name(base)
        arr = np.array(value, dtype=dtype)
        self.nodes.append(helper.make_node(
            "Constant", [], [out], value=numpy_helper.from_array(arr)))
        return out

    def op(self, op_type, inputs, base, n_out=1, **attrs):
        outs = [self.name(base + ("" if i == 0 else ":%d" % i))
                for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, **attrs))
        return outs[0] if n_out == 1 else outs

    def linear(self, x, prefix, n_in, n_out, bias):
        w = self.weight(prefix + ".weight", [n_out, n_in])
        wt = self.op("Transpose", [w], "/%s/Transpose" % prefix, perm=[1, 0])
        y = self.op("MatMul", [x, wt], "/%s/MatMul" % prefix)
        if bias:
            b = self.weight(prefix + ".bias", [n_out])
            y = self.op("Add", [y, b], "/%s/Add" % prefix)
        return y

    def dropout(self, x, prefix, ratio):
        r = self.const(prefix + "/ratio", ratio, np.float32)
        t = self.const(prefix + "/training_mode", True, np.bool_)
        y, _ = self.op("Dropout", [x, r, t], prefix + "/Dropout", n_out=2)
        return y


def positions(b):
    """Range(0, seq): positions of the tokens, int64 [seq]."""
    shape = b.op("Shape", ["input_ids"], "/Shape")
    seq = b.op("Gather", [shape, b.const("/one", 1)], "/seq_len", axis=0)
    return b.op("Range", [b.const("/zero", 0), seq, b.const("/step", 1)],
                "/Range")


def causal_bias(b, pos):
    """[seq, seq] float: 0 on and below the diagonal, -10000 above."""
    row = b.op("Unsqueeze", [pos, b.const("/ax1", [1])], "/row")
    col = b.op("Unsqueeze", [pos, b.const("/ax0", [0])], "/col")
    future = b.op("Greater", [col, row], "/future")
    neg = b.const("/neg", -10000.0, np.float32)
    zero = b.const("/fzero", 0.0, np.float32)
    return b.op("Where", [future, neg, zero], "/causal_bias")


def attention_core(b, p, q, k, v, bias, a, kv, d, dropout):
    """q [b,a,s,d], k [b,kv,d,s], v [b,kv,s,d] -> context [b,a,s,d]."""
    if kv != a:  # fold the query heads of one kv head into the seq axis
        q = b.op("Reshape", [q, b.const(p + "/gqa", [0, kv, -1, d])],
                 p + "/q_fold")
    s = b.op("MatMul", [q, k], p + "/MatMul_qk")
    s = b.op("Div", [s, b.const(p + "/sqrt_d", math.sqrt(d), np.float32)],
             p + "/scale")
    if kv != a:
        s = b.op("Reshape", [s, b.const(p + "/heads", [0, a, -1, 0])],
                 p + "/scores_heads")
    s = b.op("Add", [s, bias], p + "/mask")
    s = b.op("Softmax", [s], p + "/Softmax", axis=-1)
    if dropout > 0:
        s = b.dropout(s, p + "/attn_drop", dropout)
    if kv != a:
        s = b.op("Reshape", [s, b.const(p + "/gqa2", [0, kv, -1, 0])],
                 p + "/probs_fold")
    ctx = b.op("MatMul", [s, v], p + "/MatMul_pv")
    if kv != a:
        ctx = b.op("Reshape", [ctx, b.const(p + "/heads2", [0, a, -1, d])],
                   p + "/ctx_heads")
    return ctx


def heads(b, x, p, n, d, perm):
    x = b.op("Reshape", [x, b.const(p + "/split_heads", [0, 0, n, d])],
             p + "/Reshape")
    return b.op("Transpose", [x], p + "/Transpose", perm=perm)


def merge_heads(b, ctx, p, h):
    ctx = b.op("Transpose", [ctx], p + "/merge/Transpose", perm=[0, 2, 1, 3])
    return b.op("Reshape", [ctx, b.const(p + "/merge_shape", [0, 0, h])],
                p + "/merge/Reshape")


def gelu_erf(b, x, p):
    y = b.op("Div", [x, b.const(p + "/sqrt2", math.sqrt(2), np.float32)],
             p + "/gelu/Div")
    y = b.op("Erf", [y], p + "/gelu/Erf")
    y = b.op("Add", [y, b.const(p + "/one_f", 1.0, np.float32)],
             p + "/gelu/Add")
    y = b.op("Mul", [x, y], p + "/gelu/Mul")
    return b.op("Mul", [y, b.const(p + "/half", 0.5, np.float32)],
                p + "/gelu/Mul_1")


def gpt_layer(b, x, i, o, bias):
    p = "h.%d" % i
    h, a, d = o.hidden, o.heads, o.hidden // o.heads
    ln = b.op("LayerNormalization",
              [x, b.weight(p + ".ln_1.weight", [h]),
               b.weight(p + ".ln_1.bias", [h])], "/%s/ln_1" % p,
              axis=-1, epsilon=1e-5)
    qkv = b.linear(ln, p + ".attn.c_attn", h, 3 * h, True)
    q, k, v = b.op("Split", [qkv, b.const("/%s/split" % p, [h, h, h])],
                   "/%s/attn/Split" % p, n_out=3, axis=2)
    q = heads(b, q, "/%s/attn/q" % p, a, d, [0, 2, 1, 3])
    k = heads(b, k, "/%s/attn/k" % p, a, d, [0, 2, 3, 1])
    v = heads(b, v, "/%s/attn/v" % p, a, d, [0, 2, 1, 3])
    ctx = attention_core(b, "/%s/attn" % p, q, k, v, bias, a, a, d, o.dropout)
    ctx = merge_heads(b, ctx, "/%s/attn" % p, h)
    y = b.linear(ctx, p + ".attn.c_proj", h, h, True)
    if o.dropout > 0:
        y = b.dropout(y, "/%s/attn/resid_drop" % p, o.dropout)
    x = b.op("Add", [x, y], "/%s/residual_1" % p)
    ln = b.op("LayerNormalization",
              [x, b.weight(p + ".ln_2.weight", [h]),
               b.weight(p + ".ln_2.bias", [h])], "/%s/ln_2" % p,
              axis=-1, epsilon=1e-5)
    m = b.linear(ln, p + ".mlp.c_fc", h, o.ffn, True)
    m = gelu_erf(b, m, "/%s/mlp" % p)
    m = b.linear(m, p + ".mlp.c_proj", o.ffn, h, True)
    if o.dropout > 0:
        m = b.dropout(m, "/%s/mlp/drop" % p, o.dropout)
    return b.op("Add", [x, m], "/%s/residual_2" % p)


def rms_norm(b, x, w, p):
    sq = b.op("Pow", [x, b.const(p + "/two", 2.0, np.float32)], p + "/Pow")
    ms = b.op("ReduceMean", [sq], p + "/ReduceMean", axes=[-1], keepdims=1)
    ms = b.op("Add", [ms, b.const(p + "/eps", 1e-5, np.float32)], p + "/Add")
    r = b.op("Sqrt", [ms], p + "/Sqrt")
    r = b.op("Reciprocal", [r], p + "/Reciprocal")
    y = b.op("Mul", [x, r], p + "/Mul")
    return b.op("Mul", [w, y], p + "/Mul_1")


def rotary(b, x, cos, sin, p, d):
    half = d // 2
    x1 = b.op("Slice", [x, b.const(p + "/s0", [0]), b.const(p + "/e0", [half]),
                        b.const(p + "/ax", [-1])], p + "/Slice")
    x2 = b.op("Slice", [x, b.const(p + "/s1", [half]), b.const(p + "/e1", [d]),
                        b.const(p + "/ax_1", [-1])], p + "/Slice_1")
    rot = b.op("Concat", [b.op("Neg", [x2], p + "/Neg"), x1], p + "/Concat",
               axis=-1)
    return b.op("Add", [b.op("Mul", [x, cos], p + "/Mul_cos"),
                        b.op("Mul", [rot, sin], p + "/Mul_sin")], p + "/Add")


def llama_layer(b, x, i, o, bias, cos, sin):
    p = "layers.%d" % i
    h, a, kv, d = o.hidden, o.heads, o.kv_heads, o.hidden // o.heads
    y = rms_norm(b, x, b.weight(p + ".input_layernorm.weight", [h]),
                 "/%s/input_layernorm" % p)
    q = b.linear(y, p + ".self_attn.q_proj", h, a * d, False)
    k = b.linear(y, p + ".self_attn.k_proj", h, kv * d, False)
    v = b.linear(y, p + ".self_attn.v_proj", h, kv * d, False)
    q = heads(b, q, "/%s/attn/q" % p, a, d, [0, 2, 1, 3])
    k = heads(b, k, "/%s/attn/k" % p, kv, d, [0, 2, 1, 3])
    v = heads(b, v, "/%s/attn/v" % p, kv, d, [0, 2, 1, 3])
    q = rotary(b, q, cos, sin, "/%s/attn/q_rope" % p, d)
    k = rotary(b, k, cos, sin, "/%s/attn/k_rope" % p, d)
    k = b.op("Transpose", [k], "/%s/attn/k_T" % p, perm=[0, 1, 3, 2])
    ctx = attention_core(b, "/%s/attn" % p, q, k, v, bias, a, kv, d, 0.0)
    ctx = merge_heads(b, ctx, "/%s/attn" % p, h)
    x = b.op("Add", [x, b.linear(ctx, p + ".self_attn.o_proj", h, h, False)],
             "/%s/residual_1" % p)
    y = rms_norm(b, x, b.weight(p + ".post_attention_layernorm.weight", [h]),
                 "/%s/post_attention_layernorm" % p)
    g = b.linear(y, p + ".mlp.gate_proj", h, o.ffn, False)
    g = b.op("Mul", [g, b.op("Sigmoid", [g], "/%s/mlp/Sigmoid" % p)],
             "/%s/mlp/silu" % p)
    u = b.linear(y, p + ".mlp.up_proj", h, o.ffn, False)
    m = b.op("Mul", [g, u], "/%s/mlp/Mul" % p)
    m = b.linear(m, p + ".mlp.down_proj", o.ffn, h, False)
    return b.op("Add", [x, m], "/%s/residual_2" % p)


def build(o, data_file):
    b = Builder(data_file)
    h = o.hidden
    pos = positions(b)
    bias = causal_bias(b, pos)
    if o.arch == "gpt":
        wte = b.weight("wte.weight", [o.vocab, h])
        x = b.op("Add", [b.op("Gather", ["wte.weight", "input_ids"], "/wte"),
                         b.op("Gather", [b.weight("wpe.weight",
                                                  [o.max_pos, h]), pos],
                              "/wpe")], "/embed")
        if o.dropout > 0:
            x = b.dropout(x, "/embed_drop", o.dropout)
        for i in range(o.layers):
            x = gpt_layer(b, x, i, o, bias)
        x = b.op("LayerNormalization",
                 [x, b.weight("ln_f.weight", [h]),
                  b.weight("ln_f.bias", [h])], "/ln_f", axis=-1, epsilon=1e-5)
        # The LM head is wte, tied, as GPT-2 and Megatron-LM train it.
        head = b.op("Transpose", [wte], "/lm_head/Transpose", perm=[1, 0])
    else:
        x = b.op("Gather", [b.weight("embed_tokens.weight", [o.vocab, h]),
                            "input_ids"], "/embed_tokens")
        d = h // o.heads
        inv = 1.0 / (10000.0 ** (np.arange(0, d, 2, dtype=np.float32) / d))
        freq = b.op("Mul", [b.op("Unsqueeze",
                                 [b.op("Cast", [pos], "/pos_f", to=1),
                                  b.const("/pos_ax", [1])], "/pos_col"),
                            b.const("/inv_freq", inv, np.float32)], "/freq")
        emb = b.op("Concat", [freq, freq], "/rope_emb", axis=-1)
        cos = b.op("Cos", [emb], "/rope_cos")
        sin = b.op("Sin", [emb], "/rope_sin")
        for i in range(o.layers):
            x = llama_layer(b, x, i, o, bias, cos, sin)
        x = rms_norm(b, x, b.weight("norm.weight", [h]), "/norm")
        w = b.weight("lm_head.weight", [o.vocab, h])
        head = b.op("Transpose", [w], "/lm_head/Transpose", perm=[1, 0])
    logits = b.op("MatMul", [x, head], "logits")
    graph = helper.make_graph(
        b.nodes, "%s_%dx%d" % (o.arch, o.layers, h),
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64,
                                       ["batch", "seq"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                       ["batch", "seq", o.vocab])],
        b.inits)
    model = helper.make_model(graph, producer_name="make_gpt_graph.py",
                              opset_imports=[helper.make_opsetid("", 17)])
    return model, b.offset // 4


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--preset", choices=sorted(PRESETS))
    ap.add_argument("--arch", choices=["gpt", "llama"])
    ap.add_argument("--layers", type=int)
    ap.add_argument("--hidden", type=int)
    ap.add_argument("--heads", type=int)
    ap.add_argument("--kv-heads", type=int)
    ap.add_argument("--ffn", type=int)
    ap.add_argument("--vocab", type=int)
    ap.add_argument("--max-pos", type=int)
    ap.add_argument("--dropout", type=float)
    o = ap.parse_args(argv)
    base = dict(arch="gpt", layers=2, hidden=64, heads=4, kv_heads=None,
                ffn=None, vocab=1000, max_pos=1024, dropout=None)
    base.update(PRESETS.get(o.preset, {}))
    for k, v in vars(o).items():
        if v is not None and k in base:
            base[k] = v
    out = o.out
    o = argparse.Namespace(**base)
    o.out = out
    if o.kv_heads is None:
        o.kv_heads = o.heads
    if o.ffn is None:
        o.ffn = 4 * o.hidden
    if o.dropout is None:  # GPT trains with dropout 0.1, Llama with none
        o.dropout = 0.1 if o.arch == "gpt" else 0.0
    if o.hidden % o.heads or o.heads % o.kv_heads or (o.hidden // o.heads) % 2:
        sys.exit("make_gpt_graph.py: hidden must divide into heads of an "
                 "even size, and heads into kv-heads")
    if o.arch == "gpt" and o.kv_heads != o.heads:
        sys.exit("make_gpt_graph.py: --kv-heads is for --arch llama")
    data_file = o.out.rsplit("/", 1)[-1] + ".weights.bin"
    model, params = build(o, data_file)
    onnx.save(model, o.out)
    print("%s: %s, %d layers, hidden %d, %d heads (%d kv), ffn %d, vocab %d: "
          "%d parameters (weights not written)" %
          (o.out, o.arch, o.layers, o.hidden, o.heads, o.kv_heads, o.ffn,
           o.vocab, params))


if __name__ == "__main__":
    main(sys.argv[1:])
