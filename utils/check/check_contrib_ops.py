#!/usr/bin/python3
"""Runs ONNX Runtime's contrib ops (domain com.microsoft) through oomplan-run and ONNX Runtime.

Why: the models ONNX Runtime's tools write (the transformer optimizer, the weight-only quantizer,
the GenAI model builder) use ops of ONNX Runtime's own domain: SkipLayerNormalization, FastGelu,
MatMulNBits, ... (BiasAdd has no CPU kernel in ONNX Runtime: test/lit/run/ort-contrib-ops checks it by
hand.) oomplan imports most as bodies of standard ops
(lib/Frontend/ONNX/ContribFunctions.cpp) and runs MatMulNBits with a kernel of its own; ONNX Runtime
is where these ops are defined, so it is the reference.

What: each case is a small model exercising one form of one op (optional inputs and outputs,
float16, the opsets before LayerNormalization and CastLike, 2/4/8-bit weights with and without
zero points, K not a multiple of the block), run as utils/check/check_new_opsets.py runs its cases:
oomplan-run with --poison --check=unplanned against ONNX Runtime (utils/bench/run_onnxruntime.mjs),
|ours - ort| <= 1e-4 + 1e-3 |ort| (float16 outputs: within 2 float16 ulps of the larger; see
compare_arrays). Exit 0 when every case passes, 1 otherwise.

Usage:
    /usr/bin/python3 utils/check/check_contrib_ops.py WORKDIR [--tool build/tools/oomplan-run/oomplan-run]
        [--only NAME,NAME] [--list] [--write-only]
ONNX Runtime comes from ORT_NODE_DIR (default /tmp/ort), as for check_new_opsets.py.
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_new_opsets as base  # noqa: E402  (the same runner and tolerances)
from check_new_opsets import Case, t  # noqa: E402

MS = "com.microsoft"


def N(op, ins, outs, domain=MS, **kw):
    return helper.make_node(op, ins, outs, domain=domain, **kw)


def f32(r, *shape):
    return r.standard_normal(shape).astype(np.float32)


def activation_cases(r):
    x, b = f32(r, 2, 3, 8), f32(r, 8)
    h = x.astype(np.float16)
    return [
        Case("fastgelu", 17, [N("FastGelu", ["x"], ["y"])], [("x", x)], ["y"], what="tanh GELU"),
        Case("fastgelu_bias", 17, [N("FastGelu", ["x", "b"], ["y"])], [("x", x), ("b", b)], ["y"],
             what="tanh GELU of x + bias"),
        Case("fastgelu_fp16", 17, [N("FastGelu", ["x"], ["y"])], [("x", h)], ["y"],
             what="float16"),
        Case("gelu", 14, [N("Gelu", ["x"], ["y"])], [("x", x)], ["y"], what="erf GELU, opset 14"),
        Case("biasgelu", 17, [N("BiasGelu", ["x", "b"], ["y"])], [("x", x), ("b", b)], ["y"],
             what="erf GELU of x + bias"),
        Case("quickgelu", 17, [N("QuickGelu", ["x"], ["y"])], [("x", x)], ["y"],
             what="x * sigmoid(1.702 x)"),
        Case("quickgelu_alpha", 17, [N("QuickGelu", ["x"], ["y"], alpha=1.0)], [("x", x)], ["y"],
             what="alpha 1 (SiLU)"),
    ]


def norm_cases(r):
    x, s = f32(r, 2, 3, 16), f32(r, 2, 3, 16)
    g, be, bi = f32(r, 16), f32(r, 16), f32(r, 16)
    out = []
    for opset in (17, 14):
        out.append(Case(f"skipln_all_op{opset}", opset,
                        [N("SkipLayerNormalization", ["x", "s", "g", "be", "bi"],
                           ["y", "mean", "inv", "sum"], epsilon=1e-5)],
                        [("x", x), ("s", s)], ["y", "mean", "inv", "sum"],
                        inits=[t("g", g), t("be", be), t("bi", bi)],
                        what=f"beta, bias, every output, opset {opset}"))
    out.append(Case("skipln_default_eps", 17,
                    [N("SkipLayerNormalization", ["x", "s", "g"], ["y"])],
                    [("x", x * 1e-3), ("s", s * 1e-3)], ["y"], inits=[t("g", g)],
                    what="no beta or bias, the default epsilon on small values"))
    out.append(Case("skipln_fp16", 17,
                    [N("SkipLayerNormalization", ["x", "s", "g", "be"], ["y", "", "", "sum"])],
                    [("x", x.astype(np.float16)), ("s", s.astype(np.float16))], ["y", "sum"],
                    inits=[t("g", g.astype(np.float16)), t("be", be.astype(np.float16))],
                    what="float16, the sum out"))
    out.append(Case("skipln_fp16_op14", 14,
                    [N("SkipLayerNormalization", ["x", "s", "g", "be"], ["y"])],
                    [("x", x.astype(np.float16)), ("s", s.astype(np.float16))], ["y"],
                    inits=[t("g", g.astype(np.float16)), t("be", be.astype(np.float16))],
                    what="float16 at opset 14 (no LayerNormalization)"))
    out.append(Case("skipln_skip_2d", 17,
                    [N("SkipLayerNormalization", ["x", "s2", "g", "be"], ["y"])],
                    [("x", x), ("s2", f32(r, 3, 16))], ["y"],
                    inits=[t("g", g), t("be", be)], what="skip [S, H] broadcast over the batch"))
    out.append(Case("skipsimplified", 17,
                    [N("SkipSimplifiedLayerNormalization", ["x", "s", "g", "bi"],
                       ["y", "", "inv", "sum"], epsilon=1e-6)],
                    [("x", x), ("s", s)], ["y", "inv", "sum"], inits=[t("g", g), t("bi", bi)],
                    what="RMS of x + skip + bias, inverse RMS and sum out"))
    out.append(Case("skipsimplified_fp16", 21,
                    [N("SkipSimplifiedLayerNormalization", ["x", "s", "g"], ["y", "", "", "sum"],
                       epsilon=1e-6)],
                    [("x", x.astype(np.float16)), ("s", s.astype(np.float16))], ["y", "sum"],
                    inits=[t("g", g.astype(np.float16))], what="float16, opset 21 (GenAI's)"))
    for opset in (17, 14):
        out.append(Case(f"simplified_op{opset}", opset,
                        [N("SimplifiedLayerNormalization", ["x", "g"], ["y", "inv"], domain="",
                           epsilon=1e-6)],
                        [("x", x)], ["y", "inv"], inits=[t("g", g)],
                        what=f"default domain, inverse RMS out, opset {opset}"))
    out.append(Case("simplified_fp16_op14", 14,
                    [N("SimplifiedLayerNormalization", ["x", "g"], ["y"], domain="")],
                    [("x", x.astype(np.float16))], ["y"], inits=[t("g", g.astype(np.float16))],
                    what="float16 at opset 14 (Cast back, no CastLike)"))
    out.append(Case("simplified_axis1", 17,
                    [N("SimplifiedLayerNormalization", ["x", "g2"], ["y"], domain="", axis=1)],
                    [("x", x)], ["y"], inits=[t("g2", f32(r, 3, 16))],
                    what="axis 1: over the last two axes"))
    return out


def matmul_cases(r):
    a, b = f32(r, 2, 3, 5, 8), f32(r, 2, 3, 6, 8)
    return [
        Case("fusedmatmul_transb_alpha", 17,
             [N("FusedMatMul", ["a", "b"], ["y"], transB=1, alpha=0.25)],
             [("a", a), ("b", b)], ["y"], what="4-D, transB, alpha 0.25"),
        Case("fusedmatmul_transa", 17, [N("FusedMatMul", ["a", "b2"], ["y"], transA=1)],
             [("a", a), ("b2", f32(r, 5, 6))], ["y"], what="transA, B 2-D"),
    ]


def pack(values, bits):
    """Packs unsigned values of `bits` bits along the last axis, low bits first."""
    per = 8 // bits
    v = values.reshape(*values.shape[:-1], -1, per).astype(np.uint8)
    out = np.zeros(v.shape[:-1], np.uint8)
    for i in range(per):
        out |= v[..., i] << (i * bits)
    return out


def nbits_case(r, name, k, n, bits, block, zp="none", bias=False, a_shape=(3,), half=False,
               what=""):
    blocks = (k + block - 1) // block
    q = r.integers(0, 1 << bits, (n, blocks, block))
    b = pack(q, bits)  # [n, blocks, blob]
    scales = (r.random((n * blocks,)) * 0.1 + 0.01).astype(np.float32)
    inits = [t("B", b), t("scales", scales.astype(np.float16) if half else scales)]
    ins = ["a", "B", "scales"]
    if zp == "packed":
        zq = r.integers(0, 1 << bits, (n, blocks))
        per = 8 // bits
        pad = (-blocks) % per
        zq = np.concatenate([zq, np.zeros((n, pad), zq.dtype)], axis=1)
        inits.append(t("zp", pack(zq, bits).reshape(-1)))
        ins.append("zp")
    elif zp == "float":
        inits.append(t("zp", (r.random(n * blocks) * (1 << bits)).astype(
            np.float16 if half else np.float32)))
        ins.append("zp")
    if bias:
        if len(ins) == 3:
            ins.append("")
        ins += ["", "bias"]
        inits.append(t("bias", f32(r, n).astype(np.float16) if half else f32(r, n)))
    a = f32(r, *a_shape, k)
    if half:
        a = a.astype(np.float16)
    return Case(name, 21, [N("MatMulNBits", ins, ["y"], K=k, N=n, bits=bits, block_size=block)],
                [("a", a)], ["y"], inits=inits, what=what)


def nbits_cases(r):
    return [
        nbits_case(r, "nbits4", 64, 24, 4, 32, what="4-bit, block 32, default zero point"),
        nbits_case(r, "nbits4_zp", 64, 24, 4, 32, zp="packed",
                   what="4-bit, packed zero points"),
        nbits_case(r, "nbits4_zp_odd_blocks", 48, 10, 4, 16, zp="packed",
                   what="4-bit, 3 blocks a row (zero-point rows padded to a byte)"),
        nbits_case(r, "nbits4_k_partial", 40, 7, 4, 16, zp="packed", bias=True,
                   what="K = 40 with blocks of 16 (last block partial), bias"),
        nbits_case(r, "nbits4_float_zp", 64, 300, 4, 32, zp="float", a_shape=(2, 5),
                   what="float zero points, N = 300 (3 tiles), 3-D A"),
        nbits_case(r, "nbits8", 64, 16, 8, 16, zp="packed", what="8-bit, packed zero points"),
        nbits_case(r, "nbits2", 64, 16, 2, 32, what="2-bit, default zero point"),
        nbits_case(r, "nbits4_fp16", 64, 24, 4, 32, zp="packed", bias=True, half=True,
                   what="float16 A, scales and bias"),
        nbits_case(r, "nbits4_vector", 128, 40, 4, 128, a_shape=(), what="1-D A (one row)"),
    ]


def int4_tensor(name, values, signed, raw=True):
    """An ONNX int4 (22) or uint4 (21) initializer, two values to a byte, the first in the low
    bits, as raw_data or (raw=False) one packed byte per int32_data entry. Written by hand:
    this image's onnx package (1.12) predates the types."""
    v = np.asarray(values).reshape(-1).astype(np.int64) & 0xF
    if v.size % 2:
        v = np.append(v, 0)
    packed = (v[0::2] | (v[1::2] << 4)).astype(np.uint8)
    tp = onnx.TensorProto(name=name, data_type=22 if signed else 21,
                          dims=list(np.asarray(values).shape))
    if raw:
        tp.raw_data = packed.tobytes()
    else:
        tp.int32_data.extend(int(b) for b in packed)
    return tp


