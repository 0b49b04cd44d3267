"""Factory ops against NumPy: dtype inference, defaults, layouts, ranges, eye, triangle indices, meta, out=, errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import opweave as ow
import pytest
from _shape_support import ALL_DTYPES, assert_same, dtypes, layouts, make, seeds, shapes
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from opweave import ops

SETTINGS = settings(max_examples=25, deadline=None)

FILLS = st.one_of(
    st.booleans(), st.integers(-100, 100), st.floats(-1e3, 1e3, allow_nan=False), st.complex_numbers(max_magnitude=100)
)


def inferred_dtype(value):
    """torch.full's dtype for a Python fill value."""
    if isinstance(value, bool):
        return ow.bool
    if isinstance(value, int):
        return ow.int64
    if isinstance(value, complex):
        return ow.complex128 if ow.get_default_dtype() is ow.float64 else ow.complex64
    return ow.get_default_dtype()


# -- empty / zeros / ones / full --------------------------------------------------------------


@SETTINGS
@given(shapes(), st.none() | dtypes, st.sampled_from(["cpu", "meta"]))
def test_empty_zeros_ones(shape, dtype, device):
    want = dtype or ow.get_default_dtype()
    for name, value in (("empty", None), ("zeros", 0), ("ones", 1)):
        t = getattr(ow, name)(shape, dtype=dtype, device=device)
        assert t.shape == shape and t.dtype is want and t.device.type == device
        if t.numel():
            assert t.stride() == ow.empty(shape, device="meta").stride()
        if value is not None and device == "cpu":
            assert_same(t, np.full(shape, value, want.numpy))
    assert ow.zeros(*shape).shape == shape if shape else True


