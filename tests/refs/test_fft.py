"""``opweave.fft``, ``stft`` and ``istft`` against ``numpy.fft`` and NumPy formulas.

Hypothesis draws shapes, ``n``/``s``, dims, ``norm``, layouts and dtypes (real inputs, integers promoted
to float32, complex inputs); fixed cases cover the dtype rules, the Hermitian transforms NumPy lacks
(``hfft2``/``hfftn``/``ihfft2``/``ihfftn``, written as conjugated ``irfftn``/``rfftn`` with the
swapped normalisation), frequencies and shifts, STFT framing and the ISTFT round trip, ``out=``,
the meta device and errors.
"""

from __future__ import annotations

import numpy as np
import opweave as D
import pytest
from _rsi_support import layout_tensor
from hypothesis import given, settings
from hypothesis import strategies as st

DTYPES = [D.float32, D.float64, D.complex64, D.complex128, D.int64]
LAYOUTS = ("contiguous", "transposed", "sliced")
NORMS = [None, "backward", "ortho", "forward"]
SWAP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _values(rng, shape, dtype):
    if dtype is D.int64:
        return rng.integers(-5, 6, shape)
    v = rng.uniform(-2, 2, shape)
    if dtype.is_complex:
        v = v + 1j * rng.uniform(-2, 2, shape)
    return v.astype(dtype.numpy)


def _t(arr, layout="contiguous"):
    return layout_tensor(np.asarray(arr), layout)[0]


def _check(got, want, dtype):
    single = dtype in (D.float32, D.complex64, D.int64)
    tol = 1e-4 if single else 1e-10
    assert got.dtype.to_real() is (D.float32 if single else D.float64)
    np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol * max(1.0, np.abs(want).max(initial=0)))


@st.composite
def signals(draw, max_ndim=3):
    dtype = draw(st.sampled_from(DTYPES))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=max_ndim)))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    return _values(rng, shape, dtype), dtype, draw(st.sampled_from(LAYOUTS)), draw(st.sampled_from(NORMS))


ONE_D = {
    "fft": np.fft.fft,
    "ifft": np.fft.ifft,
    "rfft": np.fft.rfft,
    "irfft": np.fft.irfft,
    "hfft": np.fft.hfft,
    "ihfft": np.fft.ihfft,
}


@settings(max_examples=20)
@given(signals(), st.sampled_from(sorted(ONE_D)), st.one_of(st.none(), st.integers(1, 7)), st.data())
def test_one_dimensional(case, name, n, data):
    x, dtype, layout, norm = case
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    real_only = name in ("rfft", "ihfft")
    if real_only and dtype.is_complex:
        with pytest.raises(TypeError, match=f"fft_{name}"):
            getattr(D.fft, name)(_t(x, layout), n, dim, norm)
        return
    if name in ("irfft", "hfft") and n is None and x.shape[dim] == 1:
        n = 2
    wide = x.astype(np.complex128 if dtype.is_complex else np.float64)
    want = ONE_D[name](wide, n, dim, norm or "backward")
    _check(getattr(D.fft, name)(_t(x, layout), n, dim, norm), want, dtype)


def _hfftn(x, s, axes, norm):
    return np.fft.irfftn(np.conj(x), s, axes, norm=SWAP[norm])


def _ihfftn(x, s, axes, norm):
    return np.conj(np.fft.rfftn(x, s, axes, norm=SWAP[norm]))


N_D = {
    "fftn": np.fft.fftn,
    "ifftn": np.fft.ifftn,
    "rfftn": np.fft.rfftn,
    "irfftn": np.fft.irfftn,
    "hfftn": _hfftn,
    "ihfftn": _ihfftn,
}


@settings(max_examples=25)
@given(signals(), st.sampled_from(sorted(N_D)), st.booleans(), st.data())
def test_n_dimensional(case, name, two_d, data):
    x, dtype, layout, norm = case
    if name in ("rfftn", "ihfftn") and dtype.is_complex:
        return
    if two_d and x.ndim < 2:
        x = x.reshape(1, -1)
    ndims = 2 if two_d else data.draw(st.integers(1, x.ndim))
    dims = data.draw(st.permutations(range(x.ndim)))[:ndims]
    s = data.draw(st.one_of(st.none(), st.lists(st.integers(1, 6), min_size=ndims, max_size=ndims)))
    if name in ("irfftn", "hfftn") and s is None and x.shape[dims[-1]] == 1:
        s = [x.shape[d] for d in dims[:-1]] + [2]
    wide = x.astype(np.complex128 if dtype.is_complex else np.float64)
    want = N_D[name](wide, s, dims, norm or "backward")
    op_name = name[:-1] + "2" if two_d else name
    got = getattr(D.fft, op_name)(_t(x, layout), s, dims, norm)
    _check(got, want, dtype)


