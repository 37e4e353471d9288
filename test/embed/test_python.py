"""The Python module `oomplan` (ctest embed.python), checked against the
oomplan CLI's own output: the same total bytes, JSON and capacity answers,
errors as oomplan.Error subclasses, and planning on several threads at once
(the GIL is released). Environment: OOMPLAN_CLI, OOMPLAN_SOURCE_DIR,
PYTHONPATH=<build>/python (test/embed/CMakeLists.txt).
"""
import concurrent.futures
import json
import os
import subprocess
import threading
import time

import pytest

import oomplan

CLI = os.environ["OOMPLAN_CLI"]
MODELS = os.path.join(os.environ["OOMPLAN_SOURCE_DIR"], "test", "models")
GPT = os.path.join(MODELS, "gpt_like.onnx")
TRAIN_GPT = os.path.join(MODELS, "train", "gpt_like.onnx")
RESNET = os.path.join(MODELS, "resnet50.onnx")
# A training model with a batch symbol only (--max-batch needs --seq when
# the model has a sequence symbol).
MOBILENET = os.path.join(MODELS, "train", "mobilenet_v2.onnx")


def cli_json(*args):
    p = subprocess.run([CLI] + list(args) + ["--emit=json"],
                       capture_output=True, text=True, timeout=240)
    assert p.returncode in (0, 2), p.stderr
    return p.returncode, p.stdout


def test_plan_equals_cli_json():
    code, out = cli_json(GPT, "--batch=8", "--seq=1024", "--budget=24G")
    p = oomplan.plan(GPT, batch=8, seq=1024, budget="24G")
    assert p.to_json() == out
    doc = json.loads(out)
    assert p.total_bytes == doc["total_bytes"]
    assert p.fits == doc["fits"] == (code == 0)
    assert p.report == doc["report"]
    assert p.budget_bytes == 24 << 30


def test_options_as_keywords():
    code, out = cli_json(TRAIN_GPT, "--train", "--batch=4", "--seq=128",
                         "--optimizer=sgd", "--precision=bf16-mixed",
                         "--dim=batch=4", "--io-in-arena", "--align=512")
    p = oomplan.plan(TRAIN_GPT, batch=4, seq=128, train=True,
                     optimizer="sgd", precision="bf16-mixed",
                     dims={"batch": 4}, io_in_arena=True, align=512)
    assert p.to_json() == out
    code, out = cli_json(GPT, "--input-shape=input_ids=2x64")
    p = oomplan.plan(GPT, input_shape={"input_ids": (2, 64)})
    assert p.to_json() == out


def test_max_batch_equals_cli():
    """The issue's bar: max_batch(model, budget="16G", train=True) is the
    CLI's --max-batch answer."""
    code, out = cli_json(MOBILENET, "--train", "--budget=16G", "--max-batch")
    want = json.loads(out)["report"]["max_batch"]["max"]
    assert want and want > 1
    assert oomplan.max_batch(MOBILENET, budget="16G", train=True) == want
    code, out = cli_json(TRAIN_GPT, "--train", "--seq=512", "--budget=4G",
                         "--max-batch")
    want = json.loads(out)["report"]["max_batch"]["max"]
    assert oomplan.max_batch(TRAIN_GPT, budget="4G", seq=512,
                             train=True) == want


def test_serve_equals_cli():
    """oomplan.serve() answers what `oomplan --serve --emit=json` prints,
    a server that would not start included (exit 2 is a verdict)."""
    llm = os.path.join(MODELS, "serve", "tiny_gqa.onnx")
    for budget, code in (("1G", 0), ("1M", 2)):
        rc, out = cli_json(llm, "--serve", "--budget=" + budget,
                           "--max-model-len=64", "--kv-dtype=fp8")
        assert rc == code
        got = oomplan.serve(llm, 64, budget=budget, kv_dtype="fp8")
        assert got == json.loads(out)
        assert got["starts"] == (code == 0)
    # Tiny: 2 layers x 2 KV heads x 16 x 1 byte x 2 (K and V) = 128.
    assert got["kv_bytes_per_token"] == 128


def test_max_seq_equals_cli():
    code, out = cli_json(GPT, "--batch=2", "--budget=2G", "--max-seq")
    want = json.loads(out)["report"]["max_seq"]
    c = oomplan.plan(GPT, batch=2, budget="2G", max_seq=True).max_seq
    assert (c.max, c.at_least, c.bytes_at_max) == (
        want["max"], want["at_least"], want["bytes_at_max"])
    assert oomplan.max_seq(GPT, budget="2G", batch=2) == want["max"]


def test_errors_are_classes():
    with pytest.raises(oomplan.FileError) as e:
        oomplan.plan(os.path.join(MODELS, "missing.onnx"), batch=1)
    assert "missing.onnx" in str(e.value) and e.value.category == "io"
    with pytest.raises(oomplan.InputError, match="did you mean '--batch'"):
        oomplan.plan(GPT, bach=1)
    with pytest.raises(oomplan.InputError, match="no effect without --train"):
        oomplan.plan(GPT, batch=1, optimizer="sgd")
    with pytest.raises(oomplan.Error):
        oomplan.run([GPT, "--emit=xml"])
    for cls in (oomplan.InputError, oomplan.UnsupportedError,
                oomplan.SizeOverflowError, oomplan.InternalError,
                oomplan.FileError):
        assert issubclass(cls, oomplan.Error)


def test_does_not_fit_is_a_verdict_not_an_error():
    code, out = cli_json(GPT, "--batch=64", "--seq=2048", "--budget=1G",
                         "--no-fit")
    assert code == 2
    p = oomplan.plan(GPT, batch=64, seq=2048, budget="1G", fit=False)
    assert not p.fits and p.exit_code == 2 and p.to_json() == out


def test_run_takes_a_command_line():
    p = oomplan.run([RESNET, "--batch=1", "--emit=report"])
    assert p.document is None and "resnet50" in p.output
    with pytest.raises(oomplan.InputError):
        p.to_json()


def test_threads_plan_in_parallel_with_the_same_answers():
    jobs = [dict(batch=b, seq=s) for b in (1, 2, 4) for s in (128, 512)]
    serial = [oomplan.plan(TRAIN_GPT, train=True, **j).total_bytes
              for j in jobs]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        par = list(pool.map(
            lambda j: oomplan.plan(TRAIN_GPT, train=True, **j).total_bytes,
            jobs * 2))
    assert par == serial * 2


def test_gil_is_released_while_planning():
    """While one thread plans, another keeps running Python: the longest
    pause the main thread sees is far shorter than the plan (with the GIL
    held it would be the whole plan)."""
    args = dict(batch=4, seq=512, train=True)
    start = time.monotonic()
    oomplan.plan(TRAIN_GPT, **args)
    duration = time.monotonic() - start
    done = []
    worker = threading.Thread(
        target=lambda: done.append(oomplan.plan(TRAIN_GPT, **args)))
    last, longest = time.monotonic(), 0.0
    worker.start()
    while worker.is_alive():
        now = time.monotonic()
        longest, last = max(longest, now - last), now
    worker.join()
    assert done and longest < duration / 2, (longest, duration)
