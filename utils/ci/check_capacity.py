#!/usr/bin/env python3
"""Check a --max-batch / --max-seq answer the way a user would: plan at it.

Usage: check_capacity.py OOMPLAN batch|seq MODEL [OOMPLAN ARGS...]

Runs `OOMPLAN MODEL ARGS --max-ROLE --emit=json`, reads the answer N from the
JSON report (report.max_ROLE.max), then plans plainly (no search) at N and at
N + 1, replacing --ROLE in ARGS, and requires exit code 0 at N and 2 at N + 1.
The search code is not trusted: only the ordinary plan's exit code decides.
Prints one line "max-ROLE: N verified: fits at N, not at N+1" and exits 0, or
says what failed and exits 1. An answer marked at_least (the search cap) is
checked at N only.
"""
import json
import subprocess
import sys


def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def with_role(args, role, value):
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "--" + role:
            skip = True
            continue
        if a.startswith("--" + role + "="):
            continue
        out.append(a)
    return out + ["--" + role, str(value)]


def main():
    tool, role, model, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    # The search answers for plans as is (no transforms): the plain plans
    # that confirm it are --no-fit too.
    args = args + ["--no-fit"]
    rc, out, err = run([tool, model] + args + ["--max-" + role, "--emit=json"])
    if rc not in (0, 2):
        sys.exit("check_capacity: search failed (exit %d): %s" % (rc, err))
    cap = json.loads(out)["report"]["max_" + role]
    n = cap["max"]
    if n is None:
        print("max-%s: none (even %s=1 does not fit)" % (role, role))
        rc1, _, _ = run([tool, model] + with_role(args, role, 1))
        sys.exit(0 if rc1 == 2 else "check_capacity: %s=1 exits %d, not 2" % (role, rc1))
    rc_at, _, e1 = run([tool, model] + with_role(args, role, n))
    if rc_at != 0:
        sys.exit("check_capacity: plan at %s=%d exits %d, not 0: %s" % (role, n, rc_at, e1))
    if cap["at_least"]:
        print("max-%s: at least %d verified: fits at %d" % (role, n, n))
        return
    rc_above, _, e2 = run([tool, model] + with_role(args, role, n + 1))
    if rc_above != 2:
        sys.exit("check_capacity: plan at %s=%d exits %d, not 2: %s" % (role, n + 1, rc_above, e2))
    print("max-%s: %d verified: fits at %d, not at %d" % (role, n, n, n + 1))


if __name__ == "__main__":
    main()
