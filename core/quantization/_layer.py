"""Kernels at the Quantized layer for every backend: accessors, views, copies, and a clear error for the rest.

Each kernel works on the integer representation (a Dense view sharing the storage,
see ``opweave._quantized.int_view``) and wraps the result again, so backends only ever
see integer tensors. Views keep the quantization parameters; for per-channel tensors
the channel axis follows the view:

- permutations, broadcasts, ``expand_dims``/``squeeze`` of other dims and reshapes that
  keep the channel dim move the axis;
- slicing along the axis slices the scales and zero points;
- removing the channel dim (selecting one channel, squeezing a size-1 channel dim) leaves
  a per-tensor quantized tensor with that channel's scale and zero point;
- views that merge or split the channel dim with others, ``unfold``/``diagonal`` over it,
  ``as_strided`` that does not keep it, and dtype reinterpretation raise ValueError
  naming the prim.

Other ops on quantized tensors raise NotImplementedError naming the op, pointing to
``dequantize()`` and the ``quantized::`` ops, instead of running a float decomposition
on integers. Canonical view and shape ops (tag ``view`` or listed in
:data:`SHAPE_OPS`) decompose into the view prims handled here.
"""

from __future__ import annotations

from .. import _dtype
from .._ops import canonical as ops
from .._ops import lookup, prims
from .._quantized import QParams, int_view, make_quantized, qparams_of
from ..library import core_library

_LIB = core_library("core")

#: Canonical ops that are not views but only move or copy elements (they run their decomposition).
SHAPE_OPS = frozenset(
    {
        "reshape",
        "flatten",
        "unflatten",
        "contiguous",
        "clone",
        "_to_copy",
        "to",
        "copy_",
        "split",
        "chunk",
        "unbind",
        "narrow_copy",
        "reshape_as",
        "view_as",
        "movedim",
        "moveaxis",
        "swapaxes",
        "swapdims",
    }
)


def _rewrap(q, out, qparams):
    return make_quantized(out, qparams, q.dtype)


def _moved_axis(q, mapping):
    """Qparams of a view whose output dim for input dim ``d`` is ``mapping(d)`` (None: dim removed)."""
    qp = q._qparams
    if not qp.per_channel_scheme:
        return qp
    new = mapping(qp.axis)
    if new is None:
        if len(qp.scales) != 1:
            raise ValueError("quantized view: the channel dim cannot be removed unless it has size 1")
        return qp.channel(0)
    return qp.with_axis(new)


def _view_error(name: str, what: str):
    return ValueError(f"prims::{name}: {what} of a per-channel quantized tensor's channel dim is not supported")


def _transpose(q, permutation):
    return _moved_axis(q, lambda axis: list(permutation).index(axis))


def _broadcast_in_dim(q, shape, broadcast_dimensions):
    return _moved_axis(q, lambda axis: broadcast_dimensions[axis])


def _collapse_view(q, start, end):
    def mapping(axis):
        if axis < start:
            return axis
        if axis >= end:
            return axis - (end - start - 1)
        if all(q.shape[d] == 1 for d in range(start, end) if d != axis):
            return start
        raise _view_error("collapse_view", "merging")

    return _moved_axis(q, mapping)


def _expand_dims(q, dimensions, ndim=None):
    out_ndim = q.ndim + len(dimensions)
    inserted = {d % out_ndim for d in dimensions}
    kept = [d for d in range(out_ndim) if d not in inserted]
    return _moved_axis(q, lambda axis: kept[axis])


def _slice(q, start_indices, limit_indices, strides=None):
    qp = q._qparams
    if not qp.per_channel_scheme:
        return qp
    step = strides[qp.axis] if strides else 1
    return qp.channel_slice(start_indices[qp.axis], limit_indices[qp.axis], step)


def _slice_in_dim(q, start_index, limit_index, stride=1, axis=0):
    qp = q._qparams
    if not qp.per_channel_scheme or axis % max(q.ndim, 1) != qp.axis:
        return qp
    n = q.shape[qp.axis]
    start, stop = min(max(start_index, 0), n), min(max(limit_index, 0), n)
    return qp.channel_slice(start, stop, stride)


def _split_dim(q, dim, outer_length):
    def mapping(axis):
        if axis < dim:
            return axis
        if axis > dim:
            return axis + 1
        if outer_length == 1:
            return axis + 1
        if outer_length == q.shape[dim]:
            return axis
        raise _view_error("split_dim", "splitting")

    return _moved_axis(q, mapping)


