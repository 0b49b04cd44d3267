"""View prims: new metadata over the same storage.

A view prim's meta function *is* its implementation — it only computes shape,
strides and offset — so it is registered as the CompositeExplicit kernel of
every backend, the meta device included. A backend never writes a view.
"""

from __future__ import annotations

from .. import _dtype
from .._ops import define_prim
from .._tensor import Tensor, contiguous_strides
from ._utils import check_shape, check_tensor, wrap_dim, wrap_dims


def _view(a: Tensor, shape, stride, offset, dtype=None) -> Tensor:
    t = Tensor._make(a._storage, tuple(shape), tuple(stride), offset, dtype or a._dtype, a._device, a._keys)
    t._base = a if a._base is None else a._base
    return t


def as_strided(a, size, stride, storage_offset):
    """View ``a``'s storage with the given size, strides and offset (all in elements)."""
    op = "prims::as_strided"
    check_tensor(op, "a", a)
    if len(size) != len(stride):
        raise ValueError(f"{op}: 'size' has {len(size)} dims but 'stride' has {len(stride)}")
    check_shape(op, "size", size)
    if any(s < 0 for s in stride):
        raise ValueError(f"{op}: argument 'stride' must be non-negative, got {list(stride)}")
    if storage_offset < 0:
        raise ValueError(f"{op}: argument 'storage_offset' must be non-negative, got {storage_offset}")
    if all(size) and a._storage.handle is not None:
        last = storage_offset + sum((n - 1) * s for n, s in zip(size, stride))
        if (last + 1) * a._dtype.itemsize > a._storage.nbytes:
            raise ValueError(
                f"{op}: size {list(size)}, stride {list(stride)} and offset {storage_offset} reach past "
                f"the storage of {a._storage.nbytes} bytes"
            )
    return _view(a, size, stride, storage_offset)


def broadcast_in_dim(a, shape, broadcast_dimensions):
    """View ``a`` with shape ``shape``; input dim i becomes output dim ``broadcast_dimensions[i]``."""
    op = "prims::broadcast_in_dim"
    check_tensor(op, "a", a)
    check_shape(op, "shape", shape)
    if len(broadcast_dimensions) != a.ndim:
        raise ValueError(f"{op}: 'broadcast_dimensions' needs {a.ndim} entries, got {list(broadcast_dimensions)}")
    if list(broadcast_dimensions) != sorted(set(broadcast_dimensions)) or any(
        not 0 <= d < len(shape) for d in broadcast_dimensions
    ):
        raise ValueError(f"{op}: 'broadcast_dimensions' must be increasing dims of the output: {broadcast_dimensions}")
    stride = [0] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        if a.shape[i] == shape[d]:
            stride[d] = a.stride()[i]
        elif a.shape[i] != 1:
            raise ValueError(f"{op}: cannot broadcast dim {i} of size {a.shape[i]} to size {shape[d]}")
    return _view(a, shape, stride, a._offset)


def collapse_view(a, start, end):
    """View dims ``[start, end)`` of ``a`` as one dim; ValueError if the layout does not allow it."""
    op = "prims::collapse_view"
    check_tensor(op, "a", a)
    if not 0 <= start <= end <= max(a.ndim, 1) or (a.ndim == 0 and (start, end) != (0, 0)):
        raise ValueError(f"{op}: invalid range [{start}, {end}) for a tensor with {a.ndim} dims")
    if end - start <= 1:
        return _view(a, a.shape, a.stride(), a._offset)
    shape, stride = list(a.shape), list(a.stride())
    length = 1
    for s in shape[start:end]:
        length *= s
    if length:
        for i in range(start, end - 1):
            if shape[i] != 1 and shape[i + 1] != 1 and stride[i] != stride[i + 1] * shape[i + 1]:
                raise ValueError(f"{op}: dims [{start}, {end}) of this tensor cannot be viewed as one")
    inner = [stride[i] for i in range(start, end) if shape[i] != 1]
    new_stride = inner[-1] if inner else 1
    return _view(a, shape[:start] + [length] + shape[end:], stride[:start] + [new_stride] + stride[end:], a._offset)


def expand_dims(a, dimensions, ndim=None):
    """View ``a`` with size-1 dims inserted at ``dimensions`` (positions in the output)."""
    op = "prims::expand_dims"
    check_tensor(op, "a", a)
    out_ndim = a.ndim + len(dimensions) if ndim is None else ndim
    dims = sorted(wrap_dims(op, dimensions, out_ndim, "dimensions"))
    shape, stride = list(a.shape), list(a.stride())
    for d in dims:
        inner = stride[d] * shape[d] if d < len(shape) else 1
        shape.insert(d, 1)
        stride.insert(d, inner)
    return _view(a, shape, stride, a._offset)


