"""The extra elementwise and creation kernels of the OpenCL device against NumPy/SciPy formulas.

Every call must run on the device: a CPU fallback (its warning, or a count in
``opweave._fallback.calls``) fails the test, except where the prim's contract
sends the call to the CPU kernel (integer division by zero, complex ``lerp``).
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import opweave as ow
import pytest
import scipy.special as sp
from hypothesis import given
from hypothesis import strategies as st
from opweave import _fallback

P = ow.ops.prims
BF16 = ow.bfloat16.numpy
FLOATS = [np.float32, np.float64, BF16]
INTS = [np.uint8, np.int8, np.int16, np.int32, np.int64]
SPECIALS = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 2.5, -3.5, 1e-3, 7.0])


@contextlib.contextmanager
def on_device():
    """Fail if anything inside falls back to the CPU."""
    before = dict(_fallback.calls)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield
    assert dict(_fallback.calls) == before, "a prim ran through the CPU fallback"


def dev(a):
    """A contiguous OpenCL tensor holding ``a``."""
    return ow.tensor(np.array(a, order="C")).to("opencl")


def host(t):
    return t.numpy(force=True)


def laid_out(x: np.ndarray, layout: str):
    """``x`` on the device as a view with ``layout`` (same logical values)."""
    if layout == "transposed" and x.ndim >= 2:
        return dev(np.swapaxes(x, -1, -2)).transpose(-1, -2)
    if layout == "strided" and x.ndim >= 1:
        return dev(np.repeat(x, 2, axis=-1))[..., ::2]
    if layout == "offset" and x.size:
        return dev(np.concatenate([x.reshape(-1)[:1], x.reshape(-1)]))[1:].reshape(x.shape)
    if layout == "reversed" and x.ndim >= 1:
        return dev(x[..., ::-1]).flip(-1)
    return dev(x)


def grid(values):
    """Every pair of ``values`` as two flat arrays."""
    a, b = np.meshgrid(values, values)
    return a.reshape(-1), b.reshape(-1)


def check_float(got, expected, dtype, rtol=None):
    """Values (nan where nan) within the dtype's tolerance, and the sign of every zero."""
    got = host(got).astype(np.float64)
    expected = np.asarray(expected).astype(dtype).astype(np.float64)
    rtol = rtol or {np.float32: 2e-6, np.float64: 1e-12}.get(dtype, 1e-2)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * 1e-3)
    zeros = expected == 0
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(expected[zeros]))


def f32(x, dtype):
    """``x`` rounded to ``dtype``, then in the float type the CPU computes that dtype in."""
    return np.asarray(x).astype(dtype).astype(np.float64 if dtype is np.float64 else np.float32)


# -- unary ----------------------------------------------------------------------------------------


def _sign(x):
    return np.where(x > 0, 1.0, np.where(x < 0, -1.0, np.where(x == 0, 0.0, x)))


def _entr(x):
    with np.errstate(all="ignore"):
        return np.where(np.isnan(x), x, np.where(x > 0, -x * np.log(x), np.where(x == 0, 0.0, -np.inf)))


UNARY = {
    "sign": _sign,
    "sgn": _sign,
    "sinc": np.sinc,
    "entr": _entr,
    "logit": lambda x: np.log(x / (1 - x)),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float_special_values(ocl, name, dtype):
    x = np.concatenate([SPECIALS, np.linspace(-4, 4, 17)])
    with on_device():
        got = P.logit(dev(x.astype(dtype)), None) if name == "logit" else getattr(P, name)(dev(x.astype(dtype)))
    with np.errstate(all="ignore"):
        expected = UNARY[name](f32(x, dtype))
    check_float(got, expected, dtype, rtol=1e-5 if dtype is np.float32 and name == "sinc" else None)


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: np.dtype(d).name)
def test_sign_integers(ocl, dtype):
    info = np.iinfo(dtype)
    x = np.array([info.min, -5, -1, 0, 1, 7, info.max]).astype(dtype)
    with on_device():
        for name in ("sign", "sgn"):
            got = getattr(P, name)(dev(x))
            assert got.dtype == ow.dtype_of_numpy(np.dtype(dtype))
            np.testing.assert_array_equal(host(got), np.sign(x))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("eps", [0.0, 1e-6, 0.2, 0.7, -1.0])
