#!/usr/bin/env python3
"""Imports every model of Debian's libonnx-testdata with `oomplan --emit=graph`.

Usage: check_testdata_import.py OOMPLAN [DATA_DIR]

Each model must load (exit 0) or fail with one clear "unsupported" line
(exit 1). Anything else, a crash, a hang (30 s) or another error, is a failure.
Prints the counts and every failure; exits 1 if there was one.
"""
import concurrent.futures
import os
import subprocess
import sys

oomplan = sys.argv[1]
data = sys.argv[2] if len(sys.argv) > 2 else "/usr/share/libonnx-testdata/data"
models = sorted(
    os.path.join(root, f)
    for root, _, files in os.walk(data)
    for f in files
    if f.endswith(".onnx"))


def check(path):
    try:
        p = subprocess.run([oomplan, path, "--emit=graph"], capture_output=True,
                           text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return path, "hang", "timed out after 30 s"
    err = p.stderr.strip()
    if p.returncode == 0:
        return path, "loaded", ""
    if p.returncode == 1 and "unsupported" in err and len(err.splitlines()) == 1:
        return path, "unsupported", err
    return path, "failed", "exit %d: %s" % (p.returncode, err)


with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
    results = list(ex.map(check, models))
counts = {"loaded": 0, "unsupported": 0, "failed": 0, "hang": 0}
for path, kind, msg in results:
    counts[kind] += 1
    if kind in ("failed", "hang"):
        print("FAIL %s: %s" % (path, msg))
print("models: %d" % len(models))
for k in ("loaded", "unsupported", "failed", "hang"):
    print("%s: %d" % (k, counts[k]))
sys.exit(1 if counts["failed"] or counts["hang"] else 0)