@SETTINGS
@given(shapes(), FILLS, st.none() | dtypes)
def test_full_infers_dtype_like_torch(shape, value, dtype):
    want = dtype or inferred_dtype(value)
    if isinstance(value, complex) and not want.is_complex and value.imag != 0:
        with pytest.raises(TypeError):
            ow.full(shape, value, dtype=dtype)
        return
    if (
        want.kind in ("int", "uint")
        and not ow.iinfo(want).min <= int(value.real if isinstance(value, complex) else value) <= ow.iinfo(want).max
    ):
        with pytest.raises(ValueError, match="overflow"):
            ow.full(shape, value, dtype=dtype)
        return
    t = ow.full(shape, value, dtype=dtype)
    assert t.dtype is want
    with np.errstate(invalid="ignore", over="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = np.full(shape, value if want.is_complex or not isinstance(value, complex) else value.real)
        if want.kind in ("int", "uint") and isinstance(value, float):
            expected = np.trunc(expected)
        assert_same(t, expected.astype(want.numpy))
    m = ow.full(shape, value, dtype=dtype, device="meta")
    assert m.shape == shape and m.dtype is want


def test_full_default_dtype_follows_set_default_dtype(restore_default_dtype):
    ow.set_default_dtype(ow.float64)
    assert ow.full([2], 1.5).dtype is ow.float64
    assert ow.full([2], 1j).dtype is ow.complex128
    assert ow.zeros(2).dtype is ow.float64
    assert ow.arange(0.5).dtype is ow.float64
    assert ow.linspace(0, 1, 3).dtype is ow.float64
    assert ow.scalar_tensor(1).dtype is ow.float64
    assert ow.full([2], 1).dtype is ow.int64


def test_default_device_context():
    with ow.device("meta"):
        for t in (ow.zeros(2), ow.empty(2), ow.full([2], 1.0), ow.arange(3), ow.eye(2), ow.linspace(0, 1, 4)):
            assert t.device.type == "meta"
    assert ow.zeros(2).device.type == "cpu"


@SETTINGS
@given(shapes(), dtypes, layouts, seeds, st.none() | dtypes, FILLS.filter(lambda v: not isinstance(v, complex)))
def test_like_ops(shape, dtype, layout, seed, dtype_arg, value):
    t, a = make(np.random.default_rng(seed), shape, dtype, layout)
    want = dtype_arg or dtype
    assume(not (want.kind in ("int", "uint") and not ow.iinfo(want).min <= value <= ow.iinfo(want).max))
    dense = t.is_contiguous() or layout == "transposed"
    for name, fill in (("empty_like", None), ("zeros_like", 0), ("ones_like", 1), ("full_like", value)):
        args = (t,) if fill is None or name != "full_like" else (t, fill)
        r = getattr(ops, name)(*args, dtype=dtype_arg)
        assert r.shape == t.shape and r.dtype is want and r.device == t.device
        if dense and r.numel():
            assert r.stride() == t.stride()  # preserve_format keeps a dense layout
        if fill is not None:
            with np.errstate(invalid="ignore", over="ignore"):
                expected = np.trunc(fill) if want.kind in ("int", "uint") and isinstance(fill, float) else fill
                assert_same(r, np.full(shape, expected).astype(want.numpy))
        m = getattr(ops, name)(*args, dtype=dtype_arg, device="meta")
        assert m.device.type == "meta" and m.shape == t.shape
    c = ops.empty_like(t, memory_format="contiguous_format")
    assert c.is_contiguous() or not c.numel()
    _ = a


def test_like_ops_layouts_by_hand():
    t = ow.zeros([3, 4]).mT
    assert ops.empty_like(t).stride() == (1, 4)
    assert ops.zeros_like(t).stride() == (1, 4)
    assert ops.full_like(t, 2.0).stride() == (1, 4)
    assert ops.empty_like(t, memory_format="contiguous_format").stride() == (3, 1)
    x = ow.zeros([2, 3, 4, 5])
    assert ops.empty_like(x, memory_format="channels_last").stride() == (60, 1, 15, 3)
    assert ow.empty([2, 3, 4, 5], memory_format="channels_last").stride() == (60, 1, 15, 3)
    assert ow.empty([2, 3, 4, 5, 6], memory_format="channels_last_3d").stride() == (360, 1, 90, 18, 3)
    sliced = ow.zeros([4, 6])[:, ::2]
    assert ops.empty_like(sliced).stride() == (3, 1)
    assert ow.empty_strided([2, 3], [1, 2]).stride() == (1, 2)
    assert ops.empty_permuted([2, 3, 4], [2, 0, 1]).stride() == (3, 1, 6)


@SETTINGS
@given(shapes(), dtypes, shapes(), st.none() | dtypes, FILLS.filter(lambda v: not isinstance(v, complex)))
def test_new_ops(shape, dtype, size, dtype_arg, value):
    t = ow.zeros(shape, dtype=dtype)
    want = dtype_arg or dtype
    assume(not (want.kind in ("int", "uint") and not ow.iinfo(want).min <= value <= ow.iinfo(want).max))
    for name, args, fill in (
        ("new_empty", (size,), None),
        ("new_zeros", (size,), 0),
        ("new_ones", (size,), 1),
        ("new_full", (size, value), value),
    ):
        r = getattr(t, name)(*args, dtype=dtype_arg)
        assert r.shape == size and r.dtype is want and r.device == t.device
        if fill is not None:
            with np.errstate(invalid="ignore", over="ignore"):
                expected = np.trunc(fill) if want.kind in ("int", "uint") and isinstance(fill, float) else fill
                assert_same(r, np.full(size, expected).astype(want.numpy))
    strided = ops.new_empty_strided(t, [2, 3], [1, 2])
    assert strided.stride() == (1, 2) and strided.dtype is dtype
    meta = ops.new_zeros(ow.empty([1], device="meta"), size)
    assert meta.device.type == "meta" and meta.shape == size


def test_factory_out_variants():
    out = ow.empty([5])
    with pytest.warns(UserWarning, match="resized"):
        assert ow.zeros([2, 3], out=out) is out
    assert_same(out, np.zeros((2, 3), np.float32))
    out = ow.empty([0], dtype=ow.int64)
    assert ow.arange(4, out=out) is out
    assert_same(out, np.arange(4))
    out = ow.empty([3])
    ops.full([3], 7, out=out)
    assert_same(out, np.full(3, 7, np.float32))
    # without dtype=, a factory makes its result in out='s dtype, as PyTorch: 1.5 truncates into int64
    out = ow.empty([3], dtype=ow.int64)
    assert ops.full([3], 1.5, out=out) is out
    assert_same(out, np.full(3, 1, np.int64))
    out = ow.empty([0], dtype=ow.int64)
    assert ow.arange(0, 10, 1.5, out=out) is out  # computed in int64: step 1.5 truncates to 1
    assert_same(out, np.arange(10, dtype=np.int64))
    out = ow.empty([0], dtype=ow.float64)
    assert_same(ow.linspace(0, 1, 3, out=out), np.linspace(0, 1, 3))
    with pytest.raises(ValueError, match="step must be nonzero"):  # 0.5 truncates to 0 in int64
        ow.arange(0, 64, 0.5, out=ow.empty([0], dtype=ow.int64))
    out = ow.full([2], 9, dtype=ow.int64)
    with pytest.raises(RuntimeError, match="dtype"):  # an explicit dtype= must be out='s
        ow.zeros([2], dtype=ow.float32, out=out)
    assert_same(out, np.full(2, 9, np.int64))


def test_scalar_tensor():
    assert ow.scalar_tensor(3).dtype is ow.float32
    assert_same(ow.scalar_tensor(3), np.float32(3))
    assert_same(ow.scalar_tensor(True, dtype=ow.bool), np.bool_(True))
    assert ow.scalar_tensor(2.5, device="meta").shape == ()
    with pytest.raises(TypeError):
        ow.scalar_tensor(1 + 2j)


# -- ranges ----------------------------------------------------------------------------------


NUM = st.integers(-20, 20) | st.floats(-20, 20, allow_nan=False).map(lambda x: round(x, 2))


@SETTINGS
@given(
    NUM, NUM, NUM.filter(lambda s: s != 0), st.none() | st.sampled_from([ow.int64, ow.int32, ow.float32, ow.float64])
)
def test_arange(start, end, step, dtype):
    want = dtype or (ow.int64 if all(isinstance(v, int) for v in (start, end, step)) else ow.get_default_dtype())
    integral = want.kind == "int"
    s, e, st_ = (int(start), int(end), int(step)) if integral else (start, end, step)
    if st_ == 0:
        with pytest.raises(ValueError, match="step must be nonzero"):
            ow.arange(start, end, step, dtype=dtype)
        return
    if (st_ > 0 and e < s) or (st_ < 0 and e > s):
        with pytest.raises(ValueError, match="inconsistent with step sign"):
            ow.arange(start, end, step, dtype=dtype)
        return
    length = math.ceil((e - s) / st_) if want is ow.int64 else math.ceil((float(end) - float(start)) / float(step))
    assume(length < 10_000)
    t = ow.arange(start, end, step, dtype=dtype)
    assert t.dtype is want and t.shape == (length,)
    if integral:
        assert_same(t, (s + st_ * np.arange(length)).astype(want.numpy))
    else:
        np.testing.assert_allclose(
            t.numpy(), (start + step * np.arange(length)).astype(want.numpy), rtol=1e-6, atol=1e-5
        )
    m = ow.arange(start, end, step, dtype=dtype, device="meta")
    assert m.shape == t.shape and m.dtype is want


def test_arange_against_numpy_by_hand():
    assert_same(ow.arange(5), np.arange(5))
    assert_same(ow.arange(2, 7), np.arange(2, 7))
    assert_same(ow.arange(10, 0, -3), np.arange(10, 0, -3))
    assert_same(ow.arange(0, 1, 0.1, dtype=ow.float64), np.arange(0, 1, 0.1))
    assert ow.arange(0, 1, 0.1).shape == (10,)
    assert ow.arange(1, 4, 0.5).dtype is ow.float32
    assert ow.arange(4.0).dtype is ow.float32
    assert ow.arange(0, 5, dtype=ow.float16).dtype is ow.float16
    assert_same(ow.arange(-3, 3, dtype=ow.bfloat16), np.arange(-3, 3).astype(ow.bfloat16.numpy))


ARANGE_ERRORS = [
    (lambda: ow.arange(0, 5, 0), ValueError, "step must be nonzero"),
    (lambda: ow.arange(5, 0, 1), ValueError, "inconsistent with step sign"),
    (lambda: ow.arange(0, float("inf")), ValueError, "unsupported range"),
    (lambda: ow.arange(0, 2.5, 0.5, dtype=ow.int64), ValueError, "step must be nonzero"),  # torch truncates the step
    (lambda: ow.arange(3, dtype=ow.bool), TypeError, "not implemented"),
    (lambda: ow.arange(1j), TypeError, "complex"),
]


@pytest.mark.parametrize(("fn", "exc", "match"), ARANGE_ERRORS)
def test_arange_errors(fn, exc, match):
    with pytest.raises(exc, match=match):
        fn()


def torch_linspace(start, end, steps, dtype):
    """torch's linspace formula in NumPy: from ``start`` below ``steps // 2``, from ``end`` above (float64)."""
    if dtype.kind in ("int", "uint"):
        start, end = int(start), int(end)
    if steps == 1:
        return np.array([start], dtype=np.complex128 if dtype.is_complex else np.float64)
    i = np.arange(steps)
    step = (end - start) / (steps - 1) if steps > 1 else 0
    return np.where(i < steps // 2, start + step * i, end - step * (steps - 1 - i))


@SETTINGS
@given(
    NUM,
    NUM,
    st.integers(0, 30),
    st.none() | st.sampled_from([ow.float32, ow.float64, ow.int64, ow.int16, ow.complex64]),
)
def test_linspace_logspace(start, end, steps, dtype):
    want = dtype or ow.get_default_dtype()
    t = ow.linspace(start, end, steps, dtype=dtype)
    assert t.dtype is want and t.shape == (steps,)
    exact = torch_linspace(start, end, steps, want)
    with np.errstate(invalid="ignore"):
        assert_same(t, exact.astype(want.numpy))
    if want.is_floating_point and steps:
        np.testing.assert_allclose(t.numpy(), np.linspace(start, end, steps).astype(want.numpy), rtol=1e-6, atol=1e-5)
        assert t.numpy()[0] == np.float32(start) if want is ow.float32 else t.numpy()[0] == start
    lo, hi = start / 10, end / 10
    g = ow.logspace(lo, hi, steps, 2.0, dtype=dtype)
    assert g.dtype is want and g.shape == (steps,)
    with np.errstate(invalid="ignore", over="ignore"):
        assert_same(g, (2.0 ** torch_linspace(lo, hi, steps, want)).astype(want.numpy))
    if want.is_floating_point:
        np.testing.assert_allclose(g.numpy(), np.logspace(lo, hi, steps, base=2.0).astype(want.numpy), rtol=1e-5)
    assert ow.linspace(start, end, steps, dtype=dtype, device="meta").shape == (steps,)


def test_linspace_by_hand():
    assert_same(ow.linspace(0, 1, 5), np.linspace(0, 1, 5, dtype=np.float32))
    assert_same(ow.linspace(0.5, 9.7, 5, dtype=ow.int64), [0, 2, 4, 6, 9])  # torch: ends truncated first
    assert ow.linspace(0, 1j, 3).dtype is ow.complex64
    np.testing.assert_allclose(ow.logspace(0, 3, 4).numpy(), [1, 10, 100, 1000])
    with pytest.raises(ValueError, match="non-negative"):
        ow.linspace(0, 1, -1)


# -- eye, triangle indices -----------------------------------------------------------------------


@SETTINGS
@given(st.integers(0, 6), st.none() | st.integers(0, 6), st.none() | dtypes)
def test_eye(n, m, dtype):
    t = ow.eye(n, dtype=dtype) if m is None else ow.eye(n, m, dtype=dtype)
    want = dtype or ow.get_default_dtype()
    assert_same(t, np.eye(n, m).astype(want.numpy), want)
    assert ow.eye(n, m if m is not None else n, device="meta").shape == (n, m if m is not None else n)
    out = ow.empty([0], dtype=want)
    assert ops.eye(n, n if m is None else m, dtype=want, out=out) is out


@SETTINGS
@given(st.integers(0, 6), st.integers(0, 6), st.integers(-7, 7), st.sampled_from([ow.int64, ow.int32]))
def test_triangle_indices(row, col, offset, dtype):
    for name, np_fn in (("tril_indices", np.tril_indices), ("triu_indices", np.triu_indices)):
        got = getattr(ow, name)(row, col, offset, dtype=dtype)
        assert_same(got, np.stack(np_fn(row, offset, col)).astype(dtype.numpy).reshape(2, -1), dtype)
        assert getattr(ow, name)(row, col, offset, dtype=dtype, device="meta").shape == got.shape


def test_triangle_indices_default_dtype():
    assert ow.tril_indices(3, 3).dtype is ow.int64


CREATION_ERRORS = [
    (lambda: ow.zeros([2, -1]), ValueError, "negative dimension"),
    (lambda: ow.empty([-1]), ValueError, "negative dimension"),
    (lambda: ow.empty([2], layout="sparse_coo"), NotImplementedError, "layout"),
    (lambda: ow.empty([2, 3], memory_format="channels_last"), ValueError, "4-d"),
    (lambda: ow.empty([2], memory_format="preserve_format"), ValueError, "preserve"),
    (lambda: ow.empty([2], memory_format="bogus"), ValueError, "unknown memory format"),
    (lambda: ow.empty_strided([2, 3], [1]), ValueError, "mismatch in length"),
    (lambda: ops.empty_permuted([2, 3], [0, 0]), ValueError, "permutation"),
    (lambda: ow.full([2], 300, dtype=ow.uint8), ValueError, "overflow"),
    (lambda: ow.full([2], 1e10, dtype=ow.float16), ValueError, "overflow"),
    (lambda: ow.full([2], 1 + 1j, dtype=ow.float32), TypeError, "float32"),
    (lambda: ow.eye(-1), ValueError, "n must be greater or equal to 0"),
    (lambda: ow.eye(2, -1), ValueError, "m must be greater or equal to 0"),
    (lambda: ow.tril_indices(-1, 2, 0, dtype=ow.int64), ValueError, "row must be non-negative"),
    (lambda: ow.triu_indices(2, 2, 0, dtype=ow.float32), TypeError, "not implemented"),
    (lambda: ow.zeros([2], device="nonexistent"), RuntimeError, "nonexistent"),
]


@pytest.mark.parametrize(("fn", "exc", "match"), CREATION_ERRORS)
def test_creation_errors(fn, exc, match):
    with pytest.raises(exc, match=match):
        fn()


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_factory_on_meta(dtype):
    kw = {"dtype": dtype, "device": "meta"}
    like = ow.empty([2, 3], **kw)
    made = [
        ow.empty([2, 3], **kw),
        ow.zeros([2, 3], **kw),
        ow.ones([2, 3], **kw),
        ow.full([2, 3], 1, **kw),
        ops.empty_strided([2, 3], [3, 1], **kw),
        ops.empty_permuted([2, 3], [1, 0], **kw),
        ops.empty_like(like),
        ops.zeros_like(like),
        ops.ones_like(like),
        ops.full_like(like, 1),
        like.new_empty([2, 3]),
        like.new_zeros([2, 3]),
        like.new_ones([2, 3]),
        like.new_full([2, 3], 1),
        ow.eye(2, 3, **kw),
    ]
    for t in made:
        assert t.device.type == "meta" and t.dtype is dtype and t.shape == (2, 3)
