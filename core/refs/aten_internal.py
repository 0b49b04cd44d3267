"""ATen's internal ops that PyTorch's op database exercises: backward helpers, masked indexing, chunk-cat.

``_softmax_backward_data`` and ``native_dropout_backward`` are the closed-form gradients of
softmax/log-softmax and dropout; ``_unsafe_masked_index`` reads ``self[indices]`` where ``mask``
is set (``fill`` elsewhere, indices clamped into range so masked-out ones never fault) and
``_unsafe_masked_index_put_accumulate`` is its adjoint; ``_chunk_cat`` splits each tensor into
``num_chunks`` zero-padded chunks along ``dim`` and concatenates chunk by chunk;
``_batch_norm_with_update`` is training-mode batch norm that updates the running stats in place.
"""

from __future__ import annotations

import math

from .. import _dtype
from .._ops import canonical as ops
from ._utils import define_with_variants, wrap_dim


def softmax_backward_data(grad_output, output, dim, input_dtype):
    """The gradient of ``softmax`` (from its ``output``) or, when ``output`` came from log_softmax, of that.

    ATen's rule: ``output * (grad - sum(grad * output, dim))``; for log-softmax outputs use
    ``_log_softmax_backward_data``. The result has ``input_dtype``.
    """
    op = "_softmax_backward_data"
    if grad_output.shape != output.shape:
        raise ValueError(f"{op}: grad_output {list(grad_output.shape)} and output {list(output.shape)} differ")
    d = wrap_dim(op, dim, output.ndim)
    inner = ops.sum(ops.mul(grad_output, output), [d], True)
    return ops.mul(output, ops.sub(grad_output, inner)).to(input_dtype)


def native_dropout_backward(grad_output, mask, scale):
    """``grad_output * mask * scale``: the gradient of ``native_dropout`` given its mask."""
    if mask.dtype is not _dtype.bool_:
        raise TypeError(f"native_dropout_backward: argument 'mask' must be bool, got {mask.dtype.name}")
    return ops.mul(ops.mul(grad_output, mask.to(grad_output.dtype)), scale)


def _clamped(op, self, indices):
    out = []
    for i, index in enumerate(indices):
        if index is None:
            out.append(None)
            continue
        if index.dtype not in (_dtype.int64, _dtype.int32):
            raise TypeError(f"{op}: expected indices of dtype int64 or int32, got {index.dtype.name}")
        size = self.shape[i]
        out.append(ops.clamp(index, -size, size - 1) if size else index)
    return out


def unsafe_masked_index(self, mask, indices, fill):
    """``where(mask, self[indices], fill)``, with indices clamped into range so masked-out ones are safe."""
    op = "_unsafe_masked_index"
    if mask.dtype is not _dtype.bool_:
        raise TypeError(f"{op}: expected a bool 'mask', got {mask.dtype.name}")
    if any(i is not None and i.numel() == 0 for i in indices) or any(s == 0 for s in self.shape):
        return ops.full(tuple(mask.shape), fill, dtype=self.dtype, device=self.device)
    gathered = ops.index(self, _clamped(op, self, indices))
    return ops.masked_fill(gathered, ops.logical_not(mask), fill)


def unsafe_masked_index_put_accumulate(self, mask, indices, values):
    """``index_put(self, indices, values where mask else 0, accumulate=True)``, indices clamped into range."""
    op = "_unsafe_masked_index_put_accumulate"
    if mask.dtype is not _dtype.bool_:
        raise TypeError(f"{op}: expected a bool 'mask', got {mask.dtype.name}")
    if any(i is not None and i.numel() == 0 for i in indices) or any(s == 0 for s in self.shape):
        return ops.clone(self)
    masked = ops.masked_fill(values, ops.logical_not(mask), 0)
    return ops.index_put(self, _clamped(op, self, indices), masked, True)


def chunk_cat(tensors, dim, num_chunks):
    """Each tensor split into ``num_chunks`` zero-padded chunks along ``dim``; chunk ``i`` of all, concatenated."""
    op = "_chunk_cat"
    if not tensors:
        raise ValueError(f"{op}: expected a non-empty list of tensors")
    if num_chunks < 1:
        raise ValueError(f"{op}: expected a positive number of chunks, got {num_chunks}")
    first = tensors[0]
    if first.ndim == 0:
        raise ValueError(f"{op}: expected tensors with at least one dim")
    d = wrap_dim(op, dim, first.ndim)
    pieces = []
    for t in tensors:
        if t.ndim <= d or t.shape[:d] != first.shape[:d]:
            raise ValueError(
                f"{op}: tensors must share their leading {d} dims, got {list(first.shape)}, {list(t.shape)}"
            )
        if t.dtype is not first.dtype:
            raise TypeError(f"{op}: expected tensors of one dtype, got {first.dtype.name} and {t.dtype.name}")
        if t.numel() == 0:
            raise ValueError(f"{op}: expects non-empty tensors, got one of shape {list(t.shape)}")
        size = t.shape[d]
        chunk = math.ceil(size / num_chunks)
        if chunk * num_chunks != size:
            t = ops.constant_pad_nd(t, [0, 0] * (t.ndim - d - 1) + [0, chunk * num_chunks - size], 0)
        trailing = math.prod(t.shape[d + 1 :])
        pieces.append(ops.reshape(t, tuple(t.shape[:d]) + (num_chunks, chunk * trailing)))
    return ops.cat(pieces, d + 1)


