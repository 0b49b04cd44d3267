"""FFT prims against numpy.fft (ATen's _fft_c2c / _fft_r2c / _fft_c2r conventions).

Special values are not injected: an FFT mixes every element into every output, so a NaN or
an infinity turns the whole transform into NaNs in an algorithm-dependent pattern.
"""

from __future__ import annotations

import math

import numpy as np
import opweave as ow
import pytest
from _prim_support import LAYOUTS, RTOL, P, meta, randn, run_in_layout
from hypothesis import given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=25, deadline=None)


def scale(n, normalization):
    return [1.0, 1 / math.sqrt(n), 1 / n][normalization]


@st.composite
def problems(draw):
    """A shape, the transformed dims (any order, possibly negative) and a normalization."""
    ndim = draw(st.integers(1, 3))
    shape = draw(st.lists(st.integers(1, 6), min_size=ndim, max_size=ndim))
    dims = draw(st.permutations(range(ndim)))[: draw(st.integers(1, ndim))]
    if draw(st.booleans()):
        batch = [d for d in range(ndim) if d not in dims]
        if batch:
            shape[batch[0]] = 0  # an empty non-transformed dim
    dims = [d - ndim if draw(st.booleans()) else d for d in dims]
    return dict(
        shape=shape,
        dims=dims,
        norm=draw(st.integers(0, 2)),
        layout=draw(st.sampled_from(LAYOUTS)),
        seed=draw(st.integers(0, 2**16)),
    )


def compare(out, expected, dtype, x, n):
    t = RTOL[dtype]
    bound = t * max(float(np.abs(x).max(initial=0)) * n, 1.0)
    assert out.dtype == dtype
    np.testing.assert_allclose(out.numpy(), expected, rtol=t, atol=bound)


@pytest.mark.parametrize("dtype", [ow.complex64, ow.complex128])
@pytest.mark.parametrize("forward", [True, False])
@SETTINGS
@given(c=problems())
def test_fft_c2c(dtype, forward, c):
    x = randn(np.random.default_rng(c["seed"]), c["shape"], dtype).astype(dtype.numpy)
    (out,), (x,) = run_in_layout(P.fft_c2c, [x], c["layout"], c["dims"], c["norm"], forward)
    axes = [d % x.ndim for d in c["dims"]]
    n = math.prod(x.shape[a] for a in axes)
    raw = np.fft.fftn(x, axes=axes) if forward else np.fft.ifftn(x, axes=axes, norm="forward")
    compare(out, raw * scale(n, c["norm"]), dtype, x, n)


@pytest.mark.parametrize("dtype", [ow.float32, ow.float64])
@pytest.mark.parametrize("onesided", [True, False])
@SETTINGS
@given(c=problems())
def test_fft_r2c(dtype, onesided, c):
    x = randn(np.random.default_rng(c["seed"]), c["shape"], dtype).astype(dtype.numpy)
    (out,), (x,) = run_in_layout(P.fft_r2c, [x], c["layout"], c["dims"], c["norm"], onesided)
    axes = [d % x.ndim for d in c["dims"]]
    n = math.prod(x.shape[a] for a in axes)
    raw = np.fft.rfftn(x, axes=axes) if onesided else np.fft.fftn(x, axes=axes)
    compare(out, raw * scale(n, c["norm"]), dtype.to_complex(), x, n)


