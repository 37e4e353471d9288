#!/usr/bin/env python3
"""The consistency suite: one answer everywhere.

Usage: check_consistency.py OOMPLAN [--models DIR] [--jobs N] [--only NAME]
                            [--list] [-v]
       check_consistency.py OOMPLAN --one report|max|fit|fitted -- MODEL ARGS...
                            (one combination, for lit tests)

Drives the built oomplan binary over a grid of option combinations on the
shared models (test/models/{resnet50,mobilenet_v2,bert_like,gpt_like}.onnx
and test/models/train/*.onnx): batches, sequence lengths, budgets, --train,
optimizers, precisions, --overhead, --device, --emit=json and --emit=report,
--max-batch/--max-seq and --fit. Every combination checks the invariants
that apply to it:

  verdict     the exit code (0 fits, 2 does not) equals the JSON report's
              "fits", the JSON top-level "fits", and the text report's
              budget verdict; device_bytes <= budget_bytes iff it fits;
  device      --device without --budget makes the card's memory in GiB the
              budget (A100-80GB = 80 GiB, ...) in the report, capacity and
              fit alike;
  remedy      each planned remedy's bytes_after equals a plan made with
              that remedy's flags (--batch TO, --seq TO, --precision=P, or
              the same command without --no-fit), and so does its fits;
  capacity    --max-batch / --max-seq answer N: N fits and N+1 does not,
              under the same flags, at the bytes the search reports;
  formula     every size formula evaluated at the bound symbols equals the
              bytes printed beside it (JSON buffers, peak buffers, class
              rows with their padding note, diagnosis evidence, and the text
              report's peak listing), mixed precision included;
  fit         every --fit choice is the cheapest fitting plan of its own
              trade-off table: no row at a budget at or below the chosen
              budget (whose plan therefore fits too), chosen or sqrt(n),
              shows a smaller predicted overhead;
  fitted      a plan over its budget is fitted by default: for
              the fitted plan, the exit code equals the JSON's top-level
              "fits", its report's "fits" and the "fit" object's, the text's
              first line ("fits with" / "nothing fits"), and total + overhead
              <= budget; the independent checker (check_fitted_plan.py)
              accepts its placement, steps and live bytes.

The report, remedy and capacity invariants are about the plan as is, so
those combinations run with --no-fit (a plan over budget is otherwise
fitted); the remedies' replays and the capacity checks do too.

Each job sends its command lines to one `oomplan --commands -` coprocess
(--via=commands, the default; --via=cli or --one: one oomplan process per
run). A failure prints the invariant, what disagreed, and the exact command
to rerun. Exit code: 0 all hold, 1 some failed, 2 usage. Standard library only;
runs the combinations on a thread pool (--jobs, default 2).
"""
import argparse
import ast
import fractions
import json
import math
import os
import re
import shlex
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

GIB = 1 << 30
# Card memory in GiB, as vendors quote it .
DEVICE_GIB = {"H100-SXM": 80, "H100-PCIe": 80, "H200": 143771 / 1024, "A100-40GB": 40,
              "A100-80GB": 80, "L4": 24, "RTX-4090": 24}

BIN = None
MODELS = None
VERBOSE = False
_lock = threading.Lock()
_cache = {}
_runs = [0]


class Result:
    def __init__(self, args, rc, out, err):
        self.args, self.rc, self.out, self.err = args, rc, out, err

    def command(self):
        return " ".join(shlex.quote(a) for a in [BIN] + self.args)


# How commands run: "commands" keeps one `oomplan --commands -` coprocess
# per worker thread (the library's option parser, in process: a process
# start costs about 40 ms and the suite makes about 500 runs); "cli" starts
# the oomplan binary for each (its llvm::cl parser; --one, for lit, runs
# this way). embed.capi checks that both parsers read every option alike.
VIA = "commands"
_local = threading.local()
_coprocs = []