def batch_norm_with_update(input, weight, bias, running_mean, running_var, momentum, eps):  # noqa: A002
    """Training-mode batch norm updating ``running_mean``/``running_var`` in place: (out, mean, invstd, reserve)."""
    out, mean, invstd = ops._native_batch_norm_legit(
        input, weight, bias, running_mean, running_var, True, momentum, eps
    )
    reserve = ops.empty((0,), dtype=_dtype.uint8, device=input.device)
    return out, mean, invstd, reserve


DEFS = [
    (
        "_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor",
        softmax_backward_data,
        True,
    ),
    ("native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor", native_dropout_backward, True),
    (
        "_unsafe_masked_index(Tensor self, Tensor mask, Tensor?[] indices, Scalar fill) -> Tensor",
        unsafe_masked_index,
        False,
    ),
    (
        "_unsafe_masked_index_put_accumulate(Tensor self, Tensor mask, Tensor?[] indices, Tensor values) -> Tensor",
        unsafe_masked_index_put_accumulate,
        False,
    ),
    ("_chunk_cat(Tensor[] tensors, int dim, int num_chunks) -> Tensor", chunk_cat, True),
]

for _schema, _fn, _out in DEFS:
    define_with_variants(_schema, _fn, inplace=False, out=_out)
define_with_variants(
    "_batch_norm_with_update(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, "
    "Tensor(b!) running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor, Tensor)",
    batch_norm_with_update,
    inplace=False,
    out=False,
)


_SEGMENT_IDENTITY = {"sum": 0.0, "prod": 1.0, "max": -math.inf, "min": math.inf, "mean": math.nan}


def segment_reduce(data, reduce, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    """Reduce consecutive segments of ``data`` along ``axis`` (lengths or offsets give their extents).

    ``reduce`` is sum, prod, max, min or mean; ``initial`` takes part in every segment (mean:
    ``(initial + sum) / length``) and is the value of an empty one, else its identity (NaN for mean).
    Segment extents are read on the host (1-D ``lengths``/``offsets``).
    """
    op = "_segment_reduce"
    if reduce not in _SEGMENT_IDENTITY:
        raise ValueError(f"{op}: reduce must be one of {sorted(_SEGMENT_IDENTITY)}, got {reduce!r}")
    if indices is not None:
        raise NotImplementedError(f"{op}: 'indices' is not supported (as in PyTorch); pass lengths or offsets")
    if (lengths is None) == (offsets is None):
        raise ValueError(f"{op}: expected exactly one of 'lengths' and 'offsets'")
    extents = lengths if lengths is not None else offsets
    if extents.ndim != 1:
        raise NotImplementedError(f"{op}: only 1-D lengths/offsets are supported, got {extents.ndim}-D")
    axis = wrap_dim(op, axis, data.ndim)
    if "meta" in (extents.device.type, data.device.type):
        raise NotImplementedError(f"{op}: segment extents are data; a meta tensor has none")
    values = [int(v) for v in extents.tolist()]
    if lengths is not None:
        if any(v < 0 for v in values) or sum(values) != data.shape[axis]:
            raise ValueError(f"{op}: lengths must be non-negative and sum to {data.shape[axis]}, got {values}")
        starts = [sum(values[:k]) for k in range(len(values))]
        bounds = list(zip(starts, [s + n for s, n in zip(starts, values)]))
    else:
        bounds = list(zip(values[:-1], values[1:]))
    fill = _SEGMENT_IDENTITY[reduce] if initial is None else initial
    slice_shape = tuple(data.shape[:axis]) + tuple(data.shape[axis + 1 :])
    pieces = []
    for start, end in bounds:
        if end <= start:
            pieces.append(ops.full(slice_shape, fill, dtype=data.dtype, device=data.device))
            continue
        seg = ops.narrow(data, axis, start, end - start)
        if reduce in ("sum", "mean"):
            out = ops.sum(seg, [axis])
        elif reduce == "prod":
            out = ops.prod(seg, axis)
        else:
            out = (ops.amax if reduce == "max" else ops.amin)(seg, [axis])
        if initial is not None:
            init = ops.full(slice_shape, initial, dtype=data.dtype, device=data.device)
            combine = {"sum": ops.add, "mean": ops.add, "prod": ops.mul, "max": ops.maximum, "min": ops.minimum}
            out = combine[reduce](out, init)
        if reduce == "mean":
            out = ops.div(out, end - start)
        pieces.append(out)
    return (
        ops.stack(pieces, axis)
        if pieces
        else ops.empty(slice_shape[:axis] + (0,) + slice_shape[axis:], dtype=data.dtype)
    )


define_with_variants(
    "_segment_reduce(Tensor data, str reduce, *, Tensor? lengths=None, Tensor? indices=None, Tensor? offsets=None, "
    "int axis=0, bool unsafe=False, Scalar? initial=None) -> Tensor",
    segment_reduce,
    tags=("data_dependent_output",),
    inplace=False,
    out=False,
)
