"""oomplan.execute (ctest embed.execute): oomplan-run as one Python call,
checked against values worked out by hand and against `oomplan-run --json`
on the same model and inputs. Environment: OOMPLAN_RUN, OOMPLAN_SOURCE_DIR,
PYTHONPATH=<build>/python (test/embed/CMakeLists.txt).
"""
import json
import os
import struct
import subprocess

import pytest

import oomplan

RUN = os.environ["OOMPLAN_RUN"]
SOURCE = os.environ["OOMPLAN_SOURCE_DIR"]
# r = Relu(x), s = r + w, y = Reshape(s * 0.5, [2, 2]) with w = [10, 20, 30,
# 40]: x = [-1, 2, -3, 4] gives y = [[5, 11], [15, 22]]. The weights region
# holds w, shape and c at 256-byte aligned slots: 768 bytes, the last ending
# at 512 + 4 = 516 (test/lit/run/relu-add.onnxtxt).
RELU_ADD = os.path.join(SOURCE, "test", "lit", "run", "relu-add.onnxtxt")
X = ("float", (4,), struct.pack("4f", -1, 2, -3, 4))


def test_values_and_regions_by_hand():
    e = oomplan.execute(RELU_ADD, inputs={"x": X}, check="unplanned")
    assert e.ok and e.ran and e.exit_code == 0
    y = e.outputs["y"]
    assert (y.type, y.dims) == ("float", (2, 2))
    assert struct.unpack("4f", y.data) == (5, 11, 15, 22)
    w = e.regions["weights"]
    assert (w.planned_bytes, w.high_water_bytes) == (768, 516)
    for r in e.regions.values():
        assert r.high_water_aligned_bytes == r.planned_bytes, r
    assert e.plan_total_bytes == sum(r.planned_bytes
                                     for r in e.regions.values())
    assert e.report["check_unplanned"] == {"identical": True}
    assert e.report["ok"] is True


def test_same_report_as_the_tool(tmp_path):
    """The JSON report equals `oomplan-run --json` on the same input file,
    but for the wall-clock and RSS figures."""
    pb = tmp_path / "x.pb"
    # A TensorProto: dims (field 1) 4, data_type (2) FLOAT, name (8) "x",
    # raw_data (9) the 16 bytes.
    pb.write_bytes(b"\x08\x04\x10\x01\x42\x01x\x4a\x10" + X[2])
    p = subprocess.run([RUN, RELU_ADD, "--input", "x=%s" % pb, "--json"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    tool = json.loads(p.stdout)
    e = oomplan.execute(RELU_ADD, input=["x=%s" % pb])
    ours = e.report
    for doc in (tool, ours):
        for key in list(doc):
            if key == "seconds" or key.startswith(("rss_", "process_")):
                del doc[key]
    assert ours == tool
    assert tool["outputs"][0]["dims"] == [2, 2]
    # The same bytes given in memory hash the same.
    assert oomplan.execute(RELU_ADD, inputs={"x": X}).report["outputs"] == \
        tool["outputs"]


def test_over_budget_is_not_run():
    """768 bytes of weights alone: no fitting brings the plan under 600."""
    e = oomplan.execute(RELU_ADD, budget=600)
    assert e.exit_code == 2 and not e.ran and not e.fits and e.fitted
    assert e.plan_total_bytes > 768
    assert e.report == {"ran": False, "plan_total_bytes": e.plan_total_bytes,
                        "fitted": True, "budget_bytes": 600, "fits": False}
    text = oomplan.execute(RELU_ADD, budget=600, json=False).report
    assert "does NOT fit (nothing fitted it): not run" in text


def test_errors_raise():
    with pytest.raises(oomplan.InputError, match="has shape 2x2, the plan is "
                       "for 4"):
        oomplan.execute(RELU_ADD, inputs={"x": ("float", (2, 2), X[2])})
    with pytest.raises(oomplan.InputError, match="no such input"):
        oomplan.execute(RELU_ADD, inputs={"z": X})
    with pytest.raises(oomplan.InputError, match="oomplan-run's own"):
        oomplan.execute(RELU_ADD, list_kernels=True)
    with pytest.raises(oomplan.InputError, match="unknown option|--no-such"):
        oomplan.execute(RELU_ADD, no_such=True)
