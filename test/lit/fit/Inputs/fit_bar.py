#!/usr/bin/env python3
"""Issue 11's bar, run by fitted-json.test.

Usage: fit_bar.py OOMPLAN CHECKER OUTDIR MODEL ARGS... -- FRACTION...

Plans MODEL ARGS with --no-fit --emit=json and reads its total_bytes T (the
untransformed total); then, for each FRACTION f, plans MODEL ARGS --budget
int(f * T) --emit=json with no other flag and requires exit 0, a JSON whose
"fits" is true, a fit that ran by default, and the independent checker
(utils/ci/check_fitted_plan.py --expect-fits --expect-inserted) passing. Then
checks that the checker is not vacuous: three corrupted copies of the
first fitted plan (two live arena buffers moved onto each other, a read
moved before its write, a budget one byte below the peak) must each fail.
Prints one line per plan; exit 0 when all hold.
"""
import copy
import json
import os
import subprocess
import sys


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def main():
    argv = sys.argv[1:]
    oomplan, checker, outdir, model = argv[:4]
    sep = argv.index("--")
    args, fracs = argv[4:sep], [float(f) for f in argv[sep + 1:]]
    os.makedirs(outdir, exist_ok=True)
    rc, out, err = run([oomplan, model] + args + ["--no-fit", "--emit=json"])
    if rc not in (0, 2):
        sys.exit("--no-fit run failed (%d): %s" % (rc, err))
    total = json.loads(out)["total_bytes"]
    print("as is: total_bytes %d" % total)
    ok = True
    first = None
    for f in fracs:
        budget = int(f * total)
        path = os.path.join(outdir, "fit-%s.json" % f)
        rc, out, err = run([oomplan, model] + args +
                           ["--budget", str(budget), "--emit=json", "-o", path])
        doc = json.load(open(path)) if rc in (0, 2) else {}
        fit = doc.get("fit") or {}
        print("%.1f: budget %d exit %d fits %s total %d strategy %r passes %d "
              "requested %s" % (f, budget, rc, doc.get("fits"),
                                doc.get("total_bytes", -1), fit.get("strategy"),
                                (fit.get("loop") or {}).get("passes", 0),
                                fit.get("requested")))
        ok &= rc == 0 and doc.get("fits") is True and \
            fit.get("requested") == "default"
        crc, cout, _ = run([sys.executable, checker, path, "--expect-fits",
                            "--expect-inserted", "-q"])
        print("  checker exit %d%s" % (crc, (": " + cout.strip()) if cout.strip() else ""))
        ok &= crc == 0
        first = first or (path, doc, budget)
    if first is None:
        return 0 if ok else 1
    path, doc, budget = first
    arena = [b for b in doc["buffers"] if b["region"] == "arena" and b["size"]]
    a, b = next((a, b) for a in arena for b in arena
                if a is not b and b["size"] <= a["size"] and
                a["start"] < b["end"] and b["start"] < a["end"])
    bad = copy.deepcopy(doc)
    for x in bad["buffers"]:
        if x["name"] == b["name"]:
            x["offset"] = a["offset"]
    cases = [("overlap", bad, [], "overlapping pairs in arena")]
    bad = copy.deepcopy(doc)
    steps = bad["schedule"]
    acts = {t for b in doc["buffers"] if b["kind"] == "activation"
            for t in b["tensors"]}
    w = next(i for i, s in enumerate(steps) if s["writes"] and s["kind"] == "compute"
             and s["writes"][0] in acts
             and any(s["writes"][0] in t["reads"] for t in steps[i + 1:]))
    x = steps[w]["writes"][0]
    r = next(j for j in range(w + 1, len(steps)) if x in steps[j]["reads"])
    steps[w], steps[r] = steps[r], steps[w]
    cases.append(("read before write", bad, [], "reads %s before any step writes it" % x))
    cases.append(("budget below peak", doc, ["--budget", str(doc["total_bytes"] - 1)],
                  "FAIL budget"))
    for name, d, extra, want in cases:
        p = os.path.join(outdir, "bad.json")
        json.dump(d, open(p, "w"))
        crc, cout, _ = run([sys.executable, checker, p, "-q"] + extra)
        hit = [l for l in cout.splitlines() if want in l]
        print("corrupted (%s): checker exit %d: %s" % (
            name, crc, hit[0] if hit else "expected failure not reported"))
        ok &= crc == 1 and bool(hit)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
