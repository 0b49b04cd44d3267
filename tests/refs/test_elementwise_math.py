"""Unary elementwise canonical ops (math, rounding, sign, classification, complex parts, torch.special).

Every op is checked against a NumPy/SciPy oracle for every dtype it supports
(and a TypeError for the others), on CPU and on the meta device; a
representative subset gets hypothesis inputs (shapes incl. 0-dim and empty,
non-contiguous layouts, nan/±inf/-0.0); in-place and ``out=`` variants are
checked for every op that has them.
"""

from __future__ import annotations

import math

import _ew_support as S
import numpy as np
import opweave as ow
import pytest
import scipy.special as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from opweave_conformance import accurate as acc

ALL, FLOATING, REAL, NUMERIC = S.ALL, S.FLOATING, S.REAL, S.NUMERIC
NOT_COMPLEX = S.BOOL + S.REAL


def _wrap_int(fn):
    """An oracle computing in the result dtype for integer results (so integers wrap like C)."""

    def oracle(x, rd):
        return fn(x.astype(rd)) if rd.kind in "iub" else fn(x)

    return oracle


def _angle(x, rd):
    if np.iscomplexobj(x):
        return np.angle(x)
    return np.where(np.isnan(x), np.nan, np.where(x < 0, np.pi, 0.0))


def _sgn(x, rd):
    if np.iscomplexobj(x):
        with S.oracle_errors():
            return np.where(x == 0, 0, x / np.abs(x))
    return _sign(x, rd)


def _nan_to_num(x, rd):
    d = ow.dtype_of_numpy(rd)
    if S.category(d) < 2:
        return x
    info = ow.finfo(S.complex_to_float(d))
    return np.nan_to_num(x, nan=0.0, posinf=info.max, neginf=info.min)


def _sign(x, rd):
    """PyTorch's sign: NaN gives 0."""
    if x.dtype == bool:
        return np.sign(x.astype(np.int8))
    out = np.sign(x)
    return out if out.dtype.kind in "iu" else np.where(np.isnan(out), 0, out)


def _f(fn):
    return lambda x, rd: fn(x)