def _coprocess():
    p = getattr(_local, "proc", None)
    if p is None or p.poll() is not None:
        p = subprocess.Popen([BIN, "--commands", "-"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, bufsize=1)
        _local.proc = p
        with _lock:
            _coprocs.append(p)
    return p


def run_in_coprocess(args):
    """Result of one command line through the coprocess; None when the
    coprocess died (the caller then runs it as its own process)."""
    p = _coprocess()
    try:
        p.stdin.write(" ".join(shlex.quote(a) for a in args) + "\n")
        p.stdin.flush()
        line = p.stdout.readline()
    except (BrokenPipeError, OSError):
        line = ""
    if not line:
        _local.proc = None
        return None
    rec = json.loads(line)
    # Standard error as the CLI prints it.
    err = "".join("oomplan: %s: %s\n" % (d["level"], d["message"])
                  for d in rec["diagnostics"])
    if rec["exit"] == 1:
        err += "oomplan: error: %s\n" % rec["error"]
    return Result(list(args), rec["exit"], rec.get("output", ""), err)


def run(args):
    """Runs oomplan with args (cached: the same command runs once)."""
    key = tuple(args)
    with _lock:
        if key in _cache:
            return _cache[key]
    r = run_in_coprocess(args) if VIA == "commands" else None
    if r is None:
        try:
            p = subprocess.run([BIN] + list(args), capture_output=True,
                               text=True, timeout=300)
            r = Result(list(args), p.returncode, p.stdout, p.stderr)
        except subprocess.TimeoutExpired:
            r = Result(list(args), 124, "", "timed out after 300 s")
    with _lock:
        _cache[key] = r
        _runs[0] += 1
    if VERBOSE:
        print("  ran (rc %d): %s" % (r.rc, r.command()), file=sys.stderr)
    return r


def command(args):
    return " ".join(shlex.quote(a) for a in [BIN] + list(args))


class Check:
    """Failures and counts of one combination."""

    def __init__(self, name, args):
        self.name, self.args = name, args
        self.failures = []  # (invariant, message, command)
        self.checked = {}   # invariant -> number of assertions checked

    def ok(self, invariant, n=1):
        self.checked[invariant] = self.checked.get(invariant, 0) + n

    def fail(self, invariant, message, args=None):
        self.checked[invariant] = self.checked.get(invariant, 0) + 1
        self.failures.append((invariant, message,
                              command(self.args if args is None else args)))

    def expect(self, invariant, cond, message, args=None):
        if cond:
            self.ok(invariant)
        else:
            self.fail(invariant, message, args)
        return cond


# ----------------------------------------------------------------------------
# Formulas: SymExpr's printed form (lib/Analysis/SymExprEval.cpp): integer
# polynomials in the symbols with ^, floor(a/b), mod(a, b), min(...), max(...).

class FormulaError(Exception):
    pass


def _eval_node(n, env):
    if isinstance(n, ast.Expression):
        return _eval_node(n.body, env)
    if isinstance(n, ast.Constant) and isinstance(n.value, int):
        return n.value
    if isinstance(n, ast.Name):
        if n.id not in env or env[n.id] is None:
            raise FormulaError("unbound symbol %s" % n.id)
        return env[n.id]
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
        return -_eval_node(n.operand, env)
    if isinstance(n, ast.BinOp):
        a, b = _eval_node(n.left, env), _eval_node(n.right, env)
        if isinstance(n.op, ast.Add):
            return a + b
        if isinstance(n.op, ast.Sub):
            return a - b
        if isinstance(n.op, ast.Mult):
            return a * b
        if isinstance(n.op, ast.Div):
            return fractions.Fraction(a) / fractions.Fraction(b)
        if isinstance(n.op, ast.Pow):
            return a ** b
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
        args = [_eval_node(a, env) for a in n.args]
        f = n.func.id
        if f == "floor" and len(args) == 1:
            return math.floor(args[0])
        if f == "mod" and len(args) == 2:
            return args[0] - args[1] * math.floor(fractions.Fraction(args[0]) / args[1])
        if f == "min" and args:
            return min(args)
        if f == "max" and args:
            return max(args)
    raise FormulaError("cannot evaluate %s" % ast.dump(n)[:80])


def evaluate(formula, symbols):
    """formula at the bound symbols, as an int; FormulaError when it cannot."""
    text = formula
    env = {}
    # Symbol names may not be Python identifiers: substitute placeholders,
    # longest names first.
    for i, name in enumerate(sorted(symbols, key=len, reverse=True)):
        token = "S%d_" % i
        pattern = r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])"
        text = re.sub(pattern, token, text)
        env[token] = symbols[name]
    text = text.replace("^", "**")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise FormulaError("cannot parse %r" % formula)
    v = _eval_node(tree, env)
    if isinstance(v, fractions.Fraction):
        if v.denominator != 1:
            raise FormulaError("%r is not an integer at %r" % (formula, symbols))
        v = int(v)
    return v


