"""Unary elementwise prims against NumPy/SciPy oracles (PyTorch semantics where they differ)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import opweave
import pytest
import scipy.special as sp
from _elementwise_support import (
    ALL,
    BOOL,
    COMPLEX,
    FLOAT,
    FLOATING,
    INT,
    INTEGRAL,
    LAYOUTS,
    NUMERIC,
    REAL,
    P,
    check_call,
    condition_atol,
    floats,
    make_inputs,
    seeds,
    shapes,
    unsupported,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from opweave_conformance import accurate as acc


@dataclass
class Case:
    """One prim: accepted dtypes, oracle on widened NumPy arrays, output dtype rule, tolerance scale."""

    dtypes: tuple
    oracle: object
    out: str = "same"  # "same", "bool" or "real"
    rtol: float = 1.0
    atol: float = 0.0
    conditioned: bool = False  # tolerance relative to the argument's condition too (see condition_atol)


def out_dtype(case, dtype):
    return {"same": dtype, "bool": opweave.bool, "real": dtype.to_real()}[case.out]


def _where_nonzero(x, fn):
    return np.where(x == 0, 0, fn(np.where(x == 0, 1, x)))


def _identity_on_ints(fn):
    return lambda x: x if x.dtype.kind in "iub" else fn(x)


def _sign(x):
    return np.sign(x)


def _sgn(x):
    if x.dtype.kind != "c":
        return np.sign(x)
    return _where_nonzero(np.abs(x), lambda m: x / m) if x.size else x


def _angle(x):
    if x.dtype.kind == "c":
        return np.arctan2(x.imag, x.real)
    return np.where(np.isnan(x), np.nan, np.where(x < 0, np.pi, 0.0))


def _accurate(oracle, in_dtype):
    """``oracle`` (long double or mpmath); for complex ``x``, where ``in_dtype(x)`` (the function computed in ``x``'s
    own dtype, as PyTorch computes it) overflows to inf or nan and the accurate value is not nan, that value instead:
    an ``exp`` or ``sin`` of a large part overflows (to inf, or nan once inf meets inf) before it is scaled back."""

    def check(x):
        out = oracle(x)
        if x.dtype.kind == "c" and x.size:
            with np.errstate(all="ignore"):
                plain = np.asarray(in_dtype(x), x.dtype)
            overflow = ~np.isfinite(plain) & ~np.isnan(out)
            out[overflow] = plain[overflow]
        return out

    return check


def _ld(ufunc):
    """``ufunc`` in long double, overflowing as in ``x``'s own dtype (see :func:`_accurate`)."""
    return _accurate(acc.extended(ufunc), ufunc)


def _sinc_in_dtype(x):
    y = x * x.real.dtype.type(np.pi)
    return np.where(x == 0, 1, np.sin(y) / np.where(x == 0, 1, y))


def _sinc(x):
    """PyTorch's ``sinc``: ``y = pi * x`` rounded in ``x``'s dtype, then ``sin(y) / y`` (1 at 0), here in long double.

    The rounding of ``pi * x`` is part of the definition: ``sin`` multiplies its error by ``|y|``, and at integers it
    is the whole value.
    """
    y = np.asarray(x * x.real.dtype.type(np.pi))
    return np.where(x == 0, 1, acc.extended(np.sin)(y) / np.where(x == 0, 1, y))


def _exp2(x):
    # PyTorch computes complex 2**z as exp(ln(2) * z)
    return np.exp2(x) if x.dtype.kind == "f" else np.exp(np.asarray(np.log(2), x.real.dtype) * x)


