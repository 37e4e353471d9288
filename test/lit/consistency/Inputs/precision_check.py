#!/usr/bin/env python3
"""Independent checks of an oomplan JSON plan (precision-*.test, names-*.test).

  precision_check.py formulas PLAN.json   every buffer's size_formula, evaluated
                                          here at the plan's symbols, and its
                                          type (dims x element size) give the
                                          buffer's size; prints a count
  precision_check.py peak PLAN.json       the op of the schedule step the
                                          report's peak names
  precision_check.py remedy PLAN.json K   bytes_after of the remedy of kind K
                                          ("none" when it is not offered)
  precision_check.py device PLAN.json     the report's device_bytes

The formulas are evaluated by Python from the printed text, not by oomplan.
"""
import json
import math
import re
import sys

ELEMENT_BYTES = {"float": 4, "float16": 2, "bfloat16": 2, "double": 8,
                 "int64": 8, "int32": 4, "int16": 2, "int8": 1, "uint8": 1,
                 "bool": 1}


def evaluate(text, symbols):
    expr = text.replace("^", "**")
    # max, min and floor: a size that is the larger of two phases (a
    # convolution's backward temporaries) prints as max(...), a count of
    # blocks (the fused attention's workspace) with min and floor.
    return eval(expr, {"__builtins__": {}, "max": max, "min": min,
                       "floor": math.floor}, dict(symbols))


def formulas(plan):
    symbols = plan["symbols"]
    checked = typed = 0
    for b in plan["buffers"]:
        if b["size_formula"] is not None:
            got = evaluate(b["size_formula"], symbols)
            if got != b["size"]:
                sys.exit("%s: size_formula %s gives %d, size is %d"
                         % (b["name"], b["size_formula"], got, b["size"]))
            checked += 1
        if b["type"] is not None:
            m = re.fullmatch(r"([a-z0-9]+)\[(.*)\]", b["type"])
            if not m or m.group(1) not in ELEMENT_BYTES:
                sys.exit("%s: unreadable type %s" % (b["name"], b["type"]))
            elements = 1
            for d in filter(None, m.group(2).split(",")):
                elements *= evaluate(d, symbols)
            got = elements * ELEMENT_BYTES[m.group(1)]
            if got != b["size"]:
                sys.exit("%s: type %s holds %d bytes, size is %d"
                         % (b["name"], b["type"], got, b["size"]))
            typed += 1
    print("formulas ok: %d buffers, %d typed" % (checked, typed))


def main():
    mode, path = sys.argv[1], sys.argv[2]
    with open(path) as f:
        plan = json.load(f)
    if mode == "formulas":
        formulas(plan)
    elif mode == "peak":
        step = plan["report"]["peak"]["step"]
        print("peak step %d op %s report op %s" %
              (step, plan["schedule"][step]["op"],
               plan["report"]["peak"]["op"]))
    elif mode == "remedy":
        found = [r for r in plan["report"]["remedies"]
                 if r["kind"] == sys.argv[3]]
        print("remedy %s bytes_after %s" %
              (sys.argv[3], found[0]["bytes_after"] if found else "none"))
    elif mode == "device":
        print("device_bytes %d" % plan["report"]["device_bytes"])
    else:
        sys.exit("unknown mode " + mode)


main()
