#!/usr/bin/env python3
"""Converts a float32 ONNX model to float16 (or bfloat16): every float
tensor of the graph becomes the smaller type, as a model exported with
`model.half()` would be.

    /usr/bin/python3 utils/export/to_float16.py IN.onnx OUT.onnx [--bfloat16]

What changes: float initializers (values converted; an external one keeps
its location with its length halved, so a weightless test model stays
weightless), the float graph inputs, outputs and value_info, Cast and
EyeLike targets of float, float Constant and ConstantOfShape values.
What stays float: the inputs ONNX types apart from the data, whatever
feeds them (Resize/Upsample scales and roi; the scale of
DequantizeLinear...) when they are initializers or constants.
This is a test utility (the fp16 runtime checks, docs/float16.md), not a
general converter: a float computed from other values for such an input
(a Cast to float that feeds Resize's scales) is converted too, and the
checker would then refuse the model.
"""
import argparse
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FLOAT = TensorProto.FLOAT
# (op type, input index): typed apart from the data, so kept as they are.
KEEP_INPUTS = {("Resize", 1), ("Resize", 2), ("Upsample", 1)}


def bf16_bits(a):
    """Round-to-nearest-even bfloat16 bits of float32 array a."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(a)
    rounded[nan] = 0x7FC0
    return rounded


def convert_tensor(t, target):
    if t.data_type != FLOAT:
        return
    if t.data_location == TensorProto.EXTERNAL:
        for kv in t.external_data:
            if kv.key == "length":
                kv.value = str(int(kv.value) // 2)
        t.data_type = target
        return
    a = numpy_helper.to_array(t)
    if target == TensorProto.FLOAT16:
        n = numpy_helper.from_array(a.astype(np.float16), t.name)
    else:
        n = TensorProto()
        n.name = t.name
        n.dims.extend(a.shape)
        n.data_type = TensorProto.BFLOAT16
        n.raw_data = bf16_bits(a).tobytes()
    t.CopyFrom(n)


def convert_type(tp, target):
    if tp.HasField("tensor_type") and tp.tensor_type.elem_type == FLOAT:
        tp.tensor_type.elem_type = target


def convert_graph(g, target, keep):
    for t in g.initializer:
        if t.name not in keep:
            convert_tensor(t, target)
    for v in list(g.input) + list(g.output) + list(g.value_info):
        if v.name not in keep:
            convert_type(v.type, target)
    for n in g.node:
        kept_out = any(o in keep for o in n.output)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                convert_graph(a.g, target, keep)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for sg in a.graphs:
                    convert_graph(sg, target, keep)
            elif kept_out:
                continue
            elif a.name == "to" and n.op_type == "Cast" and a.i == FLOAT:
                a.i = target
            elif a.name == "dtype" and a.i == FLOAT and n.op_type in (
                    "EyeLike", "RandomNormal", "RandomUniform",
                    "RandomNormalLike", "RandomUniformLike"):
                a.i = target
            elif a.type == onnx.AttributeProto.TENSOR and n.op_type in (
                    "Constant", "ConstantOfShape"):
                convert_tensor(a.t, target)
            elif a.name == "value_float" and n.op_type == "Constant":
                t = numpy_helper.from_array(np.array(a.f, dtype=np.float32))
                convert_tensor(t, target)
                a.CopyFrom(helper.make_attribute("value", t))


def kept_names(g):
    keep = set()
    for n in g.node:
        for i, name in enumerate(n.input):
            if (n.op_type, i) in KEEP_INPUTS and name:
                keep.add(name)
    return keep


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--bfloat16", action="store_true",
                   help="convert to bfloat16 instead of float16")
    a = p.parse_args()
    m = onnx.load(a.input, load_external_data=False)
    target = TensorProto.BFLOAT16 if a.bfloat16 else TensorProto.FLOAT16
    convert_graph(m.graph, target, kept_names(m.graph))
    onnx.save(m, a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
