"""Observers: record value ranges during calibration and compute quantization parameters.

They follow ``torch.ao.quantization.observer``: calling an observer on a tensor records its
range and returns the tensor; :meth:`calculate_qparams` returns ``(scale, zero_point)`` as
tensors (float32 and int64, shape ``[1]`` per tensor or ``[channels]`` per channel) with
PyTorch's formulas (float32 arithmetic):

- quantization range: the dtype's (``qint8`` [-128, 127], ``quint8`` [0, 255]); ``reduce_range``
  halves it ([-64, 63], [0, 127]); a custom ``quant_min``/``quant_max`` is halved (floor) too;
- ``min_neg = min(min_val, 0)``, ``max_pos = max(max_val, 0)``;
- affine: ``scale = max((max_pos - min_neg) / (qmax - qmin), eps)``,
  ``zero_point = clamp(qmin - round(min_neg / scale), qmin, qmax)``;
- symmetric: ``scale = max(max(-min_neg, max_pos) / ((qmax - qmin) / 2), eps)``, zero point 0,
  or 128 for quint8 (the floored midpoint of a custom range);
- nothing observed: scale 1, zero point 0 (with a warning).

Observers compute on the host (NumPy) from the tensor's float32 values; they are
calibration tools, not ops.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import _dtype
from .._quantized import QScheme, per_channel_affine, per_channel_symmetric, per_tensor_affine, per_tensor_symmetric
from .._tensor import Tensor

_EPS = float(np.finfo(np.float32).eps)
_RANGES = {_dtype.qint8: (-128, 127), _dtype.quint8: (0, 255), _dtype.qint32: (-(2**31), 2**31 - 1)}


def _host(x: Tensor | np.ndarray) -> np.ndarray:
    if isinstance(x, Tensor):
        if x.is_quantized:
            x = x.dequantize()
        return np.asarray(x.cpu().numpy(), dtype=np.float32)
    return np.asarray(x, dtype=np.float32)


def _tensor(values, dtype):
    from .._factories import tensor

    return tensor(np.asarray(values).reshape(-1).tolist(), dtype=dtype)


def quant_range(
    dtype: _dtype.dtype, reduce_range: bool, quant_min: int | None = None, quant_max: int | None = None
) -> tuple[int, int]:
    """``(qmin, qmax)`` as PyTorch's ``calculate_qmin_qmax``."""
    if dtype not in _RANGES:
        raise TypeError(f"observer: 'dtype' must be qint8, quint8 or qint32, got {dtype}")
    if quant_min is not None or quant_max is not None:
        if quant_min is None or quant_max is None or not quant_min <= 0 <= quant_max:
            raise ValueError("observer: 'quant_min' and 'quant_max' must both be given and include 0")
        lo, hi = _RANGES[dtype]
        if quant_min < lo or quant_max > hi:
            raise ValueError(f"observer: [{quant_min}, {quant_max}] is outside the range of {dtype.name}")
        return (quant_min // 2, quant_max // 2) if reduce_range else (quant_min, quant_max)
    if dtype is _dtype.qint32:
        return _RANGES[dtype]
    lo, hi = _RANGES[dtype]
    return (lo // 2, hi // 2) if reduce_range else (lo, hi)


class ObserverBase:
    """What every observer shares: dtype, qscheme, range, eps, and the qparams formula."""

    def __init__(
        self,
        dtype: _dtype.dtype = _dtype.quint8,
        qscheme: QScheme = per_tensor_affine,
        reduce_range: bool = False,
        quant_min: int | None = None,
        quant_max: int | None = None,
        eps: float = _EPS,
        per_channel: bool = False,
    ):
        allowed = (
            (per_channel_affine, per_channel_symmetric) if per_channel else (per_tensor_affine, per_tensor_symmetric)
        )
        name = type(self).__name__
        if qscheme not in allowed:
            raise ValueError(f"{name}: unsupported qscheme {qscheme}")
        if qscheme.symmetric and reduce_range and dtype is _dtype.quint8 and quant_min is None:
            raise NotImplementedError(f"{name}: cannot reduce range for symmetric quantization for quint8")
        self.dtype, self.qscheme, self.reduce_range, self.eps = dtype, qscheme, reduce_range, float(eps)
        self.has_customized_qrange = quant_min is not None or quant_max is not None
        self.quant_min, self.quant_max = quant_range(dtype, reduce_range, quant_min, quant_max)

    def _qparams(self, min_val: np.ndarray, max_val: np.ndarray):
        """PyTorch's ``_calculate_qparams`` in float32: ``(scale float32 array, zero_point int64 array)``."""
        f32 = np.float32
        min_val, max_val = np.atleast_1d(np.asarray(min_val, f32)), np.atleast_1d(np.asarray(max_val, f32))
        if np.all(np.isinf(min_val) & (min_val > 0)) and np.all(np.isinf(max_val) & (max_val < 0)):
            name = type(self).__name__
            warnings.warn(f"{name}: must run on data before calculate_qparams; returning defaults", stacklevel=3)
            return np.ones(min_val.shape, f32), np.zeros(min_val.shape, np.int64)
        qmin, qmax = self.quant_min, self.quant_max
        min_neg = np.minimum(min_val, f32(0))
        max_pos = np.maximum(max_val, f32(0))
        eps = f32(self.eps)
        if self.qscheme.symmetric:
            max_pos = np.maximum(-min_neg, max_pos)
            scale = np.maximum(max_pos / f32((qmax - qmin) / 2), eps).astype(f32)
            zp = 0
            if self.dtype is _dtype.quint8:
                zp = (qmin + qmax) // 2 if self.has_customized_qrange else 128
            zero_point = np.full(scale.shape, zp, np.int64)
        else:
            scale = np.maximum((max_pos - min_neg) / f32(qmax - qmin), eps).astype(f32)
            zero_point = qmin - np.rint(min_neg / scale).astype(np.int64)
            zero_point = np.clip(zero_point, qmin, qmax).astype(np.int64)
        return scale, zero_point

    def calculate_qparams(self) -> tuple[Tensor, Tensor]:
        """``(scale, zero_point)`` tensors for the values observed so far."""
        scale, zero_point = self._qparams(*self._range())
        return _tensor(scale, _dtype.float32), _tensor(zero_point, _dtype.int64)

    def __call__(self, x: Tensor) -> Tensor:
        """Record ``x`` and return it unchanged."""
        return self.forward(x)

    def _range(self):
        return self.min_val, self.max_val

    def __repr__(self):
        return f"{type(self).__name__}(min_val={self.min_val}, max_val={self.max_val}, dtype={self.dtype.name})"


class MinMaxObserver(ObserverBase):
    """The running minimum and maximum of every value seen (per tensor)."""

    def __init__(
        self,
        dtype: _dtype.dtype = _dtype.quint8,
        qscheme: QScheme = per_tensor_affine,
        reduce_range: bool = False,
        quant_min: int | None = None,
        quant_max: int | None = None,
        eps: float = _EPS,
    ):
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, eps)
        self.reset_min_max_vals()

    def reset_min_max_vals(self) -> None:
        """Forget what was observed."""
        self.min_val, self.max_val = float("inf"), float("-inf")

    def forward(self, x: Tensor) -> Tensor:
        """Record ``x``'s range."""
        v = _host(x)
        if v.size:
            self.min_val = float(min(np.float32(self.min_val), v.min()))
            self.max_val = float(max(np.float32(self.max_val), v.max()))
        return x


class MovingAverageMinMaxObserver(MinMaxObserver):
    """Exponential moving averages of the per-batch minimum and maximum (``averaging_constant``)."""

    def __init__(
        self,
        averaging_constant: float = 0.01,
        dtype: _dtype.dtype = _dtype.quint8,
        qscheme: QScheme = per_tensor_affine,
        **kwargs: Any,
    ) -> None:
        super().__init__(dtype, qscheme, **kwargs)
        self.averaging_constant = float(averaging_constant)

    def forward(self, x: Tensor) -> Tensor:
        """Move the averages towards ``x``'s range (the first batch sets them)."""
        v = _host(x)
        if not v.size:
            return x
        lo, hi = np.float32(v.min()), np.float32(v.max())
        if np.isinf(self.min_val) and np.isinf(self.max_val):
            self.min_val, self.max_val = float(lo), float(hi)
        else:
            c = np.float32(self.averaging_constant)
            mn, mx = np.float32(self.min_val), np.float32(self.max_val)
            self.min_val = float(mn + c * (lo - mn))
            self.max_val = float(mx + c * (hi - mx))
        return x


class PerChannelMinMaxObserver(ObserverBase):
    """Running minimum and maximum per index of ``ch_axis``."""

    def __init__(
        self,
        ch_axis: int = 0,
        dtype: _dtype.dtype = _dtype.quint8,
        qscheme: QScheme = per_channel_affine,
        reduce_range: bool = False,
        quant_min: int | None = None,
        quant_max: int | None = None,
        eps: float = _EPS,
    ):
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, eps, per_channel=True)
        self.ch_axis = ch_axis
        self.min_val = self.max_val = None

    def reset_min_max_vals(self) -> None:
        """Forget what was observed."""
        self.min_val = self.max_val = None

    def forward(self, x: Tensor) -> Tensor:
        """Record ``x``'s range per channel."""
        v = _host(x)
        if v.ndim == 0:
            raise ValueError("PerChannelMinMaxObserver: expected a tensor with at least one dim")
        v = np.moveaxis(v, self.ch_axis, 0).reshape(v.shape[self.ch_axis], -1)
        if v.shape[1] == 0:
            return x
        lo, hi = v.min(axis=1), v.max(axis=1)
        if self.min_val is None:
            self.min_val, self.max_val = lo, hi
        else:
            if self.min_val.shape != lo.shape:
                raise ValueError("PerChannelMinMaxObserver: the number of channels changed between calls")
            self.min_val, self.max_val = np.minimum(self.min_val, lo), np.maximum(self.max_val, hi)
        return x

    def _range(self):
        if self.min_val is None:
            return np.array([np.inf], np.float32), np.array([-np.inf], np.float32)
        return self.min_val, self.max_val


