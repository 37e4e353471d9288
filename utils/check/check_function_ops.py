#!/usr/bin/python3
"""Runs ONNX's opset 23 and 24 ops through oomplan-run and ONNX Runtime.

Why: ONNX 1.18 and 1.19 (opsets 23 and 24) added the ops LLM exports need: Attention (with
grouped-query heads, a KV cache, causal and padding masks, softcap), RMSNormalization,
RotaryEmbedding, Swish, and TensorScatter (a KV cache written in place). oomplan imports the first
four as their ONNX function bodies (lib/Frontend/ONNX/StandardFunctions.cpp) and runs TensorScatter
with a kernel of its own; ONNX Runtime implements each as one kernel of its own, so it is an
independent reference.

What: each case is a small model exercising one form of one op (3-D or 4-D inputs, each mask
kind, each qk_matmul_output mode, interleaved or partial rotation, ...), run as
utils/check/check_new_opsets.py runs its cases: oomplan-run with --poison --check=unplanned against
ONNX Runtime (utils/bench/run_onnxruntime.mjs), |ours - ort| <= 1e-4 + 1e-3 |ort|, integers exactly.
Exit 0 when every case passes, 1 otherwise.

Usage:
    /usr/bin/python3 utils/check/check_function_ops.py WORKDIR [--tool build/tools/oomplan-run/oomplan-run]
        [--only NAME,NAME] [--list] [--write-only]
ONNX Runtime comes from ORT_NODE_DIR (default /tmp/ort), as for check_new_opsets.py.
"""
import os
import sys

import numpy as np
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_new_opsets as base  # noqa: E402  (the same runner and tolerances)
from check_new_opsets import Case  # noqa: E402

LOWEST = np.finfo(np.float32).min

N = helper.make_node


def f32(r, *shape):
    return r.standard_normal(shape).astype(np.float32)


