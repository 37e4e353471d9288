#!/usr/bin/env python3
"""Runs every ONNX node test through a sanitizer build of oomplan-run.

Usage: utils/check/sanitizer_campaign.py OOMPLAN_RUN [--node-dir DIR] [--jobs N]
                                   [--timeout S] [--out DIR]

utils/check/sanitizer-campaign.sh builds OOMPLAN_RUN (AddressSanitizer and
UndefinedBehaviorSanitizer) and calls this. For each folder of DIR
(/usr/share/libonnx-testdata/data/node) with a model.onnx it runs:
  - real:  the model with its test_data_set_0 inputs (--inputs-dir);
then on a copy whose graph inputs have a symbol for every dim (and no
declared output shapes), so that nothing but the shape checks stands
between an odd shape and the kernels, with random values:
  - sym:   the inputs' dims from those files as --input-shape;
  - dimK:  the same with the last dim of input K one larger (K < 3);
  - one:   the same with the first dim of input 0 at 1 (a broadcast).
(A symbolic dim is at least 1, and a static one takes no other size.)
Exit 0 and exit 1 (an error naming the problem) are answers. A sanitizer
report, a signal, a timeout or any other exit code is a finding: each one is
listed with its command and the report's first lines, and the script exits 1
when there is any. ASan and UBSan exit with codes of their own here, so a
report can never pass for an exit 1.
"""
import argparse
import collections
import concurrent.futures
import os
import subprocess
import sys
import tempfile

SAN_EXIT = 86  # ASAN_OPTIONS / UBSAN_OPTIONS exitcode
MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
           "runtime error:", "LLVM ERROR", "Assertion")


def varint(buf, i):
    v, shift = 0, 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return v, i


def tensor_name_dims(path):
    """(name, dims) of a TensorProto file: fields 1 (dims) and 8 (name)."""
    with open(path, "rb") as f:
        buf = f.read()
    i, dims, name = 0, [], None
    while i < len(buf):
        key, i = varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(buf, i)
            if field == 1:
                dims.append(v)
        elif wire == 2:
            n, i = varint(buf, i)
            if field == 1:  # packed dims
                j = i
                while j < i + n:
                    v, j = varint(buf, j)
                    dims.append(v)
            elif field == 8:
                name = buf[i:i + n].decode("utf-8", "replace")
            i += n
        elif wire == 5:
            i += 4
        elif wire == 1:
            i += 8
        else:
            break
    return name, dims


def fields(buf):
    """A message's fields in order: (field, wire, value); value is an int
    for varints, the bytes otherwise."""
    out, i = [], 0
    while i < len(buf):
        key, i = varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(buf, i)
        elif wire == 2:
            n, i = varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wire == 5:
            v, i = buf[i:i + 4], i + 4
        elif wire == 1:
            v, i = buf[i:i + 8], i + 8
        else:
            raise ValueError("unsupported wire type %d" % wire)
        out.append((field, wire, v))
    return out


def enc_varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def encode(fs):
    out = bytearray()
    for field, wire, v in fs:
        out += enc_varint(field << 3 | wire)
        if wire == 0:
            out += enc_varint(v)
        elif wire == 2:
            out += enc_varint(len(v)) + v
        else:
            out += v
    return bytes(out)


def edit(buf, field, fn):
    """buf with each length-delimited FIELD replaced by fn(bytes) (None
    drops it)."""
    out = []
    for f, w, v in fields(buf):
        if f == field and w == 2:
            v = fn(v)
            if v is None:
                continue
        out.append((f, w, v))
    return encode(out)


def symbolic_model(model_bytes):
    """The model with every graph input dim a symbol of its own (s<input>_
    <axis>), and no declared output or value_info shapes, so that any input
    shape binds and the shape checks, not the declarations, must refuse
    what does not fit."""
    counter = [0]

    def input_vi(vi):
        k = counter[0]
        counter[0] += 1
        axis = [0]

        def dim(d):
            a = axis[0]
            axis[0] += 1
            return encode([(2, 2, ("s%d_%d" % (k, a)).encode())])
        shape = lambda sh: edit(sh, 1, dim)
        tensor = lambda t: edit(t, 2, shape)
        return edit(vi, 2, lambda ty: edit(ty, 1, tensor))

    def output_vi(vi):
        return edit(vi, 2, lambda ty: edit(ty, 1, lambda t: edit(
            t, 2, lambda sh: None)))

    def graph(g):
        g = edit(g, 11, input_vi)
        g = edit(g, 12, output_vi)
        return edit(g, 13, lambda vi: None)
    return edit(model_bytes, 7, graph)