U = {
    "acos": Case(FLOATING, _ld(np.arccos)),
    "acosh": Case(FLOATING, _ld(np.arccosh)),
    "asin": Case(FLOATING, _ld(np.arcsin)),
    "asinh": Case(FLOATING, _ld(np.arcsinh)),
    "atan": Case(FLOATING, _ld(np.arctan)),
    "atanh": Case(FLOATING, _ld(np.arctanh)),
    "cos": Case(FLOATING, _ld(np.cos)),
    "cosh": Case(FLOATING, _ld(np.cosh)),
    "sin": Case(FLOATING, _ld(np.sin)),
    "sinh": Case(FLOATING, _ld(np.sinh)),
    "tan": Case(FLOATING, _ld(np.tan)),
    "tanh": Case(FLOATING, _ld(np.tanh)),
    "exp": Case(FLOATING, _ld(np.exp), atol=1e-38),  # complex64 subnormals round twice
    "exp2": Case(FLOATING, _exp2),
    "expm1": Case(FLOATING, _ld(np.expm1)),
    "log": Case(FLOATING, _ld(np.log)),
    "log1p": Case(FLOATING, _accurate(acc.log1p, np.log1p), atol=2.5e-7),  # complex: |1 + x|^2 - 1 cancels, to eps
    "log2": Case(FLOATING, _ld(np.log2)),
    "log10": Case(FLOATING, _ld(np.log10)),
    "sqrt": Case(FLOATING, _ld(np.sqrt)),
    "rsqrt": Case(FLOATING, lambda x: 1 / np.sqrt(x)),
    "reciprocal": Case(FLOATING, lambda x: 1 / x),
    "sigmoid": Case(FLOATING, lambda x: 1 / (1 + np.exp(-x))),
    # complex: a part far smaller than |sinc(x)| carries the dtype's rounding of the whole (compared part by part)
    "sinc": Case(FLOATING, _accurate(_sinc, _sinc_in_dtype), atol=1e-7),
    "cbrt": Case(FLOAT, acc.extended(np.cbrt)),
    "erf": Case(FLOAT, acc.erf, conditioned=True),
    "erfc": Case(FLOAT, acc.erfc, conditioned=True),
    "erfcx": Case(FLOAT, acc.erfcx, conditioned=True),
    "erf_inv": Case(FLOAT, acc.erfinv, conditioned=True),
    "lgamma": Case(FLOAT, acc.lgamma, conditioned=True),
    "digamma": Case(FLOAT, acc.digamma, conditioned=True),
    "ndtri": Case(FLOAT, acc.ndtri, conditioned=True),
    "ndtr": Case(FLOAT, acc.ndtr, conditioned=True),
    "log_ndtr": Case(FLOAT, acc.log_ndtr, conditioned=True),
    "bessel_i0": Case(FLOAT, acc.i0, conditioned=True),
    "bessel_i0e": Case(FLOAT, acc.i0e, conditioned=True),
    "bessel_i1": Case(FLOAT, acc.i1, conditioned=True),
    "bessel_i1e": Case(FLOAT, acc.i1e, conditioned=True),
    "bessel_j0": Case(FLOAT, acc.j0, conditioned=True),
    "bessel_j1": Case(FLOAT, acc.j1, conditioned=True),
    "bessel_y0": Case(FLOAT, acc.y0, conditioned=True),
    "bessel_y1": Case(FLOAT, acc.y1, conditioned=True),
    "modified_bessel_k0": Case(FLOAT, acc.k0, conditioned=True),
    "modified_bessel_k1": Case(FLOAT, acc.k1, conditioned=True),
    "scaled_modified_bessel_k0": Case(FLOAT, acc.k0e, conditioned=True),
    "scaled_modified_bessel_k1": Case(FLOAT, acc.k1e, conditioned=True),
    "spherical_bessel_j0": Case(FLOAT, acc.spherical_j0, conditioned=True),
    "airy_ai": Case(FLOAT, acc.airy_ai, conditioned=True),
    "entr": Case(FLOAT, acc.entr, conditioned=True),
    "frac": Case(FLOAT, lambda x: np.fmod(x, 1)),
    "ceil": Case(REAL, _identity_on_ints(np.ceil)),
    "floor": Case(REAL, _identity_on_ints(np.floor)),
    "round": Case(REAL, _identity_on_ints(np.round)),
    "trunc": Case(REAL, _identity_on_ints(np.trunc)),
    "abs": Case(NUMERIC, np.abs, "real"),
    "neg": Case(NUMERIC, np.negative),
    "sign": Case(REAL, _sign),
    "sgn": Case(NUMERIC, _sgn),
    "signbit": Case(REAL, lambda x: x < 0 if x.dtype.kind in "iu" else np.signbit(x), "bool"),
    "bitwise_not": Case(INTEGRAL, lambda x: ~x),
    "logical_not": Case(ALL, lambda x: x == 0, "bool"),
    "isfinite": Case(ALL, lambda x: np.isfinite(x.real) & np.isfinite(x.imag), "bool"),
    "isinf": Case(ALL, lambda x: np.isinf(x.real) | np.isinf(x.imag), "bool"),
    "isnan": Case(ALL, lambda x: np.isnan(x.real) | np.isnan(x.imag), "bool"),
    "isposinf": Case(REAL + BOOL, lambda x: x.astype(np.float64) == np.inf, "bool"),
    "isneginf": Case(REAL + BOOL, lambda x: x.astype(np.float64) == -np.inf, "bool"),
    "real": Case(COMPLEX, lambda x: x.real, "real"),
    "imag": Case(COMPLEX, lambda x: x.imag, "real"),
    "angle": Case(FLOATING, _angle, "real"),
    "conj_physical": Case(NUMERIC, np.conj),
}

