"""oomplan.torch: plan a live torch.nn.Module's training step, no export step.

    import torch, torchvision, oomplan.torch
    model = torchvision.models.resnet18()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    p = oomplan.torch.plan(model, torch.randn(32, 3, 224, 224), optimizer=opt,
                           budget="24G")
    p.fits, p.total_bytes

The module is exported to a temporary ONNX file in training mode (its
Dropout and BatchNorm as they train), then planned with oomplan.plan(); what
the graph cannot say is read from the live objects and passed as options:

- parameters with requires_grad=False (a frozen backbone, LoRA's base
  weights) get no gradient and no optimizer state (--freeze);
- the optimizer's kind (torch.optim.SGD with or without momentum, Adam,
  AdamW) is --optimizer;
- a Hugging Face model's config._attn_implementation (sdpa, flash, eager)
  is --attention;
- dim 0 of the inputs is the batch symbol, so max_batch() can search it.

Only this submodule imports torch (Debian's 1.13 or 2.x). The export writes
the weights too, so a model must fit the host's memory; the plan reads
shapes only. docs/embedding.md "PyTorch modules".
"""
import inspect
import os
import sys
import tempfile

import torch

import oomplan

__all__ = ["plan", "max_batch", "export", "options_for"]

# POSIX extended regular expressions (llvm::Regex, --freeze=re:...) give
# these characters a meaning.
_REGEX_SPECIAL = set(".[]{}()*+?^$|\\")


def _regex_escape(name):
    return "".join("\\" + c if c in _REGEX_SPECIAL else c for c in name)


def _inputs(example_inputs):
    if isinstance(example_inputs, torch.Tensor):
        return (example_inputs,)
    return tuple(example_inputs)


def export(model, example_inputs, path, opset=17):
    """Writes MODEL's training-mode graph on EXAMPLE_INPUTS to PATH, dim 0
    of every input that shares the first input's dim 0 as the symbol
    "batch". Returns the batch size of the example inputs, and the dropout
    probability to put back when only an eval-mode export was possible."""
    args = _inputs(example_inputs)
    names = ["input_%d" % i for i in range(len(args))]
    batch = args[0].shape[0] if args and args[0].dim() > 0 else None
    axes = {n: {0: "batch"} for n, a in zip(names, args)
            if batch is not None and a.dim() > 0 and a.shape[0] == batch}
    was_training = model.training
    # PyTorch 2.9+ exports with the dynamo exporter by default, which writes
    # eval-mode graphs: ask for the TorchScript exporter where there is a
    # choice.
    choice = {}
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        choice["dynamo"] = False
    try:
        model.train()
        # Training mode keeps Dropout and BatchNorm's running statistics as
        # they train; no constant folding keeps every parameter an
        # initializer under its own name (requires_grad is matched by it).
        torch.onnx.export(model, args, path, input_names=names,
                          dynamic_axes=axes, opset_version=opset,
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, **choice)
        return batch, None
    except Exception as e:  # noqa: BLE001 -- any exporter failure
        if not choice:
            raise
        first = e
    finally:
        model.train(was_training)
    # The TorchScript exporter fails on some modules (transformers 5's mask
    # code): the dynamo exporter's graph is in eval mode, so the module's
    # dropout is put back by --dropout.
    try:
        torch.onnx.export(model, args, path, input_names=names,
                          dynamic_shapes=None, dynamo=True)
    except Exception:  # noqa: BLE001
        raise first
    ps = [m.p for m in model.modules()
          if isinstance(m, torch.nn.Dropout) and m.p > 0]
    # Its shapes are the example's: no batch symbol to bind or search.
    return None, (max(ps) if ps else None)


