#!/usr/bin/env python3
"""Validate oomplan's pictures without a browser (the lit suite uses this).

Usage: validate_report_files.py svg FILE.svg
       validate_report_files.py html FILE.html
       validate_report_files.py trace FILE.json

svg:   well-formed XML (xml.etree), root <svg> in the SVG namespace, at least
       one stacked area (<polygon>) and the labels of a timeline.
html:  the page holds one such <svg> element (parsed out and checked the same).
trace: Chrome trace-event format, JSON object form: "traceEvents" is a list;
       every event has name, ph, pid, tid; "X" events have integer ts >= 0 and
       dur >= 1; "C" events have numeric args; there is exactly one counter
       track name and one X slice per buffer name. Prints a one-line summary.
plan-json: an --emit=json plan (schema oomplan.plan/3) whose "report" object
       has every documented key, whose breakdown rows add up to
       device_bytes, whose "fits" agrees with device_bytes <= budget_bytes
       and with the top-level "fits", whose remedies carry every field, and
       in which no value is "" or "-" (missing values are null).
"""
import json
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def check_svg_text(text):
    root = ET.fromstring(text)
    if root.tag != SVG + "svg":
        sys.exit("validate: root element is %s, not svg" % root.tag)
    polys = root.findall(".//" + SVG + "polygon")
    texts = [t.text or "" for t in root.iter(SVG + "text")]
    if not polys:
        sys.exit("validate: no stacked areas (<polygon>)")
    if not any(t.startswith("peak: step") for t in texts):
        sys.exit("validate: no peak marker")
    print("svg ok: %d areas, %d labels, %s" % (len(polys), len(texts),
          "budget line" if any(t.startswith("budget") for t in texts) else "no budget"))


def check_trace(path):
    with open(path) as f:
        doc = json.load(f)
    events = doc.get("traceEvents")
    if not isinstance(events, list) or not events:
        sys.exit("validate: traceEvents missing or empty")
    counters, slices = set(), []
    for e in events:
        for key in ("name", "ph", "pid", "tid"):
            if key not in e:
                sys.exit("validate: event without %s: %r" % (key, e))
        if e["ph"] == "X":
            if not (isinstance(e.get("ts"), int) and e["ts"] >= 0):
                sys.exit("validate: bad ts: %r" % e)
            if not (isinstance(e.get("dur"), int) and e["dur"] >= 1):
                sys.exit("validate: bad dur: %r" % e)
            for key in ("bytes", "kind", "shape"):
                if key not in e.get("args", {}):
                    sys.exit("validate: slice without args.%s: %r" % (key, e))
            slices.append(e)
        elif e["ph"] == "C":
            if not all(isinstance(v, (int, float)) for v in e.get("args", {}).values()):
                sys.exit("validate: counter with non-numeric args: %r" % e)
            counters.add(e["name"])
        elif e["ph"] != "M":
            sys.exit("validate: unexpected phase %r" % e["ph"])
    # Slices on one (pid, tid) lane must not overlap (viewers would nest them).
    lanes = {}
    for e in sorted(slices, key=lambda e: e["ts"]):
        key = (e["pid"], e["tid"])
        if lanes.get(key, 0) > e["ts"]:
            sys.exit("validate: overlapping slices on lane %r" % (key,))
        lanes[key] = e["ts"] + e["dur"]
    if len(counters) != 1:
        sys.exit("validate: expected one counter track, got %r" % sorted(counters))
    print("trace ok: %d slices on %d lanes, counter '%s'" % (len(slices), len(lanes), counters.pop()))


REMEDY_KEYS = ("kind", "action", "detail", "planned", "symbol", "from", "to", "devices",
               "precision", "strategy", "overhead_percent", "bytes_after", "bytes_saved",
               "fits")


def check_no_placeholders(value, where):
    """Missing values are null in oomplan.plan/3, never "" or "-"."""
    if isinstance(value, dict):
        for k, v in value.items():
            check_no_placeholders(v, where + "." + k)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            check_no_placeholders(v, "%s[%d]" % (where, i))
    elif value in ("", "-"):
        sys.exit("validate: %s is %r, not null" % (where, value))


def check_plan_json(path):
    with open(path) as f:
        plan = json.load(f)
    if plan.get("schema") != "oomplan.plan/3":
        sys.exit("validate: schema is %r, not oomplan.plan/3" % plan.get("schema"))
    rep = plan.get("report")
    if not isinstance(rep, dict):
        sys.exit("validate: no report object")
    check_no_placeholders(plan, "$")
    for m in rep.get("remedies", []):
        missing = [k for k in REMEDY_KEYS if k not in m]
        if missing:
            sys.exit("validate: remedy %r without %s" % (m.get("action"), ",".join(missing)))
    if plan.get("fits") != rep.get("fits"):
        sys.exit("validate: top-level fits %r, report fits %r" % (plan.get("fits"), rep.get("fits")))
    for key in ("overhead_bytes", "device_bytes", "budget_bytes", "fits", "breakdown", "peak",
                "diagnosis", "remedies", "max_batch", "max_seq", "sweep"):
        if key not in rep:
            sys.exit("validate: report without %s" % key)
    total = sum(row["bytes"] for row in rep["breakdown"])
    if total != rep["device_bytes"]:
        sys.exit("validate: breakdown adds up to %d, not %d" % (total, rep["device_bytes"]))
    if rep["device_bytes"] != plan["total_bytes"] + rep["overhead_bytes"]:
        sys.exit("validate: device_bytes is not total_bytes + overhead_bytes")
    budget = rep["budget_bytes"]
    if rep["fits"] != (budget is None or rep["device_bytes"] <= budget):
        sys.exit("validate: fits disagrees with the budget")
    classes = [row["class"] for row in rep["breakdown"]]
    print("plan-json ok: classes %s; %d peak buffers; causes %s" % (
        ",".join(classes), len(rep["peak"]["buffers"]),
        ",".join(d["cause"] for d in rep["diagnosis"]) or "-"))


def main():
    kind, path = sys.argv[1], sys.argv[2]
    if kind == "trace":
        check_trace(path)
        return
    if kind == "plan-json":
        check_plan_json(path)
        return
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if kind == "html":
        start, end = text.find("<svg"), text.rfind("</svg>")
        if start < 0 or end < 0 or not text.lstrip().lower().startswith("<!doctype html"):
            sys.exit("validate: not an HTML page holding an <svg>")
        text = text[start:end + len("</svg>")]
    check_svg_text(text)


if __name__ == "__main__":
    main()
