"""Packed weights of quantized linear and convolution layers (``quantized::linear_prepack`` ...).

A packed object keeps the quantized weight (qint8, per-tensor or per-channel along the
output-channel dim 0) and the float bias as given; engines keep their private forms
(reordered weights, precomputed offsets) in ``backend_cache``, keyed as they like.
In schemas these objects have the opaque types ``LinearPackedParamsBase`` and
``Conv2dPackedParamsBase`` (PyTorch's TorchScript classes of those names).
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import _dtype
from .._quantized import qparams_of
from .._tensor import Tensor


def _check_weight(op: str, weight, ndims: tuple) -> None:
    qp = qparams_of(weight, op, "weight")
    if weight.dtype is not _dtype.qint8:
        raise TypeError(f"{op}: argument 'weight' must be qint8, got {weight.dtype}")
    if weight.ndim not in ndims:
        raise ValueError(f"{op}: argument 'weight' must have {' or '.join(map(str, ndims))} dims, got {weight.ndim}")
    if qp.per_channel_scheme and qp.axis != 0:
        raise ValueError(f"{op}: a per-channel weight must be quantized along dim 0 (output channels), got {qp.axis}")


def _check_bias(op: str, bias, n: int, weight) -> None:
    if bias is None:
        return
    if not isinstance(bias, Tensor) or bias.is_quantized or not bias.dtype.is_floating_point:
        raise TypeError(f"{op}: argument 'bias' must be a float tensor or None")
    if tuple(bias.shape) != (n,):
        raise ValueError(f"{op}: argument 'bias' must have shape [{n}], got {list(bias.shape)}")
    if bias.device != weight.device:
        raise RuntimeError(f"{op}: 'bias' is on {bias.device} but 'weight' on {weight.device}")


class _Packed:
    """What packed linear and convolution weights share: per-device copies and value equality."""

    weight: Tensor
    bias: Tensor | None
    backend_cache: dict

    def weight_on(self, device) -> Tensor:
        """The weight on ``device``: itself, or a copy made once and kept in ``backend_cache``."""
        if device == self.weight.device:
            return self.weight
        key = ("weight", str(device))
        if key not in self.backend_cache:
            self.backend_cache[key] = self.weight.to(device)
        return self.backend_cache[key]

    def bias_on(self, device):
        """The bias on ``device`` (None without a bias), cached like :meth:`weight_on`."""
        if self.bias is None or device == self.bias.device:
            return self.bias
        key = ("bias", str(device))
        if key not in self.backend_cache:
            self.backend_cache[key] = self.bias.to(device)
        return self.backend_cache[key]

    def to(self, device):
        """A copy of these packed weights with the weight and bias on ``device`` (the engine cache is not copied)."""
        import copy

        other = copy.copy(self)
        other.weight = self.weight.to(device, copy=True)
        other.bias = None if self.bias is None else self.bias.to(device, copy=True)
        other.backend_cache = {}
        return other

    def _key(self) -> tuple:
        import numpy as np

        w = self.weight
        bias = None if self.bias is None else np.asarray(self.bias.cpu().numpy()).tobytes()
        return (type(self), tuple(w.shape), w.dtype, w._qparams, w.int_repr().cpu().numpy().tobytes(), bias)

    def __eq__(self, other):
        return isinstance(other, _Packed) and self._key() == other._key()

    __hash__ = object.__hash__


class LinearPackedParams(_Packed):
    """A prepacked linear weight: ``weight`` (qint8, ``[out_features, in_features]``), ``bias`` (float or None)."""

    def __init__(self, weight: Tensor, bias: Tensor | None = None):
        op = "quantized::linear_prepack"
        _check_weight(op, weight, (2,))
        _check_bias(op, bias, weight.shape[0], weight)
        self.weight = weight
        self.bias = bias
        self.backend_cache: dict = {}

    @property
    def in_features(self) -> int:
        """Columns of the weight."""
        return self.weight.shape[1]

    @property
    def out_features(self) -> int:
        """Rows of the weight."""
        return self.weight.shape[0]

    def unpack(self) -> tuple:
        """``(weight, bias)`` as given to the prepack."""
        return self.weight, self.bias

    def __repr__(self):
        return f"LinearPackedParams(in_features={self.in_features}, out_features={self.out_features}, " + (
            f"bias={self.bias is not None}, qscheme={self.weight.qscheme()})"
        )


class ConvPackedParams(_Packed):
    """A prepacked convolution weight with its geometry (``stride``, ``padding``, ``dilation``, ``groups``).

    ``weight`` is qint8 ``[out_channels, in_channels / groups, *kernel]`` with 1 (conv1d) or
    2 (conv2d) spatial dims; ``dims`` says which.
    """

    def __init__(
        self,
        weight: Tensor,
        bias: Tensor | None,
        stride: int | Sequence[int],
        padding: int | Sequence[int],
        dilation: int | Sequence[int],
        groups: int,
        *,
        dims: int = 2,
    ) -> None:
        op = f"quantized::conv{dims}d_prepack"
        _check_weight(op, weight, (dims + 2,))
        _check_bias(op, bias, weight.shape[0], weight)
        geometry = {}
        for name, value, low in (("stride", stride, 1), ("padding", padding, 0), ("dilation", dilation, 1)):
            value = tuple(value) if isinstance(value, (list, tuple)) else (value,)
            if len(value) == 1:
                value = value * dims
            if len(value) != dims or any(not isinstance(v, int) or v < low for v in value):
                raise ValueError(f"{op}: argument '{name}' must be {dims} ints >= {low}, got {list(value)}")
            geometry[name] = value
        if not isinstance(groups, int) or groups < 1 or weight.shape[0] % groups:
            raise ValueError(f"{op}: argument 'groups' must be a positive divisor of {weight.shape[0]}, got {groups}")
        self.weight, self.bias, self.groups, self.dims = weight, bias, groups, dims
        self.stride, self.padding, self.dilation = geometry["stride"], geometry["padding"], geometry["dilation"]
        self.output_padding = (0,) * dims
        self.transpose = False
        self.backend_cache: dict = {}

    def unpack(self) -> tuple:
        """``(weight, bias)`` as given to the prepack."""
        return self.weight, self.bias

    def _key(self) -> tuple:
        return super()._key() + (self.stride, self.padding, self.dilation, self.groups, self.dims)

    def __repr__(self):
        return (
            f"ConvPackedParams(conv{self.dims}d, weight={list(self.weight.shape)}, stride={list(self.stride)}, "
            f"padding={list(self.padding)}, dilation={list(self.dilation)}, groups={self.groups}, "
            f"bias={self.bias is not None})"
        )