def check_formula(chk, formula, symbols, nbytes, where, args, pad=0):
    if formula is None:
        return
    try:
        v = evaluate(formula, symbols)
    except FormulaError as e:
        chk.fail("formula", "%s: %s" % (where, e), args)
        return
    chk.expect("formula", v + pad == nbytes,
               "%s: formula %s = %d%s at %s, but the bytes beside it are %d" % (
                   where, formula, v, " (+%d padding)" % pad if pad else "",
                   symbols, nbytes), args)


def check_json_formulas(chk, doc, args):
    syms = doc.get("symbols", {})
    for b in doc.get("buffers", []):
        check_formula(chk, b.get("size_formula"), syms, b["size"],
                      "buffer %s (%s)" % (b["name"], b.get("type")), args)
    rep = doc.get("report") or {}
    for b in rep.get("peak", {}).get("buffers", []):
        check_formula(chk, b.get("formula"), syms, b["bytes"],
                      "peak buffer %s (%s)" % (b["name"], b.get("type")), args)
    for row in rep.get("breakdown", []):
        note = row.get("note") or ""
        if "arena" in note or row["class"] == "activations":
            continue  # aligned arena bytes at the peak: not the formula's
        m = re.search(r"bytes include (\d+) bytes of alignment padding", note)
        check_formula(chk, row.get("formula"), syms, row["bytes"],
                      "class row %s" % row["class"], args,
                      pad=int(m.group(1)) if m else 0)
    # Evidence lines: "NAME  TYPE  FORMULA = 1.50 GiB (1610612736 bytes)".
    for f in rep.get("diagnosis", []):
        for line in f.get("evidence", []):
            m = re.match(r"^(\S+)  (\S+)  (.+) = [0-9.]+ \S+ \((\d+) bytes\)", line)
            if m:
                check_formula(chk, m.group(3), syms, int(m.group(4)),
                              "evidence for %s" % m.group(1), args)


def check_text_formulas(chk, text, symbols, args):
    """The text report's peak listing: size, bytes, buffer, type, formula."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("peak: step"):
            continue
        for row in lines[i + 2:]:
            if not row.startswith("  ") or row.startswith("  ..."):
                break
            cols = re.split(r"\s{2,}", row.strip())
            if len(cols) < 5 or not cols[1].isdigit():
                break
            check_formula(chk, cols[4], symbols, int(cols[1]),
                          "text peak row %s" % cols[2], args)
        break


# ----------------------------------------------------------------------------
# Reading the outputs.

def text_verdict(text):
    """True/False from the report's budget line, None without one."""
    for line in text.splitlines():
        if line.startswith("budget:"):
            if "DOES NOT FIT" in line:
                return False
            if re.search(r"\): fits\b", line):
                return True
    return None


def load_json(chk, r, invariant):
    if r.rc not in (0, 2):
        chk.fail(invariant, "exit %d: %s" % (r.rc, r.err.strip()[:300]), r.args)
        return None
    try:
        return json.loads(r.out)
    except ValueError as e:
        chk.fail(invariant, "output is not JSON: %s" % e, r.args)
        return None


FIT_FLAGS = ("--fit", "--remat", "--offload", "--reorder", "--micro-batches")


def as_is(args):
    """args with --no-fit, unless they ask for a fit themselves."""
    if "--no-fit" in args or any(a.split("=")[0] in FIT_FLAGS for a in args):
        return list(args)
    return list(args) + ["--no-fit"]


def without(args, flag):
    """args without the boolean option flag."""
    return [a for a in args if a != flag]


