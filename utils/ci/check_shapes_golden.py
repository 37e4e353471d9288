#!/usr/bin/python3
"""Checks `oomplan --emit=shapes` against shapes observed in a real run of the model.

What: reads the `--emit=shapes` listing on standard input and a golden file of run-time shapes
(test/models/runtime-shapes/*.txt, written by utils/check/compare_shapes_with_runtime.py from an
ONNX Runtime run), evaluates our dims and bytes formulas at the golden file's bindings and
reports every value whose element type, dims or bytes differ, then a summary line
`values compared: N, mismatches: M`. Exit status 1 on any mismatch (or a value missing from the
listing), 0 otherwise. Only the standard library is needed, so lit can run it without npm:

    oomplan test/models/bert_like.onnx --dim batch=8 --dim seq=128 --emit=shapes \
      | /usr/bin/python3 utils/ci/check_shapes_golden.py test/models/runtime-shapes/bert_like.txt

Golden file format (one value a line, '#' lines are comments):

    bindings batch=8 seq=128
    <dtype> [<d0>, <d1>, ...] [values=[<v0>, ...]] <value name>

`values=[...]` (small integer tensors) are the run's contents; where oomplan tracks the same
value's contents (shape tensors, `values=[...]` in its listing) they must be equal.

How: each `--emit=shapes` line `KIND NAME: TYPE[DIMS] bytes=FORMULA [= N] [(upper bound)]
[values=[...]]` is parsed; DIMS and FORMULA are oomplan's printed SymExprs (`+ - *`, `^`,
`floor(a/b)`, `mod(a, b)`, `min(...)`, `max(...)`, Python floor semantics), evaluated here by a
small recursive-descent parser; the `= N` oomplan printed must equal the formula's value here
(so the listing must come from the same bindings). Runtime bytes are ceil(elements * bits / 8).
A value whose dims are an upper bound (data-dependent size) matches when every runtime dim is
within the bound; it is counted as bounded, not exact. The comparison functions are shared with
utils/check/compare_shapes_with_runtime.py.
"""
import re
import sys

# Bits per element, by the element type names oomplan prints.
BITS = {
    "float": 32, "double": 64, "float16": 16, "bfloat16": 16,
    "int8": 8, "uint8": 8, "int16": 16, "uint16": 16, "int32": 32, "uint32": 32,
    "int64": 64, "uint64": 64, "bool": 8, "complex64": 64, "complex128": 128,
}

LINE_RE = re.compile(r"^(input|weight|output|value) (.*): (?:unknown|(\w+)\[(.*?)\] bytes=(.*))$")
TOKEN_RE = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_.:]*)|(.))")


class ExprError(Exception):
    pass