# name -> (oracle(values, result numpy dtype), promotion kind, supported input dtypes, domain, extra rtol)
UNARY = {
    "acos": (_f(acc.extended(np.arccos)), "int_to_float", ALL, "unit", 0),
    "acosh": (_f(acc.extended(np.arccosh)), "int_to_float", ALL, "gt1", 0),
    "asin": (_f(acc.extended(np.arcsin)), "int_to_float", ALL, "unit", 0),
    "asinh": (_f(acc.extended(np.arcsinh)), "int_to_float", ALL, "any", 0),
    "atan": (_f(acc.extended(np.arctan)), "int_to_float", ALL, "any", 0),
    "atanh": (_f(acc.extended(np.arctanh)), "int_to_float", ALL, "unit", 0),
    "cos": (_f(acc.extended(np.cos)), "int_to_float", ALL, "any", 0),
    "cosh": (_f(acc.extended(np.cosh)), "int_to_float", ALL, "small", 0),
    "sin": (_f(acc.extended(np.sin)), "int_to_float", ALL, "any", 0),
    "sinh": (_f(acc.extended(np.sinh)), "int_to_float", ALL, "small", 0),
    "tan": (_f(acc.extended(np.tan)), "int_to_float", ALL, "unit", 0),
    "tanh": (_f(acc.extended(np.tanh)), "int_to_float", ALL, "any", 0),
    "exp": (_f(acc.extended(np.exp)), "int_to_float", ALL, "small", 0),
    "exp2": (_f(acc.extended(np.exp2)), "int_to_float", ALL, "small", 0),
    "expm1": (_f(acc.extended(np.expm1)), "int_to_float", ALL, "small", 0),
    "log": (_f(acc.extended(np.log)), "int_to_float", ALL, "pos", 0),
    "log1p": (_f(acc.log1p), "int_to_float", ALL, "pos", 0),
    "log2": (_f(acc.extended(np.log2)), "int_to_float", ALL, "pos", 0),
    "log10": (_f(acc.extended(np.log10)), "int_to_float", ALL, "pos", 0),
    "sqrt": (_f(acc.extended(np.sqrt)), "int_to_float", ALL, "any", 0),
    "rsqrt": (_f(lambda x: 1 / np.sqrt(x)), "int_to_float", ALL, "pos", 0),
    "reciprocal": (_f(lambda x: 1 / x), "int_to_float", ALL, "nonzero", 0),
    "sigmoid": (_f(lambda x: 1 / (1 + np.exp(-x))), "int_to_float", ALL, "any", 0),
    "sinc": (_f(acc.sinc), "int_to_float", ALL, "any", 0),
    "erf": (_f(acc.erf), "int_to_float", NOT_COMPLEX, "any", 0),
    "erfc": (_f(acc.erfc), "int_to_float", NOT_COMPLEX, "any", 0),
    "erfinv": (_f(acc.erfinv), "int_to_float", NOT_COMPLEX, "unit", 0),
    "lgamma": (_f(acc.lgamma), "int_to_float", NOT_COMPLEX, "pos", 1e-5),
    "digamma": (_f(acc.digamma), "int_to_float", NOT_COMPLEX, "pos", 1e-5),
    "i0": (_f(acc.i0), "int_to_float", NOT_COMPLEX, "small", 0),
    "ceil": (_f(np.ceil), "default", NOT_COMPLEX, "any", 0),
    "floor": (_f(np.floor), "default", NOT_COMPLEX, "any", 0),
    "round": (_f(np.round), "default", NOT_COMPLEX, "any", 0),
    "trunc": (_f(np.trunc), "default", NOT_COMPLEX, "any", 0),
    "fix": (_f(np.trunc), "default", NOT_COMPLEX, "any", 0),
    "frac": (_f(lambda x: x - np.trunc(x)), "default", S.FLOAT, "any", 0),
    "abs": (_wrap_int(np.abs), "complex_to_float", ALL, "any", 0),
    "absolute": (_wrap_int(np.abs), "complex_to_float", ALL, "any", 0),
    "neg": (_wrap_int(np.negative), "default", NUMERIC, "any", 0),
    "negative": (_wrap_int(np.negative), "default", NUMERIC, "any", 0),
    "sign": (_sign, "default", NOT_COMPLEX, "any", 0),
    "sgn": (_sgn, "default", ALL, "any", 0),
    "signbit": (_f(np.signbit), "always_bool", NOT_COMPLEX, "any", 0),
    "square": (_wrap_int(lambda x: x * x), "bool_to_long", ALL, "any", 0),
    "deg2rad": (_f(np.deg2rad), "int_to_float", NOT_COMPLEX, "any", 0),
    "rad2deg": (_f(np.rad2deg), "int_to_float", NOT_COMPLEX, "any", 0),
    "nan_to_num": (_nan_to_num, "default", ALL, "any", 0),
    "isfinite": (_f(np.isfinite), "always_bool", ALL, "any", 0),
    "isinf": (_f(np.isinf), "always_bool", ALL, "any", 0),
    "isnan": (_f(np.isnan), "always_bool", ALL, "any", 0),
    "isposinf": (_f(lambda x: np.isinf(x) & (x > 0)), "always_bool", NOT_COMPLEX, "any", 0),
    "isneginf": (_f(lambda x: np.isinf(x) & (x < 0)), "always_bool", NOT_COMPLEX, "any", 0),
    "isreal": (_f(lambda x: np.imag(x) == 0), "always_bool", ALL, "any", 0),
    "angle": (_angle, "angle", ALL, "any", 0),
    "conj_physical": (_f(np.conj), "default", ALL, "any", 0),
    "logical_not": (_f(lambda x: x == 0), "always_bool", ALL, "any", 0),
    "bitwise_not": (_wrap_int(np.invert), "default", S.INTEGRAL, "any", 0),
    "logit": (_f(sp.logit), "int_to_float", NOT_COMPLEX, "prob", 0),
    # torch.special
    "special_erfcx": (_f(acc.erfcx), "int_to_float", NOT_COMPLEX, "any", 1e-5),
    "special_ndtr": (_f(acc.ndtr), "int_to_float", NOT_COMPLEX, "any", 0),
    "special_ndtri": (_f(acc.ndtri), "int_to_float", NOT_COMPLEX, "prob", 1e-5),
    "special_log_ndtr": (_f(acc.log_ndtr), "int_to_float", NOT_COMPLEX, "any", 1e-5),
    "special_i0e": (_f(acc.i0e), "int_to_float", NOT_COMPLEX, "any", 1e-5),
    "special_i1": (_f(acc.i1), "int_to_float", NOT_COMPLEX, "small", 1e-5),
    "special_i1e": (_f(acc.i1e), "int_to_float", NOT_COMPLEX, "any", 1e-5),
    "special_bessel_j0": (_f(acc.j0), "int_to_float", NOT_COMPLEX, "small", 1e-5),
    "special_bessel_j1": (_f(acc.j1), "int_to_float", NOT_COMPLEX, "small", 1e-5),
    "special_bessel_y0": (_f(acc.y0), "int_to_float", NOT_COMPLEX, "pos", 1e-5),
    "special_bessel_y1": (_f(acc.y1), "int_to_float", NOT_COMPLEX, "pos", 1e-5),
    "special_modified_bessel_i0": (_f(acc.i0), "int_to_float", NOT_COMPLEX, "small", 1e-5),
    "special_modified_bessel_i1": (_f(acc.i1), "int_to_float", NOT_COMPLEX, "small", 1e-5),
    "special_modified_bessel_k0": (_f(acc.k0), "int_to_float", NOT_COMPLEX, "pos", 1e-5),
    "special_modified_bessel_k1": (_f(acc.k1), "int_to_float", NOT_COMPLEX, "pos", 1e-5),
    "special_scaled_modified_bessel_k0": (_f(acc.k0e), "int_to_float", NOT_COMPLEX, "pos", 1e-5),
    "special_scaled_modified_bessel_k1": (_f(acc.k1e), "int_to_float", NOT_COMPLEX, "pos", 1e-5),
    "special_spherical_bessel_j0": (_f(acc.spherical_j0), "int_to_float", NOT_COMPLEX, "small", 1e-5),
    "special_airy_ai": (_f(acc.airy_ai), "int_to_float", NOT_COMPLEX, "small", 1e-5),
    "special_entr": (_f(acc.entr), "int_to_float", NOT_COMPLEX, "any", 0),
    "special_expit": (_f(lambda x: 1 / (1 + np.exp(-x))), "int_to_float", ALL, "any", 0),
    "special_exp2": (_f(acc.extended(np.exp2)), "int_to_float", ALL, "small", 0),
    "special_expm1": (_f(acc.extended(np.expm1)), "int_to_float", ALL, "small", 0),
    "special_log1p": (_f(acc.log1p), "int_to_float", ALL, "pos", 0),
    "special_erf": (_f(acc.erf), "int_to_float", NOT_COMPLEX, "any", 0),
    "special_erfc": (_f(acc.erfc), "int_to_float", NOT_COMPLEX, "any", 0),
    "special_erfinv": (_f(acc.erfinv), "int_to_float", NOT_COMPLEX, "unit", 0),
    "special_gammaln": (_f(acc.lgamma), "int_to_float", NOT_COMPLEX, "pos", 1e-5),
    "special_digamma": (_f(acc.digamma), "int_to_float", NOT_COMPLEX, "pos", 1e-5),
    "special_psi": (_f(acc.digamma), "int_to_float", NOT_COMPLEX, "pos", 1e-5),
    "special_i0": (_f(acc.i0), "int_to_float", NOT_COMPLEX, "small", 0),
    "special_sinc": (_f(acc.sinc), "int_to_float", ALL, "any", 0),
}
ALIAS_OF = {
    "arccos": "acos",
    "arccosh": "acosh",
    "arcsin": "asin",
    "arcsinh": "asinh",
    "arctan": "atan",
    "arctanh": "atanh",
    "fix": "trunc",
    "absolute": "abs",
    "negative": "neg",
    "special_psi": "digamma",
    "special_gammaln": "lgamma",
}
for _name, _target in ALIAS_OF.items():
    UNARY.setdefault(_name, UNARY[_target])


