"""Complex dtypes on the OpenCL device against NumPy: elementwise prims over any layout, special values and
branch cuts, the complex parts prims, casts, sum/prod and matrix products; and no CPU fallback on the way."""

from __future__ import annotations

import contextlib

import numpy as np
import opweave as ow
import pytest
from hypothesis import given
from hypothesis import strategies as st
from opweave import _fallback

P = ow.ops.prims
CDTYPES = [np.complex64, np.complex128]
TOL = {np.complex64: (2e-5, 1e-5), np.complex128: (1e-11, 1e-12), np.float32: (2e-5, 1e-5), np.float64: (1e-11, 1e-12)}


@contextlib.contextmanager
def on_device():
    """Fails if a prim ran through the CPU fallback inside the block."""
    before = sum(_fallback.calls.values())
    yield
    assert sum(_fallback.calls.values()) == before, f"CPU fallback ran: {_fallback.calls}"


def dev(a):
    """A contiguous OpenCL tensor holding ``a``."""
    return ow.tensor(np.array(a, order="C")).to("opencl")


def host(t):
    return t.numpy(force=True)


def crandom(rng, shape, dtype, lo=-4.0, hi=4.0):
    return (rng.uniform(lo, hi, shape) + 1j * rng.uniform(lo, hi, shape)).astype(dtype)


def laid_out(x: np.ndarray, layout: str):
    """``x`` on the device as a view with the requested layout (same logical values)."""
    if layout == "transposed" and x.ndim >= 2:
        return dev(np.swapaxes(x, -1, -2)).transpose(-1, -2)
    if layout == "strided" and x.ndim >= 1:
        return dev(np.repeat(x, 2, axis=-1))[..., ::2]
    if layout == "offset" and x.ndim >= 1:
        padded = np.concatenate([np.zeros((1,) + x.shape[1:], x.dtype), x])
        return dev(padded)[1:]
    if layout == "broadcast" and x.ndim >= 1 and x.shape[0] > 0 and (x == x[:1]).all():
        return dev(x[:1]).expand(*x.shape)
    return dev(x)


def close(got, want, dtype):
    """``got`` equals ``want`` within the dtype's tolerance; nan and infinite parts must match part by part."""
    rtol, atol = TOL[dtype]
    got, want = np.asarray(got), np.asarray(want).astype(got.dtype)
    assert got.shape == want.shape and got.dtype == want.dtype
    if got.dtype.kind == "b":
        np.testing.assert_array_equal(got, want)
        return
    for part in (np.real, np.imag) if got.dtype.kind == "c" else (np.real,):
        g, w = part(got), part(want)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        inf = np.isinf(w)
        np.testing.assert_array_equal(g[inf], w[inf])
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=atol)


def _sgn(z):
    mag = np.abs(z)
    return np.where(mag == 0, 0, z / np.where(mag == 0, 1, mag))


UNARY = {
    "exp": np.exp,
    "exp2": lambda z: np.exp(np.log(2) * z),
    "expm1": lambda z: np.exp(z) - 1,
    "log": np.log,
    "log2": lambda z: np.log(z) / np.log(2),
    "log10": lambda z: np.log(z) / np.log(10),
    "log1p": lambda z: np.log(1 + z),
    "sqrt": np.sqrt,
    "rsqrt": lambda z: 1 / np.sqrt(z),
    "reciprocal": lambda z: 1 / z,
    "sin": lambda z: (np.exp(1j * z) - np.exp(-1j * z)) / 2j,
    "cos": lambda z: (np.exp(1j * z) + np.exp(-1j * z)) / 2,
    "tan": np.tan,
    "sinh": lambda z: (np.exp(z) - np.exp(-z)) / 2,
    "cosh": lambda z: (np.exp(z) + np.exp(-z)) / 2,
    "tanh": np.tanh,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "sigmoid": lambda z: 1 / (1 + np.exp(-z)),
    "neg": lambda z: -z,
    "conj_physical": np.conj,
    "abs": lambda z: np.sqrt(z.real**2 + z.imag**2),
    "angle": lambda z: np.arctan2(z.imag, z.real),
    "real": lambda z: z.real,
    "imag": lambda z: z.imag,
    "isnan": np.isnan,
    "isinf": np.isinf,
    "isfinite": np.isfinite,
    "logical_not": lambda z: z == 0,
}
REAL_OUT = {"abs", "angle", "real", "imag"}

BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": lambda a, b: (a.real * b.real - a.imag * b.imag) + 1j * (a.real * b.imag + a.imag * b.real),
    "div": lambda a, b: a * np.conj(b) / (b.real**2 + b.imag**2),
    "pow": lambda a, b: np.exp(b * np.log(a)),
    "eq": np.equal,
    "ne": np.not_equal,
    "logical_and": lambda a, b: (a != 0) & (b != 0),
    "logical_or": lambda a, b: (a != 0) | (b != 0),
    "logical_xor": lambda a, b: (a != 0) != (b != 0),
}


def _want(fn, *xs):
    with np.errstate(all="ignore"):
        r = fn(*(x.astype(np.complex128) for x in xs))
    return r


def _out_dtype(name, dtype, value):
    if value.dtype.kind == "b":
        return bool
    return np.dtype(dtype).type(0).real.dtype.type if name in REAL_OUT else dtype


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)
layouts = st.sampled_from(["contiguous", "transposed", "strided", "offset", "broadcast"])


@given(shapes, layouts, st.sampled_from(sorted(UNARY)), st.sampled_from(CDTYPES), st.integers(0, 2**31))
def test_unary_over_any_layout(ocl, shape, layout, name, dtype, seed):
    x = crandom(np.random.default_rng(seed), shape, dtype)
    if layout == "broadcast" and x.ndim:
        x = np.broadcast_to(x[:1], x.shape).copy()
    with on_device():
        got = host(getattr(P, name)(laid_out(x, layout)))
    want = _want(UNARY[name], x)
    close(got, want.astype(_out_dtype(name, dtype, want)), dtype)


@given(shapes, layouts, layouts, st.sampled_from(sorted(BINARY)), st.sampled_from(CDTYPES), st.integers(0, 2**31))
def test_binary_over_any_layout(ocl, shape, la, lb, name, dtype, seed):
    rng = np.random.default_rng(seed)
    x, y = crandom(rng, shape, dtype), crandom(rng, shape, dtype)
    if x.size:
        y.flat[0] = x.flat[0]  # equal elements for eq/ne
    with on_device():
        got = host(getattr(P, name)(laid_out(x, la), laid_out(y, lb)))
    want = _want(BINARY[name], x, y)
    close(got, want.astype(bool if want.dtype.kind == "b" else dtype), dtype)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_binary_with_a_cpu_scalar(ocl, dtype):
    x = crandom(np.random.default_rng(1), (3, 4), dtype)
    s = ow.tensor(np.array(1.5 - 2j, dtype))
    with on_device():
        got = host(P.mul(dev(x), s)), host(P.div(s, dev(x)))
    close(got[0], x * dtype(1.5 - 2j), dtype)
    close(got[1], dtype(1.5 - 2j) / x.astype(np.complex128), dtype)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_empty_and_zero_dim(ocl, dtype):
    with on_device():
        e = P.exp(dev(np.zeros((0, 3), dtype)))
        z = P.mul(dev(np.array(2 + 1j, dtype)), dev(np.array(1 - 1j, dtype)))
        a = P.abs(dev(np.array(3 + 4j, dtype)))
    assert tuple(e.shape) == (0, 3) and e.dtype == getattr(ow, np.dtype(dtype).name)
    assert host(z).shape == () and host(z) == 3 - 1j
    assert host(a) == 5


INF, NAN = np.inf, np.nan


