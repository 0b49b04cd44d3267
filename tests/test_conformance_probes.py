"""The conformance suite's edge-case probes, ulp comparison, failure evidence and replay of probe failures."""

from __future__ import annotations

import numpy as np
import opweave as ow
import opweave_conformance as conformance
import pytest
from opweave_conformance import checks, opdb, probes
from opweave_conformance import testing as T
from opweave_conformance.opdb._core import take
from opweave_conformance.replay import replay


def _samples(name, dtype, n=5):
    info = opdb.get(name)
    return info, take(info.sample_inputs(np.random.default_rng(0), dtype, "cpu"), n)


def test_ulp_of_each_floating_dtype_follows_its_format():
    assert checks.ulp(1.0, ow.float16) == 2.0**-10
    assert checks.ulp(1.0, ow.bfloat16) == 2.0**-7
    assert checks.ulp(0.0, ow.float16) == 2.0**-24  # the smallest subnormal
    assert checks.ulp(3e-8, ow.float16) == 2.0**-24
    assert checks.ulp(-1000.0, ow.float32) == np.spacing(np.float32(1000.0))


def test_compare_in_ulps_and_signed_zeros():
    f16 = ow.float16
    want = np.array([1e-6, 1.0, 0.0], np.float64)
    got = want.astype(np.float16)
    assert checks.compare(got, want, f16, 0, 0, ulps=1) is None
    off = got.copy()
    off[0] = 0  # a naive log1p(1e-6) in float16: within any rtol/atol of 1e-5, not within 1 ulp
    assert checks.compare(off, want, f16, 2e-3, 1e-5) is None
    bad = checks.compare(off, want, f16, 2e-3, 1e-5, ulps=1)
    assert bad["mismatched"] == 1 and bad["ulps"] == 1 and bad["examples"][0]["ulps"] > 1
    negzero = np.array([-0.0], np.float32)
    assert checks.compare(negzero, [0.0], ow.float32, 0, 0) is None
    assert checks.compare(negzero, [0.0], ow.float32, 0, 0, signed_zeros=True)["mismatched"] == 1


@pytest.mark.parametrize("dtype", [ow.int8, ow.uint8, ow.int16, ow.int32, ow.int64])
def test_limit_samples_hold_the_dtype_limits(dtype):
    info, samples = _samples("add.Tensor", dtype)
    found = probes.limit_samples(info, dtype, samples, np.random.default_rng(0))
    assert found
    values = np.concatenate([a.value.reshape(-1) for s in found for a in s.arrs()])
    limits = np.iinfo(dtype.numpy)
    assert values.max() >= limits.max - 2 and values.min() <= max(limits.min + 2, 0)
    assert probes.limit_samples(opdb.get("div.Tensor"), dtype, samples, np.random.default_rng(0)) == []


def test_precision_samples_reach_subnormals_and_state_ulps():
    info, samples = _samples("prims::log1p", ow.float16)
    (probe,) = probes.precision_samples(info, ow.float16, samples, np.random.default_rng(0))
    values = probe.arrs()[0].value.astype(np.float64)
    assert probe.ulps == probes.PRECISION_ULPS
    assert (np.abs(values[values != 0]) < 6.1e-5).any(), "subnormal arguments"
    assert probes.precision_samples(info, ow.float32, samples, np.random.default_rng(0)) == []


def test_every_indexing_op_of_the_database_gets_out_of_range_error_samples():
    covered = []
    for name in opdb.names():
        info = opdb.get(name)
        if info is None or info.variant is not None or probes.index_rule(info) is None:
            continue
        dtype = next(d for d in info.dtypes if d is None or d.is_floating_point) if info.dtypes else None
        info, samples = _samples(name, dtype)
        errors = probes.index_error_inputs(info, dtype, samples, np.random.default_rng(0))
        assert len(errors) == 2, name
        covered.append(name.split("::")[-1].split(".")[0])
    assert set(probes.INDEX_RULES) <= set(covered)


def _naive_log1p():
    return T.computed_in((ow.float16,), lambda x: np.log(1 + x))


def test_probe_failure_shows_evidence_and_replays(tmp_path):
    T.install("probe_log1p", {"prims::log1p": _naive_log1p()})
    report = conformance.run("probe_log1p", ops="prims::log1p")
    first = report.ops[0].first_failure
    assert first.dtype == "float16" and str(first.sample_index).startswith("precision")
    table = report.table()
    assert "tolerance 1.0 ulp" in table and "expected" in table and "actual" in table
    examples = [line for line in table.splitlines() if line.strip().startswith("[") and "expected" in line]
    assert 1 <= len(examples) <= 5
    path = tmp_path / "report.json"
    report.write_json(path)
    assert all(r.reproduced for r in replay(str(path)))


