"""where, clamp/clip, lerp, addcmul/addcdiv, masked_fill, fill/zero and isclose against NumPy."""

from __future__ import annotations

import warnings

import _ew_support as S
import numpy as np
import opweave as ow
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

triples = hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, min_side=0, max_side=3)
pairs = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=3)
seeds = st.integers(0, 2**32 - 1)
layouts = st.sampled_from(S.LAYOUTS)


# -- where ----------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(shapes=triples, da=st.sampled_from(S.ALL), db=st.sampled_from(S.ALL), seed=seeds, lay=layouts)
def test_where(shapes, da, db, seed, lay):
    """``where(c, a, b)``: all three broadcast; ``a``/``b`` promote (no opmath: float16 stays float16)."""
    rng = np.random.default_rng(seed)
    c, vc = S.generate(rng, shapes.input_shapes[0], ow.bool, lay)
    a, va = S.generate(rng, shapes.input_shapes[1], da, "contiguous")
    b, vb = S.generate(rng, shapes.input_shapes[2], db, lay)
    out = ow.where(c, a, b)
    dtype = S.result_type(a, b)
    want = np.where(vc, S.wide(va).astype(dtype.numpy), S.wide(vb).astype(dtype.numpy))
    assert out.shape == shapes.result_shape
    S.check(out, want, dtype)
    m = ow.where(S.meta_like(c), S.meta_like(a), S.meta_like(b))
    assert m.shape == out.shape and m.dtype is out.dtype


def test_where_scalar_overloads_and_errors():
    c = ow.tensor([True, False, True])
    t = ow.tensor([1, 2, 3], dtype=ow.int16)
    assert ow.where(c, 1, 0).dtype is ow.int64 and ow.where(c, 1, 0).tolist() == [1, 0, 1]
    assert ow.where(c, 1.0, 0).dtype is ow.float32
    assert ow.where(c, t, 0).dtype is ow.int16 and ow.where(c, t, 0).tolist() == [1, 0, 3]
    assert ow.where(c, 2.5, t).dtype is ow.float32 and ow.where(c, 2.5, t).tolist() == [2.5, 2.0, 2.5]
    assert ow.where(c, ow.tensor([1.0], dtype=ow.float16), 0.5).dtype is ow.float16
    with pytest.raises(TypeError, match="condition"):
        ow.where(ow.tensor([1.0, 0.0, 1.0]), t, t)
    with pytest.warns(UserWarning, match="uint8"):
        assert ow.where(ow.tensor([1, 0, 1], dtype=ow.uint8), t, 0).tolist() == [1, 0, 3]
    with pytest.raises(ValueError, match="where"):
        ow.where(c, ow.tensor([1, 2]), t)
    out = ow.empty([3], dtype=ow.int16)
    assert ow.where(c, t, ow.tensor(0, dtype=ow.int16), out=out) is out and out.tolist() == [1, 0, 3]


# -- clamp -------------------------------------------------------------------------------------------


def _bound(rng, use, shape, dtype, kind):
    if not use:
        return None, None
    if kind == "scalar":
        v = float(rng.integers(-3, 4)) if dtype.is_floating_point else int(rng.integers(-3, 4))
        return v, np.asarray(v)
    t, vt = S.generate(rng, shape, dtype, "contiguous", "small")
    return t, vt


@settings(max_examples=40, deadline=None)
@given(
    shapes=triples,
    dtype=st.sampled_from(S.REAL),
    bound_dtype=st.sampled_from(S.REAL),
    which=st.sampled_from(["both", "min", "max"]),
    kind=st.sampled_from(["scalar", "tensor"]),
    seed=seeds,
    lay=layouts,
)
def test_clamp(shapes, dtype, bound_dtype, which, kind, seed, lay):
    """``min(max(x, lo), hi)``: nan propagates from any operand, ``lo > hi`` gives ``hi``; promotes over all."""
    rng = np.random.default_rng(seed)
    x, vx = S.generate(rng, shapes.input_shapes[0], dtype, lay, "small" if dtype in S.INT else "any")
    lo, vlo = _bound(rng, which != "max", shapes.input_shapes[1], bound_dtype, kind)
    hi, vhi = _bound(rng, which != "min", shapes.input_shapes[2], bound_dtype, kind)
    out = ow.clamp(x, lo, hi)
    dtype_out = S.result_type(x, lo, hi)
    cd = dtype_out.numpy if S.category(dtype_out) == 1 else np.float64
    want = S.wide(vx).astype(cd)
    if lo is not None:
        want = np.maximum(want, S.wide(vlo).astype(cd))
    if hi is not None:
        want = np.minimum(want, S.wide(vhi).astype(cd))
    S.check(out, want, dtype_out, exact_zero_sign=False)
    same = ow.clip(x, lo, hi)
    assert same.dtype is out.dtype and np.array_equal(S.wide(same.numpy()), S.wide(out.numpy()), equal_nan=True)