def _squeeze(q, dimensions):
    removed = {d % max(q.ndim, 1) for d in dimensions}

    def mapping(axis):
        if axis in removed:
            return None
        return axis - sum(1 for d in removed if d < axis)

    return _moved_axis(q, mapping)


def _same(q, *args):
    return q._qparams


def _unfold(q, dimension, size, step):
    qp = q._qparams
    if qp.per_channel_scheme and dimension % max(q.ndim, 1) == qp.axis:
        raise _view_error("unfold", "unfolding")
    return qp


def _diagonal(q, offset=0, dim1=0, dim2=1):
    qp = q._qparams
    if not qp.per_channel_scheme:
        return qp
    d1, d2 = dim1 % q.ndim, dim2 % q.ndim
    if qp.axis in (d1, d2):
        raise _view_error("diagonal", "taking the diagonal")
    return qp.with_axis(qp.axis - sum(1 for d in (d1, d2) if d < qp.axis))


def _as_strided(q, size, stride, storage_offset):
    """The channel of every element of the new view, from its storage position; it must vary along one dim."""
    import numpy as np

    qp = q._qparams
    if not qp.per_channel_scheme:
        return qp
    positions = np.full(tuple(size), storage_offset - q.storage_offset(), dtype=np.int64)
    for d, (n, st) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        positions = positions + (np.arange(n, dtype=np.int64) * st).reshape(shape)
    channels, rest = None, positions
    for d in sorted(range(q.ndim), key=lambda k: -q.stride()[k]):
        n, st = q.shape[d], q.stride()[d]
        if n == 1 or st == 0:
            index = np.zeros_like(rest)
        else:
            index, rest = np.divmod(rest, st)
            if np.any(index >= n) or np.any(index < 0):
                raise _view_error("as_strided", "a restriding outside the elements")
        if d == qp.axis:
            channels = index
    if np.any(rest != 0):
        raise _view_error("as_strided", "a restriding between the elements")
    if channels.size == 0 or np.all(channels == channels.flat[0]):
        first = int(channels.flat[0]) if channels.size else 0
        if len(size) == q.ndim and size[qp.axis] <= 1:  # a slice keeping a single (or no) channel
            count = size[qp.axis]
            return QParams(
                qp.qscheme, None, None, qp.scales[first : first + count], qp.zero_points[first : first + count], qp.axis
            )
        return qp.channel(first)
    varying = [d for d in range(channels.ndim) if np.any(np.diff(channels, axis=d) != 0)]
    if len(varying) != 1:
        raise _view_error("as_strided", "mixing")
    d = varying[0]
    along = np.moveaxis(channels, d, 0).reshape(channels.shape[d], -1)
    if np.any(along != along[:, :1]):
        raise _view_error("as_strided", "mixing")
    picked = [int(c) for c in along[:, 0]]
    return QParams(
        qp.qscheme, None, None, tuple(qp.scales[c] for c in picked), tuple(qp.zero_points[c] for c in picked), d
    )


def _refuse_dtype_view(name):
    def rule(q, *args):
        raise TypeError(f"prims::{name}: cannot reinterpret a quantized tensor; use int_repr() first")

    return rule


VIEW_RULES = {
    "transpose": _transpose,
    "broadcast_in_dim": _broadcast_in_dim,
    "collapse_view": _collapse_view,
    "expand_dims": _expand_dims,
    "slice": _slice,
    "slice_in_dim": _slice_in_dim,
    "split_dim": _split_dim,
    "squeeze": _squeeze,
    "view_of": _same,
    "unfold": _unfold,
    "diagonal": _diagonal,
    "as_strided": _as_strided,
    "view_of_dtype": _refuse_dtype_view("view_of_dtype"),
    "view_as_real": _refuse_dtype_view("view_as_real"),
    "view_as_complex": _refuse_dtype_view("view_as_complex"),
}


def _view_kernel(name, rule):
    prim = getattr(prims, name).default

    def kernel(keyset, q, *args):
        qparams = rule(q, *args)
        return _rewrap(q, prim(int_view(q), *args), qparams)

    return kernel


# -- copies -------------------------------------------------------------------------------------


def _clone(keyset, q, memory_format=None):
    return _rewrap(q, prims.clone(int_view(q), memory_format=memory_format), q._qparams)


def _copy_strided(keyset, q, stride):
    return _rewrap(q, prims.copy_strided(int_view(q), stride), q._qparams)


def _device_put(keyset, q, device, non_blocking=False):
    return _rewrap(q, prims.device_put(int_view(q), device, non_blocking), q._qparams)


