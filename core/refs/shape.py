"""Shape ops that copy: joining, flipping, rolling, repeating, triangles and diagonals, padding, conversions.

Results are new tensors built from creation, view and data prims (``empty_strided``
+ ``copy_to`` into views of it, ``index_select`` for reversals, ``where`` for
masks), so everything except the ``repeat_interleave`` forms that read repeat
counts also runs on the meta device.
"""

from __future__ import annotations

import warnings

from .. import _dtype
from .._device import as_device
from .._ops import canonical as ops
from .._ops import define, prims
from .._pinned import pinned_result
from .._tensor import Tensor, contiguous_strides
from ..errors import DimIndexError
from ._shapes import (
    CHANNELS_LAST,
    CHANNELS_LAST_3D,
    CONTIGUOUS,
    PRESERVE,
    check_layout,
    check_memory_format,
    contiguous_copy,
    fill_value,
    restride,
    scalar,
    strides_for,
    wrap,
    wrap_list,
)
from ._utils import broadcast_shapes, broadcast_to, define_with_variants, to_dtype
from .views import narrow, reshape, select, slice_, transpose

INT64 = _dtype.int64


def _iota(n: int, device, start=0, step=1):
    return prims.iota(n, start=start, step=step, dtype=INT64, device=device)


def _empty(shape, dtype, device):
    return prims.empty_strided(list(shape), list(contiguous_strides(shape)), dtype=dtype, device=device)


def _zeros(shape, dtype, device):
    return prims.full(list(shape), False if dtype is _dtype.bool_ else 0, dtype=dtype, device=device)


# -- copies ---------------------------------------------------------------------


def contiguous(self, memory_format=CONTIGUOUS):
    """``self`` if already laid out in ``memory_format``, else a copy that is."""
    check_memory_format("contiguous", memory_format)
    if memory_format == PRESERVE:
        raise ValueError("contiguous: preserve memory format is unsupported by the contiguous operator")
    if memory_format in (CHANNELS_LAST, CHANNELS_LAST_3D):
        strides = strides_for("contiguous", self.shape, memory_format)
        return self if tuple(self.stride()) == strides else prims.copy_strided(self, list(strides))
    return self if self.is_contiguous() else contiguous_copy(self)


def clone(self, memory_format=None):
    """A copy of ``self``; by default dense tensors keep their strides (preserve_format)."""
    strides = strides_for("clone", self.shape, memory_format, like=self)
    if strides == contiguous_strides(self.shape):
        return contiguous_copy(self)
    return prims.copy_strided(self, list(strides))


def _has_internal_overlap(t: Tensor) -> bool:
    return t.numel() > 1 and any(st == 0 and n > 1 for n, st in zip(t.shape, t.stride()))


def _overlaps(a: Tensor, b: Tensor) -> bool:
    """Whether ``a`` and ``b`` might share memory (same storage, intersecting element ranges)."""
    if a._storage is not b._storage or a.numel() == 0 or b.numel() == 0:
        return False

    def span(t):
        lo = t.storage_offset()
        return lo, lo + sum((n - 1) * st for n, st in zip(t.shape, t.stride()))

    (a0, a1), (b0, b1) = span(a), span(b)
    return a0 <= b1 and b0 <= a1


def _copy_into(op: str, self, src, non_blocking):
    """Validate, then write ``src`` (broadcast, cast, moved to self's device) into ``self``."""
    shape = broadcast_shapes(op, self.shape, src.shape)
    if shape != tuple(self.shape):
        raise ValueError(
            f"{op}: the source of shape {list(src.shape)} cannot be broadcast to the destination of shape "
            f"{list(self.shape)}"
        )
    if _has_internal_overlap(self):
        raise ValueError(
            f"{op}: unsupported operation: more than one element of the written-to tensor refers to a single "
            "memory location. Please clone() the tensor before performing the operation."
        )
    if src.dtype.is_complex and not self.dtype.is_complex:
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=4)
    if src is self:
        return self
    if src.device != self.device:
        src = prims.device_put(src, self.device, non_blocking)
    elif _overlaps(self, src):
        src = prims.clone(src)
    prims.copy_to(self, broadcast_to(src, self.shape))
    return self


