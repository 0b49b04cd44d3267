"""Op database entries: quantization ops (quantize/dequantize, accessors, fake quantization, ``quantized::``).

Quantized inputs are :class:`QArr` (an :class:`Arr` of the integer representation with its
scale(s) and zero point(s)); the oracle receives a :class:`QValue`. Packed weights are
:class:`PackedSpec` values built on the device under test. The oracles below are NumPy
formulas written here:

- quantize: ``clamp(rint(float32(x) / float32(scale)) + zero_point, qmin, qmax)``, NaN → zero point;
- dequantize: ``float32(q - zero_point) * float32(scale)``;
- linear/conv/matmul: exact integer accumulation, then
  ``clamp(zy + rint(acc * (sx * sw / sy) + bias / sy))`` in float64;
- elementwise quantized ops: float32 on the dequantized values, then quantize.

Quantized outputs compare exactly (their integers), except ``quantized::layer_norm``, which
may differ by one step: its float32 mean and variance depend on the summation order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import opweave as ow

from . import register
from ._core import FLOAT, Arr, ErrorInput, OpInfo, SampleInput, arr

F32 = np.float32
QRANGE = {ow.qint8: (-128, 127), ow.quint8: (0, 255), ow.qint32: (-(2**31), 2**31 - 1)}
STORAGE = {ow.qint8: ow.int8, ow.quint8: ow.uint8, ow.qint32: ow.int32}
QDTYPES = (ow.quint8, ow.qint8, ow.qint32)
ONE_STEP = {"quint8": (0.0, 1), "qint8": (0.0, 1)}


# -- quantized values ----------------------------------------------------------------------------


@dataclass
class QValue:
    """What an oracle receives for a quantized tensor: integers and broadcastable parameters."""

    ints: np.ndarray
    scale: np.ndarray
    zero_point: np.ndarray
    dtype: object
    axis: int | None = None

    def dq(self) -> np.ndarray:
        """The dequantized float32 values."""
        return (self.ints - self.zero_point).astype(F32) * self.scale.astype(F32)


@dataclass
class QArr(Arr):
    """A quantized tensor argument: ``value`` holds the integers; per-channel when ``axis`` is set."""

    scale: object = 0.1
    zero_point: object = 0
    axis: int | None = None

    def __post_init__(self):
        super().__post_init__()
        if self.axis is not None:
            self.layout = "contiguous"

    def on(self, values, dtype, device):
        """A quantized base tensor holding ``values`` on ``device``."""
        ints = ow.tensor(np.asarray(values), dtype=STORAGE[dtype])
        if self.axis is None:
            q = ow._make_per_tensor_quantized_tensor(ints, float(self.scale), int(self.zero_point))
        else:
            scales = ow.tensor(np.asarray(self.scale, np.float64))
            q = ow._make_per_channel_quantized_tensor(ints, scales, ow.tensor(np.asarray(self.zero_point)), self.axis)
        return q if device == "cpu" else q.to(device)

    def oracle_value(self) -> QValue:
        """Integers (int64) with parameters shaped to broadcast."""
        ints = np.asarray(self.value).astype(np.int64)
        if self.axis is None:
            return QValue(ints, np.array(self.scale, np.float64), np.array(self.zero_point, np.int64), self.dtype)
        shape = [1] * ints.ndim
        shape[self.axis] = -1
        scale = np.asarray(self.scale, np.float64).reshape(shape)
        return QValue(ints, scale, np.asarray(self.zero_point, np.int64).reshape(shape), self.dtype, self.axis)


def np_quantize(x, scale, zero_point, dtype) -> np.ndarray:
    """The integers of ``x`` quantized (float32 division, round half to even)."""
    lo, hi = QRANGE[dtype]
    with np.errstate(all="ignore"):
        r = np.rint(np.asarray(x).astype(F32) / np.asarray(scale).astype(F32)).astype(np.float64)
        v = np.clip(r + np.asarray(zero_point, np.float64), lo, hi)
        v = np.where(np.isnan(v), np.broadcast_to(np.asarray(zero_point, np.float64), v.shape), v)
    return v.astype(STORAGE[dtype].numpy)


def qarr(rng, shape, dtype, layout="contiguous", scale=0.05, zero_point=None, low=-1.0, high=1.0) -> QArr:
    """A per-tensor QArr of random values in [low, high) quantized with ``scale``/``zero_point``."""
    lo, hi = QRANGE[dtype]
    zp = (lo + hi + 1) // 2 if zero_point is None else zero_point
    if dtype is ow.qint32:
        zp = 0 if zero_point is None else zero_point
    x = rng.uniform(low, high, shape)
    return QArr(np_quantize(x, scale, zp, dtype), dtype, layout, scale, zp)


def qchan(rng, shape, axis, dtype=ow.qint8) -> QArr:
    """A per-channel QArr along ``axis``."""
    n = shape[axis]
    scales = [0.01 * (i + 1) for i in range(n)]
    zps = [(i % 3) if dtype is not ow.quint8 else 100 + i for i in range(n)]
    bshape = [1] * len(shape)
    bshape[axis] = n
    ints = np_quantize(rng.uniform(-1, 1, shape), np.reshape(scales, bshape), np.reshape(zps, bshape), dtype)
    return QArr(ints, dtype, "contiguous", scales, zps, axis)


@dataclass
class PackedSpec:
    """Packed weights for a sample: qint8 integers with parameters, float bias, conv geometry (``dims`` 0: linear)."""

    ints: np.ndarray
    scale: object
    zero_point: object
    bias: np.ndarray | None
    per_channel: bool = False
    dims: int = 0
    stride: tuple = ()
    padding: tuple = ()
    dilation: tuple = ()
    groups: int = 1

    def weight(self, device):
        """The quantized weight tensor on ``device``."""
        ints = ow.tensor(self.ints, dtype=ow.int8)
        if self.per_channel:
            s, z = ow.tensor(np.asarray(self.scale, np.float64)), ow.tensor(np.asarray(self.zero_point))
            q = ow._make_per_channel_quantized_tensor(ints, s, z, 0)
        else:
            q = ow._make_per_tensor_quantized_tensor(ints, float(self.scale), int(self.zero_point))
        return q if device == "cpu" else q.to(device)

    def weight_arr(self) -> QArr:
        """The weight as a quantized tensor argument (per-channel along dim 0 when so packed)."""
        axis = 0 if self.per_channel else None
        return QArr(self.ints, ow.qint8, "contiguous", self.scale, self.zero_point, axis)

    def build(self, device):
        """The packed object on ``device``."""
        w = self.weight(device)
        b = None if self.bias is None else ow.tensor(self.bias, dtype=ow.float32, device=device)
        Q = ow.ops.quantized
        if self.dims == 0:
            return Q.linear_prepack(w, b)
        prepack = Q.conv1d_prepack if self.dims == 1 else Q.conv2d_prepack
        return prepack(w, b, list(self.stride), list(self.padding), list(self.dilation), self.groups)

    def scales(self) -> np.ndarray:
        """Weight scales per output channel (float64)."""
        n = self.ints.shape[0]
        return np.asarray(self.scale, np.float64) * np.ones(n) if self.per_channel else np.full(n, float(self.scale))

    def centered(self) -> np.ndarray:
        """``w - zero_point`` as int64 (per output channel)."""
        z = np.asarray(self.zero_point, np.int64).reshape((-1,) + (1,) * (self.ints.ndim - 1))
        return self.ints.astype(np.int64) - (z if self.per_channel else int(self.zero_point))


def packed(rng, shape, per_channel=False, bias=True, dims=0, stride=None, padding=None, dilation=None, groups=1):
    """A random :class:`PackedSpec` of weight ``shape``."""
    n = shape[0]
    scale = [0.01 + 0.005 * i for i in range(n)] if per_channel else 0.02
    zp = [0] * n if per_channel else 0
    ints = rng.integers(-127, 128, shape).astype(np.int8)
    b = rng.uniform(-1, 1, n).astype(F32) if bias else None
    geo = {}
    if dims:
        geo = {
            "stride": tuple(stride or (1,) * dims),
            "padding": tuple(padding or (0,) * dims),
            "dilation": tuple(dilation or (1,) * dims),
        }
    return PackedSpec(ints, scale, zp, b, per_channel, dims, groups=groups, **geo)


def requantize(acc, sx, spec: PackedSpec, out_scale, out_zp, dtype, relu, channel_axis):
    """``clamp(zy + rint(acc * sx * sw / sy + bias / sy))`` in float64, ``sw``/bias along ``channel_axis``."""
    lo, hi = QRANGE[dtype]
    shape = [1] * acc.ndim
    shape[channel_axis] = -1
    m = (spec.scales() * sx / out_scale).reshape(shape) if acc.ndim else spec.scales() * sx / out_scale
    v = acc.astype(np.float64) * m
    if spec.bias is not None:
        v = v + (spec.bias.astype(np.float64) / out_scale).reshape(shape)
    return np.clip(np.rint(v) + out_zp, out_zp if relu else lo, hi).astype(STORAGE[dtype].numpy)


# -- quantize / dequantize / accessors -------------------------------------------------------------------

LAYOUT_PLANS = [
    ((3, 4), "contiguous"),
    ((2, 3), "transposed"),
    ((5,), "strided"),
    ((), "contiguous"),
    ((0, 3), "contiguous"),
    ((4, 3), "broadcast"),
]


def _ties(scale) -> np.ndarray:
    """Values exactly halfway between quantization levels (scale a power of two)."""
    return (np.arange(-6, 6) + 0.5) * scale


def quantize_samples(rng, dtype, device):
    for i, (shape, layout) in enumerate(LAYOUT_PLANS):
        qd = QDTYPES[i % 3]
        yield SampleInput(
            (arr(rng, shape, dtype, layout, specials=i == 0), 0.125, 3 if qd is not ow.qint32 else -7, qd),
            desc=f"{qd.name} {layout}",
        )
    yield SampleInput((Arr(_ties(0.25), dtype), 0.25, 10, ow.quint8), desc="ties round half to even")
    yield SampleInput((Arr(np.array([300.0, -300.0, 3e4, -3e4]), dtype), 0.5, 0, ow.qint8), desc="saturation")
    for qd in QDTYPES:
        yield SampleInput((arr(rng, (4, 5), dtype, specials=True), 0.03, 0, qd), desc=f"random {qd.name}")


def quantize_oracle(x, scale, zero_point, dtype):
    return np_quantize(x, scale, zero_point, dtype)


def quantize_errors(rng, dtype):
    x = arr(rng, (2, 3), dtype)
    yield ErrorInput(SampleInput((x, 0.0, 0, ow.quint8)), ValueError, "scale")
    yield ErrorInput(SampleInput((x, 0.1, 300, ow.quint8)), ValueError, "zero_point")
    yield ErrorInput(SampleInput((x, 0.1, 0, ow.float32)), TypeError, "dtype")
    yield ErrorInput(SampleInput((arr(rng, (2, 3), ow.int32), 0.1, 0, ow.quint8)), TypeError, "self")


def quantize_tq_samples(rng, dtype, device):
    for s in quantize_samples(rng, dtype, device):
        x, scale, zp, qd = s.args
        yield SampleInput((x, Arr(np.array(scale), ow.float32), Arr(np.array(zp), ow.int64), qd), desc=s.desc)


def quantize_tq_oracle(x, scale, zero_point, dtype):
    return np_quantize(x, scale, zero_point, dtype)


def per_channel_samples(rng, dtype, device):
    for i, (shape, axis, layout) in enumerate(
        [((3, 4), 0, "contiguous"), ((2, 5), 1, "transposed"), ((2, 3, 4), 2, "strided"), ((0, 3), 1, "contiguous")]
    ):
        qd = QDTYPES[i % 3]
        n = shape[axis]
        scales = Arr(np.array([0.05 * (j + 1) for j in range(n)]), ow.float64)
        zps = Arr(np.array([j % 4 for j in range(n)]), ow.int64)
        yield SampleInput((arr(rng, shape, dtype, layout, specials=i == 0), scales, zps, axis, qd), desc=qd.name)


def per_channel_oracle(x, scales, zero_points, axis, dtype):
    shape = [1] * x.ndim
    shape[axis] = -1
    return np_quantize(x, scales.reshape(shape), zero_points.reshape(shape), dtype)


def per_channel_errors(rng, dtype):
    x = arr(rng, (2, 3), dtype)
    good_s, good_z = Arr(np.array([0.1, 0.2]), ow.float64), Arr(np.array([0, 1]), ow.int64)
    yield ErrorInput(SampleInput((x, Arr(np.array([0.1, 0.2, 0.3]), ow.float64), good_z, 0, ow.qint8)), ValueError)
    yield ErrorInput(SampleInput((x, good_s, good_z, 2, ow.qint8)), ValueError, "axis")
    yield ErrorInput(SampleInput((x, Arr(np.array([0.1, -0.2]), ow.float64), good_z, 0, ow.qint8)), ValueError)


def dequantize_samples(rng, dtype, device):
    for i, (shape, layout) in enumerate(LAYOUT_PLANS):
        qd = QDTYPES[i % 3]
        yield SampleInput((qarr(rng, shape, qd, layout),), desc=f"{qd.name} {layout}")
    yield SampleInput((qchan(rng, (3, 4), 0),), desc="per-channel axis 0")
    yield SampleInput((qchan(rng, (2, 3, 4), 2, ow.quint8),), desc="per-channel axis 2")
    yield SampleInput((arr(rng, (2, 3), ow.float64),), desc="float input: float32 copy")


def dequantize_oracle(q):
    return q.dq() if isinstance(q, QValue) else np.asarray(q).astype(F32)


def per_tensor_only(rng, dtype, device):
    for i, (shape, layout) in enumerate(LAYOUT_PLANS[:4]):
        yield SampleInput((qarr(rng, shape, QDTYPES[i % 3], layout, scale=0.03 * (i + 1)),), desc=layout)


def per_channel_only(rng, dtype, device):
    yield SampleInput((qchan(rng, (3, 4), 0),), desc="axis 0")
    yield SampleInput((qchan(rng, (2, 5), 1, ow.quint8),), desc="axis 1")


def accessor_errors(kind):
    def errors(rng, dtype):
        other = qchan(rng, (2, 3), 0) if kind == "tensor" else qarr(rng, (2, 3), ow.quint8)
        yield ErrorInput(SampleInput((other,)), ValueError)
        yield ErrorInput(SampleInput((arr(rng, (2, 3), ow.float32),)), TypeError, "quantized")

    return errors


def make_tensor_samples(rng, dtype, device):
    for shape, layout in LAYOUT_PLANS:
        yield SampleInput((arr(rng, shape, dtype, layout), 0.1, 3), desc=layout)


def make_channel_samples(rng, dtype, device):
    for shape, axis in (((3, 4), 0), ((2, 5), 1)):
        n = shape[axis]
        s = Arr(np.array([0.1 * (j + 1) for j in range(n)]), ow.float64)
        yield SampleInput((arr(rng, shape, dtype), s, Arr(np.arange(n) % 2, ow.int64), axis), desc=f"axis {axis}")


def np_fake(x, scale, zero_point, quant_min, quant_max):
    """PyTorch's fake quantization in float32 (multiply by the float32 inverse scale), NaN propagating."""
    s = np.asarray(scale).astype(F32)
    inv = (F32(1.0) / s).astype(F32)
    with np.errstate(all="ignore"):
        r = np.rint(np.asarray(x).astype(F32) * inv).astype(np.float64)
        q = np.clip(r + np.asarray(zero_point, np.float64), quant_min, quant_max)
        return (q - np.asarray(zero_point, np.float64)).astype(F32) * s