def attention_cases(r):
    out = []
    q, k, v = f32(r, 2, 4, 3, 8), f32(r, 2, 4, 5, 8), f32(r, 2, 4, 5, 6)
    out.append(Case("att_mha_4d", 23, [N("Attention", ["q", "k", "v"], ["y"])],
                    [("q", q), ("k", k), ("v", v)], ["y"],
                    what="4-D, no mask, default scale, V head size 6"))
    out.append(Case("att_4d_head_attrs", 23,
                    [N("Attention", ["q", "k", "v"], ["y"], q_num_heads=4, kv_num_heads=4)],
                    [("q", q), ("k", k), ("v", v)], ["y"],
                    what="4-D inputs with the head-count attributes set (the rank decides)"))
    q3, k3, v3 = f32(r, 2, 3, 16), f32(r, 2, 5, 8), f32(r, 2, 5, 8)
    out.append(Case("att_gqa_3d", 23,
                    [N("Attention", ["q", "k", "v"], ["y"], q_num_heads=4, kv_num_heads=2)],
                    [("q", q3), ("k", k3), ("v", v3)], ["y"],
                    what="3-D, grouped-query (4 query heads, 2 key/value heads)"))
    out.append(Case("att_mqa_3d_scale", 23,
                    [N("Attention", ["q", "k", "v"], ["y"], q_num_heads=4, kv_num_heads=1,
                       scale=0.3)],
                    [("q", q3), ("k", f32(r, 2, 5, 4)), ("v", f32(r, 2, 5, 4))], ["y"],
                    what="3-D, multi-query, scale 0.3"))
    # Grouped-query with a 4-D mask: one per batch row (head axis 1: grouped by broadcasting),
    # and one per query head (the heads repeated, as ONNX's body does).
    qg, kg, vg = f32(r, 2, 4, 3, 8), f32(r, 2, 2, 5, 8), f32(r, 2, 2, 5, 8)
    mb = r.random((2, 1, 3, 5)) < 0.7
    mb[..., 0] = True
    mh = r.random((2, 4, 3, 5)) < 0.7
    mh[..., 0] = True
    out.append(Case("att_gqa_batch_mask", 23, [N("Attention", ["q", "k", "v", "m"], ["y"])],
                    [("q", qg), ("k", kg), ("v", vg), ("m", mb)], ["y"],
                    what="4-D grouped-query (4/2 heads), bool mask [B, 1, Sq, T]"))
    out.append(Case("att_gqa_head_mask", 23,
                    [N("Attention", ["q", "k", "v", "m"], ["y", "", "", "qk"],
                       qk_matmul_output_mode=3)],
                    [("q", qg), ("k", kg), ("v", vg), ("m", mh)], ["y", "qk"],
                    what="4-D grouped-query, a bool mask per query head, probabilities out"))
    pk, pv = f32(r, 2, 2, 4, 8), f32(r, 2, 2, 4, 8)
    qc, kc, vc = f32(r, 2, 4, 3, 8), f32(r, 2, 2, 3, 8), f32(r, 2, 2, 3, 8)
    out.append(Case("att_cache_causal", 23,
                    [N("Attention", ["q", "k", "v", "", "pk", "pv"], ["y", "present_k", "present_v"],
                       is_causal=1)],
                    [("q", qc), ("k", kc), ("v", vc), ("pk", pk), ("pv", pv)],
                    ["y", "present_k", "present_v"],
                    what="past key/value (4) + new (3), causal with the past offset, GQA"))
    out.append(Case("att_causal_square", 23,
                    [N("Attention", ["q", "k", "v"], ["y"], is_causal=1)],
                    [("q", f32(r, 1, 2, 6, 4)), ("k", f32(r, 1, 2, 6, 4)), ("v", f32(r, 1, 2, 6, 4))],
                    ["y"], what="causal, square"))
    # A bool mask that leaves every row at least one key.
    m = r.random((3, 5)) < 0.6
    m[:, 0] = True
    for mode in range(4):
        c = Case(f"att_bool_mask_mode{mode}", 23,
                 [N("Attention", ["q", "k", "v", "m"], ["y", "", "", "qk"], softcap=2.5,
                    qk_matmul_output_mode=mode)],
                 [("q", q), ("k", k), ("v", v), ("m", m)], ["y", "qk"],
                 what=f"bool mask, softcap 2.5, qk_matmul_output mode {mode}")
        c.lowest_is_inf = mode == 2
        out.append(c)
    fm = f32(r, 2, 1, 3, 5)
    c = Case("att_float_mask_causal", 23,
             [N("Attention", ["q", "k", "v", "m"], ["y", "", "", "qk"], is_causal=1,
                qk_matmul_output_mode=2)],
             [("q", q), ("k", k), ("v", v), ("m", fm)], ["y", "qk"],
             what="additive float mask plus the causal frontier, mode 2")
    c.lowest_is_inf = True
    out.append(c)
    out.append(Case("att_f16_causal_mask", 23,
                    [N("Attention", ["q", "k", "v", "m"], ["y"], is_causal=1, softmax_precision=1)],
                    [("q", q.astype(np.float16)), ("k", k.astype(np.float16)),
                     ("v", v.astype(np.float16)), ("m", m)], ["y"],
                    what="float16, bool mask and causal, softmax in float32"))
    im = np.where(m, 0, -30).astype(np.int64)
    out.append(Case("att_int_mask", 23,
                    [N("Attention", ["q", "k", "v", "m"], ["y"])],
                    [("q", q), ("k", k), ("v", v), ("m", im)], ["y"],
                    what="an int64 mask, added as Q's type (0 or -30)"))
    out.append(Case("att_softmax_double", 23,
                    [N("Attention", ["q", "k", "v"], ["y"], softmax_precision=11)],
                    [("q", q), ("k", k), ("v", v)], ["y"],
                    what="softmax_precision double"))
    c = Case("att24_short_mask", 24,
             [N("Attention", ["q", "k", "v", "m"], ["y"])],
             [("q", q), ("k", k), ("v", v), ("m", m[:, :3].copy())], ["y"],
             what="opset 24: a mask shorter than the keys, padded with -inf")
    # ONNX Runtime 1.30 refuses a short mask: its reference is the mask padded by hand with
    # False (a disallowed key, as -inf padding makes it).
    padded = np.concatenate([m[:, :3], np.zeros((3, 2), dtype=bool)], axis=1)
    c.ort_inputs = [("q", q), ("k", k), ("v", v), ("m", padded)]
    out.append(c)
    nonpad = np.array([5, 3], dtype=np.int64)
    out.append(Case("att24_nonpad_causal", 24,
                    [N("Attention", ["q", "k", "v", "", "", "", "n"], ["y"], is_causal=1)],
                    [("q", q), ("k", k), ("v", v), ("n", nonpad)], ["y"],
                    what="opset 24: nonpad_kv_seqlen [5, 3], causal offset per batch"))
    out += window_cases(r)
    return out


def window_mask(sq, t, offset, left, right):
    """Where Attention-25's sliding window lets query i (at p = i + offset) see key j."""
    p = np.arange(sq)[:, None] + np.asarray(offset).reshape(-1, 1, 1, 1)
    j = np.arange(t)[None, :]
    ok = np.ones(p.shape[:-1] + (t,), dtype=bool)
    if left >= 0:
        ok &= p - j <= left
    if right >= 0:
        ok &= j - p <= right
    return ok


