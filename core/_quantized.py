"""Quantized tensors: qschemes, quantization parameters, and the integer representation.

A quantized tensor is an ordinary :class:`Tensor` whose dtype is ``qint8``, ``quint8``
or ``qint32``, whose key set carries the ``Quantized`` layer bit, and whose ``_qparams``
holds a :class:`QParams` (qscheme, scale(s), zero point(s), axis). Its storage holds
the integer representation (int8, uint8, int32) on the tensor's device, so
:func:`int_view` (same storage, integer dtype, Dense keys) and :func:`make_quantized`
(the reverse) are metadata-only. Backends never see a quantized dtype: kernels at the
Quantized layer work on integer views and float tensors through canonical ops.

Formulas (as PyTorch's fbgemm/ATen reference paths):

- quantize: ``q = clamp(round_half_even(x / scale) + zero_point, qmin, qmax)``, computed
  in float32 (``x`` and ``scale`` rounded to float32 first);
- dequantize: ``x = float32(q - zero_point) * float32(scale)``.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _dtype, _keys
from ._tensor import Tensor, _keys_for


class QScheme(int):
    """A quantization scheme (``opweave.per_tensor_affine`` ...): singletons, equal to ATen's ``c10::QScheme`` codes."""

    def __new__(cls, code: int, name: str, per_channel: bool, symmetric: bool):
        self = super().__new__(cls, code)
        self.name, self.per_channel, self.symmetric = name, per_channel, symmetric
        return self

    def __repr__(self):
        return f"opweave.{self.name}"

    __str__ = __repr__

    def __reduce__(self):
        return (_qscheme_from_name, (self.name,))


per_tensor_affine = QScheme(0, "per_tensor_affine", False, False)
per_channel_affine = QScheme(1, "per_channel_affine", True, False)
per_tensor_symmetric = QScheme(2, "per_tensor_symmetric", False, True)
per_channel_symmetric = QScheme(3, "per_channel_symmetric", True, True)
QSCHEMES = (per_tensor_affine, per_channel_affine, per_tensor_symmetric, per_channel_symmetric)
_QSCHEME_BY_NAME = {q.name: q for q in QSCHEMES}


def _qscheme_from_name(name: str) -> QScheme:
    return _QSCHEME_BY_NAME[name]


#: quantized dtype -> its integer storage dtype
STORAGE_DTYPE = {_dtype.qint8: _dtype.int8, _dtype.quint8: _dtype.uint8, _dtype.qint32: _dtype.int32}
#: integer storage dtype -> the quantized dtype it represents
QUANTIZED_OF = {v: k for k, v in STORAGE_DTYPE.items()}


def qrange(dtype: _dtype.dtype) -> tuple[int, int]:
    """``(qmin, qmax)`` of a quantized dtype (its storage type's full range)."""
    info = _dtype.iinfo(STORAGE_DTYPE[dtype])
    return info.min, info.max


@dataclass(frozen=True)
class QParams:
    """The quantization parameters of a tensor.

    Per-tensor schemes use ``scale`` and ``zero_point``; per-channel schemes use
    ``scales`` and ``zero_points`` (tuples, one entry per index of dim ``axis``).
    """

    qscheme: QScheme
    scale: float | None = None
    zero_point: int | None = None
    scales: tuple | None = None
    zero_points: tuple | None = None
    axis: int | None = None

    @staticmethod
    def per_tensor(scale: float, zero_point: int, symmetric: bool = False) -> QParams:
        """Per-tensor parameters (affine unless ``symmetric``)."""
        scheme = per_tensor_symmetric if symmetric else per_tensor_affine
        return QParams(scheme, float(scale), int(zero_point))

    @staticmethod
    def per_channel(scales: Tensor, zero_points: Tensor, axis: int, symmetric: bool = False) -> QParams:
        """Per-channel parameters along ``axis`` (affine unless ``symmetric``)."""
        scheme = per_channel_symmetric if symmetric else per_channel_affine
        return QParams(scheme, None, None, tuple(map(float, scales)), tuple(map(int, zero_points)), int(axis))

    @property
    def per_channel_scheme(self) -> bool:
        """Whether the scheme is per-channel."""
        return self.qscheme.per_channel

    def with_axis(self, axis: int) -> QParams:
        """The same parameters with the channel axis moved to ``axis``."""
        return QParams(self.qscheme, None, None, self.scales, self.zero_points, axis)

    def channel_slice(self, start: int, stop: int, step: int) -> QParams:
        """Per-channel parameters of channels ``start:stop:step``."""
        return QParams(
            self.qscheme, None, None, self.scales[start:stop:step], self.zero_points[start:stop:step], self.axis
        )

    def channel(self, index: int) -> QParams:
        """Per-tensor parameters of one channel (what selecting that channel leaves)."""
        scheme = per_tensor_symmetric if self.qscheme.symmetric else per_tensor_affine
        return QParams(scheme, self.scales[index], self.zero_points[index])


def quantized_keys(device) -> int:
    """Key set of a quantized tensor on ``device``: Dense, Quantized and the backend bit."""
    return _keys_for(device) | _keys.layer_bit(_keys.Layer.Quantized)


def make_quantized(int_tensor: Tensor, qparams: QParams, dtype: _dtype.dtype | None = None) -> Tensor:
    """A quantized tensor over ``int_tensor``'s storage (no copy); its dtype follows the storage type."""
    qdtype = dtype or QUANTIZED_OF.get(int_tensor.dtype)
    if qdtype is None or STORAGE_DTYPE[qdtype] is not int_tensor.dtype:
        raise TypeError(f"make_quantized: cannot view {int_tensor.dtype} as a quantized dtype {dtype}")
    t = Tensor._make(
        int_tensor._storage,
        int_tensor._shape,
        int_tensor.stride(),
        int_tensor._offset,
        qdtype,
        int_tensor._device,
        quantized_keys(int_tensor._device),
        int_tensor._native,
    )
    t._qparams = qparams
    return t


def int_view(q: Tensor) -> Tensor:
    """The integer representation of quantized ``q`` as a Dense tensor sharing its storage."""
    return Tensor._make(
        q._storage, q._shape, q.stride(), q._offset, STORAGE_DTYPE[q._dtype], q._device, None, q._native
    )


def qparams_of(t: Tensor, op: str, arg: str) -> QParams:
    """``t``'s quantization parameters; TypeError naming ``op`` and ``arg`` when ``t`` is not quantized."""
    qp = t._qparams if isinstance(t, Tensor) else None
    if qp is None:
        what = t.dtype if isinstance(t, Tensor) else type(t).__name__
        raise TypeError(f"{op}: argument '{arg}' must be a quantized tensor, got {what}")
    return qp


def check_quantized_dtype(dtype, op: str, arg: str = "dtype", allowed=None) -> None:
    """TypeError unless ``dtype`` is a quantized dtype (one of ``allowed`` when given)."""
    allowed = allowed or tuple(STORAGE_DTYPE)
    if dtype not in allowed:
        names = ", ".join(d.name for d in allowed)
        raise TypeError(f"{op}: argument '{arg}' must be one of {names}, got {dtype}")