def test_default_dims_and_sizes():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4))
    assert np.allclose(D.fft.fftn(_t(x)).numpy(), np.fft.fftn(x))
    assert np.allclose(D.fft.fftn(_t(x), s=[5, 6]).numpy(), np.fft.fftn(x, s=[5, 6], axes=[1, 2]))
    assert np.allclose(D.fft.fft2(_t(x)).numpy(), np.fft.fft2(x))
    c = np.fft.rfft2(x)
    assert np.allclose(D.fft.irfft2(_t(c)).numpy(), np.fft.irfft2(c))
    assert np.allclose(D.fft.irfftn(_t(c), s=[3, -1]).numpy(), np.fft.irfftn(c, s=[3, 4], axes=[1, 2]))
    assert np.allclose(D.fft.ifft(_t(x)).numpy(), np.fft.ifft(x))  # real input to an inverse transform


def test_dtype_rules():
    assert D.fft.fft(_t(np.arange(4))).dtype is D.complex64
    assert D.fft.rfft(_t(np.ones(4, np.float64))).dtype is D.complex128
    assert D.fft.irfft(_t(np.ones(3, np.complex64))).dtype is D.float32
    for op in (D.fft.fft, D.fft.rfft, D.fft.fft2):
        with pytest.raises(TypeError, match="float16"):
            op(_t(np.ones((2, 4), np.float16)))


@pytest.mark.parametrize(
    "call,error",
    [
        (lambda: D.fft.fft(_t(np.ones(4)), norm="sideways"), ValueError),
        (lambda: D.fft.fft(_t(np.ones(4)), 0), ValueError),
        (lambda: D.fft.fft(_t(np.ones(4)), dim=2), ValueError),
        (lambda: D.fft.fft(_t(np.ones(0))), ValueError),
        (lambda: D.fft.fft(_t(np.array(1.0))), ValueError),
        (lambda: D.fft.fftn(_t(np.ones((2, 2))), s=[2, 2], dim=[0]), ValueError),
        (lambda: D.fft.fftn(_t(np.ones((2, 2))), dim=[0, 0]), ValueError),
        (lambda: D.fft.rfft(_t(np.ones(4, np.complex64))), TypeError),
        (lambda: D.fft.irfft(_t(np.ones(1, np.complex64))), ValueError),
        (lambda: D.fft.fftfreq(4, dtype=D.int64), TypeError),
    ],
)
def test_errors_name_the_op(call, error):
    with pytest.raises(error, match="fft_"):
        call()


@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("d", [1.0, 0.25])
def test_frequencies(n, d):
    assert np.allclose(D.fft.fftfreq(n, d).numpy(), np.fft.fftfreq(n, d) if n else [])
    assert np.allclose(D.fft.rfftfreq(n, d).numpy(), np.fft.rfftfreq(n, d) if n else [])
    assert D.fft.fftfreq(n, d, dtype=D.float64).dtype is D.float64


@settings(max_examples=20)
@given(signals(), st.data())
def test_shifts(case, data):
    x, dtype, layout, _ = case
    dims = data.draw(st.one_of(st.none(), st.lists(st.integers(-x.ndim, x.ndim - 1), min_size=1, max_size=1)))
    assert np.array_equal(D.fft.fftshift(_t(x, layout), dims).numpy(), np.fft.fftshift(x, dims))
    assert np.array_equal(D.fft.ifftshift(_t(x, layout), dims).numpy(), np.fft.ifftshift(x, dims))


# -- stft / istft --------------------------------------------------------------------------------------


