#!/usr/bin/python3
"""Plans each model at its own opset and rewritten to opsets 18 and 22, and requires the same plan.

Why: an exporter at opset 18 or later writes the same network with other node forms (the Reduce ops
take their axes as an input instead of an attribute); what oomplan answers must not depend on that.

What: for each model (the given files, plus two exported here with Debian's PyTorch 1.13 at opset
17: reductions of every kind, torch.split and reflect padding, and a LayerNorm written out by hand,
which opset 17 exports as ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div), it
  1. rewrites the model as ONNX's version converter would: the opset import set to 18 (then 22), and
     every ReduceL1/L2/LogSum/LogSumExp/Max/Mean/Min/Prod/SumSquare's axes attribute moved into an
     int64 initializer read as input 1 (subgraphs too); nothing else changed between 17 and 22 for
     the ops these models hold;
  2. runs `oomplan MODEL --batch B [--seq S] --emit=json` (and with --train, but for the
     reductions, which have no parameters) on the original and the
     rewritten models, and compares the arena, its lower bound, the peak step and the bytes of every
     kind but weights and constants (the rewritten model holds the axes as initializers: those may
     only grow, by at most the axes' bytes);
  3. for the exported models, runs oomplan-run on both with the same seeded inputs and requires
     bit-identical outputs.
Exit 0 when every model agrees, 1 otherwise.

Usage:
    /usr/bin/python3 utils/check/check_opset_upgrade.py WORKDIR [MODEL.onnx[:batch[:seq]] ...]
        [--tool build/tools/oomplan/oomplan] [--run-tool build/tools/oomplan-run/oomplan-run]
"""
import argparse
import copy
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

REDUCE_AXES_INPUT_18 = {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
                        "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSumSquare"}


def rewrite_graph(g, counter):
    inits = []
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                rewrite_graph(a.g, counter)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for sg in a.graphs:
                    rewrite_graph(sg, counter)
        if n.domain not in ("", "ai.onnx") or n.op_type not in REDUCE_AXES_INPUT_18:
            continue
        axes = [a for a in n.attribute if a.name == "axes"]
        if not axes:
            continue
        name = f"opset18_axes_{counter[0]}"
        counter[0] += 1
        inits.append(numpy_helper.from_array(np.array(list(axes[0].ints), np.int64), name))
        keep = [a for a in n.attribute if a.name != "axes"]
        del n.attribute[:]
        n.attribute.extend(keep)
        while len(n.input) < 1:
            n.input.append("")
        del n.input[1:]
        n.input.append(name)
    g.initializer.extend(inits)
    return sum(int(np.prod(t.dims)) * 8 for t in inits)


def upgrade(src, dst, opset):
    m = onnx.load(src, load_external_data=False)
    m = copy.deepcopy(m)
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = opset
    if m.ir_version < 8:
        m.ir_version = 8
    added = rewrite_graph(m.graph, [0])
    onnx.save(m, dst)
    return added


def export_models(work):
    import torch

    class Reductions(torch.nn.Module):
        def forward(self, x):
            a = x.mean(dim=-1, keepdim=True)
            b = x.amax(dim=1)
            c = x.amin(dim=(0, 2))
            d = torch.logsumexp(x, dim=2)
            e = x.norm(p=2, dim=1)
            f = x.abs().sum(dim=-1)
            g = x.prod(dim=0)
            h, i = torch.split(x, [3, 2], dim=2)
            j = torch.nn.functional.pad(x.unsqueeze(0), (2, 1, 1, 1), mode="reflect")
            return a, b, c, d, e, f, g, h * 2, i, j

    class HandLayerNorm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(5, 5)
            self.w = torch.nn.Parameter(torch.ones(5))
            self.b = torch.nn.Parameter(torch.zeros(5))

        def forward(self, x):
            x = self.lin(x)
            m = x.mean(-1, keepdim=True)
            s = x - m
            v = s.pow(2).mean(-1, keepdim=True)
            return s / torch.sqrt(v + 1e-5) * self.w + self.b

    torch.manual_seed(0)
    out = []
    for name, mod in (("reductions", Reductions()), ("hand_layernorm", HandLayerNorm())):
        path = os.path.join(work, f"{name}.onnx")
        x = torch.randn(4, 4, 5)
        torch.onnx.export(mod, (x,), path, opset_version=17, input_names=["x"],
                          dynamic_axes={"x": {0: "batch"}})
        out.append((path, 4, None, name == "hand_layernorm"))
    return out


