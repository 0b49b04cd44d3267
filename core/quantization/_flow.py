"""A functional post-training quantization flow: ``prepare`` → calibrate → ``convert``.

opweave has no module system yet, so a model is a list of layers, each a tuple:

- ``("linear", weight, bias)`` — ``weight`` ``[out, in]``, ``bias`` ``[out]`` or None;
- ``("conv2d", weight, bias, stride, padding, dilation, groups)``;
- ``("relu",)`` — fused into the preceding linear/conv layer when there is one.

:func:`prepare` returns a :class:`Prepared` model: calling it runs the float model and
records the input's and each layer's output range with activation observers.
:func:`convert` quantizes the weights (per-channel symmetric qint8 by default, as PyTorch's
``x86`` qconfig), prepacks them and returns a :class:`QuantizedModel` that quantizes its
input, runs ``quantized::linear``/``linear_relu``/``conv2d``/``conv2d_relu`` on the current
engine and dequantizes the result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from .. import _dtype
from .._ops import canonical as ops
from .._ops import quantized as qops
from .._quantized import per_channel_symmetric
from .._tensor import Tensor
from .observers import HistogramObserver, ObserverBase, PerChannelMinMaxObserver


def default_activation_observer() -> HistogramObserver:
    """PyTorch's x86 default for activations: a quint8 histogram observer with ``reduce_range``."""
    return HistogramObserver(dtype=_dtype.quint8, reduce_range=True)


def default_weight_observer() -> PerChannelMinMaxObserver:
    """PyTorch's x86 default for weights: per-channel symmetric qint8 along the output channels."""
    return PerChannelMinMaxObserver(ch_axis=0, dtype=_dtype.qint8, qscheme=per_channel_symmetric)


@dataclass
class _Layer:
    kind: str  # "linear" or "conv2d"
    weight: object
    bias: object
    geometry: tuple = ()
    relu: bool = False
    observer: object = None


def _parse(layers) -> list:
    parsed = []
    for i, layer in enumerate(layers):
        if not isinstance(layer, (tuple, list)) or not layer or not isinstance(layer[0], str):
            raise TypeError(f"prepare: layer {i} must be a tuple starting with its kind, got {layer!r}")
        kind = layer[0]
        if kind == "relu":
            if not parsed or parsed[-1].relu:
                raise ValueError(f"prepare: layer {i}: relu must follow a linear or conv2d layer")
            parsed[-1].relu = True
        elif kind == "linear" and len(layer) == 3:
            parsed.append(_Layer("linear", layer[1], layer[2]))
        elif kind == "conv2d" and len(layer) == 7:
            parsed.append(_Layer("conv2d", layer[1], layer[2], tuple(layer[3:])))
        else:
            raise ValueError(f"prepare: layer {i}: unknown layer {kind!r} or wrong number of fields")
    return parsed


def _float_layer(layer: _Layer, x):
    if layer.kind == "linear":
        y = ops.linear(x, layer.weight, layer.bias)
    else:
        from .._ops import prims

        stride, padding, dilation, groups = layer.geometry
        y = prims.convolution(
            x, layer.weight, layer.bias, list(stride), list(padding), list(dilation), False, [0, 0], groups
        )
    return ops.relu(y) if layer.relu else y


@dataclass
class Prepared:
    """A float model with activation observers (call it on calibration batches)."""

    layers: list
    input_observer: object
    weight_observer: object = field(default=default_weight_observer)

    def __call__(self, x: Tensor) -> Tensor:
        """Run the float model, recording the ranges of the input and of every layer's output."""
        x = self.input_observer(x)
        for layer in self.layers:
            x = layer.observer(_float_layer(layer, x))
        return x


def prepare(
    layers: Sequence[tuple],
    activation_observer: Callable[[], ObserverBase] = default_activation_observer,
    weight_observer: Callable[[], ObserverBase] = default_weight_observer,
) -> Prepared:
    """Attach observers to a list of layers (see the module docstring); observers are made by the factories given."""
    parsed = _parse(layers)
    for layer in parsed:
        layer.observer = activation_observer()
    return Prepared(parsed, activation_observer(), weight_observer)


def calibrate(prepared: Prepared, batches: Iterable[Tensor]) -> Prepared:
    """Run every batch through the prepared model; returns it."""
    for batch in batches:
        prepared(batch)
    return prepared


def _qparams(observer):
    scale, zero_point = observer.calculate_qparams()
    return float(scale.tolist()[0]), int(zero_point.tolist()[0])


def _quantize_weight(weight, observer_factory):
    observer = observer_factory()
    observer(weight)
    scale, zero_point = observer.calculate_qparams()
    if observer.qscheme.per_channel:
        scale, zero_point = scale.to(weight.device), zero_point.to(weight.device)
        return ops.quantize_per_channel(weight, scale, zero_point, observer.ch_axis, observer.dtype)
    return ops.quantize_per_tensor(weight, float(scale.tolist()[0]), int(zero_point.tolist()[0]), observer.dtype)


@dataclass
class QuantizedLayer:
    """One converted layer: the op to call, its packed weight and output parameters."""

    op: object
    packed: object
    scale: float
    zero_point: int


class QuantizedModel:
    """The converted model: quantize the input, run the quantized layers, dequantize the output."""

    def __init__(self, input_qparams: tuple[float, int], layers: list) -> None:
        self.input_scale, self.input_zero_point = input_qparams
        self.layers = layers

    def __call__(self, x: Tensor) -> Tensor:
        """Float in, float out; the layers run on the current quantized engine."""
        q = ops.quantize_per_tensor(x, self.input_scale, self.input_zero_point, _dtype.quint8)
        for layer in self.layers:
            q = layer.op(q, layer.packed, layer.scale, layer.zero_point)
        return q.dequantize()


def convert(prepared: Prepared) -> QuantizedModel:
    """Quantize and prepack the weights and fix each activation's parameters from its observer."""
    layers = []
    for layer in prepared.layers:
        weight = _quantize_weight(layer.weight, prepared.weight_observer)
        if layer.kind == "linear":
            packed = qops.linear_prepack(weight, layer.bias)
            op = qops.linear_relu if layer.relu else qops.linear
        else:
            stride, padding, dilation, groups = layer.geometry
            packed = qops.conv2d_prepack(weight, layer.bias, list(stride), list(padding), list(dilation), groups)
            op = qops.conv2d_relu if layer.relu else qops.conv2d
        layers.append(QuantizedLayer(op, packed, *_qparams(layer.observer)))
    return QuantizedModel(_qparams(prepared.input_observer), layers)
