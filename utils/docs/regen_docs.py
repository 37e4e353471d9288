#!/usr/bin/env python3
"""Keep the documentation's oomplan output true: regenerate or check every marked block.

Usage:
  regen_docs.py --build BUILD_DIR --check      # exit 1 with a diff when a block is stale
  regen_docs.py --build BUILD_DIR --update     # rewrite the stale blocks in place
  regen_docs.py --build BUILD_DIR --options    # every --option of --help is documented

A block is a fenced block in README.md or docs/*.md right after a marker line:

  <!-- oomplan-doc: oomplan test/models/gpt_like.onnx --batch 8 --seq 512 | head 20 -->

The part before the first " | FILTER" is the command, run from the repository root with the tool
(oomplan, oomplan-run, oomplan-bench, oomplan-shapes-bench) taken from BUILD_DIR/tools/<tool>/;
it is split as a shell splits words, but no shell runs it. The block shows "$ COMMAND" and
what the command printed on standard output and standard error, merged. Filters, applied in
order after the command:

  head N        the first N lines, then "..." when there were more
  keep REGEX    only the lines matching REGEX; each run of dropped lines becomes "..."
  drop REGEX    remove the lines matching REGEX (a timing, say)
  join          the lines joined by ", ", wrapped at 100 columns
  nocmd         no "$ COMMAND" line

Lines that report a wall-clock time ("chosen in 2.98 s") are always dropped, so that a block
depends only on the binary. A fenced block whose first line starts with "$ oomplan" but has no
marker is an error: every block that shows oomplan's output is generated. A command that needs
a backend the build lacks ("is not available in this build") is skipped, and said so.

--options checks that every option `oomplan --help` prints appears in docs/cli.md, and every
option of `oomplan-run --help` in docs/cli.md or docs/runtime.md.
"""
import argparse
import difflib
import glob
import os
import re
import shlex
import subprocess
import sys
import textwrap

MARK_RE = re.compile(r"^<!-- oomplan-doc: (.*?) -->\s*$")
TOOLS = ("oomplan", "oomplan-run", "oomplan-bench", "oomplan-shapes-bench")
TIMING_RE = re.compile(r"\bchosen in [0-9.]+ s$")
UNAVAILABLE = "is not available in this build"
FILTER_SPLIT_RE = re.compile(r" \| (?=(?:head|keep|drop|join|nocmd)\b)")
OPTION_RE = re.compile(r"^\s+(--[A-Za-z0-9][A-Za-z0-9-]*)", re.M)


def doc_files(root):
    return [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))


def find_blocks(path, lines, errors):
    """[(marker_index, open_index, close_index, spec)] for each marked block."""
    blocks = []
    i = 0
    while i < len(lines):
        m = MARK_RE.match(lines[i])
        if m:
            j = i + 1
            if j >= len(lines) or not lines[j].startswith("```"):
                errors.append("%s:%d: oomplan-doc marker not followed by a fenced block" % (path, i + 1))
                i += 1
                continue
            k = j + 1
            while k < len(lines) and not lines[k].startswith("```"):
                k += 1
            if k >= len(lines):
                errors.append("%s:%d: fenced block not closed" % (path, j + 1))
                return blocks
            blocks.append((i, j, k, m.group(1)))
            i = k + 1
            continue
        if lines[i].startswith("```"):
            k = i + 1
            while k < len(lines) and not lines[k].startswith("```"):
                k += 1
            if i + 1 < len(lines) and re.match(r"\$ oomplan", lines[i + 1]):
                errors.append("%s:%d: a block of oomplan output without an oomplan-doc marker"
                              % (path, i + 1))
            i = k + 1
            continue
        i += 1
    return blocks


