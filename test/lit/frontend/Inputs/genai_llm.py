#!/usr/bin/python3
"""Writes a decoder as ONNX Runtime's GenAI model builder writes an int4 Llama for the CPU.

The ops and their wiring follow the builder's output (onnxruntime-genai, builder.py, for
"int4" on "cpu"): the embedding a float Gather; per layer SimplifiedLayerNormalization (the first)
or SkipSimplifiedLayerNormalization (the rest, the residual sum as output 3), q/k/v/o and the
MLP's gate/up/down as MatMulNBits (4 bits, blocks of 32, asymmetric: packed zero points),
GroupQueryAttention with rotary from cos/sin caches and the KV cache as past_key_values.N.key
/ .value [batch_size, kv_heads, past_sequence_length, head_size]; seqlens_k = ReduceSum(mask) - 1
and total_sequence_length = Shape(mask)[1], both int32; SiLU as x * Sigmoid(x); a final
SkipSimplifiedLayerNormalization and a MatMulNBits lm_head. No weights were copied from a
model: they are random, so this checks structure and sizes, not a model's outputs.

Usage:
    genai_llm.py OUT.onnx [--layers 2] [--hidden 64] [--heads 4] [--kv-heads 2]
        [--inter 128] [--vocab 100] [--max-len 64] [--seed 0] [--external]
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"
BLOCK, BITS = 32, 4
TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.uint8): TensorProto.UINT8}


def _pack4(q):
    """Packs 4-bit values along the last axis, low nibble first."""
    q = q.astype(np.uint8)
    return (q[..., 0::2] | (q[..., 1::2] << 4)).astype(np.uint8)


class Weights:
    """Initializers: random values, or (external) only dims and a reference to a weights file
    that is never written, as a weights-stripped model has; oomplan never reads it."""

    def __init__(self, r, external):
        self.r, self.external, self.offset, self.list = r, external, 0, []

    def add(self, name, make, shape, dtype):
        if not self.external:
            self.list.append(numpy_helper.from_array(make(), name))
            return name
        t = TensorProto(name=name, data_type=TYPES[np.dtype(dtype)], dims=list(shape),
                        data_location=TensorProto.EXTERNAL)
        length = int(np.prod(shape)) * np.dtype(dtype).itemsize
        for k, v in (("location", "weights.bin"), ("offset", str(self.offset)),
                     ("length", str(length))):
            e = t.external_data.add()
            e.key, e.value = k, v
        self.offset += length
        self.list.append(t)
        return name


def nbits_weight(r, name, k, n, w):
    """B, scales and zero points of a 4-bit [k -> n] MatMulNBits; returns its input names."""
    blocks = (k + BLOCK - 1) // BLOCK
    zb = (blocks + 1) // 2
    return [w.add(name + ".qweight", lambda: _pack4(r.integers(0, 16, (n, blocks, BLOCK))),
                  (n, blocks, BLOCK // 2), np.uint8),
            w.add(name + ".scales",
                  lambda: (r.random(n * blocks) * 0.02 + 0.005).astype(np.float32),
                  (n * blocks,), np.float32),
            w.add(name + ".qzeros",
                  lambda: _pack4(r.integers(0, 16, (n, 2 * zb))).reshape(-1), (n * zb,),
                  np.uint8)]


def build(layers=2, hidden=64, heads=4, kv_heads=2, inter=128, vocab=100, max_len=64, seed=0,
          accuracy_level=4, external=False):
    """(nodes, initializers, inputs, outputs) of the decoder; inputs and outputs as value infos
    with the builder's symbolic dims. accuracy_level 4 (the builder's for the CPU) lets ONNX
    Runtime multiply in int8; 0 asks for float, which oomplan's kernel always computes in."""
    r = np.random.default_rng(seed)
    d = hidden // heads
    nodes = []
    w = Weights(r, external)

    def node(op, ins, outs, domain="", **kw):
        nodes.append(helper.make_node(op, ins, outs, domain=domain, **kw))
        return outs[0]

    def mm(x, name, k, n):
        return node("MatMulNBits", [x] + nbits_weight(r, name, k, n, w), [name + "/out"], MS,
                    K=k, N=n, bits=BITS, block_size=BLOCK, accuracy_level=accuracy_level)

    def norm_weight(name):
        return w.add(name, lambda: (1 + 0.1 * r.standard_normal(hidden)).astype(np.float32),
                     (hidden,), np.float32)

    w.add("model.embed_tokens.weight",
          lambda: (0.1 * r.standard_normal((vocab, hidden))).astype(np.float32),
          (vocab, hidden), np.float32)
    w.list.append(numpy_helper.from_array(np.array([1], np.int64), "one"))
    ang = np.outer(np.arange(max_len), 1.0 / 10000 ** (np.arange(0, d, 2) / d))
    w.add("cos_cache", lambda: np.cos(ang).astype(np.float32), (max_len, d // 2), np.float32)
    w.add("sin_cache", lambda: np.sin(ang).astype(np.float32), (max_len, d // 2), np.float32)
    node("ReduceSum", ["attention_mask", "one"], ["mask_sum"], keepdims=0)
    node("Sub", ["mask_sum", "one"], ["seqlens64"])
    node("Cast", ["seqlens64"], ["seqlens_k"], to=TensorProto.INT32)
    node("Shape", ["attention_mask"], ["mask_shape"])
    node("Gather", ["mask_shape", "one"], ["total64"], axis=0)
    node("Cast", ["total64"], ["total_seq_len"], to=TensorProto.INT32)
    x = node("Gather", ["model.embed_tokens.weight", "input_ids"], ["embed"])
    skip = None
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64,
                                            ["batch_size", "sequence_length"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64,
                                            ["batch_size", "total_sequence_length"])]
    outputs = []
    for i in range(layers):
        pre = f"model.layers.{i}"
        if skip is None:
            h = node("SimplifiedLayerNormalization", [x, norm_weight(pre + ".input_layernorm")],
                     [pre + "/ln"], epsilon=1e-5)
            residual = x
        else:
            h, _, _, residual = (
                node("SkipSimplifiedLayerNormalization",
                     [x, skip, norm_weight(pre + ".input_layernorm")],
                     [pre + "/ln", "", "", pre + "/residual"], MS, epsilon=1e-5),
                None, None, pre + "/residual")
        q = mm(h, pre + ".attn.q_proj", hidden, heads * d)
        k = mm(h, pre + ".attn.k_proj", hidden, kv_heads * d)
        v = mm(h, pre + ".attn.v_proj", hidden, kv_heads * d)
        past_k, past_v = f"past_key_values.{i}.key", f"past_key_values.{i}.value"
        pres_k, pres_v = f"present.{i}.key", f"present.{i}.value"
        for name in (past_k, past_v):
            inputs.append(helper.make_tensor_value_info(
                name, TensorProto.FLOAT, ["batch_size", kv_heads, "past_sequence_length", d]))
        for name in (pres_k, pres_v):
            outputs.append(helper.make_tensor_value_info(
                name, TensorProto.FLOAT, ["batch_size", kv_heads, "total_sequence_length", d]))
        attn = node("GroupQueryAttention",
                    [q, k, v, past_k, past_v, "seqlens_k", "total_seq_len", "cos_cache",
                     "sin_cache"], [pre + "/attn", pres_k, pres_v], MS,
                    num_heads=heads, kv_num_heads=kv_heads, do_rotary=1)
        o = mm(attn, pre + ".attn.o_proj", heads * d, hidden)
        h2, _, _, residual2 = (
            node("SkipSimplifiedLayerNormalization",
                 [o, residual, norm_weight(pre + ".post_attention_layernorm")],
                 [pre + "/post_ln", "", "", pre + "/residual2"], MS, epsilon=1e-5),
            None, None, pre + "/residual2")
        gate = mm(h2, pre + ".mlp.gate_proj", hidden, inter)
        up = mm(h2, pre + ".mlp.up_proj", hidden, inter)
        sig = node("Sigmoid", [gate], [pre + "/sig"])
        act = node("Mul", [gate, sig], [pre + "/act"])
        prod = node("Mul", [act, up], [pre + "/prod"])
        x = mm(prod, pre + ".mlp.down_proj", inter, hidden)
        skip = residual2
    final = node("SkipSimplifiedLayerNormalization", [x, skip, norm_weight("model.norm")],
                 ["final_norm"], MS, epsilon=1e-5)
    mm(final, "lm_head", hidden, vocab)
    nodes[-1].output[0] = "logits"
    outputs.insert(0, helper.make_tensor_value_info(
        "logits", TensorProto.FLOAT, ["batch_size", "sequence_length", vocab]))
    return nodes, w.list, inputs, outputs


def model(**kw):
    nodes, inits, inputs, outputs = build(**kw)
    g = helper.make_graph(nodes, "genai_llm", inputs, outputs, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21),
                                            helper.make_opsetid(MS, 1)],
                          producer_name="genai_llm.py")
    m.ir_version = 10
    return m


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    for flag, default in (("layers", 2), ("hidden", 64), ("heads", 4), ("kv-heads", 2),
                          ("inter", 128), ("vocab", 100), ("max-len", 64), ("seed", 0)):
        ap.add_argument("--" + flag, type=int, default=default)
    ap.add_argument("--external", action="store_true",
                    help="weights as references to a file never written (a stripped model)")
    ap.add_argument("--inputs", metavar="DIR",
                    help="also write DIR/input_<i>.pb for a call of --batch rows of --seq new "
                         "tokens after a cache of --past (all attended: a mask of ones; --past 0 writes a cache "
                         "of one row, which the first prompt ignores)")
    for flag in ("batch", "seq", "past"):
        ap.add_argument("--" + flag, type=int, default=1)
    a = ap.parse_args()
    m = model(layers=a.layers, hidden=a.hidden, heads=a.heads, kv_heads=a.kv_heads,
              inter=a.inter, vocab=a.vocab, max_len=a.max_len, seed=a.seed,
              external=a.external)
    onnx.save(m, a.out)
    if a.inputs:
        import os
        from onnx import numpy_helper
        os.makedirs(a.inputs, exist_ok=True)
        r = np.random.default_rng(a.seed + 1)
        d = a.hidden // a.heads
        for i, vi in enumerate(m.graph.input):
            if vi.name == "input_ids":
                arr = r.integers(0, a.vocab, (a.batch, a.seq), dtype=np.int64)
            elif vi.name == "attention_mask":
                arr = np.ones((a.batch, a.past + a.seq), dtype=np.int64)
            else:
                # --past 0, the first prompt: one row the attention ignores, since
                # oomplan binds a symbolic dim to 1 or more.
                rows = max(a.past, 1)
                arr = (r.standard_normal((a.batch, a.kv_heads, rows, d)) * 0.5).astype(np.float32)
            with open(os.path.join(a.inputs, f"input_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(arr, vi.name).SerializeToString())