def int4_cases(r):
    """ONNX's own 4-bit weights (opset 21): DequantizeLinear of int4/uint4 initializers. The
    dequantized weights are the outputs: followed by a MatMul, ONNX Runtime fuses the pair into
    MatMulNBits, which multiplies in int8 (a 1e-2 difference from the float product)."""
    out = []
    w = r.integers(-8, 8, (64, 16))
    z = r.integers(-8, 8, (2, 16))
    sc = t("s", (r.random((2, 16)) * 0.1 + 0.01).astype(np.float32))
    for raw in (True, False):
        out.append(Case("dq_int4_blocked" + ("" if raw else "_int32data"), 21,
                        [N("DequantizeLinear", ["w", "s", "z"], ["y"], domain="", axis=0,
                           block_size=32)],
                        [], ["y"],
                        inits=[int4_tensor("w", w, True, raw), sc, int4_tensor("z", z, True, raw)],
                        what="int4 [64, 16] in blocks of 32 along axis 0, int4 zero points" +
                             ("" if raw else " (int32_data)")))
    out.append(Case("dq_uint4_axis", 21,
                    [N("DequantizeLinear", ["w", "s", "z"], ["y"], domain="", axis=1)],
                    [], ["y"],
                    inits=[int4_tensor("w", r.integers(0, 16, (16, 9)), False),
                           t("s", (r.random(9) * 0.1).astype(np.float32)),
                           int4_tensor("z", r.integers(0, 16, (9,)), False)],
                    what="uint4 [16, 9], a scale and zero point per column"))
    out.append(Case("dq_int4_odd", 21,
                    [N("DequantizeLinear", ["w", "s"], ["y"], domain="")],
                    [], ["y"],
                    inits=[int4_tensor("w", r.integers(-8, 8, (7,)), True),
                           t("s", np.array(0.5, np.float32))],
                    what="7 int4 values (4 bytes, the last half empty), a scalar scale"))
    return out


