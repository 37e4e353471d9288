#!/usr/bin/python3
"""Writes a model whose only weights are one MatMulNBits' (ONNX Runtime's
com.microsoft op), laid out as ONNX Runtime's quantizer writes them: B uint8
[N, blocks, blob], scales float [N * blocks], zero points (--zp) uint8 [N *
ceil(blocks * bits / 8)]. The weights are external references to a file that
is never written (a weights-stripped model): oomplan sizes them from their
dims and never reads them.

Usage: make_nbits.py OUT.onnx K N BITS BLOCK [--zp]
A is float [batch, seq, K], Y float [batch, seq, N].
"""
import argparse

from onnx import TensorProto, helper, save

p = argparse.ArgumentParser()
p.add_argument("out")
p.add_argument("K", type=int)
p.add_argument("N", type=int)
p.add_argument("bits", type=int)
p.add_argument("block", type=int)
p.add_argument("--zp", action="store_true")
a = p.parse_args()

blocks = (a.K + a.block - 1) // a.block
blob = a.block * a.bits // 8
offset = 0


def external(name, data_type, dims, itemsize):
    global offset
    t = TensorProto(name=name, data_type=data_type, dims=dims,
                    data_location=TensorProto.EXTERNAL)
    length = itemsize
    for d in dims:
        length *= d
    for k, v in (("location", "weights.bin"), ("offset", str(offset)), ("length", str(length))):
        e = t.external_data.add()
        e.key, e.value = k, v
    offset += length
    return t


inits = [external("B", TensorProto.UINT8, [a.N, blocks, blob], 1),
         external("scales", TensorProto.FLOAT, [a.N * blocks], 4)]
inputs = ["A", "B", "scales"]
if a.zp:
    inits.append(external("zero_points", TensorProto.UINT8,
                          [a.N * ((blocks * a.bits + 7) // 8)], 1))
    inputs.append("zero_points")
node = helper.make_node("MatMulNBits", inputs, ["Y"], domain="com.microsoft",
                        K=a.K, N=a.N, bits=a.bits, block_size=a.block)
graph = helper.make_graph(
    [node], "nbits",
    [helper.make_tensor_value_info("A", TensorProto.FLOAT, ["batch", "seq", a.K])],
    [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", "seq", a.N])],
    inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                helper.make_opsetid("com.microsoft", 1)])
model.ir_version = 8
save(model, a.out)