def test_clamp_details():
    x = ow.tensor([-2.0, 0.5, 3.0, np.nan])
    np.testing.assert_array_equal(ow.clamp(x, 1.0, 0.0).numpy()[:3], [0, 0, 0])  # min > max gives max
    assert np.isnan(ow.clamp(x, ow.tensor([np.nan, 0, 0, 0]), None).numpy()[0])
    assert ow.clamp(ow.tensor([1, 5, 9]), 2, 6).tolist() == [2, 5, 6]
    assert ow.clamp(ow.tensor([1, 5, 9]), 2.5).dtype is ow.float32
    assert ow.clamp_min(ow.tensor([1, 5]), 3).tolist() == [3, 5]
    assert ow.clamp_max(ow.tensor([1, 5]), ow.tensor([0, 7])).tolist() == [0, 5]
    with pytest.raises(ValueError, match="clamp"):
        ow.clamp(x)
    with pytest.raises(ValueError, match="clamp"):
        ow.clamp(x, ow.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="clamp"):
        ow.clamp(ow.tensor([1j]), 0)
    with pytest.raises(TypeError, match="clamp"):
        ow.clamp(ow.tensor([True]), False, True)
    y = ow.tensor([-2.0, 0.5, 3.0])
    assert y.clamp_(-1, 1) is y and y.tolist() == [-1.0, 0.5, 1.0]
    y.clamp_min_(0.0)
    y.clamp_max_(ow.tensor(0.25))
    assert y.tolist() == [0.0, 0.25, 0.25]
    with pytest.raises(TypeError, match="cast"):
        ow.tensor([1, 2]).clamp_(0.5)
    out = ow.empty([4])
    assert ow.clamp(x, ow.tensor(0.0), ow.tensor(1.0), out=out) is out
    np.testing.assert_array_equal(out.numpy(), [0.0, 0.5, 1.0, np.nan])
    names = {o.name for o in ow.ops.catalog(kind="canonical")}
    assert {"clamp.out", "clamp.Tensor_out", "clamp_.Tensor", "clip.Tensor_out", "clamp_min.Tensor_out"} <= names
    m = ow.clamp(ow.empty([2, 3], dtype=ow.int8, device="meta"), ow.empty([3], device="meta"), None)
    assert m.dtype is ow.float32 and m.shape == (2, 3)


# -- lerp, addcmul, addcdiv ------------------------------------------------------------------------


