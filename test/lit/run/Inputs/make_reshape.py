#!/usr/bin/env python3
"""Writes DIR/model.onnx: y = Reshape(x, shape) with both graph inputs, as
ONNX's node tests feed a Reshape target (onnx.helper, independent of
oomplan)."""
import os
import sys

from onnx import TensorProto, helper

g = helper.make_graph(
    [helper.make_node("Reshape", ["x", "shape"], ["y"])], "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
     helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
with open(os.path.join(sys.argv[1], "model.onnx"), "wb") as f:
    f.write(m.SerializeToString())
