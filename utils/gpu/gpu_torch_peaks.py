#!/usr/bin/env python3
"""Ground truth for --runtime=pytorch-cuda: PyTorch's memory for the first and a steady training step.

Cases (random weights; nothing is downloaded): the four shared models; one small member of every
torchvision classification family; GPT-2, Llama, BERT and T5 built from transformers configs, each
with attn_implementation "eager" and "sdpa"; an LSTM language model; a Conformer-like speech encoder
(defined here). Each case runs in its own process:

  * fp32: Adam (PyTorch's default for the device: foreach on CUDA), cross-entropy on logits (mean
    for bert_like, whose outputs are hidden states: the rule of oomplan's --loss=auto).
    torch.cuda.reset_peak_memory_stats() before step 1, step 1 measured (row "step": "first": the
    optimizer step creates Adam's state), then zero_grad(set_to_none=True), reset, step 2 measured
    (row "step": "steady"): torch.cuda.max_memory_allocated() and max_memory_reserved();
  * bf16: the same under torch.autocast(dtype=torch.bfloat16) (fp32 weights and Adam: AMP, which
    is not oomplan's --precision=bf16-mixed "O2" model; recorded as measured);
  * an ONNX export of the same module in training mode with the TorchScript exporter, graph-only:
    large float initializers are stripped (their data points to a file that does not exist, as in
    test/models/train/), so the files are small enough to bring back. When that fails on a
    transformers model, torch.onnx.export(dynamo=True) in eval mode is tried; the row's
    "onnx_exporter" says which made the file. Exports run on the CPU in worker processes, alongside
    the GPU measurements.

Three more cases (resnet50, gpt_like, gpt2 with sdpa) find the largest batch that trains under
torch.cuda.set_per_process_memory_fraction(24 GiB / total): doubling, then bisection, three steps per
trial, OOM caught and torch.cuda.empty_cache() between trials ("max_batch_24g").

--deadline-seconds bounds the whole run and --timeout each case: a case whose estimate would pass the
deadline is recorded as skipped, so the run always ends and writes results.json.

Without a GPU it measures on the CPU instead (peak of live tensor bytes from torch.profiler's memory
events, as utils/bench/measure_torch_peak.py; no "reserved"), so the script can be tested anywhere. Cases
whose package or model is missing (transformers; a torchvision too old for maxvit) and the max-batch
cases (CUDA only) are recorded as skipped with the reason.

  python3 utils/gpu/gpu_torch_peaks.py --out DIR [--only a,b] [--small] [--deadline-seconds 450]
  python3 utils/gpu/gpu_torch_peaks.py --compare DIR --oomplan build/tools/oomplan/oomplan
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
GiB = 2**30
BUDGET_24G = 24 * GiB

# name: (family, batch, seq, estimated seconds on an H200) at full size; --small makes batch 2 and
# seq 64 for a quick CPU run. A transformers name "base:impl" is the model "base" with
# attn_implementation=impl; "base:max_batch_24g" is the bisection for "base". The estimate (process
# start, imports, CUDA init, model build, four steps; exports run beside them) decides what the
# deadline skips: from the earlier H200 run, where a case with its export took 10 to 26 s, about
# half of it the export. They add up to about 380 s.
CASES = {
    "resnet50": ("torchvision", 32, None, 9),
    "mobilenet_v2": ("torchvision", 32, None, 8),
    "bert_like": ("definitions", 8, 512, 12),
    "gpt_like": ("definitions", 8, 512, 12),
    "resnet18": ("torchvision", 32, None, 6),
    "efficientnet_b0": ("torchvision", 32, None, 8),
    "convnext_tiny": ("torchvision", 32, None, 10),
    "vit_b_16": ("torchvision", 32, None, 10),
    "gpt2:eager": ("transformers", 8, 512, 15),
    "gpt2:sdpa": ("transformers", 8, 512, 15),
    "llama:eager": ("transformers", 8, 512, 15),
    "llama:sdpa": ("transformers", 8, 512, 15),
    "resnet50:max_batch_24g": ("max_batch", 32, None, 30),
    "gpt_like:max_batch_24g": ("max_batch", 8, 512, 25),
    "gpt2:max_batch_24g": ("max_batch", 8, 512, 30),
    "bert:eager": ("transformers", 8, 512, 15),
    "bert:sdpa": ("transformers", 8, 512, 15),
    "t5:eager": ("transformers", 8, 512, 15),
    "t5:sdpa": ("transformers", 8, 512, 15),
    "lstm_lm": ("script", 32, 256, 8),
    "conformer": ("script", 16, 1024, 10),
    "mobilenet_v3_small": ("torchvision", 32, None, 6),
    "swin_t": ("torchvision", 32, None, 10),
    "regnet_y_400mf": ("torchvision", 32, None, 6),
    "densenet121": ("torchvision", 32, None, 9),
    "squeezenet1_0": ("torchvision", 32, None, 6),
    "shufflenet_v2_x1_0": ("torchvision", 32, None, 6),
    "mnasnet0_5": ("torchvision", 32, None, 6),
    "vgg11": ("torchvision", 32, None, 8),
    "alexnet": ("torchvision", 32, None, 5),
    "googlenet": ("torchvision", 32, None, 7),
    "maxvit_t": ("torchvision", 32, None, 12),
}
# The max-batch cases: the model, its attn_implementation (transformers), the batch the search starts at.
MAX_BATCH = {"resnet50": None, "gpt_like": None, "gpt2": "sdpa"}


class Skip(Exception):
    """A case this machine cannot run (no CUDA, a package or model missing): recorded, not a failure."""


def base_of(case):
    return case.split(":")[0]


def attn_of(case):
    impl = case.split(":")[1] if ":" in case else None
    return impl if impl in ("eager", "sdpa") else None


def family_of(model):
    """The family of a model name (the max-batch cases build their model from its own entry)."""
    for k, v in CASES.items():
        if base_of(k) == model and v[0] != "max_batch":
            return v[0]
    raise KeyError(model)


def script_models():
    """The models written here: an LSTM language model and a Conformer-like speech encoder."""
    import torch.nn as nn

    class LSTMLM(nn.Module):
        """Zaremba's medium LSTM LM: embedding, two LSTM layers of 650, dropout, a vocab-sized head."""

        def __init__(self, vocab=10000, d=650, layers=2):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            self.drop = nn.Dropout(0.5)
            self.lstm = nn.LSTM(d, d, layers, batch_first=True)
            self.head = nn.Linear(d, vocab)

        def forward(self, input_ids):
            y, _ = self.lstm(self.drop(self.emb(input_ids)))
            return self.head(self.drop(y))

    class FeedForward(nn.Module):
        def __init__(self, d, mult=4, p=0.1):
            super().__init__()
            self.net = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, mult * d), nn.SiLU(), nn.Dropout(p),
                                     nn.Linear(mult * d, d), nn.Dropout(p))

        def forward(self, x):
            return self.net(x)

    class ConvModule(nn.Module):
        """LayerNorm, pointwise conv to 2d + GLU, depthwise conv, BatchNorm, SiLU, pointwise conv."""

        def __init__(self, d, kernel=31, p=0.1):
            super().__init__()
            self.ln = nn.LayerNorm(d)
            self.pw1 = nn.Conv1d(d, 2 * d, 1)
            self.glu = nn.GLU(dim=1)
            self.dw = nn.Conv1d(d, d, kernel, padding=kernel // 2, groups=d)
            self.bn = nn.BatchNorm1d(d)
            self.act = nn.SiLU()
            self.pw2 = nn.Conv1d(d, d, 1)
            self.drop = nn.Dropout(p)

        def forward(self, x):  # [B, T, d]
            h = self.glu(self.pw1(self.ln(x).transpose(1, 2)))
            h = self.drop(self.pw2(self.act(self.bn(self.dw(h)))))
            return h.transpose(1, 2)

    class ConformerBlock(nn.Module):
        def __init__(self, d, heads, p=0.1):
            super().__init__()
            self.ff1, self.ff2 = FeedForward(d, p=p), FeedForward(d, p=p)
            self.ln_att = nn.LayerNorm(d)
            self.att = nn.MultiheadAttention(d, heads, dropout=p, batch_first=True)
            self.drop = nn.Dropout(p)
            self.conv = ConvModule(d, p=p)
            self.ln_out = nn.LayerNorm(d)

        def forward(self, x):
            x = x + 0.5 * self.ff1(x)
            h = self.ln_att(x)
            x = x + self.drop(self.att(h, h, h, need_weights=False)[0])
            x = x + self.conv(x)
            x = x + 0.5 * self.ff2(x)
            return self.ln_out(x)

    class Conformer(nn.Module):
        """Conformer-S-like: 80 log-mel features, a 4x subsampling of two stride-2 3x3 convs, 8 blocks
        of d=256 with 4 heads, a per-frame classifier over 1024 units (cross-entropy per frame)."""

        def __init__(self, feats=80, d=256, heads=4, layers=8, classes=1024):
            super().__init__()
            self.sub = nn.Sequential(nn.Conv2d(1, d, 3, 2), nn.ReLU(), nn.Conv2d(d, d, 3, 2), nn.ReLU())
            f = ((feats - 3) // 2 + 1 - 3) // 2 + 1
            self.proj = nn.Linear(d * f, d)
            self.blocks = nn.Sequential(*[ConformerBlock(d, heads) for _ in range(layers)])
            self.head = nn.Linear(d, classes)

        def forward(self, x):  # [B, T, feats]
            h = self.sub(x.unsqueeze(1))  # [B, d, T/4, feats/4]
            h = self.proj(h.permute(0, 2, 1, 3).flatten(2))
            return self.head(self.blocks(h))

    return {"lstm_lm": LSTMLM, "conformer": Conformer}


def frames_after_subsampling(t):
    return ((t - 3) // 2 + 1 - 3) // 2 + 1


TRANSFORMERS = {
    # GPT-2 small: 12 layers, 768 wide, vocab 50257.
    "gpt2": ("GPT2Config", "GPT2LMHeadModel", {}),
    "llama": ("LlamaConfig", "LlamaForCausalLM",
              dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=8, num_attention_heads=16,
                   num_key_value_heads=16, vocab_size=32000, max_position_embeddings=2048)),
    # BERT-base with its masked-LM head: logits over 30522.
    "bert": ("BertConfig", "BertForMaskedLM", {}),
    # t5-small's shape: 6+6 layers, 512 wide, 8 heads, vocab 32128; decoder inputs as long as the encoder's.
    "t5": ("T5Config", "T5ForConditionalGeneration",
           dict(d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_decoder_layers=6, num_heads=8,
                vocab_size=32128, decoder_start_token_id=0)),
}


def transformers_model(name, attn):
    try:
        import transformers
    except ImportError:
        raise Skip("transformers is not installed")
    cfg_name, cls_name, kw = TRANSFORMERS[name]
    cfg = getattr(transformers, cfg_name)(**kw)
    cfg.use_cache = False
    cls = getattr(transformers, cls_name)
    if attn is None:
        return cls(cfg)
    try:
        return cls._from_config(cfg, attn_implementation=attn)
    except TypeError:  # an older _from_config
        cfg._attn_implementation = attn
        return cls(cfg)


# googlenet without its two auxiliary heads: their adaptive pooling of 14x14 to 4x4 has no ONNX export.
TORCHVISION_KWARGS = {"googlenet": dict(aux_logits=False, init_weights=True)}


def make_model(name, attn=None):
    """The module in train mode, fp32, random weights."""
    import torch
    torch.manual_seed(0)
    fam = family_of(name)
    if fam == "torchvision":
        import torchvision
        if not hasattr(torchvision.models, name):
            raise Skip("torchvision %s has no %s" % (torchvision.__version__, name))
        return getattr(torchvision.models, name)(weights=None, **TORCHVISION_KWARGS.get(name, {}))
    if fam == "definitions":
        sys.path.insert(0, os.path.join(os.path.dirname(HERE), "export"))  # definitions
        import definitions
        return definitions.BertLike() if name == "bert_like" else definitions.GPTLike()
    if fam == "script":
        return script_models()[name]()
    model = transformers_model(name, attn)
    if name == "t5":  # positional (input_ids, decoder_input_ids); the logits only
        class T5Logits(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m
                self.config = m.config

            def forward(self, input_ids, decoder_input_ids):
                return self.m(input_ids=input_ids, decoder_input_ids=decoder_input_ids, use_cache=False).logits
        return T5Logits(model)
    return model


def make_inputs(name, model, batch, seq):
    """(inputs, targets or None, input names, dynamic axes per input)."""
    import torch
    torch.manual_seed(1)
    fam = family_of(name)
    if fam == "torchvision":
        return (torch.randn(batch, 3, 224, 224),), torch.randint(0, 1000, (batch,)), ["input"], [{0: "batch"}]
    tok = {0: "batch", 1: "seq"}
    if name == "bert_like":
        ids = torch.randint(0, 30522, (batch, seq))
        return (ids, torch.ones(batch, seq, dtype=torch.long)), None, ["input_ids", "attention_mask"], [tok, tok]
    if name == "gpt_like":
        return (torch.randint(0, 50257, (batch, seq)),), torch.randint(0, 50257, (batch * seq,)), \
            ["input_ids"], [tok]
    if name == "conformer":
        t = frames_after_subsampling(seq)
        return (torch.randn(batch, seq, 80),), torch.randint(0, 1024, (batch * t,)), ["input"], [tok]
    if name == "lstm_lm":
        return (torch.randint(0, 10000, (batch, seq)),), torch.randint(0, 10000, (batch * seq,)), \
            ["input_ids"], [tok]
    vocab = model.config.vocab_size
    ids = torch.randint(0, vocab, (batch, seq))
    if name == "t5":
        dec = torch.randint(0, vocab, (batch, seq))
        return (ids, dec), torch.randint(0, vocab, (batch * seq,)), ["input_ids", "decoder_input_ids"], [tok, tok]
    return (ids,), torch.randint(0, vocab, (batch * seq,)), ["input_ids"], [tok]


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


def live_bytes(tensors):
    seen, total = set(), 0
    for t in tensors:
        s = t.storage()
        if s.data_ptr() not in seen and s.size():
            seen.add(s.data_ptr())
            total += s.size() * s.element_size()
    return total


def cpu_step_peak(step):
    """The profiler's highest running total of allocations during step() (CPU path)."""
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        keep = step()
        del keep
    events = sorted((e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"),
                    key=lambda e: e.start_us())
    cur = high = 0
    for e in events:
        cur += e.nbytes()
        high = max(high, cur)
    return high


def measure(case, batch, seq, precision):
    """Two rows: step 1 ("first": Adam's state is created) and step 2 ("steady")."""
    import torch
    device = "cuda" if torch.cuda.is_available() else "cpu"
    name, attn = base_of(case), attn_of(case)
    model = make_model(name, attn)
    inputs, targets, _, _ = make_inputs(name, model, batch, seq)
    model.train().to(device)
    inputs = tuple(t.to(device) for t in inputs)
    targets = targets.to(device) if targets is not None else None
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=1e-4)
    dtype = torch.bfloat16 if precision == "bf16" else None
    step = lambda: train_step(model, inputs, targets, opt, dtype, device)  # noqa: E731
    base = {"model": name, "batch": batch, "seq": seq, "precision": precision, "device": device,
            "params": sum(p.numel() for p in params), "torch": torch.__version__,
            "loss": "mean" if targets is None else "ce"}
    if attn:
        import transformers
        base["attn_implementation"] = attn
        # What the model really uses (a model without sdpa may fall back or refuse).
        base["attn_implementation_used"] = getattr(getattr(model, "config", None), "_attn_implementation", None)
        base["transformers"] = transformers.__version__
    first, steady = dict(base, step="first"), dict(base, step="steady")
    if device == "cuda":
        base.update(gpu=torch.cuda.get_device_name(), cuda=torch.version.cuda)
        first, steady = dict(base, step="first"), dict(base, step="steady")
        for row in (first, steady):
            if row is steady:
                opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            keep = step()  # step 1 creates Adam's state
            torch.cuda.synchronize()
            del keep
            row["max_memory_allocated"] = torch.cuda.max_memory_allocated()
            row["max_memory_reserved"] = torch.cuda.max_memory_reserved()
        return [first, steady]
    # CPU: bytes alive before the step + the profiler's highest running total during it.
    extra = list(inputs) + ([targets] if targets is not None else [])
    before = live_bytes(list(model.parameters()) + list(model.buffers()) + extra)
    first["max_memory_allocated"] = before + cpu_step_peak(step)
    opt.zero_grad(set_to_none=True)
    state = [t for st in opt.state.values() for t in st.values() if torch.is_tensor(t)]
    before = live_bytes(list(model.parameters()) + list(model.buffers()) + state + extra)
    steady["max_memory_allocated"] = before + cpu_step_peak(step)
    first["max_memory_reserved"] = steady["max_memory_reserved"] = None  # no caching allocator on the CPU
    return [first, steady]


def is_oom(e):
    import torch
    oom = getattr(torch.cuda, "OutOfMemoryError", None)
    return (oom is not None and isinstance(e, oom)) or "out of memory" in str(e)


def free_cuda():
    import gc
    import torch
    gc.collect()
    if torch.cuda.is_available():
        clear = getattr(torch._C, "_cuda_clearCublasWorkspaces", None)
        if clear is not None:  # so that each precision's first step starts as in a fresh process
            clear()
        torch.cuda.empty_cache()


def max_batch(case, start, seq, stop_at):
    """The largest batch for which three fp32 Adam steps run under a 24 GiB memory fraction."""
    import torch
    if not torch.cuda.is_available():
        raise Skip("the 24 GiB search needs CUDA")
    name = base_of(case)
    attn = MAX_BATCH[name]
    total = torch.cuda.get_device_properties(0).total_memory
    fraction = BUDGET_24G / total
    torch.cuda.set_per_process_memory_fraction(fraction)
    model = make_model(name, attn).train().cuda()
    params = [p for p in model.parameters() if p.requires_grad]
    trials = []

    def trial(b):
        t0 = time.time()
        ok, peak = False, None
        try:
            inputs, targets, _, _ = make_inputs(name, model, b, seq)
            inputs = tuple(t.cuda() for t in inputs)
            targets = targets.cuda() if targets is not None else None
            opt = torch.optim.Adam(params, lr=1e-4)
            torch.cuda.reset_peak_memory_stats()
            for _ in range(3):
                opt.zero_grad(set_to_none=True)
                keep = train_step(model, inputs, targets, opt, None, "cuda")
                del keep
            torch.cuda.synchronize()
            ok, peak = True, (torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved())
        except Exception as e:  # noqa: BLE001 - only an OOM is an answer
            if not is_oom(e):
                raise
        finally:
            inputs = targets = opt = None  # noqa: F841
            model.zero_grad(set_to_none=True)
        free_cuda()
        trials.append([b, ok, round(time.time() - t0, 1)])
        return ok, peak

    lo, hi, at_lo = 0, None, None
    b = start
    while hi is None and b <= 1 << 16:  # doubling until one fails
        if time.time() > stop_at:
            break
        ok, peak = trial(b)
        if ok:
            lo, at_lo, b = b, peak, b * 2
        else:
            hi = b
    while hi is not None and hi - lo > 1 and time.time() < stop_at:  # then bisection
        mid = (lo + hi) // 2
        ok, peak = trial(mid)
        if ok:
            lo, at_lo = mid, peak
        else:
            hi = mid
    row = {"model": name, "precision": "fp32", "seq": seq, "device": "cuda", "step": "steady",
           "max_batch_24g": lo, "max_batch_24g_fails": hi, "exact": hi is not None and hi - lo == 1,
           "budget_bytes": BUDGET_24G, "memory_fraction": fraction, "total_memory": total,
           "peak_allocated_at_max": at_lo and at_lo[0], "peak_reserved_at_max": at_lo and at_lo[1],
           "trials": trials, "torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
           "cuda": torch.version.cuda}
    if attn:
        import transformers
        row.update(attn_implementation=attn, transformers=transformers.__version__)
    return [row]


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
    keeps the same [N, 1, ...] noise for backward (as utils/export/export_train_models.py does)."""
    import torch
    if not self.training or self.p == 0.0:
        return x
    survival = 1.0 - self.p
    size = [x.shape[0]] + [1] * (x.ndim - 1) if self.mode == "row" else [1] * x.ndim
    noise = (torch.rand(size, dtype=x.dtype, device=x.device) < survival).to(x.dtype)
    return x * (noise / survival)


def export(case, batch, seq, outdir):
    """{"onnx": file, "onnx_exporter": "torchscript"|"dynamo", "onnx_mode": "train"|"eval"}."""
    import inspect
    import torch
    name, attn = base_of(case), attn_of(case)
    fam = family_of(name)
    if fam == "torchvision":  # in its own process: the measured step used torchvision's own
        import torchvision
        torchvision.ops.StochasticDepth.forward = exportable_stochastic_depth
    model = make_model(name, attn)
    inputs, _, names, axes = make_inputs(name, model, batch, seq)
    model.train()
    path = os.path.join(outdir, name + ".onnx")
    dyn = dict(zip(names, axes))
    kw = dict(training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False, opset_version=17,
              input_names=names, dynamic_axes=dyn)
    has_dynamo = "dynamo" in inspect.signature(torch.onnx.export).parameters
    if has_dynamo:
        kw["dynamo"] = False  # PyTorch 2.9+ defaults to the dynamo exporter, which has no training mode
    if fam == "transformers":
        kw["output_names"] = ["logits"]
    try:
        torch.onnx.export(model, inputs, path, **kw)
        info = {"onnx_exporter": "torchscript", "onnx_mode": "train"}
    except Exception as e:  # noqa: BLE001
        if fam != "transformers" or not has_dynamo:
            raise
        first_error = "%s: %s" % (type(e).__name__, str(e)[:300])
        model.eval()  # the dynamo exporter traces inference graphs only
        dkw = dict(dynamo=True, input_names=names)
        if "external_data" in inspect.signature(torch.onnx.export).parameters:
            dkw["external_data"] = False  # one file (under 2 GB here), stripped below
        try:
            torch.onnx.export(model, inputs, path, dynamic_axes=dyn, **dkw)
        except Exception:  # noqa: BLE001 - then with static shapes
            torch.onnx.export(model, inputs, path, **dkw)
        info = {"onnx_exporter": "dynamo", "onnx_mode": "eval", "onnx_torchscript_error": first_error}
    strip(path, name)
    if os.path.exists(path + ".data"):  # weights an exporter wrote beside the graph: not brought back
        os.remove(path + ".data")
    info["onnx"] = os.path.basename(path)
    return info


def run_case(case, batch, seq, outdir, what):
    """Runs in a child process. what: "measure" (fp32 and bf16 rows, or the 24 GiB search) or "export"."""
    if what == "export":
        import torch
        workers = int(os.environ.get("GPU_PEAKS_EXPORT_WORKERS", "1"))
        # Leave cores to the measuring process (it launches the GPU's kernels).
        torch.set_num_threads(max(1, min(3, ((os.cpu_count() or 1) - 2) // workers)))
        try:
            return export(case, batch, seq, outdir)
        except Skip as e:
            return {"onnx_skipped": str(e)}
    if CASES[case][0] == "max_batch":
        stop_at = float(os.environ.get("GPU_PEAKS_STOP_AT", "inf"))
        try:
            return max_batch(case, batch, seq, stop_at)
        except Skip as e:
            return [{"model": base_of(case), "case": case, "skipped": str(e)}]
    rows = []
    for precision in ("fp32", "bf16"):
        try:
            rows += measure(case, batch, seq, precision)
        except Skip as e:
            rows.append({"model": base_of(case), "case": case, "skipped": str(e)})
            break
        except Exception as e:  # noqa: BLE001 - record and go on (e.g. bf16 unsupported)
            rows.append({"model": base_of(case), "batch": batch, "seq": seq, "precision": precision,
                         "error": "%s: %s" % (type(e).__name__, e)})
            if attn_of(case):
                rows[-1]["attn_implementation"] = attn_of(case)
        try:
            free_cuda()
        except ImportError:
            pass
    return rows


def verdict(err, low, high):
    if err is None:
        return "-"
    return "ok" if low <= err <= high else ("LOW" if err < low else "HIGH")


def compare(outdir, oomplan):
    """The table: --runtime=pytorch-cuda on the exported graphs against the measurements, a verdict
    per figure (allocated -2%/+5%, reserved -5%/+10%), and a closing count per bar. A first-step row
    is planned with --step=first and an attn_implementation row with --attention=eager|sdpa (the model
    cell says which); a max_batch_24g row with --budget 24G --overhead 0 --max-batch, in a table of
    its own (the bar: never above PyTorch's batch, at least 95% of it)."""
    rows = json.load(open(os.path.join(outdir, "results.json")))
    print("| model | precision | batch | seq | device | allocated (measured) | predicted | err | | reserved (measured) "
          "| predicted | err | |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    bad = failed = False
    counts = {}
    skipped = []
    batches = []
    # A bf16 row is the same module under torch.autocast: its fp32 row's graph
    # with --precision=bf16-autocast.
    graphs = {r["model"]: r["onnx"] for r in rows if "onnx" in r}
    for r in rows:
        if "error" in r or "skipped" in r:
            continue
        if "max_batch_24g" in r:
            batches.append(r)
            continue
        precision = r.get("precision")
        onnx = graphs.get(r["model"])
        first = r.get("step") == "first"
        attn = r.get("attn_implementation")
        label = r["model"] + (" %s" % attn if attn else "") + (" first step" if first else "")
        if precision not in ("fp32", "bf16") or onnx is None:
            skipped.append("%s %s" % (label, precision))
            continue
        gpu = r["device"] == "cuda"  # the CPU path compares live bytes with the plan's total
        if precision == "bf16" and not gpu:
            skipped.append("%s bf16 (autocast is predicted for CUDA only)" % label)
            continue
        cmd = [oomplan, os.path.join(outdir, onnx), "--train", "--optimizer=adam", "--batch",
               str(r["batch"]), "--emit=json", "--runtime=" + ("pytorch-cuda" if gpu else "pytorch-cpu")]
        if precision == "bf16":
            cmd.append("--precision=bf16-autocast")
        if r["seq"]:
            cmd += ["--seq", str(r["seq"])]
        if first:
            cmd.append("--step=first")
        if attn in ("eager", "sdpa"):
            cmd.append("--attention=" + attn)
        key = precision + (" first step" if first else "")
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode not in (0, 2):
            print("| %s | oomplan failed: %s |" % (label, p.stderr.strip().splitlines()[-1:]))
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
        c = counts.setdefault(key, [0, 0, 0, 0])
        for i, v in ((0, va), (2, vr)):
            if v != "-":
                c[i] += v == "ok"
                c[i + 1] += 1
        bad |= va not in ("ok", "-") or vr not in ("ok", "-")
        f = lambda x: "-" if x is None else "%.1f MiB" % (x / 2**20)
        g = lambda x: "-" if x is None else "%+.1f%%" % (100 * x)
        print("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            label, precision, r["batch"], r["seq"] or "-", r["device"], f(ma), f(pa), g(ea), va, f(mr),
            f(pr), g(er), vr))
    for prec in ("fp32", "bf16", "fp32 first step", "bf16 first step"):
        c = counts.get(prec)
        if c:
            print("%s: allocated within -2%%/+5%%: %d of %d; reserved within -5%%/+10%%: %d of %d"
                  % (prec, c[0], c[1], c[2], c[3]))
    if batches:
        status = compare_max_batch(batches, graphs, outdir, oomplan)
        failed |= status == 2
        bad |= status == 1
    if skipped:
        print("not compared (no graph, or a precision oomplan does not predict): " + ", ".join(skipped))
    return 2 if failed else (1 if bad else 0)


def compare_max_batch(rows, graphs, outdir, oomplan):
    """The largest batch under 24 GiB: oomplan's --max-batch against PyTorch's bisection."""
    print()
    print("| model | seq | max batch under 24 GiB (measured) | predicted | |")
    print("|---|---|---|---|---|")
    ok = n = 0
    failed = bad = False
    for r in rows:
        attn = r.get("attn_implementation")
        label = r["model"] + (" %s" % attn if attn else "")
        onnx = graphs.get(r["model"])
        if onnx is None:
            print("| %s | %s | %d | no graph | - |" % (label, r["seq"] or "-", r["max_batch_24g"]))
            continue
        cmd = [oomplan, os.path.join(outdir, onnx), "--train", "--optimizer=adam", "--budget", "24G",
               "--overhead", "0", "--max-batch", "--emit=json", "--runtime=pytorch-cuda"]
        if r["seq"]:
            cmd += ["--seq", str(r["seq"])]
        if attn in ("eager", "sdpa"):
            cmd.append("--attention=" + attn)
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode not in (0, 2):
            print("| %s | oomplan failed: %s |" % (label, p.stderr.strip().splitlines()[-1:]))
            failed = True
            continue
        plan = json.loads(p.stdout)
        predicted = ((plan.get("report") or {}).get("max_batch") or plan.get("max_batch") or {}).get("max")
        measured, fails = r["max_batch_24g"], r.get("max_batch_24g_fails")
        if predicted is None or (not r.get("exact", True) and (fails is None or measured < predicted < fails)):
            v = "-"  # a search cut short: the true batch lies between the two, no verdict
        else:
            v = "HIGH" if predicted > measured else ("LOW" if predicted < 0.95 * measured else "ok")
        n += v != "-"
        ok += v == "ok"
        bad |= v not in ("ok", "-")
        exact = "" if r.get("exact", True) else " (>=, search cut short)"
        print("| %s | %s | %d%s | %s | %s |" % (label, r["seq"] or "-", measured, exact,
                                             "-" if predicted is None else predicted, v))
    print("max batch under 24 GiB: at most PyTorch's and at least 95%% of it: %d of %d" % (ok, n))
    return 2 if failed else (1 if bad else 0)


def child(case, batch, seq, outdir, what, timeout, stop_at, cut_by_deadline=False, workers=1):
    """One case in its own process: its rows (measure) or its export's keys (export). A case that the
    deadline (not its own budget) cuts short is recorded as skipped."""
    cmd = [sys.executable, os.path.abspath(__file__), "--out", outdir, "--case", case, str(batch),
           str(seq) if seq else "-", "--what", what]
    env = dict(os.environ, GPU_PEAKS_STOP_AT=str(stop_at), GPU_PEAKS_EXPORT_WORKERS=str(workers))
    if what == "export":
        env["CUDA_VISIBLE_DEVICES"] = ""  # exports trace on the CPU, beside the GPU measurements
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=max(1, timeout), env=env)
        if p.returncode == 0:
            return json.loads(p.stdout.strip().splitlines()[-1])
        err = p.stderr.strip()[-500:] or "exit status %d" % p.returncode
    except subprocess.TimeoutExpired:
        err = "timed out after %d s" % timeout
        if cut_by_deadline:
            why = "deadline: cut after %d s" % timeout
            return {"onnx_skipped": why} if what == "export" else \
                [{"model": base_of(case), "case": case, "skipped": why}]
    return {"onnx_error": err} if what == "export" else [{"model": base_of(case), "case": case, "error": err}]


def select(only):
    if not only:
        return list(CASES)
    names = only.split(",")
    unknown = [n for n in names if n not in CASES and not any(base_of(k) == n for k in CASES)]
    if unknown:
        sys.exit("gpu_torch_peaks.py: unknown case(s) %s; known: %s" % (", ".join(unknown), ", ".join(CASES)))
    return [k for k in CASES if k in names or base_of(k) in names]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="gpu-peaks", help="folder for results.json and the .onnx files")
    ap.add_argument("--only", help="comma-separated case names (a model name selects all its cases: "
                    "gpt2 is gpt2:eager, gpt2:sdpa and gpt2:max_batch_24g)")
    ap.add_argument("--small", action="store_true", help="batch 2, seq 64: a quick run (the CPU path)")
    ap.add_argument("--no-export", action="store_true")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per case (measurement or export)")
    ap.add_argument("--deadline-seconds", type=int, default=450,
                    help="the whole run: a case whose estimate would pass it is skipped, and recorded so")
    ap.add_argument("--export-workers", type=int, default=max(1, min(4, (os.cpu_count() or 1) // 4)),
                    help="exports run in this many processes beside the measurements")
    ap.add_argument("--compare", metavar="DIR", help="compare DIR/results.json with oomplan")
    ap.add_argument("--exit-zero", action="store_true",
                    help="with --compare: exit 0 when rows are outside a bar (oomplan errors still fail)")
    ap.add_argument("--oomplan", default=os.path.join(os.path.dirname(os.path.dirname(HERE)), "build", "tools", "oomplan",
                                                      "oomplan"))
    ap.add_argument("--case", nargs=3, metavar=("NAME", "BATCH", "SEQ"), help=argparse.SUPPRESS)
    ap.add_argument("--what", default="measure", choices=("measure", "export"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.compare:
        status = compare(a.compare, a.oomplan)
        sys.exit(2 if status == 2 else (0 if a.exit_zero else status))
    if a.case:
        n, b, s = a.case
        print(json.dumps(run_case(n, int(b), int(s) if s != "-" else None, a.out, a.what)))
        return
    start = time.time()
    deadline = start + a.deadline_seconds
    os.makedirs(a.out, exist_ok=True)
    names = select(a.only)

    def size(n):
        fam, batch, seq, est = CASES[n]
        if a.small:
            batch, seq = 2, (64 if seq else None)
        return batch, seq, est

    # Exports (CPU) in worker processes, alongside the measurements (GPU). A transformers model's
    # graph comes from its eager case; its sdpa rows are planned on it with --attention=sdpa.
    exports = {}
    lock = threading.Lock()

    def do_export(n):
        batch, seq, _ = size(n)
        left = deadline - time.time()
        info = {"onnx_error": "skipped: the deadline has passed"} if left < 5 else \
            child(n, batch, seq, a.out, "export", min(a.timeout, left), deadline, left < a.timeout,
                  a.export_workers)
        with lock:
            exports[n] = info
        print("export %s: %s" % (n, json.dumps(info)), file=sys.stderr, flush=True)

    pool = ThreadPoolExecutor(max_workers=max(1, a.export_workers))
    if not a.no_export:
        for n in names:
            if CASES[n][0] != "max_batch" and attn_of(n) in (None, "eager") and not (
                    family_of(base_of(n)) == "transformers" and importlib.util.find_spec("transformers") is None):
                pool.submit(do_export, n)
    results = []

    def write():
        json.dump(results, open(os.path.join(a.out, "results.json"), "w"), indent=1)

    for n in names:
        batch, seq, est = size(n)
        t0 = time.time()
        left = deadline - t0
        if family_of(base_of(n)) == "transformers" and importlib.util.find_spec("transformers") is None:
            rows = [{"model": base_of(n), "case": n, "skipped": "transformers is not installed"}]
        elif left < est:
            rows = [{"model": base_of(n), "case": n,
                     "skipped": "deadline: %d s left, the case takes about %d s" % (max(0, left), est)}]
        else:
            timeout = min(a.timeout, left)
            rows = child(n, batch, seq, a.out, "measure", timeout, t0 + timeout - 5, left < a.timeout)
        for r in rows:
            r["seconds"] = round(time.time() - t0, 1)
            if attn_of(n) and "skipped" in r:
                r["attn_implementation"] = attn_of(n)
            print(json.dumps(r), file=sys.stderr, flush=True)
        results += rows
        write()
    pool.shutdown(wait=True)  # each export is bounded by the deadline
    for n, info in exports.items():
        # On the model's fp32 steady row (the row compare() and a reader look for), else its first row.
        mine = [r for r in results if r.get("model") == base_of(n)]
        main_rows = [r for r in mine if r.get("precision") == "fp32" and r.get("step", "steady") == "steady"
                     and "max_batch_24g" not in r and r.get("attn_implementation") in (None, "eager")]
        target = (main_rows or mine or [None])[0]
        if target is None:
            target = {"model": base_of(n), "case": n, "skipped": "not measured"}
            results.append(target)
        target.update(info)
    write()
    # A bf16 step the CPU kernels cannot run (1.13 has no bf16 hardshrink backward) is recorded, not fatal.
    failed = sorted({r["model"] for r in results if "error" in r and r.get("precision") != "bf16"})
    skipped = ["%s (%s)" % (r.get("case", r["model"]), r["skipped"]) for r in results if "skipped" in r]
    print("%d rows in %s after %.0f s; failed: %s; skipped: %s" % (
        len(results), os.path.join(a.out, "results.json"), time.time() - start, ", ".join(failed) or "none",
        "; ".join(skipped) or "none"))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
