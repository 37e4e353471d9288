"""The C API against the oomplan CLI (ctest embed.capi).

oomplan-capi (oomplan-capi.c) is the tool rebuilt on include/oomplan-c:
same arguments, output, diagnostics and exit code. Every option of the CLI
is used below at least once, and both programs must agree byte for byte, so
the library's argument parser and the tool's llvm::cl options cannot mean
different things. The accessors are checked against the numbers in the
CLI's own JSON, and the parser's option list against `oomplan
--help-hidden`. Environment: OOMPLAN_CLI, OOMPLAN_CAPI, OOMPLAN_LIB,
OOMPLAN_SOURCE_DIR (test/embed/CMakeLists.txt).
"""
import concurrent.futures
import ctypes
import json
import os
import re
import subprocess
import tempfile

import pytest

CLI = os.environ["OOMPLAN_CLI"]
CAPI = os.environ["OOMPLAN_CAPI"]
LIB = os.environ["OOMPLAN_LIB"]
MODELS = os.path.join(os.environ["OOMPLAN_SOURCE_DIR"], "test", "models")
GPT = os.path.join(MODELS, "gpt_like.onnx")
BERT = os.path.join(MODELS, "bert_like.onnx")
RESNET = os.path.join(MODELS, "resnet50.onnx")
TRAIN_GPT = os.path.join(MODELS, "train", "gpt_like.onnx")
CSV = os.path.join(MODELS, "minimalloc", "A.1048576.csv")
# A 2-layer decoder with GroupQueryAttention and a KV cache
# (utils/export/make_llm_graph.py --config tiny --attention gqa), --serve's.
LLM = os.path.join(MODELS, "serve", "tiny_gqa.onnx")
# A four-node training graph whose fit is chosen in milliseconds.
TINY = os.path.join(os.environ["OOMPLAN_SOURCE_DIR"], "test", "lit", "fit",
                    "recompute.onnxtxt")
TMP = tempfile.mkdtemp(prefix="oomplan-embed-")


def run(prog, args, facts=None):
    extra = ["--capi-facts=" + facts] if facts else []
    p = subprocess.run([prog] + args + extra, capture_output=True, text=True,
                       timeout=240)
    # The fit chooser's note says how long it took.
    err = re.sub(r"in [0-9.]+ s\b", "in (time) s", p.stderr)
    return p.returncode, p.stdout, err