def slice_(a, start_indices, limit_indices, strides=None):
    """View the box ``start <= i < limit`` of ``a``, stepping by ``strides``."""
    op = "prims::slice"
    check_tensor(op, "a", a)
    strides = strides if strides is not None else (1,) * a.ndim
    if not len(start_indices) == len(limit_indices) == len(strides) == a.ndim:
        raise ValueError(f"{op}: start, limit and strides need {a.ndim} entries each")
    shape, stride, offset = [], [], a._offset
    for n, lo, hi, step, st in zip(a.shape, start_indices, limit_indices, strides, a.stride()):
        if not 0 <= lo <= hi <= n or step < 1:
            raise ValueError(f"{op}: invalid slice [{lo}:{hi}:{step}] of a dim of size {n}")
        shape.append((hi - lo + step - 1) // step)
        stride.append(st * step)
        offset += lo * st
    return _view(a, shape, stride, offset)


def slice_in_dim(a, start_index, limit_index, stride=1, axis=0):
    """View ``a[start:limit:stride]`` along ``axis``."""
    op = "prims::slice_in_dim"
    check_tensor(op, "a", a)
    axis = wrap_dim(op, axis, a.ndim, "axis")
    starts = [0] * a.ndim
    limits = list(a.shape)
    steps = [1] * a.ndim
    starts[axis], limits[axis], steps[axis] = start_index, limit_index, stride
    return slice_(a, starts, limits, steps)


def split_dim(a, dim, outer_length):
    """View dim ``dim`` of ``a`` as two dims ``(outer_length, size // outer_length)``."""
    op = "prims::split_dim"
    check_tensor(op, "a", a)
    dim = wrap_dim(op, dim, a.ndim)
    n = a.shape[dim]
    if outer_length <= 0 or n % outer_length:
        raise ValueError(f"{op}: cannot split a dim of size {n} into outer length {outer_length}")
    inner = n // outer_length
    shape, stride = list(a.shape), list(a.stride())
    shape[dim : dim + 1] = [outer_length, inner]
    stride[dim : dim + 1] = [stride[dim] * inner, stride[dim]]
    return _view(a, shape, stride, a._offset)


def squeeze(a, dimensions):
    """View ``a`` without the listed dims, each of which must have size 1."""
    op = "prims::squeeze"
    check_tensor(op, "a", a)
    dims = set(wrap_dims(op, dimensions, a.ndim, "dimensions"))
    for d in dims:
        if a.ndim and a.shape[d] != 1:
            raise ValueError(f"{op}: dim {d} has size {a.shape[d]}, not 1")
    keep = [i for i in range(a.ndim) if i not in dims]
    return _view(a, [a.shape[i] for i in keep], [a.stride()[i] for i in keep], a._offset)


def transpose(a, permutation):
    """View ``a`` with its dims permuted: output dim i is input dim ``permutation[i]``."""
    op = "prims::transpose"
    check_tensor(op, "a", a)
    if sorted(wrap_dims(op, permutation, a.ndim, "permutation")) != list(range(a.ndim)) or len(permutation) != a.ndim:
        raise ValueError(f"{op}: {list(permutation)} is not a permutation of {a.ndim} dims")
    perm = wrap_dims(op, permutation, a.ndim, "permutation")
    return _view(a, [a.shape[p] for p in perm], [a.stride()[p] for p in perm], a._offset)


def view_of(a):
    """A new view of ``a`` with identical metadata."""
    check_tensor("prims::view_of", "a", a)
    return _view(a, a.shape, a.stride(), a._offset)


def view_of_dtype(a, dtype):
    """Reinterpret ``a``'s bytes as ``dtype``; with a different element size the last dim scales."""
    op = "prims::view_of_dtype"
    check_tensor(op, "a", a)
    old, new = a.dtype.itemsize, dtype.itemsize
    if old == new:
        return _view(a, a.shape, a.stride(), a._offset, dtype)
    if a.ndim == 0 or a.stride()[-1] != 1:
        raise ValueError(f"{op}: changing the element size needs a last dim of stride 1")
    if new > old:
        ratio = new // old
        if a.shape[-1] % ratio or a._offset % ratio or any(s % ratio for s in a.stride()[:-1]):
            raise ValueError(f"{op}: cannot view {a.dtype.name} as {dtype.name}: sizes or strides not divisible")
        shape = list(a.shape[:-1]) + [a.shape[-1] // ratio]
        stride = [s // ratio for s in a.stride()[:-1]] + [1]
        return _view(a, shape, stride, a._offset // ratio, dtype)
    ratio = old // new
    shape = list(a.shape[:-1]) + [a.shape[-1] * ratio]
    stride = [s * ratio for s in a.stride()[:-1]] + [1]
    return _view(a, shape, stride, a._offset * ratio, dtype)


def unfold(a, dimension, size, step):
    """View all windows of ``size`` elements along ``dimension``, ``step`` apart, as a new last dim."""
    op = "prims::unfold"
    check_tensor(op, "a", a)
    d = wrap_dim(op, dimension, a.ndim, "dimension")
    n = a.shape[d] if a.ndim else 1
    if size < 0 or size > n or step <= 0:
        raise ValueError(f"{op}: invalid size {size} / step {step} for a dim of size {n}")
    if a.ndim == 0:
        return _view(a, [size], [1], a._offset)
    shape, stride = list(a.shape), list(a.stride())
    shape[d] = (n - size) // step + 1
    shape.append(size)
    inner = stride[d]
    stride[d] = inner * step
    stride.append(inner)
    return _view(a, shape, stride, a._offset)


def diagonal(a, offset=0, dim1=0, dim2=1):
    """View the diagonal of the (dim1, dim2) planes of ``a`` as a new last dim."""
    op = "prims::diagonal"
    check_tensor(op, "a", a)
    if a.ndim < 2:
        raise ValueError(f"{op}: needs at least 2 dims, got {a.ndim}")
    d1, d2 = wrap_dim(op, dim1, a.ndim, "dim1"), wrap_dim(op, dim2, a.ndim, "dim2")
    if d1 == d2:
        raise ValueError(f"{op}: dim1 and dim2 must differ, both are {d1}")
    shape, stride = list(a.shape), list(a.stride())
    start = a._offset
    if offset >= 0:
        length = max(min(shape[d1], shape[d2] - offset), 0)
        start += offset * stride[d2] if length else 0
    else:
        length = max(min(shape[d1] + offset, shape[d2]), 0)
        start += -offset * stride[d1] if length else 0
    diag_stride = stride[d1] + stride[d2]
    keep = [i for i in range(a.ndim) if i not in (d1, d2)]
    return _view(a, [shape[i] for i in keep] + [length], [stride[i] for i in keep] + [diag_stride], start)


def view_as_real(a):
    """View a complex tensor as real with a trailing dim of 2 (real, imaginary)."""
    op = "prims::view_as_real"
    check_tensor(op, "a", a)
    if not a.dtype.is_complex:
        raise TypeError(f"{op}: argument 'a' must be complex, got {a.dtype.name}")
    real = a.dtype.to_real()
    return _view(a, list(a.shape) + [2], [2 * s for s in a.stride()] + [1], 2 * a._offset, real)


def view_as_complex(a):
    """View a float32/float64 tensor whose last dim is 2 (stride 1) as complex."""
    op = "prims::view_as_complex"
    check_tensor(op, "a", a)
    if a.dtype not in (_dtype.float32, _dtype.float64):
        raise TypeError(f"{op}: argument 'a' must be float32 or float64, got {a.dtype.name}")
    if a.ndim == 0 or a.shape[-1] != 2 or a.stride()[-1] != 1:
        raise ValueError(f"{op}: needs a last dim of size 2 and stride 1, got shape {list(a.shape)}")
    if a._offset % 2 or any(s % 2 for s in a.stride()[:-1]):
        raise ValueError(f"{op}: the other strides and the offset must be even")
    return _view(a, a.shape[:-1], [s // 2 for s in a.stride()[:-1]], a._offset // 2, a.dtype.to_complex())


VIEW_PRIMS = [
    ("as_strided(Tensor(a) a, SymInt[] size, SymInt[] stride, SymInt storage_offset) -> Tensor(a)", as_strided),
    ("broadcast_in_dim(Tensor(a) a, SymInt[] shape, int[] broadcast_dimensions) -> Tensor(a)", broadcast_in_dim),
    ("collapse_view(Tensor(a) a, int start, int end) -> Tensor(a)", collapse_view),
    ("expand_dims(Tensor(a) a, int[] dimensions, int? ndim=None) -> Tensor(a)", expand_dims),
    (
        "slice(Tensor(a) a, SymInt[] start_indices, SymInt[] limit_indices, SymInt[]? strides=None) -> Tensor(a)",
        slice_,
    ),
    (
        "slice_in_dim(Tensor(a) a, SymInt start_index, SymInt limit_index, int stride=1, int axis=0) -> Tensor(a)",
        slice_in_dim,
    ),
    ("split_dim(Tensor(a) a, int dim, SymInt outer_length) -> Tensor(a)", split_dim),
    ("squeeze(Tensor(a) a, int[] dimensions) -> Tensor(a)", squeeze),
    ("transpose(Tensor(a) a, int[] permutation) -> Tensor(a)", transpose),
    ("view_of(Tensor(a) a) -> Tensor(a)", view_of),
    ("view_of_dtype(Tensor(a) a, ScalarType dtype) -> Tensor(a)", view_of_dtype),
    ("unfold(Tensor(a) a, int dimension, int size, int step) -> Tensor(a)", unfold),
    ("diagonal(Tensor(a) a, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)", diagonal),
    ("view_as_real(Tensor(a) a) -> Tensor(a)", view_as_real),
    ("view_as_complex(Tensor(a) a) -> Tensor(a)", view_as_complex),
]


def _define():
    from ..library import core_library

    for schema, fn in VIEW_PRIMS:
        op = define_prim(schema, fn, tags=("view",))
        core_library("core").impl(op, fn, "CompositeExplicit")


_define()
contiguous_strides = contiguous_strides  # re-exported for families that build views
