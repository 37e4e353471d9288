#!/usr/bin/env python3
"""Writes DIR/model.onnx, y = x + w, with w = [1, 2, 3, 4] (float32) stored
as external data at offset 8 of DIR/LOCATION (LENGTH bytes of it), through
onnx.helper, independent of oomplan.

  make_external.py DIR LOCATION [TRUNCATE]   TRUNCATE: write only 12 bytes
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

d, loc = sys.argv[1], sys.argv[2]
w = np.array([1, 2, 3, 4], np.float32).tobytes()
data = b"\0" * 8 + w
if len(sys.argv) > 3:
    data = data[:12]
if not loc.startswith(".."):
    with open(os.path.join(d, loc), "wb") as f:
        f.write(data)
init = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4])
init.data_location = TensorProto.EXTERNAL
for k, v in (("location", loc), ("offset", "8"), ("length", "16")):
    e = init.external_data.add()
    e.key, e.value = k, v
g = helper.make_graph(
    [helper.make_node("Add", ["x", "w"], ["y"])], "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [init])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
with open(os.path.join(d, "model.onnx"), "wb") as f:
    f.write(m.SerializeToString())
