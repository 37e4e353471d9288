#!/usr/bin/env python3
"""Fail when a library depends on a layer above it (issue 10, item 9).

Usage: check_layering.py [SOURCE_ROOT]

The libraries under lib/ are layers, lowest first (LAYERS below). A layer may
use only the layers below it and itself. Two checks, both over the source
tree, so they need no build:

  1. includes: every `#include "oomplan/<Layer>/..."` in lib/<Layer>/ and
     include/oomplan/<Layer>/ names a layer at or below the including one.
     `oomplan/oomplan.h`, the public entry point, belongs to Driver.
  2. links: every oomplan* target in `target_link_libraries` of a
     lib/**/CMakeLists.txt belongs to a layer at or below the target's own.

The placement algorithms (Planner) and their checker (Verify) take a flat
list of buffers and know nothing of the IR: they may use only Support, and
Verify may read Planner's BufferRequest.h (the shared input type) but not the
algorithms. A folder under lib/ or include/oomplan/ that is not a known layer
is an error too, so a new library must be placed in the order. Prints one
line per violation and exits 1 if there is any.
"""
import os
import re
import sys

LAYERS = ["Support", "IR", "Frontend", "Analysis", "Schedule", "Transforms",
          "Cost", "Fit", "Planner", "Verify", "Plan", "Report", "Parallel", "Serve",
          "Runtime",
          "Driver", "CAPI", "Python"]
RANK = {name: i for i, name in enumerate(LAYERS)}
# Layers with a narrower allowance than "everything below": layer -> the
# layers it may use, and single headers it may include from other layers.
RESTRICTED = {
    "Planner": ({"Support", "Planner"}, set()),
    "Verify": ({"Support", "Verify"}, {"oomplan/Planner/BufferRequest.h"}),
}
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


def allowed(user, used, header):
    if user in RESTRICTED:
        layers, headers = RESTRICTED[user]
        return used in layers or header in headers
    return RANK[used] <= RANK[user]


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
            errors.append("%s: '%s' is not a known layer; add it to LAYERS "
                          "in utils/check_layering.py" %
                          (os.path.relpath(folder, root), layer))
            continue
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
                           os.path.join(os.path.dirname(__file__), ".."))
    errors = []
    check_includes(root, errors)
    check_links(root, errors)
    for e in errors:
        print("layering: " + e)
    if errors:
        print("layering: %d violation(s); layers, lowest first: %s" %
              (len(errors), ", ".join(LAYERS)))
        return 1
    print("layering: ok (%s)" % ", ".join(LAYERS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
