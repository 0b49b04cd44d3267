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

import importlib as _importlib

from . import _layer, _library, reference
from ._engine import get_engine, register_engine, supported_engines
from ._packed import ConvPackedParams, LinearPackedParams

_layer.register()
_library.register()

# The observers and the prepare/convert flow are imported on first use (``import opweave`` registers
# the ops and layers above, and does not pay for them).
_LAZY = {
    "QuantizedLayer": "_flow",
    "calibrate": "_flow",
    "convert": "_flow",
    "prepare": "_flow",
    "HistogramObserver": "observers",
    "MinMaxObserver": "observers",
    "MovingAverageMinMaxObserver": "observers",
    "ObserverBase": "observers",
    "PerChannelMinMaxObserver": "observers",
    "observers": None,
}


def __getattr__(name: str):
    """The names of the observers and the flow, imported on first use (PEP 562)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = _importlib.import_module(f"{__name__}.{_LAZY[name] or name}")
    value = module if _LAZY[name] is None else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names, including those imported on first use."""
    return sorted({*globals(), *_LAZY})


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