class _Parser:
    """Evaluates one printed SymExpr under integer bindings."""

    def __init__(self, text, bindings):
        self.toks = []
        for num, name, op in TOKEN_RE.findall(text):
            if num:
                self.toks.append(("num", int(num)))
            elif name:
                self.toks.append(("name", name))
            elif op.strip():
                self.toks.append(("op", op))
        self.pos = 0
        self.text = text
        self.bindings = bindings

    def peek(self):
        return self.toks[self.pos] if self.pos < len(self.toks) else ("end", None)

    def take(self, op=None):
        tok = self.peek()
        if op is not None and tok != ("op", op):
            raise ExprError(f"expected '{op}' in '{self.text}'")
        self.pos += 1
        return tok

    def parse(self):
        v = self.expr()
        if self.peek()[0] != "end":
            raise ExprError(f"trailing text in '{self.text}'")
        return v

    def expr(self):
        # sum of terms
        v = self.term()
        while self.peek() in (("op", "+"), ("op", "-")):
            op = self.take()[1]
            t = self.term()
            v = v + t if op == "+" else v - t
        return v

    def term(self):
        sign = 1
        if self.peek() == ("op", "-"):
            self.take()
            sign = -1
        v = self.power()
        while self.peek() == ("op", "*"):
            self.take()
            v *= self.power()
        return sign * v

    def power(self):
        v = self.primary()
        if self.peek() == ("op", "^"):
            self.take()
            kind, e = self.take()
            if kind != "num":
                raise ExprError(f"bad exponent in '{self.text}'")
            v = v ** e
        return v

    def primary(self):
        kind, val = self.take()
        if kind == "num":
            return val
        if kind == "op" and val == "(":
            v = self.expr()
            self.take(")")
            return v
        if kind != "name":
            raise ExprError(f"unexpected '{val}' in '{self.text}'")
        if self.peek() == ("op", "(") and val in ("floor", "ceil", "mod", "min", "max"):
            self.take("(")
            if val in ("floor", "ceil"):
                a = self.expr()
                self.take("/")
                b = self.expr()
                self.take(")")
                if b == 0:
                    raise ExprError(f"division by zero in '{self.text}'")
                return a // b if val == "floor" else -((-a) // b)
            args = [self.expr()]
            while self.peek() == ("op", ","):
                self.take()
                args.append(self.expr())
            self.take(")")
            if val == "mod":
                if len(args) != 2 or args[1] == 0:
                    raise ExprError(f"bad mod in '{self.text}'")
                return args[0] % args[1]
            return min(args) if val == "min" else max(args)
        if val not in self.bindings:
            raise ExprError(f"unbound symbol '{val}' in '{self.text}'")
        return self.bindings[val]


def eval_expr(text, bindings):
    """The integer value of oomplan's printed expression `text` under `bindings`."""
    return _Parser(text, bindings).parse()


