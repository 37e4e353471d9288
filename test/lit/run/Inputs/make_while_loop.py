#!/usr/bin/env python3
"""Writes DIR/model.onnx: a Loop without a trip count (ONNX's text parser
cannot write an empty input), so its body's condition alone ends it
(onnx.helper, independent of oomplan).

  make_while_loop.py DIR while     y = x doubled while i + 1 < 3 (3 times)
  make_while_loop.py DIR forever   the condition is passed through: never
                                   false, so unrolling cannot end
"""
import os
import sys

from onnx import TensorProto, helper

forever = sys.argv[2] == "forever"
f = TensorProto.FLOAT
nodes = [helper.make_node("Constant", [], ["two"], value=helper.make_tensor("", f, [], [2.0])),
         helper.make_node("Mul", ["xi", "two"], ["xo"])]
if forever:
    nodes.append(helper.make_node("Identity", ["ci"], ["co"]))
else:
    nodes += [helper.make_node("Constant", [], ["one"], value=helper.make_tensor("", TensorProto.INT64, [], [1])),
              helper.make_node("Constant", [], ["three"], value=helper.make_tensor("", TensorProto.INT64, [], [3])),
              helper.make_node("Add", ["i", "one"], ["i1"]),
              helper.make_node("Less", ["i1", "three"], ["co"])]
body = helper.make_graph(
    nodes, "body",
    [helper.make_tensor_value_info("i", TensorProto.INT64, []),
     helper.make_tensor_value_info("ci", TensorProto.BOOL, []),
     helper.make_tensor_value_info("xi", f, [2])],
    [helper.make_tensor_value_info("co", TensorProto.BOOL, []),
     helper.make_tensor_value_info("xo", f, [2])])
g = helper.make_graph(
    [helper.make_node("Constant", [], ["t"], value=helper.make_tensor("", TensorProto.BOOL, [], [True])),
     helper.make_node("Loop", ["", "t", "x"], ["y"], body=body)], "g",
    [helper.make_tensor_value_info("x", f, [2])],
    [helper.make_tensor_value_info("y", f, [2])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
with open(os.path.join(sys.argv[1], "model.onnx"), "wb") as out:
    out.write(m.SerializeToString())