@pytest.mark.parametrize("dtype", CDTYPES)
def test_division_follows_numpy_scaling(ocl, dtype):
    a = np.array([1 + 1j, 1 + 0j, 0j, 1e30 + 1e30j, 2 + 3j, -1 + 0j], dtype)
    b = np.array([0j, 0j, 0j, 1e30 + 1e30j, complex(INF, 0), 1e-30 + 1e-30j], dtype)
    with on_device():
        got = host(P.div(dev(a), dev(b)))
    # NumPy's (Smith's) algorithm: x / 0 is a per-part division by zero, no overflow in |b|**2
    want = np.array([complex(INF, INF), complex(INF, NAN), complex(NAN, NAN), 1, 0, -5e29 + 5e29j], np.complex128)
    if dtype == np.complex64:
        want[5] = np.complex64(-1 + 0j) / np.complex64(1e-30 + 1e-30j)
    close(got, want.astype(dtype), dtype)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_special_values(ocl, dtype):
    z = np.array(
        [complex(INF, 1), complex(-INF, 1), complex(INF, 0), complex(NAN, 0), complex(NAN, 1), complex(3, NAN)], dtype
    )
    with on_device():
        ab, nan, inf, fin = (host(getattr(P, n)(dev(z))) for n in ("abs", "isnan", "isinf", "isfinite"))
        ex = host(P.exp(dev(z[:4])))
    close(ab, np.array([INF, INF, INF, NAN, NAN, NAN]).astype(ab.dtype), dtype)  # hypot(inf, nan) is inf
    np.testing.assert_array_equal(nan, [0, 0, 0, 1, 1, 1])
    np.testing.assert_array_equal(inf, [1, 1, 1, 0, 0, 0])
    np.testing.assert_array_equal(fin, [0, 0, 0, 0, 0, 0])
    c1, s1 = np.cos(1.0), np.sin(1.0)
    want = np.array([complex(INF, INF) if c1 > 0 else 0, complex(0 * c1, 0 * s1), complex(INF, 0), complex(NAN, 0)])
    close(ex, want.astype(dtype), dtype)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_signed_zeros_and_branch_cuts(ocl, dtype):
    z = np.array([complex(-4, 0.0), complex(-4, -0.0), complex(2, 0.0), complex(2, -0.0), complex(0.0, 3)], dtype)
    with on_device():
        sq, lg = host(P.sqrt(dev(z))), host(P.log(dev(z)))
        asin, acosh = host(P.asin(dev(z))), host(P.acosh(dev(z)))
        cj = host(P.conj_physical(dev(np.array([complex(1, 0.0)], dtype))))
    # the sign of a zero imaginary part picks the side of the cut (C99 Annex G)
    close(sq, np.array([2j, -2j, np.sqrt(2), np.sqrt(2), np.sqrt(1.5) * (1 + 1j)]).astype(dtype), dtype)
    assert np.signbit(sq[3].imag) and not np.signbit(sq[2].imag)
    np.testing.assert_allclose(lg.imag[:2], [np.pi, -np.pi], rtol=1e-6)
    assert np.sign(asin[2].imag) == 1 and np.sign(asin[3].imag) == -1
    assert np.sign(acosh[0].imag) == 1 and np.sign(acosh[1].imag) == -1
    assert np.signbit(cj[0].imag)
    m, z0 = host(P.abs(dev(np.array([complex(-0.0, -0.0)], dtype)))), np.array([0j], dtype)
    assert m[0] == 0 and not np.signbit(m[0])
    with on_device():
        assert host(P.reciprocal(dev(z0)))[0].real == INF


