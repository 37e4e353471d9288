#!/usr/bin/env python3
"""Independent checker of an oomplan JSON plan (schema oomplan.plan/3).

Usage: check_fitted_plan.py PLAN.json [--budget BYTES] [--expect-fits]
                            [--expect-inserted] [-q]

Reads only the JSON (docs/plan-json.md), none of oomplan's code, and checks
what an executor relies on:

  placement   in each device region (weights, io, arena) no two buffers
              whose step ranges [start, end) overlap share a byte; every
              buffer lies inside its region; in the host region every home
              lies inside it and no two homes share a byte (homes live for
              the whole run);
  steps       every step's device read is of a tensor that an earlier step
              wrote (compute, recompute, prefetch, optimizer) or that exists
              before the first step (weights, constants, graph inputs,
              optimizer state), and whose buffer is live at that step; a
              prefetch copies from host homes (its host_reads) that hold
              data (filled before the run, or by an earlier offload's
              host_writes or host step); a host step reads host homes that
              hold data;
  budget      at every step, the device bytes in use (the weights and io
              regions, plus the end of the highest live arena buffer) plus
              the fixed overhead stay within the budget; and the regions'
              total plus the overhead do too (the arena is one allocation);
  verdict     the top-level "fits" agrees with total_bytes + overhead <=
              budget_bytes.

--budget defaults to the plan's budget_bytes. --expect-fits fails unless the
plan fits; --expect-inserted fails unless the schedule has an inserted step
(recompute, offload or prefetch) or a micro-batch loop. Prints one line per
failure and a summary; exit 0 when every check holds, 1 otherwise.
"""
import argparse
import json
import sys

DEVICE_REGIONS = ("weights", "io", "arena")
# Kinds whose tensors hold data before the first step.
INITIAL_KINDS = {"weight", "constant", "input", "optimizer-state"}


class Checker:
    def __init__(self, quiet):
        self.failures = []
        self.counts = {}
        self.quiet = quiet

    def expect(self, what, cond, msg):
        self.counts[what] = self.counts.get(what, 0) + 1
        if not cond:
            self.failures.append((what, msg))
        return cond


def overlaps(items):
    """items: (lo, hi, start, end, name); pairs overlapping in both bytes
    and steps. Sweep by offset; compare with the ones still open."""
    items = sorted(items)
    bad = []
    open_ = []
    for it in items:
        lo, hi, s, e, name = it
        open_ = [o for o in open_ if o[1] > lo]
        for o in open_:
            if o[2] < e and s < o[3]:
                bad.append((o, it))
        open_.append(it)
    return bad


def check_placement(c, plan):
    regions = plan["regions"]
    by_region = {}
    for b in plan["buffers"]:
        by_region.setdefault(b["region"], []).append(b)
    for region, bufs in sorted(by_region.items()):
        size = regions.get(region)
        c.expect("placement", size is not None,
                 "buffer region %r has no size in regions" % region)
        items = []
        for b in bufs:
            if b["size"] == 0:
                continue
            lo, hi = b["offset"], b["offset"] + b["size"]
            if size is not None:
                c.expect("placement", 0 <= lo and hi <= size,
                         "%s: [%d, %d) outside the %s region (%d bytes)"
                         % (b["name"], lo, hi, region, size))
            # Resident regions hold their buffers for the whole run.
            s, e = (b["start"], b["end"]) if region == "arena" else (0, 1 << 62)
            items.append((lo, hi, s, e, b["name"]))
        bad = overlaps(items)
        c.expect("placement", not bad,
                 "%d overlapping pairs in %s, first %s and %s" % (
                     len(bad), region, bad[0][0][4] if bad else "",
                     bad[0][1][4] if bad else ""))
    host = plan.get("host_buffers", [])
    hsize = regions.get("host", 0)
    items = []
    for h in host:
        lo, hi = h["offset"], h["offset"] + h["size"]
        c.expect("placement", 0 <= lo and hi <= hsize,
                 "host home %s: [%d, %d) outside the host region (%d bytes)"
                 % (h["name"], lo, hi, hsize))
        if h["size"]:
            items.append((lo, hi, 0, 1, h["name"]))
    bad = overlaps(items)
    c.expect("placement", not bad,
             "%d overlapping host homes, first %s and %s" % (
                 len(bad), bad[0][0][4] if bad else "", bad[0][1][4] if bad else ""))


