"""The OpenCL FFT prims (``fft_c2c``, ``fft_r2c``, ``fft_c2r``) against NumPy, on the device (no CPU fallback)."""

from __future__ import annotations

import contextlib

import numpy as np
import opweave as ow
import pytest
from hypothesis import given
from hypothesis import strategies as st

P = ow.ops.prims
TOL = {np.float32: 2e-5, np.float64: 1e-12}
COMPLEX = {np.float32: np.complex64, np.float64: np.complex128}
FLOATS = [np.float32, np.float64]


def dev(a):
    """A contiguous OpenCL tensor holding ``a``."""
    return ow.tensor(np.ascontiguousarray(a)).to("opencl")


def host(t):
    return t.numpy(force=True)


def laid_out(x: np.ndarray, layout: str):
    """``x`` on the device as a contiguous, transposed, strided or storage-offset view."""
    if layout == "transposed" and x.ndim >= 2:
        return dev(np.swapaxes(x, -1, -2)).transpose(-1, -2)
    if layout == "strided" and x.ndim >= 1:
        return dev(np.repeat(x, 2, axis=-1))[..., ::2]
    if layout == "offset":
        return dev(np.concatenate([np.zeros(3, x.dtype), x.ravel()]))[3:].view(*x.shape)
    return dev(x)


@contextlib.contextmanager
def on_device():
    """Fail if a prim runs through the CPU fallback (it warns) or the call warns otherwise."""
    from opweave import _fallback

    before = sum(_fallback.calls[f"prims::{n}"] for n in ("fft_c2c", "fft_r2c", "fft_c2r"))
    with contextlib.ExitStack() as stack:
        import warnings

        stack.enter_context(warnings.catch_warnings())
        warnings.simplefilter("error")
        yield
    assert sum(_fallback.calls[f"prims::{n}"] for n in ("fft_c2c", "fft_r2c", "fft_c2r")) == before


def close(got, expected, dtype):
    got = host(got)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype
    scale = max(1.0, float(np.max(np.abs(expected)))) if expected.size else 1.0
    np.testing.assert_allclose(got, expected, rtol=0, atol=TOL[dtype] * scale * 10)


def rand(rng, shape, dtype, complex_=False):
    x = rng.standard_normal(shape)
    if complex_:
        x = x + 1j * rng.standard_normal(shape)
        return x.astype(COMPLEX[dtype])
    return x.astype(dtype)


def dft_matrix(n, sign):
    """The DFT matrix ``exp(sign 2 pi i j k / n)`` written out (an oracle independent of any FFT)."""
    j = np.arange(n)
    return np.exp(sign * 2j * np.pi * np.outer(j, j) / n)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [1, 2, 3, 7, 16, 64, 100, 128, 256, 257, 300, 1009])
