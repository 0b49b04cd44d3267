"""Op database entries: fft ops (``torch.fft``, ``stft``, ``istft``).

Oracles are ``numpy.fft``; ``hfft2``/``hfftn``/``ihfft2``/``ihfftn`` (which NumPy lacks) are written
with ``numpy.fft.irfftn``/``rfftn`` of the conjugate and the swapped normalisation, ``stft`` as the
framed, windowed ``numpy.fft.rfft``/``fft`` of the padded signal, and ``istft`` by round trip: its
sample is the STFT (computed with NumPy) of a known signal, which is the expected output.
Samples cover every ``norm``, trimmed and zero-padded sizes (``n``/``s``), negative and repeated
dims, non-contiguous layouts, 0-dim batches and integer inputs (promoted to float32).
"""

from __future__ import annotations

import numpy as np
import opweave as ow

from . import register
from ._core import COMPLEX, DEVICE, ErrorInput, OpInfo, SampleInput, arr

REAL = (ow.float32, ow.float64, ow.int64)
ANY = REAL + COMPLEX
TOL = {"float32": (1e-4, 1e-4), "complex64": (1e-4, 1e-4), "float64": (1e-9, 1e-9), "complex128": (1e-9, 1e-9)}
C, T, S = "contiguous", "transposed", "strided"
NORMS = (None, "backward", "ortho", "forward")


def _swap(norm):
    return {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}[norm]


# -- samples ----------------------------------------------------------------------------------------


def _one_dim_samples():
    """``(self, n, dim, norm)`` samples."""
    plans = [
        ((8,), None, -1, None, C),
        ((3, 5), 6, 0, "ortho", T),
        ((2, 3, 4), 3, 1, "forward", S),
        ((4, 6), None, -1, "backward", C),
        ((5,), 9, 0, "ortho", C),
        ((0, 4), None, -1, None, C),
        ((2, 7), 1, 1, "forward", S),
    ]

    def gen(rng, dtype, device):
        for shape, n, dim, norm, layout in plans:
            x = arr(rng, shape, dtype, layout)
            args = (x, n, dim, norm) if norm is not None else (x, n, dim)
            yield SampleInput(args, {}, f"{list(shape)} n={n} dim={dim} norm={norm}")

    return gen


def _nd_samples(two_d: bool, hermitian=False):
    if two_d:
        plans = [
            ((4, 6), None, None, None, C),
            ((2, 3, 4), [4, 6], None, "ortho", T),
            ((3, 5), None, [0, 1], "forward", S),
            ((2, 4, 4), [3, -1], [0, 2], "backward", C),
            ((3, 4), [2, 8], [1, 0], None, C),
        ]
    else:
        plans = [
            ((4, 6), None, None, None, C),
            ((2, 3, 4), [4, 6], None, "ortho", T),
            ((3, 5), None, [0], "forward", S),
            ((2, 4, 4), [3, -1, 5], [0, 2, 1], "backward", C),
            ((3, 4, 2), [6], [-2], None, C),
            ((5,), None, None, "ortho", C),
        ]

    def gen(rng, dtype, device):
        for shape, s, dim, norm, layout in plans:
            x = arr(rng, shape, dtype, layout)
            args, kwargs = (x,), {}
            if s is not None:
                kwargs["s"] = s
            if dim is not None:
                kwargs["dim"] = dim
            if norm is not None:
                kwargs["norm"] = norm
            yield SampleInput(args, kwargs, f"{list(shape)} s={s} dim={dim} norm={norm}")

    return gen


def _errors(rng, dtype):
    x = arr(rng, (4,), dtype)
    yield ErrorInput(SampleInput((x, None, -1, "sideways")), ValueError)
    yield ErrorInput(SampleInput((x, 0)), ValueError)
    yield ErrorInput(SampleInput((x, None, 3)), ValueError)
    yield ErrorInput(SampleInput((arr(rng, (4,), ow.float16),)), TypeError)


def _errors_nd(rng, dtype):
    x = arr(rng, (4, 4), dtype)
    yield ErrorInput(SampleInput((x,), {"norm": "sideways"}), ValueError)
    yield ErrorInput(SampleInput((x,), {"s": [0, 4]}), ValueError)
    yield ErrorInput(SampleInput((x,), {"s": [4, 4], "dim": [0]}), ValueError)
    yield ErrorInput(SampleInput((arr(rng, (4, 4), ow.float16),)), TypeError)


