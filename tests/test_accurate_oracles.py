"""The conformance suite's accurate oracles against published values, identities and the C library."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opweave_conformance import accurate as acc

# Abramowitz & Stegun (tables 7.1, 6.1, 9.1, 9.8, 10.11, 26.1) and DLMF values, 16 significant digits.
TABLE = [
    (acc.erf, 0.5, 0.5204998778130465),
    (acc.erf, 1.0, 0.8427007929497149),
    (acc.erfc, 1.0, 0.1572992070502851),
    (acc.erfc, 5.0, 1.537459794428035e-12),
    (acc.erfinv, 0.5, 0.4769362762044699),
    (acc.lgamma, 0.5, 0.5723649429247001),  # log(sqrt(pi))
    (acc.lgamma, 10.0, 12.801827480081469),  # log(9!)
    (acc.lgamma, -0.5, 1.2655121234846454),  # log(2 sqrt(pi))
    (acc.digamma, 1.0, -0.5772156649015329),  # -Euler's gamma
    (acc.digamma, 0.5, -1.9635100260214235),  # -gamma - 2 log 2
    (acc.ndtr, 1.96, 0.9750021048517795),
    (acc.ndtri, 0.975, 1.959963984540054),
    (acc.j0, 1.0, 0.7651976865579666),
    (acc.j1, 1.0, 0.4400505857449335),
    (acc.y0, 1.0, 0.08825696421567696),
    (acc.y1, 1.0, -0.7812128213002887),
    (acc.i0, 1.0, 1.2660658777520084),
    (acc.i1, 1.0, 0.5651591039924851),
    (acc.k0, 1.0, 0.42102443824070834),
    (acc.k1, 1.0, 0.6019072301972346),
    (acc.airy_ai, 0.0, 0.3550280538878172),
    (acc.airy_ai, 1.0, 0.1352924163128814),
    (acc.zeta, (2.0, 1.0), math.pi**2 / 6),
    (acc.zeta, (4.0, 1.0), math.pi**4 / 90),
    (acc.igamma, (1.0, 2.0), 1 - math.exp(-2)),
    (acc.igammac, (0.5, 2.0), math.erfc(math.sqrt(2))),
]


@pytest.mark.parametrize(("fn", "x", "want"), TABLE, ids=[f"{f.__name__}({x})" for f, x, _ in TABLE])
def test_tabulated_values(fn, x, want):
    got = fn(*np.atleast_1d(x)) if isinstance(x, tuple) else fn(np.array(x))
    assert float(got) == pytest.approx(want, rel=2e-15, abs=1e-300)


SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0])


@pytest.mark.parametrize(
    ("fn", "want"),
    [
        (acc.erf, [np.nan, 1, -1, 0, -0.0, -math.erf(1)]),
        (acc.erfc, [np.nan, 0, 2, 1, 1, math.erfc(-1)]),
        (acc.erfcx, [np.nan, 0, np.inf, 1, 1, math.exp(1) * math.erfc(-1)]),
        (acc.erfinv, [np.nan, np.nan, np.nan, 0, -0.0, -np.inf]),
        (acc.lgamma, [np.nan, np.inf, np.inf, np.inf, np.inf, np.inf]),
        (acc.digamma, [np.nan, np.inf, np.nan, -np.inf, np.inf, np.nan]),
        (acc.ndtr, [np.nan, 1, 0, 0.5, 0.5, 0.5 * math.erfc(1 / math.sqrt(2))]),
        (acc.ndtri, [np.nan, np.nan, np.nan, -np.inf, -np.inf, np.nan]),
        (acc.log_ndtr, [np.nan, 0, -np.inf, math.log(0.5), math.log(0.5), math.log(0.5 * math.erfc(1 / math.sqrt(2)))]),
        (acc.i0e, [np.nan, 0, 0, 1, 1, None]),
        (acc.i1e, [np.nan, 0, -0.0, 0, 0, None]),
        (acc.y0, [np.nan, np.nan, np.nan, -np.inf, -np.inf, np.nan]),
        (acc.k1, [np.nan, 0, np.nan, np.inf, np.inf, np.nan]),
        (acc.spherical_j0, [np.nan, 0, 0, 1, 1, math.sin(1)]),
        (acc.entr, [np.nan, -np.inf, -np.inf, 0, 0, -np.inf]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_special_values(fn, want):
    got = fn(SPECIAL)
    for x, g, w in zip(SPECIAL, got, want):
        if w is None:
            continue
        assert (math.isnan(g) and math.isnan(w)) or g == pytest.approx(w, rel=1e-15), (fn.__name__, x, g, w)
        if w == 0:
            assert math.copysign(1, g) == math.copysign(1, w), (fn.__name__, x, g)


def test_digamma_signed_zeros_are_not_cached_together():
    assert list(acc.digamma(np.array([0.0, -0.0, 0.0, -0.0]))) == [-np.inf, np.inf, -np.inf, np.inf]


finite = st.floats(-30, 30, allow_nan=False)
positive = st.floats(0.01, 40)


@settings(max_examples=40, deadline=None)
@given(x=positive)
def test_bessel_wronskians(x):
    """``J1 Y0 - J0 Y1 = 2 / (pi x)`` and ``I0 K1 + I1 K0 = 1 / x`` (DLMF 10.5.2, 10.28.2)."""
    a = np.array(x)
    assert float(acc.j1(a) * acc.y0(a) - acc.j0(a) * acc.y1(a)) == pytest.approx(2 / (math.pi * x), rel=1e-13)
    assert float(acc.i0(a) * acc.k1(a) + acc.i1(a) * acc.k0(a)) == pytest.approx(1 / x, rel=1e-13)
    assert float(acc.i0e(a)) == pytest.approx(float(acc.i0(a)) * math.exp(-x), rel=1e-14)
    assert float(acc.k1e(a)) == pytest.approx(float(acc.k1(a)) * math.exp(x), rel=1e-14)


@settings(max_examples=60, deadline=None)
@given(x=finite)
def test_against_the_c_library(x):
    """libm's double functions (within a few ulps of the exact value) agree with the oracles."""
    a = np.array(x)
    assert float(acc.erf(a)) == pytest.approx(math.erf(x), rel=1e-15, abs=1e-300)
    assert float(acc.erfc(a)) == pytest.approx(math.erfc(x), rel=1e-13, abs=1e-300)
    # -x / sqrt(2) is rounded, and erfc multiplies that relative error by about x**2
    assert float(acc.ndtr(a)) == pytest.approx(0.5 * math.erfc(-x / math.sqrt(2)), rel=1e-15 * (4 + x * x), abs=1e-300)
    if not (x <= 0 and x == math.floor(x)):
        assert float(acc.lgamma(a)) == pytest.approx(math.lgamma(x), rel=1e-13, abs=1e-14)
    # glibc's documented worst errors: sin, exp, expm1 1 ulp, tanh 2 ulp; the long double oracle rounded to
    # double adds half an ulp (tanh(0.359375): 2 ulp apart); allowed: 3 ulps of the result
    for ufunc, reference in [(np.sin, math.sin), (np.exp, math.exp), (np.tanh, math.tanh), (np.expm1, math.expm1)]:
        want = reference(x)
        assert abs(float(acc.extended(ufunc)(a)) - want) <= 3 * np.spacing(abs(want)), (ufunc.__name__, x)


