"""Binary elementwise prims against NumPy/SciPy/Python-int oracles (PyTorch semantics)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import opweave
import pytest
import scipy.special as sp
from _elementwise_support import (
    ALL,
    BOOL,
    FLOAT,
    INT,
    INTEGRAL,
    LAYOUTS,
    NUMERIC,
    REAL,
    P,
    c_mod,
    check_call,
    floats,
    int_oracle,
    ints,
    make_inputs,
    seeds,
    shapes,
    trunc_div,
    unsupported,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from opweave_conformance import accurate as acc


@dataclass
class Case:
    """One prim: dtypes, oracle (widened arrays, or Python ints via ``ints_fn``), value generators."""

    dtypes: tuple
    oracle: object = None  # (a, b) -> expected, NumPy arrays
    ints_fn: object = None  # (a, b) -> int, Python ints (results wrap into the dtype)
    out: str = "same"
    gens: tuple = (None, None)  # per operand: a floats() generator, an ints() generator, or a tuple of both
    rtol: float = 1.0
    conditioned: bool = False  # tolerance relative to the arguments' condition too (see condition_atol)


def _nonzero(gen=None):
    """An ints() generator with the zeros replaced by 1 (division tests)."""
    base = gen or ints()

    def g(rng, shape, dtype):
        v = base(rng, shape, dtype)
        return np.where(v == 0, 1, v)

    return (None, g)


def _floor_divide(a, b):
    return np.floor_divide(a, b)


def _heaviside(a, b):
    if a.dtype.kind in "iu":
        return np.where(a == 0, b, (a > 0).astype(a.dtype))
    return np.where(np.isnan(a), 0, np.heaviside(a, b))


def _xlogy(fn):
    def oracle(x, y):
        x, y = x.astype(np.float64), y.astype(np.float64)
        return np.where(np.isnan(y), np.nan, fn(x, y))

    return oracle


def _igamma(regularised, lower):
    def oracle(a, x):
        a, x = np.broadcast_arrays(a.astype(np.float64), x.astype(np.float64))
        out = regularised(a, x)
        # PyTorch's special cases, in the order its scalar kernel tests them
        cases = [
            ((x < 0) | (a < 0), np.nan),
            ((a == 0) & (x > 0), 1.0 if lower else 0.0),
            (a == 0, np.nan),
            (x == 0, 0.0 if lower else 1.0),
            (np.isinf(a) & np.isinf(x), np.nan),
            (np.isinf(a), 0.0 if lower else 1.0),
            (np.isinf(x), 1.0 if lower else 0.0),
        ]
        done = np.zeros(a.shape, bool)
        for mask, value in cases:
            out = np.where(mask & ~done, value, out)
            done |= mask
        return out

    return oracle


def _int_pow(a, b):
    return a**b


def _shift_left(dtype):
    bits = dtype.numpy.itemsize * 8

    def fn(a, b):
        return a << b if 0 <= b < bits else 0

    return fn


def _shift_right(dtype):
    bits = dtype.numpy.itemsize * 8 - (dtype.kind == "int")

    def fn(a, b):
        return a >> b if 0 <= b < bits else (-1 if a < 0 else 0)

    return fn


def _lcm(a, b):
    return abs(a * b) // math.gcd(a, b) if a and b else 0


POSITIVE = floats(0.01, 20, specials=np.array([np.nan, np.inf, 0.0, -1.0, 1.0, 0.5]))
SMALL = ints(-1000, 1000)

B = {
    "add": Case(NUMERIC, np.add, lambda a, b: a + b),
    "sub": Case(NUMERIC, np.subtract, lambda a, b: a - b),
    "mul": Case(NUMERIC, np.multiply, lambda a, b: a * b),
    "div": Case(NUMERIC, np.true_divide, trunc_div, gens=(None, _nonzero())),
    "pow": Case(NUMERIC, np.power, _int_pow, gens=(None, (None, ints(0, 12)))),
    "maximum": Case(REAL, np.maximum, max),
    "minimum": Case(REAL, np.minimum, min),
    "fmax": Case(REAL, np.fmax, max),
    "fmin": Case(REAL, np.fmin, min),
    "remainder": Case(REAL, np.remainder, lambda a, b: a % b, gens=(None, _nonzero())),
    "fmod": Case(REAL, np.fmod, c_mod, gens=(None, _nonzero())),
    "floor_divide": Case(REAL, _floor_divide, lambda a, b: a // b, gens=(None, _nonzero())),
    "heaviside": Case(REAL, _heaviside),
    "atan2": Case(FLOAT, acc.extended(np.arctan2), conditioned=True),
    "hypot": Case(FLOAT, acc.extended(np.hypot)),
    "copysign": Case(FLOAT, np.copysign),
    "nextafter": Case(FLOAT),  # oracle in the native dtype: see test_nextafter
    "logaddexp": Case(FLOAT, acc.extended(np.logaddexp), conditioned=True),
    "logaddexp2": Case(FLOAT, acc.extended(np.logaddexp2), conditioned=True),
    "xlogy": Case(FLOAT, _xlogy(sp.xlogy), gens=(None, POSITIVE), conditioned=True),
    "xlog1py": Case(FLOAT, _xlogy(sp.xlog1py), conditioned=True),
    "zeta": Case(FLOAT, acc.zeta, gens=(floats(0.5, 8), None), conditioned=True),
    "igamma": Case(FLOAT, _igamma(acc.igamma, True), gens=(POSITIVE, POSITIVE), rtol=10, conditioned=True),
    "igammac": Case(FLOAT, _igamma(acc.igammac, False), gens=(POSITIVE, POSITIVE), rtol=10, conditioned=True),
    "gcd": Case(INT, ints_fn=math.gcd),
    "lcm": Case(INT, ints_fn=_lcm, gens=((None, ints(-11, 11)), (None, ints(-11, 11)))),
    "bitwise_and": Case(INTEGRAL, np.bitwise_and),
    "bitwise_or": Case(INTEGRAL, np.bitwise_or),
    "bitwise_xor": Case(INTEGRAL, np.bitwise_xor),
    "shift_left": Case(INT, gens=(None, (None, ints(-3, 70)))),
    "shift_right_arithmetic": Case(INT, gens=(None, (None, ints(-3, 70)))),
    "logical_and": Case(ALL, lambda a, b: (a != 0) & (b != 0), out="bool"),
    "logical_or": Case(ALL, lambda a, b: (a != 0) | (b != 0), out="bool"),
    "logical_xor": Case(ALL, lambda a, b: (a != 0) ^ (b != 0), out="bool"),
    "eq": Case(ALL, np.equal, out="bool"),
    "ne": Case(ALL, np.not_equal, out="bool"),
    "lt": Case(REAL + BOOL, np.less, out="bool"),
    "le": Case(REAL + BOOL, np.less_equal, out="bool"),
    "gt": Case(REAL + BOOL, np.greater, out="bool"),
    "ge": Case(REAL + BOOL, np.greater_equal, out="bool"),
}

INT_FN = {"shift_left": _shift_left, "shift_right_arithmetic": _shift_right}

PAIRS = [(name, dtype) for name, case in B.items() for dtype in case.dtypes]


def _oracle(name, case, dtype):
    if dtype.kind in ("int", "uint") and (case.ints_fn or name in INT_FN):
        fn = case.ints_fn or INT_FN[name](dtype)
        return int_oracle(fn, dtype)
    if name == "nextafter":
        return None
    return case.oracle


def _out(case, dtype):
    return opweave.bool if case.out == "bool" else dtype


# second operand layouts: the first operand's plus a 0-dim CPU scalar
OTHER_LAYOUTS = LAYOUTS + ("scalar",)


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p[0]}-{p[1].name}")
@settings(max_examples=5, deadline=None)
@given(
    shape=shapes,
    layouts=st.tuples(st.sampled_from(LAYOUTS), st.sampled_from(OTHER_LAYOUTS)),
    seed=seeds,
)
def test_binary_values(pair, shape, layouts, seed):
    name, dtype = pair
    case = B[name]
    oracle = _oracle(name, case, dtype)
    if oracle is None:
        return
    a, b = make_inputs(seed, shape, [dtype, dtype], layouts, list(case.gens))
    conditioned = case.conditioned and oracle is case.oracle
    check_call(getattr(P, name), [a, b], oracle, _out(case, dtype), rtol_scale=case.rtol, conditioned=conditioned)


@pytest.mark.parametrize("name", ["add", "sub", "maximum", "eq", "atan2", "bitwise_and"])
def test_cpu_scalar_first_operand(name):
    dtype = B[name].dtypes[-1]
    scalar = opweave.from_numpy(np.array(3, dtype.numpy))
    other = opweave.from_numpy(np.arange(6).reshape(2, 3).astype(dtype.numpy))
    got = getattr(P, name)(scalar, other)
    assert tuple(got.shape) == (2, 3)
    expected = B[name].oracle(np.array(3, dtype.numpy), other.numpy())
    np.testing.assert_array_equal(got.numpy(), np.asarray(expected, got.dtype.numpy))
    meta = getattr(P, name)(scalar, P.empty_strided([2, 3], [3, 1], dtype=dtype, device="meta"))
    assert meta.device.type == "meta" and tuple(meta.shape) == (2, 3)


@pytest.mark.parametrize("dtype", FLOAT)
@settings(max_examples=15, deadline=None)
@given(shape=shapes, layouts=st.tuples(st.sampled_from(LAYOUTS), st.sampled_from(OTHER_LAYOUTS)), seed=seeds)
def test_nextafter(dtype, shape, layouts, seed):
    """Computed in the dtype itself (no widening): the oracle is NumPy's nextafter on the same dtype."""
    a, b = make_inputs(seed, shape, [dtype, dtype], layouts)
    x, y = np.array(a.numpy()), np.array(b.numpy())
    got = P.nextafter(a, b)
    assert got.dtype is dtype
    expected = np.nextafter(x, y)
    np.testing.assert_array_equal(_bits(got.numpy()), _bits(np.asarray(expected, dtype.numpy)))


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


