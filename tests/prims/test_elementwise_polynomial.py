"""Orthogonal polynomial prims against SciPy's ``eval_*`` (float64, integer degrees)."""

from __future__ import annotations

import numpy as np
import opweave
import pytest
import scipy.special as sp
from _elementwise_support import FLOAT, LAYOUTS, P, check_call, floats, make_inputs, seeds, shapes, unsupported
from hypothesis import given, settings
from hypothesis import strategies as st


def _u(n, x):
    return np.where(n < 0, 0.0, sp.eval_chebyu(np.maximum(n, 0), x))


def _v(n, x):
    return _u(n, x) - _u(n - 1, x)  # V_n = U_n - U_{n-1}


def _w(n, x):
    return _u(n, x) + _u(n - 1, x)  # W_n = U_n + U_{n-1}


def _shift(fn):
    return lambda n, x: fn(n, 2 * x - 1)


def _scipy(fn):
    return lambda n, x: fn(np.maximum(n, 0), x)


FORMULAS = {
    "chebyshev_polynomial_t": _scipy(sp.eval_chebyt),
    "chebyshev_polynomial_u": _u,
    "chebyshev_polynomial_v": _v,
    "chebyshev_polynomial_w": _w,
    "hermite_polynomial_h": _scipy(sp.eval_hermite),
    "hermite_polynomial_he": _scipy(sp.eval_hermitenorm),
    "laguerre_polynomial_l": _scipy(sp.eval_laguerre),
    "legendre_polynomial_p": _scipy(sp.eval_legendre),
    "shifted_chebyshev_polynomial_t": _shift(_scipy(sp.eval_chebyt)),
    "shifted_chebyshev_polynomial_u": _shift(_u),
    "shifted_chebyshev_polynomial_v": _shift(_v),
    "shifted_chebyshev_polynomial_w": _shift(_w),
}


def oracle(name):
    """PyTorch semantics: degree ``trunc(n)``, 0 for negative or non-finite ``n``, 1 for degree 0."""

    def fn(x, n):
        x, n = np.broadcast_arrays(x.astype(np.float64), n.astype(np.float64))
        finite = np.isfinite(n)
        degree = np.where(finite, np.trunc(np.where(finite, n, 0)), -1).astype(np.int64)
        # P_0 = 1 even at nan (PyTorch returns 1 for n == 0 before looking at x)
        return np.where(degree < 0, 0.0, np.where(degree == 0, 1.0, FORMULAS[name](degree, x)))

    return fn


# x: around the interval of orthogonality, with its end points and nan; n: small degrees, fractions, non-finite.
X = floats(-1.6, 1.6, specials=np.array([np.nan, -1.0, 1.0, 0.0, -0.0, 0.5]))
N = floats(-2.5, 13, specials=np.array([np.nan, np.inf, -np.inf, 0.0, 1.0, 2.0, 7.0, 9.0, 12.0]), fraction=0.4)
# Recurrences (and the trigonometric closed forms PyTorch uses for large n) cancel near roots:
# compare with an absolute tolerance relative to the largest value.
ATOL = {opweave.float16: 2e-2, opweave.bfloat16: 1e-1, opweave.float32: 2e-4, opweave.float64: 1e-10}


@pytest.mark.parametrize("name", list(FORMULAS))
@pytest.mark.parametrize("dtype", FLOAT)
@settings(max_examples=6, deadline=None)
@given(shape=shapes, layouts=st.tuples(st.sampled_from(LAYOUTS), st.sampled_from(LAYOUTS + ("scalar",))), seed=seeds)
def test_polynomial(name, dtype, shape, layouts, seed):
    x, n = make_inputs(seed, shape, [dtype, dtype], layouts, [X, N])
    expected = oracle(name)(np.array(x.numpy()), np.array(n.numpy()))
    finite = np.abs(expected[np.isfinite(expected)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    check_call(getattr(P, name), [x, n], oracle(name), dtype, rtol_scale=10, atol=ATOL[dtype] * scale)


def test_polynomial_degrees_and_ends():
    x = opweave.from_numpy(np.array([0.3, 0.3, 0.3, 0.3, -1.0, 1.0, -1.0]))
    n = opweave.from_numpy(np.array([-1.0, 2.9, np.nan, np.inf, 3.0, 5.0, 30.0]))
    got = P.chebyshev_polynomial_t(x, n).numpy()
    np.testing.assert_allclose(got, [0.0, 2 * 0.09 - 1, 0.0, 0.0, -1.0, 1.0, 1.0], rtol=1e-12)
    got = P.chebyshev_polynomial_u(x, n).numpy()
    np.testing.assert_allclose(got[4:], [-4.0, 6.0, 31.0], rtol=1e-12)
    x = opweave.from_numpy(np.array([0.0, 1.0, 0.0]))
    n = opweave.from_numpy(np.array([3.0, 3.0, 4.0]))
    np.testing.assert_allclose(P.shifted_chebyshev_polynomial_v(x, n).numpy(), [-7.0, 1.0, 9.0], rtol=1e-12)
    np.testing.assert_allclose(P.shifted_chebyshev_polynomial_w(x, n).numpy(), [-1.0, 7.0, 1.0], rtol=1e-12)


@pytest.mark.parametrize("name", ["hermite_polynomial_h", "hermite_polynomial_he"])
def test_hermite_degree_limit(name):
    """PyTorch returns nan above getHermitianLimit: 128 for float, 512 for double."""
    for dtype, limit in ((np.float32, 128), (np.float64, 512)):
        x = opweave.from_numpy(np.array([0.05, 0.05], dtype))
        n = opweave.from_numpy(np.array([limit + 1, 1], dtype))
        got = getattr(P, name)(x, n).numpy()
        assert np.isnan(got[0]) and not np.isnan(got[1])


@pytest.mark.parametrize("name", list(FORMULAS))
def test_large_degree_inside_interval(name):
    """Large n inside the interval (PyTorch's closed form), against SciPy."""
    xs = np.linspace(-0.95, 0.95, 7) if not name.startswith("shifted") else np.linspace(0.03, 0.97, 7)
    if name.startswith(("hermite", "laguerre")):
        xs = np.linspace(-0.9, 0.9, 7)
    x = opweave.from_numpy(np.repeat(xs, 3))
    n = opweave.from_numpy(np.tile([10.0, 25.0, 40.0], 7))
    check_call(getattr(P, name), [x, n], oracle(name), opweave.float64, rtol_scale=1e4, atol=1e-7)


@pytest.mark.parametrize("name", list(FORMULAS))
def test_polynomial_rejects(name):
    op = getattr(P, name)
    for dtype in unsupported(FLOAT):
        x = P.empty_strided([2], [1], dtype=dtype, device="meta")
        with pytest.raises(TypeError, match=f"prims::{name}"):
            op(x, x)
    f32 = P.empty_strided([2], [1], dtype=opweave.float32, device="meta")
    with pytest.raises(TypeError, match=f"prims::{name}.*same dtype"):
        op(f32, P.empty_strided([2], [1], dtype=opweave.float64, device="meta"))
    with pytest.raises(ValueError, match=f"prims::{name}.*same shape"):
        op(f32, P.empty_strided([3], [1], dtype=opweave.float32, device="meta"))
    assert "pointwise" in op.default.tags and op.default.__doc__