def with_flag(args, flag, value):
    """args with --flag VALUE set (replacing any earlier --flag)."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a == flag:
            skip = True
            continue
        if a.startswith(flag + "="):
            continue
        out.append(a)
    if value is None:
        return out
    return out + [flag + "=" + str(value)]


def flag_value(args, flag):
    for i, a in enumerate(args):
        if a == flag and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(flag + "="):
            return a[len(flag) + 1:]
    return None


def parse_size(text):
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    m = re.match(r"^(\d+)([KMGT]?)$", text)
    return int(m.group(1)) * units[m.group(2)]


# ----------------------------------------------------------------------------
# The invariants.

def check_verdict(chk, args, doc, r_json):
    rep = doc.get("report") or {}
    fits_rep, fits_top = rep.get("fits"), doc.get("fits")
    rc_fits = {0: True, 2: False}.get(r_json.rc)
    chk.expect("verdict", fits_rep == rc_fits,
               "exit code %d but report.fits is %s" % (r_json.rc, fits_rep),
               r_json.args)
    chk.expect("verdict", fits_top == fits_rep,
               "top-level fits is %s but report.fits is %s" % (fits_top, fits_rep),
               r_json.args)
    budget, dev = rep.get("budget_bytes"), rep.get("device_bytes")
    if budget is not None and dev is not None:
        chk.expect("verdict", fits_rep == (dev <= budget),
                   "report.fits is %s but device_bytes %d vs budget_bytes %d" % (
                       fits_rep, dev, budget), r_json.args)
    device = flag_value(args, "--device")
    if device in DEVICE_GIB and flag_value(args, "--budget") is None:
        want = DEVICE_GIB[device] * GIB
        chk.expect("device", budget == want,
                   "--device %s without --budget: budget_bytes is %s, not the "
                   "card's %g GiB (%d)" % (device, budget, DEVICE_GIB[device], want),
                   r_json.args)
    r_text = run(with_flag(args, "--emit", "report"))
    chk.expect("verdict", r_text.rc == r_json.rc,
               "--emit=report exits %d, --emit=json exits %d" % (r_text.rc, r_json.rc),
               r_text.args)
    tv = text_verdict(r_text.out)
    if budget is not None:
        chk.expect("verdict", tv == fits_rep,
                   "text verdict %s but report.fits is %s" % (
                       {True: "fits", False: "DOES NOT FIT", None: "(no budget line)"}[tv],
                       fits_rep), r_text.args)
    elif tv is not None:
        chk.fail("verdict", "text prints a budget verdict, the JSON has no budget",
                 r_text.args)
    if r_text.rc in (0, 2):
        check_text_formulas(chk, r_text.out, doc.get("symbols", {}), r_text.args)


def replay(chk, args, extra_flags):
    a = list(args)
    for flag, value in extra_flags:
        a = with_flag(a, flag, value)
    r = run(with_flag(a, "--emit", "json"))
    return r, load_json(chk, r, "remedy")


def check_remedies(chk, args, doc):
    rep = doc.get("report") or {}
    overhead = rep.get("overhead_bytes", 0)
    budget = rep.get("budget_bytes")
    for m in rep.get("remedies", []):
        if not m.get("planned"):
            continue
        kind = m.get("kind")
        if kind is None:
            chk.fail("remedy", "remedy %r has no kind/number fields (oomplan.plan/2)"
                     % m.get("action"), with_flag(args, "--emit", "json"))
            continue
        if kind in ("smaller-batch", "shorter-sequence"):
            flag = "--batch" if kind == "smaller-batch" else "--seq"
            if flag_value(args, flag) is None:
                continue  # bound with --dim: no flag to replay
            r, d = replay(chk, args, [(flag, m["to"])])
        elif kind == "lower-precision":
            # --precision=bf16-mixed in training, --precision=bf16 in
            # inference (the model converted to 16 bits).
            if not m.get("precision"):
                continue
            r, d = replay(chk, args, [("--precision", m["precision"])])
        elif kind == "fit":
            check_fit_remedy(chk, args, m, overhead, budget)
            continue
        else:
            continue  # more devices: no flag plans it
        if d is None:
            continue
        got = d["report"]["device_bytes"]
        chk.expect("remedy", got == m["bytes_after"],
                   "remedy %s (%s) says %d bytes, the plan with its flags needs %d"
                   % (kind, m.get("detail"), m["bytes_after"], got), r.args)
        chk.expect("remedy", d["report"]["fits"] == m["fits"],
                   "remedy %s says fits=%s, the plan with its flags says %s"
                   % (kind, m["fits"], d["report"]["fits"]), r.args)


def check_fit_remedy(chk, args, m, overhead, budget):
    """The --fit remedy is the fit the same command runs without --no-fit."""
    if budget is None:
        return
    a = with_flag(without(args, "--no-fit"), "--emit", None)
    r = run(a)
    mm = re.search(r"^PyTorch's caching allocator runs it in .*?\((\d+) bytes\)", r.out, re.M) or \
        re.search(r"^plan: .*?\((\d+) bytes", r.out, re.M)
    if r.rc not in (0, 2) or not mm:
        chk.fail("remedy", "--fit replay of the fit remedy failed (exit %d): %s"
                 % (r.rc, r.err.strip()[:200]), a)
        return
    got = int(mm.group(1)) + overhead
    chk.expect("remedy", got == m["bytes_after"],
               "fit remedy says %d bytes, the default fit places %d "
               "(+ overhead)" % (m["bytes_after"], got), a)
    chk.expect("remedy", (r.rc == 0) == bool(m["fits"]),
               "fit remedy says fits=%s, the default fit exits %d"
               % (m["fits"], r.rc), a)


def check_capacity(chk, args, doc):
    rep = doc.get("report") or {}
    for key, flag in (("max_batch", "--batch"), ("max_seq", "--seq")):
        c = rep.get(key)
        if not c or c.get("max") is None or c.get("at_least"):
            continue
        if flag_value(args, flag) is None:
            continue
        n = c["max"]
        base = without(without(args, "--max-batch"), "--max-seq")
        base = [a for a in base if a not in ("--max-batch", "--max-seq")]
        for value, want_fit, want_bytes in ((n, True, c.get("bytes_at_max")),
                                            (n + 1, False, c.get("bytes_above"))):
            r, d = replay(chk, base, [(flag, value)])
            if d is None:
                continue
            chk.expect("capacity", d["report"]["fits"] == want_fit and
                       r.rc == (0 if want_fit else 2),
                       "%s answers %d, but %s %d %s (exit %d)" % (
                           key, n, flag, value,
                           "fits" if d["report"]["fits"] else "does not fit", r.rc),
                       r.args)
            if want_bytes is not None:
                chk.expect("capacity", d["report"]["device_bytes"] == want_bytes,
                           "%s says %s=%d needs %d bytes, the plan needs %d" % (
                               key, flag, value, want_bytes,
                               d["report"]["device_bytes"]), r.args)


TABLE_ROW = re.compile(r"^  (\S+)\s+\S+ \S+ \((\d+)\)\s+(.*?)\s*(-|\d+\.\d+%)\s+"
                       r"(no fit|-|\d+\.\d+%)\s*$")


def pct(s):
    return float(s[:-1]) if s.endswith("%") else None


def check_fit(chk, args):
    r = run(args)
    if r.rc not in (0, 2):
        chk.fail("fit", "exit %d: %s" % (r.rc, r.err.strip()[:300]), args)
        return
    m = re.search(r"^fit: .*budget .*?\((\d+) bytes\)", r.out, re.M)
    device = flag_value(args, "--device")
    if m and device in DEVICE_GIB and flag_value(args, "--budget") is None:
        chk.expect("device", int(m.group(1)) == DEVICE_GIB[device] * GIB,
                   "--fit --device %s: budget %s bytes, not the card's %d GiB"
                   % (device, m.group(1), DEVICE_GIB[device]), args)
    if r.rc != 0:
        return
    budget = int(m.group(1)) if m else None
    # Under --runtime=pytorch-cuda the transforms fit the tensors within
    # less: the table's budgets are the tensors'.
    t = re.search(r"^fit: .*; tensors within (\d+) bytes", r.out, re.M)
    if t:
        budget = int(t.group(1))
    chosen = re.search(r"^chosen: (.*)$", r.out, re.M)
    over = re.search(r"^predicted time: .*?overhead .*?\((-?\d+\.\d+)%\)", r.out, re.M)
    if not (chosen and over and budget):
        chk.fail("fit", "cannot read the chosen plan's budget and overhead", args)
        return
    if "micro-batches" in chosen.group(1):
        return  # the table is over one pass; the overhead over all passes
    ours = float(over.group(1))
    rows = []
    in_table = False
    for line in r.out.splitlines():
        if line.startswith("trade-off"):
            in_table = True
            continue
        if in_table:
            t = TABLE_ROW.match(line)
            if t:
                rows.append((t.group(1), int(t.group(2)), t.group(3),
                             pct(t.group(4)), pct(t.group(5))))
    if not rows:
        return
    # A plan placed within a budget at or below ours fits ours too.
    for label, b, strategy, ov, sq in rows:
        if b > budget:
            continue
        for what, v in (("chosen (%s)" % strategy, ov), ("sqrt(n)", sq)):
            if v is None:
                continue
            chk.expect("fit", ours <= v,
                       "chose %r at +%.1f%%, but its trade-off row %s (budget %d <= "
                       "%d) shows %s fitting at +%.1f%%" % (
                           chosen.group(1), ours, label, b, budget, what, v), args)
    # Each row is the cheapest of the rows at or below its budget.
    for label, b, strategy, ov, sq in rows:
        if ov is None:
            continue
        for label2, b2, strategy2, ov2, sq2 in rows:
            if b2 > b:
                continue
            for what, v in (("chosen (%s)" % strategy2, ov2), ("sqrt(n)", sq2)):
                if v is not None:
                    chk.expect("fit", ov <= v,
                               "trade-off row %s chooses %r at +%.1f%%, but row %s "
                               "(budget %d <= %d) shows %s at +%.1f%%" % (
                                   label, strategy, ov, label2, b2, b, what, v), args)


# ----------------------------------------------------------------------------
# The grid.

def M(name):
    return os.path.join(MODELS, name)


def grid():
    """(name, kind, args) for every combination; kind: report, max, fit."""
    out = []

    def report(args):
        out.append(("report", args + ["--no-fit", "--emit=json"]))

    # Inference CNNs: batches x budgets, overhead, devices.
    for model in ("resnet50.onnx", "mobilenet_v2.onnx"):
        for batch in (1, 8, 64):
            for budget in ("64M", "512M", "4G"):
                report([M(model), "--batch", str(batch), "--budget", budget])
            report([M(model), "--batch", str(batch), "--budget", "512M",
                    "--overhead", "256M"])
        for device in ("L4", "A100-40GB"):
            report([M(model), "--batch", "256", "--device", device])
        for batch in (1, 8):
            for overhead in ("64M", "1G"):
                report([M(model), "--batch", str(batch), "--budget", "1G",
                        "--overhead", overhead])
    for device in sorted(DEVICE_GIB):
        report([M("resnet50.onnx"), "--batch", "4", "--device", device])
        report([M("gpt_like.onnx"), "--batch", "8", "--seq", "512", "--device", device])
    # Inference transformers: batch x seq x budget.
    for model in ("bert_like.onnx", "gpt_like.onnx"):
        for batch in (1, 4, 16):
            for seq in (64, 256, 1024):
                for budget in ("512M", "1G", "4G"):
                    report([M(model), "--batch", str(batch), "--seq", str(seq),
                            "--budget", budget])
        report([M(model), "--batch", "8", "--seq", "512", "--budget", "2G",
                "--overhead", "1G"])
        report([M(model), "--batch", "8", "--seq", "512", "--budget", "10G",
                "--overhead", "1G"])
        for device in ("RTX-4090", "H200", "H100-SXM"):
            report([M(model), "--batch", "64", "--seq", "1024", "--device", device])
    # Training: optimizers x precisions x batches (fits: fast), a few over.
    for model, seq in (("train/resnet50.onnx", None), ("train/mobilenet_v2.onnx", None),
                       ("train/bert_like.onnx", "128"), ("train/gpt_like.onnx", "128")):
        shape = ["--seq", seq] if seq else []
        for opt in ("sgd", "adam", "adamw", "momentum"):
            for prec in ("fp32", "bf16-mixed", "fp16-mixed"):
                report([M(model), "--train", "--optimizer=" + opt,
                        "--precision=" + prec, "--batch", "2"] + shape +
                       ["--budget", "8G"])
        for batch in (1, 4):
            report([M(model), "--train", "--batch", str(batch)] + shape +
                   ["--budget", "4G", "--overhead", "512M"])
        report([M(model), "--train", "--batch", "2"] + shape + ["--device", "L4"])
        for budget in ("2G", "16G"):
            report([M(model), "--train", "--optimizer=sgd", "--batch", "1"] + shape +
                   ["--budget", budget])
    # Training over budget: diagnosis and every remedy replayed.
    report([M("train/bert_like.onnx"), "--train", "--batch", "32", "--seq", "512",
            "--device", "RTX-4090"])
    report([M("train/mobilenet_v2.onnx"), "--train", "--batch", "16", "--budget", "1G"])
    report([M("train/gpt_like.onnx"), "--train", "--batch", "4", "--seq", "256",
            "--budget", "3G", "--precision=bf16-mixed"])
    report([M("train/resnet50.onnx"), "--train", "--batch", "32", "--budget", "4G",
            "--overhead", "1G"])
    # Capacity: N fits, N + 1 does not.
    for args in ([M("resnet50.onnx"), "--batch", "1", "--budget", "1G", "--max-batch"],
                 [M("mobilenet_v2.onnx"), "--batch", "1", "--budget", "512M",
                  "--overhead", "128M", "--max-batch"],
                 [M("bert_like.onnx"), "--batch", "1", "--seq", "128", "--budget", "2G",
                  "--max-batch"],
                 [M("bert_like.onnx"), "--batch", "8", "--seq", "128", "--budget", "2G",
                  "--max-seq"],
                 [M("gpt_like.onnx"), "--batch", "1", "--seq", "128", "--budget", "1G",
                  "--max-batch"],
                 [M("gpt_like.onnx"), "--batch", "2", "--seq", "128", "--budget", "1G",
                  "--max-seq"],
                 [M("resnet50.onnx"), "--batch", "1", "--device", "L4", "--max-batch"],
                 [M("train/resnet50.onnx"), "--train", "--batch", "1", "--budget", "2G",
                  "--max-batch"],
                 [M("train/gpt_like.onnx"), "--train", "--batch", "1", "--seq", "128",
                  "--budget", "2G", "--precision=bf16-mixed", "--max-batch"],
                 [M("train/bert_like.onnx"), "--train", "--batch", "2", "--seq", "64",
                  "--budget", "2G", "--optimizer=sgd", "--max-seq"]):
        out.append(("max", args + ["--no-fit", "--emit=json"]))
    # --fit: the choice against its own trade-off table.
    for args in ([M("train/gpt_like.onnx"), "--train", "--batch", "2", "--seq", "256",
                  "--budget", "2402877952"],
                 [M("train/mobilenet_v2.onnx"), "--train", "--batch", "8",
                  "--budget", "400M"],
                 [M("train/resnet50.onnx"), "--train", "--batch", "4",
                  "--budget", "600M"],
                 [M("train/bert_like.onnx"), "--train", "--batch", "2", "--seq", "128",
                  "--budget", "1G", "--precision=bf16-mixed"],
                 [M("gpt_like.onnx"), "--batch", "4", "--seq", "256", "--budget", "600M"]):
        out.append(("fit", args + ["--fit", "--micro-batches=1"]))
    out.append(("fit", [M("train/mobilenet_v2.onnx"), "--train", "--batch", "8",
                        "--device", "L4", "--fit", "--micro-batches=1"]))
    # Over budget, no flag: fitted by default.
    for args in ([M("train/gpt_like.onnx"), "--train", "--batch", "2", "--seq", "256",
                  "--budget", "2402877952"],
                 [M("train/mobilenet_v2.onnx"), "--train", "--batch", "8",
                  "--budget", "400M"],
                 [M("train/bert_like.onnx"), "--train", "--batch", "2", "--seq", "128",
                  "--budget", "1G", "--precision=bf16-mixed"],
                 [M("gpt_like.onnx"), "--batch", "4", "--seq", "256", "--budget", "600M"],
                 [M("gpt_like.onnx"), "--batch", "8", "--seq", "512", "--budget", "2G",
                  "--overhead", "1G"],
                 [M("resnet50.onnx"), "--batch", "64", "--budget", "400M"],
                 [M("resnet50.onnx"), "--batch", "1", "--budget", "4M"],
                 # Unfused: with --fuse=auto (the default) it fits the L4 as is.
                 [M("gpt_like.onnx"), "--batch", "81", "--seq", "1024", "--device", "L4",
                  "--fuse=none", "--order=file"]):
        out.append(("fitted", args + ["--emit=json"]))
    return out


def headline_verdict(text):
    """True/False from a fitted run's first line, None without one."""
    first = text.splitlines()[0] if text else ""
    if not first.startswith("does not fit as is"):
        return None
    return "; fits with " in first


