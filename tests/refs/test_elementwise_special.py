"""Binary elementwise math and torch.special binary functions against NumPy/SciPy.

Every op on same-dtype and mixed-dtype pairs (PyTorch's promotion, TypeError
for unsupported dtypes, meta device), hypothesis inputs for a subset
(broadcasting, layouts, specials), Scalar overloads, in-place and ``out=``.
"""

from __future__ import annotations

import _ew_support as S
import numpy as np
import opweave as ow
import pytest
import scipy.special as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from opweave_conformance import accurate as acc

NOT_COMPLEX = S.BOOL + S.REAL


def _xlogy(log):
    def oracle(x, y):
        return np.where(np.isnan(y), np.nan, np.where(x == 0, 0.0, x * log(y)))

    return oracle


def _heaviside(x, v):
    return np.where(x == 0, v, (x > 0).astype(v.dtype))


def _in_promoted(fn):
    """Compute in the promoted dtype itself (no opmath), for nextafter."""

    def oracle(a, b, promoted):
        return fn(a.astype(promoted.numpy), b.astype(promoted.numpy))

    return oracle


def _plain(fn):
    return lambda a, b, promoted: fn(a, b)


def _int_result(fn):
    return lambda a, b, promoted: fn(a.astype(promoted.numpy), b.astype(promoted.numpy))


# name -> (oracle, kind, supported (promoted dtypes), domain a, domain b, extra rtol)
BINARY = {
    "atan2": (_plain(np.arctan2), "int_to_float", NOT_COMPLEX, "any", "any", 0),
    "arctan2": (_plain(np.arctan2), "int_to_float", NOT_COMPLEX, "any", "any", 0),
    "hypot": (_plain(np.hypot), "default", S.FLOAT, "any", "any", 0),
    "maximum": (_int_result(np.maximum), "default", NOT_COMPLEX, "any", "any", 0),
    "minimum": (_int_result(np.minimum), "default", NOT_COMPLEX, "any", "any", 0),
    "fmax": (_int_result(np.fmax), "default", NOT_COMPLEX, "any", "any", 0),
    "fmin": (_int_result(np.fmin), "default", NOT_COMPLEX, "any", "any", 0),
    "copysign": (_plain(np.copysign), "int_to_float", NOT_COMPLEX, "any", "any", 0),
    "nextafter": (_in_promoted(np.nextafter), "default", S.FLOAT, "any", "any", 0),
    "logaddexp": (_plain(acc.extended(np.logaddexp)), "default", S.FLOAT, "any", "any", 0),
    "logaddexp2": (_plain(acc.extended(np.logaddexp2)), "default", S.FLOAT, "any", "any", 0),
    "xlogy": (_plain(_xlogy(np.log)), "int_to_float", NOT_COMPLEX, "any", "pos", 0),
    "special_xlogy": (_plain(_xlogy(np.log)), "int_to_float", NOT_COMPLEX, "any", "pos", 0),
    "special_xlog1py": (_plain(_xlogy(np.log1p)), "int_to_float", NOT_COMPLEX, "any", "pos", 0),
    "gcd": (_int_result(np.gcd), "default", S.INT, "any", "any", 0),
    "lcm": (_int_result(np.lcm), "default", S.INT, "small", "small", 0),
    "igamma": (_plain(acc.igamma), "default", S.FLOAT, "pos", "pos", 1e-5),
    "igammac": (_plain(acc.igammac), "default", S.FLOAT, "pos", "pos", 1e-5),
    "special_gammainc": (_plain(acc.igamma), "default", S.FLOAT, "pos", "pos", 1e-5),
    "special_gammaincc": (_plain(acc.igammac), "default", S.FLOAT, "pos", "pos", 1e-5),
    "special_zeta": (_plain(acc.zeta), "int_to_float", NOT_COMPLEX, "gt1", "pos", 1e-5),
}
PAIRS = [(d, d) for d in S.ALL] + [
    (ow.int64, ow.float32),
    (ow.float16, ow.bfloat16),
    (ow.bool, ow.float64),
    (ow.int8, ow.uint8),
    (ow.float32, ow.float64),
    (ow.int32, ow.bool),
    (ow.complex64, ow.float64),
]


def _kind(kind, d):
    return S.int_to_float(d) if kind == "int_to_float" else d