def expected_dtype(kind, d):
    if kind == "int_to_float":
        return S.int_to_float(d)
    if kind == "complex_to_float":
        return S.complex_to_float(d)
    if kind == "always_bool":
        return ow.bool
    if kind == "bool_to_long":
        return ow.int64 if d is ow.bool else d
    if kind == "angle":
        return S.complex_to_float(S.int_to_float(d))
    return d


def _run(name, t, v):
    oracle, kind, supported, domain, rtol = UNARY[name]
    fn = getattr(ow, name)
    want_dtype = expected_dtype(kind, t.dtype)
    out = fn(t)
    x = S.wide(v)
    if x.dtype == bool and S.category(want_dtype) >= 2:
        x = x.astype(np.float64)  # NumPy would compute bool inputs in float16
    with S.oracle_errors():
        want = oracle(x, want_dtype.numpy)
    S.check(out, want, want_dtype, rtol=rtol or None)
    return out


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_every_dtype(name):
    """Each op on each dtype: the oracle's values and dtype, or a TypeError; same shape/dtype on meta."""
    _, kind, supported, domain, _ = UNARY[name]
    fn = getattr(ow, name)
    for i, dtype in enumerate(S.ALL):
        rng = np.random.default_rng(i)
        shape = (2, 3)
        t, v = S.generate(rng, shape, dtype, S.LAYOUTS[i % 3], domain, specials=not dtype.is_complex)
        meta = S.meta_like(t)
        if dtype not in supported:
            target = ALIAS_OF.get(name, name)
            with pytest.raises(TypeError, match=f"{target}|{target.replace('special_', '')}|{name}"):
                fn(t)
            with pytest.raises(TypeError):
                fn(meta)
            continue
        before = S.snapshot(t)
        out = _run(name, t, v)
        S.unchanged([t], before)
        m = fn(meta)
        assert m.device.type == "meta" and m.shape == out.shape and m.dtype is out.dtype


