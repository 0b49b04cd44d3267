"""Special-function kernels on the OpenCL device against SciPy and the formulas of their definitions."""

from __future__ import annotations

import numpy as np
import opweave as ow
import pytest
import scipy.special as sp
from hypothesis import given
from hypothesis import strategies as st
from opweave import _fallback

P = ow.ops.prims
SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan])


def dev(a, dtype=None):
    """A contiguous OpenCL tensor holding ``a`` (in ``dtype`` when given)."""
    a = np.asarray(a)
    return ow.tensor(a.copy() if a.ndim == 0 else np.ascontiguousarray(a), dtype=dtype).to("opencl")


def host(t):
    """The values of ``t`` as float64 NumPy."""
    if t.dtype is ow.bfloat16:
        t = t.to(ow.float32)
    return t.numpy(force=True).astype(np.float64)


def native(fn, *args):
    """``fn(*args)``, failing if any prim ran through the CPU fallback."""
    before = sum(_fallback.calls.values())
    out = fn(*args)
    assert sum(_fallback.calls.values()) == before, "a prim ran through the CPU fallback"
    return out


def check(got, want, rtol, atol=0.0):
    """nan where ``want`` is nan, infinities equal, finite values within ``atol + rtol * |want|``."""
    got, want = np.broadcast_arrays(np.asarray(got, np.float64), np.asarray(want, np.float64))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    inf = np.isinf(want)
    np.testing.assert_array_equal(got[inf], want[inf])
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol, atol=atol)


def _nan_at_inf(fn):
    """PyTorch's (and the CPU kernel's) nan at +-inf for J, Y, I and Ai."""
    return lambda x: np.where(np.isinf(x), np.nan, fn(x))


def _hankel(nu, second):
    """J_nu or Y_nu (nu = 0, 1): SciPy below 1e8; above, Hankel's expansion to O(1/x^2) with an exact phase.

    (SciPy reduces ``x - pi/4`` in double, which loses the phase at large ``x``.)
    """
    ref = {(0, False): sp.j0, (1, False): sp.j1, (0, True): sp.y0, (1, True): sp.y1}[nu, second]

    def fn(x):
        a = np.abs(x)
        s, c = np.sin(a), np.cos(a)
        cs, sn = ((c + s), (s - c)) if nu == 0 else ((s - c), -(s + c))
        q = (4 * nu * nu - 1) / (8 * a)
        far = np.sqrt(2 / (np.pi * a)) / np.sqrt(2) * ((sn + q * cs) if second else (cs - q * sn))
        far = far * np.where((nu == 1) & (x < 0), -1, 1)
        far = np.where(second & (x < 0), np.nan, far)
        return np.where(np.isinf(x), np.nan, np.where(a < 1e8, ref(x), far))

    return fn


def _j0_spherical(x):
    with np.errstate(all="ignore"):
        return np.where(np.isinf(x), 0.0, np.where(x == 0, 1.0, np.sin(x) / np.where(x == 0, 1.0, x)))


def _airy(x):
    # SciPy's (AMOS) range ends at |x| = 2**20
    return np.where(np.abs(x) > 1048575.9996744783, np.nan, sp.airy(x)[0])


DECADES = 10.0 ** np.arange(-300, 301, 15)
WIDE = np.concatenate([np.linspace(-40, 40, 1601), -DECADES, DECADES])
TAILS = 10.0 ** -np.arange(1, 309, 7)
PROB = np.concatenate([np.linspace(0, 1, 1001), TAILS, 1 - 10.0 ** -np.arange(1, 16), [1.5, -0.5]])
UNIT = np.concatenate([2 * PROB - 1, 1 - PROB, [1 - 2**-53, -1 + 2**-53]])


def _lgamma(x):
    """SciPy's ``gammaln``, with PyTorch's (and C99's) +inf at -inf where SciPy gives -inf."""
    return np.where(x == -np.inf, np.inf, sp.gammaln(x))


