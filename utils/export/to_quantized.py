#!/usr/bin/env python3
"""Converts a float32 ONNX model to a quantized one in the forms ONNX
Runtime's quantizers write, for the CUDA quantized kernels' checks on real
graph sizes (gpu-check's section 5c).

    /usr/bin/python3 utils/export/to_quantized.py IN.onnx OUT.onnx --dynamic
    /usr/bin/python3 utils/export/to_quantized.py IN.onnx OUT.onnx --qoperator

--dynamic (quantize_dynamic's pattern): each MatMul whose B is a 2-D float
  initializer becomes DynamicQuantizeLinear(A) -> MatMulInteger(Aq, Bq, Az,
  Bz) -> Cast to float -> Mul by (A's scale x B's scale).
--qoperator (the QOperator format, each convolution apart): each Conv whose
  W is a float initializer becomes QuantizeLinear(X) -> QLinearConv (int8 W,
  int32 bias) -> DequantizeLinear.

Weights: an external float initializer (a weightless model, as test/models)
becomes an external int8 (W) or int32 (bias) one at the same location, its
length scaled, so the model stays weightless (oomplan-run --random-weights
gives 8-bit weights every byte value, biases zero); a present one is
quantized symmetrically per tensor. B's and W's scale: the --random-weights
float bound sqrt(6 / F) over 127, so that the quantized products are of the
float model's size; activations: scale 0.05, zero point 128 (uint8).
This is a test utility, not a quantizer: the scales are not calibrated.
"""
import argparse
import math

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ACT_SCALE, ACT_ZERO = 0.05, 128


def weight_scale(dims):
    """sqrt(6 / F) / 127: fillRandomWeight's bound (F the larger of dims[0]
    and the product of the rest) over int8's range."""
    rest = int(np.prod(dims[1:])) if len(dims) > 1 else 1
    return math.sqrt(6.0 / max(dims[0], rest, 1)) / 127.0


def requantized(t, to_type, scale, name):
    """Initializer t (float) as to_type (INT8 or INT32) at scale: external
    stays external with its length scaled; present values are quantized."""
    n = TensorProto()
    n.name = name
    n.dims.extend(t.dims)
    n.data_type = to_type
    width = 1 if to_type == TensorProto.INT8 else 4
    if t.data_location == TensorProto.EXTERNAL:
        n.data_location = TensorProto.EXTERNAL
        for kv in t.external_data:
            e = n.external_data.add()
            e.key, e.value = kv.key, kv.value
            if kv.key == "length":
                e.value = str(int(kv.value) // 4 * width)
        return n
    a = numpy_helper.to_array(t).astype(np.float64) / scale
    if to_type == TensorProto.INT8:
        q = np.clip(np.rint(a), -127, 127).astype(np.int8)
    else:
        q = np.rint(a).astype(np.int32)
    n.CopyFrom(numpy_helper.from_array(q, name))
    return n


def scalar(name, value, dtype):
    return numpy_helper.from_array(np.array(value, dtype=dtype), name)


def dynamic(g, inits):
    nodes, added = [], []
    for n in g.node:
        b = inits.get(n.input[1]) if n.op_type == "MatMul" else None
        if b is None or len(b.dims) != 2 or b.data_type != TensorProto.FLOAT:
            nodes.append(n)
            continue
        p = n.name or n.output[0]
        s = weight_scale(list(b.dims))
        added += [requantized(b, TensorProto.INT8, s, p + "_Bq"),
                  scalar(p + "_Bs", s, np.float32),
                  scalar(p + "_Bz", 0, np.int8)]
        nodes += [
            helper.make_node("DynamicQuantizeLinear", [n.input[0]],
                             [p + "_Aq", p + "_As", p + "_Az"]),
            helper.make_node("MatMulInteger",
                             [p + "_Aq", p + "_Bq", p + "_Az", p + "_Bz"],
                             [p + "_acc"]),
            helper.make_node("Cast", [p + "_acc"], [p + "_accf"],
                             to=TensorProto.FLOAT),
            helper.make_node("Mul", [p + "_As", p + "_Bs"], [p + "_scale"]),
            helper.make_node("Mul", [p + "_accf", p + "_scale"], n.output),
        ]
    return nodes, added


def qoperator(g, inits):
    nodes, added = [], []
    for n in g.node:
        w = inits.get(n.input[1]) if n.op_type == "Conv" else None
        if w is None or w.data_type != TensorProto.FLOAT:
            nodes.append(n)
            continue
        p = n.name or n.output[0]
        s = weight_scale(list(w.dims))
        ins = [p + "_Xq", p + "_Xs", p + "_Xz", p + "_Wq", p + "_Ws",
               p + "_Wz", p + "_Ys", p + "_Yz"]
        added += [scalar(p + "_Xs", ACT_SCALE, np.float32),
                  scalar(p + "_Xz", ACT_ZERO, np.uint8),
                  requantized(w, TensorProto.INT8, s, p + "_Wq"),
                  scalar(p + "_Ws", s, np.float32),
                  scalar(p + "_Wz", 0, np.int8),
                  scalar(p + "_Ys", ACT_SCALE, np.float32),
                  scalar(p + "_Yz", ACT_ZERO, np.uint8)]
        if len(n.input) > 2 and n.input[2] in inits:
            added.append(requantized(inits[n.input[2]], TensorProto.INT32,
                                     ACT_SCALE * s, p + "_B"))
            ins.append(p + "_B")
        conv = helper.make_node("QLinearConv", ins, [p + "_Yq"])
        conv.attribute.extend(n.attribute)
        nodes += [
            helper.make_node("QuantizeLinear", [n.input[0], p + "_Xs", p + "_Xz"],
                             [p + "_Xq"]),
            conv,
            helper.make_node("DequantizeLinear", [p + "_Yq", p + "_Ys", p + "_Yz"],
                             n.output),
        ]
    return nodes, added


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("output")
    form = ap.add_mutually_exclusive_group(required=True)
    form.add_argument("--dynamic", action="store_true")
    form.add_argument("--qoperator", action="store_true")
    a = ap.parse_args()
    m = onnx.load(a.input, load_external_data=False)
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    nodes, added = (dynamic if a.dynamic else qoperator)(g, inits)
    used = {i for n in nodes for i in n.input}
    kept = [t for t in g.initializer if t.name in used]
    del g.node[:]
    g.node.extend(nodes)
    del g.initializer[:]
    g.initializer.extend(kept + added)
    del g.value_info[:]  # the rewritten values' types are inferred again
    converted = sum(1 for n in nodes
                    if n.op_type in ("MatMulInteger", "QLinearConv"))
    onnx.save(m, a.output)
    print(f"to_quantized: {converted} "
          f"{'MatMul' if a.dynamic else 'Conv'}s quantized into {a.output}")


if __name__ == "__main__":
    main()