def test_nextafter_bfloat16_steps():
    bf = opweave.bfloat16.numpy
    x = opweave.from_numpy(np.array([1.0, 0.0, -0.0, 1.0], bf))
    y = opweave.from_numpy(np.array([2.0, 1.0, -1.0, 1.0], bf))
    got = P.nextafter(x, y).numpy().astype(np.float64)
    np.testing.assert_array_equal(got, [1.0078125, 2.0**-133, -(2.0**-133), 1.0])


@pytest.mark.parametrize("name", ["div", "remainder", "fmod", "floor_divide"])
@pytest.mark.parametrize("dtype", INT)
def test_integer_division_by_zero(name, dtype):
    a = opweave.from_numpy(np.array([4, 5, 6], dtype.numpy))
    b = opweave.from_numpy(np.array([1, 0, 2], dtype.numpy))
    with pytest.raises(RuntimeError, match=f"prims::{name}.*ZeroDivisionError"):
        getattr(P, name)(a, b)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        getattr(P, name)(a, opweave.from_numpy(np.array(0, dtype.numpy)))


@pytest.mark.parametrize("name", ["div", "remainder", "fmod", "floor_divide"])
def test_float_division_by_zero_is_ieee(name):
    a = opweave.from_numpy(np.array([1.0, -1.0, 0.0, np.nan]))
    b = opweave.from_numpy(np.zeros(4))
    got = getattr(P, name)(a, b).numpy()
    expected = {"div": [np.inf, -np.inf, np.nan, np.nan], "floor_divide": [np.inf, -np.inf, np.nan, np.nan]}
    np.testing.assert_array_equal(got, expected.get(name, [np.nan] * 4))


