#!/usr/bin/python3
"""Measures PyTorch's peak memory for one training step and compares it with oomplan --train.

For each case (architecture, batch, seq) this builds the same architecture as the training-mode exports
in test/models/train/ (torchvision resnet50 / mobilenet_v2, and BertLike / GPTLike from definitions.py),
runs ONE steady-state training step (forward, backward, Adam step) on the CPU, and records the peak of
live tensor bytes. It then runs `oomplan MODEL --train --optimizer=adam --batch B [--seq S] --emit=json`
and prints a table of both, with the error of the prediction.

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

  /usr/bin/python3 utils/measure_torch_peak.py --oomplan build/tools/oomplan/oomplan
  /usr/bin/python3 utils/measure_torch_peak.py --torch-json peaks.json   # reuse measured numbers
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# name, batch, seq (None for image models)
CASES = [
    ("resnet50", 8, None),
    ("mobilenet_v2", 8, None),
    ("bert_like", 8, 128),
    ("bert_like", 8, 512),
    ("gpt_like", 8, 128),
    ("gpt_like", 8, 512),
]


def build(name, batch, seq):
    """The model (train mode, fp32) and its inputs, as exported in test/models/train/."""
    import torch
    import torchvision
    sys.path.insert(0, HERE)
    import definitions
    torch.manual_seed(0)
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


def step(model, inputs, opt):
    out = model(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    loss = sum(o.mean() for o in outs)
    loss.backward()
    opt.step()
    return outs, loss  # alive until the step ends, as in a training loop


def measure_one(name, batch, seq, threads):
    import torch
    torch.set_num_threads(threads)
    model, inputs = build(name, batch, seq)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=1e-4)
    # Create Adam's state without a full step: zero gradients, one update, then drop the gradients.
    for p in params:
        p.grad = torch.zeros_like(p)
    opt.step()
    opt.zero_grad(set_to_none=True)
    state = [t for st in opt.state.values() for t in st.values() if torch.is_tensor(t)]
    before = tensor_bytes(list(model.parameters()) + list(model.buffers()) + state + list(inputs))
    result = {"model": name, "batch": batch, "seq": seq,
              "params": sum(p.numel() for p in params), "resident_bytes": before}
    if torch.cuda.is_available():
        model.cuda()
        inputs = tuple(t.cuda() for t in inputs)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        step(model, inputs, opt)
        torch.cuda.synchronize()
        result["peak_bytes"] = torch.cuda.max_memory_allocated()
        result["method"] = "torch.cuda.max_memory_allocated"
        return result
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        keep = step(model, inputs, opt)
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


def run_oomplan(oomplan, name, batch, seq, models_dir):
    cmd = [oomplan, os.path.join(models_dir, name + ".onnx"), "--train", "--optimizer=adam",
           "--batch", str(batch), "--emit=json"]
    if seq:
        cmd += ["--seq", str(seq)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["total_bytes"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--oomplan", default=os.path.join(ROOT, "build", "tools", "oomplan", "oomplan"))
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "test", "models", "train"))
    ap.add_argument("--torch-json", help="read measured peaks from this file instead of measuring")
    ap.add_argument("--save", help="write the measured peaks to this JSON file")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", help="comma-separated model names")
    ap.add_argument("--measure-one", nargs=3, metavar=("MODEL", "BATCH", "SEQ"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.measure_one:
        n, b, s = a.measure_one
        print(json.dumps(measure_one(n, int(b), int(s) if s != "-" else None, a.threads)))
        return
    cases = [c for c in CASES if not a.only or c[0] in a.only.split(",")]
    measured = {}
    if a.torch_json:
        for r in json.load(open(a.torch_json)):
            measured[(r["model"], r["batch"], r["seq"])] = r
    else:
        for n, b, s in cases:
            out = subprocess.run([sys.executable, __file__, "--threads", str(a.threads), "--measure-one", n,
                                  str(b), str(s) if s else "-"], check=True, capture_output=True, text=True)
            measured[(n, b, s)] = json.loads(out.stdout.strip().splitlines()[-1])
            print("measured", measured[(n, b, s)], file=sys.stderr, flush=True)
        if a.save:
            json.dump([measured[c] for c in cases], open(a.save, "w"), indent=1)
    print("| model | batch | seq | PyTorch peak (MiB) | oomplan total (MiB) | error |")
    print("|---|---|---|---|---|---|")
    worst_ok = True
    for n, b, s in cases:
        torch_peak = measured[(n, b, s)]["peak_bytes"]
        ours = run_oomplan(a.oomplan, n, b, s, a.models_dir) if os.path.exists(a.oomplan) else None
        err = "" if ours is None else "%+.1f%%" % (100.0 * (ours - torch_peak) / torch_peak)
        if ours is not None and not (-0.03 <= (ours - torch_peak) / torch_peak <= 0.10):
            worst_ok = False
        print("| %s | %d | %s | %.1f | %s | %s |" % (n, b, s or "-", torch_peak / 2**20,
              "-" if ours is None else "%.1f" % (ours / 2**20), err))
    sys.exit(0 if worst_ok else 1)


if __name__ == "__main__":
    main()