def _raises(kernel):
    def faulty(*args):
        raise RuntimeError("vendor kernel crashed")

    return faulty


def test_a_raising_kernel_shows_its_last_frames():
    T.install("probe_raises", {"prims::exp": _raises})
    report = conformance.run("probe_raises", ops="prims::exp")
    table = report.table()
    assert "traceback (last frames)" in table and "vendor kernel crashed" in table
    assert "faulty" in table  # the frame of the raising kernel


def test_an_undeclared_nondeterministic_kernel_fails_and_replays():
    T.install("probe_order", {"prims::sum": T.random_order_sum})
    report = conformance.run("probe_order", ops="prims::sum")
    first = report.ops[0].first_failure
    assert first.check == "determinism" and "registered deterministic" in first.message
    assert "run 1" in report.table()
    assert any(r.reproduced for r in replay(report.to_json()))  # nondeterminism need not show on every run


def test_a_kernel_registered_nondeterministic_may_differ_between_runs():
    T.install("probe_declared", {"prims::sum": T.random_order_sum}, nondeterministic=("prims::sum",))
    report = conformance.run("probe_declared", ops="prims::sum")
    assert report.ok, report.table()
    notes = [n for d in report.ops[0].dtypes for n in d.notes]
    assert any("registered deterministic=False" in n for n in notes)


@pytest.mark.parametrize("name", ["prims::prod", "prims::cummax", "prims::sort", "amax"])
def test_signed_zero_probes_hold_negative_zeros_and_no_positive_zero(name):
    info, samples = _samples(name, ow.float32)
    probe_list = probes.signed_zero_samples(info, ow.float32, samples, np.random.default_rng(1))
    assert len(probe_list) == 2
    for probe in probe_list:
        assert probe.signed_zeros
        values = np.concatenate([a.value.ravel() for a in probe.arrs() if a.dtype is ow.float32])
        zeros = values[values == 0]
        assert zeros.size and np.signbit(zeros).all(), "every zero is -0.0"
    signs = [np.sign(np.concatenate([a.value.ravel() for a in p.arrs() if a.dtype is ow.float32])) for p in probe_list]
    assert set(signs[0]) <= {-1.0, 0.0} and set(signs[1]) <= {1.0, 0.0}


@pytest.mark.parametrize("name", ["prims::sum", "prims::cumsum", "mean", "logsumexp", "prims::add"])
def test_additive_and_elementwise_ops_get_no_signed_zero_probe(name):
    info, samples = _samples(name, ow.float32)
    assert probes.signed_zero_samples(info, ow.float32, samples, np.random.default_rng(1)) == []


def test_nonfinite_comparison_asks_for_presence_not_positions():
    want = np.array([[np.nan, 0.5], [0.0, np.inf]])
    spread = np.full((2, 2), np.nan)  # PyTorch's matrix_exp: nan everywhere
    assert checks.compare(spread, want, ow.float64, 0, 0, nonfinite_only=True) is None
    elsewhere = np.array([[1.0, np.inf], [2.0, 3.0]])
    assert checks.compare(elsewhere, want, ow.float64, 0, 0, nonfinite_only=True) is None
    dropped = np.nan_to_num(want)  # nan -> 0, inf -> the largest float
    bad = checks.compare(dropped, want, ow.float64, 0, 0, nonfinite_only=True)
    assert bad["mismatched"] == 2
    assert checks.compare(np.ones((2, 2)), np.ones((2, 2)) * 7, ow.float64, 0, 0, nonfinite_only=True) is None


def test_nonfinite_probes_of_matrix_exp_reach_a_nonfinite_oracle():
    info, samples = _samples("prims::matrix_exp", ow.float64)
    probe_list = probes.nonfinite_samples(info, ow.float64, samples, np.random.default_rng(2))
    assert len(probe_list) == 2 and all(p.nonfinite_only for p in probe_list)
    held = [a.value for p in probe_list for a in p.arrs()]
    assert np.isnan(held[0]).sum() == 1 and np.isinf(held[1]).sum() == 1 and np.count_nonzero(held[1]) == 1


def test_contiguous_strides_ignore_size_one_dims():
    assert checks.contiguous_strides((2, 3, 4)) == (12, 4, 1)
    assert checks.contiguous_strides((1, 5, 1)) == (None, 1, None)
    checks.check_contiguous_outputs(ow.zeros(3, 4))
    with pytest.raises(checks.CheckFailure):
        checks.check_contiguous_outputs(ow.zeros(4, 3).t())