def window_cases(r):
    """Attention-25's windows; ONNX Runtime's reference is Attention-24 with the window as a bool
    mask, computed here from the definition."""
    out = []
    q6, k6, v6 = f32(r, 2, 2, 6, 4), f32(r, 2, 2, 6, 4), f32(r, 2, 2, 6, 4)
    for name, causal, left, right in (("win_left2_causal", 1, 2, -1),
                                      ("win_left2_right1", 0, 2, 1),
                                      ("win_right0", 0, -1, 0)):
        c = Case(name, 25, [N("Attention", ["q", "k", "v"], ["y"], is_causal=causal,
                               left_window_size=left, right_window_size=right)],
                 [("q", q6), ("k", k6), ("v", v6)], ["y"],
                 what=f"opset 25 window left {left} right {right}, causal {causal}")
        c.ort_case = Case(name + "_ort", 24,
                          [N("Attention", ["q", "k", "v", "m"], ["y"], is_causal=causal)],
                          [("q", q6), ("k", k6), ("v", v6),
                           ("m", window_mask(6, 6, 0, left, right)[0, 0])], ["y"])
        out.append(c)
    # With a past of 4: p = i + 4.
    qc, kc, vc = f32(r, 1, 2, 2, 4), f32(r, 1, 2, 2, 4), f32(r, 1, 2, 2, 4)
    pk, pv = f32(r, 1, 2, 4, 4), f32(r, 1, 2, 4, 4)
    # (ONNX Runtime runs a past only with the present outputs asked for.)
    outs = ["y", "pk2", "pv2"]
    c = Case("win_past", 25, [N("Attention", ["q", "k", "v", "", "pk", "pv"], outs, is_causal=1,
                                left_window_size=1)],
             [("q", qc), ("k", kc), ("v", vc), ("pk", pk), ("pv", pv)], outs,
             what="opset 25 window left 1 after a past of 4, causal")
    c.ort_case = Case("win_past_ort", 24,
                      [N("Attention", ["q", "k", "v", "m", "pk", "pv"], outs, is_causal=1)],
                      [("q", qc), ("k", kc), ("v", vc), ("m", window_mask(2, 6, 4, 1, -1)[0, 0]),
                       ("pk", pk), ("pv", pv)], outs)
    out.append(c)
    # An external cache: p = i + nonpad[b] - Sq, per batch row.
    qn, kn, vn = f32(r, 2, 2, 2, 4), f32(r, 2, 2, 6, 4), f32(r, 2, 2, 6, 4)
    nonpad = np.array([6, 4], dtype=np.int64)
    c = Case("win_nonpad", 25, [N("Attention", ["q", "k", "v", "", "", "", "n"], ["y"],
                                  left_window_size=2, right_window_size=0)],
             [("q", qn), ("k", kn), ("v", vn), ("n", nonpad)], ["y"],
             what="opset 25 window with nonpad_kv_seqlen [6, 4] (offsets 4 and 2)")
    c.ort_case = Case("win_nonpad_ort", 24,
                      [N("Attention", ["q", "k", "v", "m", "", "", "n"], ["y"])],
                      [("q", qn), ("k", kn), ("v", vn), ("m", window_mask(2, 6, nonpad - 2, 2, 0)),
                       ("n", nonpad)], ["y"])
    out.append(c)
    return out