def _stft(x, n_fft, hop, win_length, window, center, pad_mode, normalized, onesided):
    batched = x.ndim == 2
    x = x if batched else x[None]
    if center:
        mode = {"replicate": "edge", "circular": "wrap"}.get(pad_mode, pad_mode)
        x = np.pad(x, [(0, 0), (n_fft // 2, n_fft // 2)], mode=mode)
    w = np.ones(win_length) if window is None else window
    left = (n_fft - win_length) // 2
    w = np.pad(w, (left, n_fft - win_length - left))
    count = 1 + (x.shape[-1] - n_fft) // hop
    frames = np.stack([x[:, i * hop : i * hop + n_fft] * w for i in range(count)], 1)
    norm = "ortho" if normalized else "backward"
    spec = np.fft.rfft(frames, axis=-1, norm=norm) if onesided else np.fft.fft(frames, axis=-1, norm=norm)
    spec = np.swapaxes(spec, 1, 2)
    return spec if batched else spec[0]


@settings(max_examples=20)
@given(
    st.integers(4, 10),
    st.integers(1, 4),
    st.booleans(),
    st.booleans(),
    st.sampled_from(["reflect", "constant", "replicate", "circular"]),
    st.booleans(),
    st.booleans(),
    st.integers(0, 2**31),
)
def test_stft(n_fft, hop, windowed, center, pad_mode, normalized, batched, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 24) if batched else (24,))
    win_length = n_fft - 1 if windowed else n_fft
    window = rng.uniform(0.5, 1.5, win_length) if windowed else None
    want = _stft(x, n_fft, hop, win_length, window, center, pad_mode, normalized, True)
    got = D.stft(
        _t(x, "sliced"),
        n_fft,
        hop,
        win_length,
        None if window is None else _t(window),
        center=center,
        pad_mode=pad_mode,
        normalized=normalized,
        return_complex=True,
    )
    assert got.shape == want.shape and np.allclose(got.numpy(), want)
    real = D.stft(_t(x), n_fft, hop, return_complex=False, center=center)
    assert np.allclose(
        D.view_as_complex(real).numpy(), _stft(x, n_fft, hop, n_fft, None, center, "reflect", False, True)
    )


def test_stft_complex_input_and_errors():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(16) + 1j * rng.standard_normal(16)
    got = D.stft(_t(x), 4, 2, center=False)
    assert np.allclose(got.numpy(), _stft(x, 4, 2, 4, None, False, "reflect", False, False))
    # torch.stft centres by default (reflect padding); the ATen overload without ``center`` does not
    assert np.allclose(D.stft(_t(x), 4, 2).numpy(), _stft(x, 4, 2, 4, None, True, "reflect", False, False))
    assert np.allclose(_t(x).stft(4, 2).numpy(), _stft(x, 4, 2, 4, None, True, "reflect", False, False))
    assert np.allclose(D.ops.stft(_t(x), 4, 2).numpy(), got.numpy())
    with pytest.raises(ValueError, match="return_complex"):
        D.stft(_t(x.real), 4)
    with pytest.raises(ValueError, match="stft"):
        D.stft(_t(x.real), 32, return_complex=True)
    with pytest.raises(TypeError, match="stft"):
        D.stft(_t(np.arange(16)), 4, return_complex=True)
    with pytest.raises(ValueError, match="align_to_window"):
        D.stft(_t(x.real), 4, center=True, align_to_window=True, return_complex=True)


@settings(max_examples=15)
@given(st.integers(4, 10), st.integers(1, 3), st.booleans(), st.booleans(), st.booleans(), st.integers(0, 2**31))
def test_istft_inverts_stft(n_fft, hop, center, normalized, batched, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 30) if batched else (30,))
    window = np.hanning(n_fft + 2)[1:-1]
    spec = _stft(x, n_fft, hop, n_fft, window, center, "reflect", normalized, True)
    got = D.istft(_t(spec), n_fft, hop, window=_t(window), center=center, normalized=normalized, length=30)
    covered = n_fft + hop * (spec.shape[-1] - 1) - (0 if center else 0)
    keep = min(30, covered)
    assert got.shape[-1] == 30
    assert np.allclose(got.numpy()[..., :keep], x[..., :keep], atol=1e-8)


def test_istft_with_a_complex_window_divides_by_its_squared_envelope():
    # PyTorch's istft: ifft of each frame times the window, overlap-added, divided by the overlap-add
    # of window**2 (the complex square, not |window|**2)
    rng = np.random.default_rng(3)
    n_fft, hop, frames = 6, 2, 5
    spec = rng.standard_normal((n_fft, frames)) + 1j * rng.standard_normal((n_fft, frames))
    window = rng.uniform(0.5, 1.5, n_fft) + 1j * rng.uniform(-0.5, 0.5, n_fft)
    total = n_fft + hop * (frames - 1)
    y = np.zeros(total, complex)
    env = np.zeros(total, complex)
    for f, frame in enumerate(np.fft.ifft(spec.T, axis=-1)):
        y[f * hop : f * hop + n_fft] += frame * window
        env[f * hop : f * hop + n_fft] += window * window
    want = (y / env)[n_fft // 2 : total - n_fft // 2]
    got = D.istft(_t(spec), n_fft, hop, window=_t(window), onesided=False, return_complex=True)
    assert got.shape == want.shape and np.allclose(got.numpy(), want)


def test_istft_checks():
    spec = _t(np.ones((5, 3), np.complex128))
    with pytest.raises(ValueError, match="istft"):
        D.istft(spec, 6)
    with pytest.raises(TypeError, match="istft"):
        D.istft(_t(np.ones((5, 3))), 8)
    with pytest.raises(ValueError, match="NOLA"):
        D.istft(_t(np.ones((3, 4), np.complex128)), 4, 4, window=_t(np.array([1.0, 0, 0, 0])), center=False)


def test_out_variant_and_meta():
    x = _t(np.arange(8.0))
    out = D.empty((5,), dtype=D.complex128)
    assert D.fft.rfft(x, out=out) is out and np.allclose(out.numpy(), np.fft.rfft(np.arange(8.0)))
    m = D.empty((3, 8), device="meta")
    assert D.fft.rfft(m).shape == (3, 5) and D.fft.rfft(m).dtype is D.complex64
    assert D.fft.irfftn(D.fft.rfftn(m)).shape == (3, 8)
    assert D.stft(D.empty((64,), device="meta"), 16, return_complex=True).shape == (9, 17)  # centred: 1 + 64 // 4
    assert D.stft(D.empty((64,), device="meta"), 16, center=False, return_complex=True).shape == (9, 13)


def test_vendor_backend():
    if not D.backends.is_available("vnpu"):
        pytest.skip("vnpu not installed")
    x = np.random.default_rng(2).standard_normal((3, 8))
    got = D.fft.hfft2(_t(x).to("vnpu"), norm="ortho").to("cpu").numpy()
    assert np.allclose(got, _hfftn(x, None, [-2, -1], "ortho"))
