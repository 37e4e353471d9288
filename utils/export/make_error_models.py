#!/usr/bin/env python3
"""Writes the binary models the error tests need into test/lit/errors/Inputs.

The ONNX text format cannot express external data, so these are made with
Debian's python3-onnx (run with /usr/bin/python3) and committed; rerun this
script to regenerate them byte for byte.
"""
import os
import onnx
from onnx import TensorProto, helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test", "lit", "errors", "Inputs")


def model_with_external(location, name):
    w = TensorProto()
    w.name = "w"
    w.data_type = TensorProto.FLOAT
    w.dims.extend([1024, 1024])
    w.data_location = TensorProto.EXTERNAL
    e = w.external_data.add()
    e.key = "location"
    e.value = location
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 1024])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 1024])
    node = helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")
    graph = helper.make_graph([node], name, [x], [y], initializer=[w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())


def model_with_raw_data(num_bytes, name):
    # 2,048 floats: more than the 1,024 elements whose values the importer
    # keeps, which once skipped the length check.
    w = TensorProto()
    w.name = "w"
    w.data_type = TensorProto.FLOAT
    w.dims.extend([2048])
    w.raw_data = bytes(num_bytes)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2048])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2048])
    node = helper.make_node("Add", ["x", "w"], ["y"], name="add")
    graph = helper.make_graph([node], name, [x], [y], initializer=[w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())


def model_with_type(data_type, name):
    # An initializer of an element type oomplan does not size: float4e2m1
    # (23), 99 is no ONNX type; int4 (22), half a byte, is sized.
    w = TensorProto()
    w.name = "w"
    w.data_type = data_type
    w.dims.extend([4])
    w.raw_data = bytes(2)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    node = helper.make_node("DequantizeLinear", ["w", "x"], ["y"], name="dq")
    graph = helper.make_graph([node], name, [x], [y], initializer=[w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())


def main():
    os.makedirs(OUT, exist_ok=True)
    model_with_external("../../etc/passwd", "external-dotdot")
    model_with_external("/etc/passwd", "external-absolute")
    model_with_external("weights/missing.bin", "external-missing")
    model_with_raw_data(4096, "raw-data-short")
    model_with_raw_data(8196, "raw-data-long")
    model_with_type(22, "int4-weight")
    model_with_type(23, "float4-weight")
    model_with_type(99, "type-99-weight")
    # Bytes that are not a protobuf message: wire type 7 does not exist.
    with open(os.path.join(OUT, "random-bytes.onnx"), "wb") as f:
        f.write(bytes([0x0F, 0xFF, 0xFE, 0x07, 0x9A, 0x33, 0xC1, 0x00] * 64))


if __name__ == "__main__":
    main()
