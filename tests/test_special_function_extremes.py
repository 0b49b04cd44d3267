"""Special functions at subnormal, tiny and huge arguments on every backend that runs them.

Regression tests of what the conformance suite's extended special-value probe found: SciPy's
``gammaln``/``k0``/``k1``/``gammainc`` lose tiny arguments (``lgamma(5e-324)`` was inf), the generated
``igammac`` cancelled in ``1 - P`` (a negative result in float32), generated ``I1`` of the smallest
subnormal rounded to zero, ``I0``/``I1``/``J``/``Y``/``K`` overflowed an intermediate at ±max or at
5e-324, PoCL contracted ``lerp`` into an ``fma``, and float16 ``log_ndtr`` results are subnormals
a flushing kernel loses. Expected values come from mpmath (or the leading term of the series, where
mpmath's own routine is too slow), rounded to the dtype correctly in the test.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import opweave
import pytest

#: cpu (NumPy/SciPy kernels), cpu-c (the CPU backend's compiled C kernels), the generated kernels on PoCL
#: and through the C dialect, and the vendor example.
TARGETS = ["cpu", "cpu-c", "opencl", "ccpu", "vnpu"]
MP = mpmath.MPContext()
MP.prec = 200
TRUE_MIN64 = 5e-324
TRUE_MIN32 = float(np.finfo(np.float32).smallest_subnormal)
MID64 = 1.989371054e-315  # a float64 subnormal in the middle of the range
MAX64 = float(np.finfo(np.float64).max)
MAX32 = float(np.finfo(np.float32).max)


def _run(name: str, arrays, target: str) -> np.ndarray:
    op = opweave.ops.lookup(f"prims::{name}")
    if target == "cpu-c":
        opweave.cpu.set_kernel_path("c")
        try:
            return op(*[opweave.tensor(a) for a in arrays]).numpy()
        finally:
            opweave.cpu.set_kernel_path(None)
    if target != "cpu" and not opweave.backends.is_available(target):
        pytest.skip(f"no {target} device here")
    device = target
    if arrays[0].dtype == np.float64 and opweave.float64 not in (
        opweave.backends.get(device).dtypes or [opweave.float64]
    ):
        pytest.skip(f"{target} has no float64")
    return op(*[opweave.tensor(a, device=device) for a in arrays]).cpu().numpy()


def _rounded(value, dtype) -> float:
    """``value`` (an mpmath number) rounded to nearest in ``dtype``, without double rounding through float64."""
    if MP.isnan(value):
        return math.nan
    approx = np.asarray(float(value)).astype(dtype)
    if not np.isfinite(approx):
        return float(approx)
    neighbours = [np.nextafter(approx, dtype(-np.inf)), approx, np.nextafter(approx, dtype(np.inf))]
    return float(min(neighbours, key=lambda c: abs(MP.mpf(float(c)) - value)))


def _ulps(actual: np.ndarray, expected: np.ndarray, dtype) -> np.ndarray:
    """``|actual - expected|`` in units in the last place of ``expected`` (subnormal spacing below the normals)."""
    info = np.finfo(dtype)
    mag = np.maximum(np.abs(expected.astype(np.float64)), float(info.tiny))
    spacing = np.spacing(mag.astype(dtype)).astype(np.float64)
    return np.abs(actual.astype(np.float64) - expected.astype(np.float64)) / spacing


def _assert_close(actual, expected, dtype, ulps):
    """nan-ness and infinities exactly, zeros with their sign, other values within ``ulps`` (per element or one
    for all; subnormals too)."""
    actual, expected = np.asarray(actual), np.asarray(expected, dtype)
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
    exact = np.isinf(expected) | (expected == 0)
    np.testing.assert_array_equal(actual[exact], expected[exact])
    np.testing.assert_array_equal(np.signbit(actual[exact]), np.signbit(expected[exact]))
    rest = np.isfinite(expected) & ~exact
    assert np.all(actual[rest] != 0), f"flushed to zero: {actual[rest]} (expected {expected[rest]})"
    allowed = np.broadcast_to(np.asarray(ulps, np.float64), expected.shape)[rest]
    assert np.all(_ulps(actual[rest], expected[rest], dtype) <= allowed), f"{actual[rest]} vs {expected[rest]}"


@pytest.mark.parametrize("target", TARGETS)
def test_lgamma_near_zero_is_minus_log_not_inf(target):
    # PyTorch 2.13: lgamma(5e-324) = 744.44; SciPy's gammaln overflows to inf there
    x = np.array([TRUE_MIN64, -TRUE_MIN64, MID64, -MID64, 1e-300, 1e-30, -1e-30])
    expected = [_rounded(MP.log(abs(MP.gamma(MP.mpf(v)))), np.float64) for v in x]
    _assert_close(_run("lgamma", [x], target), expected, np.float64, 2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("target", TARGETS)
def test_igammac_of_tiny_a_is_a_times_e1_never_negative(target, dtype):
    # Q(a, x) = a E1(x) + O(a^2 log(x)^2): for a < 1e-20 the leading term is exact to far below the ulp
    tinies = [TRUE_MIN32, 1e-40, 1e-30] + ([TRUE_MIN64, MID64] if dtype is np.float64 else [])
    xs = [0.25, 0.5, 0.75, 1.0, 3.0, TRUE_MIN32]
    a = np.array([t for t in tinies for _ in xs], dtype)
    x = np.array(xs * len(tinies), dtype)
    q = [MP.mpf(float(ai)) * MP.e1(MP.mpf(float(xi))) for ai, xi in zip(a, x)]
    upper = _run("igammac", [a, x], target)
    assert np.all(upper >= 0), f"negative Q: {upper}"
    expected = np.array([_rounded(v, dtype) for v in q], dtype)
    # float64 kernels form Q through exp(a log x - x - lgamma(a)): exp(y) carries y's rounding, |y| ulps of it
    # (float32 ones compute in double and round once)
    with np.errstate(divide="ignore"):
        condition = np.abs(np.log(np.abs(expected.astype(np.float64)))) if dtype is np.float64 else 0.0
    _assert_close(upper, expected, dtype, 4 + condition)
    lower = _run("igamma", [a, x], target)
    _assert_close(lower, [_rounded(1 - v, dtype) for v in q], dtype, 1)


@pytest.mark.parametrize("target", TARGETS)
def test_igamma_of_subnormal_x_keeps_the_subnormal(target):
    # P(1, x) = 1 - exp(-x) = x for tiny x; P(a, x) = x^a / Gamma(a + 1) (1 + O(x))
    # (subnormal results only: a normal one, x^a = exp(a log x), carries log(x)'s condition of a few hundred ulps)
    x = np.array([MID64, 1e-310, 1e-160, TRUE_MIN64 * 7])
    a = np.array([1.0, 1.0, 2.0, 1.0])
    expected = [_rounded(MP.gammainc(MP.mpf(ai), 0, MP.mpf(xi), regularized=True), np.float64) for ai, xi in zip(a, x)]
    _assert_close(_run("igamma", [a, x], target), expected, np.float64, 4)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("target", TARGETS)
def test_bessel_i1_of_tiny_arguments_is_half_of_them(target, dtype):
    # I1(x) = x/2 (1 + x^2/8 + ...) is just above x/2: a tie of x/2 rounds away from zero
    smallest = TRUE_MIN32 if dtype is np.float32 else TRUE_MIN64
    x = np.array([smallest, -smallest, 3 * smallest, 1e-40, -1e-30, 1e-25], dtype)
    # (float64 kernels may round x/2 up by 2 ulps below 2**-126; 1e-40 is there: 1 ulp of float32, 2 of float64)
    with MP.workprec(2400):  # x^2 / 8 relative to x / 2: 2**-2150 at 5e-324
        expected = [_rounded(MP.besseli(1, MP.mpf(float(v))), dtype) for v in x]
        scaled = [_rounded(MP.besseli(1, MP.mpf(float(v))) * MP.exp(-abs(MP.mpf(float(v)))), dtype) for v in x]
    actual = _run("bessel_i1", [x], target)
    # one ulp (a zero where the exact value rounds to the smallest subnormal is one): never zero where the
    # exact value rounds to a nonzero (the generated kernel rounded I1 of the smallest float32 subnormal to 0)
    assert np.all(_ulps(actual, np.array(expected, dtype), dtype) <= (2 if dtype is np.float64 else 1)), actual
    assert np.all((actual != 0) | (np.array(expected) == 0)), (actual, expected)
    assert np.all(np.signbit(actual) == np.signbit(x)), actual
    # I1e(x) = x/2 (1 - x + ...) lies just below x/2 (ties round toward zero): within two ulps (SciPy's), signed
    scaled_actual = _run("bessel_i1e", [x], target)
    assert np.all(_ulps(scaled_actual, np.array(scaled, dtype), dtype) <= 2), (scaled_actual, scaled)
    assert np.all(np.signbit(scaled_actual) == np.signbit(x)), scaled_actual


@pytest.mark.parametrize("target", TARGETS)
def test_bessel_functions_at_the_largest_double(target):
    # I0/I1 overflow to +-inf (not nan); the scaled I1 and K0 are 1 / sqrt(2 pi x) (1 + O(1/x)): sqrt(2 pi x)
    # overflowed to inf in the generated kernels and made them 0
    x = np.array([MAX64, -MAX64])
    _assert_close(_run("bessel_i0", [x], target), [math.inf, math.inf], np.float64, 0)
    _assert_close(_run("bessel_i1", [x], target), [math.inf, -math.inf], np.float64, 0)
    r = 1 / MP.sqrt(2 * MP.pi * MP.mpf(MAX64))
    _assert_close(_run("bessel_i1e", [x], target), [_rounded(r, np.float64), _rounded(-r, np.float64)], np.float64, 4)
    k0e = _rounded(MP.sqrt(MP.pi / (2 * MP.mpf(MAX64))), np.float64)
    _assert_close(_run("scaled_modified_bessel_k0", [x[:1]], target), [k0e], np.float64, 4)


@pytest.mark.parametrize("target", TARGETS)
def test_bessel_k_and_y_at_the_smallest_subnormal(target):
    # K0(x) = -log(x/2) - euler and Y0(x) = 2/pi (log(x/2) + euler) for tiny x; x/2 underflowed to 0 (log -> -inf)
    x = np.array([TRUE_MIN64, MID64, 1e-300])
    for name, fn in (("modified_bessel_k0", lambda v: MP.besselk(0, v)), ("bessel_y0", lambda v: MP.bessely(0, v))):
        expected = [_rounded(fn(MP.mpf(v)), np.float64) for v in x]
        _assert_close(_run(name, [x], target), expected, np.float64, 4)
    # K1(x) = 1/x and Y1(x) = -2 / (pi x) overflow to +-inf at 5e-324 (they gave nan)
    _assert_close(_run("modified_bessel_k1", [x[:1]], target), [math.inf], np.float64, 0)
    _assert_close(_run("scaled_modified_bessel_k1", [x[:1]], target), [math.inf], np.float64, 0)
    _assert_close(_run("bessel_y1", [x[:1]], target), [-math.inf], np.float64, 0)


def _two_roundings_lerp(s, e, w, dtype):
    """PyTorch's lerp with the product and the sum each rounded to ``dtype`` (no fused multiply-add)."""
    with np.errstate(all="ignore"):
        d = (e - s).astype(dtype)
        small = np.abs(w) < 0.5
        p = np.where(small, w * d, d * (dtype(1) - w)).astype(dtype)
        return np.where(small, s + p, e - p).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("target", TARGETS)
