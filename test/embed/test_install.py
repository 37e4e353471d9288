"""The installed package (ctest embed.install): `cmake --install` to a
temporary prefix, then, against that prefix only, the C, C++ and Python
programs of docs/embedding.md and both examples are built and run, and their
numbers compared with the installed CLI's JSON. Environment: OOMPLAN_SOURCE_DIR,
OOMPLAN_BINARY_DIR (test/embed/CMakeLists.txt).
"""
import json
import os
import re
import shutil
import subprocess
import tempfile

import pytest

SRC = os.environ["OOMPLAN_SOURCE_DIR"]
BIN = os.environ["OOMPLAN_BINARY_DIR"]
MODELS = os.path.join(SRC, "test", "models")
GPT = os.path.join(MODELS, "gpt_like.onnx")
TMP = tempfile.mkdtemp(prefix="oomplan-install-")
P = os.path.join(TMP, "prefix")
# Nothing from the build tree: the programs see only the prefix.
ENV = dict(os.environ, PKG_CONFIG_PATH=os.path.join(P, "lib", "pkgconfig"),
           LD_LIBRARY_PATH=os.path.join(P, "lib"))
for k in ("PYTHONPATH", "OOMPLAN_CLI"):
    ENV.pop(k, None)


def ok(cmd, env=ENV, codes=(0,), cwd=None):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                       timeout=280, cwd=cwd)
    assert p.returncode in codes, "%s\n%s%s" % (" ".join(cmd), p.stdout,
                                                p.stderr)
    return p


@pytest.fixture(scope="module", autouse=True)
def installed():
    ok(["cmake", "--install", BIN, "--prefix", P])
    yield
    shutil.rmtree(TMP, ignore_errors=True)


def cli_json(*args):
    p = ok([os.path.join(P, "bin", "oomplan")] + list(args) +
           ["--emit=json"], codes=(0, 2))
    return json.loads(p.stdout)


def doc_block(lang, index=0):
    """The INDEX-th ```LANG block of docs/embedding.md (the first: 0)."""
    text = open(os.path.join(SRC, "docs", "embedding.md")).read()
    blocks = re.findall(r"```%s\n(.*?)```" % re.escape(lang), text, re.S)
    assert len(blocks) > index, lang
    return blocks[index]


def pkg(*args):
    return ok(["pkg-config"] + list(args) + ["oomplan"]).stdout.split()


def test_layout():
    for f in ["bin/oomplan", "include/oomplan-c/oomplan.h",
              "include/oomplan/oomplan.h", "include/oomplan/CAPI/Arguments.h",
              "lib/liboomplan.so", "lib/liboomplan.a",
              "lib/cmake/oomplan/oomplanConfig.cmake",
              "lib/cmake/oomplan/oomplanTargets.cmake",
              "lib/pkgconfig/oomplan.pc",
              "lib/python3/dist-packages/oomplan/__init__.py"]:
        assert os.path.exists(os.path.join(P, f)), f


def doc_numbers(out):
    m = re.search(r"fits=(\d) total_bytes=(\d+)", out)
    assert m, out
    return int(m.group(1)), int(m.group(2))


# docs/embedding.md's programs plan GPT at batch 8, seq 1024, budget 24G.
def expected():
    doc = cli_json(GPT, "--batch=8", "--seq=1024", "--budget=24G")
    return int(doc["fits"]), doc["total_bytes"]


def test_doc_c_program_with_pkg_config():
    """The issue's bar: a ten-line C program built with `pkg-config
    --cflags --libs oomplan` prints the CLI's total_bytes."""
    src = os.path.join(TMP, "plan.c")
    open(src, "w").write(doc_block("c"))
    exe = os.path.join(TMP, "plan-c")
    ok(["cc", "-std=c99", "-Wall", "-Werror", "-o", exe, src] +
       pkg("--cflags", "--libs"))
    assert doc_numbers(ok([exe, GPT]).stdout) == expected()
    # No model: an error message, exit 1, no crash.
    p = ok([exe], codes=(1,))
    assert "no model" in p.stderr


