#!/usr/bin/python3
"""Compares oomplan's inferred shapes with a real run of the model in ONNX Runtime.

What: for each MODEL, runs the model in ONNX Runtime (npm package onnxruntime-node, CPU) at the
given bindings (default batch=8, seq=128) and compares the element type, dims and bytes of every
graph output and of a deterministic sample of intermediate values with
`oomplan MODEL --dim batch=8 --dim seq=128 --emit=shapes`; where oomplan also tracks the contents
of a small shape tensor (`values=[...]`), those must equal the run's contents too. Prints every mismatch (value, our
formula and its value, the runtime's dims), one summary line per model
(`MODEL: values compared: N, mismatches: M`) and a total; exits 1 on any mismatch.

How:
  1. Temp copy: the model is loaded with /usr/bin/python3's onnx (python3-onnx) without its
     external data. Weights stripped from the file (external data `<name>.stripped.bin`) get a
     sparse, zero-filled file of the right length (truncate) in a temp folder, never next to the
     model; a data file that does exist is linked instead.
  2. Intermediate values: node outputs in file (topological) order, Constant outputs left out;
     every k-th one with k = len // SAMPLE, so at least SAMPLE values spread over the whole graph
     (--all: every node output). They are appended to graph.output as untyped ValueInfoProtos
     (ONNX Runtime infers their types); external data references are kept.
  3. Inputs: each graph input's dims from its dim_value or its dim_param's binding (an unbound
     or unnamed dynamic dim is an error: pass --dim NAME=VALUE). Integer inputs that index an
     embedding (Gather on a weight, possibly through Cast/Reshape/Unsqueeze) get random ids below
     the smallest table size; inputs whose name contains "mask" get ones; other integer inputs
     zeros; floats a standard normal; bools true. Fixed seed.
  4. utils/check/run_onnxruntime_shapes.mjs (node) runs the temp model and prints every output's type
     and dims as JSON. ORT_NODE_DIR (default /tmp/ort) must hold node_modules/onnxruntime-node:
         mkdir -p /tmp/ort && cd /tmp/ort && npm init -y \
           && npm install onnxruntime-node --onnxruntime-node-install=skip
  5. oomplan runs on the ORIGINAL model with every input symbol bound by --dim; the listing is
     parsed and compared by utils/ci/check_shapes_golden.py's functions (dims and bytes formulas
     evaluated at the bindings; bytes = ceil(elements * bits / 8)).

--write-golden DIR stores the runtime's observed shapes as DIR/<model>.txt (with a header saying
how they were made) for utils/ci/check_shapes_golden.py and the lit test test/lit/shapes-golden/.

Examples (Debian's interpreter, for python3-onnx):
    /usr/bin/python3 utils/check/compare_shapes_with_runtime.py --oomplan build/tools/oomplan/oomplan \
        test/models/bert_like.onnx test/models/gpt_like.onnx --batch 8 --seq 128
    /usr/bin/python3 utils/check/compare_shapes_with_runtime.py --oomplan build/tools/oomplan/oomplan \
        --all test/models/resnet50.onnx --batch 8
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "ci"))  # check_shapes_golden
import check_shapes_golden as golden  # noqa: E402

# ONNX TensorProto element types -> (ORT JS type, oomplan type name, numpy dtype)
ELEM = {
    1: ("float32", "float", "float32"), 2: ("uint8", "uint8", "uint8"),
    3: ("int8", "int8", "int8"), 4: ("uint16", "uint16", "uint16"),
    5: ("int16", "int16", "int16"), 6: ("int32", "int32", "int32"),
    7: ("int64", "int64", "int64"), 9: ("bool", "bool", "bool"),
    10: ("float16", "float16", "float16"), 11: ("float64", "double", "float64"),
    12: ("uint32", "uint32", "uint32"), 13: ("uint64", "uint64", "uint64"),
}
# ORT JS tensor type -> oomplan type name
ORT_TO_OOMPLAN = {v[0]: v[1] for v in ELEM.values()}
ORT_TO_OOMPLAN["float64"] = "double"
ORT_TO_OOMPLAN["bfloat16"] = "bfloat16"

PASS_THROUGH = {"Cast", "Reshape", "Unsqueeze", "Squeeze", "Flatten", "Identity"}


def die(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(2)


def materialize_external_data(onnx, model, src_dir, dst_dir):
    """Gives every external-data location a file in dst_dir: a link to the real one when it
    exists, else a sparse zero file long enough for every tensor stored there."""
    need = {}
    for t in model.graph.initializer:
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        info = {e.key: e.value for e in t.external_data}
        length = int(info["length"]) if "length" in info else None
        if length is None:
            n = 1
            for d in t.dims:
                n *= d
            length = n * onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[t.data_type].itemsize
        end = int(info.get("offset", 0)) + length
        loc = info["location"]
        need[loc] = max(need.get(loc, 0), end)
    made = []
    for loc, size in sorted(need.items()):
        if os.path.isabs(loc) or ".." in loc.split("/"):
            die(f"external data location '{loc}' is not a plain relative path")
        dst = os.path.join(dst_dir, loc)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        src = os.path.join(src_dir, loc)
        if os.path.exists(src) and os.path.getsize(src) >= size:
            os.symlink(os.path.abspath(src), dst)
            made.append(f"{loc} (linked)")
        else:
            with open(dst, "wb"):
                pass
            os.truncate(dst, size)
            made.append(f"{loc} (zeros, {size} bytes)")
    return made


def choose_intermediates(model, sample, take_all):
    g = model.graph
    taken = {i.name for i in g.input} | {t.name for t in g.initializer} | {o.name for o in g.output}
    cands, seen = [], set()
    for n in g.node:
        if n.op_type == "Constant" and not take_all:
            continue
        for o in n.output:
            if o and o not in taken and o not in seen:
                seen.add(o)
                cands.append(o)
    if take_all or len(cands) <= sample:
        return cands
    k = len(cands) // sample
    return cands[::k]


def embedding_sizes(model, name):
    """Table sizes of the Gathers on weights that `name` indexes (through pass-through ops)."""
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    consts = {}
    for n in g.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    consts[n.output[0]] = a.t
    users = {}
    for n in g.node:
        for i, x in enumerate(n.input):
            users.setdefault(x, []).append((n, i))
    sizes, todo, seen = [], [name], set()
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        for n, i in users.get(v, []):
            if n.op_type == "Gather" and i == 1:
                table = inits.get(n.input[0]) or consts.get(n.input[0])
                if table is not None and table.dims:
                    axis = next((a.i for a in n.attribute if a.name == "axis"), 0)
                    sizes.append(table.dims[axis])
            elif n.op_type in PASS_THROUGH and i == 0:
                todo.append(n.output[0])
    return sizes


def make_inputs(onnx, np, model, bindings, work, seed):
    rng = np.random.default_rng(seed)
    inits = {t.name for t in model.graph.initializer}
    specs, used = [], set()
    for idx, inp in enumerate(model.graph.input):
        if inp.name in inits:
            continue
        tt = inp.type.tensor_type
        if tt.elem_type not in ELEM:
            die(f"input {inp.name}: unsupported element type {tt.elem_type}")
        ort_type, _, np_type = ELEM[tt.elem_type]
        dims = []
        for axis, d in enumerate(tt.shape.dim):
            if d.HasField("dim_value"):
                dims.append(d.dim_value)
            elif d.dim_param and d.dim_param in bindings:
                dims.append(bindings[d.dim_param])
                used.add(d.dim_param)
            else:
                die(f"input {inp.name} axis {axis}: dynamic dim "
                    f"'{d.dim_param or '?'}' is not bound; pass --dim NAME=VALUE")
        if np_type.startswith(("int", "uint")):
            sizes = embedding_sizes(model, inp.name)
            if "mask" in inp.name.lower():
                data = np.ones(dims, dtype=np_type)
            elif sizes:
                data = rng.integers(0, min(sizes), size=dims).astype(np_type)
            else:
                data = np.zeros(dims, dtype=np_type)
        elif np_type == "bool":
            data = np.ones(dims, dtype=np.bool_)
        else:
            data = rng.standard_normal(dims).astype(np_type)
        path = os.path.join(work, f"input{idx}.bin")
        data.tofile(path)
        specs.append({"name": inp.name, "type": ort_type, "dims": dims, "file": path})
    return specs, used


def run_runtime(model_path, specs, args, work):
    cfg = {"inputs": specs, "optimization": args.optimization, "threads": args.threads}
    cfg_path = os.path.join(work, "inputs.json")
    with open(cfg_path, "w") as f:
        json.dump(cfg, f)
    env = dict(os.environ, ORT_NODE_DIR=args.ort_dir)
    p = subprocess.run([args.node, os.path.join(HERE, "run_onnxruntime_shapes.mjs"), model_path,
                        cfg_path], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        die(f"onnxruntime run of {model_path} failed:\n{p.stderr.strip()}")
    return json.loads(p.stdout)


def run_oomplan(args, model_path, bindings):
    cmd = [args.oomplan, model_path, "--emit=shapes"]
    for k, v in sorted(bindings.items()):
        cmd += ["--dim", f"{k}={v}"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        die(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr.strip()}")
    return p.stdout, cmd


def check_model(args, path, onnx, np):
    name = os.path.basename(path)
    stem = name[: -len(".onnx")] if name.endswith(".onnx") else name
    model = onnx.load(path, load_external_data=False)
    work = tempfile.mkdtemp(prefix=f"oomplan-rt-{stem}-")
    try:
        data_files = materialize_external_data(onnx, model, os.path.dirname(os.path.abspath(path)),
                                               work)
        n_outputs = len(model.graph.output)
        extra = choose_intermediates(model, args.sample, args.all)
        for v in extra:
            model.graph.output.append(onnx.ValueInfoProto(name=v))
        tmp_model = os.path.join(work, name)
        onnx.save(model, tmp_model)

        input_syms = {d.dim_param for i in model.graph.input for d in i.type.tensor_type.shape.dim
                      if d.dim_param}
        bindings = {k: v for k, v in args.bindings.items() if k in input_syms}
        specs, _ = make_inputs(onnx, np, model, bindings, work, args.seed)
        rt = run_runtime(tmp_model, specs, args, work)
        observed = []
        for o in rt["outputs"]:
            observed.append((o["name"], ORT_TO_OOMPLAN.get(o["type"], o["type"]), o["dims"],
                             o.get("values")))

        text, cmd = run_oomplan(args, path, bindings)
        ours = golden.parse_emit_shapes(text)
        stats = {}
        mismatches, compared, bounded = golden.compare(ours, observed, bindings, stats)
        if args.verbose:
            print(f"{name}: {len(model.graph.node)} nodes, {len(ours)} values in --emit=shapes, "
                  f"{n_outputs} graph outputs + {len(extra)} intermediates observed; "
                  f"weights: {', '.join(data_files) or 'none external'}")
            print(f"  oomplan: {' '.join(cmd)}")
        symbols = next((ln[len("symbols:"):].strip() for ln in text.splitlines()
                        if ln.startswith("symbols:")), "?")
        unknown = sum(1 for v in ours.values() if not v["known"])
        upper = sum(1 for v in ours.values() if v.get("upper_bound"))
        print(f"{name}: oomplan lists {len(ours)} values: {unknown} unknown, {upper} upper bounds;"
              f" symbols: {symbols}")
        golden.report(f"{name}: ", mismatches, compared, bounded, stats)

        if args.write_golden:
            os.makedirs(args.write_golden, exist_ok=True)
            bind_txt = " ".join(f"--{k} {v}" if k in ("batch", "seq") else f"--dim {k}={v}"
                                for k, v in sorted(bindings.items()))
            header = [
                f"Shapes observed by ONNX Runtime {rt['ort_version']} (npm onnxruntime-node, CPU,",
                f"graph optimization '{args.optimization}') running test/models/{name} at "
                + ", ".join(f"{k}={v}" for k, v in sorted(bindings.items())) + ",",
                "with zero weights and the inputs of utils/check/compare_shapes_with_runtime.py "
                f"(seed {args.seed}):",
                f"the {n_outputs} graph output(s) and {len(extra)} intermediate values "
                f"(every k-th node output{'' if args.all else f', sample {args.sample}'}).",
                "Independent of oomplan: never edit by hand. Regenerate with",
                f"  /usr/bin/python3 utils/check/compare_shapes_with_runtime.py --oomplan OOMPLAN "
                f"--write-golden test/models/runtime-shapes test/models/{name} {bind_txt}",
            ]
            golden.write_golden(os.path.join(args.write_golden, f"{stem}.txt"), header, bindings,
                                observed)
        return compared, len(mismatches), stats["contents"]
    finally:
        if args.keep_temp:
            print(f"  temp folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="+", help=".onnx files")
    ap.add_argument("--oomplan", default=os.path.join(ROOT, "build", "tools", "oomplan", "oomplan"))
    ap.add_argument("--batch", type=int, default=8, help="binds the symbol 'batch' (default 8)")
    ap.add_argument("--seq", type=int, default=128, help="binds the symbol 'seq' (default 128)")
    ap.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                    help="binds any input dim_param")
    ap.add_argument("--sample", type=int, default=64,
                    help="at least this many intermediate values per model (default 64)")
    ap.add_argument("--all", action="store_true", help="observe every node output")
    ap.add_argument("--ort-dir", default=os.environ.get("ORT_NODE_DIR", "/tmp/ort"),
                    help="folder with node_modules/onnxruntime-node (default /tmp/ort)")
    ap.add_argument("--node", default="node")
    ap.add_argument("--optimization", default="all",
                    choices=["disabled", "basic", "extended", "all"],
                    help="ONNX Runtime graph optimization level (default all)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--write-golden", metavar="DIR", help="store the observed shapes in DIR")
    ap.add_argument("--keep-temp", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    args.bindings = {"batch": args.batch, "seq": args.seq}
    for d in args.dim:
        for item in d.split(","):
            k, _, v = item.partition("=")
            args.bindings[k] = int(v)
    if not os.path.exists(os.path.join(args.ort_dir, "node_modules", "onnxruntime-node")):
        die(f"no onnxruntime-node in {args.ort_dir}; see this script's docstring")
    if not os.access(args.oomplan, os.X_OK):
        die(f"oomplan not found at {args.oomplan} (--oomplan)")
    import numpy as np
    import onnx

    total_c = total_m = total_v = 0
    for path in args.models:
        c, m, v = check_model(args, path, onnx, np)
        total_c += c
        total_m += m
        total_v += v
    if len(args.models) > 1:
        print(f"total: values compared: {total_c}, mismatches: {total_m} "
              f"(shape-tensor contents compared: {total_v})")
    return 1 if total_m else 0


if __name__ == "__main__":
    sys.exit(main())
