#!/usr/bin/python3
"""Writes a BERT encoder as ONNX Runtime's transformer optimizer leaves one (model_type "bert").

The optimizer's output for a BERT export (onnxruntime/transformers/fusion_*.py): the embeddings
and their LayerNorm fused into EmbedLayerNormalization (whose mask_index output, the number of
unmasked tokens per row, feeds every Attention); per layer Attention with the Q, K and V
projections packed into one [H, 3H] weight, the output projection a MatMul whose bias and the
residual add fold into SkipLayerNormalization, the MLP's first bias and GELU fused into BiasGelu,
the second MatMul's bias and residual into another SkipLayerNormalization. Inputs input_ids,
segment_ids and input_mask are int32 [batch_size, seq_len], as the optimizer makes them. Weights
are random: this checks structure and sizes, not a model's outputs.

Usage:
    ort_bert.py OUT.onnx [--layers 2] [--hidden 64] [--heads 4] [--vocab 100] [--max-pos 32]
        [--opset 12] [--seed 0]
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"


def build(layers=2, hidden=64, heads=4, vocab=100, max_pos=32, seed=0):
    """(nodes, initializers, inputs, outputs) with the optimizer's symbolic dims."""
    r = np.random.default_rng(seed)
    nodes, inits = [], []

    def w(name, *shape, scale=0.1):
        inits.append(numpy_helper.from_array((scale * r.standard_normal(shape)).astype(np.float32),
                                             name))
        return name

    def node(op, ins, outs, domain="", **kw):
        nodes.append(helper.make_node(op, ins, outs, domain=domain, **kw))
        return outs[0]

    x = node("EmbedLayerNormalization",
             ["input_ids", "segment_ids", w("word_embeddings", vocab, hidden),
              w("position_embeddings", max_pos, hidden), w("token_type_embeddings", 2, hidden),
              w("embeddings.LayerNorm.weight", hidden, scale=1.0),
              w("embeddings.LayerNorm.bias", hidden), "input_mask"],
             ["embed_out", "mask_index"], MS, epsilon=1e-12)
    for i in range(layers):
        p = f"encoder.layer.{i}"
        a = node("Attention", [x, w(p + ".attention.qkv.weight", hidden, 3 * hidden),
                               w(p + ".attention.qkv.bias", 3 * hidden), "mask_index"],
                 [p + "/attention_out"], MS, num_heads=heads)
        o = node("MatMul", [a, w(p + ".attention.output.dense.weight", hidden, hidden)],
                 [p + "/attention_dense"])
        x1 = node("SkipLayerNormalization",
                  [o, x, w(p + ".attention.output.LayerNorm.weight", hidden, scale=1.0),
                   w(p + ".attention.output.LayerNorm.bias", hidden),
                   w(p + ".attention.output.dense.bias", hidden)],
                  [p + "/attention_ln"], MS, epsilon=1e-12)
        m = node("MatMul", [x1, w(p + ".intermediate.dense.weight", hidden, 4 * hidden)],
                 [p + "/intermediate"])
        g = node("BiasGelu", [m, w(p + ".intermediate.dense.bias", 4 * hidden)],
                 [p + "/gelu"], MS)
        m2 = node("MatMul", [g, w(p + ".output.dense.weight", 4 * hidden, hidden)],
                  [p + "/output_dense"])
        x = node("SkipLayerNormalization",
                 [m2, x1, w(p + ".output.LayerNorm.weight", hidden, scale=1.0),
                  w(p + ".output.LayerNorm.bias", hidden), w(p + ".output.dense.bias", hidden)],
                 [p + "/output_ln"], MS, epsilon=1e-12)
    nodes[-1].output[0] = "last_hidden_state"
    dims = ["batch_size", "seq_len"]
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT32, dims)
              for n in ("input_ids", "segment_ids", "input_mask")]
    outputs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                             dims + [hidden])]
    return nodes, inits, inputs, outputs


def model(opset=12, **kw):
    nodes, inits, inputs, outputs = build(**kw)
    g = helper.make_graph(nodes, "ort_bert", inputs, outputs, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset),
                                            helper.make_opsetid(MS, 1)],
                          producer_name="ort_bert.py")
    m.ir_version = 7
    return m


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    for flag, default in (("layers", 2), ("hidden", 64), ("heads", 4), ("vocab", 100),
                          ("max-pos", 32), ("opset", 12), ("seed", 0)):
        ap.add_argument("--" + flag, type=int, default=default)
    a = ap.parse_args()
    onnx.save(model(opset=a.opset, layers=a.layers, hidden=a.hidden, heads=a.heads,
                    vocab=a.vocab, max_pos=a.max_pos, seed=a.seed), a.out)