def test_lerp_at_subnormal_and_zero_results(target, dtype):
    info = np.finfo(dtype)
    pool = np.array([0.0, -0.0, info.smallest_subnormal, -info.smallest_subnormal, 0.5, -2.5, 1.0], dtype)
    s, e = np.repeat(pool, pool.size), np.tile(pool, pool.size)
    for w in (0.25, 0.5, 0.75, -0.5, float(info.smallest_subnormal), -float(info.smallest_subnormal)):
        weight = np.full(s.shape, w, dtype)
        actual = _run("lerp", [s, e, weight], target)
        # within one ulp of the exact value (a subnormal's spacing), zeros signed where the exact value is zero
        exact = [Fraction(float(a)) + Fraction(w) * (Fraction(float(b)) - Fraction(float(a))) for a, b in zip(s, e)]
        rounded = np.array([_rounded(MP.mpf(x.numerator) / x.denominator, dtype) for x in exact], dtype)
        assert np.all(_ulps(actual, rounded, dtype) <= 1), (w, actual, rounded)
        if target in ("opencl", "ccpu", "cpu-c"):
            # the generated kernel keeps the product and the sum apart: no contraction into fma on any compiler
            # that follows C's rules, so it gives the CPU backend's two roundings bit for bit (PoCL fused them)
            np.testing.assert_array_equal(
                actual.view(np.uint8), _two_roundings_lerp(s, e, weight, dtype).view(np.uint8)
            )


