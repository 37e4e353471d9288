#!/usr/bin/python3
"""LoRA fine-tuning through oomplan.torch against PyTorch's measured peak (CPU).

A GPT-style decoder (pre-norm blocks with separate q, k, v and output
projections, GELU MLP, untied LM head) gets rank-R LoRA adapters on its four
attention projections; every other parameter is frozen (requires_grad=False),
as peft does. One steady-state AdamW step (moments exist, gradients None at
the start) is measured with torch.profiler's memory events, exactly as
utils/bench/measure_torch_peak.py measures (its functions are reused), and
predicted by oomplan.torch.plan(model, ids, optimizer=opt,
runtime="pytorch-cpu"). Prints both and the error; exits 1 outside
-2%/+5%.

  PYTHONPATH=build/python /usr/bin/python3 utils/bench/torch_lora_check.py
"""
import argparse
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_torch_peak as mtp  # noqa: E402
import oomplan.torch  # noqa: E402


class LoRALinear(nn.Module):
    """A frozen Linear plus B @ A (rank r), B starting at zero (peft's)."""

    def __init__(self, d_in, d_out, r):
        super().__init__()
        self.base = nn.Linear(d_in, d_out)
        self.base.weight.requires_grad = False
        self.base.bias.requires_grad = False
        self.lora_a = nn.Parameter(torch.randn(r, d_in) * 0.01)
        self.lora_b = nn.Parameter(torch.randn(d_out, r) * 0.01)

    def forward(self, x):
        return self.base(x) + (x @ self.lora_a.t()) @ self.lora_b.t()


class Block(nn.Module):
    def __init__(self, d, heads, r):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.q, self.k, self.v, self.o = (LoRALinear(d, d, r) for _ in range(4))
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, causal):
        b, s, d = x.shape
        h = self.ln1(x)

        def split(t):
            return t.view(b, s, self.heads, d // self.heads).transpose(1, 2)
        q, k, v = split(self.q(h)), split(self.k(h)), split(self.v(h))
        att = (q @ k.transpose(-1, -2)) / (d // self.heads) ** 0.5
        att = torch.softmax(att.masked_fill(causal, -1e9), -1)
        y = (att @ v).transpose(1, 2).reshape(b, s, d)
        x = x + self.o(y)
        return x + self.fc2(nn.functional.gelu(self.fc1(self.ln2(x))))


class GPTLoRA(nn.Module):
    def __init__(self, vocab, d, layers, heads, r, max_pos=1024):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(max_pos, d)
        self.blocks = nn.ModuleList(Block(d, heads, r) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        for n, p in self.named_parameters():
            p.requires_grad = "lora_" in n

    def forward(self, ids):
        s = ids.shape[1]
        i = torch.arange(s)
        causal = i.unsqueeze(0) > i.unsqueeze(1)
        x = self.wte(ids) + self.wpe(i).unsqueeze(0)
        for blk in self.blocks:
            x = blk(x, causal)
        return self.head(self.ln(x))


def measure(model, ids):
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-4)
    for p in params:
        p.grad = torch.zeros_like(p)
    opt.step()
    opt.zero_grad(set_to_none=True)
    state = [t for st in opt.state.values() for t in st.values()
             if torch.is_tensor(t)]
    before = mtp.tensor_bytes(list(model.parameters()) +
                              list(model.buffers()) + state + [ids])
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as p:
        keep = mtp.step(model, (ids,), opt)
        del keep
    events = [e for e in p.profiler.kineto_results.events()
              if e.name() == "[memory]"]
    events.sort(key=lambda e: e.start_us())
    cur = high = 0
    for e in events:
        cur += e.nbytes()
        high = max(high, cur)
    return before + high, opt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab", type=int, default=8000)
    ap.add_argument("--d", type=int, default=512)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--rank", type=int, default=8)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=256)
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = GPTLoRA(a.vocab, a.d, a.layers, a.heads, a.rank)
    ids = torch.randint(0, a.vocab, (a.batch, a.seq))
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    measured, opt = measure(model, ids)
    p = oomplan.torch.plan(model, ids, optimizer=opt, runtime="pytorch-cpu",
                           loss="mean", fit=False)
    err = 100.0 * (p.total_bytes - measured) / measured
    print("lora rank %d: %d of %d parameters train; batch %d seq %d"
          % (a.rank, trainable, total, a.batch, a.seq))
    print("measured (torch.profiler, CPU): %d bytes" % measured)
    print("oomplan.torch.plan:             %d bytes (%+.1f%%)"
          % (p.total_bytes, err))
    return 0 if -2.0 <= err <= 5.0 else 1


if __name__ == "__main__":
    sys.exit(main())