DEEP = [
    "sin",
    "exp",
    "sqrt",
    "abs",
    "neg",
    "round",
    "floor",
    "sign",
    "sgn",
    "isnan",
    "signbit",
    "nan_to_num",
    "sigmoid",
]


@pytest.mark.parametrize("name", DEEP)
@settings(max_examples=30, deadline=None)
@given(
    dtype=st.sampled_from(S.ALL),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
    layout=st.sampled_from(S.LAYOUTS),
    seed=st.integers(0, 2**32 - 1),
)
def test_unary_hypothesis(name, dtype, shape, layout, seed):
    supported = UNARY[name][2]
    t, v = S.generate(np.random.default_rng(seed), shape, dtype, layout, "any", specials=not dtype.is_complex)
    if dtype not in supported:
        with pytest.raises(TypeError):
            getattr(ow, name)(t)
        return
    out = _run(name, t, v)
    assert out.shape == tuple(shape)


def test_special_values_follow_pytorch():
    x = ow.tensor([-0.0, 0.0, np.inf, -np.inf, np.nan, -2.5, 2.5, 0.5, 1.5])
    got = ow.sqrt(x).numpy()
    assert got[0] == 0 and np.signbit(got[0]) and np.isnan(got[3])
    np.testing.assert_array_equal(ow.round(x).numpy()[-4:], [-2, 2, 0, 2])  # halves to even
    np.testing.assert_array_equal(ow.sign(x).numpy(), [0, 0, 1, -1, 0, -1, 1, 1, 1])  # sign(nan) is 0
    assert ow.signbit(x).tolist()[:2] == [True, False]
    assert np.signbit(ow.ceil(ow.tensor([-0.5])).numpy()[0])  # ceil(-0.5) is -0.0
    assert np.isnan(ow.frac(x).numpy()[2])  # frac(inf) is nan
    np.testing.assert_allclose(ow.angle(ow.tensor([-0.0, -1.0, 2.0])).numpy(), [0, np.pi, 0], rtol=1e-7)
    np.testing.assert_array_equal(ow.reciprocal(ow.tensor([0.0, -0.0])).numpy(), [np.inf, -np.inf])
    np.testing.assert_array_equal(ow.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-2.0).numpy()[2:5], [2, -2, 1])
    np.testing.assert_allclose(ow.sgn(ow.tensor([0j, 3 + 4j])).numpy(), [0, 0.6 + 0.8j], rtol=1e-7)