def gbq_case(r, name, shape, bits, block, zp=False, half=False, what=""):
    """GatherBlockQuantized of uint8 data [V, ..., P] (P * 8 / bits values a row)."""
    *lead, width = shape
    blocks = (width + block - 1) // block
    data = pack(r.integers(0, 1 << bits, (*lead, width)), bits)
    scales = (r.random((*lead, blocks)) * 0.1 + 0.01).astype(np.float16 if half else np.float32)
    inits = [t("data", data), t("scales", scales)]
    ins = ["data", "idx", "scales"]
    if zp:
        per = 8 // bits
        z = r.integers(0, 1 << bits, (*lead, blocks + (-blocks) % per))
        inits.append(t("zp", pack(z, bits)))
        ins.append("zp")
    idx = np.array([[0, 3, lead[0] - 1], [-1, 5, 2]], np.int64)
    return Case(name, 21, [N("GatherBlockQuantized", ins, ["y"], bits=bits, block_size=block,
                             gather_axis=0, quantize_axis=len(shape) - 1)],
                [("idx", idx)], ["y"], inits=inits, what=what)


def gbq_cases(r):
    return [
        gbq_case(r, "gbq4", (10, 64), 4, 32, what="4-bit rows of 64 in blocks of 32, index -1"),
        gbq_case(r, "gbq4_zp", (10, 64), 4, 32, zp=True, what="4-bit, packed zero points"),
        gbq_case(r, "gbq8_zp", (10, 48), 8, 16, zp=True, what="8-bit, 3 blocks a row"),
        gbq_case(r, "gbq4_fp16", (10, 64), 4, 16, zp=True, half=True,
                 what="float16 scales and output"),
        gbq_case(r, "gbq4_3d", (10, 2, 32), 4, 16, what="data [V, 2, 16 bytes]"),
    ]


