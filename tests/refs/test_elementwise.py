"""Arithmetic, comparison, logical and bitwise canonical ops against NumPy, with PyTorch's promotion.

Deep checks (hypothesis): every dtype pair, broadcasting shapes (0-dim and
empty included), non-contiguous and broadcast layouts, nan/±inf/-0.0; Python
scalar operands; in-place and ``out=`` variants; the meta device; errors.
"""

from __future__ import annotations

import warnings

import _ew_support as S
import numpy as np
import opweave as ow
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

# -- oracles (PyTorch semantics written with NumPy) ----------------------------------------------


def _compute_np(rd):
    """The NumPy dtype PyTorch computes a result of NumPy dtype ``rd`` in (float32 for float16/bfloat16)."""
    if rd.kind in "iub" or rd == np.float64 or rd == np.complex128:
        return rd
    return np.dtype(np.complex64) if rd.kind == "c" else np.dtype(np.float32)


def _in_dtype(ufunc):
    """Apply ``ufunc`` in the computation dtype (integers wrap like C)."""

    def oracle(a, b, rd, promoted):
        cd = _compute_np(rd)
        return ufunc(a.astype(cd), b.astype(cd))

    return oracle


def _wide(ufunc):
    """Apply ``ufunc`` to the widened values (float64/complex128); the check rounds to the result dtype."""

    def oracle(a, b, rd, promoted):
        if rd.kind in "iub":
            return ufunc(a.astype(rd), b.astype(rd))
        return ufunc(a, b)

    return oracle


def _div_trunc(a, b, rd, promoted):
    if rd.kind in "iu":
        # PyTorch divides in the result dtype: an operand that does not take part in promotion (a 0-dim
        # int8 -1 beside a uint8 tensor) wraps to it first (255), then the quotient is truncated
        a, b = (np.asarray(v).astype(rd).astype(np.float64) for v in (a, b))
        return np.fix(a / b).astype(rd)
    cd = _compute_np(rd)
    return np.trunc((a.astype(cd) / b.astype(cd)).astype(rd))


def _logical(ufunc):
    return lambda a, b, rd, promoted: ufunc(a != 0, b != 0)


def _cmp(ufunc):
    def oracle(a, b, rd, promoted):
        cd = _compute_np(promoted)
        return ufunc(a.astype(cd), b.astype(cd))

    return oracle


def _pow(a, b, rd, promoted):
    if rd.kind in "iu":
        return np.power(a.astype(rd), b.astype(rd))
    return np.power(a, b)


KIND = {
    "default": lambda d: d,
    "int_to_float": S.int_to_float,
    "always_bool": lambda d: ow.bool,
    "bool_to_long": lambda d: ow.int64 if d is ow.bool else d,
}

# name -> (call, oracle, promotion kind, dtypes the op supports (by promoted dtype), domain of other)
BINARY = {
    "add": (ow.add, _wide(np.add), "default", S.ALL, "any"),
    "sub": (ow.sub, _wide(np.subtract), "default", S.NUMERIC, "any"),
    "mul": (ow.mul, _wide(np.multiply), "default", S.ALL, "any"),
    "div": (ow.div, _wide(np.true_divide), "int_to_float", S.ALL, "any"),
    "div_trunc": (lambda a, b: ow.div(a, b, rounding_mode="trunc"), _div_trunc, "default", S.REAL, "nonzero"),
    "div_floor": (
        lambda a, b: ow.div(a, b, rounding_mode="floor"),
        _in_dtype(np.floor_divide),
        "default",
        S.REAL,
        "nonzero",
    ),
    "floor_divide": (ow.floor_divide, _in_dtype(np.floor_divide), "default", S.REAL, "nonzero"),
    "remainder": (ow.remainder, _in_dtype(np.remainder), "default", S.REAL, "nonzero"),
    "fmod": (ow.fmod, _in_dtype(np.fmod), "default", S.REAL, "nonzero"),
    "pow": (ow.pow, _pow, "bool_to_long", S.ALL, "exp"),
    "eq": (ow.eq, _cmp(np.equal), "always_bool", S.ALL, "any"),
    "ne": (ow.ne, _cmp(np.not_equal), "always_bool", S.ALL, "any"),
    "lt": (ow.lt, _cmp(np.less), "always_bool", S.BOOL + S.REAL, "any"),
    "le": (ow.le, _cmp(np.less_equal), "always_bool", S.BOOL + S.REAL, "any"),
    "gt": (ow.gt, _cmp(np.greater), "always_bool", S.BOOL + S.REAL, "any"),
    "ge": (ow.ge, _cmp(np.greater_equal), "always_bool", S.BOOL + S.REAL, "any"),
    "logical_and": (ow.logical_and, _logical(np.logical_and), "always_bool", S.ALL, "any"),
    "logical_or": (ow.logical_or, _logical(np.logical_or), "always_bool", S.ALL, "any"),
    "logical_xor": (ow.logical_xor, _logical(np.logical_xor), "always_bool", S.ALL, "any"),
    "bitwise_and": (ow.bitwise_and, _wide(np.bitwise_and), "default", S.INTEGRAL, "any"),
    "bitwise_or": (ow.bitwise_or, _wide(np.bitwise_or), "default", S.INTEGRAL, "any"),
    "bitwise_xor": (ow.bitwise_xor, _wide(np.bitwise_xor), "default", S.INTEGRAL, "any"),
    "bitwise_left_shift": (ow.bitwise_left_shift, _wide(np.left_shift), "default", S.INT, "shift"),
    "bitwise_right_shift": (ow.bitwise_right_shift, _wide(np.right_shift), "default", S.INT, "shift"),
}
# complex specials (nan/inf parts) follow C99 annex G in some kernels and not others; keep complex inputs finite
NO_COMPLEX_SPECIALS = {"div", "pow", "mul"}