def fake_samples(rng, dtype, device):
    for i, (shape, layout) in enumerate(LAYOUT_PLANS):
        yield SampleInput((arr(rng, shape, dtype, layout, specials=i == 0), 0.125, 3, 0, 255), desc=layout)
    yield SampleInput((Arr(_ties(0.25), dtype), 0.25, 0, -128, 127), desc="ties")
    yield SampleInput((arr(rng, (3, 4), dtype, domain="any"), 0.5, 0, -2, 2), desc="narrow range saturates")


def fake_oracle(x, scale, zero_point, quant_min, quant_max):
    return np_fake(x, scale, zero_point, quant_min, quant_max)


def fake_errors(rng, dtype):
    x = arr(rng, (2, 3), dtype)
    yield ErrorInput(SampleInput((x, 0.1, 0, 5, 2)), ValueError, "quant_min")
    yield ErrorInput(SampleInput((x, 0.1, 9, 0, 5)), ValueError, "zero_point")
    yield ErrorInput(SampleInput((x, -1.0, 0, 0, 5)), ValueError, "scale")


def fake_tq_samples(rng, dtype, device):
    for s in fake_samples(rng, dtype, device):
        x, scale, zp, lo, hi = s.args
        yield SampleInput((x, Arr(np.array(scale), ow.float32), Arr(np.array(zp), ow.int32), lo, hi), desc=s.desc)


