"""Discrete Fourier transforms: ``torch.fft`` (NumPy-compatible) plus ``stft`` and ``istft``.

Every transform decomposes into the three FFT prims (``fft_c2c``, ``fft_r2c``, ``fft_c2r``)
after resizing the input to the requested signal sizes (``n``/``s``: trimmed or zero-padded
at the end). ``norm`` is ``"backward"`` (the default: forward unscaled, inverse scaled by
``1/n``), ``"ortho"`` (both by ``1/sqrt(n)``) or ``"forward"`` (forward by ``1/n``).

Dtypes follow torch on the CPU: bool and integer inputs are promoted to the default float
dtype, float32/float64 give complex64/complex128. float16 and bfloat16 raise TypeError, as
torch's CPU FFT does ("Unsupported dtype Half"): the FFT prims have no 16-bit kernels, and
silently computing in float32 would return a dtype torch never returns.
"""

from __future__ import annotations

from .. import _dtype
from .._ops import canonical as ops
from .._ops import prims
from .._tensor import Tensor
from ..errors import DimIndexError
from ._tensor_utils import cast, is_integral, reshape, transpose_last
from ._utils import define_with_variants, wrap_dim

_NORMS = ("backward", "ortho", "forward")


# -- argument handling ---------------------------------------------------------------------------


def _normalization(op: str, norm, forward: bool) -> int:
    """The prims' normalization code for ``norm`` (0 none, 1 ``1/sqrt(n)``, 2 ``1/n``)."""
    if norm is None:
        norm = "backward"
    if norm not in _NORMS:
        raise ValueError(f"{op}: argument 'norm' must be one of {list(_NORMS)}, got {norm!r}")
    if norm == "ortho":
        return 1
    return 0 if (norm == "backward") == forward else 2


def _float_input(op: str, x: Tensor, complex_ok: bool = True) -> Tensor:
    """``x`` promoted as torch.fft does: bool/int → default float; 16-bit floats rejected."""
    if x.dtype in (_dtype.float16, _dtype.bfloat16):
        raise TypeError(f"{op}: unsupported dtype {x.dtype.name} for argument 'self' (float16/bfloat16 FFTs)")
    if x.dtype.is_complex and not complex_ok:
        raise TypeError(f"{op}: expects a real input tensor, but got {x.dtype.name}")
    if is_integral(x.dtype):
        return cast(x, _dtype.get_default_dtype())
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise TypeError(f"{op}: unsupported dtype {x.dtype.name} for argument 'self'")
    return x


def _complex_input(op: str, x: Tensor) -> Tensor:
    x = _float_input(op, x)
    return x if x.dtype.is_complex else cast(x, x.dtype.to_complex())


def _check_n(op: str, name: str, n) -> None:
    if n is not None and n < 1:
        raise ValueError(f"{op}: invalid number of data points ({n}) specified in argument '{name}'")


def _resize(x: Tensor, dim: int, n: int) -> Tensor:
    """``x`` trimmed or zero-padded at the end of ``dim`` to ``n`` entries."""
    size = x.shape[dim]
    if size == n:
        return x
    if n < size:
        return prims.slice_in_dim(x, 0, n, 1, dim)
    pad = [0, 0] * (x.ndim - 1 - dim) + [0, n - size]
    return ops.constant_pad_nd(x, pad, 0)


def _resize_all(x: Tensor, dims, sizes) -> Tensor:
    for d, n in zip(dims, sizes):
        x = _resize(x, d, n)
    return x


def _nonempty(op: str, x: Tensor, dims) -> None:
    for d in dims:
        if x.shape[d] == 0:
            raise ValueError(f"{op}: invalid number of data points (0) in dim {d} of argument 'self'")


def _one_dim(op: str, x: Tensor, n, dim):
    if x.ndim == 0:
        raise DimIndexError(f"{op}: argument 'self' must have at least one dim")
    _check_n(op, "n", n)
    return wrap_dim(op, dim, x.ndim)


