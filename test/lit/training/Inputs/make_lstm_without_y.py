"""Writes an LSTM whose Y output is omitted (only Y_h used, as ONNX allows):
x float[5, 3, 4], W [2, 32, 4] and R [2, 32, 8] packed by Concat from the two
directions' weights (as PyTorch's exporter packs them), hidden size 8."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

inits = [numpy_helper.from_array(np.full(s, 0.5, np.float32), n) for n, s in
         [("wf", (1, 32, 4)), ("wr", (1, 32, 4)), ("rf", (1, 32, 8)), ("rr", (1, 32, 8))]]
nodes = [helper.make_node("Concat", ["wf", "wr"], ["w"], axis=0),
         helper.make_node("Concat", ["rf", "rr"], ["r"], axis=0),
         helper.make_node("LSTM", ["x", "w", "r"], ["", "h", "c"], hidden_size=8,
                          direction="bidirectional")]
g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 3, 4])],
                      [helper.make_tensor_value_info("h", TensorProto.FLOAT, [2, 3, 8])], inits)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