def plan(tool, model, batch, seq, train):
    cmd = [tool, model, "--batch", str(batch), "--emit=json"]
    if seq:
        cmd += ["--seq", str(seq)]
    if train:
        cmd += ["--train"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 2):
        return None, p.stderr.strip()[:400]
    return json.loads(p.stdout), ""


def summary(j):
    k = dict(j["totals_by_kind"])
    fixed = k.get("constant", 0) + k.get("weight", 0)
    return {"arena": j["regions"]["arena"], "arena_lower_bound": j["arena_lower_bound"],
            "peak_step": j["peak_step"], "steps": j["steps"],
            "kinds": {x: v for x, v in k.items() if x not in ("constant", "weight")}, "constant": fixed}


def run_outputs(tool, model, work, tag):
    m = onnx.load(model, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    ind = os.path.join(work, tag + "_in")
    outd = os.path.join(work, tag + "_out")
    os.makedirs(ind, exist_ok=True)
    os.makedirs(outd, exist_ok=True)
    rng = np.random.default_rng(3)
    i = 0
    for vi in m.graph.input:
        if vi.name in inits:
            continue
        dims = [d.dim_value if d.dim_value > 0 else 4 for d in vi.type.tensor_type.shape.dim]
        arr = rng.standard_normal(dims).astype(np.float32)
        with open(os.path.join(ind, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(arr, vi.name).SerializeToString())
        i += 1
    p = subprocess.run([tool, model, "--inputs-dir", ind, "--output-dir", outd], capture_output=True,
                       text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()[:300]
    res = []
    for k in range(len(m.graph.output)):
        t = onnx.TensorProto()
        with open(os.path.join(outd, f"output_{k}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        res.append(numpy_helper.to_array(t))
    return res, ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("work")
    ap.add_argument("models", nargs="*")
    ap.add_argument("--tool", default="build/tools/oomplan/oomplan")
    ap.add_argument("--run-tool", default="build/tools/oomplan-run/oomplan-run")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    cases = []
    for spec in a.models:
        parts = spec.split(":")
        cases.append((parts[0], int(parts[1]) if len(parts) > 1 else 2,
                      int(parts[2]) if len(parts) > 2 else None, True))
    cases += export_models(a.work)
    fails = 0
    for path, batch, seq, trains in cases:
        base = os.path.splitext(os.path.basename(path))[0]
        for opset in (18, 22):
            up = os.path.join(a.work, f"{base}_opset{opset}.onnx")
            added = upgrade(path, up, opset)
            for train in (False, True) if trains else (False,):
                tag = f"{base} opset {opset}" + (" --train" if train else "")
                j0, e0 = plan(a.tool, path, batch, seq, train)
                j1, e1 = plan(a.tool, up, batch, seq, train)
                if j0 is None or j1 is None:
                    fails += 1
                    print(f"FAIL {tag}: {e0 or e1}")
                    continue
                s0, s1 = summary(j0), summary(j1)
                grow = s1["constant"] - s0["constant"]
                c0, c1 = dict(s0), dict(s1)
                c0.pop("constant")
                c1.pop("constant")
                ok = c0 == c1 and 0 <= grow <= added
                fails += not ok
                print(f"{'PASS' if ok else 'FAIL'} {tag}: arena {s1['arena']:,} (lower bound "
                      f"{s1['arena_lower_bound']:,}), peak step {s1['peak_step']}, activations "
                      f"{s1['kinds'].get('activation', 0):,}, weights and constants +{grow} for "
                      f"{added} bytes of axes"
                      + ("" if ok else f"\n  original {s0}\n  rewritten {s1}"))
            if path.startswith(a.work):
                r0, e0 = run_outputs(a.run_tool, path, a.work, base)
                r1, e1 = run_outputs(a.run_tool, up, a.work, f"{base}_{opset}")
                ok = r0 is not None and r1 is not None and len(r0) == len(r1) and all(
                    x.shape == y.shape and x.dtype == y.dtype and np.array_equal(x, y)
                    for x, y in zip(r0, r1))
                fails += not ok
                print(f"{'PASS' if ok else 'FAIL'} {base} opset {opset} run: "
                      + (f"{len(r0)} outputs bit-identical" if ok else (e0 or e1 or "outputs differ")))
    print("all agree" if not fails else f"{fails} disagreements")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