def _nd_args(op: str, x: Tensor, s, dim, default_dims=None):
    """torch's ``(s, dim)`` rules: the dims transformed and the signal size along each (-1 keeps the size)."""
    if dim is not None:
        dims = [wrap_dim(op, d, x.ndim) for d in ([dim] if isinstance(dim, int) else dim)]
        if len(set(dims)) != len(dims):
            raise ValueError(f"{op}: argument 'dim' has repeated dims {list(dim)}")
        if s is not None and len(s) != len(dims):
            raise ValueError(f"{op}: arguments 's' {list(s)} and 'dim' {list(dim)} must have the same length")
    elif s is not None:
        if len(s) > x.ndim:
            raise ValueError(f"{op}: argument 's' {list(s)} has more entries than 'self' has dims ({x.ndim})")
        dims = list(range(x.ndim - len(s), x.ndim))
    else:
        dims = list(range(x.ndim)) if default_dims is None else [wrap_dim(op, d, x.ndim) for d in default_dims]
    if s is None:
        sizes = [x.shape[d] for d in dims]
    else:
        sizes = [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]
        for n in sizes:
            _check_n(op, "s", n)
    return dims, sizes


# -- one-dimensional transforms ------------------------------------------------------------------


def _c2c(op, x, dims, sizes, norm, forward):
    x = _resize_all(_complex_input(op, x), dims, sizes)
    if not dims:
        return prims.clone(x, memory_format="contiguous_format")
    _nonempty(op, x, dims)
    return prims.fft_c2c(x, dims, _normalization(op, norm, forward), forward)


def _r2c(op, x, dims, sizes, norm, forward, onesided):
    """Real-input transform; ``forward=False`` gives the conjugate (ihfft): ``conj(r2c(x))`` scaled as an inverse."""
    x = _resize_all(_float_input(op, x, complex_ok=False), dims, sizes)
    _nonempty(op, x, dims)
    out = prims.fft_r2c(x, dims, _normalization(op, norm, forward), onesided)
    return out if forward else prims.conj_physical(out)


