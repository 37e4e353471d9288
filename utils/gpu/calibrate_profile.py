#!/usr/bin/env python3
"""A device profile measured on the device: the efficiencies of oomplan's cost
model (docs/fitting.md) from the single-kernel models of utils/gpu/calibration,
each set by the kernels that depend on it alone, none by the test models the
profile is then checked on.

    calibrate_profile.py --oomplan BIN --measured DIR --out PROFILE.json
                         [--device H200] [--models utils/gpu/calibration]

DIR holds `cal-NAME.json` for each model NAME.onnxtxt: `oomplan-run
NAME.onnxtxt --backend=cuda --repeat 20 --json` on the device (what
utils/gpu/gpu-check.sh's section 4b writes). The measured time of a model is its
`seconds.steps_warm_median` (the steps on the device, timing events around
the CUDA graph's replay).

How each number follows (r: the model's predicted seconds with every
efficiency 1 and no kernel floor, the datasheet roofline; m: measured):
- fp32_efficiency = r / m of sgemm (a compute-bound FP32 product),
- compute_efficiency = r / m of bgemm (a bf16 tensor-core product),
- memory_efficiency: r / m of add, transpose and layernorm (memory-bound),
  their geometric mean (a typical memory-bound kernel, not the best one),
- kernel_us: chain's m over its steps (256 launches on 4 KiB each),
then, with those efficiencies in the profile and still no floor (p: the
predicted seconds):
- conv_efficiency = p / m of conv3x3, conv3x3s and conv1x1, their
  geometric mean,
- grouped_conv_efficiency = p / m of dwconv and dwconvs (depthwise), their
  geometric mean,
- attention_efficiency = p / m of attn (the fused attention of bert_like's
  size: 8 x 12 heads of 128 x 64).
bmm (batched FP32 products) sets nothing: it checks fp32_efficiency.
An efficiency is at most 1: a kernel measured faster than the datasheet's
roofline is reported and taken as 1. A model not measured keeps the
device's built-in value, and the table says so.

Prints a markdown table (measured, predicted with the built-in profile and
with the calibrated one) and writes PROFILE.json, which `oomplan --device
PROFILE.json` reads. Exit 1 when no model was measured.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

SETS = {
    "sgemm": "fp32_efficiency",
    "bgemm": "compute_efficiency",
    "add": "memory_efficiency",
    "transpose": "memory_efficiency",
    "layernorm": "memory_efficiency",
    "chain": "kernel_us",
    "conv3x3": "conv_efficiency",
    "conv3x3s": "conv_efficiency",
    "conv1x1": "conv_efficiency",
    "dwconv": "grouped_conv_efficiency",
    "dwconvs": "grouped_conv_efficiency",
    "attn": "attention_efficiency",
    "bmm": None,
}
EFFICIENCIES = ("compute_efficiency", "fp32_efficiency", "memory_efficiency",
                "conv_efficiency", "grouped_conv_efficiency",
                "attention_efficiency")


def plan(tool, model, device):
    """(predicted seconds, device steps) of MODEL's plan against DEVICE."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "plan.json")
        r = subprocess.run([tool, model, "--device", device, "--backend=cuda",
                            "--emit=json", "-o", out],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True)
        if r.returncode != 0:
            sys.exit("calibrate: %s failed on %s: %s" %
                     (tool, model, r.stderr.strip()))
        with open(out) as f:
            p = json.load(f)
    steps = [s for s in p["schedule"] if s.get("op")]
    return sum(s.get("seconds") or 0 for s in steps), len(steps), p["device"]