def gqa_case(r, name, b, s, hq, hkv, d, past=0, mask=None, packed=False, rotary=None, half=False,
             what="", **attrs):
    """GroupQueryAttention as ONNX Runtime's GenAI builder writes it: seqlens_k computed from the
    attention mask (its sum - 1). total_sequence_length (the mask's width, which the builder takes
    from Shape(mask)) is a constant here: with the mask's shape static, ONNX Runtime folds that
    chain and then misreads the folded value (test/lit/shapes/contrib-gqa covers the chain)."""
    dt = np.float16 if half else np.float32
    if mask is None:
        mask = np.ones((b, past + s), np.int64)
    ins = [("mask", mask)]
    nodes = [
        N("ReduceSum", ["mask", "one"], ["msum"], domain="", keepdims=0),
        N("Sub", ["msum", "one"], ["seq64"], domain=""),
        N("Cast", ["seq64"], ["seqlens"], domain="", to=6),
    ]
    inits = [t("one", np.array([1], np.int64)), t("total", np.array(mask.shape[1], np.int32))]
    if packed:
        ins.append(("q", r.standard_normal((b, s, (hq + 2 * hkv) * d)).astype(dt)))
        qkv = ["q", "", ""]
    else:
        ins += [("q", r.standard_normal((b, s, hq * d)).astype(dt)),
                ("k", r.standard_normal((b, s, hkv * d)).astype(dt)),
                ("v", r.standard_normal((b, s, hkv * d)).astype(dt))]
        qkv = ["q", "k", "v"]
    pk = ["", ""]
    if past:
        ins += [("pk", r.standard_normal((b, hkv, past, d)).astype(dt)),
                ("pv", r.standard_normal((b, hkv, past, d)).astype(dt))]
        pk = ["pk", "pv"]
    gins = qkv + pk + ["seqlens", "total"]
    if rotary:
        rows, half_rot = rotary
        ang = r.random((rows, half_rot)) * 3
        inits += [t("cos", np.cos(ang).astype(dt)), t("sin", np.sin(ang).astype(dt))]
        gins += ["cos", "sin"]
        attrs.setdefault("do_rotary", 1)
    nodes.append(N("GroupQueryAttention", gins, ["y", "present_k", "present_v"], num_heads=hq,
                   kv_num_heads=hkv, **attrs))
    return Case(name, 21, nodes, ins, ["y", "present_k", "present_v"], inits=inits, what=what)