def fake_channel_samples(rng, dtype, device):
    for i, (shape, axis, layout) in enumerate(
        [((3, 4), 0, "contiguous"), ((2, 5), 1, "transposed"), ((2, 3, 4), 1, "strided")]
    ):
        n = shape[axis]
        s = Arr(np.array([0.05 * (j + 1) for j in range(n)]), ow.float32)
        z = Arr(np.array([j % 3 for j in range(n)]), ow.int32)
        yield SampleInput((arr(rng, shape, dtype, layout, specials=i == 0), s, z, axis, 0, 255), desc=layout)


def fake_channel_oracle(x, scale, zero_point, axis, quant_min, quant_max):
    shape = [1] * x.ndim
    shape[axis] = -1
    return np_fake(x, scale.reshape(shape), zero_point.reshape(shape), quant_min, quant_max)


FAKE_TOL = {"float16": (1e-3, 1e-3), "bfloat16": (8e-3, 8e-3)}

register(
    OpInfo("quantize_per_tensor", quantize_samples, quantize_oracle, FLOAT, error_inputs=quantize_errors),
    OpInfo("quantize_per_tensor.tensor_qparams", quantize_tq_samples, quantize_tq_oracle, FLOAT, data_dependent=True),
    OpInfo(
        "quantize_per_channel",
        per_channel_samples,
        per_channel_oracle,
        FLOAT,
        error_inputs=per_channel_errors,
        data_dependent=True,
    ),
    OpInfo("dequantize.self", dequantize_samples, dequantize_oracle),
    OpInfo("q_scale", per_tensor_only, lambda q: float(q.scale), error_inputs=accessor_errors("tensor")),
    OpInfo("q_zero_point", per_tensor_only, lambda q: int(q.zero_point), error_inputs=accessor_errors("tensor")),
    OpInfo("qscheme", per_tensor_only, lambda q: 0 if q.axis is None else 1),
    OpInfo("int_repr", per_tensor_only, lambda q: q.ints),
    OpInfo(
        "q_per_channel_scales", per_channel_only, lambda q: q.scale.reshape(-1), error_inputs=accessor_errors("channel")
    ),
    OpInfo(
        "q_per_channel_zero_points",
        per_channel_only,
        lambda q: q.zero_point.reshape(-1),
        error_inputs=accessor_errors("channel"),
    ),
    OpInfo("q_per_channel_axis", per_channel_only, lambda q: q.axis, error_inputs=accessor_errors("channel")),
    OpInfo("_make_per_tensor_quantized_tensor", make_tensor_samples, lambda x, s, z: x, (ow.int8, ow.uint8, ow.int32)),
    OpInfo(
        "_make_per_channel_quantized_tensor",
        make_channel_samples,
        lambda x, s, z, axis: x,
        (ow.int8, ow.uint8, ow.int32),
        data_dependent=True,
    ),
    OpInfo("fake_quantize_per_tensor_affine", fake_samples, fake_oracle, FLOAT, FAKE_TOL, error_inputs=fake_errors),
    OpInfo(
        "fake_quantize_per_tensor_affine.tensor_qparams",
        fake_tq_samples,
        fake_oracle,
        FLOAT,
        FAKE_TOL,
        data_dependent=True,
    ),
    OpInfo(
        "fake_quantize_per_channel_affine",
        fake_channel_samples,
        fake_channel_oracle,
        FLOAT,
        FAKE_TOL,
        data_dependent=True,
    ),
)

from . import quantized_library  # noqa: E402,F401  (the quantized:: entries)
