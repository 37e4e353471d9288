#!/usr/bin/python3
"""Runs ONNX's own backend tests through oomplan-run and compares the outputs.

Debian's libonnx-testdata ships each test as a folder with model.onnx and
test_data_set_*/{input,output}_<i>.pb. Every data set is run through the
planner and the CPU runtime (oomplan-run --input NAME=FILE ... --output-dir ...;
each job keeps one `oomplan-run --commands -` that forks a child per run),
and each output is compared with the expected one using onnx.numpy_helper,
with ONNX's backend-test tolerances: rtol 1e-3, atol 1e-7 for floats, exact
for integers and bools. Each test is classified:

  pass         every data set ran and every output matched
  fail         it ran, and some output has wrong values, type or shape (a bug)
  unsupported  the planner or the runtime said unsupported (never a pass)
  error        anything else: a crash, a timeout, another error

Usage:
  run_onnx_conformance.py --tool build/tools/oomplan-run/oomplan-run --jobs 2
  run_onnx_conformance.py ... --write-passing test/conformance/passing.txt
  run_onnx_conformance.py ... --check test/conformance/passing.txt

--fold (a diagnostic) retries a test that the planner rejects because a
shape comes from a graph input, with those inputs turned into initializers
holding the data set's values; such passes are counted apart ("folded") and
never written to the passing list.

--check (the ctest hook) exits 1 when a test in the list no longer passes, or
when any test gives wrong values (fail), except those listed with a reason in
test/conformance/known_wrong.txt (tests whose expected outputs come from a
random generator no implementation can reproduce).
"""
import argparse
import collections
import concurrent.futures
import glob
import json
import os
import math
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time

SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]
DEFAULT_DATA = "/usr/share/libonnx-testdata/data"
RTOL, ATOL = 1e-3, 1e-7
# One BLAS thread per run: the runner already runs --jobs tests at once, and
# OpenBLAS starting a thread per core in every short run costs more than the
# test itself.
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1")



class Runner:
    """Runs oomplan-run command lines. With a tool that has --commands, each
    worker thread keeps one `oomplan-run --commands -` coprocess, which
    forks a child per line: a process start (dynamic loading and ONNX's
    schema registry, about 40 ms) costs more than most tests, and the tests
    are about 1,100 runs. A child that crashes or hangs is reported as such
    for its line alone. Otherwise each run is its own process."""

    def __init__(self, tool, batch, timeout):
        self.tool, self.batch, self.timeout = tool, batch, timeout
        self.local = threading.local()
        self.procs = []
        self.lock = threading.Lock()
        self.stopped = False  # kill(): runs in flight end, none start

    def _coprocess(self):
        p = getattr(self.local, "proc", None)
        if p is None or p.poll() is not None:
            # kill() ends it; the child it forked for the line in flight
            # dies with it (oomplan-run --commands asks the kernel so).
            p = subprocess.Popen(
                [self.tool, "--commands", "-", "--line-timeout",
                 str(max(1, math.ceil(self.timeout)))],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, env=ENV, text=True, bufsize=1)
            with self.lock:
                if self.stopped:  # kill() ran: start nothing more
                    p.kill()
                    raise RuntimeError("stopped at the deadline")
                self.procs.append(p)
            self.local.proc = p
        return p

    def run(self, args):
        """(returncode, stdout bytes, stderr bytes) of `oomplan-run ARGS`;
        raises subprocess.TimeoutExpired past the timeout."""
        if self.stopped:
            raise RuntimeError("stopped at the deadline")
        if self.batch:
            p = self._coprocess()
            try:
                p.stdin.write(" ".join(shlex.quote(a) for a in args) + "\n")
                p.stdin.flush()
                line = p.stdout.readline()
            except (BrokenPipeError, OSError):
                line = ""
            if line:
                rec = json.loads(line)
                if rec.get("signal") == signal.SIGALRM:
                    raise subprocess.TimeoutExpired(args, self.timeout)
                return (rec["exit"], rec["stdout"].encode(),
                        rec["stderr"].encode())
            if self.stopped:
                raise RuntimeError("stopped at the deadline")
            self.local.proc = None  # The coprocess itself died: run alone.
        p = subprocess.run([self.tool] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=self.timeout,
                           env=ENV)
        return p.returncode, p.stdout, p.stderr

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.stdin.close()
                p.wait()

    def kill(self):
        """At the deadline: ends the coprocesses and their runs now."""
        with self.lock:
            self.stopped = True
            for p in self.procs:
                if p.poll() is None:
                    p.kill()


# Imported lazily (workers need them; --help should not).
np = None
onnx = None
numpy_helper = None


