"""Per-signature plans (``opweave._plans``): replay equals the decomposition, plans are dropped when
registrations or modes change what they called, and ``OPWEAVE_CHECK_PLANS`` catches a wrong replay.

Expected values come from NumPy formulas written here; "replay equals decomposition" is checked
bit for bit against the same call with plans turned off.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import opweave
import opweave.nn.functional as F
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from opweave import _plans, library, ops

DTYPES = [np.float32, np.float64, np.int64, np.int32, np.float16, np.bool_]


@pytest.fixture
def plans_off_after():
    """Leave plans on and checking off after a test that changes them."""
    yield
    _plans.set_enabled(True)
    _plans.set_check(False)


def arrays(dtype, shape):
    if np.issubdtype(dtype, np.floating):
        elements = st.floats(-100, 100, allow_nan=False, width=16 if dtype == np.float16 else 32)
    elif dtype == np.bool_:
        elements = st.booleans()
    else:
        elements = st.integers(-50, 50)
    return hnp.arrays(dtype, shape, elements=elements)


def as_tensor(array, transpose: bool):
    """``array`` as a tensor; ``transpose``: a non-contiguous view with the same values."""
    if transpose and array.ndim >= 2:
        return opweave.tensor(np.ascontiguousarray(array.swapaxes(-1, -2))).transpose(-1, -2)
    return opweave.tensor(array)


def bits(t) -> bytes:
    return np.ascontiguousarray(t.numpy()).tobytes()


def unplanned(fn):
    _plans.set_enabled(False)
    try:
        return fn()
    finally:
        _plans.set_enabled(True)


CALLS = {
    "a * 2.5": lambda a, b: a * 2.5,
    "a + 1": lambda a, b: a + 1,
    "3 - a": lambda a, b: 3 - a,
    "a + b": lambda a, b: a + b,
    "a * b": lambda a, b: a * b,
    "add alpha": lambda a, b: opweave.add(a, b, alpha=2),
    "a > b": lambda a, b: a > b,
    "a == 1": lambda a, b: a == 1,
    "where": lambda a, b: opweave.where(a > b, a, b),
    "maximum": lambda a, b: opweave.maximum(a, b),
    "abs": lambda a, b: a.abs(),
    "neg sum": lambda a, b: (-a).sum(0),
    "cat": lambda a, b: opweave.cat([a, b]),
    "stack": lambda a, b: opweave.stack([a, b], 1),
    "t": lambda a, b: a.transpose(0, -1),
    "reshape": lambda a, b: a.reshape(-1),
    "clone": lambda a, b: a.clone(),
    "unsqueeze": lambda a, b: a.unsqueeze(0),
}


@given(
    st.sampled_from(DTYPES),
    st.sampled_from(sorted(CALLS)),
    hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
    st.booleans(),
    st.data(),
)
def test_replay_equals_decomposition(dtype, name, shape, transpose, data):
    left, right = data.draw(arrays(dtype, shape)), data.draw(arrays(dtype, shape))
    a, b = as_tensor(left, transpose), as_tensor(right, transpose)
    call = CALLS[name]
    try:
        reference = unplanned(lambda: call(a, b))
    except (TypeError, RuntimeError, ValueError) as exc:  # e.g. bool - bool: the planned call raises the same
        with pytest.raises(type(exc)):
            call(a, b)
        with pytest.raises(type(exc)):
            call(a, b)
        return
    first, second = call(a, b), call(a, b)  # the first call records, the second replays
    for got in (first, second):
        assert got.dtype is reference.dtype and got.shape == reference.shape
        assert got.stride() == reference.stride() or got.numel() <= 1
        assert bits(got) == bits(reference)


@given(hnp.array_shapes(min_dims=1, max_dims=3, max_side=5), st.floats(-4, 4, allow_nan=False, width=32), st.data())
def test_planned_scalar_arithmetic_matches_numpy(shape, scalar, data):
    x = data.draw(arrays(np.float32, shape))
    a = opweave.tensor(x)
    for _ in range(2):
        np.testing.assert_array_equal((a * scalar).numpy(), x * np.float32(scalar))
        np.testing.assert_array_equal((a - scalar).numpy(), x - np.float32(scalar))
        np.testing.assert_array_equal((a > scalar).numpy(), x > np.float32(scalar))
        with np.errstate(all="ignore"):
            expected = np.maximum(x, 0) + np.float32(scalar)
        np.testing.assert_array_equal((F.relu(a) + scalar).numpy(), expected)


def test_scalar_promotion_keeps_tensor_dtype(restore_default_dtype):
    a = opweave.tensor(np.arange(4, dtype=np.float32))
    assert (a * 2.0).dtype is opweave.float32
    assert (a + 1).dtype is opweave.float32
    assert (a > 0.5).dtype is opweave.bool
    i = opweave.tensor(np.arange(4, dtype=np.int64))
    assert (i + 1).dtype is opweave.int64
    assert (i * 2.5).dtype is opweave.float32
    np.testing.assert_array_equal((i * 2.5).numpy(), np.arange(4) * np.float32(2.5))
    opweave.set_default_dtype(opweave.float64)  # the same signature under another default dtype: another plan
    assert (i * 2.5).dtype is opweave.float64
    assert (i * 2.5).dtype is opweave.float64
    b = opweave.tensor(np.array([True, False]))
    assert (b + True).dtype is opweave.bool and (b + 1).dtype is opweave.int64


def test_signed_zero_and_nan_scalars_are_distinguished():
    a = opweave.tensor(np.array([1.0, -1.0], dtype=np.float32))
    for _ in range(2):
        assert np.signbit((a * 0.0).numpy()).tolist() == [False, True]
        assert np.signbit((a * -0.0).numpy()).tolist() == [True, False]
        assert np.isnan((a * float("nan")).numpy()).all()


def test_plan_is_an_inspectable_straight_line_program():
    before = _plans.plans_of(ops.add.Tensor)  # other tests' plans (other key sets, other signatures)
    a = opweave.tensor(np.arange(14, dtype=np.float32).reshape(2, 7))  # a signature no other test uses
    i = opweave.tensor(np.arange(7, dtype=np.int64))
    a + i
    a + i
    plans = [p for p in _plans.plans_of(ops.add.Tensor) if not any(p is q for q in before)]
    assert plans, "add.Tensor of float32 + int64 was not planned"
    plan = plans[-1]
    names = [step.op.name for step in plan.steps]
    assert "prims::add" in names and "prims::convert_element_type" in names
    assert "replay" in plan.source and "prims::add" in str(plan)


def test_registration_drops_plans():
    # lgamma's float32 CPU call is planned (sigmoid, exp... have direct CPU kernels that skip their prims)
    a = opweave.tensor(np.array([0.5, 1.5], dtype=np.float32))
    expected = [math.lgamma(0.5), math.lgamma(1.5)]
    np.testing.assert_allclose(opweave.lgamma(a).numpy(), expected, rtol=1e-6)
    opweave.lgamma(a)  # replayed from a plan that calls prims::lgamma
    assert any(s.op is ops.prims.lgamma.default for p in _plans.plans_of(ops.lgamma.default) for s in p.steps)
    lib = library.Library("test_plans", "IMPL")
    try:
        lib.impl(ops.prims.lgamma.default, lambda x: opweave.ones_like(x), "cpu")
        np.testing.assert_array_equal(opweave.lgamma(a).numpy(), [1.0, 1.0])
        np.testing.assert_array_equal(opweave.lgamma(a).numpy(), [1.0, 1.0])
    finally:
        lib.close()
    np.testing.assert_allclose(opweave.lgamma(a).numpy(), expected, rtol=1e-6)


def test_modes_select_other_plans():
    a = opweave.tensor(np.ones((2, 2), dtype=np.float32))
    w = opweave.tensor(np.ones((2, 2), dtype=np.float32), requires_grad=True)
    F.linear(a, w)
    assert F.linear(a, w).requires_grad
    with opweave.no_grad():
        assert not F.linear(a, w).requires_grad
        assert not F.linear(a, w).requires_grad
    with opweave.inference_mode():
        assert not (a * w).requires_grad
    assert F.linear(a, w).requires_grad
    with opweave.autocast("cpu", dtype=opweave.bfloat16):
        assert F.linear(a, w).dtype is opweave.bfloat16
        assert F.linear(a, w).dtype is opweave.bfloat16
    assert F.linear(a, w).dtype is opweave.float32


def test_deterministic_mode_is_part_of_the_signature():
    a = opweave.tensor(np.ones(4, dtype=np.float32))
    index = opweave.tensor(np.array([0, 1, 1, 3]))
    for _ in range(2):
        np.testing.assert_array_equal(opweave.zeros(4).index_add(0, index, a).numpy(), [1, 2, 0, 1])
    opweave.use_deterministic_algorithms(True)
    try:
        for _ in range(2):
            np.testing.assert_array_equal(opweave.zeros(4).index_add(0, index, a).numpy(), [1, 2, 0, 1])
    finally:
        opweave.use_deterministic_algorithms(False)


def test_check_plans_catches_a_wrong_replay(plans_off_after):
    a = opweave.tensor(np.arange(1, 5, dtype=np.float32))
    opweave.lgamma(a)
    opweave.lgamma(a)
    plan = _plans.plans_of(ops.lgamma.default)[-1]
    honest = plan.run
    plan.run = lambda *args: honest(*args) * 2  # a planted bug: the replay doubles the result
    try:
        _plans.set_check(True)
        with pytest.raises(_plans.PlanCheckError, match="values differ"):
            opweave.lgamma(a)
        plan.run = lambda *args: honest(*args).to(opweave.float64)
        with pytest.raises(_plans.PlanCheckError, match="float64"):
            opweave.lgamma(a)
        plan.run = honest
        np.testing.assert_allclose(opweave.lgamma(a).numpy(), [math.lgamma(x) for x in (1, 2, 3, 4)], atol=1e-6)
    finally:
        plan.run = honest


def test_check_plans_restores_inputs_of_inplace_ops(plans_off_after):
    _plans.set_check(True)
    a = opweave.tensor(np.zeros(3, dtype=np.float32))
    for _ in range(3):
        a.add_(1)
    np.testing.assert_array_equal(a.numpy(), [3, 3, 3])


def test_inplace_out_and_aliasing():
    a = opweave.tensor(np.array([1.0, 2.0, 3.0], dtype=np.float32))
    b = opweave.tensor(np.array([10.0, 20.0, 30.0], dtype=np.float32))
    a.mul_(b)
    a.mul_(b)
    np.testing.assert_array_equal(a.numpy(), [100, 800, 2700])
    a.mul_(a)  # the same tensor twice: another signature
    np.testing.assert_array_equal(a.numpy(), [1e4, 640000, 2700.0**2])
    out = opweave.empty(3)
    for _ in range(2):
        r = opweave.sub(b, 1, out=out)
        assert r is out
        np.testing.assert_array_equal(out.numpy(), [9, 19, 29])
    x = opweave.tensor(np.arange(6, dtype=np.float32))
    opweave.add(x[:3], 1, out=opweave.empty(3))
    opweave.add(x[:3], 1, out=opweave.empty(3))
    with pytest.raises(RuntimeError, match="single memory location"):
        opweave.add(x[:3], 1, out=x[1:4])  # partial overlap: same signature as the planned calls, still an error
    v = x.view(2, 3)
    v.view(2, 3).add_(1)
    np.testing.assert_array_equal(x.numpy(), np.arange(6) + 1)


def test_random_ops_advance_the_generator():
    a = opweave.ones(64)
    opweave.manual_seed(3)
    first = [F.dropout(a, 0.5).numpy().copy() for _ in range(3)]
    opweave.manual_seed(3)
    again = [F.dropout(a, 0.5).numpy().copy() for _ in range(3)]
    assert not np.array_equal(first[0], first[1])
    for x, y in zip(first, again):
        np.testing.assert_array_equal(x, y)
    assert not _plans.plans_of(ops.dropout.default)


def test_data_dependent_shapes_are_not_planned():
    for values in ([0.0, 1.0, 2.0, 0.0], [3.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]):
        a = opweave.tensor(np.array(values, dtype=np.float32))
        np.testing.assert_array_equal(opweave.nonzero(a).numpy(), np.argwhere(np.array(values)))
        np.testing.assert_array_equal(a[a > 0].numpy(), np.array(values)[np.array(values) > 0])
        np.testing.assert_array_equal(opweave.unique(a).numpy(), np.unique(values))


def test_a_bad_call_raises_after_a_good_one_was_planned():
    a = opweave.tensor(np.arange(4, dtype=np.float32))
    good = opweave.tensor(np.array([0, 3]))
    bad = opweave.tensor(np.array([0, 4]))
    for _ in range(2):
        np.testing.assert_array_equal(a[good].numpy(), [0, 3])
    with pytest.raises(IndexError):
        a[bad]
    for _ in range(2):
        with pytest.raises(RuntimeError):
            a.view(3, 3)


def test_a_decomposition_that_warns_is_not_planned():
    out = opweave.empty(2)
    x = opweave.tensor(np.ones(3, dtype=np.float32))
    for _ in range(2):
        out = opweave.empty(2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            opweave.add(x, 1, out=out)
        assert any("resized" in str(w.message) for w in caught)
        np.testing.assert_array_equal(out.numpy(), [2, 2, 2])


@given(st.integers(0, 8), st.integers(0, 8))
def test_views_of_inputs_at_other_storage_offsets(first, second):
    base = np.arange(24, dtype=np.float32)
    x = opweave.tensor(base)
    for start in (first, second, first):
        np.testing.assert_array_equal(x[start : start + 16].view(2, 8).numpy(), base[start : start + 16].reshape(2, 8))
        np.testing.assert_array_equal(
            x[start : start + 16].view(4, 4).t().numpy(), base[start : start + 16].reshape(4, 4).T
        )


SCALAR_OPS = ["add.Tensor", "sub.Tensor", "mul.Tensor", "div.Tensor", "eq.Tensor", "ne.Tensor", "lt.Tensor"]
SCALAR_OPS += ["le.Tensor", "gt.Tensor", "ge.Tensor"]


@given(
    st.sampled_from([np.float32, np.float64]),
    st.sampled_from(SCALAR_OPS),
    hnp.array_shapes(min_dims=0, max_dims=2, max_side=4),
    st.one_of(st.floats(), st.integers(-(2**63), 2**63 - 1), st.booleans()),
    st.booleans(),
    st.data(),
)
def test_python_scalar_operands_match_the_decomposition(dtype, name, shape, scalar, reflected, data):
    """The direct kernels' scalar path (no tensor for the scalar) gives the decomposition's bits and dtype."""
    x = data.draw(hnp.arrays(dtype, shape, elements=st.floats(width=32)))
    a = opweave.tensor(x)
    op = ops.lookup(name)
    s = opweave._tensor.wrap_scalar(scalar)
    args = (s, a) if reflected else (a, s)
    rest = (1,) if name in ("add.Tensor", "sub.Tensor") else ()
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")  # the scalar path must not warn where the decomposition does not
        got = op(*args)
        expected = op.decomposition(*args, *rest)
    assert got.dtype is expected.dtype and got.shape == expected.shape
    assert bits(got) == bits(expected)
    assert opweave.dispatch.explain(op, a, 2.0).reasons[-1] == "Dense×cpu: kernel from cpu"


def test_internal_buffers_are_fresh_on_every_replay():
    """A decomposition that fills a buffer it allocated (no folding of factories or written memory)."""
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = rng.standard_normal((3, 3)).astype(np.float32)
        lu, pivots = opweave.linalg.lu_factor(opweave.tensor(x))
        p, low, up = opweave.lu_unpack(lu, pivots)
        np.testing.assert_allclose((p @ low @ up).numpy(), x, rtol=1e-5, atol=1e-5)
        b = rng.random(5) > 0.5
        out = opweave.empty(4, dtype=opweave.bool)
        opweave.diff(opweave.tensor(b), out=out)
        np.testing.assert_array_equal(out.numpy(), np.diff(b))