def test_doc_c_program_linked_statically():
    """liboomplan.a and pkg-config's private libraries link the same program
    with no oomplan shared library."""
    src = os.path.join(TMP, "plan.c")
    open(src, "w").write(doc_block("c"))
    obj, exe = os.path.join(TMP, "plan.o"), os.path.join(TMP, "plan-static")
    ok(["cc", "-c", "-o", obj, src] + pkg("--cflags"))
    libs = [f for f in pkg("--static", "--libs") if f != "-loomplan"]
    ok(["c++", "-o", exe, obj, os.path.join(P, "lib", "liboomplan.a")] + libs)
    needed = ok(["readelf", "-d", exe]).stdout
    assert "liboomplan" not in needed
    assert doc_numbers(ok([exe, GPT]).stdout) == expected()


def test_doc_cpp_program():
    src = os.path.join(TMP, "plan.cpp")
    open(src, "w").write(doc_block("cpp"))
    exe = os.path.join(TMP, "plan-cpp")
    ok(["c++", "-std=c++17", "-Wall", "-Werror", "-o", exe, src] +
       pkg("--cflags", "--libs"))
    assert doc_numbers(ok([exe, GPT]).stdout) == expected()


def test_doc_execute_programs():
    """The page's execute() programs in C++ and Python, on the model whose
    values its text works out: y = 5 11 15 22, every region's high-water
    its planned bytes."""
    run_dir = os.path.join(SRC, "test", "lit", "run")
    src = os.path.join(TMP, "execute.cpp")
    open(src, "w").write(doc_block("cpp", 1))
    exe = os.path.join(TMP, "execute-cpp")
    ok(["c++", "-std=c++17", "-Wall", "-Werror", "-o", exe, src] +
       pkg("--cflags", "--libs"))
    out = ok([exe, os.path.join(run_dir, "relu-add.onnxtxt")]).stdout
    assert "weights planned 768 high-water 768\n" in out
    assert "y = 5 11 15 22\n" in out
    src = os.path.join(TMP, "execute.py")
    open(src, "w").write(doc_block("python", 1))
    env = dict(ENV, PYTHONPATH=os.path.join(P, "lib", "python3",
                                            "dist-packages"))
    env.pop("LD_LIBRARY_PATH")
    out = ok(["/usr/bin/python3", src], env=env, cwd=run_dir).stdout
    assert out == "(5.0, 11.0, 15.0, 22.0)\n516\n"


def test_doc_python_program():
    """The installed module, found through PYTHONPATH only (its rpath finds
    liboomplan.so)."""
    src = os.path.join(TMP, "plan.py")
    open(src, "w").write(doc_block("python"))
    env = dict(ENV, PYTHONPATH=os.path.join(P, "lib", "python3",
                                            "dist-packages"))
    env.pop("LD_LIBRARY_PATH")
    out = ok(["/usr/bin/python3", src, GPT], env=env).stdout
    assert doc_numbers(out) == expected()
    assert "refused: --optimizer has no effect without --train" in out


# The examples: the largest batch of the GPT model at seq 1024 that fits an
# L4 with 2 GiB of headroom, against the CLI's --max-batch with the same
# device and overhead.
def l4_answer():
    doc = cli_json(GPT, "--seq=1024", "--device=L4", "--overhead=2G",
                   "--max-batch")
    mb = doc["report"]["max_batch"]
    assert mb["max"] and mb["max"] > 1
    return "batch %d fits an L4 with 2 GiB of headroom (%d bytes)" % (
        mb["max"], mb["bytes_at_max"])


def test_example_c_through_pkg_config():
    work = os.path.join(TMP, "embed-c")
    shutil.copytree(os.path.join(SRC, "examples", "embed-c"), work)
    ok(["make", "-s"], cwd=work)
    out = ok([os.path.join(work, "pick_batch"), GPT, "--seq", "1024"]).stdout
    assert out.strip() == l4_answer()


def test_example_cpp_through_find_package():
    build = os.path.join(TMP, "embed-cpp")
    ok(["cmake", "-S", os.path.join(SRC, "examples", "embed-cpp"), "-B",
        build, "-G", "Ninja", "-DCMAKE_PREFIX_PATH=" + P,
        "-DCMAKE_BUILD_TYPE=Release"])
    ok(["cmake", "--build", build])
    env = dict(ENV)
    env.pop("LD_LIBRARY_PATH")  # CMake's build-tree rpath finds it.
    out = ok([os.path.join(build, "pick_batch"), GPT, "--seq", "1024"],
             env=env).stdout
    assert out.strip() == l4_answer()
