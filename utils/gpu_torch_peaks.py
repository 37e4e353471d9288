#!/usr/bin/env python3
"""Ground truth for --runtime=pytorch-cuda: PyTorch's memory for one steady-state training step.

For each case (the four shared models, four torchvision models, a GPT-2 and a Llama built from
transformers configs with random weights; nothing is downloaded) this runs, in its own process:

  * fp32: Adam (PyTorch's default for the device: foreach on CUDA), cross-entropy on logits (mean
    for bert_like, whose outputs are hidden states: the rule of oomplan's --loss=auto), step 1, then
    zero_grad(set_to_none=True), torch.cuda.reset_peak_memory_stats(), step 2 measured:
    torch.cuda.max_memory_allocated() and torch.cuda.max_memory_reserved();
  * bf16: the same under torch.autocast(dtype=torch.bfloat16) (fp32 weights and Adam: AMP, which
    is not oomplan's --precision=bf16-mixed "O2" model; recorded as measured);
  * an ONNX export of the same module in training mode, graph-only: large float initializers are
    stripped (their data points to a file that does not exist, as in test/models/train/), so the
    files are small enough to bring back.

Without a GPU it measures on the CPU instead (peak of live tensor bytes from torch.profiler's memory
events, as utils/measure_torch_peak.py; no "reserved"), so the script can be tested anywhere. Cases
whose package is missing (transformers) are skipped with a note.

  python3 utils/gpu_torch_peaks.py --out DIR [--only a,b] [--small]
  python3 utils/gpu_torch_peaks.py --compare DIR --oomplan build/tools/oomplan/oomplan
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# name: (family, batch, seq) at full size; --small divides for a quick CPU run.
CASES = {
    "resnet50": ("torchvision", 32, None),
    "mobilenet_v2": ("torchvision", 32, None),
    "bert_like": ("definitions", 8, 512),
    "gpt_like": ("definitions", 8, 512),
    "resnet18": ("torchvision", 32, None),
    "efficientnet_b0": ("torchvision", 32, None),
    "convnext_tiny": ("torchvision", 32, None),
    "vit_b_16": ("torchvision", 32, None),
    "gpt2": ("transformers", 8, 512),
    "llama": ("transformers", 8, 512),
}


def build(name, batch, seq):
    """(model, inputs, targets or None, token model?) in train mode, fp32, random weights."""
    import torch
    torch.manual_seed(0)
    fam = CASES[name][0]
    if fam == "torchvision":
        import torchvision
        model = getattr(torchvision.models, name)(weights=None)
        return model, (torch.randn(batch, 3, 224, 224),), torch.randint(0, 1000, (batch,)), False
    if fam == "definitions":
        sys.path.insert(0, HERE)
        import definitions
        if name == "bert_like":
            ids = torch.randint(0, 30522, (batch, seq))
            return definitions.BertLike(), (ids, torch.ones(batch, seq, dtype=torch.long)), None, True
        return (definitions.GPTLike(), (torch.randint(0, 50257, (batch, seq)),),
                torch.randint(0, 50257, (batch * seq,)), True)
    import transformers  # ImportError: the case is skipped
    if name == "gpt2":
        cfg = transformers.GPT2Config()  # GPT-2 small: 12 layers, 768 wide, vocab 50257
        model = transformers.GPT2LMHeadModel(cfg)
    else:
        cfg = transformers.LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=8,
                                       num_attention_heads=16, num_key_value_heads=16,
                                       vocab_size=32000, max_position_embeddings=2048)
        model = transformers.LlamaForCausalLM(cfg)
    vocab = cfg.vocab_size
    return model, (torch.randint(0, vocab, (batch, seq)),), torch.randint(0, vocab, (batch * seq,)), True


def logits_of(out):
    if hasattr(out, "logits"):
        return (out.logits,)
    return out if isinstance(out, tuple) else (out,)


def loss_of(outs, targets):
    import torch.nn.functional as F
    if targets is None:  # hidden states: a mean, as oomplan's --loss=auto decides
        return sum(o.float().mean() for o in outs)
    o = outs[0]  # under autocast cross_entropy runs in fp32 by itself
    return F.cross_entropy(o.reshape(-1, o.shape[-1]), targets)


def train_step(model, inputs, targets, opt, autocast_dtype, device):
    import torch
    if autocast_dtype is not None:
        with torch.autocast(device_type=device, dtype=autocast_dtype):
            outs = logits_of(model(*inputs))
            loss = loss_of(outs, targets)
    else:
        outs = logits_of(model(*inputs))
        loss = loss_of(outs, targets)
    loss.backward()
    opt.step()
    return outs, loss


def measure(name, batch, seq, precision):
    import torch
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model, inputs, targets, _ = build(name, batch, seq)
    model.train().to(device)
    inputs = tuple(t.to(device) for t in inputs)
    targets = targets.to(device) if targets is not None else None
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=1e-4)
    dtype = torch.bfloat16 if precision == "bf16" else None
    keep = train_step(model, inputs, targets, opt, dtype, device)  # step 1 creates Adam's state
    opt.zero_grad(set_to_none=True)
    del keep
    r = {"model": name, "batch": batch, "seq": seq, "precision": precision, "device": device,
         "params": sum(p.numel() for p in params), "torch": torch.__version__,
         "loss": "mean" if targets is None else "ce"}
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        keep = train_step(model, inputs, targets, opt, dtype, device)
        torch.cuda.synchronize()
        r["max_memory_allocated"] = torch.cuda.max_memory_allocated()
        r["max_memory_reserved"] = torch.cuda.max_memory_reserved()
        r["gpu"] = torch.cuda.get_device_name()
        r["cuda"] = torch.version.cuda
        return r
    # CPU: bytes alive before the step + the profiler's highest running total during it.
    state = [t for st in opt.state.values() for t in st.values() if torch.is_tensor(t)]
    seen, before = set(), 0
    for t in list(model.parameters()) + list(model.buffers()) + state + list(inputs) + \
            ([targets] if targets is not None else []):
        s = t.storage()
        if s.data_ptr() not in seen and s.size():
            seen.add(s.data_ptr())
            before += s.size() * s.element_size()
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        keep = train_step(model, inputs, targets, opt, dtype, device)
        del keep
    events = sorted((e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"),
                    key=lambda e: e.start_us())
    cur = high = 0
    for e in events:
        cur += e.nbytes()
        high = max(high, cur)
    r["max_memory_allocated"] = before + high
    r["max_memory_reserved"] = None  # no caching allocator on the CPU
    return r


def strip(path, case, min_elems=64):
    """Points every large float initializer at a missing external file: the graph keeps its dims."""
    import onnx
    m = onnx.load(path)
    for t in m.graph.initializer:
        n = 1
        for d in t.dims:
            n *= d
        if t.data_type in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16) \
                and n >= min_elems:
            size = n * (4 if t.data_type == onnx.TensorProto.FLOAT else 2)
            t.ClearField("raw_data")
            t.ClearField("float_data")
            t.data_location = onnx.TensorProto.EXTERNAL
            del t.external_data[:]
            for k, v in (("location", case + ".stripped.bin"), ("offset", "0"), ("length", str(size))):
                e = t.external_data.add()
                e.key, e.value = k, v
    onnx.save(m, path)


def exportable_stochastic_depth(self, x):
    """torchvision's StochasticDepth as the TorchScript exporter can export it (its bernoulli_ has
    no ONNX symbolic): uniform noise compared with the survival rate is the same distribution, and
    keeps the same [N, 1, ...] noise for backward (as utils/export_train_models.py does)."""
    import torch
    if not self.training or self.p == 0.0:
        return x
    survival = 1.0 - self.p
    size = [x.shape[0]] + [1] * (x.ndim - 1) if self.mode == "row" else [1] * x.ndim
    noise = (torch.rand(size, dtype=x.dtype, device=x.device) < survival).to(x.dtype)
    return x * (noise / survival)


def export(name, batch, seq, outdir):
    import inspect
    import torch
    if CASES[name][0] == "torchvision":  # after measuring: the measured step used torchvision's own
        import torchvision
        torchvision.ops.StochasticDepth.forward = exportable_stochastic_depth
    model, inputs, _, token = build(name, batch, seq)
    model.train()
    path = os.path.join(outdir, name + ".onnx")
    names = ["input_ids", "attention_mask"][:len(inputs)] if token else ["input"]
    axes = {n: ({0: "batch", 1: "seq"} if token else {0: "batch"}) for n in names}
    kw = dict(training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False, opset_version=17,
              input_names=names, dynamic_axes=axes)
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kw["dynamo"] = False  # PyTorch 2.9+ defaults to the dynamo exporter, which has no training mode
    if CASES[name][0] == "transformers":
        model.config.use_cache = False
        kw["output_names"] = ["logits"]
    torch.onnx.export(model, inputs, path, **kw)
    strip(path, name)
    return path


def run_case(name, batch, seq, outdir, do_export):
    """Runs in a child process: one case, both precisions, and the export."""
    rows = []
    for precision in ("fp32", "bf16"):
        try:
            rows.append(measure(name, batch, seq, precision))
        except Exception as e:  # noqa: BLE001 - record and go on (e.g. bf16 unsupported)
            rows.append({"model": name, "batch": batch, "seq": seq, "precision": precision,
                         "error": "%s: %s" % (type(e).__name__, e)})
        import gc
        gc.collect()
        try:
            import torch
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
        except ImportError:
            pass
    if do_export:
        try:
            rows[0]["onnx"] = os.path.basename(export(name, batch, seq, outdir))
        except Exception as e:  # noqa: BLE001
            rows[0]["onnx_error"] = "%s: %s" % (type(e).__name__, e)
    return rows


def verdict(err, low, high):
    if err is None:
        return "-"
    return "ok" if low <= err <= high else ("LOW" if err < low else "HIGH")


def compare(outdir, oomplan):
    """The table: --runtime=pytorch-cuda on the exported graphs against the measurements, a verdict
    per figure (allocated -2%/+5%, reserved -5%/+10%), and a closing count per bar."""
    rows = json.load(open(os.path.join(outdir, "results.json")))
    print("| model | precision | batch | seq | device | allocated (measured) | predicted | err | | reserved (measured) "
          "| predicted | err | |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    bad = failed = False
    counts = {}
    skipped = []
    # A bf16 row is the same module under torch.autocast: its fp32 row's graph
    # with --precision=bf16-autocast.
    graphs = {r["model"]: r["onnx"] for r in rows if "onnx" in r}
    for r in rows:
        if "error" in r or "skipped" in r:
            continue
        precision = r.get("precision")
        onnx = graphs.get(r["model"])
        if precision not in ("fp32", "bf16") or onnx is None:
            skipped.append("%s %s" % (r["model"], precision))
            continue
        gpu = r["device"] == "cuda"  # the CPU path compares live bytes with the plan's total
        if precision == "bf16" and not gpu:
            skipped.append("%s bf16 (autocast is predicted for CUDA only)" % r["model"])
            continue
        cmd = [oomplan, os.path.join(outdir, onnx), "--train", "--optimizer=adam", "--batch",
               str(r["batch"]), "--emit=json", "--runtime=" + ("pytorch-cuda" if gpu else "pytorch-cpu")]
        if precision == "bf16":
            cmd.append("--precision=bf16-autocast")
        if r["seq"]:
            cmd += ["--seq", str(r["seq"])]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode not in (0, 2):
            print("| %s | oomplan failed: %s |" % (r["model"], p.stderr.strip().splitlines()[-1:]))
            failed = True
            continue
        plan = json.loads(p.stdout)
        alloc = plan.get("cuda_allocator", {})
        pa = alloc.get("allocated_bytes") if gpu else plan["total_bytes"]
        pr = alloc.get("reserved_bytes")
        ma, mr = r["max_memory_allocated"], r.get("max_memory_reserved")
        ea = (pa - ma) / ma if pa and ma else None
        er = (pr - mr) / mr if pr and mr else None
        va, vr = verdict(ea, -0.02, 0.05), verdict(er, -0.05, 0.10)
        c = counts.setdefault(precision, [0, 0, 0, 0])
        for i, v in ((0, va), (2, vr)):
            if v != "-":
                c[i] += v == "ok"
                c[i + 1] += 1
        bad |= va not in ("ok", "-") or vr not in ("ok", "-")
        f = lambda x: "-" if x is None else "%.1f MiB" % (x / 2**20)
        g = lambda x: "-" if x is None else "%+.1f%%" % (100 * x)
        print("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["model"], precision, r["batch"], r["seq"] or "-", r["device"], f(ma), f(pa), g(ea), va, f(mr),
            f(pr), g(er), vr))
    for prec in ("fp32", "bf16"):
        c = counts.get(prec)
        if c:
            print("%s: allocated within -2%%/+5%%: %d of %d; reserved within -5%%/+10%%: %d of %d"
                  % (prec, c[0], c[1], c[2], c[3]))
    if skipped:
        print("not compared (no graph, or a precision oomplan does not predict): " + ", ".join(skipped))
    return 2 if failed else (1 if bad else 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="gpu-peaks", help="folder for results.json and the .onnx files")
    ap.add_argument("--only", help="comma-separated case names")
    ap.add_argument("--small", action="store_true", help="batch 2, seq 64: a quick run (the CPU path)")
    ap.add_argument("--no-export", action="store_true")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per case")
    ap.add_argument("--compare", metavar="DIR", help="compare DIR/results.json with oomplan")
    ap.add_argument("--exit-zero", action="store_true",
                    help="with --compare: exit 0 when rows are outside a bar (oomplan errors still fail)")
    ap.add_argument("--oomplan", default=os.path.join(os.path.dirname(HERE), "build", "tools", "oomplan",
                                                      "oomplan"))
    ap.add_argument("--case", nargs=3, metavar=("NAME", "BATCH", "SEQ"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.compare:
        status = compare(a.compare, a.oomplan)
        sys.exit(2 if status == 2 else (0 if a.exit_zero else status))
    if a.case:
        n, b, s = a.case
        print(json.dumps(run_case(n, int(b), int(s) if s != "-" else None, a.out, not a.no_export)))
        return
    os.makedirs(a.out, exist_ok=True)
    names = a.only.split(",") if a.only else list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        sys.exit("gpu_torch_peaks.py: unknown case(s) %s; known: %s" % (", ".join(unknown), ", ".join(CASES)))
    results = []
    for n in names:
        fam, batch, seq = CASES[n]
        if a.small:
            batch, seq = 2, (64 if seq else None)
        if fam == "transformers":
            try:
                import transformers  # noqa: F401
            except ImportError:
                print("skip %s: transformers is not installed" % n, file=sys.stderr)
                results.append({"model": n, "skipped": "transformers is not installed"})
                continue
        t0 = time.time()
        cmd = [sys.executable, os.path.abspath(__file__), "--out", a.out, "--case", n, str(batch),
               str(seq) if seq else "-"] + (["--no-export"] if a.no_export else [])
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
            rows = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 else \
                [{"model": n, "error": p.stderr.strip()[-500:]}]
        except subprocess.TimeoutExpired:
            rows = [{"model": n, "error": "timed out after %d s" % a.timeout}]
        for r in rows:
            r["seconds"] = round(time.time() - t0, 1)
            print(json.dumps(r), file=sys.stderr, flush=True)
        results += rows
        json.dump(results, open(os.path.join(a.out, "results.json"), "w"), indent=1)
    # A bf16 step the CPU kernels cannot run (1.13 has no bf16 hardshrink backward) is recorded, not fatal.
    failed = [r["model"] for r in results if "error" in r and r.get("precision") != "bf16"]
    print("%d rows in %s; failed: %s" % (len(results), os.path.join(a.out, "results.json"),
                                        ", ".join(failed) or "none"))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