@pytest.mark.parametrize("dtype", [ow.complex64, ow.complex128])
@SETTINGS
@given(c=problems(), last=st.integers(1, 9), extra=st.sampled_from([0, 0, -1, 1]))
def test_fft_c2r(dtype, c, last, extra):
    axes = [d % len(c["shape"]) for d in c["dims"]]
    shape = list(c["shape"])
    shape[axes[-1]] = max(last // 2 + 1 + extra, 1)  # the half spectrum (also shorter / longer: padded / cut)
    x = randn(np.random.default_rng(c["seed"]), shape, dtype).astype(dtype.numpy)
    (out,), (x,) = run_in_layout(P.fft_c2r, [x], c["layout"], c["dims"], c["norm"], last)
    sizes = [x.shape[a] for a in axes[:-1]] + [last]
    n = math.prod(sizes)
    raw = np.fft.irfftn(x, s=sizes, axes=axes, norm="forward") if x.size else np.zeros(out.shape)
    compare(out, raw * scale(n, c["norm"]), dtype.to_real(), x, n)


def test_known_values():
    delta = ow.from_numpy(np.array([1, 0, 0, 0], np.complex128))
    np.testing.assert_allclose(P.fft_c2c(delta, [0], 0, True).numpy(), np.ones(4))
    np.testing.assert_allclose(P.fft_c2c(delta, [0], 2, False).numpy(), np.full(4, 0.25))
    ones = ow.from_numpy(np.ones(4, np.float32))
    out = P.fft_r2c(ones, [0], 1, True)
    assert out.dtype == ow.complex64
    np.testing.assert_allclose(out.numpy(), [2, 0, 0])
    back = P.fft_c2r(ow.from_numpy(np.array([4, 0, 0], np.complex64)), [0], 2, 4)
    assert back.dtype == ow.float32
    np.testing.assert_allclose(back.numpy(), np.ones(4))
    x = ow.from_numpy(np.arange(6, dtype=np.complex64).reshape(2, 3))
    np.testing.assert_array_equal(P.fft_c2c(x, [], 1, True).numpy(), x.numpy())  # no dims: a copy


def test_round_trip():
    x = np.random.default_rng(0).standard_normal((3, 8, 5))
    spec = P.fft_r2c(ow.from_numpy(x), [0, 2], 1, True)
    back = P.fft_c2r(spec, [0, 2], 1, 5)
    np.testing.assert_allclose(back.numpy(), x, atol=1e-12)


def test_tags():
    for name in ["fft_c2c", "fft_r2c", "fft_c2r"]:
        assert "fft" in getattr(P, name).default.tags


@pytest.mark.parametrize("device", ["meta", "cpu"])
def test_errors(device):
    def t(shape, dtype):
        return meta(shape, dtype) if device == "meta" else ow.from_numpy(np.zeros(shape, dtype.numpy))

    c, r = t((4, 4), ow.complex64), t((4, 4), ow.float32)
    cases = [
        (TypeError, "fft_c2c", lambda: P.fft_c2c(r, [0], 0, True)),
        (TypeError, "fft_r2c", lambda: P.fft_r2c(c, [0], 0, True)),
        (TypeError, "fft_r2c", lambda: P.fft_r2c(t((4,), ow.float16), [0], 0, True)),
        (TypeError, "fft_r2c", lambda: P.fft_r2c(t((4,), ow.bfloat16), [0], 0, True)),
        (TypeError, "fft_r2c", lambda: P.fft_r2c(t((4,), ow.int32), [0], 0, True)),
        (TypeError, "fft_c2r", lambda: P.fft_c2r(r, [0], 0, 4)),
        (ValueError, "fft_c2c", lambda: P.fft_c2c(c, [0], 3, True)),
        (ValueError, "fft_c2c", lambda: P.fft_c2c(c, [2], 0, True)),
        (ValueError, "fft_c2c", lambda: P.fft_c2c(c, [0, -2], 0, True)),
        (ValueError, "fft_c2c", lambda: P.fft_c2c(t((0, 3), ow.complex64), [0], 0, True)),
        (ValueError, "fft_c2c", lambda: P.fft_c2c(t((), ow.complex64), [0], 0, True)),
        (ValueError, "fft_r2c", lambda: P.fft_r2c(r, [], 0, True)),
        (ValueError, "fft_c2r", lambda: P.fft_c2r(c, [0], 0, 0)),
        (ValueError, "fft_c2r", lambda: P.fft_c2r(c, [1], -1, 4)),
    ]
    for exc, name, fn in cases:
        with pytest.raises(exc, match=f"prims::{name}"):
            fn()