def test_logit_eps_clamps_to_the_cpu_rounding_of_eps(ocl, dtype, eps):
    x = np.array([0.0, 1e-8, 0.1, 0.5, 0.9, 1.0, np.nan, -1.0, 2.0])
    with on_device():
        got = P.logit(dev(x.astype(dtype)), eps)
    c = f32(x, dtype)
    if eps >= 0:
        lo, hi = np.asarray(eps, c.dtype), np.asarray(1 - eps, c.dtype)
        c = np.minimum(np.maximum(c, lo), hi)
    with np.errstate(all="ignore"):
        check_float(got, np.log(c / (1 - c)), dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("decimals", [0, 1, 3, -1, -2, 40, -40])
def test_round_decimals_half_to_even(ocl, dtype, decimals):
    x = np.concatenate([SPECIALS, [0.125, 0.375, 2.5, 3.5, -2.5, 1234.5678, -0.05, 15.0, 25.0, 1e30]])
    with on_device():
        got = P.round_decimals(dev(x.astype(dtype)), decimals)
    c = f32(x, dtype)
    with np.errstate(all="ignore"):
        scale = np.asarray(10.0 ** min(abs(decimals), 308), c.dtype)
        expected = np.rint(c * scale) / scale if decimals >= 0 else np.rint(c / scale) * scale
    check_float(got, expected, dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("args", [(None, None, None), (1.5, 1e300, -7.25), (-0.0, None, 3.0)])
def test_nan_to_num(ocl, dtype, args):
    x = SPECIALS.astype(dtype)
    with on_device():
        got = P.nan_to_num(dev(x), *args)
    nan, posinf, neginf = args
    info = np.finfo(np.float32) if dtype is BF16 else np.finfo(dtype)
    hi = float(ow.finfo(ow.bfloat16).max) if dtype is BF16 else float(info.max)
    c = f32(x, dtype)
    with np.errstate(over="ignore"):
        expected = np.where(
            np.isnan(c),
            np.asarray(0.0 if nan is None else nan, c.dtype),
            np.where(
                c == np.inf,
                np.asarray(hi if posinf is None else posinf, c.dtype),
                np.where(c == -np.inf, np.asarray(-hi if neginf is None else neginf, c.dtype), c),
            ),
        )
    check_float(got, expected, dtype)


# -- binary ---------------------------------------------------------------------------------------


def _floor_divide(a, b):
    mod = np.fmod(a, b)
    div = (a - mod) / b
    div = np.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
    fl = np.floor(div)
    fl = np.where(div - fl > 0.5, fl + 1, fl)
    fl = np.where(div == 0, np.copysign(np.zeros_like(div), a / b), fl)
    return np.where(b == 0, a / b, fl)


def _xlogy(log):
    return lambda x, y: np.where(np.isnan(y), np.nan, np.where(x == 0, 0.0, x * log(y)))


BINARY = {
    "floor_divide": _floor_divide,
    "logaddexp": np.logaddexp,
    "logaddexp2": np.logaddexp2,
    "xlogy": _xlogy(np.log),
    "xlog1py": _xlogy(np.log1p),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_float_special_values(ocl, name, dtype):
    a, b = grid(SPECIALS)
    with on_device():
        got = getattr(P, name)(dev(a.astype(dtype)), dev(b.astype(dtype)))
    with np.errstate(all="ignore"):
        expected = BINARY[name](f32(a, dtype), f32(b, dtype))
    check_float(got, expected, dtype)


def test_xlogy_of_zero_and_nan_is_nan(ocl):
    with on_device():
        got = P.xlogy(dev(np.array([0.0, 0.0])), dev(np.array([np.nan, 0.0])))
    assert np.isnan(host(got)[0]) and host(got)[1] == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_nextafter_bits(ocl, dtype):
    tiny = np.finfo(dtype).smallest_subnormal
    a, b = grid(np.concatenate([SPECIALS, [tiny, -tiny, np.finfo(dtype).max]]).astype(dtype))
    with on_device():
        got = host(P.nextafter(dev(a), dev(b)))
    with np.errstate(over="ignore"):
        expected = np.nextafter(a, b)
    np.testing.assert_array_equal(
        got.view(f"u{got.itemsize}")[~np.isnan(got)],
        expected.view(got.view(f"u{got.itemsize}").dtype)[~np.isnan(expected)],
    )
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))


def test_nextafter_bfloat16_steps_one_bfloat16_ulp(ocl):
    a, b = grid(np.array([0.0, -0.0, 1.0, -1.0, 2.0, np.inf, -np.inf, np.nan, 3.0e38], np.float32))
    with on_device():
        got = host(P.nextafter(dev(a.astype(BF16)), dev(b.astype(BF16)))).view(np.uint16).astype(np.int64)
    bits = a.astype(BF16).view(np.uint16).astype(np.int64)
    x, y = a.astype(BF16).astype(np.float32), b.astype(BF16).astype(np.float32)
    step = np.where((x < y) == (x > 0), 1, -1)
    expected = np.where(x == y, b.astype(BF16).view(np.uint16), bits + step)
    expected = np.where((x == 0) & (x != y), np.where(np.signbit(y), 0x8001, 0x0001), expected)
    finite = ~np.isnan(x) & ~np.isnan(y)
    np.testing.assert_array_equal(got[finite], expected[finite])
    assert np.all(np.isnan(host(P.nextafter(dev(a.astype(BF16)), dev(b.astype(BF16))))[~finite].astype(np.float32)))


def _ints(dtype):
    info = np.iinfo(dtype)
    values = [0, 1, -1, 2, -2, 3, -7, 12, 100, info.min, info.max, info.min + 1]
    return np.unique(np.array([v for v in values if info.min <= v <= info.max]).astype(dtype))


def _wrap(values, dtype):
    """Python integers wrapped to ``dtype`` (two's complement)."""
    bits = np.dtype(dtype).itemsize * 8
    return np.array([v % (1 << bits) for v in values], np.uint64).astype(dtype)


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: np.dtype(d).name)
def test_integer_number_theory(ocl, dtype):
    a, b = grid(_ints(dtype))
    with on_device():
        gcd, lcm = host(P.gcd(dev(a), dev(b))), host(P.lcm(dev(a), dev(b)))
        nz = b != 0
        fdiv = host(P.floor_divide(dev(a[nz]), dev(b[nz])))
    pa, pb = [int(v) for v in a], [int(v) for v in b]
    import math

    np.testing.assert_array_equal(gcd, _wrap([math.gcd(x, y) for x, y in zip(pa, pb)], dtype))
    np.testing.assert_array_equal(lcm, _wrap([math.lcm(x, y) for x, y in zip(pa, pb)], dtype))
    np.testing.assert_array_equal(fdiv, _wrap([x // y for x, y in zip(pa, pb) if y != 0], dtype))


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: np.dtype(d).name)
def test_shifts_beyond_the_bit_width(ocl, dtype):
    bits = np.dtype(dtype).itemsize * 8
    info = np.iinfo(dtype)
    counts = [c for c in (-1, 0, 1, 3, bits - 2, bits - 1, bits, bits + 1, 100) if info.min <= c <= info.max]
    x, n = [v.reshape(-1) for v in np.meshgrid(_ints(dtype), np.array(counts).astype(dtype))]
    with on_device():
        left = host(P.shift_left(dev(x), dev(n)))
        right = host(P.shift_right_arithmetic(dev(x), dev(n)))
    signed = info.min < 0
    px, pn = [int(v) for v in x], [int(v) for v in n]
    np.testing.assert_array_equal(left, _wrap([v << c if 0 <= c < bits else 0 for v, c in zip(px, pn)], dtype))
    edge = bits - 1 if signed else bits
    expected = [v >> c if 0 <= c < edge else (v >> (bits - 1) if signed else 0) for v, c in zip(px, pn)]
    np.testing.assert_array_equal(right, _wrap(expected, dtype))


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: np.dtype(d).name)
def test_integer_division_by_zero_raises_the_cpu_error(ocl, dtype):
    a = dev(np.array([4, 5, 6], dtype))
    b = dev(np.array([1, 0, 2], dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="division by zero"):
            P.floor_divide(a, b)
    np.testing.assert_array_equal(host(b), [1, 0, 2])


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: np.dtype(d).name)
def test_div_integer_truncates(ocl, dtype):
    from opweave_kernelgen.kernels.elementwise_extra import run

    a, b = grid(_ints(dtype))
    nz = b != 0
    with on_device():
        got = host(run("div", dev(a[nz]), dev(b[nz])))
        assert run("div", dev(a), dev(b)) is NotImplemented
    pa, pb = [int(v) for v in a[nz]], [int(v) for v in b[nz]]
    trunc = [abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1) for x, y in zip(pa, pb)]
    np.testing.assert_array_equal(got, _wrap(trunc, dtype))