def gqa_cases(r):
    ragged = np.ones((2, 6), np.int64)
    ragged[1, 4:] = 0
    return [
        gqa_case(r, "gqa_prompt", 2, 4, 4, 2, 16, what="first prompt, 4 query / 2 KV heads"),
        gqa_case(r, "gqa_prompt_rotary", 2, 5, 4, 1, 32, rotary=(16, 8),
                 what="rotary on 16 of 32 dims, multi-query"),
        gqa_case(r, "gqa_prompt_rotary_interleaved", 1, 3, 2, 2, 16, rotary=(8, 8),
                 rotary_interleaved=1, what="interleaved rotary"),
        gqa_case(r, "gqa_decode_ragged", 2, 1, 4, 2, 16, past=5, mask=ragged, rotary=(8, 8),
                 what="one token after a past of 5 (row 1: 3), rotary at each row's position"),
        gqa_case(r, "gqa_decode_long_cache", 1, 1, 4, 2, 16, past=8,
                 mask=np.ones((1, 6), np.int64),
                 what="a cache of 8 holding 5 (shared-buffer layout): present keeps 8"),
        gqa_case(r, "gqa_subsequent", 1, 3, 4, 2, 16, past=4, rotary=(8, 8),
                 what="3 new tokens after a past of 4"),
        gqa_case(r, "gqa_packed", 2, 4, 4, 2, 16, packed=True, what="packed QKV"),
        gqa_case(r, "gqa_window", 1, 6, 2, 1, 16, local_window_size=2,
                 what="local window of 2"),
        gqa_case(r, "gqa_softcap", 1, 4, 2, 1, 16, softcap=2.0, scale=0.5,
                 what="softcap 2, scale 0.5"),
        gqa_case(r, "gqa_smooth", 2, 3, 2, 2, 16, smooth_softmax=1, what="smooth softmax"),
        gqa_case(r, "gqa_fp16", 2, 4, 4, 2, 16, rotary=(8, 8), half=True,
                 what="float16 with rotary"),
        gqa_case(r, "gqa_fp16_decode", 1, 1, 4, 2, 16, past=3, half=True,
                 what="float16, one token after 3"),
    ]