def check_steps(c, plan):
    buf_of = {}
    kind_of = {}
    for b in plan["buffers"]:
        for t in b["tensors"]:
            buf_of[t] = b
            kind_of[t] = b["kind"]
    home_of = {}
    for h in plan.get("host_buffers", []):
        for t in h["tensors"]:
            home_of[t] = h
    on_device = {t for t, b in buf_of.items()
                 if b["kind"] in INITIAL_KINDS and b["region"] != "host"
                 and t not in home_of}
    filled = {h["name"] for h in plan.get("host_buffers", []) if h["initial"]}
    steps = plan["schedule"]
    for i, st in enumerate(steps):
        where = "step %d (%s %s)" % (i, st["kind"], st["op"])
        if st.get("on_host"):
            for t in st["reads"]:
                h = home_of.get(t)
                c.expect("steps", h is not None and h["name"] in filled,
                         "%s reads %s on the host before its host copy holds data"
                         % (where, t))
            for t in st["writes"]:
                h = home_of.get(t)
                if c.expect("steps", h is not None,
                            "%s writes %s on the host, which has no host home"
                            % (where, t)):
                    filled.add(h["name"])
            continue
        if st["kind"] == "prefetch":
            src = st.get("host_reads", [])
            c.expect("steps", len(src) == len(st["writes"]),
                     "%s writes %d tensors from %d host homes" % (
                         where, len(st["writes"]), len(src)))
            for t in src:
                h = home_of.get(t)
                c.expect("steps", h is not None and h["name"] in filled,
                         "%s copies from the host home of %s, which holds no "
                         "data yet" % (where, t))
        for t in st["reads"]:
            c.expect("steps", t in on_device,
                     "%s reads %s before any step writes it" % (where, t))
            b = buf_of.get(t)
            if c.expect("steps", b is not None, "%s reads %s, which has no buffer"
                        % (where, t)):
                c.expect("steps", b["start"] <= i < b["end"],
                         "%s reads %s outside its buffer's life [%d, %d)"
                         % (where, t, b["start"], b["end"]))
        for t in st.get("host_writes", []):
            h = home_of.get(t)
            if c.expect("steps", h is not None,
                        "%s offloads into %s, which has no host home" % (where, t)):
                filled.add(h["name"])
        for t in st["writes"]:
            b = buf_of.get(t)
            if c.expect("steps", b is not None, "%s writes %s, which has no buffer"
                        % (where, t)):
                c.expect("steps", b["start"] <= i < b["end"] or b["size"] == 0,
                         "%s writes %s outside its buffer's life [%d, %d)"
                         % (where, t, b["start"], b["end"]))
            on_device.add(t)


def check_budget(c, plan, budget, overhead):
    regions = plan["regions"]
    resident = sum(regions.get(r, 0) for r in ("weights", "io"))
    total = resident + regions.get("arena", 0)
    c.expect("verdict", total == plan["total_bytes"],
             "regions weights + io + arena = %d, total_bytes %d"
             % (total, plan["total_bytes"]))
    if plan.get("budget_bytes") is not None:
        c.expect("verdict", plan["fits"] == (plan["total_bytes"] + overhead
                                             <= plan["budget_bytes"]),
                 "fits is %s but total %d + overhead %d vs budget %d" % (
                     plan["fits"], plan["total_bytes"], overhead,
                     plan["budget_bytes"]))
    if budget is None:
        return 0
    n = plan["steps"]
    top = [0] * (n + 1)
    for b in plan["buffers"]:
        if b["region"] != "arena" or b["size"] == 0:
            continue
        for s in range(b["start"], min(b["end"], n + 1)):
            top[s] = max(top[s], b["offset"] + b["size"])
    worst = max(top) if top else 0
    step = top.index(worst) if top else 0
    c.expect("budget", resident + worst + overhead <= budget,
             "step %d uses %d device bytes (resident %d + arena top %d) + "
             "overhead %d > budget %d" % (step, resident + worst, resident,
                                          worst, overhead, budget))
    c.expect("budget", total + overhead <= budget,
             "regions %d + overhead %d > budget %d" % (total, overhead, budget))
    return resident + worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("plan")
    ap.add_argument("--budget", type=int)
    ap.add_argument("--expect-fits", action="store_true")
    ap.add_argument("--expect-inserted", action="store_true")
    ap.add_argument("-q", action="store_true", help="print only failures")
    o = ap.parse_args()
    with open(o.plan) as f:
        plan = json.load(f)
    c = Checker(o.q)
    if not c.expect("schema", plan.get("schema") == "oomplan.plan/3",
                    "schema is %r, not oomplan.plan/3" % plan.get("schema")):
        print("FAIL schema: %s" % c.failures[0][1])
        return 1
    fit = plan.get("fit") or {}
    overhead = fit.get("overhead_bytes") or 0
    budget = o.budget if o.budget is not None else plan.get("budget_bytes")
    check_placement(c, plan)
    check_steps(c, plan)
    peak = check_budget(c, plan, budget, overhead)
    if o.expect_fits:
        c.expect("verdict", plan["fits"] is True, "the plan does not fit")
    inserted = sum(1 for s in plan["schedule"]
                   if s["kind"] in ("recompute", "offload", "prefetch"))
    passes = (fit.get("loop") or {}).get("passes", 1)
    if o.expect_inserted:
        c.expect("steps", inserted > 0 or passes > 1,
                 "no inserted step and no micro-batch loop")
    for what, msg in c.failures:
        print("FAIL %s: %s" % (what, msg))
    if not o.q:
        print("check_fitted_plan: %d steps (%d inserted, %d passes), %d buffers, "
              "%d host homes; device peak %d bytes%s; %s" % (
                  len(plan["schedule"]), inserted, passes, len(plan["buffers"]),
                  len(plan.get("host_buffers", [])), peak,
                  "" if budget is None else " of budget %d" % budget,
                  ", ".join("%s %d" % kv for kv in sorted(c.counts.items()))))
        print("check_fitted_plan: %s" % ("all checks hold" if not c.failures else
                                         "%d failures" % len(c.failures)))
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
