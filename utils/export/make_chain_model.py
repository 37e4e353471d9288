#!/usr/bin/python3
"""Write a long chain model for the placement scaling benchmark.

Usage: make_chain_model.py NODES OUT.onnx [--dim D]

Builds x[batch, D] -> node 0 -> node 1 -> ... -> y with NODES nodes that
alternate MatMul (weight W_i of shape [D, D]) and Add (bias b_i of shape
[D]), so every node has its own weight initializer, as in the training chain
benchmark (docs/benchmarks.md). The weights are declared as external data in a file that is
never written: oomplan only needs their shapes and never reads weight data,
so a 100,000-node model stays a few megabytes. The batch dimension is the
symbol `batch` (bind it with --batch).
"""
import argparse

import onnx
from onnx import TensorProto, helper


def external_weight(name, dims):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    entry = t.external_data.add()
    entry.key = "location"
    entry.value = "chain-weights.bin"
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("nodes", type=int)
    ap.add_argument("out")
    ap.add_argument("--dim", type=int, default=256)
    args = ap.parse_args()
    d = args.dim
    nodes, inits = [], []
    prev = "x"
    for i in range(args.nodes):
        out = "y" if i == args.nodes - 1 else "h%d" % i
        if i % 2 == 0:
            w = "w%d" % i
            inits.append(external_weight(w, [d, d]))
            nodes.append(helper.make_node("MatMul", [prev, w], [out], name="mm%d" % i))
        else:
            b = "b%d" % i
            inits.append(external_weight(b, [d]))
            nodes.append(helper.make_node("Add", [prev, b], [out], name="add%d" % i))
        prev = out
    graph = helper.make_graph(
        nodes, "chain%d" % args.nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", d])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", d])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    with open(args.out, "wb") as f:
        f.write(model.SerializeToString())


if __name__ == "__main__":
    main()
