#!/usr/bin/python3
"""Runs the ops that ONNX added or changed after opset 17 through oomplan-run and ONNX Runtime.

Why: oomplan's frontend is built on ONNX 1.12 (opset 17), while exporters write newer opsets
(torch.onnx.export defaults to opset 18 since PyTorch 2.9; dynamo=True always writes 18 or more).
ONNX Runtime 1.30 knows every opset up to 23, so it is the independent reference here.

What: each case below is a small model at one opset (18 to 22) exercising one change of the ONNX
changelog (an input that replaced an attribute, a new attribute, a new mode, a new op). For each it
  1. writes the model with onnx.helper (ONNX 1.12 builds any node; the checker is not run) and
     seeded inputs as input_<i>.pb;
  2. runs `oomplan-run MODEL --inputs-dir IN --output-dir OUT --poison --check=unplanned`
     (the planned run, every buffer poisoned after its last use, then every tensor in its own
     allocation, which must give the same bits) and ONNX Runtime (utils/bench/run_onnxruntime.mjs);
  3. compares every output: shape and type equal, |ours - ort| <= 1e-4 + 1e-3 |ort|, integers
     exactly. A case whose expected result is "unsupported" passes when oomplan-run exits 1 naming
     the op and saying what it does not support (a clear refusal, never a wrong answer).
Exit 0 when every case passes, 1 otherwise.

Usage:
    /usr/bin/python3 utils/check/check_new_opsets.py WORKDIR [--tool build/tools/oomplan-run/oomplan-run]
        [--only NAME,NAME] [--list]
ONNX Runtime comes from ORT_NODE_DIR (default /tmp/ort):
    mkdir /tmp/ort && cd /tmp/ort && npm install onnxruntime-node --onnxruntime-node-install=skip
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from compare_runtime import compare_arrays  # noqa: E402  (the same tolerances)

HERE = os.path.dirname(os.path.abspath(__file__))
F, I64, I32, U8, I8 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32, TensorProto.UINT8, TensorProto.INT8


def t(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


class Case:
    def __init__(self, name, opset, nodes, inputs, outputs, inits=(), expect="pass", what="",
                 functions=()):
        self.name, self.opset, self.nodes = name, opset, nodes
        self.functions = list(functions)
        self.inputs = inputs  # [(name, array)]
        self.outputs = outputs  # [name]
        self.inits, self.expect, self.what = list(inits), expect, what


def rng(seed=0):
    return np.random.default_rng(seed)


def cases():
    r = rng(1)
    x34 = r.standard_normal((3, 4, 5)).astype(np.float32)
    img = r.standard_normal((2, 4, 7, 9)).astype(np.float32)
    out = []
    N = helper.make_node

    # Opset 18: the Reduce ops take axes as an input; noop_with_empty_axes.
    reds = ["ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
            "ReduceLogSumExp", "ReduceSumSquare"]
    nodes, outs = [], []
    for i, op in enumerate(reds):
        nodes.append(N(op, ["x", "ax"], [f"r{i}"], keepdims=i % 2))
        outs.append(f"r{i}")
    nodes.append(N("Abs", ["x"], ["ab"]))
    nodes.append(N("ReduceLogSum", ["ab", "ax2"], ["r_ls"]))
    nodes.append(N("ReduceMax", ["x"], ["r_all"], keepdims=0))
    nodes.append(N("ReduceSumSquare", ["x", "empty"], ["r_noop"], noop_with_empty_axes=1))
    nodes.append(N("ReduceMean", ["x", "empty"], ["r_emptyall"]))
    out.append(Case("reduce_axes_input", 18, nodes, [("x", x34)],
                    outs + ["r_ls", "r_all", "r_noop", "r_emptyall"],
                    [t("ax", np.array([1, -1], np.int64)), t("ax2", np.array([0], np.int64)),
                     t("empty", np.zeros((0,), np.int64))],
                    what="Reduce*-18: axes input, keepdims 0/1, noop_with_empty_axes"))
    # Opset 18: Split's num_outputs (the last part may be smaller).
    out.append(Case("split_num_outputs", 18,
                    [N("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3)],
                    [("x", r.standard_normal((2, 7)).astype(np.float32))], ["a", "b", "c"],
                    what="Split-18 num_outputs=3 of 7"))
    # Opset 18: Pad's axes input.
    out.append(Case("pad_axes", 18,
                    [N("Pad", ["x", "p", "cv", "ax"], ["y"]),
                     N("Pad", ["x", "p2", "", "ax2"], ["z"], mode="reflect")],
                    [("x", x34)], ["y", "z"],
                    [t("p", np.array([1, 2], np.int64)), t("cv", np.array(0.5, np.float32)),
                     t("ax", np.array([1], np.int64)), t("p2", np.array([2, 1, 1, 3], np.int64)),
                     t("ax2", np.array([-1, 1], np.int64))],
                    what="Pad-18 with axes (constant, reflect)"))
    # Opset 18: Resize's axes attribute, keep_aspect_ratio_policy, antialias.
    out.append(Case("resize_axes", 18,
                    [N("Resize", ["x", "", "s"], ["y"], mode="linear", axes=[2, 3]),
                     N("Resize", ["x", "", "", "sz"], ["z"], mode="nearest", axes=[3, 2],
                       keep_aspect_ratio_policy="not_larger"),
                     N("Resize", ["x", "", "", "sz"], ["w"], mode="nearest", axes=[3, 2],
                       keep_aspect_ratio_policy="not_smaller")],
                    [("x", img)], ["y", "z", "w"],
                    [t("s", np.array([2.0, 0.5], np.float32)), t("sz", np.array([4, 10], np.int64))],
                    what="Resize-18 axes, keep_aspect_ratio_policy"))
    out.append(Case("resize_antialias", 18,
                    [N("Resize", ["x", "", "s"], ["y"], mode="linear", antialias=1)],
                    [("x", img)], ["y"],
                    [t("s", np.array([1, 1, 0.5, 0.5], np.float32))],
                    expect="unsupported:Resize", what="Resize-18 antialias=1"))
    # Opset 18: ScatterElements/ScatterND reduction max and min.
    data = r.standard_normal((3, 4)).astype(np.float32)
    out.append(Case("scatter_max_min", 18,
                    [N("ScatterElements", ["d", "i", "u"], ["y"], axis=1, reduction="max"),
                     N("ScatterND", ["d", "i2", "u2"], ["z"], reduction="min")],
                    [("d", data)], ["y", "z"],
                    [t("i", np.array([[0, 0], [3, 1], [2, 2]], np.int64)),
                     t("u", r.standard_normal((3, 2)).astype(np.float32)),
                     t("i2", np.array([[0], [2], [0]], np.int64)),
                     t("u2", r.standard_normal((3, 4)).astype(np.float32))],
                    what="ScatterElements-18/ScatterND-18 reduction max/min"))
    # Opset 18: new ops.
    a = r.integers(-1000, 1000, (3, 4)).astype(np.int32)
    b = r.integers(-1000, 1000, (4,)).astype(np.int32)
    out.append(Case("bitwise", 18,
                    [N("BitwiseAnd", ["a", "b"], ["y1"]), N("BitwiseOr", ["a", "b"], ["y2"]),
                     N("BitwiseXor", ["a", "b"], ["y3"]), N("BitwiseNot", ["a"], ["y4"])],
                    [("a", a), ("b", b)], ["y1", "y2", "y3", "y4"], what="Bitwise*-18"))
    out.append(Case("mish", 18, [N("Mish", ["x"], ["y"])], [("x", x34)], ["y"], what="Mish-18"))
    out.append(Case("center_crop_pad", 18,
                    [N("CenterCropPad", ["x", "s"], ["y"]),
                     N("CenterCropPad", ["x", "s2"], ["z"], axes=[-1, 1])],
                    [("x", x34)], ["y", "z"],
                    [t("s", np.array([2, 6, 4], np.int64)), t("s2", np.array([8, 1], np.int64))],
                    what="CenterCropPad-18 (crop and pad, axes)"))
    out.append(Case("col2im", 18,
                    [N("Col2Im", ["x", "is", "bs"], ["y"], strides=[1, 2], pads=[1, 0, 0, 1],
                       dilations=[1, 1])],
                    [("x", r.standard_normal((2, 3 * 2 * 2, 15)).astype(np.float32))], ["y"],
                    [t("is", np.array([5, 6], np.int64)), t("bs", np.array([2, 2], np.int64))],
                    what="Col2Im-18"))
    out.append(Case("group_norm_18", 18,
                    [N("GroupNormalization", ["x", "sc", "bi"], ["y"], num_groups=2, epsilon=1e-3)],
                    [("x", img)], ["y"],
                    [t("sc", np.array([1.5, -0.5], np.float32)), t("bi", np.array([0.25, 1], np.float32))],
                    what="GroupNormalization-18 (scale per group)"))
    out.append(Case("lppool_ceil", 18,
                    [N("LpPool", ["x"], ["y"], kernel_shape=[2, 3], strides=[2, 2], ceil_mode=1, p=2),
                     N("LpPool", ["x"], ["z"], kernel_shape=[2, 2], dilations=[2, 1], p=1)],
                    [("x", img)], ["y", "z"], what="LpPool-18 ceil_mode, dilations"))
    # Opset 19.
    out.append(Case("avgpool_dilations", 19,
                    [N("AveragePool", ["x"], ["y"], kernel_shape=[2, 3], dilations=[2, 2],
                       pads=[1, 1, 1, 1], count_include_pad=0)],
                    [("x", img)], ["y"], what="AveragePool-19 dilations"))
    # DeformConv: offsets up to 3 pixels (taps land outside, between pixels), groups, offset
    # groups, a mask, a bias, strides, dilations, asymmetric pads; and the plain form.
    dx = r.standard_normal((2, 4, 7, 6)).astype(np.float32)
    out.append(Case("deform_conv", 19,
                    [N("DeformConv", ["x", "w", "off", "b", "m"], ["y"], kernel_shape=[3, 2],
                       group=2, offset_group=2, strides=[2, 1], dilations=[1, 2],
                       pads=[1, 0, 2, 1]),
                     N("DeformConv", ["x", "w2", "off2"], ["z"], kernel_shape=[3, 3],
                       pads=[1, 1, 1, 1])],
                    [("x", dx),
                     ("off", (r.random((2, 2 * 3 * 2 * 2, 4, 5)) * 6 - 3).astype(np.float32)),
                     ("m", r.random((2, 2 * 3 * 2, 4, 5)).astype(np.float32)),
                     ("off2", (r.random((2, 18, 7, 6)) * 2 - 1).astype(np.float32))],
                    ["y", "z"],
                    [t("w", r.standard_normal((6, 2, 3, 2)).astype(np.float32)),
                     t("b", r.standard_normal(6).astype(np.float32)),
                     t("w2", r.standard_normal((3, 4, 3, 3)).astype(np.float32))],
                    what="DeformConv-19 (groups, offset groups, mask, bias)"))
    out.append(Case("pad_wrap", 19,
                    [N("Pad", ["x", "p"], ["y"], mode="wrap")],
                    [("x", x34)], ["y"], [t("p", np.array([0, 1, 2, 0, 2, 1], np.int64))],
                    what="Pad-19 mode=wrap"))
    out.append(Case("resize_half_pixel_symmetric", 19,
                    [N("Resize", ["x", "", "s"], ["y"], mode="linear",
                       coordinate_transformation_mode="half_pixel_symmetric")],
                    [("x", img)], ["y"], [t("s", np.array([1, 1, 1.7, 0.6], np.float32))],
                    what="Resize-19 half_pixel_symmetric"))
    out.append(Case("cast_19", 19, [N("Cast", ["x"], ["y"], to=TensorProto.FLOAT16, saturate=1)],
                    [("x", x34)], ["y"], what="Cast-19 (saturate is for float8 only)"))
    # Opset 20.
    out.append(Case("gelu", 20,
                    [N("Gelu", ["x"], ["y"]), N("Gelu", ["x"], ["z"], approximate="tanh")],
                    [("x", x34)], ["y", "z"], what="Gelu-20"))
    grid = (r.random((2, 5, 6, 2)) * 2.4 - 1.2).astype(np.float32)
    out.append(Case("grid_sample_20", 20,
                    [N("GridSample", ["x", "g"], ["y"], mode="linear"),
                     N("GridSample", ["x", "g"], ["z"], mode="cubic", align_corners=1),
                     N("GridSample", ["x", "g"], ["w"], mode="nearest", padding_mode="border")],
                    [("x", img), ("g", grid)], ["y", "z", "w"], what="GridSample-20 mode names"))
    sig = r.standard_normal((2, 8, 1)).astype(np.float32)
    out.append(Case("dft_axis_input", 20,
                    [N("DFT", ["x", "", "ax"], ["y"]), N("DFT", ["x", "n", "ax"], ["z"], onesided=1)],
                    [("x", sig)], ["y", "z"],
                    [t("ax", np.array(1, np.int64)), t("n", np.array(6, np.int64))],
                    what="DFT-20 (axis as an input)"))
    out.append(Case("affine_grid", 20,
                    [N("AffineGrid", ["th", "sz"], ["y"], align_corners=0)],
                    [("th", r.standard_normal((2, 2, 3)).astype(np.float32))], ["y"],
                    [t("sz", np.array([2, 3, 4, 5], np.int64))], what="AffineGrid-20"))
    # Opset 21.
    out.append(Case("group_norm_21", 21,
                    [N("GroupNormalization", ["x", "sc", "bi"], ["y"], num_groups=2)],
                    [("x", img)], ["y"],
                    [t("sc", r.standard_normal(4).astype(np.float32)),
                     t("bi", r.standard_normal(4).astype(np.float32))],
                    what="GroupNormalization-21 (scale per channel)"))
    out.append(Case("quantize_output_dtype", 21,
                    [N("QuantizeLinear", ["x", "s"], ["y"], output_dtype=TensorProto.INT8),
                     N("DequantizeLinear", ["y", "s"], ["z"])],
                    [("x", x34 * 20)], ["y", "z"], [t("s", np.array(0.25, np.float32))],
                    what="QuantizeLinear-21 output_dtype"))
    out.append(Case("quantize_blocked", 21,
                    [N("QuantizeLinear", ["x", "s", "zp"], ["y"], axis=1, block_size=2),
                     N("DequantizeLinear", ["y", "s", "zp"], ["z"], axis=1, block_size=2)],
                    [("x", x34 * 20)], ["y", "z"],
                    [t("s", (r.random((3, 2, 5)) + 0.1).astype(np.float32)),
                     t("zp", r.integers(-3, 3, (3, 2, 5)).astype(np.int8))],
                    what="Quantize/DequantizeLinear-21 block_size"))
    # Opset 22: type-only changes, and MaxPool's ceil_mode windows.
    out.append(Case("maxpool_ceil_22", 22,
                    [N("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1,
                       pads=[1, 1, 1, 1]),
                     N("AveragePool", ["x"], ["z"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
                     # A last window that would start in the right padding is dropped.
                     N("MaxPool", ["x6"], ["w"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1,
                       pads=[0, 0, 1, 1])],
                    [("x", img), ("x6", r.standard_normal((1, 1, 6, 6)).astype(np.float32))],
                    ["y", "z", "w"], what="MaxPool-22/AveragePool-22 ceil_mode"))
    w = r.standard_normal((8, 4, 3, 3)).astype(np.float32)
    out.append(Case("conv_net_22", 22,
                    [N("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), N("Relu", ["c"], ["r"]),
                     N("GlobalAveragePool", ["r"], ["g"]), N("Flatten", ["g"], ["f"]),
                     N("Softmax", ["f"], ["y"], axis=-1)],
                    [("x", img)], ["y"], [t("w", w)], what="a small CNN at opset 22"))
    # Opset 19's 8-bit floats: casts both ways (saturating and not, values past each type's
    # largest, infinities, NaN, subnormals, ties), quantization into e4m3fn, and an fp8 weight
    # dequantized before a MatMul (NVIDIA ModelOpt's FP8 exports). Left out: e5m2's 61440, a tie
    # that rounds to 2^16, past the largest, which ONNX's table and reference make infinity
    # without saturation and ONNX Runtime 1.30 makes NaN (Float8Test checks it by hand).
    f8in = np.array([0, -0.0, 1, -1, 1.0625, 1.1875, 3.3, -7.7, 240, 250, 448, 464, 465, 500,
                     57344, 57000, 70000, 2 ** -9, 2 ** -10, 2 ** -17, 1e-30, np.inf, -np.inf,
                     np.nan], np.float32).reshape(4, 6)
    f8types = [(17, "e4m3fn"), (18, "e4m3fnuz"), (19, "e5m2"), (20, "e5m2fnuz")]
    nodes, outs = [], []
    for num, tag in f8types:
        nodes += [N("Cast", ["x"], [f"c{tag}"], to=num), N("Cast", [f"c{tag}"], [f"b{tag}"], to=1),
                  N("Cast", ["x"], [f"n{tag}"], to=num, saturate=0),
                  N("Cast", [f"n{tag}"], [f"m{tag}"], to=1)]
        outs += [f"b{tag}", f"m{tag}"]
    out.append(Case("float8_cast", 19, nodes, [("x", f8in)], outs,
                    what="Cast-19 to and from the four float8 types, saturate 1 and 0"))
    w8 = onnx.TensorProto()
    w8.name, w8.data_type = "w8", 17
    w8.dims.extend([4, 3])
    w8.raw_data = bytes(r.integers(0, 256, 12).astype(np.uint8).tolist()).replace(b"\x7f", b"\x10") \
        .replace(b"\xff", b"\x90")
    zp8 = onnx.TensorProto()
    zp8.name, zp8.data_type, zp8.raw_data = "zp8", 17, b"\x00"
    out.append(Case("float8_quantize", 19,
                    [N("QuantizeLinear", ["x", "s", "zp8"], ["q"]),
                     N("DequantizeLinear", ["q", "s", "zp8"], ["dq"]),
                     N("DequantizeLinear", ["w8", "s3"], ["w"], axis=1),
                     N("MatMul", ["x2", "w"], ["y"])],
                    [("x", f8in[:, :5] * 3), ("x2", r.standard_normal((2, 4)).astype(np.float32))],
                    ["dq", "w", "y"],
                    [t("s", np.array(0.5, np.float32)), zp8, w8,
                     t("s3", np.array([0.5, 2, 0.125], np.float32))],
                    what="QuantizeLinear/DequantizeLinear-19 with float8e4m3fn, an fp8 weight"))
    # Model-local functions (IR 8): a module exported as a function, called twice, calling
    # another, with an attribute by reference and an output also read inside.
    fop = [helper.make_opsetid("", 18), helper.make_opsetid("mod", 1)]
    act = helper.make_node("LeakyRelu", ["a"], ["b"])
    alpha = helper.make_attribute_ref("alpha", onnx.AttributeProto.FLOAT) if hasattr(
        helper, "make_attribute_ref") else None
    if alpha is None:
        alpha = onnx.AttributeProto()
        alpha.name, alpha.ref_attr_name, alpha.type = "alpha", "slope", onnx.AttributeProto.FLOAT
    act.attribute.append(alpha)
    inner = helper.make_function("mod", "Act", ["a"], ["b"], [act], fop, ["slope"])
    block = helper.make_function(
        "mod", "Block", ["x", "w"], ["y", "m"],
        [N("Constant", [], ["ax"], value=t("axv", np.array([-1], np.int64))),
         N("MatMul", ["x", "w"], ["m"]), N("Act", ["m"], ["r"], domain="mod", slope=0.25),
         N("ReduceMean", ["r", "ax"], ["mean"]), N("Sub", ["r", "mean"], ["y"])], fop, [])
    out.append(Case("local_functions", 18,
                    [N("Block", ["x", "w1"], ["h", "same"], domain="mod"),
                     N("Block", ["h", "w2"], ["y", "m2"], domain="mod"), N("Add", ["y", "same"], ["z"])],
                    [("x", r.standard_normal((3, 4)).astype(np.float32))], ["z", "h"],
                    [t("w1", r.standard_normal((4, 4)).astype(np.float32)),
                     t("w2", r.standard_normal((4, 4)).astype(np.float32))],
                    what="model-local functions, nested, attribute by reference",
                    functions=[block, inner]))
    return out


def build(case, path):
    # An input's declared shape: its array's, or what case.shapes gives (symbolic dims).
    shapes = getattr(case, "shapes", {})
    ins = [vi(n, helper.np_dtype_to_tensor_dtype(a.dtype) if hasattr(helper, "np_dtype_to_tensor_dtype")
              else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], shapes.get(n, list(a.shape)))
           for n, a in case.inputs]
    outs = [helper.make_empty_tensor_value_info(o) for o in case.outputs]
    g = helper.make_graph(case.nodes, case.name, ins, outs, initializer=case.inits)
    opsets = [helper.make_opsetid("", case.opset)]
    opsets += [helper.make_opsetid(d, 1) for d in sorted(
        {f.domain for f in case.functions} | {n.domain for n in case.nodes if n.domain})]
    m = helper.make_model(g, opset_imports=opsets, producer_name="check_new_opsets",
                          functions=case.functions)
    m.ir_version = 8
    onnx.save(m, path)


def write_inputs(case, d):
    os.makedirs(d, exist_ok=True)
    for i, (n, a) in enumerate(case.inputs):
        with open(os.path.join(d, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())


def read_outputs(d, n):
    res = []
    for i in range(n):
        p = os.path.join(d, f"output_{i}.pb")
        tp = onnx.TensorProto()
        with open(p, "rb") as f:
            tp.ParseFromString(f.read())
        res.append(numpy_helper.to_array(tp))
    return res


def compare_nan_aware(a, b):
    """compare_arrays, NaN and infinities allowed where both have the same."""
    if a.shape == b.shape and a.dtype == b.dtype and np.issubdtype(b.dtype, np.floating):
        special_a, special_b = ~np.isfinite(a), ~np.isfinite(b)
        same = np.array_equal(special_a, special_b) and np.array_equal(
            np.isnan(a), np.isnan(b)) and np.array_equal(a[np.isinf(a)], b[np.isinf(b)])
        if not same:
            return False, (f"NaN or infinity at other places ({int(special_a.sum())} ours, "
                           f"{int(special_b.sum())} ort)")
        if special_a.any():
            a, b = np.where(special_a, 0, a), np.where(special_b, 0, b)
    return compare_arrays(a, b)


def run_case(case, work, tool):
    d = os.path.join(work, case.name)
    os.makedirs(d, exist_ok=True)
    model = os.path.join(d, "model.onnx")
    build(case, model)
    ind, ours_d, ort_d = (os.path.join(d, x) for x in ("in", "ours", "ort"))
    write_inputs(case, ind)
    for x in (ours_d, ort_d):
        os.makedirs(x, exist_ok=True)
    p = subprocess.run([tool, model, "--inputs-dir", ind, "--output-dir", ours_d, "--poison",
                        "--check=unplanned"], capture_output=True, text=True)
    if case.expect.startswith("unsupported:"):
        op = case.expect.split(":", 1)[1]
        ok = p.returncode == 1 and "support" in p.stderr and op in p.stderr
        return ok, ("refused: " if ok else f"rc {p.returncode}: ") + p.stderr.strip()[:300]
    if p.returncode != 0:
        return False, f"oomplan-run rc {p.returncode}: {p.stderr.strip()[:400]}"
    # A case may name another model for ONNX Runtime to run (case.ref: the same computation in
    # a form it implements, on the same values), where it lacks a kernel for the case's form.
    ort_model, ort_in = model, ind
    if getattr(case, "ref", None) is not None:
        ort_model, ort_in = os.path.join(d, "ref.onnx"), os.path.join(d, "ref_in")
        build(case.ref, ort_model)
        write_inputs(case.ref, ort_in)
    q = subprocess.run(["node", os.path.join(HERE, "..", "bench", "run_onnxruntime.mjs"), ort_model, "--inputs-dir", ort_in,
                        "--output-dir", ort_d, "--threads", "1", "--warmup", "0", "--iterations", "0"],
                       capture_output=True, text=True)
    if q.returncode != 0:
        return False, f"onnxruntime failed: {q.stderr.strip()[:300]}"
    n = len(case.outputs)
    msgs, ok = [], True
    for name, a, b in zip(case.outputs, read_outputs(ours_d, n), read_outputs(ort_d, n)):
        good, text = compare_nan_aware(a, b)
        ok &= good
        msgs.append(f"{name}: {text}")
    return ok, "; ".join(msgs)


def main(description=__doc__, all_cases=None, run=None):
    """The command line of this script and of check_function_ops.py: their cases, run by run
    (run_case by default); --write-only writes each case's model and inputs and runs nothing."""
    ap = argparse.ArgumentParser(description=description.split("\n")[0])
    ap.add_argument("work")
    ap.add_argument("--tool", default="build/tools/oomplan-run/oomplan-run")
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--write-only", action="store_true",
                    help="write WORK/NAME/model.onnx and in/ for each case, run nothing "
                         "(utils/gpu/gpu-bundle.sh)")
    a = ap.parse_args()
    only = set(filter(None, a.only.split(",")))
    allc = [c for c in (all_cases or cases)() if not only or c.name in only]
    if a.list:
        for c in allc:
            print(f"{c.name:28} opset {c.opset}  {c.what}")
        return 0
    if a.write_only:
        for c in allc:
            d = os.path.join(a.work, c.name)
            os.makedirs(d, exist_ok=True)
            build(c, os.path.join(d, "model.onnx"))
            write_inputs(c, os.path.join(d, "in"))
        print(f"wrote {len(allc)} cases to {a.work}")
        return 0
    fails = 0
    for c in allc:
        ok, text = (run or run_case)(c, a.work, a.tool)
        fails += not ok
        print(f"{'PASS' if ok else 'FAIL'} {c.name} (opset {c.opset}, {c.what}): {text}", flush=True)
    print(f"{len(allc) - fails} of {len(allc)} cases pass")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