def _check_pair(name, a, va, b, vb):
    oracle, kind, supported, _, _, rtol = BINARY[name]
    fn = getattr(ow, name)
    promoted = S.result_type(a, b)
    if name == "logaddexp" and promoted.is_complex:
        return None  # complex logaddexp (PyTorch has it) is checked in tests/test_pytorch_surface.py
    if promoted not in supported:
        with pytest.raises(TypeError):
            fn(a, b)
        return None
    out = fn(a, b)
    want_dtype = _kind(kind, promoted)
    x, y = S.wide(va), S.wide(vb)
    if S.category(want_dtype) >= 2:
        x, y = x.astype(np.result_type(x, np.float64)), y.astype(np.result_type(y, np.float64))
    with S.oracle_errors():
        want = oracle(x, y, promoted)
    S.check(out, np.broadcast_to(want, out.shape), want_dtype, rtol=rtol or None)
    return out


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_math_every_dtype(name):
    """Each op on each dtype pair: values and dtype (or TypeError), inputs untouched, same result on meta."""
    _, _, _, dom_a, dom_b, _ = BINARY[name]
    for i, (da, db) in enumerate(PAIRS):
        rng = np.random.default_rng(i)
        a, va = S.generate(rng, (2, 3), da, S.LAYOUTS[i % 4], dom_a, specials=not da.is_complex)
        b, vb = S.generate(rng, (3,), db, S.LAYOUTS[(i + 1) % 4], dom_b, specials=not db.is_complex)
        before = S.snapshot(a, b)
        out = _check_pair(name, a, va, b, vb)
        S.unchanged((a, b), before)
        ma, mb = S.meta_like(a), S.meta_like(b)
        if name == "logaddexp" and S.result_type(a, b).is_complex:
            continue
        if out is None:
            with pytest.raises(TypeError):
                getattr(ow, name)(ma, mb)
        else:
            m = getattr(ow, name)(ma, mb)
            assert m.device.type == "meta" and m.shape == out.shape and m.dtype is out.dtype


@pytest.mark.parametrize("name", ["atan2", "maximum", "fmin", "xlogy", "copysign", "logaddexp"])
@settings(max_examples=25, deadline=None)
@given(
    da=st.sampled_from(S.ALL),
    db=st.sampled_from(S.ALL),
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=3),
    layouts=st.tuples(st.sampled_from(S.LAYOUTS), st.sampled_from(S.LAYOUTS)),
    seed=st.integers(0, 2**32 - 1),
)
def test_binary_math_hypothesis(name, da, db, shapes, layouts, seed):
    rng = np.random.default_rng(seed)
    _, _, _, dom_a, dom_b, _ = BINARY[name]
    a, va = S.generate(rng, shapes.input_shapes[0], da, layouts[0], dom_a, specials=not da.is_complex)
    b, vb = S.generate(rng, shapes.input_shapes[1], db, layouts[1], dom_b, specials=not db.is_complex)
    out = _check_pair(name, a, va, b, vb)
    assert out is None or out.shape == shapes.result_shape


def test_extrema_nan_and_bool():
    a = ow.tensor([1.0, np.nan, np.nan, -0.0])
    b = ow.tensor([np.nan, 2.0, np.nan, 0.0])
    assert np.isnan(ow.maximum(a, b).numpy()[:3]).all()
    np.testing.assert_array_equal(ow.fmax(a, b).numpy()[:2], [1.0, 2.0])
    assert np.isnan(ow.fmin(a, b).numpy()[2])
    t, f = ow.tensor([True, False]), ow.tensor([False, False])
    assert ow.maximum(t, f).tolist() == [True, False] and ow.minimum(t, f).tolist() == [False, False]
    with pytest.raises(TypeError, match="maximum"):
        ow.maximum(ow.tensor([1j]), ow.tensor([2j]))
    names = {o.name for o in ow.ops.catalog(kind="canonical")}
    assert "maximum.out" in names and "maximum_" not in names  # PyTorch has no in-place maximum