def _lerp(a, b, w):
    return np.where(np.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


@settings(max_examples=30, deadline=None)
@given(shapes=triples, dtype=st.sampled_from(S.FLOATING), scalar=st.booleans(), seed=seeds, lay=layouts)
def test_lerp(shapes, dtype, scalar, seed, lay):
    rng = np.random.default_rng(seed)
    a, va = S.generate(rng, shapes.input_shapes[0], dtype, lay, specials=False)
    b, vb = S.generate(rng, shapes.input_shapes[1], dtype, "contiguous", specials=False)
    if scalar:
        w, vw = float(rng.uniform(-0.5, 1.5)), None
        vw = np.asarray(w)
        out = ow.lerp(a, b, w)
        shape = np.broadcast_shapes(shapes.input_shapes[0], shapes.input_shapes[1])
    else:
        w, vw = S.generate(rng, shapes.input_shapes[2], dtype, lay, "unit", specials=False)
        out = ow.lerp(a, b, w)
        shape = shapes.result_shape
    want = _lerp(S.wide(va), S.wide(vb), S.wide(vw))
    assert out.shape == shape
    S.check(out, np.broadcast_to(want, shape), dtype, rtol=1e-4)


def test_lerp_errors_and_variants():
    a, b = ow.tensor([0.0, 10.0]), ow.tensor([10.0, 20.0])
    assert ow.lerp(a, b, 0.25).tolist() == [2.5, 12.5]
    assert ow.lerp(a, b, ow.tensor([1.0, 0.0])).tolist() == [10.0, 10.0]
    with pytest.raises(TypeError, match="lerp"):
        ow.lerp(a, b.to(ow.float64), 0.5)
    with pytest.raises(TypeError, match="lerp"):
        ow.lerp(a, b, ow.tensor([0.5], dtype=ow.float64))
    with pytest.raises(TypeError, match="lerp"):
        ow.lerp(ow.tensor([1]), ow.tensor([2]), 0.5)
    with pytest.raises(TypeError, match="weight"):
        ow.lerp(a, b, 0.5j)
    assert a.lerp_(b, 0.5) is a and a.tolist() == [5.0, 15.0]


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
@settings(max_examples=30, deadline=None)
@given(
    shapes=triples,
    dtypes=st.tuples(*[st.sampled_from(S.NUMERIC)] * 3),
    value=st.sampled_from([1, 2, -0.5]),
    seed=seeds,
    lay=layouts,
)
def test_addcmul_addcdiv(name, shapes, dtypes, value, seed, lay):
    rng = np.random.default_rng(seed)
    domain = "nonzero" if name == "addcdiv" else "small"
    s, vs = S.generate(rng, shapes.input_shapes[0], dtypes[0], lay, "small", specials=False)
    t1, v1 = S.generate(rng, shapes.input_shapes[1], dtypes[1], "contiguous", "small", specials=False)
    t2, v2 = S.generate(rng, shapes.input_shapes[2], dtypes[2], lay, domain, specials=False)
    promoted = S.result_type(s, t1, t2)
    fn = getattr(ow, name)
    integral = S.category(dtypes[1]) < 2 and S.category(dtypes[2]) < 2
    if (name == "addcdiv" and integral) or (isinstance(value, float) and S.category(promoted) < 2):
        with pytest.raises(TypeError):
            fn(s, t1, t2, value=value)
        return
    out = fn(s, t1, t2, value=value)
    if S.category(promoted) < 2:
        want = vs.astype(promoted.numpy) + value * v1.astype(promoted.numpy) * v2.astype(promoted.numpy)
    else:
        combine = np.true_divide if name == "addcdiv" else np.multiply
        want = S.wide(vs) + combine(value * S.wide(v1), S.wide(v2))
    S.check(out, np.broadcast_to(want, shapes.result_shape), promoted, rtol=1e-4)


def test_addc_inplace():
    s = ow.tensor([1.0, 2.0])
    assert s.addcmul_(ow.tensor([2.0, 3.0]), ow.tensor([4.0, 5.0]), value=0.5) is s and s.tolist() == [5.0, 9.5]
    assert s.addcdiv_(ow.tensor([1.0, 1.0]), ow.tensor([2.0, 4.0])).tolist() == [5.5, 9.75]
    with pytest.raises(TypeError, match="addcmul"):
        ow.addcmul(ow.tensor([True]), ow.tensor([True]), ow.tensor([True]))


# -- masked_fill, fill, zero ----------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    shapes=pairs,
    dtype=st.sampled_from(S.ALL),
    value=st.sampled_from([0, 1, -2, 2.5, True, 1j, "tensor"]),
    seed=seeds,
    lay=layouts,
)
def test_masked_fill(shapes, dtype, value, seed, lay):
    rng = np.random.default_rng(seed)
    a, va = S.generate(rng, shapes.input_shapes[0], dtype, lay)
    m, vm = S.generate(rng, shapes.input_shapes[1], ow.bool, "contiguous")
    if value == "tensor":
        value = ow.tensor(3.0)
    if isinstance(value, complex) and not dtype.is_complex:
        with pytest.raises(TypeError, match="masked_fill"):
            ow.masked_fill(a, m, value)
        return
    if value == -2 and dtype is ow.uint8:  # PyTorch's checked scalar conversion
        with pytest.raises(ValueError, match="without overflow"):
            ow.masked_fill(a, m, value)
        return
    out = ow.masked_fill(a, m, value)
    fill = 3.0 if isinstance(value, ow.Tensor) else value
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fill_v = np.asarray(fill).astype(np.complex128 if dtype.is_complex else np.float64).astype(dtype.numpy)
    want = np.where(vm, fill_v, va)
    assert out.shape == shapes.result_shape
    S.check(out, want, dtype)