def _optimizer_name(optimizer):
    if optimizer is None or isinstance(optimizer, str):
        return optimizer
    kind = type(optimizer).__name__
    if kind == "SGD":
        momentum = any(g.get("momentum", 0) for g in optimizer.param_groups)
        return "momentum" if momentum else "sgd"
    if kind in ("Adam", "AdamW"):
        return kind.lower()
    raise oomplan.UnsupportedError(
        "oomplan.torch: optimizer %s: oomplan counts the state of SGD, SGD "
        "with momentum, Adam and AdamW; pass optimizer='adam' (or another) "
        "for the nearest" % kind)


def options_for(model, optimizer=None):
    """The plan options the live MODEL and OPTIMIZER imply: freeze (the
    parameters without requires_grad, as one anchored regular expression)
    and optimizer."""
    opts = {}
    frozen = [n for n, p in model.named_parameters() if not p.requires_grad]
    if frozen:
        opts["freeze"] = "re:^(%s)$" % "|".join(
            _regex_escape(n) for n in frozen)
    name = _optimizer_name(optimizer)
    if name:
        opts["optimizer"] = name
    # A Hugging Face model says how its attention runs; the graph cannot.
    impl = getattr(getattr(model, "config", None), "_attn_implementation",
                   None)
    if impl in ("sdpa", "flash_attention_2"):
        opts["attention"] = "sdpa"
    elif impl == "eager":
        opts["attention"] = "eager"
    return opts


def plan(model, example_inputs, optimizer=None, loss="auto", precision=None,
         budget=None, device=None, **options):
    """Plans one training step of MODEL on EXAMPLE_INPUTS (a tensor or a
    tuple of them) and returns an oomplan.Plan, as oomplan.plan() does for
    an ONNX file. OPTIMIZER is a torch.optim object or a name; PRECISION is
    --precision (bf16-autocast for torch.autocast, bf16-mixed, ...); any
    other oomplan option as a keyword."""
    with tempfile.TemporaryDirectory(prefix="oomplan-torch-") as tmp:
        path = os.path.join(tmp, type(model).__name__ + ".onnx")
        batch, dropout = export(model, example_inputs, path)
        opts = options_for(model, optimizer)
        if dropout:
            opts["dropout"] = dropout
        if loss and loss != "auto":
            opts["loss"] = loss
        if precision:
            opts["precision"] = precision
        if device:
            opts["device"] = device
        opts.update(options)
        if batch is not None and "batch" not in opts:
            opts["batch"] = batch
        if "optimizer" not in opts:
            opts["optimizer"] = "adam"
        return oomplan.plan(path, budget=budget, train=True, **opts)


def max_batch(model, example_inputs, budget=None, **kwargs):
    """The largest batch whose training step fits BUDGET (oomplan's
    --max-batch), 0 when not even batch 1 fits."""
    p = plan(model, example_inputs, budget=budget, max_batch=True, **kwargs)
    if p.max_batch is None:
        raise oomplan.InternalError("the max_batch search did not run")
    return p.max_batch.max


def _main(argv):
    import argparse
    import importlib
    ap = argparse.ArgumentParser(
        prog="python3 -m oomplan.torch",
        description="Plan a PyTorch module's training step: MODULE:FACTORY "
        "names a function that returns the nn.Module (and optionally its "
        "optimizer as a second value).")
    ap.add_argument("factory", help="package.module:function")
    ap.add_argument("--input-shape", action="append", required=True,
                    help="D0xD1x... of each input, in order (float32)")
    ap.add_argument("--budget")
    ap.add_argument("--device")
    ap.add_argument("--optimizer", default=None)
    ap.add_argument("--precision", default=None)
    a = ap.parse_args(argv)
    mod, _, fn = a.factory.partition(":")
    made = getattr(importlib.import_module(mod), fn)()
    model, opt = made if isinstance(made, tuple) else (made, a.optimizer)
    inputs = tuple(torch.randn(*[int(d) for d in s.split("x")])
                   for s in a.input_shape)
    p = plan(model, inputs, optimizer=opt, precision=a.precision,
             budget=a.budget, device=a.device)
    print("fits" if p.fits else "does not fit", "total_bytes", p.total_bytes)
    return 0 if p.fits else 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