@pytest.mark.parametrize("dtype", CDTYPES)
def test_integer_powers_square_like_numpy(ocl, dtype):
    a = crandom(np.random.default_rng(2), (6,), dtype, -1.5, 1.5)
    with on_device():
        for n in (0, 1, 2, 3, 7, -2, 0.5):
            got = host(P.pow(dev(a), dev(np.full(a.shape, n, dtype))))
            want = np.ones(a.shape, np.complex128) if n == 0 else a.astype(np.complex128) ** n
            close(got, want.astype(dtype), dtype)
        zero = host(P.pow(dev(np.zeros(3, dtype)), dev(np.array([2, -1, 1j], dtype))))
    close(zero, np.array([0, complex(NAN, NAN), complex(NAN, NAN)]).astype(dtype), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_complex_polar_angle(ocl, dtype):
    rng = np.random.default_rng(3)
    r, t = rng.uniform(0, 3, (4, 5)).astype(dtype), rng.uniform(-3, 3, (4, 5)).astype(dtype)
    cdtype = np.complex64 if dtype == np.float32 else np.complex128
    with on_device():
        c = host(P.complex(laid_out(r, "transposed"), laid_out(t, "strided")))
        p = host(P.polar(dev(r), dev(t)))
        c_inf = host(P.complex(dev(np.array([INF], dtype)), dev(np.array([0], dtype))))
        ang = host(P.angle(dev(np.array([-1, 0, -0.0, 2, NAN, -INF], dtype))))
    close(c, (r + 1j * t).astype(cdtype), cdtype)
    close(p, (r * np.cos(t) + 1j * r * np.sin(t)).astype(cdtype), cdtype)
    assert c_inf[0].real == INF and c_inf[0].imag == 0  # built part by part, no inf * 1j
    close(ang, np.array([np.pi, 0, 0, 0, NAN, np.pi], dtype), dtype)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_parts_are_new_tensors(ocl, dtype):
    x = crandom(np.random.default_rng(4), (3, 4), dtype)
    t = laid_out(x, "transposed")
    with on_device():
        re, im = P.real(t), P.imag(t)
    assert re.dtype == im.dtype == getattr(ow, np.dtype(x.real.dtype).name)
    np.testing.assert_array_equal(host(re), x.real)
    np.testing.assert_array_equal(host(im), x.imag)
    assert re.untyped_storage().handle is not t.untyped_storage().handle


def test_conj_physical_of_real_is_a_copy(ocl):
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    with on_device():
        got = P.conj_physical(laid_out(x, "transposed"))
    np.testing.assert_array_equal(host(got), x)


@pytest.mark.parametrize("src", ["complex64", "complex128"])
@pytest.mark.parametrize("dst", ["bool", "uint8", "int32", "int64", "bfloat16", "float32", "float64", "complex64"])
def test_casts_from_complex(ocl, src, dst):
    z = np.array([1.75 - 2j, -2.5 + 0j, 0 + 3j, 0j, 300.5 + 1j], src)
    with on_device():
        got = host(P.convert_element_type(laid_out(z, "strided"), getattr(ow, dst)))
    want_dtype = ow.bfloat16.numpy if dst == "bfloat16" else np.dtype(dst)
    if dst == "uint8":
        want = np.array([1, 254, 0, 0, 44], np.uint8)  # the real part truncated through long, then wrapped
    elif np.dtype(want_dtype).kind == "c":
        want = z.astype(want_dtype)
    else:
        with np.errstate(all="ignore"):
            want = z.real.astype(want_dtype)  # the real part, as the CPU kernel does (bool: real != 0)
    np.testing.assert_array_equal(got.astype(np.complex128), want.astype(np.complex128))


@pytest.mark.parametrize("src", ["bool", "int8", "int64", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("dst", ["complex64", "complex128"])
def test_casts_to_complex(ocl, src, dst):
    v = np.array([1, 0, -3, 5, 1], np.float64)
    x = v.astype(ow.bfloat16.numpy if src == "bfloat16" else src)
    with on_device():
        got = host(P.convert_element_type(laid_out(x, "offset"), getattr(ow, dst)))
    assert got.dtype == np.dtype(dst)
    np.testing.assert_array_equal(got, x.astype(np.float64).astype(dst))


def test_copy_to_between_complex_and_real(ocl):
    a = dev(np.zeros((2, 3), np.float32))
    b = dev(np.array([[1 + 2j, 3 - 1j, -1j], [4, 5 + 5j, -6]], np.complex64))
    with on_device():
        P.copy_to(a, b)
        c = dev(np.zeros((3, 2), np.complex128)).transpose(0, 1)
        P.copy_to(c, a)
    np.testing.assert_array_equal(host(a), [[1, 3, 0], [4, 5, -6]])
    np.testing.assert_array_equal(host(c), [[1, 3, 0], [4, 5, -6]])


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("dims", [None, [0], [1], [0, 2]])
def test_sum_prod(ocl, dtype, dims):
    x = crandom(np.random.default_rng(5), (3, 5, 4), dtype, -1.2, 1.2)
    t = laid_out(x, "transposed")
    axes = tuple(dims) if dims is not None else None
    with on_device():
        s, p = host(P.sum(t, dims)), host(P.prod(t, dims))
    x128 = x.astype(np.complex128)
    close(s, x128.sum(axis=axes).astype(dtype), dtype)
    close(p, x128.prod(axis=axes).astype(dtype), dtype)


def test_sum_of_many_and_into_complex(ocl):
    x = crandom(np.random.default_rng(6), (70000,), np.complex64, -1, 1)
    r = np.random.default_rng(6).uniform(-1, 1, (4, 5)).astype(np.float32)
    with on_device():
        big = host(P.sum(dev(x), [0]))  # one output over many elements: partials, then a combining launch
        promoted = host(P.sum(dev(r), [1], output_dtype=ow.complex64))
        empty = host(P.prod(dev(np.zeros((0, 3), np.complex64)), [0]))
    np.testing.assert_allclose(big, x.astype(np.complex128).sum(), rtol=1e-4)
    close(promoted, r.astype(np.float64).sum(1).astype(np.complex64), np.complex64)
    np.testing.assert_array_equal(empty, np.ones(3, np.complex64))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_mm_bmm(ocl, dtype):
    rng = np.random.default_rng(7)
    a, b = crandom(rng, (5, 7), dtype, -1, 1), crandom(rng, (7, 3), dtype, -1, 1)
    ba, bb = crandom(rng, (2, 4, 6), dtype, -1, 1), crandom(rng, (2, 6, 3), dtype, -1, 1)
    with on_device():
        mm = host(P.mm(laid_out(a, "transposed"), laid_out(b, "strided")))
        bmm = host(P.bmm(dev(ba), dev(bb[:1]).expand(2, 6, 3)))
        zero_k = host(P.mm(dev(np.zeros((2, 0), dtype)), dev(np.zeros((0, 3), dtype))))
    close(mm, (a.astype(np.complex128) @ b).astype(dtype), dtype)
    close(bmm, (ba.astype(np.complex128) @ bb[:1]).astype(dtype), dtype)
    np.testing.assert_array_equal(zero_k, np.zeros((2, 3), dtype))


def test_where_and_canonical_ops(ocl):
    x = crandom(np.random.default_rng(8), (3, 4), np.complex64)
    y = crandom(np.random.default_rng(9), (3, 4), np.complex64)
    with on_device():
        w = host(ow.where(dev(x.real > 0), dev(x), dev(y)))
        m = host(dev(x) @ dev(y).T)
        mean = host(dev(x).mean(1))
        ab = host(dev(x).abs())
    np.testing.assert_array_equal(w, np.where(x.real > 0, x, y))
    close(m, (x.astype(np.complex128) @ y.T).astype(np.complex64), np.complex64)
    close(mean, x.astype(np.complex128).mean(1).astype(np.complex64), np.complex64)
    close(ab, np.abs(x.astype(np.complex128)).astype(np.float32), np.float32)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_sgn_and_sinc_kernels(ocl, dtype):
    from opweave_kernelgen.kernels import complex as kernels

    z = np.array([3 + 4j, 0j, -2j, 0.5 - 0.25j], dtype)
    with on_device():
        sgn, sinc = (host(kernels.elementwise(n, dev(z))) for n in ("sgn", "sinc"))
    close(sgn, np.array([0.6 + 0.8j, 0, -1j, (0.5 - 0.25j) / abs(0.5 - 0.25j)]).astype(dtype), dtype)
    w = np.pi * z.astype(np.complex128)
    close(sinc, np.where(z == 0, 1, np.sin(w) / np.where(z == 0, 1, w)).astype(dtype), dtype)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_large_contiguous_calls(ocl, dtype):
    rng = np.random.default_rng(10)
    x, y = crandom(rng, (1 << 15,), dtype), crandom(rng, (1 << 15,), dtype)
    with on_device():
        e, m, a = host(P.exp(dev(x))), host(P.mul(dev(x), dev(y))), host(P.abs(dev(x)))
        c = host(P.convert_element_type(dev(x), ow.float32))
    x128 = x.astype(np.complex128)
    close(e, np.exp(x128).astype(dtype), dtype)
    close(m, (x128 * y).astype(dtype), dtype)
    close(a, np.abs(x128).astype(x.real.dtype), dtype)
    np.testing.assert_array_equal(c, x.real.astype(np.float32))


def test_complex_templates_render_in_another_dialect():
    from opweave_kernelgen import Dialect
    from opweave_kernelgen.codegen import complex as gen

    class CudaLike(Dialect):
        """CUDA C's spellings for the templates (never compiled here)."""

        kernel_prefix = 'extern "C" __global__ void'
        local_prefix = "__shared__ "
        type_names = {**Dialect.type_names, "complex64": "float2", "complex128": "double2"}

        def global_id(self, axis=0):
            return "(blockIdx.x * blockDim.x + threadIdx.x)"

        def local_id(self, axis=0):
            return "threadIdx.x"

        def group_id(self, axis=0):
            return "blockIdx.x"

        def barrier(self):
            return "__syncthreads();"

    cuda = CudaLike()
    ops = {"exp": ("complex64", "owc_narrow(owc_exp_d(owc_widen(x0)))"), "abs": ("float32", "owc_abs_f(x0)")}
    sources = [
        gen.elementwise_program(cuda, ops, ["complex64"], wide=True),
        gen.reduction_program(cuda, "float32", "complex64", 64),
        gen.matmul_program(cuda, "complex128"),
    ]
    for src in sources:
        assert "__kernel" not in src and "__global " not in src and "get_" not in src and "barrier(" not in src
        assert "owc_make_" in src  # complex values are built component by component, not by vector literals
    assert "owc_exp_d" in sources[0] and "__shared__ double2 scratch" not in sources[1]
    assert "__shared__ float2 scratch[64];" in sources[1] and "__syncthreads();" in sources[1]


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_any_and_all_of_complex_tensors(ocl, dtype):
    x = np.array([[0j, 1e-30j, np.nan + 0j], [0j, 0j, 0j], [1 + 1j, -2j, 3 + 0j]], dtype)
    t = ow.tensor(x).to("opencl")
    before = sum(_fallback.calls.values())
    np.testing.assert_array_equal(ow.any(t, 1).numpy(force=True), np.any(x, 1))
    np.testing.assert_array_equal(ow.all(t, 1).numpy(force=True), np.all(x, 1))
    assert bool(ow.any(t).item()) and not bool(ow.all(t).item())
    assert sum(_fallback.calls.values()) == before
