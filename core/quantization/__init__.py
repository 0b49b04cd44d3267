"""``opweave.quantization``: quantized tensors' ops, packed weights, engines, observers.

- dtypes ``opweave.qint8``/``quint8``/``qint32`` and qschemes ``opweave.per_tensor_affine`` ...;
  ``opweave.quantize_per_tensor``, ``quantize_per_channel``, ``dequantize`` and the accessors
  (``q_scale``, ``int_repr`` ...) are canonical ops (``opweave.refs.quantize``);
- the ``quantized::`` library (``opweave.ops.quantized.linear`` ...) with reference kernels
  for every backend (:mod:`.reference`), :class:`LinearPackedParams`, :class:`ConvPackedParams`;
- engines: :func:`register_engine` (for plugins), ``opweave.backends.quantized.engine``;
- observers (:class:`MinMaxObserver` ...) and a functional :func:`prepare`/:func:`convert` flow.

See ``docs/quantization.md``.
"""

from __future__ import annotations

from . import _layer, _library, reference
from ._engine import get_engine, register_engine, supported_engines
from ._packed import ConvPackedParams, LinearPackedParams

_layer.register()
_library.register()

from ._flow import QuantizedLayer, calibrate, convert, prepare  # noqa: E402
from .observers import (  # noqa: E402
    HistogramObserver,
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    ObserverBase,
    PerChannelMinMaxObserver,
)

register_aten_kernels = _library.register_aten_kernels

__all__ = [
    "ConvPackedParams",
    "HistogramObserver",
    "LinearPackedParams",
    "MinMaxObserver",
    "MovingAverageMinMaxObserver",
    "ObserverBase",
    "PerChannelMinMaxObserver",
    "QuantizedLayer",
    "calibrate",
    "convert",
    "get_engine",
    "prepare",
    "reference",
    "register_aten_kernels",
    "register_engine",
    "supported_engines",
]
