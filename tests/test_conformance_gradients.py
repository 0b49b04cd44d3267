"""The conformance suite's gradient checks: gradcheck on the CPU, backend against CPU elsewhere."""

from __future__ import annotations

import json

import numpy as np
import opweave as ow
import opweave_conformance as conformance
from opweave_conformance import gradients
from opweave_conformance import testing as T
from opweave_conformance.cli import main
from opweave_cpu._backend import native, wrap


def _plus_one(kernel, a):
    return wrap(np.asarray(native(a)) + 1, a.dtype)


def test_cpu_runs_gradcheck_on_the_selected_ops():
    report = conformance.run("cpu", ops="sin,mul.Tensor,softmax.int,eq.Tensor")
    checked = {g.op: (g.check, g.status) for g in report.gradients}
    assert checked == {n: ("gradcheck", "pass") for n in ("sin", "mul.Tensor", "softmax.int")}  # eq: no gradient
    assert report.ok
    assert "gradients (gradcheck, 3 ops): 3 pass" in report.table()


def test_a_fault_only_backward_reaches_fails_the_gradient_check_alone():
    # sin's forward runs prims::sin; its backward multiplies by cos: a wrong cos is seen by backward only
    T.install("bad_cos_backward", {"prims::cos": T.wrong_value(_plus_one)})
    report = conformance.run("bad_cos_backward", ops="sin,tanh")
    assert {r.name: r.status for r in report.ops} == {"sin": "pass", "tanh": "pass"}
    assert {g.op: (g.check, g.status) for g in report.gradients} == {
        "sin": ("vs-cpu", "fail"),
        "tanh": ("vs-cpu", "pass"),
    }
    failure = next(g for g in report.gradients if g.op == "sin")
    assert failure.details["mismatched"] > 0 and failure.details["examples"]
    assert not report.ok and "FAIL   sin [vs-cpu, float32]" in report.table()


def test_missing_backward_kernel_is_not_implemented():
    T.install("no_cos_kernel", missing=("prims::cos",))
    report = conformance.run("no_cos_kernel", ops="sin")
    assert [g.status for g in report.gradients] == ["not-implemented"]
    assert report.ok


def test_gradient_xfail_from_the_backend_config():
    T.install("bad_cos_expected", {"prims::cos": T.wrong_value(_plus_one)})
    config = conformance.Config.from_dict({"xfail": {"grad:sin": "known bad cos"}})
    report = conformance.run("bad_cos_expected", ops="sin", config=config)
    assert [(g.status, g.reason) for g in report.gradients] == [("xfail", "known bad cos")]
    assert report.ok


def test_the_op_sample_is_bounded_and_seeded():
    ops = "sin,cos,tan,exp,log1p,tanh,sigmoid,atan,erf,sinh"
    first = conformance.run("cpu", ops=ops, gradients=3, seed=5)
    again = conformance.run("cpu", ops=ops, gradients=3, seed=5)
    assert len(first.gradients) == 3
    assert [g.op for g in first.gradients] == [g.op for g in again.gradients]
    assert conformance.run("cpu", ops=ops, gradients=0).gradients == []


def test_cli_option_and_json_report(tmp_path, capsys):
    path = tmp_path / "report.json"
    assert main(["--backend", "cpu", "--ops", "sin,exp", "--gradients", "all", "--quiet", "--report", str(path)]) == 0
    data = json.loads(path.read_text())
    assert {g["op"]: g["status"] for g in data["gradients"]} == {"sin": "pass", "exp": "pass"}
    assert main(["--backend", "cpu", "--ops", "sin", "--gradients", "-1", "--quiet"]) == 2
    assert "--gradients" in capsys.readouterr().err


def test_not_checked_names_existing_ops():
    bases = {op.name.split("::")[-1].split(".")[0] for op in ow.ops.catalog()} | {op.name for op in ow.ops.catalog()}
    for reason, names in gradients.NOT_CHECKED.items():
        assert reason and all(name in bases for name in names), reason