def copy_(self, src, non_blocking=False):
    """Write ``src`` into ``self``: broadcast to self's shape, cast to its dtype, moved from any device."""
    return _copy_into("copy_", self, src, non_blocking)


def copy(self, src, non_blocking=False):
    """A tensor like ``self`` (shape, dtype, device, layout) holding ``src``'s values."""
    out = prims.empty_strided(
        list(self.shape), list(strides_for("copy", self.shape, None, like=self)), dtype=self.dtype, device=self.device
    )
    return _copy_into("copy", out, src, non_blocking)


def _copy_entry(op):
    """``copy_``'s entry point: move ``src`` to ``self``'s device first (the dispatcher refuses mixed devices)."""
    entry = op._entry

    def copy_entry(self, src, non_blocking=False):
        if isinstance(self, Tensor) and isinstance(src, Tensor) and src.device != self.device:
            broadcast_shapes("copy_", self.shape, src.shape)
            src = prims.device_put(src, self.device, non_blocking)
        return entry(self, src, non_blocking)

    copy_entry.__doc__ = op.__doc__
    return copy_entry


# -- joining -----------------------------------------------------------------------


def cat(tensors, dim=0):
    """Concatenation along ``dim`` with type promotion; 1-D empty tensors are skipped (legacy rule)."""
    if not tensors:
        raise ValueError("cat: expected a non-empty list of Tensors")
    for i, x in enumerate(tensors):
        if x.ndim == 0:
            raise ValueError(f"cat: zero-dimensional tensor (at position {i}) cannot be concatenated")
    dtype = _dtype.result_type(*tensors)
    kept = [(i, x) for i, x in enumerate(tensors) if not (x.ndim == 1 and x.shape[0] == 0)]
    if not kept:
        return _empty([0], dtype, tensors[0].device)
    ref = kept[0][1]
    d = wrap("cat", dim, ref.ndim)
    for i, x in kept:
        if x.ndim != ref.ndim:
            raise ValueError(f"cat: Tensors must have same number of dimensions: got {ref.ndim} and {x.ndim}")
        for j in range(ref.ndim):
            if j != d and x.shape[j] != ref.shape[j]:
                raise ValueError(
                    f"cat: Sizes of tensors must match except in dimension {d}. Expected size {ref.shape[j]} but "
                    f"got size {x.shape[j]} for tensor number {i} in the list."
                )
    shape = list(ref.shape)
    shape[d] = sum(x.shape[d] for _, x in kept)
    out = _empty(shape, dtype, ref.device)
    start = 0
    for _, x in kept:
        n = x.shape[d]
        prims.copy_to(prims.slice_in_dim(out, start, start + n, 1, d), x)
        start += n
    return out


def stack(tensors, dim=0):
    """Tensors of equal shape joined along a new dim ``dim``."""
    if not tensors:
        raise ValueError("stack: stack expects a non-empty TensorList")
    first = tensors[0]
    for i, x in enumerate(tensors):
        if x.shape != first.shape:
            raise ValueError(
                f"stack: stack expects each tensor to be equal size, but got {list(first.shape)} at entry 0 and "
                f"{list(x.shape)} at entry {i}"
            )
    d = wrap("stack", dim, first.ndim + 1)
    return cat([prims.expand_dims(x, [d]) for x in tensors], d)


def _nonempty(op: str, tensors):
    if not tensors:
        raise ValueError(f"{op}: {op} expects a non-empty TensorList")


def hstack(tensors):
    """Concatenation along dim 1 (dim 0 for 1-D tensors) after ``atleast_1d``."""
    _nonempty("hstack", tensors)
    ts = [ATLEAST[1][0](x) for x in tensors]
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors):
    """Concatenation along dim 0 after ``atleast_2d``."""
    _nonempty("vstack", tensors)
    return cat([ATLEAST[2][0](x) for x in tensors], 0)


def dstack(tensors):
    """Concatenation along dim 2 after ``atleast_3d``."""
    _nonempty("dstack", tensors)
    return cat([ATLEAST[3][0](x) for x in tensors], 2)


