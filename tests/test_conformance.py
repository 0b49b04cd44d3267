"""The conformance suite passes on the CPU backend and catches planted bugs in other backends.

Faulty backends are registered in-process (``opweave_conformance.testing``): host
storage like the CPU's under a new device type, the CPU's prim kernels, one of them
replaced by a faulty one. For each fault the suite must report exactly the ops that
use the faulty kernel, with the right check and a replayable sample.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import opweave as ow
import opweave_conformance as conformance
import pytest
from opweave_conformance import checks, opdb
from opweave_conformance import testing as T
from opweave_conformance.replay import replay, sample_from_seed
from opweave_conformance.runner import Config
from opweave_conformance.tensors import decode_sample, encode_sample
from opweave_cpu._backend import native, wrap


def _statuses(report) -> dict:
    return {r.name: r.status for r in report.ops}


def _failed(report) -> set:
    return {r.name for r in report.ops if r.status == "fail"}


# -- the CPU backend ---------------------------------------------------------------------------


CPU_OPS = "add.*,mul.Tensor,sin,sin_,sin.out,prims::add,prims::sin,sum.dim_IntList,amax,var.correction,transpose.int,"
CPU_OPS += "split.Tensor,cat,clone,mH,prims::uniform,rand,gather,prims::eig"


def test_cpu_passes_a_few_families_and_writes_a_json_report(tmp_path):
    report = conformance.run("cpu", ops=CPU_OPS)
    assert report.ok, report.table()
    status = _statuses(report)
    assert status["add.Tensor"] == "pass" and status["sin_"] == "pass" and status["sin.out"] == "pass"
    assert status["prims::uniform"] == "pass" and status["rand"] == "pass"  # random: checked by reproducibility
    assert status["gather"] == "pass"  # a hand-written entry with a NumPy oracle
    assert status["prims::eig"] == "no-oracle"  # a schema-driven sample only: reported, not silently passed
    assert status["mH"] == "xfail"  # complex mH is a copy in opweave (no conjugate bit): a known deviation
    assert all(c.status == "pass" for c in report.backend_checks)
    path = tmp_path / "report.json"
    report.write_json(path)
    data = json.loads(path.read_text())
    assert data["ok"] and data["backend"] == "cpu" and data["summary"]["pass"] >= 15
    entry = next(e for e in data["ops"] if e["op"] == "mH")
    assert entry["reason"].startswith("a copy for complex inputs")
    assert "family" in entry and entry["dtypes"][0]["seed"]
    assert "elementwise" in report.table()


def test_samples_round_trip_through_json():
    info = opdb.get("add.Tensor")
    for sample in conformance.opdb._core.take(info.sample_inputs(np.random.default_rng(3), ow.float32, "cpu"), 6):
        back = decode_sample(json.loads(json.dumps(encode_sample(sample))))
        assert len(back.arrs()) == len(sample.arrs())
        for a, b in zip(sample.arrs(), back.arrs()):
            assert checks.same_bits(a.value, b.value) and a.layout == b.layout and a.dtype is b.dtype


def test_compare_reports_mismatches_and_matches_specials():
    f32 = ow.float32
    assert (
        checks.compare(np.array([np.nan, np.inf, 1.0], np.float32), [np.nan, np.inf, 1.0 + 1e-7], f32, 1e-5, 0) is None
    )
    bad = checks.compare(np.array([1.0, -np.inf], np.float32), [1.5, np.inf], f32, 1e-5, 0)
    assert bad["mismatched"] == 2 and bad["examples"][0]["index"] == [0]
    assert checks.compare(np.array([1, 2], np.int8), [1, 3], ow.int8, 1.0, 1.0)["mismatched"] == 1


# -- planted faults ---------------------------------------------------------------------------------


def _sub_instead_of_add(kernel, a, b):
    return wrap(native(a) - native(b), a.dtype)


# name -> (faults, missing prims, ops to run, expected failures, expected check of the planted op)
FAULTS = {
    "bad_add": (
        {"prims::add": T.wrong_value(_sub_instead_of_add, ow.float32)},
        (),
        "prims::add,prims::sub,add.Tensor,sub.Tensor,add_.Tensor,add.out,mul.Tensor",
        {"prims::add", "add.Tensor", "add_.Tensor", "add.out"},
        ("prims::add", "values", "float32"),
    ),
    "bad_dtype": (
        {"prims::abs": T.wrong_dtype(ow.float64)},
        (),
        "prims::abs,prims::neg,neg",
        {"prims::abs"},
        ("prims::abs", "meta", None),
    ),
    "bad_view": (
        {"prims::diagonal": T.copy_instead_of_view},
        (),
        "prims::diagonal,diagonal,prims::transpose,transpose.int",
        {"prims::diagonal", "diagonal"},
        ("prims::diagonal", "meta", None),
    ),
    "bad_strided_sum": (
        {"prims::sum": T.wrong_when_strided},
        (),
        "prims::sum,sum.dim_IntList,prims::amax,amax",
        {"prims::sum", "sum.dim_IntList"},
        ("prims::sum", "values", None),
    ),
    "bad_mutates": (
        {"prims::exp": T.mutates_input},
        (),
        "prims::exp,exp,prims::log,log",
        {"prims::exp", "exp"},
        ("prims::exp", "inputs", None),
    ),
    "bad_no_error": (
        {"prims::div": T.no_error},
        (),
        "prims::div,prims::floor_divide,prims::add",
        {"prims::div"},
        ("prims::div", "errors", None),
    ),
    "bad_seed": (
        {"prims::uniform": T.ignores_seed},
        (),
        "prims::uniform,rand,prims::normal,randn",
        {"prims::uniform", "rand"},
        ("prims::uniform", "random", None),
    ),
    "bad_inplace": (
        {"prims::copy_to": T.new_storage_in_place},
        (),
        "add_.Tensor,add.out,add.Tensor",
        {"add_.Tensor", "add.out"},
        ("add_.Tensor", "inplace", None),
    ),
    "bad_strides": (
        {"prims::mm": T.wrong_strides},
        (),
        "prims::mm,mm,prims::bmm,prims::add",
        {"prims::mm"},
        ("prims::mm", "strides", None),
    ),
    "bad_leak": (
        {"prims::mul": T.leaks},
        (),
        "prims::mul,mul.Tensor,prims::add",
        {"prims::mul", "mul.Tensor"},
        ("prims::mul", "allocator", None),
    ),
}


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_planted_fault_is_reported_naming_the_op(name):
    faults, missing, ops, expected, (planted, check, dtype) = FAULTS[name]
    T.install(name, faults, missing)
    report = conformance.run(name, ops=ops)
    assert _failed(report) == expected, report.table()
    result = next(r for r in report.ops if r.name == planted)
    first = result.first_failure
    assert first.check == check, result.reason
    assert dtype is None or first.dtype == dtype
    assert first.message and first.inputs and first.seed, "a failure carries its evidence and sample"
    assert planted in report.table()


def test_strided_fault_fails_on_a_non_contiguous_sample():
    T.install("bad_strided_sum", FAULTS["bad_strided_sum"][0])
    report = conformance.run("bad_strided_sum", ops="prims::sum")
    inputs = report.ops[0].first_failure.inputs
    assert inputs["args"][0]["layout"] != "contiguous"


def _wrong_when_broadcast(kernel):
    """``prims::add`` that adds 1 when an operand has a stride-0 dim (only a broadcast layout shows it)."""

    def faulty(a, b):
        out = kernel(a, b)
        if any(s == 0 and n > 1 for t in (a, b) for s, n in zip(t.stride(), t.shape)):
            return kernel(out, ow.ones_like(out))
        return out

    return faulty


def test_hypothesis_search_finds_shrinks_and_replays_a_fault(tmp_path, monkeypatch):
    """The full profile's search (no seeded samples here) finds a layout-dependent bug, records a minimal sample."""
    from opweave_conformance import runner as runner_module

    T.install("bad_broadcast", {"prims::add": _wrong_when_broadcast})
    monkeypatch.setitem(runner_module.PROFILES["full"], "samples", 0)
    report = conformance.run("bad_broadcast", ops="prims::add,prims::sub", profile="full")
    assert _failed(report) == {"prims::add"}, report.table()
    first = report.ops[0].first_failure
    assert first.sample_index == "hypothesis" and first.check == "values"
    layouts = [a["layout"] for a in first.inputs["args"] if isinstance(a, dict) and "layout" in a]
    assert "broadcast" in layouts
    path = tmp_path / "search.json"
    report.write_json(path)
    assert all(r.reproduced for r in replay(str(path))), "the searched failure replays from the report"


