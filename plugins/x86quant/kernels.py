"""The x86 engine's kernels at (Quantized, "cpu"): oneDNN int8 linear, convolution and matmul; fused add/relu.

Each kernel serves a call when ``opweave.backends.quantized.engine`` is ``"x86"`` and the
arguments are a case it handles; otherwise it calls the reference kernel
(``opweave.quantization.reference``), which also raises the errors for invalid arguments, so
both engines reject the same inputs with the same messages.

Agreement with the reference (see ``docs/x86quant.md``):

- linear, linear_relu, conv1d/conv2d (+relu), matmul: the int32 accumulators are exact in both;
  oneDNN requantizes in float32 where the reference uses float64, so an output may differ by
  one quantization step where ``acc * sx * sw / sy + bias / sy`` lies within float32 rounding
  of a half-integer;
- linear_dynamic: the activation is quantized exactly as the reference does (same parameters,
  same integers); the float32 output ``acc * sx * sw + bias`` is computed in float32 (the
  reference rounds a float64 result), a relative difference of a few float32 ulps;
- add, add_relu, relu: the reference's float32 formula (relu: ``max(q, zero_point)``) in one
  NumPy pass, bit-identical.
"""

from __future__ import annotations

import math

import numpy as np
import opweave
from opweave.backends.kernel import QParams, int_view, make_quantized, qparams, qrange
from opweave.quantization import ConvPackedParams, LinearPackedParams, get_engine, reference

from ._onednn import ARG_DST, ARG_SRC, ARG_WEIGHTS
from ._prepack import ENGINE, conv_pack, linear_pack
from ._primitives import LRU, Quantization, matmul_executable

QUINT8, QINT8 = opweave.quint8, opweave.qint8
_STORAGE = {QUINT8: np.uint8, QINT8: np.int8}
_QRANGE = {QUINT8: qrange(QUINT8), QINT8: qrange(QINT8)}
_F32_NORMAL = (float(np.finfo(np.float32).tiny), float(np.finfo(np.float32).max))


def active() -> bool:
    """Whether the selected quantized engine is this plugin's."""
    return get_engine() == ENGINE


# -- argument checks: False sends the call to the reference ------------------------------------------------


def _per_tensor_cpu(t, dtypes) -> bool:
    qp = qparams(t) if isinstance(t, opweave.Tensor) else None
    return qp is not None and not qp.per_channel_scheme and t.dtype in dtypes and t.device.type == "cpu"


def _output_ok(scale, zero_point, dtype) -> bool:
    """A scale oneDNN can take as a normal float32 and a zero point in the dtype's range."""
    if not isinstance(scale, (int, float)) or not _F32_NORMAL[0] <= scale <= _F32_NORMAL[1]:
        return False
    lo, hi = _QRANGE[dtype]
    return isinstance(zero_point, int) and lo <= zero_point <= hi


def _ints(q) -> np.ndarray:
    """The integer representation of CPU quantized ``q`` as a NumPy view (no copy)."""
    return int_view(q).numpy()


def _dense(a) -> np.ndarray:
    """``a`` as a C-contiguous array, 0-dim kept (``np.ascontiguousarray`` would make it 1-dim)."""
    return np.asarray(a, order="C")


def _quantized(array: np.ndarray, scale: float, zero_point: int, dtype):
    """A per-tensor quantized CPU tensor over the NumPy result ``array``."""
    return make_quantized(opweave.from_numpy(array), QParams.per_tensor(scale, zero_point), dtype)


# -- linear ---------------------------------------------------------------------------------------------------


def _linear_kernel(relu: bool, fallback):
    def kernel(keyset, X, W_prepack, Y_scale_i, Y_zero_point_i):
        if (
            not active()
            or not isinstance(W_prepack, LinearPackedParams)
            or W_prepack.weight.device.type != "cpu"
            or not _per_tensor_cpu(X, (QUINT8,))
            or X.ndim < 1
            or X.shape[-1] != W_prepack.in_features
            or not _output_ok(Y_scale_i, Y_zero_point_i, QUINT8)
        ):
            return fallback(X, W_prepack, Y_scale_i, Y_zero_point_i)
        pack = linear_pack(W_prepack)
        if not pack.supported:
            return fallback(X, W_prepack, Y_scale_i, Y_zero_point_i)
        qx = qparams(X)
        x = _ints(X).reshape(-1, pack.in_features)
        y = pack.run(x, qx.scale, qx.zero_point, np.uint8, Y_scale_i, Y_zero_point_i, relu)
        return _quantized(y.reshape(*X.shape[:-1], pack.out_features), Y_scale_i, Y_zero_point_i, QUINT8)

    kernel.__doc__ = f"x86 ``quantized::linear{'_relu' if relu else ''}``: oneDNN u8 x s8 with requantization."
    return kernel