def column_stack(tensors):
    """0-d and 1-d tensors become columns, then ``hstack``."""
    _nonempty("column_stack", tensors)
    return hstack([reshape(x, [x.numel(), 1]) if x.ndim <= 1 else x for x in tensors])


def block_diag(tensors):
    """A block-diagonal matrix of the (0-d, 1-d or 2-d) inputs, promoted to their common dtype."""
    if not tensors:
        from .._device import get_default_device

        return _zeros([1, 0], _dtype.get_default_dtype(), get_default_device())
    mats = []
    for i, x in enumerate(tensors):
        if x.ndim > 2:
            raise ValueError(
                f"block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {x.ndim} dimensions"
            )
        mats.append(reshape(x, [1, 1]) if x.ndim == 0 else reshape(x, [1, x.shape[0]]) if x.ndim == 1 else x)
    dtype = _dtype.result_type(*tensors)
    rows, cols = sum(m.shape[0] for m in mats), sum(m.shape[1] for m in mats)
    out = _zeros([rows, cols], dtype, tensors[0].device)
    r = c = 0
    for m in mats:
        h, w = m.shape
        prims.copy_to(prims.slice(out, [r, c], [r + h, c + w]), m)
        r, c = r + h, c + w
    return out


# -- reversing, rolling, rotating, repeating ----------------------------------------


def flip(self, dims):
    """A copy of ``self`` with the order of elements reversed along ``dims``."""
    ds = wrap_list("flip", dims, self.ndim)
    out = self
    for d in ds:
        n = self.shape[d] if self.ndim else 1
        if n > 1:
            out = prims.index_select(out, d, _iota(n, self.device, n - 1, -1))
    return clone(out) if out is self else out


def fliplr(self):
    """``flip`` along dim 1 (needs at least 2 dims)."""
    if self.ndim < 2:
        raise ValueError("fliplr: Input must be >= 2-d.")
    return flip(self, [1])


def flipud(self):
    """``flip`` along dim 0 (needs at least 1 dim)."""
    if self.ndim < 1:
        raise ValueError("flipud: Input must be >= 1-d.")
    return flip(self, [0])


def _roll_dim(x, shift: int, d: int):
    n = x.shape[d]
    s = shift % n if n else 0
    if s == 0:
        return x
    return cat([prims.slice_in_dim(x, n - s, n, 1, d), prims.slice_in_dim(x, 0, n - s, 1, d)], d)