def test_strategies_build_samples_of_any_op():
    from hypothesis import given, settings
    from opweave_conformance import strategies

    seen = []

    @settings(max_examples=15, database=None, deadline=None)
    @given(strategies.sample_inputs(opdb.get("where.self"), ow.float32))
    def draw(sample):
        seen.append(sample)
        assert len(sample.arrs()) == 3 and sample.arrs()[0].dtype is ow.bool

    draw()
    assert {a.layout for s in seen for a in s.arrs()} > {"contiguous"}

    @settings(max_examples=10, database=None, deadline=None)
    @given(strategies.arrs(dtype=ow.float64))
    def arrays(a):
        assert a.value.dtype == np.float64 and a.layout in strategies.DEVICE_LAYOUTS

    arrays()


def test_missing_kernels_are_not_implemented_not_failures():
    T.install("no_sin", missing=("prims::sin",))
    report = conformance.run("no_sin", ops="prims::sin,sin,cos")
    assert _statuses(report) == {"prims::sin": "not-implemented", "sin": "not-implemented", "cos": "pass"}
    assert report.ok
    assert "prims::sin: no kernel (2 ops)" in report.table()


def test_clean_shadow_backend_passes():
    T.install("clean_shadow")
    report = conformance.run(
        "clean_shadow", ops="*add*,sum*,transpose*,split*,cat,where.self,prims::uniform,index_select"
    )
    assert report.ok, report.table()