# name -> (SciPy reference, inputs, rtol, atol) for float64
UNARY = {
    "erf_inv": (sp.erfinv, UNIT, 1e-13, 0),
    "erfcx": (sp.erfcx, WIDE, 1e-13, 0),
    "ndtr": (sp.ndtr, WIDE, 1e-12, 1e-300),  # SciPy flushes the subnormal tail to 0
    "ndtri": (sp.ndtri, PROB, 1e-13, 0),
    "log_ndtr": (sp.log_ndtr, WIDE, 1e-12, 1e-300),
    "lgamma": (_lgamma, np.concatenate([WIDE, [-1.0, -2.0, -1e10]]), 1e-13, 1e-14),
    "digamma": (sp.psi, np.concatenate([WIDE, [-1.0, -2.0, -2.5, 1.4616321449683622]]), 1e-12, 1e-14),
    "bessel_j0": (_hankel(0, False), WIDE, 1e-12, 1e-14),
    "bessel_j1": (_hankel(1, False), WIDE, 1e-12, 1e-14),
    "bessel_y0": (_hankel(0, True), WIDE, 1e-12, 1e-14),
    "bessel_y1": (_hankel(1, True), WIDE, 1e-12, 1e-14),
    "bessel_i0": (_nan_at_inf(sp.i0), WIDE, 1e-13, 0),
    "bessel_i0e": (sp.i0e, WIDE, 1e-13, 0),
    "bessel_i1": (_nan_at_inf(sp.i1), WIDE, 1e-13, 0),
    "bessel_i1e": (sp.i1e, WIDE, 1e-13, 0),
    "modified_bessel_k0": (sp.k0, WIDE, 1e-13, 0),
    "modified_bessel_k1": (sp.k1, WIDE, 1e-13, 0),
    "scaled_modified_bessel_k0": (sp.k0e, WIDE, 1e-13, 0),
    "scaled_modified_bessel_k1": (sp.k1e, WIDE, 1e-13, 0),
    "spherical_bessel_j0": (_j0_spherical, WIDE, 1e-14, 0),
    "airy_ai": (_nan_at_inf(_airy), np.concatenate([WIDE, [-1e4, -1e6, 1e6, -(2.0**21), 103.0]]), 1e-10, 1e-14),
}


def _reference(name, x):
    fn = UNARY[name][0]
    with np.errstate(all="ignore"):
        return fn(x)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float64_matches_scipy_over_wide_ranges(ocl, name):
    _, x, rtol, atol = UNARY[name]
    x = np.concatenate([x, SPECIALS])
    got = native(getattr(P, name), dev(x))
    assert got.dtype is ow.float64 and got.device.type == "opencl"
    check(host(got), _reference(name, x), rtol, atol)


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype, rtol, atol", [(ow.float32, 2e-7, 1e-37), (ow.bfloat16, 8e-3, 1e-37)])
def test_unary_narrow_dtypes_round_the_double_result(ocl, name, dtype, rtol, atol):
    _, x, _, _ = UNARY[name]
    x = np.concatenate([x[np.abs(x) < 1e30], SPECIALS])
    t = dev(x, dtype)
    got = native(getattr(P, name), t)
    assert got.dtype is dtype
    xs = host(t)  # the inputs as the dtype holds them
    with np.errstate(over="ignore"):
        want = _reference(name, xs).astype(np.float32)
    if dtype is ow.bfloat16:
        want = host(dev(want.astype(np.float64), ow.bfloat16))
    check(host(got), want, rtol, atol)


@pytest.mark.parametrize(
    "name, x, want",
    [
        ("digamma", [0.0, -0.0, -3.0, -np.inf, np.inf], [-np.inf, np.inf, np.nan, np.nan, np.inf]),
        ("lgamma", [0.0, -0.0, -4.0, -np.inf, np.inf, 1.0, 2.0], [np.inf, np.inf, np.inf, np.inf, np.inf, 0, 0]),
        ("erf_inv", [1.0, -1.0, -0.0, 1.5, -2.0], [np.inf, -np.inf, -0.0, np.nan, np.nan]),
        ("erfcx", [np.inf, -np.inf, -30.0, 0.0], [0.0, np.inf, np.inf, 1.0]),
        ("ndtri", [0.0, 1.0, 0.5, -0.1, 1.1], [-np.inf, np.inf, 0.0, np.nan, np.nan]),
        ("log_ndtr", [np.inf, -np.inf, 0.0], [-0.0, -np.inf, np.log(0.5)]),
        ("bessel_y0", [0.0, -1.0, np.inf], [-np.inf, np.nan, np.nan]),
        ("bessel_y1", [0.0, -0.0, -1.0], [-np.inf, -np.inf, np.nan]),
        ("bessel_j0", [0.0, np.inf, -np.inf], [1.0, np.nan, np.nan]),
        ("modified_bessel_k0", [0.0, -1.0, np.inf], [np.inf, np.nan, 0.0]),
        ("scaled_modified_bessel_k1", [0.0, -1.0, np.inf], [np.inf, np.nan, 0.0]),
        ("bessel_i0e", [np.inf, -np.inf, 0.0], [0.0, 0.0, 1.0]),
        ("bessel_i1", [np.inf, 0.0], [np.nan, 0.0]),
        ("airy_ai", [np.inf, -np.inf, 0.0], [np.nan, np.nan, 0.35502805388781723926]),
        ("spherical_bessel_j0", [0.0, np.inf, -np.inf], [1.0, 0.0, 0.0]),
    ],
)
def test_special_values(ocl, name, x, want):
    got = host(native(getattr(P, name), dev(np.array(x))))
    check(got, np.array(want), 1e-15)
    np.testing.assert_array_equal(np.signbit(got[np.array(want) == 0]), np.signbit(np.array(want)[np.array(want) == 0]))