def test_masked_fill_details():
    a = ow.tensor([[1, 2, 3], [4, 5, 6]])
    mask = ow.tensor([True, False, True])
    assert ow.masked_fill(a, mask, 2.7).tolist() == [[2, 2, 2], [2, 5, 2]]  # float fill truncates into int
    assert a.masked_fill_(mask, ow.tensor(0)) is a and a.tolist() == [[0, 2, 0], [0, 5, 0]]
    with pytest.raises(ValueError, match="shape"):
        ow.tensor([1, 2, 3]).masked_fill_(ow.tensor([[True, False, True]] * 2), 0)  # self can't broadcast
    with pytest.raises(TypeError, match="mask"):
        ow.masked_fill(a, ow.tensor([1, 0, 1]), 0)
    with pytest.raises(ValueError, match="0-dim"):
        ow.masked_fill(a, mask, ow.tensor([1, 2, 3]))
    m = ow.masked_fill(
        ow.empty([3], dtype=ow.float16, device="meta"), ow.empty([2, 1], dtype=ow.bool, device="meta"), 1
    )
    assert m.shape == (2, 3) and m.dtype is ow.float16
    out = ow.empty([2, 3], dtype=ow.int64)
    ow.masked_fill(a, mask, 9, out=out)
    assert out.tolist() == [[9, 2, 9], [9, 5, 9]]


@pytest.mark.parametrize("dtype", S.ALL)
def test_fill_and_zero(dtype):
    base = S.make(np.ones((2, 3)), dtype, "transposed")
    value = 1j if dtype.is_complex else (True if dtype is ow.bool else 3)
    out = ow.fill(base, value)
    assert out.shape == (2, 3) and out.dtype is dtype
    S.check(out, np.full((2, 3), value).astype(dtype.numpy), dtype)
    S.check(ow.fill(base, ow.tensor(value)), np.full((2, 3), value).astype(dtype.numpy), dtype)
    S.check(ow.zero(base), np.zeros((2, 3)).astype(dtype.numpy), dtype)
    t = S.make(np.ones((2, 3)), dtype)
    assert t.fill_(value) is t
    S.check(t, np.full((2, 3), value).astype(dtype.numpy), dtype)
    assert t.zero_() is t
    S.check(t, np.zeros((2, 3)).astype(dtype.numpy), dtype)
    strided = S.make(np.ones((2, 3)), dtype, "sliced")
    strided.fill_(value)  # writes through a non-contiguous view
    S.check(strided, np.full((2, 3), value).astype(dtype.numpy), dtype)
    if not dtype.is_complex:
        with pytest.raises(TypeError):
            ow.fill(base, 1j)
        with pytest.raises(TypeError):
            ow.fill(base, ow.tensor(1j))
    with pytest.raises(ValueError, match="0-dim"):
        ow.fill(base, ow.tensor([1, 2]))
    assert ow.zero(S.meta_like(base)).dtype is dtype


# -- isclose ----------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    shapes=pairs,
    dtype=st.sampled_from(S.ALL),
    rtol=st.sampled_from([0.0, 1e-5, 0.1]),
    atol=st.sampled_from([0.0, 1e-8, 0.5]),
    equal_nan=st.booleans(),
    seed=seeds,
)
def test_isclose(shapes, dtype, rtol, atol, equal_nan, seed):
    rng = np.random.default_rng(seed)
    a, va = S.generate(rng, shapes.input_shapes[0], dtype, "contiguous", "small")
    noise = S.values(rng, shapes.input_shapes[1], dtype, "small").astype(dtype.numpy)
    b = S.make(noise, dtype, "sliced")
    vb = np.array(b.numpy())
    out = ow.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    x, y = S.wide(va), S.wide(vb)
    if S.category(dtype) < 2:
        x, y = x.astype(np.float32), y.astype(np.float32)
    want = np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan and S.category(dtype) >= 2)
    S.check(out, want, ow.bool)


def test_isclose_details():
    a = ow.tensor([1.0, np.nan, np.inf, -np.inf, 1.0])
    b = ow.tensor([1.0 + 1e-7, np.nan, np.inf, np.inf, 1.1])
    assert ow.isclose(a, b).tolist() == [True, False, True, False, False]
    assert ow.isclose(a, b, equal_nan=True).tolist() == [True, True, True, False, False]
    assert ow.isclose(a, b, rtol=0.2).tolist()[-1] is True
    assert ow.isclose(ow.tensor([2], dtype=ow.uint8), ow.tensor([1], dtype=ow.uint8), atol=2).tolist() == [True]
    with pytest.raises(TypeError, match="isclose"):
        ow.isclose(a, b.to(ow.float64))
    with pytest.raises(ValueError, match="isclose"):
        ow.isclose(a, b, rtol=-1.0)