def check_fitted(chk, args):
    r = run(args)
    doc = load_json(chk, r, "fitted")
    if doc is None:
        return
    fit = doc.get("fit")
    if not chk.expect("fitted", isinstance(fit, dict),
                      "over budget without --no-fit, but no fit ran", r.args):
        return
    rc_fits = {0: True, 2: False}.get(r.rc)
    rep = doc.get("report") or {}
    for what, v in (("top-level fits", doc.get("fits")), ("report.fits", rep.get("fits")),
                    ("fit.fits", fit.get("fits"))):
        chk.expect("fitted", v == rc_fits, "exit code %d but %s is %s" % (r.rc, what, v),
                   r.args)
    over = fit.get("overhead_bytes", 0)
    chk.expect("fitted", (doc["total_bytes"] + over <= doc["budget_bytes"]) == rc_fits,
               "total %d + overhead %d vs budget %d, exit %d" % (
                   doc["total_bytes"], over, doc["budget_bytes"], r.rc), r.args)
    r_text = run(with_flag(args, "--emit", None))
    hv = headline_verdict(r_text.out)
    chk.expect("fitted", r_text.rc == r.rc and hv == rc_fits,
               "text exits %d with first line %r; JSON exits %d" % (
                   r_text.rc, (r_text.out.splitlines() or [""])[0], r.rc), r_text.args)
    path = "/tmp/check_consistency.%d.%d.json" % (os.getpid(), threading.get_ident())
    with open(path, "w") as f:
        f.write(r.out)
    checker = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "check_fitted_plan.py")
    p = subprocess.run([sys.executable, checker, path, "-q"], capture_output=True,
                       text=True)
    os.unlink(path)
    # When nothing fits, the smallest plan reached is over the budget: only
    # the budget check may fail, its placement and steps must still hold.
    fails = p.stdout.strip().splitlines()
    ok = p.returncode == 0 if rc_fits else all(
        l.startswith("FAIL budget") for l in fails)
    chk.expect("fitted", ok, "check_fitted_plan.py: %s" % p.stdout.strip()[:300],
               r.args)