def bert_attention_cases(r):
    """The transformer optimizer's Attention and EmbedLayerNormalization (BERT, GPT-2)."""
    b, s, hin, heads = 2, 5, 32, 4
    x = f32(r, b, s, hin)
    w, bias = t("w", f32(r, hin, 96) * 0.3), t("bias", f32(r, 96) * 0.1)
    raw = np.ones((b, s), np.int32)
    raw[1, 3:] = 0
    out = []
    for opset in (17, 12):
        out.append(Case(f"attention_raw_mask_op{opset}", opset,
                        [N("Attention", ["x", "w", "bias", "m"], ["y"], num_heads=heads)],
                        [("x", x), ("m", raw)], ["y"], inits=[w, bias],
                        what=f"BERT: raw mask [B, S] (row 1 padded), opset {opset}"))
    out += [
        Case("attention_lengths", 17,
             [N("Attention", ["x", "w", "bias", "m"], ["y"], num_heads=heads)],
             [("x", x), ("m", np.array([5, 2], np.int32))], ["y"], inits=[w, bias],
             what="mask_index as right-padding lengths [B]"),
        Case("attention_mask3d", 17,
             [N("Attention", ["x", "w", "bias", "m"], ["y"], num_heads=heads)],
             [("x", x), ("m", (r.random((b, s, s)) < 0.7).astype(np.int32))], ["y"],
             inits=[w, bias], what="mask [B, S, T] (some rows fully masked)"),
        Case("attention_nomask_scale", 17,
             [N("Attention", ["x", "w", "bias"], ["y"], num_heads=2, scale=0.2)],
             [("x", x)], ["y"], inits=[w, bias], what="no mask, 2 heads, scale 0.2"),
        Case("attention_qkv_sizes", 17,
             [N("Attention", ["x", "w2", "bias2", "m"], ["y"], num_heads=heads,
                qkv_hidden_sizes=[32, 32, 16])],
             [("x", x), ("m", raw)], ["y"],
             inits=[t("w2", f32(r, hin, 80) * 0.3), t("bias2", f32(r, 80) * 0.1)],
             what="qkv_hidden_sizes 32, 32, 16"),
        Case("attention_gpt2_past", 17,
             [N("Attention", ["x1", "w", "bias", "m2", "past"], ["y", "present"],
                num_heads=heads, unidirectional=1)],
             [("x1", f32(r, b, 2, hin)), ("m2", np.ones((b, 5), np.int32)),
              ("past", f32(r, 2, b, heads, 3, 8))], ["y", "present"], inits=[w, bias],
             what="GPT-2: causal, 2 tokens after a past of 3, present out"),
        Case("attention_causal_bias", 17,
             [N("Attention", ["x", "w", "bias", "", "", "ab"], ["y"], num_heads=heads,
                unidirectional=1)],
             [("x", x), ("ab", f32(r, 1, heads, s, s))], ["y"], inits=[w, bias],
             what="causal with attention_bias [1, N, S, T]"),
    ]
    ids = r.integers(0, 50, (b, s)).astype(np.int32)
    seg = r.integers(0, 2, (b, s)).astype(np.int32)
    emb = [t("word", f32(r, 50, hin)), t("pos", f32(r, 16, hin)), t("segw", f32(r, 2, hin)),
           t("gamma", f32(r, hin)), t("beta", f32(r, hin))]
    for opset in (17, 12):
        out.append(Case(f"embed_layernorm_op{opset}", opset,
                        [N("EmbedLayerNormalization",
                           ["ids", "seg", "word", "pos", "segw", "gamma", "beta", "m"],
                           ["y", "mask_index", "sum"], epsilon=1e-5)],
                        [("ids", ids), ("seg", seg), ("m", raw)], ["y", "mask_index", "sum"],
                        inits=emb, what=f"segments, mask_index and the sum out, opset {opset}"))
    out.append(Case("embed_layernorm_positions", 17,
                    [N("EmbedLayerNormalization",
                       ["ids", "", "word", "pos", "", "gamma", "beta", "m", "pids"],
                       ["y", "mask_index"])],
                    [("ids", ids), ("m", raw), ("pids", r.integers(0, 16, (b, s)).astype(np.int32))],
                    ["y", "mask_index"],
                    inits=emb, what="no segments, position_ids [B, S], default epsilon"))
    return out