def test_div_truncates_integers():
    a = opweave.from_numpy(np.array([7, -7, 7, -7, -128], np.int8))
    b = opweave.from_numpy(np.array([2, 2, -2, -2, -1], np.int8))
    np.testing.assert_array_equal(P.div(a, b).numpy(), [3, -3, -3, 3, -128])
    np.testing.assert_array_equal(P.floor_divide(a, b).numpy(), [3, -4, -4, 3, -128])
    np.testing.assert_array_equal(P.remainder(a, b).numpy(), [1, 1, -1, -1, 0])
    np.testing.assert_array_equal(P.fmod(a, b).numpy(), [1, -1, 1, -1, 0])


def test_pow_semantics():
    ints_ = opweave.from_numpy(np.array([0, 2, -3, 3], np.int32))
    exps = opweave.from_numpy(np.array([0, 10, 3, 21], np.int32))
    np.testing.assert_array_equal(P.pow(ints_, exps).numpy(), [1, 1024, -27, wrap32(3**21)])
    with pytest.raises(RuntimeError, match="prims::pow: Integers to negative integer powers are not allowed"):
        P.pow(ints_, opweave.from_numpy(np.array([1, 1, -1, 1], np.int32)))
    x = opweave.from_numpy(np.array([-8.0, 0.0, 2.0, -0.0]))
    got = P.pow(x, opweave.from_numpy(np.array([1 / 3, 0.0, -1.0, -1.0]))).numpy()
    np.testing.assert_array_equal(got, [np.nan, 1.0, 0.5, -np.inf])