def test_rounding_integers_and_bools_are_copies():
    i = ow.tensor([1, -2, 3], dtype=ow.int16)
    for name in ("ceil", "floor", "round", "trunc", "fix"):
        out = getattr(ow, name)(i)
        assert out.dtype is ow.int16 and out.tolist() == [1, -2, 3]
        assert out.data_ptr() != i.data_ptr()
    b = ow.tensor([True, False])
    assert ow.floor(b).tolist() == [True, False] and ow.abs(b).dtype is ow.bool and ow.sign(b).tolist() == [True, False]
    assert ow.nan_to_num(i).tolist() == [1, -2, 3]


def test_round_decimals():
    x = ow.tensor([1.2345, -2.5, 125.0, 0.125])
    np.testing.assert_allclose(ow.round(x, decimals=2).numpy(), [1.23, -2.5, 125.0, 0.12], rtol=1e-6)
    np.testing.assert_allclose(ow.round(x, decimals=-1).numpy(), [0, 0, 120, 0])
    np.testing.assert_allclose(ow.special_round(x, decimals=1).numpy(), [1.2, -2.5, 125.0, 0.1], rtol=1e-6)
    assert ow.round(ow.tensor([3, 4]), decimals=0).tolist() == [3, 4]
    with pytest.raises(TypeError, match="round"):
        ow.round(ow.tensor([3, 4]), decimals=1)
    y = ow.tensor([1.26, 2.34])
    assert y.round_(decimals=1) is y
    np.testing.assert_allclose(y.numpy(), [1.3, 2.3], rtol=1e-6)


def test_parameterised_special_functions():
    x = ow.tensor([0.5, 1.0, 2.5, 4.0], dtype=ow.float64)
    for n in range(4):
        np.testing.assert_allclose(ow.polygamma(n, x).numpy(), sp.polygamma(n, x.numpy()), rtol=1e-10)
        np.testing.assert_allclose(ow.special_polygamma(n, x).numpy(), sp.polygamma(n, x.numpy()), rtol=1e-10)
    assert ow.polygamma(1, ow.tensor([1, 2])).dtype is ow.float32
    with pytest.raises(ValueError, match="polygamma"):
        ow.polygamma(-1, x)
    y = ow.tensor([2.0, 3.5, 5.0], dtype=ow.float64)
    for p in (1, 2, 3):
        want = [sp.multigammaln(v, p) for v in y.numpy()]
        np.testing.assert_allclose(ow.mvlgamma(y, p).numpy(), want, rtol=1e-10)
        np.testing.assert_allclose(ow.special_multigammaln(y, p).numpy(), want, rtol=1e-10)
    with pytest.raises(ValueError, match="mvlgamma"):
        ow.mvlgamma(y, 0)
    # no domain check, as PyTorch: below (p - 1) / 2 the sum of log|gamma| is still defined (inf at the
    # poles and at -inf, NaN for NaN)
    z = ow.tensor([0.5, 1.0, 0.9, -3.0, -0.3, float("nan"), float("-inf"), 4.0], dtype=ow.float64)
    p = 3
    want = [sum(sp.gammaln(v - j / 2) for j in range(p)) + p * (p - 1) / 4 * np.log(np.pi) for v in z.numpy()]
    want[6] = np.inf
    np.testing.assert_allclose(ow.mvlgamma(z, p).numpy(), want, rtol=1e-10)
    assert np.isinf(want[0]) and np.isfinite(want[2]) and np.isfinite(want[4])
    p = ow.tensor([0.0, 0.05, 0.5, 0.97, 1.0], dtype=ow.float64)
    clipped = np.clip(p.numpy(), 0.1, 0.9)
    np.testing.assert_allclose(ow.logit(p, eps=0.1).numpy(), np.log(clipped / (1 - clipped)), rtol=1e-12)
    np.testing.assert_allclose(ow.special_logit(p, 0.1).numpy(), np.log(clipped / (1 - clipped)), rtol=1e-12)
    assert ow.logit(p).numpy()[0] == -np.inf