def linear_dynamic(keyset, X, W_prepack, reduce_range=False):
    """x86 ``quantized::linear_dynamic``: ``X`` quantized as the reference does, oneDNN u8 x s8 -> float32."""
    fallback = reference.linear_dynamic
    if (
        not active()
        or not isinstance(W_prepack, LinearPackedParams)
        or W_prepack.weight.device.type != "cpu"
        or not isinstance(X, opweave.Tensor)
        or X.is_quantized
        or X.dtype not in (opweave.float32, opweave.float64, opweave.float16, opweave.bfloat16)
        or X.device.type != "cpu"
        or X.ndim < 1
        or X.shape[-1] != W_prepack.in_features
        or X.numel() == 0
    ):
        return fallback(X, W_prepack, reduce_range)
    pack = linear_pack(W_prepack)
    if not pack.supported:
        return fallback(X, W_prepack, reduce_range)
    x = X.numpy() if X.dtype is opweave.float32 else X.to(opweave.float32).numpy()
    lo, hi = float(x.min()), float(x.max())
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return fallback(X, W_prepack, reduce_range)
    if X.dtype is not opweave.float32:  # the reference takes min/max in X's own dtype
        lo, hi = float(opweave.amin(X).item()), float(opweave.amax(X).item())
    scale, zp = reference.choose_qparams(lo, hi, 0, 127 if reduce_range else 255)
    q = np.rint(x.reshape(-1, pack.in_features) / np.float32(scale))
    q = np.clip(q + zp, 0, 255).astype(np.uint8)
    y = pack.run(q, scale, zp, np.float32)
    return opweave.from_numpy(y.reshape(*X.shape[:-1], pack.out_features))


def linear_prepack(keyset, W, B=None):
    """x86 ``quantized::linear_prepack``: the reference's packed object, with oneDNN's weight form made now."""
    params = reference.linear_prepack(W, B)
    if active() and W.device.type == "cpu":
        linear_pack(params, prepare=True)
    return params


# -- convolution -------------------------------------------------------------------------------------------------


def _conv_output_dims(x_shape, params) -> list:
    kernel = params.weight.shape[2:]
    return [
        (size + 2 * pad - dil * (k - 1) - 1) // st + 1
        for size, k, st, pad, dil in zip(x_shape[2:], kernel, params.stride, params.padding, params.dilation)
    ]


def _conv_kernel(dims: int, relu: bool, fallback):
    def kernel(keyset, qx, packed_weight, output_scale, output_zero_point):
        params = packed_weight
        if (
            not active()
            or not isinstance(params, ConvPackedParams)
            or params.dims != dims
            or params.transpose
            or any(params.output_padding)
            or params.weight.device.type != "cpu"
            or not _per_tensor_cpu(qx, (QUINT8,))
            or qx.ndim != dims + 2
            or qx.shape[1] != params.weight.shape[1] * params.groups
            or qx.shape[0] == 0
            or min(qx.shape[1:]) == 0
            or min(_conv_output_dims(qx.shape, params)) < 1
            or not _output_ok(output_scale, output_zero_point, QUINT8)
        ):
            return fallback(qx, packed_weight, output_scale, output_zero_point)
        pack = conv_pack(params)
        if not pack.supported:
            return fallback(qx, packed_weight, output_scale, output_zero_point)
        qp = qparams(qx)
        x = _ints(qx)
        y = pack.run(x, qp.scale, qp.zero_point, output_scale, output_zero_point, relu)
        return _quantized(y, output_scale, output_zero_point, QUINT8)

    kernel.__doc__ = f"x86 ``quantized::conv{dims}d{'_relu' if relu else ''}``: oneDNN int8 convolution."
    return kernel


def conv_prepack_kernel(dims: int, fallback):
    """x86 ``quantized::conv{1,2}d_prepack``: the reference's packed object, with oneDNN's form made now."""

    def kernel(keyset, weight, bias, stride, padding, dilation, groups):
        params = fallback(weight, bias, stride, padding, dilation, groups)
        if active() and weight.device.type == "cpu":
            conv_pack(params)
        return params

    kernel.__doc__ = conv_prepack_kernel.__doc__.replace("{1,2}", str(dims))
    return kernel


# -- matmul ---------------------------------------------------------------------------------------------------------

_matmuls = LRU(64)


def _as_s8(ints: np.ndarray, zero_point: int, dtype) -> tuple[np.ndarray, int]:
    """Integers as int8 with their zero point (quint8 ``v`` with ``z`` is int8 ``v - 128`` with ``z - 128``)."""
    if dtype is QINT8:
        return ints, zero_point
    return (ints.view(np.int8) ^ np.int8(-128)), zero_point - 128