def test_heaviside():
    x = ow.tensor([-1.5, 0.0, -0.0, 2.0, np.nan])
    np.testing.assert_array_equal(ow.heaviside(x, ow.tensor([0.5])).numpy(), [0, 0.5, 0.5, 1, 0])
    b = ow.tensor([True, False, False])
    assert ow.heaviside(b, ow.tensor([False, True, False])).tolist() == [True, True, False]
    assert ow.heaviside(ow.tensor([-3, 0, 4]), ow.tensor([7])).tolist() == [0, 7, 1]
    with pytest.raises(TypeError, match="heaviside"):
        ow.heaviside(x, ow.tensor([1]))
    with pytest.raises(TypeError, match="heaviside"):
        ow.heaviside(ow.tensor([1j]), ow.tensor([1j]))


def test_ldexp():
    x = ow.tensor([1.0, -3.0, 0.5])
    e = ow.tensor([3, -1, 0])
    out = ow.ldexp(x, e)
    assert out.dtype is ow.float32 and out.tolist() == [8.0, -1.5, 0.5]
    assert ow.ldexp(ow.tensor([1, 2]), ow.tensor([1, 2])).dtype is ow.float32  # pow(2.0, int) is float32
    assert ow.ldexp(x.to(ow.float64), e).dtype is ow.float64
    y = ow.tensor([1.0, 2.0])
    assert y.ldexp_(ow.tensor([1, 1])) is y and y.tolist() == [2.0, 4.0]


def test_gcd_lcm_signs():
    a, b = ow.tensor([-12, 0, 7, 0]), ow.tensor([18, -5, 0, 0])
    assert ow.gcd(a, b).tolist() == [6, 5, 7, 0]
    assert ow.lcm(a, b).tolist() == [36, 0, 0, 0]
    with pytest.raises(TypeError, match="gcd"):
        ow.gcd(ow.tensor([1.0]), ow.tensor([2.0]))


def test_xlogy_zero_and_scalar_overloads():
    x = ow.tensor([0.0, 0.0, 2.0, 1.0])
    y = ow.tensor([0.0, np.nan, np.e, -1.0])
    got = ow.xlogy(x, y).numpy()
    assert got[0] == 0 and np.isnan(got[1]) and np.isclose(got[2], 2.0) and np.isnan(got[3])
    np.testing.assert_allclose(ow.xlogy(2, ow.tensor([np.e, 1.0])).numpy(), [2.0, 0.0], rtol=1e-6)
    np.testing.assert_allclose(ow.xlogy(ow.tensor([3.0, 0.0]), np.e).numpy(), [3.0, 0.0], rtol=1e-6)
    assert ow.xlogy(ow.tensor([1, 2]), 3).dtype is ow.float32
    np.testing.assert_allclose(ow.special_xlogy(2.0, ow.tensor([np.e])).numpy(), [2.0], rtol=1e-6)
    np.testing.assert_allclose(ow.special_xlog1py(ow.tensor([2.0]), np.e - 1).numpy(), [2.0], rtol=1e-6)
    np.testing.assert_allclose(ow.special_xlog1py(2, ow.tensor([0.0])).numpy(), [0.0])
    np.testing.assert_allclose(ow.special_zeta(2, ow.tensor([1.0])).numpy(), [np.pi**2 / 6], rtol=1e-6)
    np.testing.assert_allclose(ow.special_zeta(ow.tensor([2.0]), 1).numpy(), [np.pi**2 / 6], rtol=1e-6)
    z = ow.tensor([1.0, 2.0])
    assert z.xlogy_(np.e) is z
    np.testing.assert_allclose(z.numpy(), [1.0, 2.0], rtol=1e-6)
    np.testing.assert_allclose(ow.copysign(ow.tensor([1.0, -2.0]), -0.0).numpy(), [-1.0, -2.0])
    names = {o.name for o in ow.ops.catalog(kind="canonical")}
    assert {"xlogy_.Tensor", "xlogy_.Scalar_Other", "xlogy.Scalar_Self_out"} <= names
    assert "xlogy_.Scalar_Self" not in names


def _v(n, x, first):
    """Chebyshev V (first = 2x - 1) and W (first = 2x + 1) by their recurrence."""
    prev, cur = np.ones_like(x), first
    if n == 0:
        return prev
    for _ in range(n - 1):
        prev, cur = cur, 2 * x * cur - prev
    return cur