@settings(max_examples=40, deadline=None)
@given(p=st.floats(1e-300, 1 - 1e-16))
def test_ndtri_inverts_ndtr(p):
    x = acc.ndtri(np.array(p))
    assert float(acc.ndtr(x)) == pytest.approx(p, rel=1e-13)


@pytest.mark.skipif(not acc.EXTENDED, reason="long double is double here")
def test_extended_is_wider_than_double():
    # sin(1e22) = -0.8522008497671888 (exactly reduced); a sloppy reduction of 1e22 gets it wrong
    assert float(acc.extended(np.sin)(np.array(1e22))) == pytest.approx(-0.8522008497671888, rel=1e-15)
    # log1p of a tiny complex number keeps the digits of its real part
    z = np.array([1e-3j, 1e-9 + 1e-9j])
    np.testing.assert_allclose(acc.log1p(z).real, [0.5 * math.log1p(1e-6), 1e-9], rtol=1e-12)
    assert acc.log1p(np.array([complex(-3, -0.0)]))[0].imag == -math.pi  # the branch cut keeps the zero's sign


def test_sinc_is_exact_at_integers_up_to_the_rounding_of_pi():
    got = acc.sinc(np.array([0.0, 1.0, -2.0, 0.5, 1e-300]))
    np.testing.assert_allclose(got, [1, 0, 0, 2 / math.pi, 1], atol=1e-18)


def test_zeta_off_its_domain_answers_as_cephes_and_pytorch():
    inf, nan = math.inf, math.nan
    cases = [
        ((1.0, nan), inf),  # x == 1 is tested first
        ((nan, -2.0), inf),  # then a non-positive integer q
        ((inf, -0.41), inf),
        ((inf, 1.0), 1.0),
        ((inf, 1.5), nan),
        ((2.0, -inf), inf),
        ((2.0, inf), 0.0),  # the limit (PyTorch 2.13 gives nan)
        ((0.5, 2.0), nan),
        ((2.0, -2.5), 1 / 2.5**2 + 1 / 1.5**2 + 1 / 0.5**2 + float(acc.zeta(np.array(2.0), np.array(0.5)))),
        ((2.0, 0.5), math.pi**2 / 2),  # zeta(2, 1/2) = (2^2 - 1) zeta(2)
    ]
    x, q = (np.array(v) for v in zip(*[args for args, _ in cases]))
    got = acc.zeta(x, q)
    for (args, want), g in zip(cases, got):
        assert (math.isnan(g) and math.isnan(want)) or g == pytest.approx(want, rel=1e-14), (args, g, want)