def mha_cases(r):
    """The transformer optimizer's MultiHeadAttention in each input form."""
    b, s, l, heads, h = 2, 5, 7, 4, 8
    q, k, v = f32(r, b, s, 32), f32(r, b, l, 32), f32(r, b, l, 32)
    bias = t("bias", f32(r, 96) * 0.1)
    pad = np.ones((b, l), np.int32)
    pad[1, 4:] = 0
    mha = "MultiHeadAttention"
    # ONNX Runtime has no CPU kernel for the packed forms: it runs the same values unpacked, as
    # 4-D K and V [B, N, L, H] (and a 3-D query).
    kv = f32(r, b, l, heads, 2, h)
    packed_kv = Case("mha_packed_kv", 17, [N(mha, ["q", "kv"], ["y"], num_heads=heads)],
                     [("q", q), ("kv", kv)], ["y"],
                     what="K and V packed [B, L, N, 2, H] (reference: unpacked)")
    packed_kv.ref = Case("ref", 17, [N(mha, ["q", "k4", "v4"], ["y"], num_heads=heads)],
                         [("q", q), ("k4", np.ascontiguousarray(kv[:, :, :, 0].transpose(0, 2, 1, 3))),
                          ("v4", np.ascontiguousarray(kv[:, :, :, 1].transpose(0, 2, 1, 3)))], ["y"])
    qkv = f32(r, b, s, heads, 3, h)
    packed_qkv = Case("mha_packed_qkv", 17, [N(mha, ["qkv"], ["y"], num_heads=heads)],
                      [("qkv", qkv)], ["y"],
                      what="Q, K and V packed [B, S, N, 3, H] (reference: unpacked)")
    packed_qkv.ref = Case("ref", 17, [N(mha, ["q", "k4", "v4"], ["y"], num_heads=heads)],
                          [("q", np.ascontiguousarray(qkv[:, :, :, 0].reshape(b, s, heads * h))),
                           ("k4", np.ascontiguousarray(qkv[:, :, :, 1].transpose(0, 2, 1, 3))),
                           ("v4", np.ascontiguousarray(qkv[:, :, :, 2].transpose(0, 2, 1, 3)))],
                          ["y"])
    return [
        Case("mha_cross_bias", 17, [N(mha, ["q", "k", "v", "bias"], ["y"], num_heads=heads)],
             [("q", q), ("k", k), ("v", v)], ["y"], inits=[bias],
             what="3-D Q [B, 5, D], K and V [B, 7, D], bias"),
        Case("mha_padding_mask", 17,
             [N(mha, ["q", "k", "v", "", "m"], ["y"], num_heads=heads)],
             [("q", q), ("k", k), ("v", v), ("m", pad)], ["y"],
             what="key_padding_mask [B, T] (row 1 padded)"),
        Case("mha_lengths", 17,
             [N(mha, ["q", "k", "v", "", "m"], ["y"], num_heads=heads)],
             [("q", q), ("k", k), ("v", v), ("m", np.array([7, 3], np.int32))], ["y"],
             what="key_padding_mask as lengths [B]"),
        Case("mha_bnsh_cache", 17, [N(mha, ["q", "k4", "v4"], ["y"], num_heads=heads)],
             [("q", q), ("k4", f32(r, b, heads, l, h)), ("v4", f32(r, b, heads, l, h))], ["y"],
             what="K and V 4-D [B, N, L, H] (a cross-attention cache)"),
        packed_kv, packed_qkv,
        Case("mha_past_causal", 17,
             [N(mha, ["q2", "k2", "v2", "", "", "", "pk", "pv"], ["y", "pres_k", "pres_v"],
                num_heads=heads, unidirectional=1)],
             [("q2", f32(r, b, 2, 32)), ("k2", f32(r, b, 2, 32)), ("v2", f32(r, b, 2, 32)),
              ("pk", f32(r, b, heads, 3, h)), ("pv", f32(r, b, heads, 3, h))],
             ["y", "pres_k", "pres_v"], what="causal, 2 tokens after a past of 3, presents out"),
        Case("mha_attention_bias", 17,
             [N(mha, ["q", "k", "v", "", "", "ab"], ["y"], num_heads=heads, scale=0.3)],
             [("q", q), ("k", k), ("v", v), ("ab", f32(r, b, 1, s, l))], ["y"],
             what="attention_bias [B, 1, S, T], scale 0.3"),
        Case("mha_value_width", 17, [N(mha, ["q", "k", "v16"], ["y"], num_heads=heads)],
             [("q", q), ("k", k), ("v16", f32(r, b, l, 16))], ["y"],
             what="V narrower than Q and K (head sizes 8 and 4)"),
    ]