def test_complex_parts_are_views():
    c = ow.tensor([1 + 2j, -3 - 4j], dtype=ow.complex64)
    re, im = ow.real(c), ow.imag(c)
    assert re.dtype is ow.float32 and re.tolist() == [1, -3] and im.tolist() == [2, -4]
    re.numpy()[0] = 10  # writes through: the parts alias c's storage
    im.numpy()[1] = 7
    assert c.tolist() == [10 + 2j, -3 + 7j]
    r = ow.tensor([1.0, 2.0])
    assert ow.real(r).tolist() == [1.0, 2.0] and ow.real(r).data_ptr() == r.data_ptr()
    with pytest.raises(TypeError, match="imag"):
        ow.imag(r)
    assert ow.conj(c).tolist() == [10 - 2j, -3 - 7j] and ow.conj(r).data_ptr() == r.data_ptr()
    assert ow.resolve_conj(c).tolist() == c.tolist() and ow.resolve_neg(r).data_ptr() == r.data_ptr()
    assert ow.positive(r).data_ptr() == r.data_ptr()
    with pytest.raises(TypeError, match="positive"):
        ow.positive(ow.tensor([True]))
    m = ow.empty([2, 3], dtype=ow.complex128, device="meta")
    assert ow.real(m).shape == (2, 3) and ow.imag(m).dtype is ow.float64
    strided = S.make(np.array([[1 + 1j, 2 + 2j], [3 + 3j, 4 + 4j]]), ow.complex128, "transposed")
    assert ow.imag(strided).tolist() == [[1, 2], [3, 4]]


def test_neg_and_sign_errors():
    with pytest.raises(TypeError, match="neg"):
        ow.neg(ow.tensor([True]))
    with pytest.raises(TypeError, match="sgn"):
        ow.sign(ow.tensor([1j]))
    with pytest.raises(TypeError, match="deg2rad"):
        ow.deg2rad(ow.tensor([1j]))
    with pytest.raises(TypeError, match="erf"):
        ow.erf(ow.tensor([1j]))
    with pytest.raises(TypeError, match="isposinf"):
        ow.isposinf(ow.tensor([1j]))


def _variants(name):
    names = {o.name for o in ow.ops.catalog(kind="canonical")}
    return f"{name}_" in names, f"{name}.out" in names


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_inplace_and_out(name):
    """``x.name_()`` writes into ``x`` and returns it; ``name(x, out=o)`` writes ``o`` (resizing with a warning)."""
    has_inplace, has_out = _variants(name)
    _, kind, supported, domain, _ = UNARY[name]
    dtype = ow.float64 if ow.float64 in supported else ow.int64
    x, _ = S.generate(np.random.default_rng(1), (2, 3), dtype, "contiguous", domain)
    want = getattr(ow, name)(x)
    if has_inplace and can_cast(want.dtype, dtype):
        y = S.make(np.array(x.numpy()), dtype)
        assert getattr(y, f"{name}_")() is y
        S.check(y, np.asarray(want.numpy()).astype(dtype.numpy), dtype)
    if has_out:
        o = ow.empty([0], dtype=want.dtype)
        assert getattr(ow, name)(x, out=o) is o
        S.check(o, np.asarray(want.numpy()), want.dtype)
        o = ow.empty([5], dtype=want.dtype)
        with pytest.warns(UserWarning, match="resized"):
            getattr(ow, name)(x, out=o)
        assert o.shape == (2, 3)


def can_cast(src, dst):
    return not ((src.is_complex and not dst.is_complex) or (S.category(src) >= 2 and S.category(dst) < 2))


def test_inplace_unary_refuses_unsafe_casts():
    i = ow.tensor([1, 2, 3])
    with pytest.raises(TypeError, match="sin_"):
        i.sin_()
    assert i.tolist() == [1, 2, 3]
    f = ow.tensor([1.5, -2.5])
    assert f.abs_() is f and f.tolist() == [1.5, 2.5]


def test_square_and_degrees():
    assert ow.square(ow.tensor([True, False])).dtype is ow.int64
    assert ow.square(ow.tensor([-3], dtype=ow.int8)).tolist() == [9]
    np.testing.assert_allclose(ow.deg2rad(ow.tensor([180])).numpy(), [math.pi], rtol=1e-6)
    np.testing.assert_allclose(ow.rad2deg(ow.tensor([math.pi], dtype=ow.float64)).numpy(), [180], rtol=1e-12)