PAIRS = [(name, dtype) for name, case in U.items() for dtype in case.dtypes]


def _ids(pair):
    return f"{pair[0]}-{pair[1].name}"


@pytest.mark.parametrize("pair", PAIRS, ids=_ids)
@settings(max_examples=4, deadline=None)
@given(shape=shapes, layout=st.sampled_from(LAYOUTS), seed=seeds)
def test_unary_values(pair, shape, layout, seed):
    name, dtype = pair
    case = U[name]
    (x,) = make_inputs(seed, shape, [dtype], [layout])
    check_call(
        getattr(P, name),
        [x],
        case.oracle,
        out_dtype(case, dtype),
        rtol_scale=case.rtol,
        atol=case.atol,
        conditioned=case.conditioned,
    )


@pytest.mark.parametrize("pair", PAIRS, ids=_ids)
def test_unary_special_values(pair):
    """Every special value (nan, +-inf, +-0, ...) and a transposed view, deterministically."""
    name, dtype = pair
    case = U[name]
    (x,) = make_inputs(12345, (4, 9), [dtype], ["transposed"], [floats(specials=np.array([0.0]), fraction=0)])
    check_call(getattr(P, name), [x], case.oracle, out_dtype(case, dtype), (), case.rtol, case.atol, case.conditioned)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -3.0, 1e-3])
    if dtype.kind in ("int", "uint", "bool"):
        special = np.array([0, 1, 2, 7, 100, 127, -1, -7, -128], np.int64)
    with np.errstate(all="ignore"):
        data = special.astype(dtype.numpy)
        if dtype.is_complex:
            data = (special[:, None] + 1j * special[None, :]).astype(dtype.numpy)
    check_call(
        getattr(P, name),
        [opweave.from_numpy(data)],
        case.oracle,
        out_dtype(case, dtype),
        (),
        case.rtol,
        case.atol,
        case.conditioned,
    )


@pytest.mark.parametrize("name", list(U))
def test_unary_rejects(name):
    op = getattr(P, name)
    for dtype in unsupported(U[name].dtypes):
        x = P.empty_strided([3], [1], dtype=dtype, device="cpu")
        with pytest.raises(TypeError, match=f"prims::{name}"):
            op(x)
        with pytest.raises(TypeError, match=f"prims::{name}"):
            op(P.empty_strided([3], [1], dtype=dtype, device="meta"))
    with pytest.raises(TypeError, match=name):
        op(1.0)


def test_unary_tags_and_docs():
    for name in list(U) + ["round_decimals", "nan_to_num", "polygamma", "mvlgamma", "fill", "logit"]:
        overload = getattr(P, name).default
        assert "pointwise" in overload.tags
        assert overload.__doc__ and not overload.__doc__.startswith("prims::")


# ---------------------------------------------------------------- parameterised


@settings(max_examples=30, deadline=None)
@given(
    dtype=st.sampled_from(FLOAT),
    shape=shapes,
    layout=st.sampled_from(LAYOUTS),
    seed=seeds,
    decimals=st.integers(-3, 4),
)
def test_round_decimals(dtype, shape, layout, seed, decimals):
    (x,) = make_inputs(seed, shape, [dtype], [layout], [floats(-1e4, 1e4)])
    check_call(P.round_decimals, [x], lambda a, d: np.round(a, d), dtype, (decimals,))


def test_round_decimals_half_to_even():
    x = opweave.from_numpy(np.array([0.125, 0.375, -0.125, 25.0, 35.0, 15.0, np.nan, -np.inf]))
    got = P.round_decimals(x, 2).numpy()
    np.testing.assert_array_equal(got[:3], [0.12, 0.38, -0.12])
    np.testing.assert_array_equal(P.round_decimals(x, -1).numpy()[3:6], [20.0, 40.0, 20.0])
    assert np.isnan(got[6]) and got[7] == -np.inf


