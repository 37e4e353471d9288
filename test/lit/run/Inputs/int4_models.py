#!/usr/bin/python3
"""Writes the int4 models of test/lit/run/int4-weights.test into DIR.

  qdq.onnx:       y = x [b, 4096] @ DequantizeLinear(W int4 [4096, 4096], blocks of 32 along
                  axis 0, float scales [128, 4096], int4 zero points [128, 4096]); the three
                  initializers external references to a file never written (a stripped model).
  transpose.onnx: an int4 [4, 6] weight transposed before its DequantizeLinear.
  input.onnx:     an int4 graph input dequantized.
int4 is ONNX type 22; this image's onnx package (1.12) predates it, so the numbers are written as
such.
"""
import os
import sys

import onnx
from onnx import TensorProto, helper

INT4 = 22


def external(name, data_type, dims, nbytes, offset):
    t = TensorProto(name=name, data_type=data_type, dims=dims,
                    data_location=TensorProto.EXTERNAL)
    for k, v in (("location", "weights.bin"), ("offset", str(offset)), ("length", str(nbytes))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def save(graph, path):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    onnx.save(m, path)


def main(out):
    os.makedirs(out, exist_ok=True)
    w = external("w", INT4, [4096, 4096], 4096 * 4096 // 2, 0)
    s = external("s", TensorProto.FLOAT, [128, 4096], 128 * 4096 * 4, 8388608)
    z = external("z", INT4, [128, 4096], 128 * 4096 // 2, 8388608 + 2097152)
    save(helper.make_graph(
        [helper.make_node("DequantizeLinear", ["w", "s", "z"], ["wf"], axis=0, block_size=32),
         helper.make_node("MatMul", ["x", "wf"], ["y"])], "qdq",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", 4096])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["b", 4096])],
        initializer=[w, s, z]), os.path.join(out, "qdq.onnx"))
    small = TensorProto(name="w", data_type=INT4, dims=[4, 6], raw_data=bytes(range(12)))
    save(helper.make_graph(
        [helper.make_node("Transpose", ["w"], ["wt"]),
         helper.make_node("DequantizeLinear", ["wt", "sc"], ["y"])], "transpose", [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [6, 4])],
        initializer=[small, helper.make_tensor("sc", TensorProto.FLOAT, [], [0.5])]),
        os.path.join(out, "transpose.onnx"))
    q = helper.make_tensor_value_info("q", TensorProto.FLOAT, [8])
    q.type.tensor_type.elem_type = INT4
    save(helper.make_graph(
        [helper.make_node("DequantizeLinear", ["q", "sc"], ["y"])], "input", [q],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8])],
        initializer=[helper.make_tensor("sc", TensorProto.FLOAT, [], [0.5])]),
        os.path.join(out, "input.onnx"))


if __name__ == "__main__":
    main(sys.argv[1])