def wrap32(v):
    return (v + 2**31) % 2**32 - 2**31


def test_float_modulus_signs():
    a = opweave.from_numpy(np.array([5.0, -5.0, 5.0, -5.0, -5.0, 3.0]))
    b = opweave.from_numpy(np.array([3.0, 3.0, -3.0, -3.0, np.inf, -np.inf]))
    np.testing.assert_array_equal(P.remainder(a, b).numpy(), [2.0, 1.0, -1.0, -2.0, np.inf, -np.inf])
    np.testing.assert_array_equal(P.fmod(a, b).numpy(), [2.0, -2.0, 2.0, -2.0, -5.0, 3.0])
    np.testing.assert_array_equal(P.floor_divide(a, b).numpy(), [1.0, -2.0, -2.0, 1.0, -1.0, -1.0])


def test_heaviside_nan_is_zero():
    x = opweave.from_numpy(np.array([np.nan, 0.0, -0.0, -2.0, 3.0]))
    v = opweave.from_numpy(np.array(0.5))
    np.testing.assert_array_equal(P.heaviside(x, v).numpy(), [0.0, 0.5, 0.5, 0.0, 1.0])


def test_xlogy_zero_rules():
    x = opweave.from_numpy(np.array([0.0, 0.0, 0.0, 2.0], np.float32))
    y = opweave.from_numpy(np.array([0.0, np.inf, np.nan, 0.0], np.float32))
    np.testing.assert_array_equal(P.xlogy(x, y).numpy(), [0.0, 0.0, np.nan, -np.inf])
    np.testing.assert_array_equal(P.xlog1py(x, y).numpy(), [0.0, 0.0, np.nan, 0.0])


@pytest.mark.parametrize("dtype", INT)
def test_shifts_out_of_range(dtype):
    bits = dtype.numpy.itemsize * 8
    a = opweave.from_numpy(np.array([1, 3, 5, 1, 1], dtype.numpy))
    amounts = [bits, bits + 1, bits + 5, 0, 1] if dtype.kind == "uint" else [-1, bits, bits + 5, 0, 1]
    b = opweave.from_numpy(np.array(amounts, dtype.numpy))
    np.testing.assert_array_equal(P.shift_left(a, b).numpy(), [0, 0, 0, 1, 2])
    np.testing.assert_array_equal(P.shift_right_arithmetic(a, b).numpy(), [0, 0, 0, 1, 0])
    if dtype.kind == "int":
        neg = opweave.from_numpy(np.array([-5, -5, -5, -4], dtype.numpy))
        amt = opweave.from_numpy(np.array([-1, bits - 1, bits, 1], dtype.numpy))
        np.testing.assert_array_equal(P.shift_right_arithmetic(neg, amt).numpy(), [-1, -1, -1, -2])


def test_gcd_lcm_signs():
    a = opweave.from_numpy(np.array([-12, 0, 0, 7, -4], np.int64))
    b = opweave.from_numpy(np.array([18, 0, -5, -21, -6], np.int64))
    np.testing.assert_array_equal(P.gcd(a, b).numpy(), [6, 0, 5, 7, 2])
    np.testing.assert_array_equal(P.lcm(a, b).numpy(), [36, 0, 0, 21, 12])