def _igamma_reference(a, x, upper):
    """SciPy's regularised incomplete gamma with PyTorch's special cases, in PyTorch's order."""
    conds = [(x < 0) | (a < 0), (a == 0) & (x > 0), a == 0, x == 0, np.isinf(a) & np.isinf(x), np.isinf(a), np.isinf(x)]
    values = [np.nan, 0, np.nan, 1, np.nan, 1, 0] if upper else [np.nan, 1, np.nan, 0, np.nan, 0, 1]
    with np.errstate(all="ignore"):
        return np.select(conds, values, (sp.gammaincc if upper else sp.gammainc)(a, x))


@pytest.mark.parametrize("name, upper", [("igamma", False), ("igammac", True)])
def test_incomplete_gamma(ocl, name, upper):
    rng = np.random.default_rng(1)
    a = np.concatenate([10 ** rng.uniform(-3, 4, 2000), np.repeat(SPECIALS, 6), [1e6, 1e9, 1e12, 3.0]])
    edges = np.tile(np.r_[SPECIALS, -1.0], 5)
    x = np.concatenate([10 ** rng.uniform(-3, 4, 2000), edges, [1e6 + 900, 1e9 - 2e4, 1e12, 1e-300]])
    got = host(native(getattr(P, name), dev(a), dev(x)))
    check(got, _igamma_reference(a, x, upper), 1e-9, 1e-13)


def test_hurwitz_zeta(ocl):
    rng = np.random.default_rng(2)
    s = np.concatenate([rng.uniform(1, 30, 2000), [1.0, 0.5, 2.0, 3.0, 2.5, np.inf, np.nan, 2.0, 4.0]])
    q = np.concatenate([rng.uniform(-20, 50, 2000), [1.0, 1.0, 0.0, -1.5, -1.5, 2.0, 1.0, np.inf, 1e9]])
    with np.errstate(all="ignore"):
        want = sp.zeta(s, q)
    check(host(native(P.zeta, dev(s), dev(q))), want, 1e-11, 1e-300)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 6])
def test_polygamma(ocl, n):
    x = np.concatenate([np.linspace(-10, 30, 801), [1e-8, 1e5, -0.5, -1.0], SPECIALS])
    with np.errstate(all="ignore"):
        want = sp.psi(x) if n == 0 else (-1) ** (n + 1) * sp.gamma(n + 1) * sp.zeta(n + 1, x)
    check(host(native(P.polygamma, dev(x), n)), want, 1e-10, 1e-14)


@pytest.mark.parametrize("p", [1, 2, 4])
def test_mvlgamma_and_its_domain_error(ocl, p):
    x = np.linspace((p - 1) / 2 + 1e-3, 40, 500)
    want = sum(sp.gammaln(x - j / 2) for j in range(p)) + p * (p - 1) / 4 * np.log(np.pi)
    check(host(native(P.mvlgamma, dev(x), p)), want, 1e-13, 1e-13)
    bad = dev(np.array([3.0, (p - 1) / 2, 5.0]))
    with pytest.raises(ValueError, match="mvlgamma"):
        P.mvlgamma(bad, p)
    with pytest.raises(ValueError, match="mvlgamma"):
        P.mvlgamma(dev(np.array([np.nan, 9.0])), p)
    np.testing.assert_array_equal(host(bad), [3.0, (p - 1) / 2, 5.0])