# -- ternary --------------------------------------------------------------------------------------


def _lerp(s, e, w):
    d = e - s
    return np.where(np.abs(w) < 0.5, s + w * d, e - d * (1 - w))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_clamp_and_lerp_float(ocl, dtype):
    x = np.concatenate([SPECIALS, np.linspace(-3, 3, 9)])
    lo, hi = np.roll(x, 3), np.roll(x, 7)
    with on_device():
        clamp = P.clamp(dev(x.astype(dtype)), dev(lo.astype(dtype)), dev(hi.astype(dtype)))
        lerp = P.lerp(dev(x.astype(dtype)), dev(lo.astype(dtype)), dev(hi.astype(dtype)))
    c, cl, ch = f32(x, dtype), f32(lo, dtype), f32(hi, dtype)
    with np.errstate(all="ignore"):
        check_float(clamp, np.minimum(np.maximum(c, cl), ch), dtype)
        np.testing.assert_allclose(
            host(lerp).astype(np.float64),
            _lerp(c, cl, ch).astype(dtype).astype(np.float64),
            rtol=1e-2 if dtype is BF16 else 1e-6,
        )


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: np.dtype(d).name)
def test_clamp_integers(ocl, dtype):
    a, b = grid(_ints(dtype))
    hi = np.full_like(a, 3)
    with on_device():
        got = host(P.clamp(dev(a), dev(b), dev(hi)))
    np.testing.assert_array_equal(got, np.minimum(np.maximum(a, b), hi))