class HistogramObserver(ObserverBase):
    """A histogram of the values (``bins`` bins over the observed range) and PyTorch's L2 range search.

    ``calculate_qparams`` picks the sub-range of bins that minimises the L2 quantization error with
    ``2 ** bits`` destination bins (``_non_linear_param_search``), then applies the min/max formula.
    When a batch widens the range, the old counts are spread uniformly over their bins' intervals
    and re-binned (the limit of PyTorch's upsample-and-combine).
    """

    def __init__(
        self,
        bins: int = 2048,
        dtype: _dtype.dtype = _dtype.quint8,
        qscheme: QScheme = per_tensor_affine,
        reduce_range: bool = False,
        quant_min: int | None = None,
        quant_max: int | None = None,
        eps: float = _EPS,
    ):
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, eps)
        self.bins = int(bins)
        self.dst_nbins = 2 ** (8 * dtype.itemsize)
        self.histogram = np.zeros(self.bins, np.float64)
        self.min_val, self.max_val = float("inf"), float("-inf")

    def reset_min_max_vals(self) -> None:
        """Forget what was observed."""
        self.histogram[:] = 0
        self.min_val, self.max_val = float("inf"), float("-inf")

    def forward(self, x: Tensor) -> Tensor:
        """Add ``x``'s values to the histogram."""
        v = _host(x).reshape(-1)
        v = v[np.isfinite(v)]
        if not v.size:
            return x
        lo, hi = float(v.min()), float(v.max())
        if np.isinf(self.min_val):
            self.min_val, self.max_val = lo, hi
        elif lo < self.min_val or hi > self.max_val:
            new_lo, new_hi = min(lo, self.min_val), max(hi, self.max_val)
            self.histogram = _rebin(self.histogram, self.min_val, self.max_val, new_lo, new_hi, self.bins)
            self.min_val, self.max_val = new_lo, new_hi
        self.histogram += _histc(v, self.bins, self.min_val, self.max_val)
        return x

    def calculate_qparams(self) -> tuple[Tensor, Tensor]:
        """``(scale, zero_point)`` of the range with the smallest L2 quantization error."""
        if np.isinf(self.min_val):
            return super().calculate_qparams()
        new_min, new_max = self._non_linear_param_search()
        scale, zero_point = self._qparams(np.float32(new_min), np.float32(new_max))
        return _tensor(scale, _dtype.float32), _tensor(zero_point, _dtype.int64)

    def _non_linear_param_search(self):
        """PyTorch's search over ``[start_bin, end_bin]`` shrinking from the lighter tail while the error falls."""
        bin_width = (self.max_val - self.min_val) / self.bins
        total = float(self.histogram.sum())
        csum = np.cumsum(self.histogram)
        stepsize, alpha, beta = 1e-5, 0.0, 1.0
        start_bin, end_bin = 0, self.bins - 1
        norm_min = float("inf")
        while alpha < beta:
            next_alpha, next_beta = alpha + stepsize, beta - stepsize
            left, right = start_bin, end_bin
            while left < end_bin and csum[left] < next_alpha * total:
                left += 1
            while right > start_bin and csum[right] > next_beta * total:
                right -= 1
            next_start, next_end = start_bin, end_bin
            if (left - start_bin) > (end_bin - right):
                next_start, alpha = left, next_alpha
            else:
                next_end, beta = right, next_beta
            if next_start == start_bin and next_end == end_bin:
                continue
            norm = self._quantization_error(next_start, next_end, bin_width)
            if norm > norm_min:
                break
            norm_min, start_bin, end_bin = norm, next_start, next_end
        return self.min_val + bin_width * start_bin, self.min_val + bin_width * (end_bin + 1)

    def _quantization_error(self, start: int, end: int, bin_width: float) -> float:
        dst_width = bin_width * (end - start + 1) / self.dst_nbins
        if dst_width == 0.0:
            return 0.0
        src = np.arange(self.bins, dtype=np.float64)
        begin = (src - start) * bin_width
        stop = begin + bin_width
        dst_begin = np.clip(np.floor(begin / dst_width), 0, self.dst_nbins - 1)
        dst_end = np.clip(np.floor(stop / dst_width), 0, self.dst_nbins - 1)
        density = self.histogram / bin_width

        def norm(delta_begin, delta_end):
            return density * (delta_end**3 - delta_begin**3) / 3

        total = norm(begin - (dst_begin + 0.5) * dst_width, np.full(self.bins, dst_width / 2))
        total = total + (dst_end - dst_begin - 1) * norm(-dst_width / 2, dst_width / 2)
        total = total + norm(-dst_width / 2, stop - (dst_end * dst_width + dst_width / 2))
        return float(total.sum())


def _histc(v: np.ndarray, bins: int, lo: float, hi: float) -> np.ndarray:
    """``torch.histc``: equal bins over ``[lo, hi]``, the top edge in the last bin (a zero-width range: bin 0)."""
    if hi == lo:
        counts = np.zeros(bins)
        counts[0] = v.size
        return counts
    idx = np.floor((v.astype(np.float64) - lo) * bins / (hi - lo)).astype(np.int64)
    return np.bincount(np.clip(idx, 0, bins - 1), minlength=bins).astype(np.float64)


def _rebin(hist: np.ndarray, lo: float, hi: float, new_lo: float, new_hi: float, bins: int) -> np.ndarray:
    """Counts over ``[lo, hi]`` spread uniformly within each bin and collected into ``bins`` bins over the new range."""
    if hi == lo:
        return _histc(np.array([lo]), bins, new_lo, new_hi) * hist.sum()
    edges = np.linspace(lo, hi, bins + 1)
    new_edges = np.linspace(new_lo, new_hi, bins + 1)
    cumulative = np.concatenate([[0.0], np.cumsum(hist)])
    at_new_edges = np.interp(new_edges, edges, cumulative)
    return np.diff(at_new_edges)
