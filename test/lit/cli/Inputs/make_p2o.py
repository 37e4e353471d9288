#!/usr/bin/env python3
"""Writes a tiny binary ONNX model whose dims carry exporter-generated names.

Usage: make_p2o.py OUT.onnx [stride]

x: float[p2o.DynamicDimension.0, 3, p2o.DynamicDimension.1,
         p2o.DynamicDimension.2]
y = Conv(x, w) with w: float[8, 3, 3, 3], pads 1, strides STRIDE (default 1)
y: float[p2o.DynamicDimension.3, 8, p2o.DynamicDimension.4,
         p2o.DynamicDimension.5]   (stride 1)
   float[p2o.DynamicDimension.0, 8, p2o.DynamicDimension.1,
         p2o.DynamicDimension.5]   (stride 2: dim 2 declared as x's H)

Paddle2ONNX names dims this way; the ONNX text format cannot spell them, and
the onnx package is not a test dependency, so the protobuf is encoded here by
hand (field numbers from onnx.proto).
"""
import struct
import sys


def varint(n):
    out = b""
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(num, wire, payload):
    key = varint((num << 3) | wire)
    if wire == 0:
        return key + varint(payload)
    return key + varint(len(payload)) + payload


def s(num, text):
    return field(num, 2, text.encode() if isinstance(text, str) else text)


def dim(d):
    return s(1, field(1, 0, d) if isinstance(d, int) else s(2, d))


def value_info(name, dims):
    shape = b"".join(dim(d) for d in dims)
    tensor_type = field(1, 0, 1) + s(2, shape)  # elem_type FLOAT, shape
    return s(1, name) + s(2, s(1, tensor_type))


def main():
    out = sys.argv[1]
    stride = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    P = "p2o.DynamicDimension."
    x = value_info("x", [P + "0", 3, P + "1", P + "2"])
    if stride == 1:
        y = value_info("y", [P + "3", 8, P + "4", P + "5"])
    else:
        y = value_info("y", [P + "0", 8, P + "1", P + "5"])
    w = (b"".join(field(1, 0, d) for d in (8, 3, 3, 3)) + field(2, 0, 1) +
         s(8, "w") + s(9, struct.pack("<216f", *([0.0] * 216))))
    ints = lambda name, vals: s(1, name) + b"".join(field(8, 0, v) for v in vals) \
        + field(20, 0, 7)
    node = (s(1, "x") + s(1, "w") + s(2, "y") + s(3, "conv") + s(4, "Conv") +
            s(5, ints("pads", [1, 1, 1, 1])) + s(5, ints("strides", [stride, stride])))
    graph = s(1, node) + s(2, "p2o") + s(5, w) + s(11, x) + s(12, y)
    model = field(1, 0, 8) + s(8, s(1, "") + field(2, 0, 17)) + s(7, graph)
    with open(out, "wb") as f:
        f.write(model)


if __name__ == "__main__":
    main()