# Command lines that both programs must treat identically. Together they use
# every option the CLI has (test_every_option_is_compared checks that).
SAME = [
    [GPT, "--batch", "8", "--seq", "1024"],
    [GPT, "--batch=8", "--seq=1024", "--emit=json"],
    [TRAIN_GPT, "--train", "--batch", "2", "--seq", "128", "--budget", "16G",
     "--emit=json"],
    [BERT, "--batch=4", "--seq=128", "--emit", "plan", "--overhead=1G",
     "--budget=20G"],
    [RESNET, "-batch", "2", "--emit=shapes"],
    [RESNET, "--batch=2", "--backend", "cuda", "--emit=json"],
    [RESNET, "--batch=0x2", "--emit=lifetimes", "--no-inplace",
     "--io-in-arena", "--align=512", "--algo=greedy-by-size",
     "--time-limit=0.5"],
    [GPT, "--dim=batch=2,seq=64", "--emit=graph"],
    [GPT, "--input-shape=input_ids=2x64", "--emit=json"],
    [TRAIN_GPT, "--train", "--batch", "2", "--seq", "128", "--devices", "2",
     "--parallel=dp=2,zero=2", "--emit=deepspeed"],
    [TRAIN_GPT, "--train", "--batch=2", "--seq=64", "--optimizer=sgd",
     "--precision=bf16-mixed", "--grad-accum=2", "--freeze=*ln*",
     "--emit=json"],
    [TINY, "--train", "--batch=16", "--align=1", "--budget=34000", "--fit",
     "--remat=sqrt", "--offload=none", "--fit-show-plan", "--tf32"],
    [TINY, "--train", "--batch=16", "--align=1", "--budget=34000", "--fit",
     "--reorder", "--micro-batches=2", "--grad-accum=2", "--emit=schedule",
     "--print-after=training", "--print-after-all"],
    [TINY, "--train", "--batch=16", "--align=1", "--budget=34000",
     "--no-fit", "--emit=json"],
    [TINY, "--train", "--batch=16", "--align=1", "--budget=34000",
     "--loss=ce", "--step=first", "--zero-grad=zero",
     "--runtime=pytorch-cuda",
     "--cuda-alloc-conf=max_split_size_mb:128,expandable_segments:True"],
    [TINY, "--train", "--batch=16", "--runtime", "pytorch-cpu", "--loss",
     "mean", "--emit=json"],
    [TRAIN_GPT, "--train", "--batch=2", "--seq=64", "--attention=eager",
     "--emit=json"],
    [GPT, "--train", "--batch=2", "--seq=64", "--dropout=0.1",
     "--keep-output", "--emit=json"],
    [TRAIN_GPT, "--train", "--seq=64", "--device=L4", "--max-batch",
     "--emit=json"],
    [GPT, "--batch=1", "--budget=2G", "--max-seq", "--sweep"],
    [GPT, "--batch=2", "--seq=64", "--fuse=none", "--order", "file"],
    [GPT, "--batch=2", "--seq=64", "--timeline=" + os.path.join(TMP, "t.svg"),
     "--trace=" + os.path.join(TMP, "t.json")],
    [CSV, "--emit=csv", "-o", os.path.join(TMP, "out.csv")],
    [LLM, "--serve", "--device=A100-80GB", "--max-model-len=64",
     "--max-batched-tokens=32", "--max-num-seqs=4", "--block-size=32",
     "--kv-dtype=fp8", "--gpu-memory-utilization=0.5", "--emit=json"],
    [LLM, "--serve", "--budget", "1G", "--max-model-len", "64",
     "--emit=vllm"],
    [LLM, "--serve", "--budget=1M", "--max-model-len=64"],
    ["--list-algos"],
    ["--version"],
    # Errors whose message both spell the same way (the tool's own checks).
    [RESNET, "--optimiser=adam"],
    [RESNET, "--emit", "jsn"],
    [RESNET, "--remat=sqr"],
    [RESNET, "--precision=fp16-mixed"],
    [os.path.join(TMP, "missing.onnx"), "--batch=1"],
    [RESNET, "--batch=1", "--print-after=nonsense"],
    [TINY, "--train", "--batch=1", "--tied=a,b"],
]

# Errors llvm::cl reports in its own words: only the exit code must agree.
SAME_EXIT = [
    [RESNET, "--batch=abc"],
    [RESNET, "--batch"],
    [RESNET, "--batch=1", "--batch=2"],
    [RESNET, "--train=maybe"],
    [RESNET, "--grad-accum=-1"],
    [RESNET, RESNET],
]


def side_files(args):
    """The files a command line writes besides its output."""
    return [a.split("=", 1)[1] if "=" in a else args[i + 1]
            for i, a in enumerate(args)
            if a.split("=")[0] in ("--timeline", "--trace", "-o")]


def both(args):
    """Runs the CLI, then the C twin, collecting the side files of each."""
    out = []
    for prog in (CLI, CAPI):
        for f in side_files(args):
            if os.path.exists(f):
                os.remove(f)
        r = run(prog, args)
        out.append((r, [open(f, "rb").read() if os.path.exists(f) else None
                        for f in side_files(args)]))
    return out


def test_same_output_as_cli():
    """Both programs print the same bytes, write the same files and exit
    with the same code."""
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        for args, (a, b) in zip(SAME, pool.map(both, SAME)):
            assert a == b, "differs: %s" % " ".join(args)
    # The comparison means something: the CLI planned, and wrote files.
    assert both(SAME[0])[0][0][0] == 0
    assert all(both([CSV, "--emit=csv", "-o", os.path.join(TMP, "x.csv")])
               [0][1])


def test_same_exit_code_on_cli_errors():
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        for args, a, b in pool.map(lambda a: (a, run(CLI, a), run(CAPI, a)),
                                   SAME_EXIT):
            assert a[0] == 1 and b[0] == 1, " ".join(args)
            assert "error:" in b[2], " ".join(args)