def test_c2c_matches_the_dft_matrix(ocl, dtype, n):
    rng = np.random.default_rng(n)
    x = rand(rng, (3, n), dtype, True)
    with on_device():
        fwd = P.fft_c2c(dev(x), [1], 0, True)
        bwd = P.fft_c2c(dev(x), [-1], 2, False)
    close(fwd, (x.astype(np.complex128) @ dft_matrix(n, -1)).astype(x.dtype), dtype)
    close(bwd, (x.astype(np.complex128) @ dft_matrix(n, 1) / n).astype(x.dtype), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided", "offset"])
@pytest.mark.parametrize("n", [5, 8, 64, 301])
def test_r2c_and_c2r_over_any_layout(ocl, dtype, layout, n):
    rng = np.random.default_rng(7)
    x = rand(rng, (4, n), dtype)
    with on_device():
        half = P.fft_r2c(laid_out(x, layout), [1], 0, True)
        full = P.fft_r2c(laid_out(x, layout), [1], 1, False)
    close(half, np.fft.rfft(x, axis=1), dtype)
    close(full, np.fft.fft(x, axis=1, norm="ortho").astype(COMPLEX[dtype]), dtype)
    spec = np.fft.rfft(x, axis=1).astype(COMPLEX[dtype])
    for size in (n, n + 1, max(1, n - 3)):
        with on_device():
            back = P.fft_c2r(laid_out(spec, layout), [1], 2, size)
        close(back, np.fft.irfft(spec, size, axis=1).astype(dtype), dtype)  # normalization 2: 1/n


def test_c2r_ignores_the_redundant_imaginary_parts(ocl):
    spec = np.array([1 + 5j, 2 - 1j, 3 + 7j], np.complex128)  # imag of bins 0 and n/2 (n = 4) are ignored
    with on_device():
        got = P.fft_c2r(dev(spec), [0], 0, 4)
    clean = spec.copy()
    clean[0], clean[2] = clean[0].real, clean[2].real
    close(got, np.fft.irfft(clean, 4, norm="forward"), np.float64)


@pytest.mark.parametrize("dtype", FLOATS)
def test_multi_dim_transforms_and_normalisations(ocl, dtype):
    rng = np.random.default_rng(3)
    x = rand(rng, (3, 64, 5), dtype)
    c = rand(rng, (3, 64, 5), dtype, True)
    with on_device():
        r = P.fft_r2c(dev(x).transpose(0, 2), [0, 2, 1], 1, True)
        f = P.fft_c2c(dev(c), [2, 0], 0, True)
        b = P.fft_c2r(dev(c), [0, 1], 2, 126)
        same = P.fft_c2c(dev(c), [], 0, True)
    xt = x.transpose(2, 1, 0)
    close(r, np.fft.rfftn(xt, axes=(0, 2, 1), norm="ortho"), dtype)
    close(f, np.fft.fftn(c, axes=(2, 0)), dtype)
    close(b, np.fft.irfftn(c, s=(3, 126), axes=(0, 1)).astype(dtype), dtype)
    close(same, c, dtype)


@pytest.mark.parametrize("n", [8, 64, 6])
def test_nan_reaches_every_bin_and_signed_zeros_are_zeros(ocl, n):
    x = np.zeros(n, np.float64)
    x[1] = np.nan
    with on_device():
        got = host(P.fft_r2c(dev(x), [0], 0, True))
        zeros = host(P.fft_r2c(dev(np.array([-0.0, 0.0] * (n // 2))), [0], 0, True))
    expected = np.fft.rfft(x)
    assert (np.isnan(got) == np.isnan(expected)).all() and np.isnan(got).all()
    np.testing.assert_array_equal(zeros, np.zeros(n // 2 + 1))


def test_empty_batch_and_zero_dim_rules(ocl):
    with on_device():
        e = P.fft_r2c(dev(np.zeros((0, 6), np.float32)), [1], 0, True)
        c = P.fft_c2r(dev(np.zeros((2, 0, 4), np.complex64)), [2], 0, 6)
    assert tuple(e.shape) == (0, 4) and e.dtype == ow.complex64
    assert tuple(c.shape) == (2, 0, 6) and c.dtype == ow.float32
    with pytest.raises(ValueError, match="fft_c2c"):
        P.fft_c2c(dev(np.zeros((3, 0), np.complex64)), [1], 0, True)
    with pytest.raises(ValueError, match="fft_r2c"):
        P.fft_r2c(dev(np.ones(3, np.float32)), [0], 3, True)


@given(
    st.lists(st.integers(1, 9), min_size=1, max_size=3),
    st.sampled_from(["contiguous", "transposed", "strided"]),
    st.sampled_from([0, 1, 2]),
    st.booleans(),
    st.integers(0, 2**31),
)
def test_canonical_fftn_matches_numpy(ocl, shape, layout, norm, forward, seed):
    rng = np.random.default_rng(seed)
    x = rand(rng, tuple(shape), np.float32, True)
    dims = list(range(len(shape)))[::-1]
    with on_device():
        got = P.fft_c2c(laid_out(x, layout), dims, norm, forward)
    if forward:
        expected = np.fft.fftn(x.astype(np.complex128), axes=dims, norm={0: None, 1: "ortho", 2: "forward"}[norm])
    else:
        n = int(np.prod(shape))
        scale = {0: 1.0, 1: 1 / np.sqrt(n), 2: 1 / n}[norm]
        expected = np.fft.ifftn(x.astype(np.complex128), axes=dims, norm="forward") * scale
    close(got, expected.astype(np.complex64), np.float32)
