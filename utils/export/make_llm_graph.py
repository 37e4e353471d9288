#!/usr/bin/python3
"""Writes a decoder-only LLM graph shaped as a published model, for --serve's tests.

The weights are references to a file that is never written (a weights-stripped
export): oomplan sizes them from their dims and never reads them, so a 7B graph
is a few hundred kilobytes. Four attention forms:

  eager   optimum-style: MatMul -> Softmax -> MatMul, rotary on q and k, the
          cache as past_key_values.N.key/.value [batch, kv_heads, past, head]
          concatenated with the new tokens into present.N.*, grouped-query
          heads repeated (Unsqueeze, Expand, Reshape) when kv_heads < heads;
  gqa     ONNX Runtime GenAI's GroupQueryAttention with the same cache inputs
          (local_window_size set from a sliding window);
  attention23  opset 23's Attention op on 3-D Q, K, V with the cache as its
          past_key/past_value (no rotary: the op has none);
  forward eager attention with no cache at all (a plain forward graph);
  fused   GPT-2's single c_attn projection (with bias) Split into q, k, v.

Usage:
    make_llm_graph.py OUT.onnx --config llama2-7b|mistral-7b|qwen2-7b|qwen2-0.5b|
        gpt2|falcon-7b|tiny [--attention eager|gqa] [--no-cache] [--dtype fp16|fp32]
        [--layers N]
"""
import argparse

import numpy as np
from onnx import TensorProto, helper, numpy_helper

# Published configs (config.json on the Hugging Face hub): layers, hidden,
# heads, KV heads, intermediate, vocabulary, sliding window.
CONFIGS = {
    "llama2-7b": dict(layers=32, hidden=4096, heads=32, kv=32, inter=11008, vocab=32000),
    "mistral-7b": dict(layers=32, hidden=4096, heads=32, kv=8, inter=14336, vocab=32000,
                       window=4096),
    "qwen2-7b": dict(layers=28, hidden=3584, heads=28, kv=4, inter=18944, vocab=152064,
                     qkv_bias=True),
    "qwen2-0.5b": dict(layers=24, hidden=896, heads=14, kv=2, inter=4864, vocab=151936,
                       qkv_bias=True),
    "gpt2": dict(layers=12, hidden=768, heads=12, kv=12, inter=3072, vocab=50257,
                 fused=True),
    # Falcon-7B's multi-query attention: 71 query heads of 64, one KV head.
    "falcon-7b": dict(layers=32, hidden=4544, heads=71, kv=1, inter=18176, vocab=65024),
    "tiny": dict(layers=2, hidden=64, heads=4, kv=2, inter=128, vocab=100),
}
DTYPES = {"fp16": TensorProto.FLOAT16, "fp32": TensorProto.FLOAT}


class Builder:
    def __init__(self, dtype):
        self.dtype, self.nodes, self.inits, self.offset = dtype, [], [], 0
        self.n = 0

    def weight(self, name, dims, dtype=None):
        """An initializer with dims only, its data in a file never written."""
        dtype = self.dtype if dtype is None else dtype
        t = TensorProto(name=name, data_type=dtype, dims=list(dims))
        t.data_location = TensorProto.EXTERNAL
        size = int(np.prod(dims)) * (2 if dtype == TensorProto.FLOAT16 else 4)
        for k, v in (("location", "weights.bin"), ("offset", str(self.offset)),
                     ("length", str(size))):
            e = t.external_data.add()
            e.key, e.value = k, v
        self.offset += size
        self.inits.append(t)
        return name

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def node(self, op, ins, outs=1, domain="", **attrs):
        self.n += 1
        names = [f"{op.lower()}_{self.n}_{i}" for i in range(outs)] if isinstance(outs, int) \
            else outs
        self.nodes.append(helper.make_node(op, ins, names, name=f"{op}_{self.n}",
                                           domain=domain, **attrs))
        return names[0] if len(names) == 1 else names