def measured(path):
    try:
        with open(path) as f:
            s = json.load(f)["seconds"]
        v = s.get("steps_warm_median", s.get("steps"))
        return v if isinstance(v, (int, float)) and v > 0 else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--oomplan", required=True, help="the oomplan tool")
    ap.add_argument("--measured", required=True,
                    help="folder of cal-NAME.json (oomplan-run --json)")
    ap.add_argument("--out", required=True, help="the profile to write")
    ap.add_argument("--device", default="H200",
                    help="the built-in profile to start from")
    ap.add_argument("--models", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "calibration"))
    a = ap.parse_args()

    names = sorted(n[:-len(".onnxtxt")] for n in os.listdir(a.models)
                   if n.endswith(".onnxtxt"))
    model = {n: os.path.join(a.models, n + ".onnxtxt") for n in names}
    got = {n: measured(os.path.join(a.measured, "cal-%s.json" % n))
           for n in names}
    if not any(got.values()):
        print("calibrate: no model was measured in %s" % a.measured,
              file=sys.stderr)
        return 1
    builtin = {n: plan(a.oomplan, model[n], a.device) for n in names}
    base = builtin[names[0]][2]
    notes = []

    def write(profile, path):
        with open(path, "w") as f:
            json.dump(profile, f, indent=1, sort_keys=False)
            f.write("\n")

    def predict(profile, n):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "profile.json")
            write(profile, path)
            return plan(a.oomplan, model[n], path)[:2]

    def ratio(n, profile):
        """p / m of model n against profile, at most 1; None unmeasured."""
        if not got.get(n) or n not in model:
            return None
        v = predict(profile, n)[0] / got[n]
        if v > 1:
            notes.append("%s ran faster than its prediction (%.3g of it): "
                         "taken as 1" % (n, 1 / v))
        return min(v, 1.0)

    def kept(key, why):
        notes.append("%s: kept the built-in %s (%s)" % (key, base[key], why))
        return base[key]

    roofline = dict(base, kernel_us=0, **{k: 1 for k in EFFICIENCIES})
    cal = dict(base, name=base["name"] + "-calibrated")
    for key, models in (("fp32_efficiency", ["sgemm"]),
                        ("compute_efficiency", ["bgemm"]),
                        ("memory_efficiency", ["add", "transpose",
                                               "layernorm"])):
        rs = [r for r in (ratio(n, roofline) for n in models) if r]
        cal[key] = geomean(rs) if rs else kept(key, "not measured")
    if got.get("chain"):
        cal["kernel_us"] = got["chain"] / builtin["chain"][1] * 1e6
    else:
        kept("kernel_us", "not measured")
    # The convolutions against the roofline the efficiencies above give.
    stage = dict(cal, kernel_us=0, conv_efficiency=1,
                 grouped_conv_efficiency=1, attention_efficiency=1)
    for key, models in (("conv_efficiency", ["conv3x3", "conv3x3s", "conv1x1"]),
                        ("grouped_conv_efficiency", ["dwconv", "dwconvs"]),
                        ("attention_efficiency", ["attn"])):
        rs = [r for r in (ratio(n, stage) for n in models) if r]
        cal[key] = geomean(rs) if rs else kept(key, "not measured")
    for k in EFFICIENCIES + ("kernel_us",):
        cal[k] = float("%.4g" % cal[k])
    write(cal, a.out)

    print("| model | sets | measured | predicted (%s) | measured / predicted "
          "| predicted (calibrated) | measured / predicted |" % base["name"])
    print("|---|---|---|---|---|---|---|")
    for n in names:
        m, b = got[n], builtin[n][0]
        c = predict(cal, n)[0]
        fmt = (lambda s: "%.1f us" % (s * 1e6))
        print("| %s | %s | %s | %s | %s | %s | %s |" % (
            n, SETS.get(n) or "(a check)", fmt(m) if m else "not measured",
            fmt(b), "%.2fx" % (m / b) if m else "", fmt(c),
            "%.2fx" % (m / c) if m else ""))
    print("")
    print("The calibrated profile (%s): %s" % (
        os.path.basename(a.out),
        ", ".join("%s %s" % (k, cal[k]) for k in EFFICIENCIES + ("kernel_us",))))
    for line in notes:
        print("- " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