def split_top(text):
    """Splits 'a, min(b, c), d' at the commas outside parentheses."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    last = "".join(cur).strip()
    if last or parts:
        parts.append(last)
    return parts


def parse_emit_shapes(text):
    """{name: dict(kind, dtype, dims (list of str), bytes (str), upper_bound, known)}."""
    values = {}
    for line in text.splitlines():
        m = LINE_RE.match(line)
        if not m:
            continue
        kind, name, dtype, dims, rest = m.groups()
        if dtype is None:
            values[name] = {"kind": kind, "known": False}
            continue
        upper, contents = False, None
        i = rest.find(" values=[")
        if i >= 0:
            contents = split_top(rest[i + len(" values=["):].rstrip()[:-1])
            rest = rest[:i]
        if rest.endswith(" (upper bound)"):
            upper = True
            rest = rest[: -len(" (upper bound)")]
        formula, _, printed = rest.partition(" = ")
        printed = int(printed) if printed.lstrip("-").isdigit() else None
        values[name] = {"kind": kind, "known": True, "dtype": dtype, "dims": split_top(dims),
                        "bytes": formula, "upper_bound": upper, "values": contents,
                        "printed_bytes": printed}
    return values


def runtime_bytes(dtype, dims):
    n = 1
    for d in dims:
        n *= d
    return -((-n * BITS[dtype]) // 8)


def compare(ours, observed, bindings, stats=None):
    """Compares parsed --emit=shapes (`ours`) with observed [(name, dtype, dims, values)].

    `values` is the run's contents of a small tensor or None; when oomplan tracks that value's
    contents too (values=[...]), they must be equal. Returns (mismatch messages, number
    compared, number of upper-bound values); stats["contents"] counts contents compared."""
    mismatches, bounded = [], 0
    if stats is None:
        stats = {}
    stats.setdefault("contents", 0)
    for name, dtype, dims, rt_values in observed:
        rt = f"{dtype}{list(dims)}"
        v = ours.get(name)
        if v is None:
            mismatches.append(f"{name}: not in oomplan's output; runtime {rt}")
            continue
        if not v["known"]:
            mismatches.append(f"{name}: oomplan says unknown; runtime {rt}")
            continue
        try:
            our_dims = [eval_expr(d, bindings) for d in v["dims"]]
            our_bytes = eval_expr(v["bytes"], bindings)
        except ExprError as e:
            mismatches.append(f"{name}: cannot evaluate oomplan's shape: {e}")
            continue
        ours_txt = f"{v['dtype']}[{', '.join(v['dims'])}] = {v['dtype']}{our_dims}"
        problems = []
        if v["dtype"] != dtype:
            problems.append("element type")
        if v["upper_bound"]:
            bounded += 1
            if len(our_dims) != len(dims) or any(r > o for r, o in zip(dims, our_dims)):
                problems.append("dims exceed the upper bound")
        else:
            if our_dims != list(dims):
                problems.append("dims")
            elif dtype in BITS and our_bytes != runtime_bytes(dtype, dims):
                problems.append(f"bytes ({our_bytes} vs {runtime_bytes(dtype, dims)})")
        if v["printed_bytes"] is not None and v["printed_bytes"] != our_bytes:
            problems.append(f"printed bytes {v['printed_bytes']} (other bindings?)")
        if not problems and rt_values is not None and v["values"] is not None \
                and not v["upper_bound"]:
            try:
                our_values = [eval_expr(x, bindings) for x in v["values"]]
            except ExprError as e:
                our_values = None
                problems.append(f"contents cannot be evaluated: {e}")
            if our_values is not None:
                stats["contents"] += 1
                if [float(x) for x in our_values] != [float(x) for x in rt_values]:
                    problems.append(f"contents: oomplan values=[{', '.join(v['values'])}] = "
                                    f"{our_values}; runtime {list(rt_values)}")
        if problems:
            mismatches.append(f"{name}: {', '.join(problems)}: oomplan {ours_txt} bytes={v['bytes']}"
                              f" = {our_bytes}; runtime {rt} bytes={runtime_bytes(dtype, dims)}")
    return mismatches, len(observed), bounded


def read_golden(path):
    """(bindings, [(name, dtype, dims)]) from a golden file."""
    bindings, observed = {}, []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            if line.startswith("bindings"):
                for item in line.split()[1:]:
                    k, v = item.split("=")
                    bindings[k] = int(v)
                continue
            m = re.match(r"^(\w+) \[([0-9, ]*)\] (?:values=\[([-0-9, ]*)\] )?(.*)$", line)
            if not m:
                raise SystemExit(f"{path}:{lineno}: bad line: {line}")
            dims = [int(d) for d in m.group(2).split(",") if d.strip()]
            contents = None
            if m.group(3) is not None:
                contents = [int(x) for x in m.group(3).split(",") if x.strip()]
            observed.append((m.group(4), m.group(1), dims, contents))
    return bindings, observed


def write_golden(path, header_lines, bindings, observed):
    with open(path, "w") as f:
        for h in header_lines:
            f.write(f"# {h}\n" if h else "#\n")
        f.write("bindings " + " ".join(f"{k}={v}" for k, v in bindings.items()) + "\n")
        for name, dtype, dims, contents in observed:
            vals = ""
            if contents is not None and dtype.startswith(("int", "uint")):
                vals = f"values=[{', '.join(str(int(x)) for x in contents)}] "
            f.write(f"{dtype} [{', '.join(str(d) for d in dims)}] {vals}{name}\n")


def report(label, mismatches, compared, bounded, stats=None, out=sys.stdout):
    for m in mismatches:
        print(f"mismatch: {m}", file=out)
    extra = f" (upper bounds: {bounded})" if bounded else ""
    if stats and stats.get("contents"):
        extra += f" (shape-tensor contents compared: {stats['contents']})"
    print(f"{label}values compared: {compared}, mismatches: {len(mismatches)}{extra}", file=out)


def main(argv):
    if len(argv) != 2 or argv[1].startswith("-"):
        print("usage: oomplan MODEL --dim ... --emit=shapes | check_shapes_golden.py GOLDEN",
              file=sys.stderr)
        return 2
    bindings, observed = read_golden(argv[1])
    ours = parse_emit_shapes(sys.stdin.read())
    if not ours:
        print("error: no --emit=shapes lines on standard input", file=sys.stderr)
        return 1
    stats = {}
    mismatches, compared, bounded = compare(ours, observed, bindings, stats)
    report("", mismatches, compared, bounded, stats)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
