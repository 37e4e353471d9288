#!/usr/bin/env python3
"""Imports every model of Debian's libonnx-testdata with `oomplan --emit=graph`.

Usage: check_testdata_import.py OOMPLAN [DATA_DIR]

Each model must load (exit 0) or fail with one clear "unsupported" line
(exit 1). Anything else, a crash, a hang (30 s) or another error, is a failure.
Prints the counts and every failure; exits 1 if there was one.

The models run in a few `oomplan --commands FILE` processes (one per core),
which pay the process start once rather than 1,072 times. A model whose
process crashed or hung before answering is run again in its own process,
as `oomplan MODEL --emit=graph`, so that a crash or hang is still pinned on
the model that caused it.
"""
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys
import tempfile

oomplan = sys.argv[1]
data = sys.argv[2] if len(sys.argv) > 2 else "/usr/share/libonnx-testdata/data"
models = sorted(
    os.path.join(root, f)
    for root, _, files in os.walk(data)
    for f in files
    if f.endswith(".onnx"))
HANG_SECONDS = 30


def classify(rc, err):
    """err: what the CLI would print on stderr (diagnostics and the error)."""
    if rc == 0:
        return "loaded", ""
    if rc == 1 and "unsupported" in err and len(err.splitlines()) == 1:
        return "unsupported", err
    return "failed", "exit %d: %s" % (rc, err)


def check_alone(path):
    try:
        p = subprocess.run([oomplan, path, "--emit=graph"], capture_output=True,
                           text=True, timeout=HANG_SECONDS)
    except subprocess.TimeoutExpired:
        return path, "hang", "timed out after %d s" % HANG_SECONDS
    return (path,) + classify(p.returncode, p.stderr.strip())


def check_chunk(chunk):
    """Results for the models of CHUNK that one --commands process answered,
    and the models it did not reach."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        for path in chunk:
            f.write("%s --emit=graph -o /dev/null\n" % shlex.quote(path))
        listing = f.name
    answered = {}
    try:
        p = subprocess.run([oomplan, "--commands", listing], capture_output=True,
                           text=True, timeout=HANG_SECONDS + len(chunk))
        out = p.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
    finally:
        os.unlink(listing)
    for line in out.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            break  # A line cut short by a crash.
        err = [d["level"] + ": " + d["message"] for d in rec["diagnostics"]]
        if rec["exit"] == 1:
            err.append("error: " + rec["error"])
        path = chunk[rec["line"] - 1]
        answered[path] = (path,) + classify(rec["exit"], "\n".join(err))
    return answered, [m for m in chunk if m not in answered]


workers = os.cpu_count() or 2
chunks = [models[i::workers] for i in range(workers)]
with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as ex:
    done = list(ex.map(check_chunk, chunks))
    results = {}
    again = []
    for answered, missing in done:
        results.update(answered)
        again += missing
    for r in ex.map(check_alone, again):
        results[r[0]] = r
counts = {"loaded": 0, "unsupported": 0, "failed": 0, "hang": 0}
for path in models:
    _, kind, msg = results[path]
    counts[kind] += 1
    if kind in ("failed", "hang"):
        print("FAIL %s: %s" % (path, msg))
if again:
    print("rerun alone after a crash or hang: %d" % len(again))
print("models: %d" % len(models))
for k in ("loaded", "unsupported", "failed", "hang"):
    print("%s: %d" % (k, counts[k]))
sys.exit(1 if counts["failed"] or counts["hang"] else 0)