def roll(self, shifts, dims=()):
    """Elements shifted cyclically by ``shifts`` along ``dims`` (the flattened tensor when ``dims`` is empty)."""
    if not dims:
        if len(shifts) != 1:
            raise ValueError(f"roll: shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        flat = reshape(self, [-1])
        return reshape(roll(flat, shifts, [0]), list(self.shape))
    if len(shifts) != len(dims):
        raise ValueError(f"roll: shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    if not self.ndim:
        raise DimIndexError(f"roll: argument 'dims': dimension specified as {dims[0]} but tensor has no dimensions")
    out = self
    for shift, dim in zip(shifts, dims):
        out = _roll_dim(out, shift, wrap("roll", dim, self.ndim))
    return clone(out) if out is self else out


def rot90(self, k=1, dims=(0, 1)):
    """``self`` rotated by ``k`` quarter turns in the plane ``dims`` (from the first towards the second)."""
    if len(dims) != 2:
        raise ValueError(f"rot90: expected total rotation dims == 2, but got dims = {len(dims)}")
    if self.ndim < 2:
        raise ValueError(f"rot90: expected total dims >= 2, but got total dims = {self.ndim}")
    d0, d1 = wrap("rot90", dims[0], self.ndim), wrap("rot90", dims[1], self.ndim)
    if d0 == d1:
        raise ValueError(
            f"rot90: expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}"
        )
    k %= 4
    if k == 1:
        return transpose(flip(self, [d1]), d0, d1)
    if k == 2:
        return flip(self, [d0, d1])
    if k == 3:
        return transpose(flip(self, [d0]), d0, d1)
    return contiguous_copy(self)


def repeat(self, repeats):
    """``self`` tiled ``repeats[i]`` times along each dim (leading dims added as needed); always a copy."""
    if len(repeats) < self.ndim:
        raise ValueError(
            "repeat: Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
        )
    for r in repeats:
        if r < 0:
            raise ValueError(f"repeat: Trying to create tensor with negative dimension {r}: {list(repeats)}")
    pad = len(repeats) - self.ndim
    src = [1] * pad + list(self.shape)
    pairs = [v for r, s in zip(repeats, src) for v in (r, s)]
    big = prims.broadcast_in_dim(self, pairs, [2 * (pad + j) + 1 for j in range(self.ndim)])
    final = [r * s for r, s in zip(repeats, src)]
    return restride(contiguous_copy(big), final, contiguous_strides(final))


def tile(self, dims):
    """``repeat`` with ``dims`` padded with leading 1s to ``self.ndim``."""
    dims = list(dims)
    return repeat(self, [1] * (self.ndim - len(dims)) + dims)


def _interleave_input(op: str, self, dim):
    if dim is None:
        return reshape(self, [-1]), 0
    if self.ndim == 0:
        raise ValueError(f"{op}: dimension specified as {dim} but tensor has no dimensions")
    return self, wrap(op, dim, self.ndim)


def repeat_interleave_self_int(self, repeats, dim=None, output_size=None):
    """Each element (slice along ``dim``; flattened when None) repeated ``repeats`` times in place."""
    if repeats < 0:
        raise ValueError("repeat_interleave: repeats can not be negative")
    x, d = _interleave_input("repeat_interleave", self, dim)
    n = x.shape[d]
    if output_size is not None and output_size != n * repeats:
        raise ValueError(f"repeat_interleave: allocated size {output_size} does not match required size {n * repeats}")
    shape = list(x.shape)
    wide = shape[: d + 1] + [repeats] + shape[d + 1 :]
    big = prims.broadcast_in_dim(x, wide, [i if i <= d else i + 1 for i in range(x.ndim)])
    shape[d] = n * repeats
    return restride(contiguous_copy(big), shape, contiguous_strides(shape))


def _check_repeats(op: str, repeats):
    if repeats.dtype not in (_dtype.int64, _dtype.int32):
        raise TypeError(f"{op}: repeats has to be Long or Int tensor, got {repeats.dtype.name}")
    return to_dtype(repeats, INT64)


def repeat_interleave_tensor(repeats, output_size=None):
    """The indices ``i`` repeated ``repeats[i]`` times (``[0, 0, 1, 2, 2]`` for ``[2, 1, 2]``)."""
    if repeats.ndim != 1:
        raise ValueError(f"repeat_interleave: repeats must be 1-D, got {repeats.ndim}-D")
    out = prims.repeat_interleave(_check_repeats("repeat_interleave", repeats))
    if output_size is not None and output_size != out.shape[0]:
        raise ValueError(f"repeat_interleave: allocated size {output_size} does not match required size {out.shape[0]}")
    return out


def repeat_interleave_self_tensor(self, repeats, dim=None, output_size=None):
    """Element ``i`` (slice along ``dim``; flattened when None) repeated ``repeats[i]`` times; reads ``repeats``."""
    repeats = _check_repeats("repeat_interleave", repeats)
    if repeats.ndim == 0 or (repeats.ndim == 1 and repeats.shape[0] == 1):
        return repeat_interleave_self_int(self, int(prims.item(repeats)), dim, output_size)
    if repeats.ndim != 1:
        raise ValueError("repeat_interleave: repeats must be 0-dim or 1-dim tensor")
    x, d = _interleave_input("repeat_interleave", self, dim)
    if repeats.shape[0] != x.shape[d]:
        raise ValueError(
            f"repeat_interleave: repeats must have the same size as input along dim, but got "
            f"repeats.size(0) = {repeats.shape[0]} and input.size({d}) = {x.shape[d]}"
        )
    return prims.index_select(x, d, repeat_interleave_tensor(repeats, output_size))


# -- triangles and diagonals ----------------------------------------------------------


def _triangle(op: str, self, diagonal: int, lower: bool):
    if self.ndim < 2:
        raise ValueError(f"{op}: input tensor must have at least 2 dimensions")
    m, n = self.shape[-2:]
    rows = prims.broadcast_in_dim(_iota(m, self.device), [m, n], [0])
    cols = prims.broadcast_in_dim(_iota(n, self.device), [m, n], [1])
    offset = prims.sub(cols, rows)
    keep = (prims.le if lower else prims.ge)(offset, scalar(diagonal, offset))
    keep = prims.broadcast_in_dim(keep, list(self.shape), [self.ndim - 2, self.ndim - 1])
    return prims.where(keep, self, scalar(0, self))


def tril(self, diagonal=0):
    """The lower triangle (``col - row <= diagonal``) of the last two dims; the rest zero."""
    return _triangle("tril", self, diagonal, True)


def triu(self, diagonal=0):
    """The upper triangle (``col - row >= diagonal``) of the last two dims; the rest zero."""
    return _triangle("triu", self, diagonal, False)


def diag(self, diagonal=0):
    """1-D input: a square matrix with it on diagonal ``diagonal``; 2-D input: a copy of that diagonal."""
    if self.ndim == 1:
        n = self.shape[0] + abs(diagonal)
        out = _zeros([n, n], self.dtype, self.device)
        prims.copy_to(prims.diagonal(out, diagonal, 0, 1), self)
        return out
    if self.ndim == 2:
        return contiguous_copy(prims.diagonal(self, diagonal, 0, 1))
    raise ValueError(f"diag: diag(): Supports 1D or 2D tensors. Got {self.ndim}D")


def diag_embed(self, offset=0, dim1=-2, dim2=-1):
    """Zeros with the last dim of ``self`` written on diagonal ``offset`` of the new (dim1, dim2) planes."""
    if self.ndim == 0:
        raise ValueError("diag_embed: input must have at least 1 dimension")
    nd = self.ndim + 1
    d1, d2 = wrap("diag_embed", dim1, nd), wrap("diag_embed", dim2, nd)
    if d1 == d2:
        raise ValueError(f"diag_embed: diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = self.shape[-1] + abs(offset)
    shape = list(self.shape[:-1])
    lo, hi = sorted((d1, d2))
    shape.insert(lo, n)
    shape.insert(hi, n)
    out = _zeros(shape, self.dtype, self.device)
    prims.copy_to(prims.diagonal(out, offset, d1, d2), self)
    return out


def diagflat(self, offset=0):
    """A square matrix with the flattened ``self`` on diagonal ``offset``."""
    return diag(reshape(self, [-1]), offset)


# -- atleast_nd ------------------------------------------------------------------------


def _atleast(n: int):
    def one(self):
        if self.ndim >= n:
            return self
        if n == 3 and self.ndim == 2:
            return prims.expand_dims(self, [2])
        if n == 3 and self.ndim == 1:
            return prims.expand_dims(self, [0, 2])
        return prims.expand_dims(self, list(range(n - self.ndim)))

    def many(tensors):
        return tuple(one(x) for x in tensors)

    one.__doc__ = f"``self`` viewed with at least {n} dims (itself when it has them)."
    many.__doc__ = f"Each tensor viewed with at least {n} dims."
    return one, many


# -- padding -------------------------------------------------------------------------


def constant_pad_nd(self, pad, value=0):
    """``self`` padded with ``value``: ``pad`` = (left, right) pairs from the last dim backwards; negative crops."""
    if len(pad) % 2:
        raise ValueError(f"constant_pad_nd: Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > self.ndim:
        raise ValueError(
            f"constant_pad_nd: Length of pad should be no more than twice the number of dimensions of the input. "
            f"Pad length is {len(pad)} while the input has {self.ndim} dimensions."
        )
    value = fill_value("constant_pad_nd", value, self.dtype)
    shape = list(self.shape)
    src_lo, src_hi, dst_lo = [0] * self.ndim, list(shape), [0] * self.ndim
    for i in range(len(pad) // 2):
        d = self.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = self.shape[d] + lo + hi
        if size < 0:
            raise ValueError(
                f"constant_pad_nd: The input size {self.shape[d]}, plus negative padding {lo} and {hi} resulted in "
                f"a negative output size, which is invalid. Check dimension {d} of your input."
            )
        shape[d] = size
        src_lo[d] = min(max(-lo, 0), self.shape[d])
        src_hi[d] = max(self.shape[d] - max(-hi, 0), src_lo[d])
        dst_lo[d] = max(lo, 0)
    out = prims.full(shape, value, dtype=self.dtype, device=self.device)
    region = prims.slice(self, src_lo, src_hi)
    dst_hi = [a + n for a, n in zip(dst_lo, region.shape)]
    prims.copy_to(prims.slice(out, dst_lo, dst_hi), region)
    return out


def pad(self, pad, mode="constant", value=None):
    """``torch.nn.functional.pad``: ``mode`` "constant", "reflect", "replicate" or "circular" (see ``_pad_enum``)."""
    modes = ("constant", "reflect", "replicate", "circular")
    if mode not in modes:
        raise ValueError(f"pad: Unrecognised padding mode {mode}")
    if mode == "constant":
        return constant_pad_nd(self, pad, 0 if value is None else value)
    return ops._pad_enum(self, pad, modes.index(mode), value)


# -- grids ------------------------------------------------------------------------------


def meshgrid_indexing(tensors, indexing):
    """Coordinate grids (0-stride views) from 0-d/1-d tensors; ``indexing`` "ij" (matrix) or "xy" (Cartesian)."""
    if not tensors:
        raise ValueError("meshgrid: expects a non-empty TensorList")
    for x in tensors:
        if x.ndim > 1:
            raise ValueError(f"meshgrid: Expected 0D or 1D tensor in the tensor list but got: {x.ndim}D")
        if x.dtype is not tensors[0].dtype:
            raise TypeError("meshgrid: Expected all tensors in the tensor list to have the same dtype")
        if x.device != tensors[0].device:
            raise RuntimeError("meshgrid: Expected all tensors in the tensor list to have the same device")
    if indexing not in ("ij", "xy"):
        raise ValueError(f'meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    sizes = [x.numel() for x in tensors]
    dims = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
        dims[0], dims[1] = 1, 0
    return tuple(prims.broadcast_in_dim(reshape(x, [-1]), sizes, [d]) for x, d in zip(tensors, dims))


def meshgrid(tensors):
    """``meshgrid`` with "ij" indexing."""
    return meshgrid_indexing(tensors, "ij")


def cartesian_prod(tensors):
    """The Cartesian product of 1-D tensors as rows of a 2-D tensor (the tensor itself for one input)."""
    for x in tensors:
        if x.ndim != 1:
            raise ValueError(f"cartesian_prod: Expect a 1D vector, but got shape {list(x.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid_indexing(tensors, "ij")
    return stack([reshape(g, [-1]) for g in grids], 1)


# -- scatter into views (functional inverses of views) ----------------------------------


def _scatter_into(op: str, self, src, make_view):
    out = clone(self)
    target = make_view(out)
    if target.shape != src.shape:
        raise ValueError(
            f"{op}: expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
            f"slice size = {list(target.shape)}"
        )
    prims.copy_to(target, src)
    return out


def slice_scatter(self, src, dim=0, start=None, end=None, step=1):
    """A copy of ``self`` with ``src`` written into ``self[start:end:step]`` along ``dim``."""
    return _scatter_into("slice_scatter", self, src, lambda o: slice_(o, dim, start, end, step))


def select_scatter(self, src, dim, index):
    """A copy of ``self`` with ``src`` written into ``self.select(dim, index)``."""
    return _scatter_into("select_scatter", self, src, lambda o: select(o, dim, index))


def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
    """A copy of ``self`` with ``src`` written onto ``self.diagonal(offset, dim1, dim2)``."""
    from .views import diagonal

    return _scatter_into("diagonal_scatter", self, src, lambda o: diagonal(o, offset, dim1, dim2))


def as_strided_scatter(self, src, size, stride, storage_offset=None):
    """A copy of ``self`` with ``src`` written into ``as_strided(size, stride, storage_offset)`` of the copy."""
    from .views import as_strided

    return _scatter_into("as_strided_scatter", self, src, lambda o: as_strided(o, size, stride, storage_offset))


def narrow_copy(self, dim, start, length):
    """A contiguous copy of ``narrow(self, dim, start, length)``.

    A ``dim`` out of range is an IndexError either side of the range (PyTorch: RuntimeError at or above
    the rank; see ``docs/differences.md``).
    """
    return contiguous_copy(narrow(self, dim, start, length))


# -- dtype and device conversion ----------------------------------------------------------


def _to_copy(self, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None):
    """A new tensor with ``self``'s values converted to ``dtype`` and/or moved to ``device``."""
    check_layout("_to_copy", layout, pin_memory)
    if pin_memory:
        return pinned_result("_to_copy", _to_copy(self, dtype, layout, device, None, non_blocking, memory_format))
    check_memory_format("_to_copy", memory_format)
    out = self
    dev = as_device(device)
    if dev is not None and (dev.type != self.device.type or (dev.index or 0) != (self.device.index or 0)):
        out = prims.device_put(out, dev, non_blocking)
    if dtype is not None and dtype is not out.dtype:
        out = prims.convert_element_type(out, dtype)
    if out is self:
        return clone(self, memory_format)
    if memory_format in (CONTIGUOUS, CHANNELS_LAST, CHANNELS_LAST_3D):
        return contiguous(out, memory_format)
    return out


def _same_device(a, b) -> bool:
    return a.type == b.type and (a.index or 0) == (b.index or 0)


def to_dtype_op(self, dtype, non_blocking=False, copy=False, memory_format=None):
    """``self`` converted to ``dtype`` (``self`` itself when nothing changes and ``copy`` is False)."""
    if not copy and dtype is self.dtype and memory_format in (None, PRESERVE):
        return self
    return _to_copy(self, dtype, None, None, None, non_blocking, memory_format)


def to_device_op(self, device, dtype, non_blocking=False, copy=False, memory_format=None):
    """``self`` on ``device`` with ``dtype`` (``self`` itself when nothing changes and ``copy`` is False)."""
    same = _same_device(as_device(device), self.device) and dtype is self.dtype
    if not copy and same and memory_format in (None, PRESERVE):
        return self
    return _to_copy(self, dtype, None, device, None, non_blocking, memory_format)


def to_other(self, other, non_blocking=False, copy=False, memory_format=None):
    """``self`` with ``other``'s dtype and device."""
    return to_device_op(self, other.device, other.dtype, non_blocking, copy, memory_format)


def type_as(self, other):
    """``self`` converted to ``other``'s dtype."""
    return to_dtype_op(self, other.dtype)


ATLEAST = {n: _atleast(n) for n in (1, 2, 3)}

# (schema, decomposition, tags, in-place variant, out variant). repeat_interleave.Tensor comes after the
# self_ forms so that the packet's first overload makes it a Tensor method.
COPIES = [
    ("clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor", clone, ("core",), False, True),
    ("copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor", copy, (), False, True),
    ("cat(Tensor[] tensors, int dim=0) -> Tensor", cat, ("core", "out_no_overlap"), False, True),
    ("concat(Tensor[] tensors, int dim=0) -> Tensor", cat, ("out_no_overlap",), False, True),
    ("concatenate(Tensor[] tensors, int dim=0) -> Tensor", cat, ("out_no_overlap",), False, True),
    ("stack(Tensor[] tensors, int dim=0) -> Tensor", stack, ("out_no_overlap",), False, True),
    ("hstack(Tensor[] tensors) -> Tensor", hstack, ("out_no_overlap",), False, True),
    ("vstack(Tensor[] tensors) -> Tensor", vstack, ("out_no_overlap",), False, True),
    ("row_stack(Tensor[] tensors) -> Tensor", vstack, (), False, True),
    ("dstack(Tensor[] tensors) -> Tensor", dstack, (), False, True),
    ("column_stack(Tensor[] tensors) -> Tensor", column_stack, (), False, True),
    ("block_diag(Tensor[] tensors) -> Tensor", block_diag, (), False, True),
    ("flip(Tensor self, int[] dims) -> Tensor", flip, ("core",), False, True),
    ("fliplr(Tensor self) -> Tensor", fliplr, (), False, False),
    ("flipud(Tensor self) -> Tensor", flipud, (), False, False),
    ("roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor", roll, (), False, True),
    ("rot90(Tensor self, int k=1, int[] dims=[0,1]) -> Tensor", rot90, (), False, True),
    ("repeat(Tensor self, SymInt[] repeats) -> Tensor", repeat, ("core",), False, True),
    ("tile(Tensor self, SymInt[] dims) -> Tensor", tile, (), False, False),
    (
        "repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, "
        "SymInt? output_size=None) -> Tensor",
        repeat_interleave_self_tensor,
        ("dynamic_output_shape",),
        False,
        False,
    ),
    (
        "repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor",
        repeat_interleave_self_int,
        (),
        False,
        False,
    ),
    (
        "repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) -> Tensor",
        repeat_interleave_tensor,
        ("dynamic_output_shape",),
        False,
        False,
    ),
    ("tril(Tensor self, int diagonal=0) -> Tensor", tril, (), True, True),
    ("triu(Tensor self, int diagonal=0) -> Tensor", triu, (), True, True),
    ("diag(Tensor self, int diagonal=0) -> Tensor", diag, (), False, True),
    ("diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor", diag_embed, (), False, True),
    ("diagflat(Tensor self, int offset=0) -> Tensor", diagflat, (), False, False),
    ("constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor", constant_pad_nd, ("core",), False, True),
    ('pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor', pad, (), False, False),
    ("cartesian_prod(Tensor[] tensors) -> Tensor", cartesian_prod, (), False, False),
    (
        "slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, "
        "SymInt step=1) -> Tensor",
        slice_scatter,
        ("core",),
        False,
        True,
    ),
    (
        "select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor",
        select_scatter,
        ("core",),
        False,
        True,
    ),
    (
        "diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) -> Tensor",
        diagonal_scatter,
        ("core",),
        False,
        True,
    ),
    (
        "as_strided_scatter(Tensor self, Tensor src, SymInt[] size, SymInt[] stride, "
        "SymInt? storage_offset=None) -> Tensor",
        as_strided_scatter,
        ("core",),
        False,
        True,
    ),
    ("narrow_copy(Tensor self, int dim, SymInt start, SymInt length) -> Tensor", narrow_copy, (), False, True),
    (
        "_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
        "bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor",
        _to_copy,
        ("core",),
        False,
        True,
    ),
]

# Ops without variants: they may return ``self`` itself or views (schema, decomposition, tags).
PLAIN = [
    ("contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)", contiguous, ()),
    ("atleast_1d(Tensor self) -> Tensor", ATLEAST[1][0], ()),
    ("atleast_1d.Sequence(Tensor[] tensors) -> Tensor[]", ATLEAST[1][1], ()),
    ("atleast_2d(Tensor self) -> Tensor", ATLEAST[2][0], ()),
    ("atleast_2d.Sequence(Tensor[] tensors) -> Tensor[]", ATLEAST[2][1], ()),
    ("atleast_3d(Tensor self) -> Tensor", ATLEAST[3][0], ()),
    ("atleast_3d.Sequence(Tensor[] tensors) -> Tensor[]", ATLEAST[3][1], ()),
    ("meshgrid(Tensor[] tensors) -> Tensor[]", meshgrid, ()),
    ("meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]", meshgrid_indexing, ()),
    (
        "to.other(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, "
        "MemoryFormat? memory_format=None) -> Tensor(a)",
        to_other,
        (),
    ),
    (
        "to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool copy=False, "
        "MemoryFormat? memory_format=None) -> Tensor(a)",
        to_device_op,
        (),
    ),
    (
        "to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, "
        "MemoryFormat? memory_format=None) -> Tensor(a)",
        to_dtype_op,
        (),
    ),
    ("type_as(Tensor self, Tensor other) -> Tensor", type_as, ()),
]


def _define():
    for schema, fn, tags, inplace, out in COPIES:
        define_with_variants(schema, fn, tags=tags, inplace=inplace, out=out)
    for schema, fn, tags in PLAIN:
        define(schema, fn, tags=tags)
    op = define("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)", copy_, tags=("inplace",))
    op._entry = _copy_entry(op)


_define()