pairs = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=3)
dtypes = st.sampled_from(S.ALL)
layouts = st.sampled_from(S.LAYOUTS)
seeds = st.integers(0, 2**32 - 1)


def _operands(data, name, da, db, shapes):
    rng = np.random.default_rng(data.draw(seeds))
    domain = BINARY[name][4]
    specials_a = not (name in NO_COMPLEX_SPECIALS and da.is_complex)
    specials_b = not (name in NO_COMPLEX_SPECIALS and db.is_complex)
    a, va = S.generate(rng, shapes[0], da, data.draw(layouts), "any", specials_a)
    b, vb = S.generate(rng, shapes[1], db, data.draw(layouts), domain, specials_b)
    return a, va, b, vb


@pytest.mark.parametrize("name", list(BINARY))
@settings(max_examples=25, deadline=None)
@given(data=st.data(), da=dtypes, db=dtypes, shapes=pairs)
def test_binary_matches_numpy(name, data, da, db, shapes):
    call, oracle, kind, allowed, _ = BINARY[name]
    a, va, b, vb = _operands(data, name, da, db, shapes.input_shapes)
    promoted = S.result_type(a, b)
    before = S.snapshot(a, b)
    if promoted not in allowed:
        with pytest.raises(TypeError, match=name.split("_")[0]):
            call(a, b)
        return
    out = call(a, b)
    expected_dtype = KIND[kind](promoted)
    with S.oracle_errors():
        want = oracle(S.wide(va), S.wide(vb), expected_dtype.numpy, promoted.numpy)
    S.check(out, np.broadcast_to(want, shapes.result_shape), expected_dtype)
    S.unchanged((a, b), before)


# complex parts are 0 or float32 values of magnitude >= 2**-10: a part that underflows in the computation's dtype
# (5e-295 + 1j is 0 + 1j in complex64, and inf * 0 is nan) would test the oracle's precision, not the op
_PART = st.one_of(st.just(0.0), st.floats(2**-10, 4, width=32), st.floats(-4, -(2**-10), width=32))
SCALARS = st.one_of(
    st.booleans(),
    st.integers(-5, 5),
    st.floats(-4, 4, width=32),
    st.builds(complex, _PART, _PART),
)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "eq", "lt", "pow", "remainder", "bitwise_and"])
@settings(max_examples=25, deadline=None)
@given(
    data=st.data(), da=dtypes, shape=hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3), scalar=SCALARS
)
def test_binary_with_python_scalar(name, data, da, shape, scalar):
    """A Python number is a weak operand: it only promotes across categories (int tensor + 2.5 -> float32)."""
    call, oracle, kind, allowed, _ = BINARY[name]
    rng = np.random.default_rng(data.draw(seeds))
    a, va = S.generate(rng, shape, da, data.draw(layouts), "any", not da.is_complex)
    if name == "pow" and not isinstance(scalar, bool):
        scalar = abs(scalar) if isinstance(scalar, int) else scalar
    if name == "remainder" and scalar == 0:
        scalar = 2
    promoted = S.result_type(a, scalar)
    if promoted not in allowed:
        with pytest.raises(TypeError):
            call(a, scalar)
        return
    out = call(a, scalar)
    expected_dtype = KIND[kind](promoted)
    vb = np.asarray(scalar)  # a Python number keeps its double precision until it meets the tensor
    with S.oracle_errors():
        want = oracle(S.wide(va), vb, expected_dtype.numpy, promoted.numpy)
    S.check(out, np.broadcast_to(want, shape), expected_dtype, rtol=1e-4 if name == "pow" else None)