def _u(n, x):
    return np.where(n < 0, 0.0, sp.eval_chebyu(np.maximum(n, 0), x))


# name -> reference of the integer degree n >= -1 (degree -1 gives 0)
POLY = {
    "chebyshev_polynomial_t": lambda n, x: sp.eval_chebyt(n, x),
    "chebyshev_polynomial_u": _u,
    "chebyshev_polynomial_v": lambda n, x: _u(n, x) - _u(n - 1, x),
    "chebyshev_polynomial_w": lambda n, x: _u(n, x) + _u(n - 1, x),
    "hermite_polynomial_h": lambda n, x: sp.eval_hermite(n, x),
    "hermite_polynomial_he": lambda n, x: sp.eval_hermitenorm(n, x),
    "laguerre_polynomial_l": lambda n, x: sp.eval_laguerre(n, x),
    "legendre_polynomial_p": lambda n, x: sp.eval_legendre(n, x),
}
for _k in "tuvw":
    POLY[f"shifted_chebyshev_polynomial_{_k}"] = (lambda f: lambda n, x: f(n, 2 * x - 1))(
        POLY[f"chebyshev_polynomial_{_k}"]
    )


def _poly_reference(name, x, n):
    d = np.where(np.isfinite(n), np.trunc(n), -1.0)
    with np.errstate(all="ignore"):
        v = POLY[name](np.maximum(d, 0).astype(np.int64), x)
    return np.where(d < 0, 0.0, v)


@pytest.mark.parametrize("name", sorted(POLY))
def test_polynomials_against_scipy(ocl, name):
    rng = np.random.default_rng(3)
    lo, hi = (0.0, 1.0) if name.startswith("shifted") else (-1.0, 1.0)
    x = np.concatenate([rng.uniform(lo, hi, 1500), [lo, hi, 0.5, 0.0, 1.0, -1.0, 0.25]])
    n = np.concatenate([rng.integers(-3, 40, 1500).astype(float), [5.0, 9.0, 12.0, 3.0, 10.0, 11.0, 7.0]])
    n[:30] += rng.uniform(0, 0.99, 30)  # fractional degrees are truncated
    n[30:40] = [np.nan, np.inf, -np.inf, -0.5, -1.0, -1.5, 0.0, 0.9, 1.2, -7.0]
    got = host(native(getattr(P, name), dev(x), dev(n)))
    scale = np.maximum(1.0, np.abs(_poly_reference(name, x, n)))
    check(got / scale, _poly_reference(name, x, n) / scale, 0, 1e-10)


def test_hermite_degree_limit_and_outside_points(ocl):
    x = np.array([0.5, 0.5, 2.0, -3.0, np.nan])
    n64 = np.array([512.0, 513.0, 20.0, 15.0, 3.0])
    got = host(P.hermite_polynomial_h(dev(x), dev(n64)))
    with np.errstate(all="ignore"):
        want = sp.eval_hermite(np.array([512, 0, 20, 15, 3]), x)
    check(got, np.where(np.arange(5) == 1, np.nan, want), 1e-10)
    got32 = host(P.hermite_polynomial_he(dev(x, ow.float32), dev(np.array([128.0, 129.0, 5.0, 4.0, 1.0]), ow.float32)))
    assert not np.isnan(got32[0]) and np.isnan(got32[1])
    np.testing.assert_allclose(got32[2:4], sp.eval_hermitenorm([5, 4], x[2:4]), rtol=1e-6)
    lag = host(P.laguerre_polynomial_l(dev(np.array([0.0, 5.0, -2.0])), dev(np.array([7.0, 6.0, 30.0]))))
    np.testing.assert_allclose(lag, [1.0, sp.eval_laguerre(6, 5.0), sp.eval_laguerre(30, -2.0)], rtol=1e-11)


@pytest.mark.parametrize("dtype, rtol", [(ow.float32, 2e-6), (ow.bfloat16, 2e-2)])
def test_binary_narrow_dtypes(ocl, dtype, rtol):
    a = dev(np.array([0.5, 1.0, 3.0, 7.5, 0.75]), dtype)
    x = dev(np.array([0.25, 2.0, 3.0, 4.0, 30.0]), dtype)
    av, xv = host(a), host(x)
    for name, want in [("igamma", sp.gammainc(av, xv)), ("igammac", sp.gammaincc(av, xv)), ("zeta", sp.zeta(xv, av))]:
        args = (x, a) if name == "zeta" else (a, x)
        got = native(getattr(P, name), *args)
        assert got.dtype is dtype
        check(host(got), want, rtol, 1e-30)
    check(host(native(P.polygamma, a, 2)), sp.polygamma(2, av), rtol)
    check(host(native(P.legendre_polynomial_p, a, x)), sp.eval_legendre(np.trunc(xv).astype(int), av), rtol, 1e-5)