@pytest.mark.parametrize("dtype", [ow.float16, ow.bfloat16, ow.float32, ow.float64])
def test_special_values_hold_subnormals_the_largest_value_and_negative_nan(dtype):
    info = ow.finfo(dtype)
    values = probes._with_negative_nan(probes.special_values(dtype).astype(dtype.numpy)).astype(np.float64)
    tiny, big = float(info.tiny), float(info.max)
    smallest = tiny * float(info.eps)
    assert smallest in values and -smallest in values
    middle = values[(np.abs(values) > smallest) & (np.abs(values) < tiny)]
    assert (middle > 0).any() and (middle < 0).any()  # a subnormal inside the range, both signs
    assert big in values and -big in values
    nans = values[np.isnan(values)]
    assert nans.size == 2 and np.signbit(nans).tolist() == [False, True]  # nan and -nan
    assert {np.inf, -np.inf, 1.0} <= set(values[np.isfinite(values) | np.isinf(values)].tolist())
    assert big not in probes.special_values(dtype, with_max=False)


def test_special_probe_reaches_log1p_and_igamma_and_marks_subnormals():
    for name, dtype in (("prims::log1p", ow.float32), ("igamma", ow.float64), ("special_gammaincc", ow.bfloat16)):
        info, samples = _samples(name, dtype)
        probe = probes.special_samples(info, dtype, samples, np.random.default_rng(0))
        assert len(probe) == 1 and probe[0].subnormals and probe[0].signed_zeros, name
        held = np.concatenate([np.asarray(a.value, np.float64).reshape(-1) for a in probe[0].arrs()])
        finite = held[np.isfinite(held) & (held != 0)]
        assert (np.abs(finite) < float(ow.finfo(dtype).tiny)).any(), name


def test_special_probe_leaves_out_the_largest_value_where_declared():
    info, samples = _samples("lerp.Tensor", ow.float32)
    (probe,) = probes.special_samples(info, ow.float32, samples, np.random.default_rng(0))
    held = np.concatenate([np.asarray(a.value, np.float64).reshape(-1) for a in probe.arrs()])
    assert float(np.finfo(np.float32).max) not in held and probes._matches("lerp.Tensor", probes.NO_MAX)


def test_a_flushed_subnormal_result_fails_whatever_the_atol():
    f32 = ow.float32
    want = np.array([1e-40, -3e-42, 2.0, 0.0])
    got = want.astype(np.float32)
    assert checks.compare(got, want, f32, 1e-5, 1e-5, subnormals=True) is None
    flushed = got.copy()
    flushed[:2] = [0.0, -0.0]
    assert checks.compare(flushed, want, f32, 1e-5, 1e-5) is None  # the op's atol hides it
    bad = checks.compare(flushed, want, f32, 1e-5, 1e-5, subnormals=True)
    assert bad["mismatched"] == 2
    near = got.copy()
    near[0] = np.nextafter(np.nextafter(got[0], np.float32(1)), np.float32(1))  # two subnormal ulps off: allowed
    assert checks.compare(near, want, f32, 1e-5, 1e-5, subnormals=True) is None
    near[0] = np.nextafter(near[0], np.float32(1))  # three: not
    assert checks.compare(near, want, f32, 1e-5, 1e-5, subnormals=True)["mismatched"] == 1


def test_zero_sign_of_a_value_that_merely_underflows_is_free_in_the_special_probe():
    f64 = ow.float64
    # 0 + 0.25 * -5e-324: exactly -1.2e-324, which rounds to -0.0 fused and to +0.0 with the product rounded first
    exact = np.array([np.longdouble("-1.2e-324")])  # the lerp oracle computes in long double where it is wider
    if exact[0] == 0:
        pytest.skip("long double is no wider than double here")
    assert checks.compare(np.array([0.0]), exact, f64, 0, 0, signed_zeros=True, subnormals=True) is None
    # an exact zero keeps its sign checked
    bad = checks.compare(np.array([0.0]), [-0.0], f64, 0, 0, signed_zeros=True, subnormals=True)
    assert bad["mismatched"] == 1


def test_negative_nan_survives_the_json_report():
    from opweave_conformance.tensors import decode_sample, encode_sample

    info, samples = _samples("prims::abs", ow.float64)
    (probe,) = probes.special_samples(info, ow.float64, samples, np.random.default_rng(0))
    back = decode_sample(encode_sample(probe))
    a, b = probe.arrs()[0].value, back.arrs()[0].value
    assert back.subnormals and np.array_equal(np.signbit(a), np.signbit(b)) and np.array_equal(np.isnan(a), np.isnan(b))