POLYNOMIALS = {
    "chebyshev_polynomial_t": lambda n, x: sp.eval_chebyt(n, x),
    "chebyshev_polynomial_u": lambda n, x: sp.eval_chebyu(n, x),
    "chebyshev_polynomial_v": lambda n, x: _v(n, x, 2 * x - 1),
    "chebyshev_polynomial_w": lambda n, x: _v(n, x, 2 * x + 1),
    "shifted_chebyshev_polynomial_t": lambda n, x: sp.eval_sh_chebyt(n, x),
    "shifted_chebyshev_polynomial_u": lambda n, x: sp.eval_sh_chebyu(n, x),
    "shifted_chebyshev_polynomial_v": lambda n, x: _v(n, 2 * x - 1, 2 * (2 * x - 1) - 1),
    "shifted_chebyshev_polynomial_w": lambda n, x: _v(n, 2 * x - 1, 2 * (2 * x - 1) + 1),
    "hermite_polynomial_h": lambda n, x: sp.eval_hermite(n, x),
    "hermite_polynomial_he": lambda n, x: sp.eval_hermitenorm(n, x),
    "laguerre_polynomial_l": lambda n, x: sp.eval_laguerre(n, x),
    "legendre_polynomial_p": lambda n, x: sp.eval_legendre(n, x),
}


@pytest.mark.parametrize("name", sorted(POLYNOMIALS))
def test_polynomials(name):
    """``n`` is truncated to an integer and ``n < 0`` gives 0; every overload; dtype and errors."""
    fn = getattr(ow, f"special_{name}")
    oracle = POLYNOMIALS[name]
    x64 = np.array([-0.9, -0.3, 0.0, 0.25, 0.8, 0.55])
    for dtype in S.FLOAT:
        x = ow.tensor(x64, dtype=dtype)
        xv = S.wide(np.array(x.numpy()))
        for n in range(6):
            S.check(fn(x, n), oracle(n, xv), dtype, rtol=1e-5)
            S.check(fn(x, ow.tensor(float(n) + 0.7)), oracle(n, xv), dtype, rtol=1e-5)  # truncated
        S.check(fn(x, -2), np.zeros_like(xv), dtype)
    ns = ow.tensor([0, 1, 2, 3, 4])
    S.check(fn(0.25, ns), [oracle(n, 0.25) for n in range(5)], ow.float32, rtol=1e-5)
    S.check(fn(ow.tensor([0.25], dtype=ow.float64), ns), [oracle(n, 0.25) for n in range(5)], ow.float64, rtol=1e-9)
    ints = fn(ow.tensor([1, 2]), ow.tensor([3, 2]))  # integer arguments compute in the default float, as PyTorch
    S.check(ints, [oracle(3, 1.0), oracle(2, 2.0)], ow.float32, rtol=1e-5)
    with pytest.raises(TypeError):
        fn(ow.tensor([1j]), 2)
    m = fn(ow.empty([2, 1], device="meta"), ow.empty([3], dtype=ow.int64, device="meta"))
    assert m.shape == (2, 3) and m.dtype is ow.float32
    out = ow.empty([0])
    assert fn(ow.tensor([0.5]), 2, out=out) is out and out.shape == (1,)


def _has(name):
    names = {o.name for o in ow.ops.catalog(kind="canonical")}
    return f"{name}_" in names, f"{name}.out" in names


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_math_inplace_and_out(name):
    has_inplace, has_out = _has(name)
    _, _, supported, dom_a, dom_b, _ = BINARY[name]
    dtype = ow.float64 if ow.float64 in supported else ow.int64
    rng = np.random.default_rng(5)
    a, _ = S.generate(rng, (2, 3), dtype, "contiguous", dom_a)
    b, _ = S.generate(rng, (3,), dtype, "sliced", dom_b)
    want = np.array(getattr(ow, name)(a, b).numpy())
    if has_out:
        o = ow.empty([1, 1], dtype=dtype)
        with pytest.warns(UserWarning, match="resized"):
            assert getattr(ow, name)(a, b, out=o) is o
        S.check(o, want, dtype)
    if has_inplace:
        assert getattr(a, f"{name}_")(b) is a
        S.check(a, want, dtype)
        with pytest.raises(ValueError):
            getattr(b, f"{name}_")(a)  # self would need a broadcast