def runs_of(test_dir, tool, tmp):
    """(label, argv) of each run of one node test."""
    model = os.path.join(test_dir, "model.onnx")
    ds = os.path.join(test_dir, "test_data_set_0")
    out = [("real", [tool, model, "--inputs-dir", ds])]
    inputs = []
    k = 0
    while os.path.exists(os.path.join(ds, "input_%d.pb" % k)):
        inputs.append(tensor_name_dims(os.path.join(ds, "input_%d.pb" % k)))
        k += 1
    if not inputs or any(n is None for n, _ in inputs):
        return out

    # Initializers fed as graph inputs keep their dims (they are weights).
    sym = os.path.join(tmp, os.path.basename(test_dir) + ".onnx")
    with open(model, "rb") as f:
        data = f.read()
    try:
        with open(sym, "wb") as f:
            f.write(symbolic_model(data))
    except (ValueError, IndexError):
        return out

    def shaped(change):
        args = [tool, sym]
        for j, (n, d) in enumerate(inputs):
            d = list(d)
            if j in change:
                d = change[j](d)
            if d:
                args += ["--input-shape", "%s=%s" % (n, "x".join(map(str, d)))]
        return args
    out.append(("sym", shaped({})))
    for j in range(min(3, len(inputs))):
        if inputs[j][1]:
            out.append(("dim%d" % j, shaped(
                {j: lambda d: d[:-1] + [d[-1] + 1]})))
    if inputs[0][1] and inputs[0][1][0] != 1:
        out.append(("one", shaped({0: lambda d: [1] + d[1:]})))
    return out


def run_one(label, argv, timeout):
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = "exitcode=%d:detect_leaks=1" % SAN_EXIT
    env["UBSAN_OPTIONS"] = "exitcode=%d:print_stacktrace=1" % SAN_EXIT
    try:
        p = subprocess.run(argv, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return label, argv, "FINDING timeout", ""
    except OSError as e:  # the binary vanished (a rebuild): not a finding
        return label, argv, "not run", str(e)
    err = p.stderr.decode("utf-8", "replace")
    report = any(m in err for m in MARKERS)
    if p.returncode in (0, 1) and not report:
        return label, argv, "exit%d" % p.returncode, ""
    kind = "sanitizer" if report or p.returncode == SAN_EXIT else (
        "signal" if p.returncode < 0 else "exit%d" % p.returncode)
    lines = [l for l in err.splitlines() if l.strip()]
    first = next((i for i, l in enumerate(lines)
                  if any(m in l for m in MARKERS)), 0)
    return label, argv, "FINDING " + kind, "\n".join(lines[first:first + 8])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tool")
    ap.add_argument("--node-dir",
                    default="/usr/share/libonnx-testdata/data/node")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--out", help="write every run's result here (TSV)")
    a = ap.parse_args()
    tests = sorted(d for d in os.listdir(a.node_dir)
                   if os.path.exists(os.path.join(a.node_dir, d, "model.onnx")))
    tmp = tempfile.mkdtemp(prefix="sanitizer-campaign-")
    work = [r for t in tests for r in runs_of(os.path.join(a.node_dir, t),
                                                a.tool, tmp)]
    counts = collections.Counter()
    findings = []
    rows = []
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        futs = [pool.submit(run_one, l, argv, a.timeout) for l, argv in work]
        for f in futs:
            label, argv, result, report = f.result()
            counts[(label.rstrip("0123456789"), result)] += 1
            rows.append((os.path.basename(argv[1]) if label != "real" else
                         os.path.basename(os.path.dirname(argv[1])), label,
                         result))
            if result.startswith("FINDING"):
                findings.append((argv, result, report))
    if a.out:
        with open(a.out, "w") as f:
            for r in rows:
                f.write("\t".join(r) + "\n")
    print("sanitizer campaign: %d node tests, %d runs" % (len(tests),
                                                            len(work)))
    for (label, result), n in sorted(counts.items()):
        print("  %-5s %-18s %5d" % (label, result, n))
    for argv, result, report in findings:
        print("\n%s: %s\n%s" % (result, " ".join(argv), report))
    print("\n%d findings" % len(findings))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