def cli_options():
    """The option names `oomplan --help-hidden` lists."""
    code, out, _ = run(CLI, ["--help-hidden"])
    assert code == 0
    # Options are indented two spaces; their descriptions six.
    return sorted(set(re.findall(r"^  --?([a-z0-9][a-z0-9-]*)", out, re.M)))


def library_options():
    """The names the library's parser accepts, read through liboomplan.so's
    exported C++ function (oomplan::api::argumentNames, via its C twin
    oomplan-capi's --help output)."""
    code, out, _ = run(CAPI, ["--help"])
    assert code == 0
    return sorted(set(re.findall(r"^\s+--([a-z0-9][a-z0-9-]*)", out, re.M)))


# The tool's own modes, not plan options: --commands runs many command lines,
# each parsed by the library's parser itself.
TOOL_ONLY = {"commands"}


def test_parser_accepts_exactly_the_cli_options():
    cli, lib = cli_options(), library_options()
    assert len(cli) > 30
    assert "commands" in cli and "commands" not in lib
    assert sorted(set(cli) - TOOL_ONLY) == lib


def test_every_option_is_compared():
    """SAME uses every option of the CLI (except --help, whose text
    differs), so a new option that the parser maps wrongly shows up."""
    used = set()
    for args in SAME:
        for a in args:
            m = re.match(r"^--?([a-z0-9-]+)", a)
            if m:
                used.add(m.group(1))
    generic = {"h", "help", "help-hidden", "help-list", "help-list-hidden",
               "print-all-options", "print-options"}
    missing = set(cli_options()) - used - generic - TOOL_ONLY
    assert not missing, "options no comparison uses: %s" % sorted(missing)


def facts(args):
    path = os.path.join(TMP, "facts-%d.txt" % abs(hash(tuple(args))))
    code, out, err = run(CAPI, args, facts=path)
    with open(path) as f:
        d = dict(line.rstrip("\n").split("=", 1) for line in f)
    return code, out, d


def test_accessors_match_the_cli_json():
    """total_bytes, budget, overhead, fits and the capacity answer read
    through the accessors equal the CLI's JSON."""
    args = [TRAIN_GPT, "--train", "--seq=128", "--budget=4G",
            "--overhead=512M", "--max-batch", "--emit=json"]
    code, out, err = run(CLI, args)
    doc = json.loads(out)
    ccode, _, d = facts(args)
    assert ccode == code == int(d["status"])
    assert int(d["total_bytes"]) == doc["total_bytes"]
    assert int(d["budget_bytes"]) == doc["budget_bytes"] == 4 << 30
    assert int(d["overhead_bytes"]) == doc["report"]["overhead_bytes"]
    assert d["fits"] == ("1" if doc["fits"] else "0")
    mb = doc["report"]["max_batch"]
    assert d["max_batch"] == "%d %d %d" % (mb["max"], mb["at_least"],
                                           mb["bytes_at_max"])
    assert d["has_json"] == "1" and d["category"] == ""


def test_error_categories():
    missing = [os.path.join(TMP, "none.onnx")]
    assert facts(missing)[2]["category"] == "I/O error"
    assert facts([RESNET, "--bach=1"])[2]["category"] == "bad input"
    d = facts([RESNET, "--batch=1", "--emit=report"])[2]
    assert d["has_json"] == "0" and d["status"] == "0"


needs_ctypes = pytest.mark.skipif(
    os.environ.get("OOMPLAN_SANITIZED") == "1",
    reason="a sanitized liboomplan.so cannot be loaded with ctypes")