def norm_rope_cases(r):
    out = []
    x = f32(r, 2, 3, 8)
    out.append(Case("rms_last", 23, [N("RMSNormalization", ["x", "s"], ["y"], epsilon=1e-3)],
                    [("x", x), ("s", f32(r, 8))], ["y"], what="RMSNormalization, last axis"))
    out.append(Case("rms_axis1", 23, [N("RMSNormalization", ["x", "s"], ["y"], axis=1)],
                    [("x", x), ("s", f32(r, 3, 8))], ["y"], what="RMSNormalization, axis 1"))
    # RotaryEmbedding: 4-D [B, H, S, D] with caches [B, S, D/2]; 3-D with position ids.
    b, h, s, d = 2, 3, 4, 8
    x4 = f32(r, b, h, s, d)
    ang = r.random((b, s, d // 2)).astype(np.float32) * 3
    out.append(Case("rope_4d", 23, [N("RotaryEmbedding", ["x", "c", "s"], ["y"])],
                    [("x", x4), ("c", np.cos(ang)), ("s", np.sin(ang))], ["y"],
                    what="RotaryEmbedding 4-D, caches per batch"))
    out.append(Case("rope_4d_interleaved", 23,
                    [N("RotaryEmbedding", ["x", "c", "s"], ["y"], interleaved=1)],
                    [("x", x4), ("c", np.cos(ang)), ("s", np.sin(ang))], ["y"],
                    what="RotaryEmbedding 4-D, interleaved"))
    table = r.random((10, 2)).astype(np.float32) * 3
    pos = np.array([[0, 1, 2, 3], [5, 6, 7, 9]], dtype=np.int64)
    x3 = f32(r, b, s, h * d)
    out.append(Case("rope_3d_partial", 23,
                    [N("RotaryEmbedding", ["x", "c", "s", "p"], ["y"], num_heads=h,
                       rotary_embedding_dim=4)],
                    [("x", x3), ("c", np.cos(table)), ("s", np.sin(table)), ("p", pos)], ["y"],
                    what="RotaryEmbedding 3-D, position ids, rotary_embedding_dim 4 of 8"))
    out.append(Case("rope_3d_partial_interleaved", 23,
                    [N("RotaryEmbedding", ["x", "c", "s", "p"], ["y"], num_heads=h,
                       rotary_embedding_dim=4, interleaved=1)],
                    [("x", x3), ("c", np.cos(table)), ("s", np.sin(table)), ("p", pos)], ["y"],
                    what="RotaryEmbedding 3-D, partial and interleaved"))
    out.append(Case("swish", 24, [N("Swish", ["x"], ["y"]), N("Swish", ["x"], ["y2"], alpha=0.5)],
                    [("x", x)], ["y", "y2"], what="Swish, alpha 1 and 0.5"))
    # TensorScatter: a [B, H, Max, D] cache written at per-row indices, then read by Attention
    # with nonpad_kv_seqlen (the external-cache decode step of ONNX's Attention-24 text).
    cache, upd = f32(r, 2, 2, 6, 4), f32(r, 2, 2, 2, 4)
    wi = np.array([1, 3], dtype=np.int64)
    out.append(Case("tensorscatter_linear", 24,
                    [N("TensorScatter", ["c", "u", "w"], ["y"])],
                    [("c", cache), ("u", upd), ("w", wi)], ["y"],
                    what="TensorScatter, linear, write indices [1, 3]"))
    out.append(Case("tensorscatter_circular_axis", 24,
                    [N("TensorScatter", ["c", "u", "w"], ["y"], mode="circular", axis=2)],
                    [("c", cache), ("u", f32(r, 2, 2, 3, 4)), ("w", np.array([5, 4], dtype=np.int64))],
                    ["y"], what="TensorScatter, circular (wraps), axis 2"))
    out.append(Case("tensorscatter_attention", 24,
                    [N("TensorScatter", ["kc", "k", "w"], ["k2"]),
                     N("TensorScatter", ["vc", "v", "w"], ["v2"]),
                     N("Attention", ["q", "k2", "v2", "", "", "", "n"], ["y"], is_causal=1)],
                    [("q", f32(r, 2, 4, 2, 4)), ("kc", cache), ("k", upd), ("vc", f32(r, 2, 2, 6, 4)),
                     ("v", f32(r, 2, 2, 2, 4)), ("w", wi), ("n", wi + 2)], ["y", "k2"],
                    what="decode with an external cache: TensorScatter then Attention-24 (GQA)"))
    return out


def cases():
    r = np.random.default_rng(23)
    return attention_cases(r) + norm_rope_cases(r)


def run(case, work, tool):
    """check_new_opsets.run_case, with two differences some cases ask for: ONNX Runtime fills a
    masked score with the lowest float where ONNX's function body (and oomplan) write -inf
    (lowest_is_inf: those read as -inf), and ONNX Runtime may need other inputs or another model
    for the same meaning (ort_inputs; ort_case: Attention-25's windows as Attention-24 masks)."""
    ort_inputs = getattr(case, "ort_inputs", None)
    ref = getattr(case, "ort_case", None)
    if ort_inputs:
        ref = Case(case.name + "_ort", case.opset, case.nodes, ort_inputs, case.outputs)
    if not ref and not getattr(case, "lowest_is_inf", False):
        return base.run_case(case, work, tool)
    d = os.path.join(work, case.name)
    ok, text = base.run_case(case, work, tool)  # ours, and ONNX Runtime on the same model
    if ref:
        ref_ok, ref_text = base.run_case(ref, work, tool)
        ort_d = os.path.join(work, ref.name, "ort")
        if not os.path.exists(os.path.join(ort_d, "output_0.pb")):
            return False, "the reference did not run: " + ref_text
    else:
        ort_d = os.path.join(d, "ort")
    if not os.path.exists(os.path.join(d, "ours", "output_0.pb")):
        return ok, text
    n = len(case.outputs)
    msgs, ok = [], True
    for name, a, b in zip(case.outputs, base.read_outputs(os.path.join(d, "ours"), n),
                          base.read_outputs(ort_d, n)):
        if getattr(case, "lowest_is_inf", False) and b.dtype == np.float32:
            b = np.where(b <= LOWEST, -np.inf, b).astype(np.float32)
        good, t = base.compare_nan_aware(a, b)
        ok &= good
        msgs.append(f"{name}: {t}")
    return ok, "; ".join(msgs)


if __name__ == "__main__":
    sys.exit(base.main(__doc__, cases, run))