def _nan_to_num_oracle(dtype):
    info = opweave.finfo(dtype.to_real())

    def oracle(a, nan, posinf, neginf):
        fill = 0.0 if nan is None else nan
        hi = float(info.max) if posinf is None else posinf
        lo = float(info.min) if neginf is None else neginf
        return np.nan_to_num(
            a.astype(np.complex128 if a.dtype.kind == "c" else np.float64), nan=fill, posinf=hi, neginf=lo
        )

    return oracle


maybe_float = st.one_of(st.none(), st.sampled_from([0.0, -1.5, 7.0, 1e30, -1e300]))


@settings(max_examples=40, deadline=None)
@given(
    dtype=st.sampled_from(FLOATING),
    shape=shapes,
    layout=st.sampled_from(LAYOUTS),
    seed=seeds,
    nan=maybe_float,
    posinf=maybe_float,
    neginf=maybe_float,
)
def test_nan_to_num(dtype, shape, layout, seed, nan, posinf, neginf):
    (x,) = make_inputs(seed, shape, [dtype], [layout], [floats(fraction=0.5)])
    check_call(P.nan_to_num, [x], _nan_to_num_oracle(dtype), dtype, (nan, posinf, neginf))


def test_nan_to_num_defaults():
    x = opweave.from_numpy(np.array([np.nan, np.inf, -np.inf, 2.0], opweave.bfloat16.numpy))
    got = P.nan_to_num(x).numpy().astype(np.float64)
    big = float(opweave.finfo(opweave.bfloat16).max)
    np.testing.assert_array_equal(got, [0.0, big, -big, 2.0])


def _polygamma(x, n):
    x = x.astype(np.float64)
    if n == 0:
        return acc.digamma(x)
    return (-1.0) ** (n + 1) * sp.gamma(n + 1) * sp.zeta(n + 1, x)


@settings(max_examples=40, deadline=None)
@given(dtype=st.sampled_from(FLOAT), shape=shapes, layout=st.sampled_from(LAYOUTS), seed=seeds, n=st.integers(0, 4))
def test_polygamma(dtype, shape, layout, seed, n):
    (x,) = make_inputs(seed, shape, [dtype], [layout], [floats(0.05, 20, specials=np.array([np.nan, 1.0, 2.5]))])
    check_call(P.polygamma, [x], _polygamma, dtype, (n,), rtol_scale=10, conditioned=True)


def test_polygamma_negative_order():
    with pytest.raises(ValueError, match="prims::polygamma"):
        P.polygamma(opweave.from_numpy(np.ones(2)), -1)


def _mvlgamma(x, p):
    flat = [sp.multigammaln(v, p) if np.isfinite(v) else np.inf for v in x.astype(np.float64).reshape(-1)]
    return np.array(flat, np.float64).reshape(x.shape)


@settings(max_examples=30, deadline=None)
@given(dtype=st.sampled_from(FLOAT), shape=shapes, layout=st.sampled_from(LAYOUTS), seed=seeds, p=st.integers(1, 4))
def test_mvlgamma(dtype, shape, layout, seed, p):
    lo = (p - 1) / 2
    (x,) = make_inputs(seed, shape, [dtype], [layout], [floats(lo + 0.6, lo + 30, specials=np.array([np.inf, lo + 1]))])
    # the sum of p lgammas cancels near its zeros: the tolerance follows the argument's condition there
    check_call(P.mvlgamma, [x], _mvlgamma, dtype, (p,), rtol_scale=10, conditioned=True)


@pytest.mark.parametrize("bad", [0.5, np.nan, -3.0])
def test_mvlgamma_domain(bad):
    x = opweave.from_numpy(np.array([5.0, bad], np.float32))
    with pytest.raises(ValueError, match="prims::mvlgamma"):
        P.mvlgamma(x, 2)
    assert P.mvlgamma(P.empty_strided([2], [1], dtype=opweave.float32, device="meta"), 2).shape == (2,)
    with pytest.raises(ValueError, match="prims::mvlgamma"):
        P.mvlgamma(x, 0)