def run_command(root, build, command):
    """(output lines, skipped reason or None)."""
    argv = shlex.split(command)
    if not argv or argv[0] not in TOOLS:
        raise ValueError("the command must start with one of %s: %s" % (", ".join(TOOLS), command))
    tool = os.path.join(build, "tools", argv[0], argv[0])
    if not os.access(tool, os.X_OK):
        raise ValueError("no %s in %s" % (argv[0], build))
    env = dict(os.environ, LC_ALL="C")
    p = subprocess.run([tool] + argv[1:], cwd=root, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=300)
    text = p.stdout.decode("utf-8", "replace")
    if p.returncode < 0:
        raise ValueError("%s: killed by signal %d" % (command, -p.returncode))
    if p.returncode != 0 and UNAVAILABLE in text:
        return None, text.strip().splitlines()[-1]
    lines = [l.rstrip() for l in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return [l for l in lines if not TIMING_RE.search(l)], None


def apply_filters(command, lines, filters):
    show_cmd = True
    for f in filters:
        name, _, arg = f.partition(" ")
        arg = arg.strip()
        if name == "head":
            n = int(arg)
            lines = lines[:n] + (["..."] if len(lines) > n else [])
        elif name in ("keep", "drop"):
            try:
                rx = re.compile(arg)
            except re.error as e:
                raise ValueError("bad regex in '%s': %s" % (f, e))
            out, gap = [], False
            for line in lines:
                if bool(rx.search(line)) == (name == "keep"):
                    if gap and name == "keep":
                        out.append("...")
                    out.append(line)
                    gap = False
                else:
                    gap = True
            if gap and name == "keep":
                out.append("...")
            lines = out
        elif name == "join":
            lines = textwrap.wrap(", ".join(l.strip() for l in lines if l.strip()), 100,
                                  break_on_hyphens=False)
        elif name == "nocmd":
            show_cmd = False
        else:
            raise ValueError("unknown filter '%s' in: %s" % (name, command))
    return (["$ " + command] if show_cmd else []) + lines


def generate(root, build, spec):
    parts = FILTER_SPLIT_RE.split(spec)
    command, filters = parts[0].strip(), [p.strip() for p in parts[1:]]
    lines, skipped = run_command(root, build, command)
    if skipped:
        return None, skipped
    return apply_filters(command, lines, filters), None


def check_options(root, build):
    """Every --option of each tool's --help appears in its docs pages."""
    pages = {"oomplan": ["docs/cli.md"], "oomplan-run": ["docs/cli.md", "docs/runtime.md"]}
    missing = []
    for tool, docs in pages.items():
        exe = os.path.join(build, "tools", tool, tool)
        out = subprocess.run([exe, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             timeout=60).stdout.decode("utf-8", "replace")
        options = sorted(set(OPTION_RE.findall(out)))
        if not options:
            missing.append("%s --help printed no options" % tool)
        text = "".join(open(os.path.join(root, d), encoding="utf-8").read() for d in docs)
        for opt in options:
            if not re.search(re.escape(opt) + r"(?![A-Za-z0-9-])", text):
                missing.append("%s %s is not in %s" % (tool, opt, " or ".join(docs)))
        print("docs: %s: %d options of --help, %d documented" %
              (tool, len(options), len(options) - sum(1 for m in missing if m.startswith(tool + " "))))
    for m in missing:
        print("docs: " + m)
    return 1 if missing else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="build folder with tools/<tool>/<tool>")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--update", action="store_true")
    mode.add_argument("--options", action="store_true")
    ap.add_argument("files", nargs="*", help="only these files (default README.md and docs/*.md)")
    args = ap.parse_args()
    root, build = os.path.abspath(args.root), os.path.abspath(args.build)
    if args.options:
        return check_options(root, build)
    errors, stale, total, skipped = [], 0, 0, 0
    for path in [os.path.abspath(f) for f in args.files] or doc_files(root):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        blocks = find_blocks(rel, lines, errors)
        changed = False
        for mark, start, end, spec in reversed(blocks):
            total += 1
            try:
                new, why = generate(root, build, spec)
            except (ValueError, subprocess.TimeoutExpired) as e:
                errors.append("%s:%d: %s" % (rel, mark + 1, e))
                continue
            if new is None:
                skipped += 1
                print("docs: %s:%d: skipped (%s)" % (rel, mark + 1, why))
                continue
            old = lines[start + 1:end]
            if old == new:
                continue
            stale += 1
            if args.update:
                lines[start + 1:end] = new
                changed = True
                print("docs: %s:%d: regenerated" % (rel, mark + 1))
            else:
                sys.stdout.writelines(difflib.unified_diff(
                    [l + "\n" for l in old], [l + "\n" for l in new],
                    "%s:%d (in the doc)" % (rel, start + 2), "(%s now)" % spec))
        if changed:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write("\n".join(lines))
    for e in errors:
        print("docs: error: " + e)
    verb = "regenerated" if args.update else "stale"
    print("docs: %d marked blocks, %d %s, %d skipped, %d errors" % (total, stale, verb, skipped, len(errors)))
    if stale and args.check:
        print("docs: run utils/docs/regen_docs.py --build %s --update and review the diff" % args.build)
    return 1 if errors or (stale and args.check) else 0


if __name__ == "__main__":
    sys.exit(main())