def test_failure_replays_from_the_json_report(tmp_path):
    T.install("bad_add", FAULTS["bad_add"][0])
    report = conformance.run("bad_add", ops="prims::add")
    path = tmp_path / "bad.json"
    report.write_json(path)
    results = replay(str(path))
    assert results and all(r.reproduced for r in results), results
    assert all(r.op == "prims::add" for r in results)
    first = report.ops[0].first_failure
    regenerated = sample_from_seed("prims::add", first.dtype, first.seed, first.sample_index, "bad_add")
    assert encode_sample(regenerated) == first.inputs
    assert not any(r.reproduced for r in replay(json.loads(path.read_text()), backend="cpu"))


# -- the backend's configuration hook ------------------------------------------------------------


def test_config_xfail_xpass_skip_dtypes_and_tolerances():
    config = {
        "xfail": {"prims::add": "known bug 123", "prims::sub": {"reason": "flaky on f16", "dtypes": ["float16"]}},
        "skip_dtypes": ["bfloat16"],
        "tolerances": {"float32": (1e-3, 1e-3)},
    }
    T.install("configured", FAULTS["bad_add"][0], config=config)
    runner = conformance.Runner("configured", ops="prims::add,prims::sub")
    assert runner.config.tolerances["float32"] == (1e-3, 1e-3)
    report = runner.run(backend_checks=False)
    status = _statuses(report)
    assert status["prims::add"] == "xfail" and status["prims::sub"] == "xpass"
    assert report.ok and "unexpected passes" in report.table()
    assert all(d.dtype != "bfloat16" for r in report.ops for d in r.dtypes)
    with pytest.raises(ValueError, match="unknown keys"):
        Config.from_dict({"xfails": {}})


# -- command line and pytest plugin -------------------------------------------------------------


def _env():
    return dict(os.environ, OPWEAVE_AUTOLOAD="1")


def test_command_line_exit_status_and_report(tmp_path):
    path = tmp_path / "cli.json"
    cmd = [sys.executable, "-m", "opweave_conformance", "--backend", "cpu", "--ops", "add.Tensor,sin", "--quiet"]
    done = subprocess.run(cmd + ["--report", str(path)], capture_output=True, text=True, env=_env(), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASSED" in done.stdout and json.loads(path.read_text())["ok"]
    bad = subprocess.run(cmd[:4] + ["nope"], capture_output=True, text=True, env=_env(), timeout=300)
    assert bad.returncode == 2 and "nope" in bad.stderr


def test_pytest_plugin_generates_one_item_per_op(tmp_path):
    cmd = [sys.executable, "-m", "pytest", "-p", "opweave_conformance.plugin", "--opweave-backend", "cpu"]
    cmd += ["--opweave-ops", "add.Tensor,sin,mH,gather", "--opweave-only", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env=_env(), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed, 1 xfailed" in done.stdout
    assert "opweave conformance" in done.stdout and "no-orcl" in done.stdout