def _errors_real(rng, dtype):
    yield from _errors(rng, dtype)
    yield ErrorInput(SampleInput((arr(rng, (4,), ow.complex64),)), TypeError)


# -- oracles ----------------------------------------------------------------------------------------


def _np_norm(norm):
    return norm or "backward"


def _as_complex(x):
    return x.astype(np.complex128)


def _float(x):
    return x.astype(np.float64) if x.dtype.kind in "biu" else x


def _one(fn, complex_in=False):
    def oracle(x, n=None, dim=-1, norm=None):
        x = _as_complex(x) if complex_in else _float(x)
        return fn(x, n, dim, _np_norm(norm))

    return oracle


def _default_dims(x, s, dim, two_d):
    if dim is not None:
        return [dim] if isinstance(dim, int) else list(dim)
    if two_d:
        return [-2, -1]
    if s is not None:
        return list(range(x.ndim - len(s), x.ndim))
    return list(range(x.ndim))


def _sizes(x, s, dims):
    if s is None:
        return None
    return [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]


def _nd(fn, two_d, complex_in=False, last_half=False):
    def oracle(x, s=None, dim=None, norm=None):
        x = _as_complex(x) if complex_in else _float(x)
        dims = _default_dims(x, s, dim, two_d)
        sizes = _sizes(x, s, dims)
        if last_half and sizes is not None and s[-1] == -1:
            sizes[-1] = 2 * (x.shape[dims[-1]] - 1)
        return fn(x, sizes, dims, _np_norm(norm))

    return oracle


def _hfftn(x, s, axes, norm):
    return np.fft.irfftn(np.conj(x), s, axes, norm=_swap(norm))


def _ihfftn(x, s, axes, norm):
    return np.conj(np.fft.rfftn(x, s, axes, norm=_swap(norm)))


def _fftfreq_samples(rfft=False):
    def gen(rng, dtype, device):
        for n, d in ((5, 1.0), (8, 0.5), (1, 2.0), (0, 1.0), (7, 0.1)):
            yield SampleInput((n, d), {"dtype": dtype, "device": DEVICE}, f"n={n} d={d}")

    return gen


def _fftfreq(n, d=1.0, dtype=None, device=None, **_):
    return np.fft.fftfreq(n, d) if n else np.empty(0)


def _rfftfreq(n, d=1.0, dtype=None, device=None, **_):
    return np.fft.rfftfreq(n, d) if n else np.empty(0)


def _shift_samples():
    plans = [((6,), None, C), ((3, 4), [0], T), ((2, 5, 3), [-1, 0], S), ((), None, C), ((4, 0), None, C)]

    def gen(rng, dtype, device):
        for shape, dim, layout in plans:
            x = arr(rng, shape, dtype, layout)
            yield SampleInput((x,) + (() if dim is None else (dim,)), {}, f"{list(shape)} dim={dim}")

    return gen


def _fftshift(x, dim=None):
    return np.fft.fftshift(x, dim) if x.ndim else x


def _ifftshift(x, dim=None):
    return np.fft.ifftshift(x, dim) if x.ndim else x


# -- stft / istft ---------------------------------------------------------------------------------------


def _pad(x, pad, mode):
    widths = [(0, 0)] * (x.ndim - 1) + [(pad, pad)]
    return np.pad(x, widths, mode={"replicate": "edge", "circular": "wrap"}.get(mode, mode))


def _window_full(window, n_fft, win_length, dtype):
    w = np.ones(win_length, dtype) if window is None else window
    left = (n_fft - win_length) // 2
    return np.pad(w, (left, n_fft - win_length - left))


