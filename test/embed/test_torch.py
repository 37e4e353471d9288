"""oomplan.torch against the ONNX path (docs/embedding.md "PyTorch modules").

Runs with the PyTorch the machine has (Debian's 1.13 here); skipped without
it. Each expected value is an independent export or arithmetic by hand.
"""
import os
import tempfile

import pytest

torch = pytest.importorskip("torch")
import oomplan  # noqa: E402
import oomplan.torch as ot  # noqa: E402

TMP = tempfile.mkdtemp(prefix="oomplan-torch-test-")


def onnx_export(model, x, name):
    """The export a user would write by hand (torch.onnx's own API); X is a
    tensor or a tuple of them, each with the batch at dim 0."""
    path = os.path.join(TMP, name)
    args = x if isinstance(x, tuple) else (x,)
    names = ["x%d" % i for i in range(len(args))]
    model.train()
    torch.onnx.export(model, args, path, input_names=names,
                      dynamic_axes={n: {0: "batch"} for n in names},
                      opset_version=17,
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False)
    return path


def shared_definitions():
    """utils/export/definitions.py: the shared GPT- and BERT-style modules."""
    import sys
    sys.path.insert(0, os.path.join(os.environ["OOMPLAN_SOURCE_DIR"],
                                    "utils", "export"))
    import definitions
    return definitions


def classes(p):
    return {r["class"]: r["bytes"] for r in p.report["breakdown"]}


def test_torchvision_resnet_same_bytes_as_onnx_path():
    tv = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    m = tv.models.resnet18(num_classes=10)
    x = torch.randn(4, 3, 64, 64)
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    got = ot.plan(m, x, optimizer=opt)
    ref = oomplan.plan(onnx_export(m, x, "resnet18.onnx"), batch=4,
                       train=True, optimizer="momentum")
    assert got.total_bytes == ref.total_bytes
    assert classes(got) == classes(ref)


def test_gpt_like_module_same_bytes_as_onnx_path():
    # The shared GPT-style module, small.
    definitions = shared_definitions()
    torch.manual_seed(0)
    m = definitions.randomize(
        definitions.GPTLike(vocab=1000, d=128, layers=2, heads=4,
                            max_pos=128))
    ids = torch.randint(0, 1000, (2, 64))
    got = ot.plan(m, ids, optimizer=torch.optim.AdamW(m.parameters()),
                  fit=False)
    ref = oomplan.plan(onnx_export(m, ids, "gpt.onnx"), batch=2, train=True,
                       optimizer="adamw", fit=False)
    assert got.total_bytes == ref.total_bytes
    assert classes(got) == classes(ref)


def test_bert_like_module_two_inputs_same_bytes_as_onnx_path():
    definitions = shared_definitions()
    torch.manual_seed(0)
    m = definitions.randomize(
        definitions.BertLike(vocab=1000, d=128, layers=2, heads=4, ff=512,
                             max_pos=128))
    ids = torch.randint(0, 1000, (2, 64))
    mask = torch.ones(2, 64, dtype=torch.int64)
    got = ot.plan(m, (ids, mask), fit=False)
    ref = oomplan.plan(onnx_export(m, (ids, mask), "bert.onnx"), batch=2,
                       train=True, optimizer="adam", fit=False)
    assert got.total_bytes == ref.total_bytes
    assert classes(got) == classes(ref)


def test_hugging_face_attention_implementation_is_read():
    class Config:
        _attn_implementation = "sdpa"
    m = torch.nn.Linear(8, 8)
    m.config = Config()
    assert ot.options_for(m)["attention"] == "sdpa"
    Config._attn_implementation = "eager"
    assert ot.options_for(m)["attention"] == "eager"


def test_frozen_parameters_get_no_gradient_or_state():
    # 256x256 and 256x64 weights (multiples of 256 bytes: no padding).
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(256, 256, bias=False),
                            torch.nn.ReLU(),
                            torch.nn.Linear(256, 64, bias=False))
    x = torch.randn(8, 256)
    for p in m[0].parameters():
        p.requires_grad = False
    got = ot.plan(m, x, optimizer=torch.optim.Adam(m[2].parameters()),
                  fit=False)
    # Adam keeps two fp32 moments of the trainable 256x64 weight only:
    # 2 * 256 * 64 * 4 = 131072 bytes.
    assert classes(got)["optimizer_state"] == 131072
    ref = oomplan.plan(onnx_export(m, x, "frozen.onnx"), batch=8, train=True,
                       optimizer="adam", freeze="0.weight", fit=False)
    assert got.total_bytes == ref.total_bytes


def test_dropout_is_planned_from_the_live_module():
    torch.manual_seed(0)

    def net(drop):
        return torch.nn.Sequential(torch.nn.Linear(256, 256),
                                   torch.nn.Dropout(0.1) if drop
                                   else torch.nn.Identity(),
                                   torch.nn.Linear(256, 16))
    x = torch.randn(512, 256)
    with_dropout = ot.plan(net(True), x, optimizer="sgd", fit=False)
    without = ot.plan(net(False), x, optimizer="sgd", fit=False)
    # A training-mode export keeps the Dropout: its mask (512 x 256, one
    # byte each: 131072) is saved for the backward, and the dropped output
    # (512 x 256 floats) is a tensor of its own.
    assert with_dropout.total_bytes > without.total_bytes


def test_optimizer_kinds_and_errors():
    m = torch.nn.Linear(8, 8)
    assert ot.options_for(m, torch.optim.SGD(m.parameters(), lr=1)) == \
        {"optimizer": "sgd"}
    assert ot.options_for(m, torch.optim.AdamW(m.parameters())) == \
        {"optimizer": "adamw"}
    with pytest.raises(oomplan.UnsupportedError, match="Adagrad"):
        ot.options_for(m, torch.optim.Adagrad(m.parameters()))


def test_max_batch_searches_the_exported_batch():
    m = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                            torch.nn.Linear(1024, 10))
    n = ot.max_batch(m, torch.randn(2, 1024), budget="256M",
                     optimizer="sgd")
    assert n > 1
    assert ot.plan(m, torch.randn(n, 1024), budget="256M", optimizer="sgd",
                   fit=False).fits
    assert not ot.plan(m, torch.randn(n + 1, 1024), budget="256M",
                       optimizer="sgd", fit=False).fits