def load_modules():
    global np, onnx, numpy_helper
    import numpy
    import onnx as onnx_mod
    from onnx import numpy_helper as nh
    np, onnx, numpy_helper = numpy, onnx_mod, nh


def read_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t


# Inputs that give a shape, not data: (op type, input positions). A static
# planner needs them at plan time; the node tests feed many of them as graph
# inputs. With folding, such an input becomes an initializer holding the data
# set's own values, so the same kernel runs on the same values.
SHAPE_OPERANDS = {
    "Reshape": [1], "Expand": [1], "Tile": [1], "Slice": [1, 2, 3, 4],
    "Unsqueeze": [1], "Squeeze": [1], "ReduceSum": [1], "ReduceMean": [1],
    "ReduceMax": [1], "ReduceMin": [1], "ReduceProd": [1], "ReduceL1": [1],
    "ReduceL2": [1], "ReduceLogSum": [1], "ReduceLogSumExp": [1],
    "ReduceSumSquare": [1], "Resize": [1, 2, 3], "Upsample": [1],
    "Pad": [1, 2, 3], "OneHot": [1], "Split": [1], "ConstantOfShape": [0],
    "Range": [0, 1, 2], "TopK": [1], "BlackmanWindow": [0],
    "HannWindow": [0], "HammingWindow": [0], "STFT": [1, 3],
    "MelWeightMatrix": [0, 1, 2, 3, 4], "DFT": [1], "MaxUnpool": [2],
    # Unrolling a Loop and resolving a sequence need counts and positions.
    "Loop": [0, 1], "SequenceInsert": [2], "SequenceErase": [1],
    "SequenceAt": [1], "SplitToSequence": [1],
}
# oomplan-run's note naming the inputs whose values fixed shapes.
VALUES_RE = re.compile(r"(?:shapes from input values|a shape depends on the "
                       r"values of given inputs):?\s*([^\n]*)", re.I)
# A planning error that folding may cure.
FOLDABLE_RE = re.compile(
    r"cannot follow|must be a constant known before run time"
    r"|must be (?:a )?(?:known|constant)|needs constant"
    r"|data-dependent size|not a constant when importing", re.I)


def shape_inputs(model):
    """Names of graph inputs used at a shape-operand position."""
    names = set()
    for n in model.graph.node:
        for i in SHAPE_OPERANDS.get(n.op_type, []):
            if i < len(n.input) and n.input[i]:
                names.add(n.input[i])
    return names


