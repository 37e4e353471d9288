#!/usr/bin/python3
"""Measures PyTorch's peak memory for one training step and compares it with oomplan --train.

For each case (architecture, batch, seq) this builds the same architecture as the training-mode exports
in test/models/train/ (torchvision resnet50 / mobilenet_v2, and BertLike / GPTLike from definitions.py)
or, with --zoo, every case of utils/export/export_train_models.py (one torchvision model per classification
family, video, segmentation, our own T5 / Llama / GroupNorm-UNet / GAN / speech / encoder-decoder /
mixture-of-experts / recurrent variants; export them first with that script and pass
--models-dir), runs ONE steady-state training step (forward, backward, Adam step) on the CPU, and
records the peak of live tensor bytes. It then runs
`oomplan MODEL --train --optimizer=adam --runtime=pytorch-cpu --batch B [--seq S] --emit=json` and
prints a table of both, with the error of the prediction. It exits 1 when any case is below -2% (an
under-estimate, the error users cannot forgive) or above +5%.

What is measured (docs/training.md has the reasoning):
  * Steady state: Adam's moments already exist (created by a step with zero gradients before
    measuring), gradients are None at the start (zero_grad(set_to_none=True)), so every weight gradient
    is allocated during backward and lives until the optimizer step.
  * Loss: sum(output.mean() for each output). Its gradient is one materialised tensor of each output's
    size, which is what oomplan's loss step writes.
  * Peak = bytes alive before the step (parameters, buffers, optimizer state, inputs) + the highest
    running total of the allocator's events during the step (torch.profiler, profile_memory=True,
    raw kineto [memory] events in time order). On a GPU, torch.cuda.max_memory_allocated instead.

Use Debian's interpreter: /usr/bin/python3 (python3-torch 1.13, python3-torchvision 0.14). Each case
runs in its own process so that one case's allocations cannot affect another's.

  /usr/bin/python3 utils/bench/measure_torch_peak.py --oomplan build/tools/oomplan/oomplan
  /usr/bin/python3 utils/bench/measure_torch_peak.py --torch-json peaks.json   # reuse measured numbers
  /usr/bin/python3 utils/export/export_train_models.py /tmp/zoo
  /usr/bin/python3 utils/bench/measure_torch_peak.py --zoo --models-dir /tmp/zoo --save zoo.json
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXPORT = os.path.join(os.path.dirname(HERE), "export")  # export_train_models, definitions

# name, batch, seq (None for image models)
CASES = [
    ("resnet50", 8, None),
    ("mobilenet_v2", 8, None),
    ("bert_like", 8, 128),
    ("bert_like", 8, 512),
    ("gpt_like", 8, 128),
    ("gpt_like", 8, 512),
]


def zoo_cases():
    sys.path.insert(0, EXPORT)
    import export_train_models as z
    return [(c, v[2], v[4]) for c, v in z.CASES.items()]


def build(name, batch, seq):
    """The model (train mode, fp32) and its inputs, as exported in test/models/train/."""
    import torch
    import torchvision
    sys.path.insert(0, EXPORT)
    import definitions
    import export_train_models as z
    torch.manual_seed(0)
    if name in z.CASES:
        return z.build(name, batch, seq)
    if name in ("resnet50", "mobilenet_v2"):
        model = getattr(torchvision.models, name)(weights=None)
        inputs = (torch.randn(batch, 3, 224, 224),)
    elif name == "bert_like":
        model = definitions.BertLike()
        inputs = (torch.randint(0, 30522, (batch, seq)), torch.ones(batch, seq, dtype=torch.long))
    elif name == "gpt_like":
        model = definitions.GPTLike()
        inputs = (torch.randint(0, 50257, (batch, seq)),)
    else:
        raise SystemExit("unknown model " + name)
    return model.train(), inputs


def tensor_bytes(tensors):
    """Bytes of the distinct storages among tensors."""
    seen, total = set(), 0
    for t in tensors:
        if t is None:
            continue
        s = t.storage()
        key = s.data_ptr()
        if key in seen or s.size() == 0:
            continue
        seen.add(key)
        total += s.size() * s.element_size()
    return total


def step(model, inputs, opt, targets=None):
    out = model(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    if targets is not None:
        loss = ce_loss(outs, targets)
    else:
        loss = sum(o.mean() for o in outs)
    loss.backward()
    opt.step()
    return outs, loss  # alive until the step ends, as in a training loop


# --- --loss=ce -----------------------------------------------------
# Cross-entropy over the last dim (classes or vocabulary): F.cross_entropy(out.reshape(-1, C), target),
# what a classifier or language-model training loop does. The integer targets exist before the step
# (counted with the inputs), as a data loader's batch does.
def ce_targets(name, batch, seq):
    import torch
    torch.manual_seed(1)
    classes = 50257 if name == "gpt_like" else 30522 if name == "bert_like" else 1000
    return torch.randint(0, classes, (batch * seq,) if seq else (batch,))


def ce_loss(outs, targets):
    import torch.nn.functional as F
    o = outs[0]
    return F.cross_entropy(o.reshape(-1, o.shape[-1]), targets)
# --- end of --loss=ce -----------------------------------------------------------------------------


def measure_one(name, batch, seq, threads, loss="mean"):
    import torch
    torch.set_num_threads(threads)
    model, inputs = build(name, batch, seq)
    targets = ce_targets(name, batch, seq) if loss == "ce" else None
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=1e-4)
    # Create Adam's state without a full step: zero gradients, one update, then drop the gradients.
    for p in params:
        p.grad = torch.zeros_like(p)
    opt.step()
    opt.zero_grad(set_to_none=True)
    state = [t for st in opt.state.values() for t in st.values() if torch.is_tensor(t)]
    before = tensor_bytes(list(model.parameters()) + list(model.buffers()) + state + list(inputs) +
                          ([targets] if targets is not None else []))
    result = {"model": name, "batch": batch, "seq": seq, "loss": loss,
              "params": sum(p.numel() for p in params), "resident_bytes": before}
    if torch.cuda.is_available():
        model.cuda()
        inputs = tuple(t.cuda() for t in inputs)
        targets = targets.cuda() if targets is not None else None
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        step(model, inputs, opt, targets)
        torch.cuda.synchronize()
        result["peak_bytes"] = torch.cuda.max_memory_allocated()
        result["method"] = "torch.cuda.max_memory_allocated"
        return result
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        keep = step(model, inputs, opt, targets)
        del keep
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    events.sort(key=lambda e: e.start_us())  # stable: ties keep record order
    cur = high = 0
    for e in events:
        cur += e.nbytes()
        high = max(high, cur)
    result["peak_bytes"] = before + high
    result["step_delta_bytes"] = high
    result["method"] = "torch.profiler memory events (CPU)"
    return result


def run_oomplan(oomplan, name, batch, seq, models_dir, loss="mean", extra=()):
    cmd = [oomplan, os.path.join(models_dir, name + ".onnx"), "--train", "--optimizer=adam",
           "--batch", str(batch), "--emit=json", "--runtime=pytorch-cpu", "--loss=" + loss] + list(extra)
    if seq:
        cmd += ["--seq", str(seq)]
    sys.path.insert(0, EXPORT)
    import export_train_models as z
    if name in z.CASES:
        cmd += z.oomplan_args(name)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print("oomplan failed on %s: %s" % (name, r.stderr.strip()[-400:]), file=sys.stderr)
        return None
    return json.loads(r.stdout)["total_bytes"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--oomplan", default=os.path.join(ROOT, "build", "tools", "oomplan", "oomplan"))
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "test", "models", "train"))
    ap.add_argument("--torch-json", help="read measured peaks from this file instead of measuring")
    ap.add_argument("--save", help="write the measured peaks to this JSON file")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", help="comma-separated model names")
    ap.add_argument("--zoo", action="store_true", help="the cases of utils/export/export_train_models.py")
    ap.add_argument("--oomplan-arg", action="append", default=[],
                    help="extra oomplan argument (repeatable), e.g. --oomplan-arg=--runtime=pytorch-cpu")
    ap.add_argument("--table", help="write the comparison as JSON lines to this file")
    ap.add_argument("--loss", choices=("mean", "ce"), default="mean",
                    help="mean: sum of output.mean() (default); ce: cross-entropy over the last dim")
    ap.add_argument("--measure-one", nargs=3, metavar=("MODEL", "BATCH", "SEQ"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.measure_one:
        n, b, s = a.measure_one
        print(json.dumps(measure_one(n, int(b), int(s) if s != "-" else None, a.threads, a.loss)))
        return
    cases = [c for c in (zoo_cases() if a.zoo else CASES) if not a.only or c[0] in a.only.split(",")]
    measured = {}
    if a.torch_json:
        for r in json.load(open(a.torch_json)):
            measured[(r["model"], r["batch"], r["seq"])] = r
    else:
        for n, b, s in cases:
            out = subprocess.run([sys.executable, "-W", "ignore", __file__, "--threads", str(a.threads),
                                  "--loss", a.loss, "--measure-one", n, str(b), str(s) if s else "-"],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                print("measuring %s failed: %s" % (n, out.stderr.strip()[-400:]), file=sys.stderr)
                continue
            measured[(n, b, s)] = json.loads(out.stdout.strip().splitlines()[-1])
            print("measured", measured[(n, b, s)], file=sys.stderr, flush=True)
        if a.save:
            json.dump([measured[c] for c in cases if c in measured], open(a.save, "w"), indent=1)
    cases = [c for c in cases if c in measured]
    print("| model | batch | seq | PyTorch peak (bytes) | oomplan total (bytes) | prediction / PyTorch |")
    print("|---|---|---|---|---|---|")
    worst_ok = True
    rows = []
    for n, b, s in cases:
        torch_peak = measured[(n, b, s)]["peak_bytes"]
        ours = None
        if os.path.exists(a.oomplan):
            ours = run_oomplan(a.oomplan, n, b, s, a.models_dir, a.loss, a.oomplan_arg)
            worst_ok = worst_ok and ours is not None
        ratio = None if ours is None else ours / torch_peak
        # The bar: never more than 2% low, at most 5% high.
        if ratio is not None and not (0.98 <= ratio <= 1.05):
            worst_ok = False
        rows.append({"model": n, "batch": b, "seq": s, "loss": a.loss, "torch_peak": torch_peak,
                     "oomplan": ours})
        print("| %s | %d | %s | %s | %s | %s |" % (
            n, b, s or "-", "{:,}".format(torch_peak), "-" if ours is None else "{:,}".format(ours),
            "-" if ratio is None else "%.3f" % ratio))
    if a.table:
        with open(a.table, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    sys.exit(0 if worst_ok else 1)


if __name__ == "__main__":
    main()
