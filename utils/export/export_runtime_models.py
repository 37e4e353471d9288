#!/usr/bin/python3
"""Exports the four models of test/models WITH random weights, for running them.

What: OUTDIR/{resnet50,mobilenet_v2,bert_like,gpt_like}.onnx, the same modules, opset and dynamic axes
("batch", "seq") as the weight-stripped copies in test/models (utils/export/definitions.py), but with every
weight inside the file, so that oomplan-run and ONNX Runtime can run them and their outputs can be
compared (utils/bench/compare_runtime.py, utils/bench/bench_runtime.py). The files are 100-530 MB each: OUTDIR is
scratch space, never committed; nothing is downloaded.

Usage (Debian's interpreter: python3-torch, python3-torchvision):
    /usr/bin/python3 utils/export/export_runtime_models.py OUTDIR [NAME...]
NAME: the four (the default) or more torchvision CNNs (EXTRA: mobilenet_v3_large, efficientnet_b0,
shufflenet_v2_x1_0, resnet18), exported only when named.

How: torch.manual_seed(20261130 + model index) before building each model, then definitions.randomize()
(distinct weights, as in a trained model; the exporter would otherwise deduplicate identical ones), eval
mode, torch.onnx.export at opset 17 from dummy inputs of batch 2 (and seq 16) as definitions.export_all.
Gradients stay enabled during export: under no_grad, eval-mode nn.MultiheadAttention takes its fused
fast path, which torch 1.13 cannot export. Token-id inputs are int64 in [0, 1000) at export only; the
run scripts draw their own inputs.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import torch
    import torchvision
    import definitions
except ImportError as e:  # clear message instead of a traceback
    sys.exit(f"export_runtime_models.py: error: {e}; run with /usr/bin/python3 "
             "(Debian python3-torch, python3-torchvision)")

NAMES = ["resnet50", "mobilenet_v2", "bert_like", "gpt_like"]
# More torchvision CNNs for the runtime benchmark (docs/benchmarks.md), exported only when named:
# HardSwish and squeeze-excite (mobilenet_v3_large), SiLU (efficientnet_b0), channel shuffle
# (shufflenet_v2_x1_0), the basic residual block (resnet18).
EXTRA = ["mobilenet_v3_large", "efficientnet_b0", "shufflenet_v2_x1_0", "resnet18"]


def build(name):
    if name == "resnet50":
        return torchvision.models.resnet50(weights=None)
    if name == "mobilenet_v2":
        return torchvision.models.mobilenet_v2(weights=None)
    if name in EXTRA:
        return getattr(torchvision.models, name)(weights=None)
    if name == "bert_like":
        return definitions.BertLike()
    return definitions.GPTLike()


def export(name, index, outdir):
    torch.manual_seed(20261130 + index)
    model = definitions.randomize(build(name)).eval()
    path = os.path.join(outdir, f"{name}.onnx")
    ids = torch.randint(0, 1000, (2, 16), dtype=torch.long)
    if name in ("resnet50", "mobilenet_v2") or name in EXTRA:
        args, ins, outs = (torch.randn(2, 3, 224, 224),), ["input"], ["output"]
        axes = {"input": {0: "batch"}, "output": {0: "batch"}}
    elif name == "bert_like":
        args = (ids, torch.ones(2, 16, dtype=torch.long))
        ins, outs = ["input_ids", "attention_mask"], ["last_hidden_state", "pooler_output"]
        axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                "last_hidden_state": {0: "batch", 1: "seq"}, "pooler_output": {0: "batch"}}
    else:
        args, ins, outs = (ids,), ["input_ids"], ["logits"]
        axes = {"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
    torch.onnx.export(model, args, path, opset_version=17, input_names=ins, output_names=outs,
                      dynamic_axes=axes)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        print(__doc__)
        return 2
    outdir, only = sys.argv[1], sys.argv[2:]
    unknown = [n for n in only if n not in NAMES + EXTRA]
    if unknown:
        sys.exit(f"export_runtime_models.py: error: unknown model(s) {unknown}; choose from {NAMES + EXTRA}")
    os.makedirs(outdir, exist_ok=True)
    for i, name in enumerate(NAMES + EXTRA):
        if (not only and name in NAMES) or name in only:
            export(name, i, outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