def _stft_oracle(
    x,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=False,
    pad_mode="reflect",
    normalized=False,
    onesided=None,
    return_complex=None,
    align_to_window=None,
):
    hop = hop_length or n_fft // 4
    win_length = win_length or n_fft
    batched = x.ndim == 2
    x = x if batched else x[None]
    if center:
        x = _pad(x, n_fft // 2, pad_mode)
    if align_to_window and not center:
        x = _pad(x, (n_fft - win_length) // 2, pad_mode)
    w = _window_full(window, n_fft, win_length, np.float64)
    count = 1 + (x.shape[-1] - n_fft) // hop
    frames = np.stack([x[:, i * hop : i * hop + n_fft] for i in range(count)], 1) * w
    is_complex = np.iscomplexobj(frames)
    onesided = (not is_complex) if onesided is None else onesided
    norm = "ortho" if normalized else "backward"
    spec = np.fft.rfft(frames, axis=-1, norm=norm) if onesided else np.fft.fft(frames, axis=-1, norm=norm)
    spec = np.swapaxes(spec, 1, 2)
    spec = spec if batched else spec[0]
    return spec if return_complex in (None, True) else np.stack([spec.real, spec.imag], -1)


def _stft_center_oracle(x, n_fft, hop_length=None, win_length=None, window=None, center=True, **kwargs):
    return _stft_oracle(x, n_fft, hop_length, win_length, window, center, **kwargs)


def _stft_samples(center_overload: bool):
    def build(rng, dtype, shape, n_fft, hop=None, win=None, window=False, layout=C, **kw):
        real = dtype.to_real() if dtype.is_complex else dtype
        x = arr(rng, shape, dtype, layout)
        args = [x, n_fft, hop, win]
        wl = win or n_fft
        args.append(arr(rng, (wl,), real, C, "pos") if window else None)
        kwargs = {"return_complex": kw.pop("return_complex", True)}
        kwargs.update(kw)
        return SampleInput(tuple(args), kwargs, f"x {list(shape)} n_fft={n_fft} hop={hop} win={win} {kw}")

    def gen(rng, dtype, device):
        yield build(rng, dtype, (32,), 8)
        yield build(rng, dtype, (2, 40), 8, 3, 6, True, S)
        yield build(rng, dtype, (30,), 6, 2, None, True, normalized=True)
        if not dtype.is_complex:
            yield build(rng, dtype, (24,), 8, 4, 5, False, return_complex=False)
            yield build(rng, dtype, (2, 20), 4, 1, None, False, onesided=False)
        if center_overload:
            yield build(rng, dtype, (32,), 8, 2, None, True, center=True)
            yield build(rng, dtype, (2, 20), 6, 3, None, False, center=True, pad_mode="constant")
            yield build(rng, dtype, (20,), 4, 2, None, False, center=True, pad_mode="replicate")
            yield build(rng, dtype, (20,), 8, 2, 4, True, center=False, align_to_window=True)
        else:
            yield build(rng, dtype, (20,), 8, 2, 4, True, align_to_window=True)

    return gen


def _istft_samples():
    def build(rng, dtype, shape, n_fft, hop, win=None, window=True, center=True, length=None, normalized=False):
        real = dtype.to_real() if dtype.is_complex else dtype
        signal = rng.uniform(-1, 1, shape)
        wl = win or n_fft
        w = (np.hanning(wl + 2)[1:-1] + 0.1) if window else None
        spec = _stft_oracle(signal, n_fft, hop, wl, w, center, "reflect", normalized, True, True)
        cut = signal.shape[-1] if length is None else length
        if length is None:
            usable = n_fft + hop * (spec.shape[-1] - 1) - (2 * (n_fft // 2) if center else 0)
            cut = min(usable, signal.shape[-1])
        expected = np.zeros(shape[:-1] + (cut,))
        expected[..., : min(cut, signal.shape[-1])] = signal[..., : min(cut, signal.shape[-1])]
        args = (
            arr_value(spec, dtype),
            n_fft,
            hop,
            win,
            None if w is None else arr_value(w, real),
            center,
            normalized,
            None,
            length,
        )
        return SampleInput(args, {}, f"signal {list(shape)} n_fft={n_fft} hop={hop}", {"expected": expected})

    def gen(rng, dtype, device):
        yield build(rng, dtype, (32,), 8, 2)
        yield build(rng, dtype, (2, 30), 8, 3, 6)
        yield build(rng, dtype, (24,), 6, 2, None, False, True, 24, True)
        yield build(rng, dtype, (26,), 8, 2, None, True, False)
        yield build(rng, dtype, (20,), 4, 1, None, True, True, 18)

    return gen


def arr_value(value, dtype):
    """An :class:`Arr` holding exactly ``value``."""
    from ._core import Arr

    return Arr(np.asarray(value), dtype)


def _istft_oracle(*args, expected=None, **kwargs):
    return expected


def _stft_errors(rng, dtype):
    x = arr(rng, (16,), dtype)
    if not dtype.is_complex:
        yield ErrorInput(SampleInput((x, 8), {}), ValueError)  # return_complex not given for a real input
    yield ErrorInput(SampleInput((x, 32), {"return_complex": True}), ValueError)
    yield ErrorInput(SampleInput((arr(rng, (2, 2, 8), dtype), 4), {"return_complex": True}), ValueError)


# -- table ------------------------------------------------------------------------------------------


def fft_info(name, gen, oracle, dtypes=ANY, errors=_errors):
    """One OpInfo; the 2-D and n-D transforms get n-D error inputs."""
    if errors is _errors and name.rstrip("2n") != name:
        errors = _errors_nd
    return OpInfo(
        name=name, sample_inputs=gen, oracle=oracle, dtypes=tuple(dtypes), tolerances=dict(TOL), error_inputs=errors
    )


def _lines():
    one = _one_dim_samples()
    lines = [
        fft_info("fft_fft", one, _one(lambda x, n, d, nm: np.fft.fft(x, n, d, nm))),
        fft_info("fft_ifft", one, _one(lambda x, n, d, nm: np.fft.ifft(x, n, d, nm))),
        fft_info("fft_rfft", one, _one(lambda x, n, d, nm: np.fft.rfft(x, n, d, nm)), REAL, _errors_real),
        fft_info("fft_ihfft", one, _one(lambda x, n, d, nm: np.fft.ihfft(x, n, d, nm)), REAL, _errors_real),
        fft_info("fft_irfft", one, _one(lambda x, n, d, nm: np.fft.irfft(x, n, d, nm), True)),
        fft_info("fft_hfft", one, _one(lambda x, n, d, nm: np.fft.hfft(x, n, d, nm), True)),
        fft_info("fft_fft2", _nd_samples(True), _nd(lambda x, s, a, nm: np.fft.fftn(x, s, a, nm), True)),
        fft_info("fft_ifft2", _nd_samples(True), _nd(lambda x, s, a, nm: np.fft.ifftn(x, s, a, nm), True)),
        fft_info("fft_fftn", _nd_samples(False), _nd(lambda x, s, a, nm: np.fft.fftn(x, s, a, nm), False)),
        fft_info("fft_ifftn", _nd_samples(False), _nd(lambda x, s, a, nm: np.fft.ifftn(x, s, a, nm), False)),
        fft_info("fft_rfft2", _nd_samples(True), _nd(lambda x, s, a, nm: np.fft.rfftn(x, s, a, nm), True), REAL),
        fft_info("fft_rfftn", _nd_samples(False), _nd(lambda x, s, a, nm: np.fft.rfftn(x, s, a, nm), False), REAL),
        fft_info("fft_ihfft2", _nd_samples(True), _nd(_ihfftn, True), REAL),
        fft_info("fft_ihfftn", _nd_samples(False), _nd(_ihfftn, False), REAL),
        fft_info(
            "fft_irfft2",
            _nd_samples(True),
            _nd(lambda x, s, a, nm: np.fft.irfftn(x, s, a, nm), True, True, True),
        ),
        fft_info(
            "fft_irfftn",
            _nd_samples(False),
            _nd(lambda x, s, a, nm: np.fft.irfftn(x, s, a, nm), False, True, True),
        ),
        fft_info("fft_hfft2", _nd_samples(True), _nd(_hfftn, True, True, True)),
        fft_info("fft_hfftn", _nd_samples(False), _nd(_hfftn, False, True, True)),
        fft_info("fft_fftfreq", _fftfreq_samples(), _fftfreq, (ow.float32, ow.float64), None),
        fft_info("fft_rfftfreq", _fftfreq_samples(True), _rfftfreq, (ow.float32, ow.float64), None),
        fft_info("fft_fftshift", _shift_samples(), _fftshift, ANY + (ow.bool,), None),
        fft_info("fft_ifftshift", _shift_samples(), _ifftshift, ANY + (ow.bool,), None),
        fft_info("stft", _stft_samples(False), _stft_oracle, (ow.float32, ow.float64) + COMPLEX, _stft_errors),
        fft_info(
            "stft.center", _stft_samples(True), _stft_center_oracle, (ow.float32, ow.float64) + COMPLEX, _stft_errors
        ),
        fft_info("istft", _istft_samples(), _istft_oracle, COMPLEX, None),
    ]
    return lines


register(*_lines())