def rotary_cases(r):
    """com.microsoft's RotaryEmbedding (inputs: input, position_ids, cos_cache, sin_cache)."""
    ang = r.random((32, 8)) * 3
    cos, sin = t("cos", np.cos(ang).astype(np.float32)), t("sin", np.sin(ang).astype(np.float32))
    x3, x4 = f32(r, 2, 5, 64), f32(r, 2, 4, 5, 16)
    pids = r.integers(0, 32, (2, 5)).astype(np.int64)
    rot = "RotaryEmbedding"
    return [
        Case("rotary_3d_positions", 17, [N(rot, ["x", "p", "cos", "sin"], ["y"])],
             [("x", x3), ("p", pids)], ["y"], inits=[cos, sin],
             what="3-D [B, S, 64], head size 16 from the caches, position_ids [B, S]"),
        Case("rotary_4d_offset", 14, [N(rot, ["x", "p", "cos", "sin"], ["y"])],
             [("x", x4)], ["y"], inits=[cos, sin, t("p", np.array([7], np.int64))],
             what="4-D [B, N, S, H], one offset position, opset 14"),
        Case("rotary_interleaved", 17,
             [N(rot, ["x", "p", "cos", "sin"], ["y"], interleaved=1)],
             [("x", x3), ("p", pids)], ["y"], inits=[cos, sin], what="interleaved"),
        Case("rotary_partial", 12,
             [N(rot, ["x", "p", "cos", "sin"], ["y"], num_heads=2, rotary_embedding_dim=16)],
             [("x", x3)], ["y"], inits=[cos, sin, t("p", np.array([3], np.int64))],
             what="2 heads of 32, the first 16 dims turn, opset 12"),
    ]


def genai_cases(r):
    """The decoder test/lit/frontend/Inputs/genai_llm.py writes (the GenAI builder's int4 CPU
    Llama): a prompt, then one token after it with the prompt's cache."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test",
                                    "lit", "frontend", "Inputs"))
    import genai_llm  # noqa: E402
    # accuracy_level 0: ONNX Runtime in float (at 4 it quantizes A to int8, a 1e-2 difference).
    nodes, inits, inputs, outputs = genai_llm.build(layers=2, accuracy_level=0)
    # The builder's symbolic input dims: with static ones, ONNX Runtime folds Shape(mask) and
    # then misreads the folded total_sequence_length.
    dims = {v.name: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
            for v in inputs}
    outs = [o.name for o in outputs]
    out = []
    for name, past, s, what in (("genai_prompt", 0, 6, "prompt of 6 tokens, batch 2"),
                                ("genai_decode", 6, 1, "one token after a cache of 6")):
        ins = [("input_ids", r.integers(0, 100, (2, s)).astype(np.int64)),
               ("attention_mask", np.ones((2, past + s), np.int64))]
        for i in range(2):
            for kv in ("key", "value"):
                ins.append((f"past_key_values.{i}.{kv}",
                            r.standard_normal((2, 2, past, 16)).astype(np.float32)))
        c = Case(name, 21, nodes, ins, outs, inits=inits,
                 what="2-layer int4 GQA decoder (GenAI builder's ops), " + what)
        c.shapes = dims
        out.append(c)
    return out


def ort_bert_cases(r):
    """The BERT encoder test/lit/frontend/Inputs/ort_bert.py writes as the transformer optimizer
    leaves one (EmbedLayerNormalization, Attention, SkipLayerNormalization, BiasGelu), at the
    optimizer's opset 12, rows padded differently."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test",
                                    "lit", "frontend", "Inputs"))
    import ort_bert  # noqa: E402
    nodes, inits, inputs, outputs = ort_bert.build(layers=2)
    mask = np.ones((3, 7), np.int32)
    mask[1, 5:] = 0
    mask[2, 2:] = 0
    c = Case("ort_bert", 12, nodes,
             [("input_ids", r.integers(0, 100, (3, 7)).astype(np.int32)),
              ("segment_ids", r.integers(0, 2, (3, 7)).astype(np.int32)),
              ("input_mask", mask)], [o.name for o in outputs], inits=inits,
             what="2-layer BERT as ONNX Runtime's optimizer writes it, batch 3, rows of 7, 5, 2")
    c.shapes = {v.name: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
                for v in inputs}
    return [c]


def cases():
    r = np.random.default_rng(7)
    return (activation_cases(r) + norm_cases(r) + matmul_cases(r) + nbits_cases(r) + gbq_cases(r) +
            int4_cases(r) +
            gqa_cases(r) + bert_attention_cases(r) + mha_cases(r) + rotary_cases(r) +
            genai_cases(r) + ort_bert_cases(r))


if __name__ == "__main__":
    sys.exit(base.main(__doc__, cases))