def test_cpu_scalar_operands_and_zero_dim(ocl):
    x = np.array([-2.0, 0.25, 4.0], np.float32)
    with on_device():
        got = P.clamp(dev(x), ow.tensor(np.float32(0.0)), ow.tensor(np.float32(1.0)))
        zero_dim = P.logaddexp(dev(np.float64(1.0)), dev(np.float64(2.0)))
    np.testing.assert_array_equal(host(got), [0.0, 0.25, 1.0])
    assert zero_dim.shape == () and np.isclose(host(zero_dim), np.logaddexp(1.0, 2.0))


@pytest.mark.parametrize("name", ["sign", "sinc", "nan_to_num", "gcd", "clamp"])
def test_empty_tensors(ocl, name):
    dtype = np.int32 if name == "gcd" else np.float32
    e = dev(np.zeros((0, 3), dtype))
    with on_device():
        got = {
            "sign": lambda: P.sign(e),
            "sinc": lambda: P.sinc(e),
            "nan_to_num": lambda: P.nan_to_num(e, None, None, None),
            "gcd": lambda: P.gcd(e, e),
            "clamp": lambda: P.clamp(e, e, e),
        }[name]()
    assert tuple(got.shape) == (0, 3)


def test_large_contiguous_calls_take_the_contiguous_kernels(ocl):
    x = np.random.default_rng(3).standard_normal(1 << 15).astype(np.float32)
    with on_device():
        sinc = host(P.sinc(dev(x)))
        clamp = host(P.clamp(dev(x), dev(np.full_like(x, -0.5)), dev(np.full_like(x, 0.5))))
        nan_to_num = host(P.nan_to_num(dev(x), None, None, None))
    np.testing.assert_allclose(sinc, np.sinc(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(clamp, np.clip(x, -0.5, 0.5))
    np.testing.assert_array_equal(nan_to_num, x)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=lambda d: np.dtype(d).name)
def test_nan_to_num_complex_per_part(ocl, dtype):
    z = np.array([complex(np.nan, np.inf), complex(-np.inf, 2), 3 - 4j, complex(-0.0, np.nan)], dtype)
    with on_device():
        default = host(P.nan_to_num(dev(z), None, None, None))
        given_ = host(P.nan_to_num(dev(np.repeat(z, 2))[::2], 1.5, 2.0, -3.0))
    real = np.finfo(np.dtype(dtype).type(0).real.dtype)

    def part(v, nan, hi, lo):
        return np.where(np.isnan(v), nan, np.where(v == np.inf, hi, np.where(v == -np.inf, lo, v)))

    for got, args in ((default, (0.0, real.max, real.min)), (given_, (1.5, 2.0, -3.0))):
        np.testing.assert_array_equal(got.real, part(z.real, *args))
        np.testing.assert_array_equal(got.imag, part(z.imag, *args))


def test_complex_lerp_falls_back(ocl):
    s, e = dev(np.array([1 + 1j], np.complex64)), dev(np.array([3 - 1j], np.complex64))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = host(P.lerp(s, e, dev(np.array([0.25 + 0j], np.complex64))))
    np.testing.assert_allclose(got, [1.5 + 0.5j], rtol=1e-6)


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)
layouts = st.sampled_from(["contiguous", "transposed", "strided", "offset", "reversed"])