def _fill_value(dtype, draw):
    if dtype is opweave.bool:
        return draw(st.sampled_from([True, False, 0, 3, 0.5]))
    if dtype.kind in ("int", "uint"):
        info = np.iinfo(dtype.numpy)
        return draw(
            st.one_of(
                st.integers(int(info.min), int(info.max)),
                st.sampled_from([True, 2.7, -0.9]).filter(lambda v: info.min <= v <= info.max),
            )
        )
    value = draw(st.sampled_from([0.0, -2.5, 1.0e4, float("nan"), float("inf"), 3, True]))
    if dtype.is_complex and draw(st.booleans()):
        value = complex(value, -1.5)
    return value


@settings(max_examples=60, deadline=None)
@given(dtype=st.sampled_from(ALL), shape=shapes, layout=st.sampled_from(LAYOUTS), seed=seeds, data=st.data())
def test_fill(dtype, shape, layout, seed, data):
    value = _fill_value(dtype, data.draw)
    (x,) = make_inputs(seed, shape, [dtype], [layout])
    expected = int(value) if dtype.kind in ("int", "uint") else value
    check_call(P.fill, [x], lambda a, v: np.full(a.shape, expected, dtype.numpy), dtype, (value,))


@pytest.mark.parametrize(
    ("dtype", "value", "error"),
    [
        (opweave.uint8, 256, ValueError),
        (opweave.int8, -129, ValueError),
        (opweave.int32, float("nan"), ValueError),
        (opweave.int64, float("inf"), ValueError),
        (opweave.float16, 1e5, ValueError),
        (opweave.float32, 1e300, ValueError),
        (opweave.float32, 1j, TypeError),
        (opweave.int16, 2 + 0j, TypeError),
    ],
)
def test_fill_rejects(dtype, value, error):
    x = P.empty_strided([2], [1], dtype=dtype, device="meta")
    with pytest.raises(error, match="prims::fill"):
        P.fill(x, value)


def _logit(x, eps):
    x = x.astype(np.float64)
    if eps is not None and eps >= 0:
        x = np.where(x < eps, eps, np.where(x > 1 - eps, 1 - eps, x))
    return np.log(x) - np.log1p(-x)


@settings(max_examples=40, deadline=None)
@given(
    dtype=st.sampled_from(FLOAT),
    shape=shapes,
    layout=st.sampled_from(LAYOUTS),
    seed=seeds,
    eps=st.sampled_from([None, 0.0, 1e-3, 0.25, -1.0]),
)
def test_logit(dtype, shape, layout, seed, eps):
    (x,) = make_inputs(seed, shape, [dtype], [layout], [floats(-0.2, 1.2)])
    # log(x / (1 - x)) crosses 0 at x = 0.5: the tolerance follows the argument's condition there
    check_call(P.logit, [x], _logit, dtype, (eps,), rtol_scale=10, conditioned=True)


@pytest.mark.parametrize(
    ("name", "args", "allowed"),
    [
        ("round_decimals", (1,), FLOAT),
        ("nan_to_num", (None, None, None), FLOATING),
        ("polygamma", (1,), FLOAT),
        ("mvlgamma", (1,), FLOAT),
        ("logit", (None,), FLOAT),
    ],
)
def test_parameterised_rejects(name, args, allowed):
    for dtype in unsupported(allowed):
        if dtype.is_float8:
            continue
        with pytest.raises(TypeError, match=f"prims::{name}"):
            getattr(P, name)(P.empty_strided([2], [1], dtype=dtype, device="meta"), *args)


def test_dtype_groups_cover_brief():
    """The groups used above match the brief's: floats + complex, ints + bool."""
    assert set(FLOATING) == set(FLOAT) | set(COMPLEX)
    assert set(INTEGRAL) == set(INT) | set(BOOL)


def test_condition_tolerance_tracks_the_argument():
    """The conditioned tolerance admits J1's float64 error at its zeros and nothing a wrong kernel gives elsewhere."""
    zero = 79.32048717547629  # nearest double to the 25th zero of J1, where SciPy is 1.4e-12 relative off
    x = np.array([zero, -zero, 2.5, 30.0])
    bound = condition_atol(acc.j1, [x], (), 1e-12)
    exact = acc.j1(x)
    assert np.all(bound[:2] > np.abs(sp.j1(x[:2]) - exact[:2]))
    assert np.all(bound < 1e-10)  # a kernel 1e-9 relative off away from the zeros fails
    with pytest.raises(AssertionError):
        check_call(
            P.bessel_j1,
            [opweave.from_numpy(x[2:])],
            lambda a: acc.j1(a) * (1 + 1e-9),
            opweave.float64,
            (),
            1.0,
            0.0,
            True,
        )