class CAPI_:
    """liboomplan.so through ctypes, for the C calls the twin cannot
    reach (NULL arguments, buffers)."""

    def __init__(self):
        lib = ctypes.CDLL(LIB)
        P = ctypes.c_void_p
        lib.oomplan_plan.argtypes = [ctypes.c_char_p, ctypes.POINTER(
            ctypes.c_char_p), ctypes.c_int, ctypes.POINTER(P),
            ctypes.POINTER(P)]
        lib.oomplan_plan_buffer.argtypes = [
            ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_char_p), ctypes.c_int, ctypes.POINTER(P),
            ctypes.POINTER(P)]
        for name, res in [("oomplan_result_total_bytes", ctypes.c_ulonglong),
                          ("oomplan_result_status", ctypes.c_int),
                          ("oomplan_result_error_category", ctypes.c_int),
                          ("oomplan_result_error_message", ctypes.c_char_p),
                          ("oomplan_result_json", ctypes.c_char_p),
                          ("oomplan_result_max_batch", ctypes.c_longlong)]:
            getattr(lib, name).argtypes = [P]
            getattr(lib, name).restype = res
        lib.oomplan_result_free.argtypes = [P]
        lib.oomplan_free_string.argtypes = [P]
        lib.oomplan_version.restype = ctypes.c_char_p
        self.lib = lib

    def plan(self, model, args, data=None, argc=None):
        argv = (ctypes.c_char_p * max(1, len(args)))(
            *[a.encode() for a in args]) if args is not None else None
        out, err = ctypes.c_void_p(), ctypes.c_void_p()
        n = len(args or []) if argc is None else argc
        m = model.encode() if model else None
        if data is None:
            rc = self.lib.oomplan_plan(m, argv, n, ctypes.byref(out),
                                       ctypes.byref(err))
        else:
            rc = self.lib.oomplan_plan_buffer(m, data, len(data), argv, n,
                                              ctypes.byref(out),
                                              ctypes.byref(err))
        msg = ctypes.string_at(err.value).decode() if err.value else None
        self.lib.oomplan_free_string(err)
        r = out.value
        got = dict(rc=rc, error=msg,
                   status=self.lib.oomplan_result_status(r),
                   total=self.lib.oomplan_result_total_bytes(r),
                   category=self.lib.oomplan_result_error_category(r),
                   json=self.lib.oomplan_result_json(r),
                   max_batch=self.lib.oomplan_result_max_batch(r))
        self.lib.oomplan_result_free(r)
        return got


@needs_ctypes
def test_c_calls_with_bad_arguments_are_errors():
    c = CAPI_()
    assert c.lib.oomplan_version().decode() == run(CLI, ["--version"])[1] \
        .split()[-1]
    r = c.plan(RESNET, None, argc=2)  # argv NULL, argc 2
    assert r["rc"] == 1 and r["category"] == 1 and "argv" in r["error"]
    r = c.plan(None, [])  # no model at all
    assert r["rc"] == 1 and r["category"] == 1 and "model" in r["error"]
    r = c.plan(RESNET, ["--batch=1"], argc=-1)
    assert r["rc"] == 1 and r["category"] == 1
    r = c.plan(RESNET, [RESNET])  # the model twice
    assert r["rc"] == 1 and "unexpected argument" in r["error"]
    r = c.plan(RESNET, ["--batch=1"])
    assert r["rc"] == 0 and r["error"] is None and r["max_batch"] == -1
    assert json.loads(r["json"])["total_bytes"] == r["total"]


@needs_ctypes
def test_plan_buffer_equals_plan_file():
    c = CAPI_()
    with open(GPT, "rb") as f:
        data = f.read()
    a = c.plan(GPT, ["--batch=2", "--seq=64"])
    b = c.plan("in-memory.onnx", ["--batch=2", "--seq=64"], data=data)
    assert a["rc"] == b["rc"] == 0 and a["total"] == b["total"] > 0
    bad = c.plan("junk.onnx", ["--batch=1"], data=b"\x08\x01junk")
    assert bad["rc"] == 1 and bad["category"] in (1, 2)


def test_exports_only_the_apis():
    """liboomplan.so exports the C functions and oomplan::api, no LLVM."""
    out = subprocess.run(["nm", "-D", "--defined-only", "-C", LIB],
                         capture_output=True, text=True, check=True).stdout
    names = [l.split(" ", 2)[2].split("@@")[0] for l in out.splitlines()
             if len(l.split(" ", 2)) == 3 and l.split(" ", 2)[1] in "TWBDRV"]
    others = [n for n in names if not n.startswith(("oomplan_",
                                                    "oomplan::api::"))
              and n != "OOMPLAN_0"]
    assert "oomplan_plan" in names and "oomplan_result_json" in names
    assert any(n.startswith("oomplan::api::run(") for n in names)
    assert not others, others[:10]
