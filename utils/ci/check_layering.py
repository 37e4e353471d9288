#!/usr/bin/env python3
"""Fail when a library depends on a layer its row in docs/architecture.md does not allow.

Usage: check_layering.py [SOURCE_ROOT]

The libraries under lib/ are layers, lowest first, listed once: the table after the
`<!-- layers: ... -->` marker in docs/architecture.md. Each row names a layer and, in its last
column, what it may use: "all above" (every earlier row), "nothing", or a list of layers and
single headers (`oomplan/Placement/BufferRequest.h`). A layer may always use itself. Checks, all
over the source tree, so they need no build:

  0. the table: every folder under lib/ and include/oomplan/ is a row, every row is a folder
     of lib/, a row names only layers below it, and lib/CMakeLists.txt adds the folders in
     the table's order;
  1. includes: every `#include "oomplan/<Layer>/..."` in lib/<Layer>/ and
     include/oomplan/<Layer>/ names a layer (or header) the including layer may use.
     `oomplan/oomplan.h`, the public entry point, belongs to Driver;
  2. links: every oomplan* target in `target_link_libraries` of a lib/**/CMakeLists.txt
     belongs to a layer the target's own may use.

Prints one line per violation and exits 1 if there is any.
"""
import os
import re
import sys

TABLE_MARK = "<!-- layers:"
ROW_RE = re.compile(r"^\|\s*`(\w+)`\s*\|(.*)\|\s*$")
CMAKE_ORDER_RE = re.compile(r"^\s*foreach\s*\(\s*layer\s+([^)]*)\)", re.M)
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*[<"](oomplan/[^">]+)[">]', re.M)
LINK_RE = re.compile(r"target_link_libraries\s*\(([^)]*)\)", re.S)
# Every library target under lib/<Layer> belongs to that layer: the layer
# libraries, and the CAPI layer's shared library and Python module.
ADD_LIB_RE = re.compile(
    r"(?:oomplan_add_library|add_library|pybind11_add_module)\s*\(\s*(\w+)")
SOURCE_EXT = (".h", ".hpp", ".cpp", ".cc", ".inc", ".def")


def header_layer(path):
    """Layer of an included path such as oomplan/IR/Graph.h."""
    parts = path.split("/")
    if len(parts) == 2:  # oomplan/oomplan.h: the driver's public API.
        return "Driver"
    return parts[1]


# Filled from docs/architecture.md by main(): the layers lowest first, each
# one's rank, and what each may use (None: every layer below it).
LAYERS, RANK, USES = [], {}, {}


def read_layers(root, errors):
    """[(layer, uses)] from docs/architecture.md, lowest first. uses is None
    for "all above", else (set of layers, set of headers)."""
    path = os.path.join(root, "docs", "architecture.md")
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
    except OSError as e:
        errors.append("cannot read %s: %s" % (path, e))
        return []
    start = next((i for i, l in enumerate(lines) if l.startswith(TABLE_MARK)), None)
    if start is None:
        errors.append("docs/architecture.md: no '%s' marker before the layer table" % TABLE_MARK)
        return []
    rows = []
    for line in lines[start + 1:]:
        if not line.startswith("|"):
            break
        m = ROW_RE.match(line)
        if not m:
            continue  # the header and the separator
        use = m.group(2).split("|")[-1].strip()
        if use == "all above":
            uses = None
        elif use == "nothing":
            uses = (set(), set())
        else:
            names = [w.strip().strip("`") for w in use.split(",")]
            uses = ({n for n in names if "/" not in n}, {n for n in names if "/" in n})
        rows.append((m.group(1), uses))
    if not rows:
        errors.append("docs/architecture.md: the layer table after '%s' has no rows" % TABLE_MARK)
    return rows


def header_layer(path):
    """Layer of an included path such as oomplan/IR/Graph.h."""
    parts = path.split("/")
    if len(parts) == 2:  # oomplan/oomplan.h: the driver's public API.
        return "Driver"
    return parts[1]


def allowed(user, used, header):
    if used == user:
        return True
    uses = USES[user]
    if uses is None:
        return RANK[used] < RANK[user]
    layers, headers = uses
    return used in layers or header in headers


def check_table(root, errors):
    """Every folder is a row, every row a folder, and CMake adds them in order."""
    for layer, folder in layer_dirs(root):
        if layer not in RANK:
            errors.append("%s: '%s' is not in the layer table of docs/architecture.md"
                          % (os.path.relpath(folder, root), layer))
    lib = os.path.join(root, "lib")
    folders = {n for n in os.listdir(lib) if os.path.isdir(os.path.join(lib, n))}
    for layer in LAYERS:
        if layer not in folders:
            errors.append("docs/architecture.md: layer '%s' has no folder lib/%s" % (layer, layer))
        for used in (USES[layer][0] if USES[layer] else ()):
            if used not in RANK:
                errors.append("docs/architecture.md: %s may use '%s', which is not a layer"
                              % (layer, used))
            elif RANK[used] >= RANK[layer]:
                errors.append("docs/architecture.md: %s may use %s, which is not below it"
                              % (layer, used))
    with open(os.path.join(lib, "CMakeLists.txt"), encoding="utf-8") as fh:
        m = CMAKE_ORDER_RE.search(fh.read())
    if not m:
        errors.append("lib/CMakeLists.txt: no 'foreach(layer ...)' listing the layers")
    elif m.group(1).split() != LAYERS:
        errors.append("lib/CMakeLists.txt: adds the layers in the order %s; docs/architecture.md's "
                      "table says %s" % (", ".join(m.group(1).split()), ", ".join(LAYERS)))


def layer_dirs(root):
    """(layer, folder) for every folder under lib/ and include/oomplan/."""
    for base in ("lib", os.path.join("include", "oomplan")):
        top = os.path.join(root, base)
        if not os.path.isdir(top):
            continue
        for name in sorted(os.listdir(top)):
            if os.path.isdir(os.path.join(top, name)):
                yield name, os.path.join(top, name)


def check_includes(root, errors):
    for layer, folder in layer_dirs(root):
        if layer not in RANK:
            continue  # check_table names it
        for dirpath, _, files in sorted(os.walk(folder)):
            for f in sorted(files):
                if not f.endswith(SOURCE_EXT):
                    continue
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                for m in INCLUDE_RE.finditer(text):
                    header = m.group(1)
                    used = header_layer(header)
                    line = text.count("\n", 0, m.start()) + 1
                    where = "%s:%d" % (os.path.relpath(path, root), line)
                    if used not in RANK:
                        errors.append("%s: includes %s from unknown layer '%s'"
                                      % (where, header, used))
                    elif not allowed(layer, used, header):
                        errors.append("%s: %s (layer %s) includes %s (layer "
                                      "%s), which it may not use" %
                                      (where, layer, layer, header, used))


def check_links(root, errors):
    lib = os.path.join(root, "lib")
    target_layer, links = {}, []
    for dirpath, _, files in sorted(os.walk(lib)):
        if "CMakeLists.txt" not in files or dirpath == lib:
            continue
        layer = os.path.relpath(dirpath, lib).split(os.sep)[0]
        path = os.path.join(dirpath, "CMakeLists.txt")
        with open(path, encoding="utf-8") as fh:
            text = re.sub(r"#[^\n]*", "", fh.read())
        for m in ADD_LIB_RE.finditer(text):
            target_layer[m.group(1)] = layer
        for m in LINK_RE.finditer(text):
            words = m.group(1).split()
            links.append((os.path.relpath(path, root), words[0], words[1:]))
    for path, target, deps in links:
        user = target_layer.get(target)
        if user not in RANK:
            errors.append("%s: target %s is not in a known layer" % (path, target))
            continue
        for dep in deps:
            if not dep.startswith("oomplan"):
                continue  # PUBLIC/PRIVATE keywords and external libraries.
            used = target_layer.get(dep)
            if used is None:
                errors.append("%s: %s links unknown target %s" % (path, target, dep))
            elif used in RANK and not allowed(user, used, None):
                errors.append("%s: %s (layer %s) links %s (layer %s), which "
                              "it may not use" % (path, target, user, dep, used))


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    errors = []
    rows = read_layers(root, errors)
    LAYERS[:] = [layer for layer, _ in rows]
    RANK.update({name: i for i, name in enumerate(LAYERS)})
    USES.update(rows)
    if rows:
        check_table(root, errors)
        check_includes(root, errors)
        check_links(root, errors)
    for e in errors:
        print("layering: " + e)
    if errors:
        print("layering: %d violation(s); layers, lowest first (docs/architecture.md): %s" %
              (len(errors), ", ".join(LAYERS)))
        return 1
    print("layering: ok (%s)" % ", ".join(LAYERS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