def test_large_contiguous_calls_use_the_per_op_kernels(ocl):
    x = np.linspace(0.01, 50, 20000)
    check(host(native(P.bessel_y1, dev(x))), sp.y1(x), 1e-12, 1e-14)
    check(host(native(P.igammac, dev(x), dev(x[::-1].copy()))), sp.gammaincc(x, x[::-1]), 1e-9, 1e-13)


def test_empty_and_zero_dim(ocl):
    e = native(P.digamma, dev(np.zeros((0, 3))))
    assert tuple(e.shape) == (0, 3) and e.device.type == "opencl"
    z = native(P.lgamma, dev(np.array(4.0)))
    assert tuple(z.shape) == () and host(z) == pytest.approx(np.log(6.0))
    assert tuple(native(P.zeta, dev(np.zeros((2, 0))), dev(np.zeros((2, 0)))).shape) == (2, 0)


def test_cpu_scalar_operand_broadcasts(ocl):
    x = np.array([0.1, -0.4, 0.9])
    got = native(P.chebyshev_polynomial_t, dev(x), ow.tensor(3.0, dtype=ow.float64))
    np.testing.assert_allclose(host(got), 4 * x**3 - 3 * x, rtol=1e-14)
    got = native(P.zeta, ow.tensor(2.0, dtype=ow.float64), dev(np.array([1.0, 2.0])))
    np.testing.assert_allclose(host(got), [np.pi**2 / 6, np.pi**2 / 6 - 1], rtol=1e-14)


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


def _laid_out(x: np.ndarray, layout: str):
    """``x`` on the device as a view with ``layout`` (same logical values)."""
    if layout == "transposed" and x.ndim >= 2:
        return dev(np.swapaxes(x, -1, -2)).transpose(-1, -2)
    if layout == "strided":
        return dev(np.repeat(x, 2, axis=-1))[..., ::2]
    if layout == "offset":
        return dev(np.concatenate([np.zeros(3), x.ravel()]))[3:].reshape(*x.shape)
    if layout == "broadcast":
        return dev(x[:1]).expand(*x.shape)
    return dev(x)


@given(
    shapes,
    st.sampled_from(["contiguous", "transposed", "strided", "offset", "broadcast"]),
    st.sampled_from(["contiguous", "transposed", "strided", "offset", "broadcast"]),
    st.sampled_from(["digamma", "bessel_j1", "modified_bessel_k0", "ndtri", "igamma", "zeta", "legendre_polynomial_p"]),
    st.integers(0, 2**31),
)
def test_any_layout(ocl, shape, la, lb, name, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.05, 0.95, shape)
    y = rng.uniform(1.5, 6.0, shape)
    if la == "broadcast":
        x[...] = x[:1]
    if lb == "broadcast":
        y[...] = y[:1]
    a = _laid_out(x, la)
    if name in ("igamma", "zeta", "legendre_polynomial_p"):
        b = _laid_out(y, lb)
        got = native(getattr(P, name), b if name == "zeta" else a, a if name == "zeta" else b)
        want = {
            "igamma": lambda: sp.gammainc(x, y),
            "zeta": lambda: sp.zeta(y, x),
            "legendre_polynomial_p": lambda: sp.eval_legendre(np.trunc(y).astype(int), x),
        }[name]()
    else:
        got = native(getattr(P, name), a)
        want = _reference(name, x)
    assert tuple(got.shape) == shape
    check(host(got), want, 1e-11, 1e-14)


def test_library_is_dialect_neutral():
    from opweave_kernelgen import Dialect
    from opweave_kernelgen.codegen import special

    class DeviceC(Dialect):
        def function_prefix(self):
            return "__device__ inline"

    text = special.library(DeviceC(), special.SECTIONS)
    assert "__device__ inline double ow_zeta(double x, double q)" in text
    for word in ("__global", "__local", "__constant", "__kernel", "get_global_id", "barrier(", "@FN@"):
        assert word not in text