def _copy_to(keyset, a, b):
    """``a.copy_(b)``: a quantized ``b`` needs ``a``'s dtype and parameters; a float ``b`` is quantized with them."""
    op = "prims::copy_to"
    qa = qparams_of(a, op, "a")
    if b.is_quantized:
        if b.dtype is not a.dtype or b._qparams != qa:
            raise ValueError(f"{op}: copying between quantized tensors needs equal dtypes and quantization parameters")
        prims.copy_to(int_view(a), int_view(b))
        return a
    if not b.dtype.is_floating_point:
        raise TypeError(f"{op}: can only copy a float or an equally quantized tensor into a quantized one")
    from .reference import quantize_like

    prims.copy_to(int_view(a), int_view(quantize_like(b, a)))
    return a


def _item(keyset, q):
    return prims.item(ops.dequantize(q))


# -- accessors ----------------------------------------------------------------------------------


def _per_tensor(op, q):
    qp = q._qparams
    if qp.per_channel_scheme:
        raise ValueError(f"{op}: expected a per-tensor quantized tensor, got {qp.qscheme.name}")
    return qp


def _per_channel(op, q):
    qp = q._qparams
    if not qp.per_channel_scheme:
        raise ValueError(f"{op}: expected a per-channel quantized tensor, got {qp.qscheme.name}")
    return qp


def _dequantize(keyset, q):
    qp = q._qparams
    wide = _dtype.int64 if q.dtype is _dtype.qint32 else _dtype.int32
    ints = ops.to(int_view(q), wide)
    if qp.per_channel_scheme:
        shape = [1] * q.ndim
        shape[qp.axis] = len(qp.scales)
        zp = ops.reshape(_host_tensor(qp.zero_points, wide, q.device), shape)
        scale = ops.reshape(_host_tensor(_f32s(qp.scales), _dtype.float32, q.device), shape)
        return ops.mul(ops.to(ops.sub(ints, zp), _dtype.float32), scale)
    centered = ops.to(ops.sub(ints, qp.zero_point), _dtype.float32)
    return ops.mul(centered, _f32s((qp.scale,))[0])


def _f32s(values):
    import numpy as np

    return [float(v) for v in np.asarray(values, dtype=np.float32)]


def _host_tensor(values, dtype, device):
    from .._factories import tensor

    return tensor(list(values), dtype=dtype, device=device)


ACCESSORS = {
    "dequantize.self": _dequantize,
    "q_scale": lambda keyset, q: _per_tensor("q_scale", q).scale,
    "q_zero_point": lambda keyset, q: _per_tensor("q_zero_point", q).zero_point,
    "q_per_channel_scales": lambda keyset, q: _host_tensor(
        _per_channel("q_per_channel_scales", q).scales, _dtype.float64, q.device
    ),
    "q_per_channel_zero_points": lambda keyset, q: _host_tensor(
        _per_channel("q_per_channel_zero_points", q).zero_points, _dtype.int64, q.device
    ),
    "q_per_channel_axis": lambda keyset, q: _per_channel("q_per_channel_axis", q).axis,
    "int_repr": lambda keyset, q: prims.clone(int_view(q)),
    "qscheme": lambda keyset, q: q._qparams.qscheme,
}


# -- everything else: a clear error ----------------------------------------------------------------


def _fallback(op, keyset, *args):
    """Views and copies decompose into the prims above; any other op refuses quantized tensors."""
    if op.kind == "canonical" and op.decomposition is not None:
        packet = op.schema.name
        if "view" in op.tags or packet in SHAPE_OPS or (op.functional is not None and "view" in op.functional.tags):
            return op.decomposition(*args)
    raise NotImplementedError(
        f"{op.name}: not supported for quantized tensors (no kernel for key Quantized); "
        "dequantize() first, or use the quantized:: ops (opweave.ops.quantized)"
    )


def register() -> None:
    """Register the Quantized-layer kernels of this module for every backend."""
    for name, rule in VIEW_RULES.items():
        op = lookup(f"prims::{name}")
        _LIB.impl(op, _view_kernel(name, rule), "Quantized", with_keyset=True)
    for name, fn in (
        ("clone", _clone),
        ("copy_strided", _copy_strided),
        ("device_put", _device_put),
        ("copy_to", _copy_to),
        ("item", _item),
    ):
        _LIB.impl(lookup(f"prims::{name}"), fn, "Quantized", with_keyset=True)
    for name, fn in ACCESSORS.items():
        _LIB.impl(lookup(name), fn, "Quantized", with_keyset=True)
    _LIB.fallback(_fallback, "Quantized")


__all__ = ["QParams", "SHAPE_OPS", "register"]