@given(
    shapes,
    layouts,
    layouts,
    st.sampled_from(["logaddexp", "xlogy", "floor_divide", "gcd", "shift_left", "clamp", "entr"]),
    st.sampled_from(["float32", "float64", "int32", "int8"]),
    st.integers(0, 2**31),
)
def test_any_layout(ocl, shape, la, lb, name, dtype, seed):
    floating = dtype.startswith("float")
    if name in ("gcd", "shift_left") and floating or name in ("logaddexp", "xlogy", "entr") and not floating:
        dtype = "int16" if floating else "float32"
        floating = not floating
    rng = np.random.default_rng(seed)
    if floating:
        x, y = rng.standard_normal(shape).astype(dtype) * 3, rng.standard_normal(shape).astype(dtype) * 3
    else:
        x, y = rng.integers(-50, 50, shape).astype(dtype), rng.integers(1, 9, shape).astype(dtype)
    a, b = laid_out(x, la), laid_out(y, lb)
    with on_device(), np.errstate(all="ignore"):
        if name == "entr":
            got, expected = P.entr(a), sp.entr(x)
        elif name == "clamp":
            got, expected = P.clamp(a, b, b), np.minimum(np.maximum(x, y), y)
        elif name == "gcd":
            got, expected = P.gcd(a, b), np.gcd(x, y)
        elif name == "shift_left":
            got, expected = P.shift_left(a, b), np.left_shift(x, y)
        elif name == "floor_divide":
            got, expected = P.floor_divide(a, b), np.floor_divide(x, y)
        else:
            got, expected = getattr(P, name)(a, b), BINARY[name](x, y)
    assert tuple(got.shape) == shape
    np.testing.assert_allclose(host(got), expected, rtol=1e-5, atol=1e-6)


# -- creation -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int64", "bfloat16", "float32", "float64", "complex64"])
def test_eye(ocl, dtype):
    dt = getattr(ow, dtype)
    with on_device():
        for n, m in [(0, 0), (0, 3), (1, 1), (3, 5), (4, 2)]:
            got = P.eye(n, m, dtype=dt, device=ow.device("opencl"))
            assert got.dtype == dt and tuple(got.shape) == (n, m)
            np.testing.assert_array_equal(host(got), np.eye(n, m))


@pytest.mark.parametrize("upper", [False, True])
def test_triangle_indices(ocl, upper):
    prim, oracle = (P.triu_indices, np.triu_indices) if upper else (P.tril_indices, np.tril_indices)
    with on_device():
        for row in range(0, 6):
            for col in range(0, 6):
                for offset in range(-7, 8):
                    got = host(prim(row, col, offset, dtype=ow.int32, device=ow.device("opencl")))
                    expected = np.stack(oracle(row, offset, col)).astype(np.int32)
                    np.testing.assert_array_equal(got, expected.reshape(2, -1))


@pytest.mark.parametrize(
    "dtype, value, expected",
    [("bool", 2, True), ("int8", -3.9, -3), ("int64", 2**62, 2**62), ("bfloat16", 0.1, 0.1), ("float64", -0.0, -0.0),
     ("complex128", 1 - 2j, 1 - 2j)],
)  # fmt: skip
def test_fill_keeps_the_dense_layout(ocl, dtype, value, expected):
    dt = getattr(ow, dtype)
    base = ow.empty((3, 2), dtype=dt, device="opencl").transpose(0, 1)
    with on_device():
        got = P.fill(base, value)
        empty = P.fill(ow.empty((0, 2), dtype=dt, device="opencl"), value)
        zero_dim = P.fill(ow.empty((), dtype=dt, device="opencl"), value)
    assert got.stride() == base.stride() and tuple(empty.shape) == (0, 2)
    want = np.full(tuple(base.shape), expected, dt.numpy)
    np.testing.assert_array_equal(host(got), want)
    assert host(zero_dim) == want.flat[0]
    if dtype == "float64":
        assert np.signbit(host(got)).all()


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.int64])
def test_integer_remainder_fmod_and_pow_run_on_the_device(ocl, dtype):
    from opweave import _fallback

    info = np.iinfo(dtype)
    rng = np.random.default_rng(5)
    a = np.concatenate([rng.integers(info.min, info.max, 40, dtype=dtype, endpoint=True), [info.min, info.max, 0]])
    a = a.astype(dtype)
    b = rng.integers(info.min, info.max, a.size, dtype=dtype, endpoint=True)
    b[b == 0] = 1
    if info.min:
        b[:3] = -1  # info.min % -1 and friends: no trap
    e = rng.integers(0, 70, a.size).astype(dtype)
    before = sum(_fallback.calls.values())
    P = ow.ops.prims
    A, B = ow.tensor(a).to("opencl"), ow.tensor(b).to("opencl")
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(P.remainder(A, B).numpy(force=True), np.remainder(a, b))
        np.testing.assert_array_equal(P.fmod(A, B).numpy(force=True), np.fmod(a, b))
        np.testing.assert_array_equal(P.pow(A, ow.tensor(e).to("opencl")).numpy(force=True), np.power(a, e))
    assert sum(_fallback.calls.values()) == before