def matmul(keyset, qa, qb, scale, zero_point):
    """x86 ``quantized::matmul``: oneDNN int8 matmul (batched, broadcast) requantized to ``qa``'s dtype."""
    fallback = reference.matmul
    if (
        not active()
        or not _per_tensor_cpu(qa, (QUINT8, QINT8))
        or not _per_tensor_cpu(qb, (qa.dtype,))
        or qa.ndim < 2
        or qb.ndim < 2
        or qa.shape[-1] != qb.shape[-2]
        or qa.shape[-1] == 0
        or not _output_ok(scale, zero_point, qa.dtype)
    ):
        return fallback(qa, qb, scale, zero_point)
    try:
        batch = np.broadcast_shapes(tuple(qa.shape[:-2]), tuple(qb.shape[:-2]))
    except ValueError:
        return fallback(qa, qb, scale, zero_point)
    pa, pb = qparams(qa), qparams(qb)
    a = np.ascontiguousarray(np.broadcast_to(_ints(qa), (*batch, *qa.shape[-2:])))
    b, zb = _as_s8(np.ascontiguousarray(np.broadcast_to(_ints(qb), (*batch, *qb.shape[-2:]))), pb.zero_point, qb.dtype)
    out_dtype = _STORAGE[qa.dtype]
    out = np.empty((*batch, a.shape[-2], b.shape[-1]), out_dtype)
    if out.size:
        quant = Quantization(0, 1, zb != 0, True)
        key = (a.shape, a.dtype.str, b.shape, np.dtype(out_dtype).str, zb != 0)

        def make():
            return matmul_executable(a.shape, a.dtype, b.shape, None, out_dtype, quant, False, False, False)

        exe = _matmuls.get_or_make(key, make)
        buffers = quant.buffers(pa.scale, pa.zero_point, [pb.scale], zb, scale, zero_point)
        buffers.update({ARG_SRC: a, ARG_WEIGHTS: b, ARG_DST: out})
        exe.run(buffers)
    return _quantized(out, scale, zero_point, qa.dtype)


# -- elementwise: the reference's float32 formula in one pass ---------------------------------------------------


def _dequantized(q) -> np.ndarray:
    qp = qparams(q)
    return (_ints(q).astype(np.int32) - np.int32(qp.zero_point)).astype(np.float32) * np.float32(qp.scale)


def _requantized(y: np.ndarray, scale: float, zero_point: int, dtype) -> np.ndarray:
    lo, hi = _QRANGE[dtype]
    with np.errstate(invalid="ignore", over="ignore"):
        v = np.rint(y / np.float32(scale)).astype(np.float64) + zero_point
    v = np.nan_to_num(np.clip(v, lo, hi), nan=float(zero_point))
    return v.astype(_STORAGE[dtype])


def _add_kernel(relu: bool, fallback):
    def kernel(keyset, qa, qb, scale, zero_point):
        if (
            not active()
            or not _per_tensor_cpu(qa, (QUINT8, QINT8))
            or not _per_tensor_cpu(qb, (qa.dtype,))
            or not _output_ok(scale, zero_point, qa.dtype)
        ):
            return fallback(qa, qb, scale, zero_point)
        try:
            np.broadcast_shapes(tuple(qa.shape), tuple(qb.shape))
        except ValueError:
            return fallback(qa, qb, scale, zero_point)
        with np.errstate(invalid="ignore", over="ignore"):
            y = _dequantized(qa) + _dequantized(qb)
            if relu:
                y = np.maximum(y, np.float32(0))
        return _quantized(_dense(_requantized(y, scale, zero_point, qa.dtype)), scale, zero_point, qa.dtype)

    kernel.__doc__ = f"x86 ``quantized::add{'_relu' if relu else ''}``: the reference's float32 formula in one pass."
    return kernel


def relu(keyset, self):
    """x86 ``relu`` of a per-tensor quantized CPU tensor: ``max(q, zero_point)`` (exact)."""
    if not active() or not _per_tensor_cpu(self, (QUINT8, QINT8)):
        return reference.relu(self)
    qp = qparams(self)
    ints = _ints(self)
    out = np.maximum(ints, ints.dtype.type(qp.zero_point))
    return _quantized(_dense(out), qp.scale, qp.zero_point, self.dtype)


#: op name -> kernel, registered at (Quantized, "cpu").
KERNELS = {
    "quantized::linear": _linear_kernel(False, reference.linear),
    "quantized::linear_relu": _linear_kernel(True, reference.linear_relu),
    "quantized::linear_dynamic": linear_dynamic,
    "quantized::linear_prepack": linear_prepack,
    "quantized::conv1d": _conv_kernel(1, False, reference.conv1d),
    "quantized::conv1d_relu": _conv_kernel(1, True, reference.conv1d_relu),
    "quantized::conv2d": _conv_kernel(2, False, reference.conv2d),
    "quantized::conv2d_relu": _conv_kernel(2, True, reference.conv2d_relu),
    "quantized::conv1d_prepack": conv_prepack_kernel(1, reference.conv1d_prepack),
    "quantized::conv2d_prepack": conv_prepack_kernel(2, reference.conv2d_prepack),
    "quantized::matmul": matmul,
    "quantized::add": _add_kernel(False, reference.add),
    "quantized::add_relu": _add_kernel(True, reference.add_relu),
    "relu": relu,
}


def register(registry) -> None:
    """Register every kernel of :data:`KERNELS` at (Quantized, "cpu")."""
    from opweave.dispatch import Layer

    for name, fn in KERNELS.items():
        registry.impl(name, fn, backend="cpu", layer=Layer.Quantized)