def prepare(model_path, data_set, tmp, fold):
    """The model to run and its arguments for one data set: --input
    NAME=FILE per graph input, and --input-shape for each input whose dims
    the model leaves open (the data fixes them). ONNX 1.12's generator wrote
    bfloat16 data as UINT16 tensors: such a file is relabelled BFLOAT16 (same
    bits) when the model's input is bfloat16. With fold, inputs that give
    shapes become initializers; returns (model path, args, folded names)."""
    model = onnx.load(model_path, load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    to_fold = shape_inputs(model) if fold else set()
    args, folded = [], []
    for idx, vi in enumerate(inputs):
        pb = os.path.join(data_set, "input_%d.pb" % idx)
        if not os.path.exists(pb):
            continue
        t = read_pb(pb)
        if vi.name in to_fold:
            t.name = vi.name
            model.graph.initializer.append(t)
            model.graph.input.remove(vi)
            folded.append(vi.name)
            continue
        tt = vi.type.tensor_type
        if (vi.type.HasField("tensor_type") and
                tt.elem_type == onnx.TensorProto.BFLOAT16 and
                t.data_type == onnx.TensorProto.UINT16):
            bits = numpy_helper.to_array(t).astype(np.uint16)
            t.ClearField("int32_data")
            t.data_type = onnx.TensorProto.BFLOAT16
            t.raw_data = bits.tobytes()
            pb = os.path.join(tmp, "input_%d.pb" % idx)
            with open(pb, "wb") as f:
                f.write(t.SerializeToString())
        args += ["--input", "%s=%s" % (vi.name, pb)]
        if (vi.type.HasField("tensor_type") and tt.HasField("shape") and
                not all(d.HasField("dim_value") for d in tt.shape.dim) and
                list(t.dims)):
            args += ["--input-shape",
                     "%s=%s" % (vi.name, "x".join(map(str, t.dims)))]
    if folded:
        model_path = os.path.join(tmp, "model.onnx")
        onnx.save(model, model_path)
    return model_path, args, folded


def compare(expected_pb, got_pb):
    """None when the outputs agree, else a one-line reason."""
    exp_t, got_t = read_pb(expected_pb), read_pb(got_pb)
    exp = numpy_helper.to_array(exp_t)
    got = numpy_helper.to_array(got_t)
    if (exp_t.data_type == onnx.TensorProto.UINT16 and
            got_t.data_type == onnx.TensorProto.BFLOAT16):
        # ONNX 1.12 wrote expected bfloat16 outputs as UINT16 bit patterns.
        exp = (exp.astype(np.uint32) << 16).view(np.float32)
        got = got.astype(np.float32)
    if exp.dtype != got.dtype:
        return "type %s, expected %s" % (got.dtype, exp.dtype)
    if exp.shape != got.shape:
        return "shape %s, expected %s" % (list(got.shape), list(exp.shape))
    if exp.dtype.kind in "fc":
        e = exp.astype(np.float64)
        g = got.astype(np.float64)
        bad = ~np.isclose(g, e, rtol=RTOL, atol=ATOL, equal_nan=True)
    elif exp.dtype.kind in "biu":
        bad = exp != got
    else:
        bad = np.array([a != b for a, b in zip(exp.ravel(), got.ravel())])
    if bad.any():
        i = int(np.flatnonzero(bad.ravel())[0])
        return "%d of %d values differ (first at %d: got %r, expected %r)" % (
            int(bad.sum()), bad.size, i, got.ravel()[i], exp.ravel()[i])
    return None


# A run that stops before any output because the planner or the runtime
# cannot handle a valid model: its error says "unsupported" (the category
# oomplan-run prints) or names one of these limits. Anything else that exits
# non-zero is an "error".
UNSUPPORTED_RE = re.compile(
    r"unsupported|no CPU kernel for op|the CPU kernel for .* has no"
    r"|cannot follow|must be a constant known before run time"
    r"|must be (?:a )?(?:known|constant)|needs constant|data-dependent size"
    r"|is a string tensor|no shape rule for op|not a tensor"
    r"|training-mode Dropout with a nonzero ratio", re.I)
OP_RE = re.compile(r"node (?:'[^']*'|#\d+) \(([A-Za-z0-9_]+)\)")


def run_data_set(runner, model, ds, extra, fold):
    """Returns (status, detail, folded input names) for one data set."""
    with tempfile.TemporaryDirectory(prefix="oomplan-conf-") as out:
        tmp = os.path.join(out, "in")
        os.mkdir(tmp)
        try:
            model, args, folded = prepare(model, ds, tmp, fold)
        except Exception as e:  # A model onnx itself cannot read.
            return "error", "reading the model: %s" % e, []
        if fold and not folded:
            return "unsupported", "nothing to fold", []
        try:
            rc, stdout, stderr = runner.run(
                [model, "--output-dir", out] + args + extra)
        except subprocess.TimeoutExpired:
            return "error", "timeout after %ss" % runner.timeout, folded
        err = stderr.decode("utf-8", "replace").strip()
        if rc != 0:
            outs = stdout.decode("utf-8", "replace").strip().splitlines()
            # A failed check prints its verdict on stdout, not as an error.
            line = (err.splitlines()[-1] if err else
                    "exit %d: %s" % (rc, outs[-1] if outs else ""))
            if rc < 0:
                return "error", "killed by signal %d" % -rc, folded
            if rc == 3 or UNSUPPORTED_RE.search(err):
                return "unsupported", line, folded
            return "error", line, folded
        n = len(glob.glob(os.path.join(ds, "output_*.pb")))
        for i in range(n):
            got = os.path.join(out, "output_%d.pb" % i)
            if not os.path.exists(got):
                return "error", "no output_%d.pb written" % i, folded
            try:
                why = compare(os.path.join(ds, "output_%d.pb" % i), got)
            except Exception as e:
                return "error", "comparing output %d: %s" % (i, e), folded
            if why:
                return "fail", "%s: output %d: %s" % (
                    os.path.basename(ds), i, why), folded
        # oomplan-run's note when given input values fixed some shapes.
        m = VALUES_RE.search(err)
        if m:
            return "pass", "input values: " + m.group(1).strip(), folded
    return "pass", "", folded


def run_test(runner, test_dir, extra, fold):
    """Returns (status, detail) for one test folder. A test that the planner
    rejects because a shape comes from a graph input is run again with those
    inputs folded (when fold is on): its pass then says "folded: NAMES"."""
    model = os.path.join(test_dir, "model.onnx")
    sets = sorted(glob.glob(os.path.join(test_dir, "test_data_set_*")))
    if not sets:
        return "error", "no test_data_set_*"
    folded_any = set()
    values = ""
    for ds in sets:
        status, detail, _ = run_data_set(runner, model, ds, extra, False)
        if status == "pass" and detail:
            values = detail
        if status == "unsupported" and fold and FOLDABLE_RE.search(detail):
            s2, d2, names = run_data_set(runner, model, ds, extra, True)
            if s2 in ("pass", "fail", "error") and names:
                status, detail = s2, d2
                folded_any.update(names)
        if status != "pass":
            if folded_any and status != "unsupported":
                detail = "folded %s: %s" % (",".join(sorted(folded_any)), detail)
            return status, detail
    if folded_any:
        return "pass", "folded: " + ",".join(sorted(folded_any))
    return "pass", values


def read_list(path):
    """Test names of a list file: one a line, '#' comments; a line of
    known_wrong.txt is 'suite/test  reason'."""
    names = {}
    if path and os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if line:
                    name, _, why = line.partition(" ")
                    names[name] = why.strip()
    return names


T0 = time.time()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", required=True, help="path of oomplan-run")
    ap.add_argument("--data", default=DEFAULT_DATA,
                    help="libonnx-testdata's data folder (default %(default)s)")
    ap.add_argument("--suites", default=",".join(SUITES),
                    help="comma-separated suites (default: all four)")
    ap.add_argument("--filter", default="", help="regex on suite/test names")
    ap.add_argument("--backend", default="cpu",
                    help="oomplan-run's --backend (cuda: on a GPU machine, "
                         "utils/gpu/gpu-check.sh)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=float, default=60,
                    help="seconds per data set (default %(default)s)")
    ap.add_argument("--deadline", type=float, default=0,
                    help="seconds after which the run stops: tests not "
                         "finished are recorded as not run, and the results "
                         "so far are still written (0: none)")
    ap.add_argument("--no-poison", action="store_true",
                    help="do not pass --poison (on by default: a buffer "
                         "overwritten when its lifetime ends turns any "
                         "liveness mistake into a failure)")
    ap.add_argument("--no-fold-inputs", action="store_true",
                    help="do not pass --fold-inputs to oomplan-run")
    ap.add_argument("--no-unplanned-check", action="store_true",
                    help="do not pass --check=unplanned (on by default: a "
                         "second run with every tensor in its own "
                         "allocation must give bit-identical outputs)")
    ap.add_argument("--fold", action="store_true",
                    help="diagnostic: retry a test whose shapes come from "
                         "graph inputs with those inputs folded into "
                         "initializers (the model changed; such passes are "
                         "counted apart and never written by --write-passing)")
    ap.add_argument("--write-passing", metavar="FILE",
                    help="write the sorted list of passing tests")
    ap.add_argument("--check", metavar="FILE",
                    help="exit 1 if a test in FILE no longer passes or any "
                         "test gives wrong values")
    ap.add_argument("--known-wrong", metavar="FILE",
                    help="tests whose wrong values are expected, with a "
                         "reason (default: known_wrong.txt beside --check)")
    ap.add_argument("--results", metavar="FILE",
                    help="write every test's status and detail as JSON")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print every test that does not pass")
    args = ap.parse_args()

    if not os.path.isdir(args.data):
        print("run_onnx_conformance: no test data at %s "
              "(apt-get install libonnx-testdata); skipped" % args.data)
        return 77
    if not os.access(args.tool, os.X_OK):
        print("run_onnx_conformance: %s is not executable" % args.tool)
        return 1
    load_modules()

    name_re = re.compile(args.filter) if args.filter else None
    tests = []
    for suite in args.suites.split(","):
        for d in sorted(glob.glob(os.path.join(args.data, suite, "*"))):
            name = suite + "/" + os.path.basename(d)
            if os.path.isdir(d) and (not name_re or name_re.search(name)):
                tests.append((name, d))

    extra = [] if args.no_poison else ["--poison"]
    if args.backend != "cpu":
        extra.append("--backend=" + args.backend)
    # Given input values planned as constants (oomplan-run --fold-inputs):
    # the model file is unchanged, and shapes that depend on input values
    # (Reshape targets, axes, pads, scales fed as inputs) can be planned.
    # The unplanned rerun requires bit-identical outputs.
    help_text = subprocess.run([args.tool, "--help"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT).stdout.decode()
    if args.no_fold_inputs:
        if "--no-fold-inputs" in help_text:
            extra.append("--no-fold-inputs")
    elif "--fold-inputs" in help_text and "--no-fold-inputs" not in help_text:
        extra.append("--fold-inputs")  # Before it became the default.
    if "--check" in help_text and not args.no_unplanned_check:
        extra.append("--check=unplanned")
    start = time.time()
    results = {}
    runner = Runner(args.tool, "--commands" in help_text, args.timeout)
    ex = concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs)
    futs = {ex.submit(run_test, runner, d, extra, args.fold): name
            for name, d in tests}
    try:
        # The deadline counts from the script's start (imports, listing).
        left = (max(0.0, args.deadline - (time.time() - T0))
                if args.deadline else None)
        for f in concurrent.futures.as_completed(futs, timeout=left):
            results[futs[f]] = f.result()
        ex.shutdown()
        runner.close()
    except concurrent.futures.TimeoutError:
        # A caller's own timeout would lose every result: stop here instead
        # and write what finished.
        ex.shutdown(wait=False, cancel_futures=True)
        runner.kill()
        for f, name in futs.items():
            if name in results:
                continue
            if f.done() and not f.cancelled() and f.exception() is None:
                results[name] = f.result()
            else:
                results[name] = ("not run", "the --deadline passed")
    elapsed = time.time() - start

    # Summary per suite.
    kinds = ["pass", "fail", "unsupported", "error"]
    counts = collections.OrderedDict()
    for name in sorted(results):
        suite = name.split("/", 1)[0]
        counts.setdefault(suite, collections.Counter())[results[name][0]] += 1
    for name, (status, detail) in results.items():
        if status == "pass" and detail.startswith("folded"):
            counts[name.split("/", 1)[0]]["folded"] += 1
        if status == "pass" and detail.startswith("input values"):
            counts[name.split("/", 1)[0]]["values"] += 1
    # (values): passes that needed given input values to plan their shapes;
    # (folded): passes of the --fold diagnostic (a changed model).
    row = "%-18s %6s %6s %9s %9s %6s %12s %6s"
    print(row % ("suite", "total", "pass", "(values)", "(folded)", *kinds[1:]))
    total = collections.Counter()
    for suite, c in counts.items():
        total.update(c)
        print(row % (suite, sum(c[k] for k in kinds), c["pass"],
                     "(%d)" % c["values"], "(%d)" % c["folded"],
                     *[c[k] for k in kinds[1:]]))
    print(row % ("all", sum(total[k] for k in kinds), total["pass"],
                 "(%d)" % total["values"], "(%d)" % total["folded"],
                 *[total[k] for k in kinds[1:]]))
    print("(%.1f s, %d jobs)" % (elapsed, args.jobs))
    not_run = sum(1 for s, _ in results.values() if s == "not run")
    if not_run:
        print("not run (the --deadline passed): %d" % not_run)

    # Which ops block the unsupported tests, from the node the error names.
    blockers = collections.Counter()
    for name, (status, detail) in results.items():
        if status == "unsupported":
            m = OP_RE.search(detail)
            blockers[m.group(1) if m else "(no op named)"] += 1
    if blockers:
        print("unsupported, by the op named in the error: " + ", ".join(
            "%s %d" % kv for kv in blockers.most_common()))

    known_wrong = read_list(args.known_wrong or (
        os.path.join(os.path.dirname(args.check), "known_wrong.txt")
        if args.check else None))
    for name in sorted(results):
        status, detail = results[name]
        if status == "fail" or (args.verbose and status != "pass"):
            mark = " (known: %s)" % known_wrong[name] if name in known_wrong else ""
            print("%-11s %s: %s%s" % (status.upper(), name, detail, mark))

    if args.results:
        with open(args.results, "w") as f:
            json.dump({n: {"status": s, "detail": d}
                       for n, (s, d) in sorted(results.items())}, f, indent=1)
    # Strict passes only: a folded pass ran a changed model.
    passing = sorted(n for n, (s, d) in results.items()
                     if s == "pass" and not d.startswith("folded"))
    if args.write_passing:
        with open(args.write_passing, "w") as f:
            f.write("# Tests of libonnx-testdata that pass through oomplan-run "
                    "(utils/ci/run_onnx_conformance.py --write-passing).\n")
            f.write("".join(n + "\n" for n in passing))
    if args.check:
        listed = read_list(args.check)
        lost = sorted(n for n in listed
                      if n in results and results[n][0] not in ("pass", "not run"))
        wrong = sorted(n for n, (s, _) in results.items()
                       if s == "fail" and n not in known_wrong)
        for n in lost:
            print("REGRESSION  %s: %s %s" % (n, *results[n]))
        for n in wrong:
            if n not in lost:
                print("WRONG       %s: %s" % (n, results[n][1]))
        if lost or wrong:
            print("conformance check failed: %d listed tests no longer pass, "
                  "%d give wrong values" % (len(lost), len(wrong)))
            return 1
        print("conformance check passed: all %d listed tests pass, no wrong "
              "values" % len(listed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