@pytest.mark.parametrize("target", ["cpu", "opencl", "ccpu", "vnpu"])
def test_float16_log_ndtr_keeps_its_subnormal_results(target):
    if target != "cpu" and not opweave.backends.is_available(target):
        pytest.skip(f"no {target} device here")
    if opweave.float16 not in (opweave.backends.get(target).dtypes or [opweave.float16]):
        pytest.skip(f"no float16 on {target}")
    # log_ndtr(x) = log1p(-ndtr(-x)) is about -ndtr(-x): between 4 and 5.5 a float16 subnormal (below 6.1e-5)
    x = np.array([4.25, 4.5, 4.75, 5.0, 5.5, -4.0], np.float16)
    expected = [_rounded(MP.log(MP.ncdf(MP.mpf(float(v)))), np.float16) for v in x]
    # PyTorch computes float16 in float32 and rounds once: one ulp
    _assert_close(_run("log_ndtr", [x], target), expected, np.float16, 1)


@pytest.mark.parametrize("target", TARGETS)
def test_float64_gaussian_tails_keep_their_subnormal_results(target):
    # ndtr(-38) = 2.9e-316 and log_ndtr(38) = -ndtr(-38): SciPy's ndtr flushes below 2.2e-308
    x = np.array([-37.0, -37.5, -38.0, -38.4, -38.6])
    tails = [MP.ncdf(MP.mpf(v)) for v in x]
    condition = 4 + x**2  # exp(-x**2 / 2) carries the rounding of x**2 / 2 (about 700): that many ulps of it
    _assert_close(_run("ndtr", [x], target), [_rounded(t, np.float64) for t in tails], np.float64, condition)
    log_tails = [_rounded(MP.log1p(-t), np.float64) for t in tails]
    _assert_close(_run("log_ndtr", [-x], target), log_tails, np.float64, condition)