def build(cfg, attention="eager", cache=True, dtype="fp16", layers=None, max_pos=4096,
          cache_head=None):
    L = layers or cfg["layers"]
    H, nh, kv, inter, V = cfg["hidden"], cfg["heads"], cfg["kv"], cfg["inter"], cfg["vocab"]
    d = H // nh
    fused = cfg.get("fused", False)
    window = cfg.get("window")
    b = Builder(DTYPES[dtype])
    et = DTYPES[dtype]
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64,
                                            ["batch_size", "sequence_length"])]
    total = "total_sequence_length" if cache else "sequence_length"
    inputs.append(helper.make_tensor_value_info("attention_mask", TensorProto.INT64,
                                                ["batch_size", total]))
    outputs = [helper.make_tensor_value_info("logits", et,
                                             ["batch_size", "sequence_length", V])]
    x = b.node("Gather", [b.weight("embed_tokens", [V, H]), "input_ids"])
    if fused:  # GPT-2's learned positions
        inputs.append(helper.make_tensor_value_info("position_ids", TensorProto.INT64,
                                                    ["batch_size", "sequence_length"]))
        x = b.node("Add", [x, b.node("Gather", [b.weight("wpe", [max_pos, H]),
                                               "position_ids"])])
    if attention == "attention23":
        pass
    elif attention == "gqa":
        one = b.const("one", np.array([1], np.int64))
        b.node("ReduceSum", ["attention_mask", one], ["mask_sum"], keepdims=0)
        b.node("Sub", ["mask_sum", one], ["seqlens64"])
        b.node("Cast", ["seqlens64"], ["seqlens_k"], to=TensorProto.INT32)
        b.node("Shape", ["attention_mask"], ["mask_shape"])
        b.node("Gather", ["mask_shape", one], ["total64"], axis=0)
        b.node("Cast", ["total64"], ["total_seq_len"], to=TensorProto.INT32)
        cos = b.weight("cos_cache", [max_pos, d // 2])
        sin = b.weight("sin_cache", [max_pos, d // 2])
    else:
        heads_shape = b.const("heads_shape", np.array([0, 0, nh, d], np.int64))
        kv_shape = b.const("kv_shape", np.array([0, 0, kv, d], np.int64))
        merge_shape = b.const("merge_shape", np.array([0, 0, nh * d], np.int64))
        mask = b.node("Unsqueeze", [b.node("Cast", ["attention_mask"], to=et),
                                    b.const("axes12", np.array([1, 2], np.int64))])
        if not fused:
            inputs.append(helper.make_tensor_value_info(
                "position_ids", TensorProto.INT64, ["batch_size", "sequence_length"]))
            axis1 = b.const("axis1", np.array([1], np.int64))
            cos = b.node("Unsqueeze", [b.node("Gather", [b.weight("cos_cache", [max_pos, d]),
                                                         "position_ids"]), axis1])
            sin = b.node("Unsqueeze", [b.node("Gather", [b.weight("sin_cache", [max_pos, d]),
                                                         "position_ids"]), axis1])
            half = [b.const("h0", np.array([0], np.int64)),
                    b.const("h1", np.array([d // 2], np.int64)),
                    b.const("h2", np.array([d], np.int64)),
                    b.const("ax3", np.array([3], np.int64))]
        scale = b.const("scale", np.array(1 / np.sqrt(d), np.float16 if dtype == "fp16"
                                          else np.float32))

    def rotary(t):
        lo = b.node("Slice", [t, half[0], half[1], half[3]])
        hi = b.node("Slice", [t, half[1], half[2], half[3]])
        rot = b.node("Concat", [b.node("Neg", [hi]), lo], axis=3)
        return b.node("Add", [b.node("Mul", [t, cos]), b.node("Mul", [rot, sin])])

    def norm(t, name):
        return b.node("LayerNormalization", [t, b.weight(name, [H])], axis=-1)

    for i in range(L):
        p = f"layers.{i}"
        h = norm(x, p + ".ln1")
        if fused:
            qkv = b.node("Add", [b.node("MatMul", [h, b.weight(p + ".c_attn", [H, 3 * H])]),
                                 b.weight(p + ".c_attn.bias", [3 * H])])
            q, k, v = b.node("Split", [qkv, b.const(f"split{i}", np.array([H] * 3, np.int64))],
                             3, axis=-1)
        else:
            def proj(name, n):
                y = b.node("MatMul", [h, b.weight(p + name, [H, n])])
                if cfg.get("qkv_bias"):
                    y = b.node("Add", [y, b.weight(p + name + ".bias", [n])])
                return y
            q, k, v = proj(".q", nh * d), proj(".k", kv * d), proj(".v", kv * d)
        if cache:
            pk, pv = f"past_key_values.{i}.key", f"past_key_values.{i}.value"
            for name in (pk, pv):
                inputs.append(helper.make_tensor_value_info(
                    name, et, ["batch_size", kv, "past_sequence_length", cache_head or d]))
            ok, ov = f"present.{i}.key", f"present.{i}.value"
            for name in (ok, ov):
                outputs.append(helper.make_tensor_value_info(
                    name, et, ["batch_size", kv, "total_sequence_length", d]))
        if attention == "attention23":
            ctx = b.node("Attention", [q, k, v, "", pk, pv], [p + "/attn", ok, ov],
                         q_num_heads=nh, kv_num_heads=kv)[0]
        elif attention == "gqa":
            attrs = dict(num_heads=nh, kv_num_heads=kv, do_rotary=1)
            if window:
                attrs["local_window_size"] = window
            ctx = b.node("GroupQueryAttention",
                         [q, k, v, pk, pv, "seqlens_k", "total_seq_len", cos, sin],
                         [p + "/attn", ok, ov], "com.microsoft", **attrs)[0]
        else:
            q4 = b.node("Transpose", [b.node("Reshape", [q, heads_shape])], perm=[0, 2, 1, 3])
            k4 = b.node("Transpose", [b.node("Reshape", [k, kv_shape if not fused
                                                         else heads_shape])],
                        perm=[0, 2, 1, 3])
            v4 = b.node("Transpose", [b.node("Reshape", [v, kv_shape if not fused
                                                         else heads_shape])],
                        perm=[0, 2, 1, 3])
            if not fused:
                q4, k4 = rotary(q4), rotary(k4)
            if cache:
                k4 = b.node("Concat", [pk, k4], [ok], axis=2)
                v4 = b.node("Concat", [pv, v4], [ov], axis=2)
            if kv < nh:  # repeat_kv
                rep = b.const(f"rep{i}", np.array([1, 1, nh // kv, 1, 1], np.int64))
                ax2 = b.const(f"ax2_{i}", np.array([2], np.int64))
                full = b.const(f"full{i}", np.array([0, nh, -1, d], np.int64))
                k4 = b.node("Reshape", [b.node("Expand", [b.node("Unsqueeze", [k4, ax2]), rep]),
                                        full])
                v4 = b.node("Reshape", [b.node("Expand", [b.node("Unsqueeze", [v4, ax2]), rep]),
                                        full])
            s = b.node("MatMul", [q4, b.node("Transpose", [k4], perm=[0, 1, 3, 2])])
            s = b.node("Add", [b.node("Mul", [s, scale]), mask])
            o = b.node("MatMul", [b.node("Softmax", [s], axis=-1), v4])
            ctx = b.node("Reshape", [b.node("Transpose", [o], perm=[0, 2, 1, 3]), merge_shape])
        x = b.node("Add", [x, b.node("MatMul", [ctx, b.weight(p + ".o", [nh * d, H])])])
        h = norm(x, p + ".ln2")
        if fused:
            u = b.node("MatMul", [h, b.weight(p + ".fc", [H, inter])])
            a = b.node("Mul", [u, b.node("Sigmoid", [u])])
        else:
            g = b.node("MatMul", [h, b.weight(p + ".gate", [H, inter])])
            u = b.node("MatMul", [h, b.weight(p + ".up", [H, inter])])
            a = b.node("Mul", [b.node("Mul", [g, b.node("Sigmoid", [g])]), u])
        x = b.node("Add", [x, b.node("MatMul", [a, b.weight(p + ".down", [inter, H])])])
    b.node("MatMul", [norm(x, "final_norm"), b.weight("lm_head", [H, V])], ["logits"])
    g = helper.make_graph(b.nodes, "llm", inputs, outputs, initializer=b.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(
        "", 23 if attention == "attention23" else 17),
                                            helper.make_opsetid("com.microsoft", 1)],
                          producer_name="make_llm_graph.py")
    m.ir_version = 10 if attention == "attention23" else 8
    return m


def merged(model):
    """Optimum's merged decoder: the whole decoder in both branches of an If on a
    use_cache_branch input (here the same body twice), the weights shared."""
    g = model.graph
    produced = {o for n in g.node for o in n.output}

    def branch(prefix):
        nodes = []
        for n in g.node:
            c = helper.make_node(n.op_type, [prefix + i if i in produced else i for i in n.input],
                                 [prefix + o for o in n.output], name=prefix + n.name,
                                 domain=n.domain)
            c.attribute.extend(n.attribute)
            nodes.append(c)
        outs = [helper.make_tensor_value_info(prefix + o.name, o.type.tensor_type.elem_type,
                                              None) for o in g.output]
        return helper.make_graph(nodes, prefix + "branch", [], outs)

    flag = helper.make_tensor_value_info("use_cache_branch", TensorProto.BOOL, [1])
    node = helper.make_node("If", ["use_cache_branch"], [o.name for o in g.output],
                            then_branch=branch("with_past/"), else_branch=branch("no_past/"))
    out = helper.make_graph([node], g.name, list(g.input) + [flag], list(g.output),
                            initializer=list(g.initializer))
    m = helper.make_model(out, opset_imports=list(model.opset_import),
                          producer_name=model.producer_name)
    m.ir_version = model.ir_version
    return m


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--config", choices=sorted(CONFIGS), required=True)
    ap.add_argument("--attention", choices=["eager", "gqa", "attention23"], default="eager")
    ap.add_argument("--no-cache", action="store_true")
    ap.add_argument("--dtype", choices=sorted(DTYPES), default="fp16")
    ap.add_argument("--layers", type=int)
    ap.add_argument("--merged", action="store_true",
                    help="optimum's merged decoder: the decoder in both branches of an If")
    ap.add_argument("--cache-head-size", type=int,
                    help="declare the cache inputs with this head size (a broken export, "
                         "for the error test)")
    a = ap.parse_args()
    import onnx
    m = build(CONFIGS[a.config], a.attention, not a.no_cache, a.dtype, a.layers,
              cache_head=a.cache_head_size)
    onnx.save(merged(m) if a.merged else m, a.out)