def test_scalar_overloads_and_reflected_operators():
    t = ow.tensor([1, 2, 3])
    assert (t + 2.5).dtype is ow.float32 and (2.5 + t).dtype is ow.float32
    np.testing.assert_array_equal((10 - t).numpy(), [9, 8, 7])
    np.testing.assert_array_equal(ow.rsub(t, 10).numpy(), [9, 8, 7])
    np.testing.assert_array_equal(ow.rsub(t, ow.tensor(1), alpha=2).numpy(), [-1, -3, -5])
    np.testing.assert_array_equal(ow.sub(t, 1, 2).numpy(), [-1, 0, 1])
    np.testing.assert_allclose((1 / t).numpy(), [1, 0.5, 1 / 3], rtol=1e-6)
    np.testing.assert_array_equal((7 // t).numpy(), [7, 3, 2])
    np.testing.assert_array_equal((7 % t).numpy(), [0, 1, 1])
    np.testing.assert_array_equal((2**t).numpy(), [2, 4, 8])
    np.testing.assert_array_equal(ow.remainder(-7, t).numpy(), [0, 1, 2])
    np.testing.assert_array_equal((6 & t).numpy(), [0, 2, 2])
    np.testing.assert_array_equal(ow.bitwise_left_shift(1, t).numpy(), [2, 4, 8])
    np.testing.assert_array_equal((t << 1).numpy(), [2, 4, 6])
    assert (t == 2).dtype is ow.bool and (t < 2.5).tolist() == [True, True, False]
    assert (t * 1j).dtype is ow.complex64 and (t.to(ow.float64) * 1j).dtype is ow.complex128
    assert (-t).tolist() == [-1, -2, -3] and (+t).tolist() == [1, 2, 3] and (~t).tolist() == [-2, -3, -4]
    assert ow.add(t, ow.tensor(2.5, dtype=ow.float64)).dtype is ow.float64  # 0-dim tensor of a higher category


def test_alpha():
    a, b = ow.tensor([1.0, 2.0]), ow.tensor([10.0, 20.0])
    np.testing.assert_array_equal(ow.add(a, b, alpha=2).numpy(), [21, 42])
    np.testing.assert_array_equal(ow.sub(a, b, alpha=0.5).numpy(), [-4, -8])
    np.testing.assert_array_equal(ow.add(ow.tensor([1, 2]), 3, alpha=2).numpy(), [7, 8])
    np.testing.assert_array_equal(
        ow.add(ow.tensor([True, False]), ow.tensor([False, False]), alpha=True).numpy(), [1, 0]
    )
    np.testing.assert_array_equal(ow.add(ow.tensor([True, False]), ow.tensor([True, True])).numpy(), [True, True])
    with pytest.raises(TypeError, match="alpha"):
        ow.add(ow.tensor([1, 2]), ow.tensor([1, 2]), alpha=0.5)
    h = a.to(ow.float16)  # (float32 add goes to the CPU plugin's direct kernel, which skips these checks)
    with pytest.raises(TypeError, match="alpha"):
        ow.add(h, h, alpha=True)
    with pytest.raises(TypeError, match="alpha"):
        ow.add(h, h, alpha=1j)
    with pytest.raises(TypeError, match="alpha"):
        ow.sub(ow.empty([2], device="meta"), 1, alpha=1j)
    np.testing.assert_allclose(ow.add(a.to(ow.complex64), b, alpha=1j).numpy(), [1 + 10j, 2 + 20j])


# -- division and powers in detail ---------------------------------------------------------------


def test_div_rounding_modes():
    a = ow.tensor([7, -7, 7, -7])
    b = ow.tensor([2, 2, -2, -2])
    assert ow.div(a, b).dtype is ow.float32
    np.testing.assert_array_equal(ow.div(a, b, rounding_mode="trunc").numpy(), [3, -3, -3, 3])
    np.testing.assert_array_equal(ow.div(a, b, rounding_mode="floor").numpy(), [3, -4, -4, 3])
    np.testing.assert_array_equal(ow.div(a, 2, rounding_mode="floor").numpy(), [3, -4, 3, -4])
    np.testing.assert_array_equal(a.div(b, rounding_mode=None).numpy(), [3.5, -3.5, -3.5, 3.5])
    np.testing.assert_array_equal(ow.divide(a, b, rounding_mode="trunc").numpy(), [3, -3, -3, 3])
    np.testing.assert_array_equal(ow.true_divide(a, 2).numpy(), [3.5, -3.5, 3.5, -3.5])
    f = ow.tensor([1.0, -1.0, 0.0, 5.0])
    out = ow.div(f, ow.tensor([0.0, 0.0, 0.0, 2.0]), rounding_mode="floor").numpy()
    assert out[0] == np.inf and out[1] == -np.inf and np.isnan(out[2]) and out[3] == 2
    with pytest.raises(ValueError, match="rounding_mode"):
        ow.div(a, b, rounding_mode="round")
    with pytest.raises((RuntimeError, ZeroDivisionError)):
        ow.div(a, ow.tensor([1, 0, 1, 1]), rounding_mode="trunc")
    with pytest.raises(TypeError, match="div"):
        ow.div(a.to(ow.complex64), b, rounding_mode="floor")


def test_float16_trunc_division_rounds_the_quotient_first():
    # 2047.9 rounds to 2048 in float16 before truncation (PyTorch: trunc(half(a / b))).
    a = ow.tensor([2047.0], dtype=ow.float16)
    b = ow.tensor([0.99951171875], dtype=ow.float16)
    assert ow.div(a, b, rounding_mode="trunc").tolist() == [2048.0]


def test_pow_scalar_exponent_special_cases():
    x = ow.tensor([-np.inf, -0.0, 4.0, np.nan])
    np.testing.assert_array_equal(ow.pow(x, 0).numpy(), [1, 1, 1, 1])
    np.testing.assert_array_equal(ow.pow(x, 1).numpy(), x.numpy())
    got = ow.pow(x, 0.5).numpy()  # computed with sqrt, as PyTorch does
    assert np.isnan(got[0]) and got[1] == 0 and np.signbit(got[1]) and got[2] == 2 and np.isnan(got[3])
    np.testing.assert_array_equal(ow.pow(x, 2).numpy(), x.numpy() * x.numpy())
    np.testing.assert_allclose(ow.pow(x, -0.5).numpy()[2], 0.5)
    np.testing.assert_allclose(ow.pow(x, -2).numpy()[2], 1 / 16)
    assert ow.pow(ow.tensor([True, False]), 2).dtype is ow.int64
    assert ow.pow(ow.tensor([1, 2], dtype=ow.int16), 2).dtype is ow.int16
    assert ow.pow(ow.tensor([1, 2], dtype=ow.int16), 2.0).dtype is ow.float32
    assert ow.pow(ow.tensor([1.0], dtype=ow.float16), 2).dtype is ow.float16
    np.testing.assert_array_equal(ow.pow(1, ow.tensor([-3, 0, 5])).numpy(), [1, 1, 1])  # base 1: ones
    np.testing.assert_array_equal(ow.pow(2, ow.tensor([0, 3])).numpy(), [1, 8])
    np.testing.assert_allclose(ow.pow(2.0, ow.tensor([-1, 3])).numpy(), [0.5, 8])
    np.testing.assert_allclose(ow.pow(ow.tensor([1j]), 2).numpy(), [-1])
    # integers to negative powers as PyTorch: 1 -> 1, -1 -> +-1 by parity, anything else -> 0
    np.testing.assert_array_equal(ow.pow(ow.tensor([2, 1, -1, 0]), -1).numpy(), [0, 1, -1, 0])
    np.testing.assert_array_equal(ow.pow(ow.tensor([2, 3, -1]), ow.tensor([1, -1, -2])).numpy(), [2, 0, 1])


def test_float_power():
    a = ow.tensor([1, 2, 3], dtype=ow.int32)
    out = ow.float_power(a, 2)
    assert out.dtype is ow.float64 and out.tolist() == [1, 4, 9]
    assert ow.float_power(a, ow.tensor([0.5], dtype=ow.float16)).dtype is ow.float64
    assert ow.float_power(2, a).dtype is ow.float64
    assert ow.float_power(a, 1j).dtype is ow.complex128
    assert ow.float_power(ow.tensor([1j]), 2).dtype is ow.complex128
    np.testing.assert_allclose(ow.float_power(2, ow.tensor([-1, 10])).numpy(), [0.5, 1024])


def test_bool_arithmetic():
    t, f = ow.tensor([True, True, False]), ow.tensor([True, False, False])
    assert (t + f).dtype is ow.bool and (t + f).tolist() == [True, True, False]
    assert (t * f).tolist() == [True, False, False]
    assert (t / f).dtype is ow.float32
    with pytest.raises(TypeError, match="sub"):
        _ = t - f
    with pytest.raises(TypeError, match="neg"):
        _ = -t
    with pytest.raises(TypeError, match="remainder"):
        ow.remainder(t, f)
    assert (t - 1).dtype is ow.int64  # an int operand makes it integer arithmetic


# -- in-place and out= ---------------------------------------------------------------------------------

INPLACE = {
    "add_": (lambda a, b: a.add_(b), np.add),
    "sub_": (lambda a, b: a.sub_(b), np.subtract),
    "mul_": (lambda a, b: a.mul_(b), np.multiply),
    "div_": (lambda a, b: a.div_(b), np.true_divide),
    "pow_": (lambda a, b: a.pow_(b), np.power),
    "eq_": (lambda a, b: a.eq_(b), np.equal),
    "logical_or_": (lambda a, b: a.logical_or_(b), np.logical_or),
    "remainder_": (lambda a, b: a.remainder_(b), np.remainder),
}


@pytest.mark.parametrize("name", list(INPLACE))
@settings(max_examples=15, deadline=None)
@given(data=st.data(), dtype=st.sampled_from([ow.float32, ow.float64, ow.float16]), shapes=pairs)
def test_inplace(name, data, dtype, shapes):
    """``a.op_(b)`` writes into ``a`` and returns it; ``b`` broadcasts to ``a`` but ``a`` never broadcasts."""
    call, ufunc = INPLACE[name]
    rng = np.random.default_rng(data.draw(seeds))
    domain = "pos" if name in ("pow_", "remainder_") else "any"
    a, va = S.generate(rng, shapes.result_shape, dtype, "contiguous", domain)
    b, vb = S.generate(
        rng, shapes.input_shapes[1], dtype, data.draw(layouts), "pos" if name == "remainder_" else domain
    )
    with S.oracle_errors():
        want = ufunc(S.wide(va), S.wide(vb))
    result = call(a, b)
    assert result is a
    S.check(a, np.broadcast_to(want, a.shape), dtype, rtol=1e-4 if name == "pow_" else None)


def test_inplace_errors_leave_self_unchanged():
    a = ow.tensor([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="shape"):
        a.add_(ow.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    assert a.tolist() == [1.0, 2.0, 3.0]
    i = ow.tensor([1, 2, 3])
    with pytest.raises(TypeError, match="cast"):
        i.add_(1.5)
    with pytest.raises(TypeError, match="cast"):
        i.div_(2)
    with pytest.raises(TypeError, match="cast"):
        i.mul_(ow.tensor([1.0, 2.0, 3.0]))
    assert i.tolist() == [1, 2, 3]
    i += 2
    assert i.tolist() == [3, 4, 5]
    i //= 2
    assert i.tolist() == [1, 2, 2]
    i.div_(2, rounding_mode="floor")
    assert i.tolist() == [0, 1, 1]
    f = ow.tensor([1.0, 2.0])
    f.eq_(ow.tensor([1.0, 0.0]))  # a bool result is written as 1.0/0.0
    assert f.dtype is ow.float32 and f.tolist() == [1.0, 0.0]


def test_out_variants():
    a, b = ow.tensor([[1.0, 2.0], [3.0, 4.0]]), ow.tensor([10.0, 20.0])
    out = ow.empty([2, 2])
    assert ow.add(a, b, out=out) is out and out.tolist() == [[11, 22], [13, 24]]
    out64 = ow.empty([2, 2], dtype=ow.float64)
    ow.mul(a, 2, out=out64)
    assert out64.dtype is ow.float64 and out64.tolist() == [[2, 4], [6, 8]]
    resized = ow.empty([3])
    with pytest.warns(UserWarning, match="resized"):
        ow.sub(a, b, out=resized)
    assert resized.shape == (2, 2) and resized.tolist() == [[-9, -18], [-7, -16]]
    empty = ow.empty([0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ow.div(a, b, out=empty)
    assert empty.shape == (2, 2)
    with pytest.raises(TypeError, match="cast"):
        ow.div(a, b, out=ow.empty([2, 2], dtype=ow.int64))
    flags = ow.empty([2, 2], dtype=ow.bool)
    assert ow.gt(a, 2, out=flags) is flags and flags.tolist() == [[False, False], [True, True]]
    q = ow.empty([2, 2])
    ow.div(a, b, rounding_mode="floor", out=q)
    assert q.tolist() == [[0, 0], [0, 0]]
    p = ow.empty([2, 2])
    ow.pow(a, 2, out=p)
    assert p.tolist() == [[1, 4], [9, 16]]
    f = ow.empty([3], dtype=ow.float32)
    ow.pow(2, ow.tensor([1, 2, 3]), out=f)
    assert f.tolist() == [2, 4, 8]


# -- meta device and errors ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(BINARY))
@settings(max_examples=10, deadline=None)
@given(da=dtypes, db=dtypes, shapes=pairs)
def test_meta_device(name, da, db, shapes):
    """On meta tensors each op gives the same shape and dtype as on CPU, and the same dtype errors."""
    call, _, kind, allowed, _ = BINARY[name]
    a = ow.empty(list(shapes.input_shapes[0]), dtype=da, device="meta")
    b = ow.empty(list(shapes.input_shapes[1]), dtype=db, device="meta")
    promoted = S.result_type(a, b)
    if promoted not in allowed:
        with pytest.raises(TypeError):
            call(a, b)
        return
    out = call(a, b)
    assert out.device.type == "meta"
    assert out.shape == shapes.result_shape and out.dtype is KIND[kind](promoted)
    scalar_out = call(a, ow.tensor(2))  # a CPU 0-dim tensor mixes with meta tensors
    assert scalar_out.device.type == "meta" and scalar_out.shape == a.shape


def test_shape_and_type_errors():
    with pytest.raises(ValueError):
        ow.add(ow.tensor([1.0, 2.0]), ow.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="atan2"):
        ow.atan2(ow.tensor([1.0, 2.0]), ow.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="add"):
        ow.add(ow.tensor([1, 2]), ow.tensor([1, 2, 3]))
    with pytest.raises(TypeError, match="lt"):
        ow.lt(ow.tensor([1j]), ow.tensor([2j]))
    with pytest.raises(TypeError, match="bitwise_and"):
        ow.bitwise_and(ow.tensor([1.0]), ow.tensor([1.0]))
    with pytest.raises(TypeError, match="bitwise_left_shift"):
        ow.bitwise_left_shift(ow.tensor([True]), ow.tensor([True]))
    with pytest.raises(TypeError, match="bitwise_not"):
        ~ow.tensor([1.5])
    with pytest.raises(TypeError):
        ow.add(ow.tensor([1.0]), "2")
    with pytest.raises(RuntimeError, match="device"):
        ow.add(ow.tensor([1.0, 2.0]), ow.empty([2], device="meta"))


def test_aliases():
    a, b = ow.tensor([1.0, 4.0]), ow.tensor([2.0, 2.0])
    pairs_ = [
        (ow.subtract, ow.sub),
        (ow.multiply, ow.mul),
        (ow.divide, ow.div),
        (ow.true_divide, ow.div),
        (ow.greater, ow.gt),
        (ow.greater_equal, ow.ge),
        (ow.less, ow.lt),
        (ow.less_equal, ow.le),
        (ow.not_equal, ow.ne),
    ]
    for alias, target in pairs_:
        assert alias(a, b).tolist() == target(a, b).tolist()
        assert alias(a, 2).tolist() == target(a, 2).tolist()
    c = ow.tensor([1.0, 4.0])
    assert c.subtract_(1).tolist() == [0.0, 3.0] and c.multiply_(2).tolist() == [0.0, 6.0]


def test_catalog_and_variants():
    names = {o.name for o in ow.ops.catalog(kind="canonical")}
    for name in ("add.Tensor", "add_.Tensor", "add.out", "add.Scalar_out", "div.Tensor_mode_out", "eq_.Scalar"):
        assert name in names
    assert "rsub_.Tensor" not in names and "rsub.out" in names  # PyTorch has no in-place rsub
    assert ow.ops.add.Tensor.tags >= {"pointwise", "core"}
    assert "Tensor self, Tensor other, *, Scalar alpha=1" in str(ow.ops.add.Tensor.schema)
    ours = [
        o
        for o in ow.ops.catalog(kind="canonical")
        if o.variant is None and getattr(o.decomposition, "__module__", "").startswith("opweave.refs.elementwise")
    ]
    assert len(ours) >= 170
    for op in ours:  # every decomposition is documented (the docstring is the op's documentation)
        assert op.decomposition.__doc__ and op.__doc__ != str(op.schema), op.name