def check_one(kind, args):
    chk = Check(kind, args)
    if kind == "fit":
        check_fit(chk, args)
        return chk
    if kind == "fitted":
        check_fitted(chk, args)
        return chk
    args = as_is(args)
    chk.args = args
    r = run(args)
    doc = load_json(chk, r, "verdict")
    if doc is None:
        return chk
    check_verdict(chk, args, doc, r)
    check_json_formulas(chk, doc, r.args)
    if kind == "max":
        check_capacity(chk, args, doc)
    elif r.rc == 2:
        check_remedies(chk, args, doc)
    return chk


def main():
    global BIN, MODELS, VERBOSE, VIA
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("oomplan", help="the built oomplan binary")
    ap.add_argument("--models", default=os.path.join(here, "..", "..", "test", "models"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", help="run combinations whose command contains this")
    ap.add_argument("--list", action="store_true", help="list the combinations")
    ap.add_argument("-v", action="store_true", help="print every command run")
    ap.add_argument("--via", choices=("commands", "cli"),
                    help="commands: one `oomplan --commands -` per job "
                         "(default); cli: one oomplan process per run "
                         "(default with --one)")
    ap.add_argument("--one", metavar="KIND -- ARGS",
                    help="check one combination (the rest of the line)")
    # "--one KIND -- ARGS...": everything after --one is the combination.
    argv, one = sys.argv[1:], None
    if "--one" in argv:
        i = argv.index("--one")
        argv, one = argv[:i], argv[i + 1:]
    opts = ap.parse_args(argv)
    opts.one = one
    BIN, MODELS, VERBOSE = os.path.abspath(opts.oomplan), os.path.abspath(opts.models), opts.v
    VIA = opts.via or ("cli" if opts.one else "commands")
    combos = grid()
    if opts.one:
        kind, rest = opts.one[0], opts.one[1:]
        if rest[:1] == ["--"]:
            rest = rest[1:]
        if kind not in ("report", "max", "fit", "fitted") or not rest:
            ap.error("--one report|max|fit|fitted -- MODEL ARGS...")
        combos = [(kind, rest)]
    if opts.only:
        combos = [c for c in combos if opts.only in command(c[1])]
    if opts.list:
        for kind, args in combos:
            print("%-6s %s" % (kind, command(args)))
        return 0
    with ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        checks = list(pool.map(lambda c: check_one(*c), combos))
    for p in _coprocs:
        p.stdin.close()
        p.wait()
    totals, failed = {}, {}
    nfail = 0
    for c in checks:
        for inv, n in c.checked.items():
            totals[inv] = totals.get(inv, 0) + n
        shown = {}
        for inv, msg, cmd in c.failures:
            failed[inv] = failed.get(inv, 0) + 1
            nfail += 1
            shown[inv] = shown.get(inv, 0) + 1
            if shown[inv] <= 3:
                print("FAIL %s: %s\n  command: %s" % (inv, msg, cmd))
        for inv, n in sorted(shown.items()):
            if n > 3:
                print("  ... and %d more %s failures in: %s" % (n - 3, inv, command(c.args)))
    print("consistency: %d combinations, %d oomplan runs; %s" % (
        len(combos), _runs[0], ", ".join(
            "%s %d/%d hold" % (inv, totals[inv] - failed.get(inv, 0), totals[inv])
            for inv in sorted(totals))))
    print("consistency: %s" % ("all invariants hold" if nfail == 0 else
                               "%d failures" % nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
