#!/usr/bin/env python3
"""Writes a decoder-only LLM of opset 24 with LAYERS layers (tiny widths): per layer
RMSNormalization, q/k/v MatMuls, RotaryEmbedding (3-D, num_heads), grouped-query Attention with a
bool mask and is_causal, the output projection, a residual, RMSNormalization and a SwiGLU MLP
(Swish). No value_info: every function op's inputs are known to the importer only through its
shape queries.

  deep_llm.py OUT.onnx LAYERS
"""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

out, layers = sys.argv[1], int(sys.argv[2])
H, KV, D, V = 4, 2, 8, 50
E = H * D


def w(name, *shape):
    return numpy_helper.from_array(np.full(shape, 0.01, dtype=np.float32), name)


N = helper.make_node
nodes = [N("Gather", ["emb", "ids"], ["h0"])]
inits = [w("emb", V, E), w("cos", 64, D // 2), w("sin", 64, D // 2)]
h = "h0"
for i in range(layers):
    p = f"l{i}_"
    inits += [w(p + "g1", E), w(p + "wq", E, E), w(p + "wk", E, KV * D), w(p + "wv", E, KV * D),
              w(p + "wo", E, E), w(p + "g2", E), w(p + "w1", E, 2 * E), w(p + "w3", E, 2 * E),
              w(p + "w2", 2 * E, E)]
    nodes += [
        N("RMSNormalization", [h, p + "g1"], [p + "n1"]),
        N("MatMul", [p + "n1", p + "wq"], [p + "q"]),
        N("MatMul", [p + "n1", p + "wk"], [p + "k"]),
        N("MatMul", [p + "n1", p + "wv"], [p + "v"]),
        N("RotaryEmbedding", [p + "q", "cos", "sin", "pos"], [p + "qr"], num_heads=H),
        N("RotaryEmbedding", [p + "k", "cos", "sin", "pos"], [p + "kr"], num_heads=KV),
        N("Attention", [p + "qr", p + "kr", p + "v", "mask"], [p + "a"], q_num_heads=H,
          kv_num_heads=KV, is_causal=1),
        N("MatMul", [p + "a", p + "wo"], [p + "o"]),
        N("Add", [h, p + "o"], [p + "h1"]),
        N("RMSNormalization", [p + "h1", p + "g2"], [p + "n2"]),
        N("MatMul", [p + "n2", p + "w1"], [p + "f1"]),
        N("Swish", [p + "f1"], [p + "s"]),
        N("MatMul", [p + "n2", p + "w3"], [p + "f3"]),
        N("Mul", [p + "s", p + "f3"], [p + "m"]),
        N("MatMul", [p + "m", p + "w2"], [p + "f2"]),
        N("Add", [p + "h1", p + "f2"], [p + "h2"]),
    ]
    h = p + "h2"
inits += [w("gf", E), w("lm", E, V)]
nodes += [N("RMSNormalization", [h, "gf"], ["nf"]), N("MatMul", ["nf", "lm"], ["logits"])]
graph = helper.make_graph(
    nodes, "deep_llm",
    [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "seq"]),
     helper.make_tensor_value_info("pos", TensorProto.INT64, ["batch", "seq"]),
     helper.make_tensor_value_info("mask", TensorProto.BOOL, ["batch", 1, 1, "seq"])],
    [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "seq", V])],
    initializer=inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
model.ir_version = 10
with open(out, "wb") as f:
    f.write(model.SerializeToString())