def test_igamma_special_cases():
    a = opweave.from_numpy(np.array([-1.0, 0.0, 0.0, 2.0, np.inf, np.inf, 2.0, np.nan]))
    x = opweave.from_numpy(np.array([1.0, 1.0, 0.0, 0.0, np.inf, 1.0, np.inf, 0.0]))
    np.testing.assert_array_equal(P.igamma(a, x).numpy(), [np.nan, 1.0, np.nan, 0.0, np.nan, 0.0, 1.0, 0.0])
    np.testing.assert_array_equal(P.igammac(a, x).numpy(), [np.nan, 0.0, np.nan, 1.0, np.nan, 1.0, 0.0, 1.0])


def test_zeta_special_cases():
    x = opweave.from_numpy(np.array([1.0, 0.5, 2.0, 2.0, 2.5]))
    q = opweave.from_numpy(np.array([1.0, 1.0, -1.0, 1.0, -1.5]))
    got = P.zeta(x, q).numpy()
    np.testing.assert_array_equal(got[:3], [np.inf, np.nan, np.inf])
    np.testing.assert_allclose(got[3], np.pi**2 / 6, rtol=1e-12)
    assert np.isnan(got[4])


# ---------------------------------------------------------------- complex and polar


def _complex(re, im):
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), np.complex128)
    out.real, out.imag = re, im
    return out


@pytest.mark.parametrize(
    ("name", "oracle"),
    [("complex", _complex), ("polar", lambda r, t: _complex(r * np.cos(t), r * np.sin(t)))],
)
@pytest.mark.parametrize("dtype", [opweave.float32, opweave.float64])
@settings(max_examples=15, deadline=None)
@given(shape=shapes, layouts=st.tuples(st.sampled_from(LAYOUTS), st.sampled_from(OTHER_LAYOUTS)), seed=seeds)
def test_complex_and_polar(name, oracle, dtype, shape, layouts, seed):
    a, b = make_inputs(seed, shape, [dtype, dtype], layouts)
    check_call(getattr(P, name), [a, b], oracle, dtype.to_complex())


@pytest.mark.parametrize("name", ["complex", "polar"])
def test_complex_rejects(name):
    for dtype in [d for d in opweave.ALL_DTYPES if d not in (opweave.float32, opweave.float64)]:
        x = P.empty_strided([2], [1], dtype=dtype, device="meta")
        with pytest.raises(TypeError, match=f"prims::{name}"):
            getattr(P, name)(x, x)
    f32 = P.empty_strided([2], [1], dtype=opweave.float32, device="meta")
    f64 = P.empty_strided([2], [1], dtype=opweave.float64, device="meta")
    with pytest.raises(TypeError, match=f"prims::{name}"):
        getattr(P, name)(f32, f64)


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize("name", list(B))
def test_binary_rejects(name):
    op = getattr(P, name)
    allowed = B[name].dtypes
    dtype = allowed[-1]
    meta = P.empty_strided([2, 3], [3, 1], dtype=dtype, device="meta")
    for bad in unsupported(allowed):
        x = P.empty_strided([2, 3], [3, 1], dtype=bad, device="meta")
        with pytest.raises(TypeError, match=f"prims::{name}"):
            op(x, x)
    other = next(d for d in allowed if d is not dtype)
    with pytest.raises(TypeError, match=f"prims::{name}.*same dtype"):
        op(meta, P.empty_strided([2, 3], [3, 1], dtype=other, device="meta"))
    with pytest.raises(ValueError, match=f"prims::{name}.*same shape"):
        op(meta, P.empty_strided([3, 2], [2, 1], dtype=dtype, device="meta"))
    with pytest.raises(ValueError, match=f"prims::{name}.*same shape"):
        op(meta, P.empty_strided([1, 3], [3, 1], dtype=dtype, device="meta"))
    with pytest.raises(TypeError, match=name):
        op(meta, 1)
    assert "pointwise" in op.default.tags and op.default.__doc__


def test_comparisons_reject_complex():
    z = opweave.from_numpy(np.array([1j, 2j]))
    for name in ("lt", "le", "gt", "ge"):
        with pytest.raises(TypeError, match=f"prims::{name}"):
            getattr(P, name)(z, z)
    assert P.eq(z, z).numpy().all()


def test_binary_device_mismatch():
    cpu = opweave.from_numpy(np.ones((2, 3), np.float32))
    meta = P.empty_strided([2, 3], [3, 1], dtype=opweave.float32, device="meta")
    with pytest.raises(RuntimeError, match="prims::add"):
        P.add(cpu, meta)