def _c2r(op, x, dims, sizes, last, norm, forward):
    """Hermitian-input transform to ``last`` real points on the last dim; ``forward=True`` is hfft (conjugated)."""
    x = _complex_input(op, x)
    x = _resize_all(x, dims, list(sizes[:-1]) + [last // 2 + 1])
    _nonempty(op, x, dims)
    if forward:
        x = prims.conj_physical(x)
    return prims.fft_c2r(x, dims, _normalization(op, norm, forward), last)


def fft_fft(self, n=None, dim=-1, norm=None):
    """One-dimensional discrete Fourier transform of ``self`` along ``dim`` (complex output)."""
    op = "fft_fft"
    d = _one_dim(op, self, n, dim)
    size = self.shape[d] if n is None else n
    x = _float_input(op, self)
    if not x.dtype.is_complex:
        return _r2c(op, x, [d], [size], norm, True, False)
    return _c2c(op, x, [d], [size], norm, True)


def fft_ifft(self, n=None, dim=-1, norm=None):
    """One-dimensional inverse discrete Fourier transform along ``dim``."""
    op = "fft_ifft"
    d = _one_dim(op, self, n, dim)
    return _c2c(op, self, [d], [self.shape[d] if n is None else n], norm, False)


def fft_rfft(self, n=None, dim=-1, norm=None):
    """FFT of a real signal: the ``n // 2 + 1`` non-negative frequencies."""
    op = "fft_rfft"
    d = _one_dim(op, self, n, dim)
    return _r2c(op, self, [d], [self.shape[d] if n is None else n], norm, True, True)


def fft_irfft(self, n=None, dim=-1, norm=None):
    """Inverse of ``rfft``: ``n`` real points (default ``2 * (m - 1)`` for ``m`` input frequencies)."""
    op = "fft_irfft"
    d = _one_dim(op, self, n, dim)
    last = 2 * (self.shape[d] - 1) if n is None else n
    _check_n(op, "n", last)
    return _c2r(op, self, [d], [last], last, norm, False)


def fft_hfft(self, n=None, dim=-1, norm=None):
    """FFT of a Hermitian-symmetric signal given by its first half: ``n`` real points."""
    op = "fft_hfft"
    d = _one_dim(op, self, n, dim)
    last = 2 * (self.shape[d] - 1) if n is None else n
    _check_n(op, "n", last)
    return _c2r(op, self, [d], [last], last, norm, True)


def fft_ihfft(self, n=None, dim=-1, norm=None):
    """Inverse of ``hfft``: the ``n // 2 + 1`` first entries of the inverse FFT of a real signal."""
    op = "fft_ihfft"
    d = _one_dim(op, self, n, dim)
    return _r2c(op, self, [d], [self.shape[d] if n is None else n], norm, False, True)


# -- n-dimensional transforms --------------------------------------------------------------------


def _fftn(op, self, s, dim, norm, forward, default_dims=None):
    dims, sizes = _nd_args(op, self, s, dim, default_dims)
    x = _float_input(op, self)
    if forward and not x.dtype.is_complex and dims:
        return _r2c(op, x, dims, sizes, norm, True, False)
    return _c2c(op, x, dims, sizes, norm, forward)


def _rfftn(op, self, s, dim, norm, forward, default_dims=None):
    dims, sizes = _nd_args(op, self, s, dim, default_dims)
    if not dims:
        raise ValueError(f"{op}: must transform at least one dim")
    return _r2c(op, self, dims, sizes, norm, forward, True)


def _irfftn(op, self, s, dim, norm, forward, default_dims=None):
    dims, sizes = _nd_args(op, self, s, dim, default_dims)
    if not dims:
        raise ValueError(f"{op}: must transform at least one dim")
    last = 2 * (self.shape[dims[-1]] - 1) if s is None or s[-1] == -1 else s[-1]
    _check_n(op, "s", last)
    return _c2r(op, self, dims, sizes, last, norm, forward)


_LAST2 = (-2, -1)


def fft_fft2(self, s=None, dim=_LAST2, norm=None):
    """Two-dimensional FFT over ``dim`` (the last two dims by default)."""
    return _fftn("fft_fft2", self, s, dim, norm, True)


def fft_ifft2(self, s=None, dim=_LAST2, norm=None):
    """Two-dimensional inverse FFT over ``dim``."""
    return _fftn("fft_ifft2", self, s, dim, norm, False)


def fft_fftn(self, s=None, dim=None, norm=None):
    """N-dimensional FFT over ``dim`` (all dims, or the last ``len(s)`` dims when only ``s`` is given)."""
    return _fftn("fft_fftn", self, s, dim, norm, True)


def fft_ifftn(self, s=None, dim=None, norm=None):
    """N-dimensional inverse FFT."""
    return _fftn("fft_ifftn", self, s, dim, norm, False)


def fft_rfft2(self, s=None, dim=_LAST2, norm=None):
    """Two-dimensional FFT of a real signal (half spectrum on the last dim)."""
    return _rfftn("fft_rfft2", self, s, dim, norm, True)


def fft_irfft2(self, s=None, dim=_LAST2, norm=None):
    """Inverse of ``rfft2``."""
    return _irfftn("fft_irfft2", self, s, dim, norm, False)


def fft_rfftn(self, s=None, dim=None, norm=None):
    """N-dimensional FFT of a real signal (half spectrum on the last transformed dim)."""
    return _rfftn("fft_rfftn", self, s, dim, norm, True)


def fft_irfftn(self, s=None, dim=None, norm=None):
    """Inverse of ``rfftn``: real output, ``s[-1]`` (default ``2 * (m - 1)``) points on the last dim."""
    return _irfftn("fft_irfftn", self, s, dim, norm, False)


def fft_hfft2(self, s=None, dim=_LAST2, norm=None):
    """Two-dimensional FFT of a Hermitian-symmetric signal given by its half (real output)."""
    return _irfftn("fft_hfft2", self, s, dim, norm, True)


def fft_ihfft2(self, s=None, dim=_LAST2, norm=None):
    """Inverse of ``hfft2``."""
    return _rfftn("fft_ihfft2", self, s, dim, norm, False)


def fft_hfftn(self, s=None, dim=None, norm=None):
    """N-dimensional FFT of a Hermitian-symmetric signal (real output)."""
    return _irfftn("fft_hfftn", self, s, dim, norm, True)


def fft_ihfftn(self, s=None, dim=None, norm=None):
    """Inverse of ``hfftn``."""
    return _rfftn("fft_ihfftn", self, s, dim, norm, False)


# -- frequencies and shifts ----------------------------------------------------------------------


def _freq_dtype(op: str, dtype):
    dtype = dtype or _dtype.get_default_dtype()
    if not (dtype.is_floating_point or dtype.is_complex):
        raise TypeError(f"{op}: argument 'dtype' must be a floating point or complex dtype, got {dtype.name}")
    return dtype


def fft_fftfreq(n, d=1.0, dtype=None, layout=None, device=None, pin_memory=None):
    """Sample frequencies of an ``n``-point FFT with sample spacing ``d``: ``[0, 1, ..., -2, -1] / (d * n)``."""
    op = "fft_fftfreq"
    if n < 0:
        raise ValueError(f"fft_fftfreq: argument 'n' must be non-negative, got {n}")
    dtype = _freq_dtype(op, dtype)
    i = ops.arange(n, dtype=_dtype.int64, device=device)
    wrapped = ops.where.self(ops.lt.Scalar(i, (n + 1) // 2), i, ops.sub.Scalar(i, n))
    return ops.mul.Scalar(cast(wrapped, dtype), 1.0 / (n * d) if n else 1.0)


def fft_rfftfreq(n, d=1.0, dtype=None, layout=None, device=None, pin_memory=None):
    """Non-negative sample frequencies of an ``n``-point real FFT: ``[0, 1, ..., n // 2] / (d * n)``."""
    op = "fft_rfftfreq"
    if n < 0:
        raise ValueError(f"fft_rfftfreq: argument 'n' must be non-negative, got {n}")
    dtype = _freq_dtype(op, dtype)
    i = ops.arange(n // 2 + 1 if n else 0, dtype=dtype, device=device)
    return ops.mul.Scalar(i, 1.0 / (n * d) if n else 1.0)


def _shift(op: str, self, dim, sign):
    dims = list(range(self.ndim)) if dim is None else [wrap_dim(op, d, self.ndim) for d in dim]
    if not dims or self.ndim == 0:
        return prims.clone(self, memory_format="contiguous_format")
    shifts = [(self.shape[d] // 2) if sign > 0 else -(self.shape[d] // 2) for d in dims]
    return ops.roll(self, shifts, dims)


def fft_fftshift(self, dim=None):
    """Move the zero frequency to the centre of ``dim`` (all dims by default); a 0-dim input is copied."""
    return _shift("fft_fftshift", self, dim, 1)


def fft_ifftshift(self, dim=None):
    """Inverse of ``fftshift``."""
    return _shift("fft_ifftshift", self, dim, -1)


# -- short-time Fourier transform ----------------------------------------------------------------


def _window(op: str, window, n_fft: int, win_length: int, like: Tensor) -> Tensor:
    """The window padded (centred) to ``n_fft`` points; a rectangular one when None."""
    if win_length < 1 or win_length > n_fft:
        raise ValueError(f"{op}: expected 0 < win_length <= n_fft, but got win_length={win_length}, n_fft={n_fft}")
    if window is None:
        dtype = like.dtype.to_real() if like.dtype.is_complex else like.dtype
        w = prims.full([win_length], 1.0, dtype=dtype, device=like.device)
    else:
        if window.ndim != 1 or window.shape[0] != win_length:
            raise ValueError(
                f"{op}: expected a 1-D window of size equal to win_length={win_length}, but got window with "
                f"shape {list(window.shape)}"
            )
        w = window
    left = (n_fft - win_length) // 2
    if left or n_fft - win_length - left:
        w = ops.constant_pad_nd(w, [left, n_fft - win_length - left], 0)
    return w


def _reflect_pad(x: Tensor, pad: int, mode: str, op: str) -> Tensor:
    """``x`` (*, L) padded by ``pad`` on both ends of the last dim with torch.nn.functional.pad's ``mode``."""
    if pad == 0:
        return x
    n = x.shape[-1]
    d = x.ndim - 1
    if mode == "constant":
        return ops.constant_pad_nd(x, [pad, pad], 0)
    if mode == "reflect":
        if pad >= n:
            raise ValueError(f"{op}: reflect padding of {pad} needs a signal longer than {pad}, got length {n}")
        left = ops.flip(prims.slice_in_dim(x, 1, pad + 1, 1, d), [d])
        right = ops.flip(prims.slice_in_dim(x, n - 1 - pad, n - 1, 1, d), [d])
    elif mode == "replicate":
        shape = list(x.shape[:-1]) + [pad]
        left = ops.expand(prims.slice_in_dim(x, 0, 1, 1, d), shape)
        right = ops.expand(prims.slice_in_dim(x, n - 1, n, 1, d), shape)
    elif mode == "circular":
        if pad > n:
            raise ValueError(f"{op}: circular padding of {pad} needs a signal of at least {pad}, got length {n}")
        left = prims.slice_in_dim(x, n - pad, n, 1, d)
        right = prims.slice_in_dim(x, 0, pad, 1, d)
    else:
        raise ValueError(f"{op}: argument 'pad_mode' must be constant, reflect, replicate or circular, got {mode!r}")
    return ops.cat([left, x, right], d)


def _stft(
    op, self, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided, return_complex, align
):
    if self.ndim not in (1, 2):
        raise ValueError(f"{op}: expected a 1D or 2D tensor for argument 'self', got shape {list(self.shape)}")
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise TypeError(f"{op}: expected a tensor of floating point or complex values, got {self.dtype.name}")
    if center and align is not None:
        raise ValueError(f"{op}: argument 'align_to_window' may only be set when center=False")
    x = _float_input(op, self)
    is_complex = x.dtype.is_complex or (window is not None and window.dtype.is_complex)
    if return_complex is None:
        if not is_complex:
            raise ValueError(f"{op}: argument 'return_complex' must be given for real inputs (return_complex=True)")
        return_complex = True
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if n_fft < 1:
        raise ValueError(f"{op}: expected 0 < n_fft, but got n_fft={n_fft}")
    if hop < 1:
        raise ValueError(f"{op}: expected hop_length > 0, but got hop_length={hop}")
    batched = x.ndim == 2
    x = x if batched else prims.expand_dims(x, [0])
    if center:
        x = _reflect_pad(x, n_fft // 2, pad_mode, op)
    length = x.shape[-1]
    if n_fft > length:
        raise ValueError(f"{op}: expected 0 < n_fft <= {length} (the padded signal length), but got n_fft={n_fft}")
    w = _window(op, window, n_fft, win_length, x)
    if window is not None:
        w = _float_input(op, w)
    if align and not center:
        x = _reflect_pad(x, (n_fft - win_length) // 2, pad_mode, op)
    frames = ops.unfold(x, 1, n_fft, hop)  # (B, n_frames, n_fft)
    frames = ops.mul.Tensor(frames, w)
    onesided = (not is_complex) if onesided is None else onesided
    if onesided and frames.dtype.is_complex:
        raise ValueError(f"{op}: onesided output is not possible for complex input or window")
    norm = "ortho" if normalized else "backward"
    if onesided:
        spec = fft_rfft(frames, None, -1, norm)
    else:
        spec = fft_fft(frames, None, -1, norm)
    spec = transpose_last(spec)  # (B, freq, n_frames)
    spec = spec if batched else prims.squeeze(spec, [0])
    spec = prims.clone(spec, memory_format="contiguous_format")
    return spec if return_complex else ops.clone(ops.view_as_real(spec))


def stft(
    self,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    normalized=False,
    onesided=None,
    return_complex=None,
    align_to_window=None,
):
    """Short-time Fourier transform without centring (frames start at 0): (*, freq, n_frames).

    ``align_to_window`` pads ``(n_fft - win_length) // 2`` (reflect) on both ends so that the
    first window starts at the first sample.
    """
    return _stft(
        "stft",
        self,
        n_fft,
        hop_length,
        win_length,
        window,
        False,
        "reflect",
        normalized,
        onesided,
        return_complex,
        align_to_window,
    )


def stft_center(
    self,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    pad_mode="reflect",
    normalized=False,
    onesided=None,
    return_complex=None,
    align_to_window=None,
):
    """Short-time Fourier transform; ``center`` pads ``n_fft // 2`` on both ends with ``pad_mode``."""
    return _stft(
        "stft",
        self,
        n_fft,
        hop_length,
        win_length,
        window,
        center,
        pad_mode,
        normalized,
        onesided,
        return_complex,
        align_to_window,
    )


def _below_nola(envelope) -> bool:
    """Whether the window envelope vanishes somewhere (the window violates the NOLA condition)."""
    return bool(prims.item(ops.lt.Scalar(ops.min(ops.abs(envelope)), 1e-11)))


def _overlap_add(frames: Tensor, hop: int) -> Tensor:
    """Sum frames (B, n_frames, n_fft) placed ``hop`` apart: (B, n_fft + hop * (n_frames - 1)).

    Deterministic: each frame is cut into ``ceil(n_fft / hop)`` chunks of ``hop`` points; chunk
    ``r`` of frame ``f`` lands on segment ``f + r``, so the sum is a few shifted additions.
    """
    b, n_frames, n_fft = frames.shape
    k = -(-n_fft // hop)
    frames = ops.constant_pad_nd(frames, [0, k * hop - n_fft], 0)
    chunks = reshape(frames, (b, n_frames, k, hop))
    segments = n_frames + k - 1
    total = None
    for r in range(k):
        part = prims.squeeze(prims.slice_in_dim(chunks, r, r + 1, 1, 2), [2])  # (B, n_frames, hop)
        part = ops.constant_pad_nd(part, [0, 0, r, segments - n_frames - r], 0)
        total = part if total is None else ops.add.Tensor(total, part)
    y = reshape(total, (b, segments * hop))
    return prims.slice_in_dim(y, 0, n_fft + hop * (n_frames - 1), 1, 1)


def istft(
    self,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    normalized=False,
    onesided=None,
    length=None,
    return_complex=False,
):
    """Inverse short-time Fourier transform by weighted overlap-add (the inverse of ``stft`` with the same window)."""
    op = "istft"
    if not self.dtype.is_complex:
        raise TypeError(f"{op}: expected a complex tensor for argument 'self', got {self.dtype.name}")
    if self.ndim not in (2, 3):
        raise ValueError(f"{op}: expected a 2D or 3D tensor for argument 'self', got shape {list(self.shape)}")
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if hop < 1 or hop > win_length:
        raise ValueError(f"{op}: expected 0 < hop_length <= win_length, but got hop_length={hop}")
    batched = self.ndim == 3
    x = self if batched else prims.expand_dims(self, [0])
    n_freq, n_frames = x.shape[-2], x.shape[-1]
    onesided = n_freq != n_fft if onesided is None else onesided
    if onesided and n_freq != n_fft // 2 + 1:
        raise ValueError(f"{op}: expected the frequency dim to have {n_fft // 2 + 1} entries, got {n_freq}")
    if not onesided and n_freq != n_fft:
        raise ValueError(f"{op}: expected the frequency dim to have {n_fft} entries, got {n_freq}")
    if n_frames < 1:
        raise ValueError(f"{op}: expected at least one frame, got shape {list(self.shape)}")
    w = _window(op, window, n_fft, win_length, cast(x, x.dtype.to_real()))
    if return_complex:
        if onesided:
            raise ValueError(f"{op}: cannot have onesided output if window or input is complex")
        if window is not None:
            w = _float_input(op, w)
    elif window is not None and window.dtype.is_complex:
        raise TypeError(f"{op}: complex windows are incompatible with return_complex=False")
    spec = transpose_last(x)  # (B, n_frames, freq)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        frames = fft_ifft(spec, None, -1, norm)
    else:
        if not onesided:
            spec = prims.slice_in_dim(spec, 0, n_fft // 2 + 1, 1, 2)
        frames = fft_irfft(spec, n_fft, -1, norm)
    frames = ops.mul.Tensor(frames, w)
    y = _overlap_add(frames, hop)
    w2 = ops.mul.Tensor(w, w)  # PyTorch's window.pow(2): a complex window's square, not |w|²
    envelope = _overlap_add(ops.expand(reshape(w2, (1, 1, n_fft)), [1, n_frames, n_fft]), hop)
    expected = n_fft + hop * (n_frames - 1)
    start = n_fft // 2 if center else 0
    end = expected - (n_fft // 2 if center else 0) if length is None else start + length
    stop = min(end, expected)
    y = prims.slice_in_dim(y, start, max(stop, start), 1, 1)
    envelope = prims.slice_in_dim(envelope, start, max(stop, start), 1, 1)
    if envelope.numel() and envelope.device.type != "meta" and _below_nola(envelope):
        raise ValueError(f"{op}: window overlap add min is below 1e-11 (the window does not satisfy NOLA)")
    if envelope.dtype.is_complex:
        y = ops.div.Tensor(cast(y, envelope.dtype) if not y.dtype.is_complex else y, envelope)
    else:
        y = ops.div.Tensor(y, cast(envelope, y.dtype.to_real()) if y.dtype.is_complex else envelope)
    if end > expected:
        y = ops.constant_pad_nd(y, [0, end - expected], 0)
    return y if batched else prims.squeeze(y, [0])


# -- definitions ---------------------------------------------------------------------------------

_ONE = "(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor"
_TWO = "(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) -> Tensor"
_N = "(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor"
_FREQ = (
    "(int n, float d=1.0, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
    "bool? pin_memory=None) -> Tensor"
)

FFT = [
    ("fft_fft" + _ONE, fft_fft),
    ("fft_ifft" + _ONE, fft_ifft),
    ("fft_rfft" + _ONE, fft_rfft),
    ("fft_irfft" + _ONE, fft_irfft),
    ("fft_hfft" + _ONE, fft_hfft),
    ("fft_ihfft" + _ONE, fft_ihfft),
    ("fft_fft2" + _TWO, fft_fft2),
    ("fft_ifft2" + _TWO, fft_ifft2),
    ("fft_rfft2" + _TWO, fft_rfft2),
    ("fft_irfft2" + _TWO, fft_irfft2),
    ("fft_hfft2" + _TWO, fft_hfft2),
    ("fft_ihfft2" + _TWO, fft_ihfft2),
    ("fft_fftn" + _N, fft_fftn),
    ("fft_ifftn" + _N, fft_ifftn),
    ("fft_rfftn" + _N, fft_rfftn),
    ("fft_irfftn" + _N, fft_irfftn),
    ("fft_hfftn" + _N, fft_hfftn),
    ("fft_ihfftn" + _N, fft_ihfftn),
]


def _define():
    for schema, fn in FFT:
        define_with_variants(schema, fn, tags=("fft",), inplace=False, out=True)
    define_with_variants("fft_fftfreq" + _FREQ, fft_fftfreq, tags=("factory",), inplace=False, out=False)
    define_with_variants("fft_rfftfreq" + _FREQ, fft_rfftfreq, tags=("factory",), inplace=False, out=False)
    define_with_variants(
        "fft_fftshift(Tensor self, int[1]? dim=None) -> Tensor", fft_fftshift, inplace=False, out=False
    )
    define_with_variants(
        "fft_ifftshift(Tensor self, int[1]? dim=None) -> Tensor", fft_ifftshift, inplace=False, out=False
    )
    define_with_variants(
        "stft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, "
        "bool normalized=False, bool? onesided=None, bool? return_complex=None, bool? align_to_window=None) -> Tensor",
        stft,
        tags=("fft",),
        inplace=False,
        out=False,
    )
    define_with_variants(
        "stft.center(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, "
        'bool center=True, str pad_mode="reflect", bool normalized=False, bool? onesided=None, '
        "bool? return_complex=None, bool? align_to_window=None) -> Tensor",
        stft_center,
        tags=("fft",),
        inplace=False,
        out=False,
    )
    define_with_variants(
        "istft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, "
        "bool center=True, bool normalized=False, bool? onesided=None, int? length=None, "
        "bool return_complex=False) -> Tensor",
        istft,
        tags=("fft",),
        inplace=False,
        out=False,
    )


_define()
