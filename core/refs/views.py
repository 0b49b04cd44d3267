"""View ops: new metadata over the input's storage, built from the view prims only (never a copy).

``reshape``, ``flatten``, ``ravel`` and ``unflatten`` return views when PyTorch's
``computeStride`` finds strides for the new shape and a contiguous copy
otherwise (``view`` raises instead). ``adjoint``/``mH``/``matrix_H`` of complex
tensors conjugate into a new tensor: opweave has no lazy conjugate bit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import _dtype
from .._ops import OpOverload, define, prims
from .._tensor import Tensor, contiguous_strides
from ..errors import DimIndexError
from ._shapes import compute_stride, contiguous_copy, infer_size, numel, restride, wrap, wrap_list
from ._utils import broadcast_shapes

VIEW = ("view",)
CORE_VIEW = ("view", "core")


# -- reshaping ----------------------------------------------------------------


def view(self, size):
    """A view of ``self`` with shape ``size`` (one ``-1`` is inferred); ValueError when the strides don't allow it."""
    shape = infer_size("view", size, self.numel())
    stride = compute_stride(self.shape, self.stride(), shape)
    if stride is None:
        raise ValueError(
            "view: view size is not compatible with input tensor's size and stride (at least one dimension "
            "spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return restride(self, shape, stride)


def view_dtype(self, dtype):
    """``self``'s bytes reinterpreted as ``dtype``; a different element size scales the last dim."""
    if dtype is self.dtype:
        return prims.view_of(self)
    if dtype.itemsize != self.dtype.itemsize:
        if self.ndim == 0:
            raise ValueError(
                f"view.dtype: self must have at least 1 dimension to view {self.dtype.name} as {dtype.name} "
                "(different element sizes)"
            )
        if self.stride()[-1] != 1:
            raise ValueError(f"view.dtype: self must have a last dimension of stride 1 to view it as {dtype.name}")
    return prims.view_of_dtype(self, dtype)


def view_as(self, other):
    """``self`` viewed with ``other``'s shape."""
    return view(self, other.shape)


def reshape(self, shape):
    """``self`` with shape ``shape``: a view when the strides allow it, else a contiguous copy."""
    shape = infer_size("reshape", shape, self.numel())
    stride = compute_stride(self.shape, self.stride(), shape)
    if stride is not None:
        return restride(self, shape, stride)
    copy = contiguous_copy(self)
    return restride(copy, shape, contiguous_strides(shape))


def reshape_as(self, other):
    """``self`` reshaped to ``other``'s shape."""
    return reshape(self, other.shape)


def flatten(self, start_dim=0, end_dim=-1):
    """Dims ``start_dim..end_dim`` merged into one (a view when possible); 0-dim inputs become 1-D."""
    if self.ndim == 0:
        return reshape(self, [1])
    start, end = wrap("flatten", start_dim, self.ndim), wrap("flatten", end_dim, self.ndim)
    if start > end:
        raise ValueError("flatten: flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return self
    shape = list(self.shape)
    return reshape(self, shape[:start] + [numel(shape[start : end + 1])] + shape[end + 1 :])


def unflatten(self, dim, sizes):
    """Dim ``dim`` split into ``sizes`` (one ``-1`` inferred); always a view."""
    d = wrap("unflatten", dim, self.ndim)
    if len(sizes) == 0:
        raise ValueError("unflatten: sizes must be non-empty")
    if self.ndim == 0:
        raise ValueError("unflatten: cannot unflatten a 0-dim tensor")
    inner = infer_size("unflatten", sizes, self.shape[d])
    shape = list(self.shape)
    return view(self, shape[:d] + list(inner) + shape[d + 1 :])


def ravel(self):
    """``self`` as a 1-D tensor (a view when contiguous-compatible, else a copy)."""
    return reshape(self, [-1])


# -- adding, removing and permuting dims ---------------------------------------


def squeeze(self):
    """``self`` without its size-1 dims."""
    return prims.squeeze(self, [i for i, s in enumerate(self.shape) if s == 1])


def squeeze_dim(self, dim):
    """``self`` without dim ``dim`` if it has size 1 (else an unchanged view)."""
    d = wrap("squeeze", dim, self.ndim)
    return prims.squeeze(self, [d] if self.ndim and self.shape[d] == 1 else [])


def squeeze_dims(self, dim):
    """``self`` without those of the dims ``dim`` that have size 1."""
    dims = wrap_list("squeeze", dim, self.ndim)
    return prims.squeeze(self, [d for d in dims if self.ndim and self.shape[d] == 1])


def unsqueeze(self, dim):
    """``self`` with a size-1 dim inserted at ``dim`` (in ``[-ndim-1, ndim]``)."""
    d = wrap("unsqueeze", dim, self.ndim + 1)
    return prims.expand_dims(self, [d])


def transpose(self, dim0, dim1):
    """``self`` with dims ``dim0`` and ``dim1`` swapped."""
    d0, d1 = wrap("transpose", dim0, self.ndim), wrap("transpose", dim1, self.ndim)
    perm = list(range(self.ndim))
    if self.ndim:
        perm[d0], perm[d1] = perm[d1], perm[d0]
    return prims.transpose(self, perm)


def swapaxes(self, axis0, axis1):
    """Alias of ``transpose``."""
    return transpose(self, axis0, axis1)


def t(self):
    """The transpose of a matrix; 0-d and 1-d tensors are returned as views unchanged."""
    if self.ndim > 2:
        raise ValueError(f"t: t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return transpose(self, 0, -1 if self.ndim == 2 else 0)


def permute(self, dims):
    """``self`` with its dims reordered: output dim i is input dim ``dims[i]``."""
    if len(dims) != self.ndim:
        raise ValueError(
            f"permute: number of dims don't match in permute: input has {self.ndim} dims, got {len(dims)}: {list(dims)}"
        )
    return prims.transpose(self, list(wrap_list("permute", dims, self.ndim)))


def movedim(self, source, destination):
    """``self`` with dims ``source`` moved to positions ``destination``; the others keep their order."""
    if isinstance(source, int):
        source, destination = [source], [destination]
    if len(source) != len(destination):
        raise ValueError(
            f"movedim: Invalid source or destination dims: source ({list(source)} dims) should contain the same "
            f"number of dims as destination ({list(destination)} dims)"
        )
    src = wrap_list("movedim", source, self.ndim)
    dst = wrap_list("movedim", destination, self.ndim)
    order = [-1] * self.ndim
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(self.ndim) if i not in src)
    order = [o if o != -1 else next(rest) for o in order]
    return prims.transpose(self, order)


def movedim_int(self, source, destination):
    """``self`` with dim ``source`` moved to position ``destination``."""
    return movedim(self, [source], [destination])


# -- broadcasting ----------------------------------------------------------------


def expand(self, size, implicit=False):
    """``self`` broadcast to ``size`` (``-1`` keeps a dim; new dims are prepended) as a 0-stride view."""
    if len(size) < self.ndim:
        raise ValueError(
            f"expand: the number of sizes provided ({len(size)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({self.ndim})"
        )
    offset = len(size) - self.ndim
    shape = []
    for i, s in enumerate(size):
        if i < offset:
            if s < 0:
                raise ValueError(
                    f"expand: the expanded size of the tensor ({s}) isn't allowed in a leading, "
                    f"non-existing dimension {i}"
                )
            shape.append(s)
            continue
        old = self.shape[i - offset]
        if s == -1:
            s = old
        elif s < 0:
            raise ValueError(f"expand: the expanded size of the tensor ({s}) is invalid at dimension {i}")
        if old != s and old != 1:
            raise ValueError(
                f"expand: the expanded size of the tensor ({s}) must match the existing size ({old}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(size)}.  Tensor sizes: {list(self.shape)}"
            )
        shape.append(s)
    return prims.broadcast_in_dim(self, shape, list(range(offset, len(shape))))


def expand_as(self, other):
    """``self`` expanded to ``other``'s shape."""
    return expand(self, list(other.shape))


def broadcast_to(self, size):
    """``self`` broadcast to ``size`` (as ``expand``)."""
    return expand(self, size)


def broadcast_tensors(tensors):
    """Every tensor expanded to the broadcast shape of all of them."""
    shape = broadcast_shapes("broadcast_tensors", *(x.shape for x in tensors))
    return tuple(expand(x, list(shape)) for x in tensors)


# -- selecting parts -----------------------------------------------------------


def narrow(self, dim, start, length):
    """Elements ``start .. start+length`` of dim ``dim`` (``start`` may be negative)."""
    if self.ndim == 0:
        raise ValueError("narrow: narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise ValueError("narrow: narrow(): length must be non-negative.")
    d = wrap("narrow", dim, self.ndim)
    n = self.shape[d]
    if not -n <= start <= n:
        raise DimIndexError(f"narrow: start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    if start < 0:
        start += n
    if start + length > n:
        raise ValueError(f"narrow: start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return prims.slice_in_dim(self, start, start + length, 1, d)


def narrow_tensor(self, dim, start, length):
    """``narrow`` with ``start`` given as a 0-dim integer tensor (reads its value)."""
    if start.ndim != 0 or start.dtype.kind not in ("int", "uint"):
        raise TypeError("narrow: start must be an 0-dim integral Tensor.")
    return narrow(self, dim, int(prims.item(start)), length)


def select(self, dim, index):
    """The slice ``index`` of dim ``dim``, without that dim."""
    if self.ndim == 0:
        raise ValueError("select: select() cannot be applied to a 0-dim tensor.")
    d = wrap("select", dim, self.ndim)
    n = self.shape[d]
    if not -n <= index < n:
        raise ValueError(f"select: index {index} out of range for tensor of size {list(self.shape)} at dimension {d}")
    index %= n
    return prims.squeeze(prims.slice_in_dim(self, index, index + 1, 1, d), [d])


def slice_(self, dim=0, start=None, end=None, step=1):
    """``self[start:end:step]`` along ``dim``: negative bounds wrap, bounds are clamped, ``step`` must be positive."""
    if self.ndim == 0:
        raise ValueError("slice: slice() cannot be applied to a 0-dim tensor.")
    if step <= 0:
        raise ValueError(f"slice: slice step must be positive, got {step}")
    d = wrap("slice", dim, self.ndim)
    n = self.shape[d]
    start = 0 if start is None else start
    end = n if end is None else end
    start = min(max(start + n if start < 0 else start, 0), n)
    end = min(max(end + n if end < 0 else end, start), n)
    return prims.slice_in_dim(self, start, end, step, d)


def as_strided(self, size, stride, storage_offset=None):
    """A view of ``self``'s storage with the given size, strides and offset (default: ``self``'s offset)."""
    if len(size) != len(stride):
        raise ValueError(f"as_strided: mismatch in length of strides and shape: {list(size)} and {list(stride)}")
    if any(s < 0 for s in stride):
        raise ValueError(f"as_strided: negative strides are not supported, got strides: {list(stride)}")
    offset = self.storage_offset() if storage_offset is None else storage_offset
    return prims.as_strided(self, list(size), list(stride), offset)


def diagonal(self, offset=0, dim1=0, dim2=1):
    """The diagonal ``offset`` of the (dim1, dim2) planes, as a new last dim."""
    if self.ndim < 2:
        raise ValueError(f"diagonal: needs a tensor with at least 2 dimensions, got {self.ndim}")
    d1, d2 = wrap("diagonal", dim1, self.ndim), wrap("diagonal", dim2, self.ndim)
    if d1 == d2:
        raise ValueError(f"diagonal: diagonal dimensions cannot be identical {dim1}, {dim2}")
    return prims.diagonal(self, offset, d1, d2)


def unfold(self, dimension, size, step):
    """All windows of ``size`` elements along ``dimension``, ``step`` apart, as a new last dim."""
    d = wrap("unfold", dimension, self.ndim)
    n = self.shape[d] if self.ndim else 1
    if size < 0:
        raise ValueError(f"unfold: size is {size} but must be >= 0")
    if size > n:
        raise ValueError(f"unfold: maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise ValueError(f"unfold: step is {step} but must be > 0")
    return prims.unfold(self, d, size, step)


# -- splitting -----------------------------------------------------------------


def _need_dims(op: str, self, dims=1):
    if self.ndim < dims:
        raise ValueError(f"{op}: expects at least a {dims}-dimensional tensor, got {self.ndim} dims")


def split(self, split_size, dim=0):
    """Consecutive views of ``split_size`` along ``dim`` (the last may be smaller)."""
    _need_dims("split", self)
    d = wrap("split", dim, self.ndim)
    n = self.shape[d]
    if split_size < 0:
        raise ValueError(f"split: split expects split_size be non-negative, but got split_size={split_size}")
    if split_size == 0 and n != 0:
        raise ValueError(f"split: split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
    count = max(-(-n // split_size), 1) if split_size else 1
    return tuple(prims.slice_in_dim(self, i * split_size, min((i + 1) * split_size, n), 1, d) for i in range(count))


def split_with_sizes(self, split_sizes, dim=0):
    """Consecutive views of the given sizes along ``dim`` (they must sum to its size)."""
    _need_dims("split_with_sizes", self)
    d = wrap("split_with_sizes", dim, self.ndim)
    n = self.shape[d]
    if any(s < 0 for s in split_sizes) or sum(split_sizes) != n:
        raise ValueError(
            f"split_with_sizes: split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
            f"at dimension {d}), but got split_sizes={list(split_sizes)}"
        )
    out, start = [], 0
    for s in split_sizes:
        out.append(prims.slice_in_dim(self, start, start + s, 1, d))
        start += s
    return tuple(out)


_MAX_SECTIONS = (1 << 31) - 1


def tensor_split_sections(self, sections, dim=0):
    """``sections`` nearly equal views along ``dim`` (the first ``size % sections`` one larger)."""
    _need_dims("tensor_split", self)
    if sections <= 0:
        raise ValueError(f"tensor_split: number of sections must be larger than 0, got {sections}")
    if sections > _MAX_SECTIONS:  # each section is a tensor object: 2**62 of them exhaust memory, not an error
        raise ValueError(f"tensor_split: number of sections must be at most {_MAX_SECTIONS}, got {sections}")
    d = wrap("tensor_split", dim, self.ndim)
    n = self.shape[d]
    base, extra = divmod(n, sections)
    out, start = [], 0
    for i in range(sections):
        stop = start + base + (1 if i < extra else 0)
        out.append(prims.slice_in_dim(self, start, stop, 1, d))
        start = stop
    return tuple(out)


def tensor_split_indices(self, indices, dim=0):
    """Views between consecutive ``indices`` along ``dim`` (sliced like ``self[a:b]``: wrapped and clamped)."""
    _need_dims("tensor_split", self)
    d = wrap("tensor_split", dim, self.ndim)
    bounds = [None, *indices, None]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        out.append(slice_(self, d, lo, hi, 1))
    return tuple(out)


def tensor_split_tensor(self, tensor_indices_or_sections, dim=0):
    """``tensor_split`` with sections (0-dim) or indices (1-D) given as an int64 CPU tensor (reads it)."""
    arg = tensor_indices_or_sections
    if arg.dtype is not _dtype.int64 or arg.device.type != "cpu":
        raise TypeError("tensor_split: tensor_indices_or_sections must be an int64 tensor on the CPU")
    if arg.ndim == 0:
        return tensor_split_sections(self, int(prims.item(arg)), dim)
    if arg.ndim != 1:
        raise ValueError(f"tensor_split: tensor_indices_or_sections must be 0-D or 1-D, got {arg.ndim}-D")
    return tensor_split_indices(self, [int(v) for v in arg.tolist()], dim)


def _directional_split(name: str, dim_fn, min_dims: int):
    def by_sections(self, sections):
        if self.ndim < min_dims:
            raise ValueError(
                f"{name}: torch.{name} requires a tensor with at least {min_dims} dimension, but got a tensor with "
                f"{self.ndim} dimensions!"
            )
        d = dim_fn(self)
        if sections == 0 or self.shape[d] % sections:
            raise ValueError(
                f"{name}: torch.{name} attempted to split along dimension {d}, but the size of the dimension "
                f"{self.shape[d]} is not divisible by the split_size {sections}!"
            )
        return tensor_split_sections(self, sections, d)

    def by_indices(self, indices):
        if self.ndim < min_dims:
            raise ValueError(
                f"{name}: torch.{name} requires a tensor with at least {min_dims} dimension, but got a tensor with "
                f"{self.ndim} dimensions!"
            )
        return tensor_split_indices(self, indices, dim_fn(self))

    by_sections.__doc__ = f"``{name}``: ``sections`` equal views (torch.{name} with an int)."
    by_indices.__doc__ = f"``{name}``: views between ``indices`` (torch.{name} with a list)."
    return by_sections, by_indices


hsplit_int, hsplit_array = _directional_split("hsplit", lambda x: 1 if x.ndim > 1 else 0, 1)
vsplit_int, vsplit_array = _directional_split("vsplit", lambda x: 0, 2)
dsplit_int, dsplit_array = _directional_split("dsplit", lambda x: 2, 3)


def chunk(self, chunks, dim=0):
    """At most ``chunks`` views of size ``ceil(n / chunks)`` along ``dim``."""
    _need_dims("chunk", self)
    if chunks <= 0:
        raise ValueError(f"chunk: chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap("chunk", dim, self.ndim)
    n = self.shape[d]
    size = -(-n // chunks)
    if size == 0 and n == 0:
        return split_with_sizes(self, [0] * chunks, d)
    return split(self, size, d)


def unbind(self, dim=0):
    """Every slice along ``dim``, without that dim."""
    if self.ndim == 0:
        raise DimIndexError("unbind: dimension specified as 0 but tensor has no dimensions")
    d = wrap("unbind", dim, self.ndim)
    return tuple(select(self, d, i) for i in range(self.shape[d]))


# -- aliases, complex views, matrix transposes ----------------------------------------


def alias(self):
    """A new view of ``self`` with identical metadata."""
    return prims.view_of(self)


def detach(self):
    """A new view of ``self`` (opweave has no autograd graph to detach from)."""
    return prims.view_of(self)


def view_as_real(self):
    """A complex tensor viewed as real with a trailing dim of 2 (real, imaginary)."""
    if not self.dtype.is_complex:
        raise TypeError(f"view_as_real: view_as_real is only supported for complex tensors, got {self.dtype.name}")
    return prims.view_as_real(self)


def view_as_complex(self):
    """A float32/float64 tensor with a last dim of size 2 and stride 1 viewed as complex."""
    if self.dtype not in (_dtype.float32, _dtype.float64):
        raise TypeError(
            f"view_as_complex: view_as_complex is only supported for float32 and float64 tensors, got {self.dtype.name}"
        )
    if self.ndim == 0:
        raise ValueError("view_as_complex: Input tensor must have one or more dimensions")
    if self.shape[-1] != 2:
        raise ValueError("view_as_complex: Tensor must have a last dimension of size 2")
    if self.stride()[-1] != 1:
        raise ValueError("view_as_complex: Tensor must have a last dimension with stride 1")
    if self.storage_offset() % 2 or any(s % 2 for s in self.stride()[:-1]):
        raise ValueError("view_as_complex: Tensor must have a stride divisible by 2 for all but last dimension")
    return prims.view_as_complex(self)


def _need_matrix(op: str, self, exact=False):
    if self.ndim < 2 or (exact and self.ndim != 2):
        what = "matrices (2-D tensors)" if exact else "matrices or batches of matrices"
        raise ValueError(f"{op}: tensor.{op} is only supported on {what}. Got {self.ndim}-D tensor.")


def _conj(x):
    return prims.conj_physical(x) if x.dtype.is_complex else x


def mT(self):  # noqa: N802 - torch's name
    """The transpose of the last two dims (a view)."""
    _need_matrix("mT", self)
    return transpose(self, -2, -1)


def mH(self):  # noqa: N802 - torch's name
    """The conjugate transpose of the last two dims (a view for real tensors, a copy for complex ones)."""
    _need_matrix("mH", self)
    return _conj(transpose(self, -2, -1))


def adjoint(self):
    """The conjugate transpose of the last two dims (a view for real tensors, a copy for complex ones)."""
    _need_matrix("adjoint", self)
    return _conj(transpose(self, -2, -1))


def matrix_H(self):  # noqa: N802 - torch's name
    """The conjugate transpose of a matrix (2-D only; a view for real tensors, a copy for complex ones)."""
    _need_matrix("H", self, exact=True)
    return _conj(transpose(self, 0, 1))


def numpy_T(self):  # noqa: N802 - torch's name
    """``self`` with all dims reversed (``Tensor.T``)."""
    return prims.transpose(self, list(range(self.ndim - 1, -1, -1)))


# -- in-place views: change self's own metadata -----------------------------------


def _inplace_view(fn, name: str):
    def kernel(self, *args):
        v = fn(self, *args)
        self._set_metadata(v._storage, v.shape, v.stride(), v.storage_offset())
        return self

    kernel.__doc__ = f"In-place ``{name}``: ``self``'s own shape and strides change; returns ``self``."
    return kernel


INPLACE_VIEWS = [
    ("t_(Tensor(a!) self) -> Tensor(a!)", t),
    ("transpose_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)", transpose),
    ("swapaxes_(Tensor(a!) self, int axis0, int axis1) -> Tensor(a!)", transpose),
    ("swapdims_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)", transpose),
    ("squeeze_(Tensor(a!) self) -> Tensor(a!)", squeeze),
    ("squeeze_.dim(Tensor(a!) self, int dim) -> Tensor(a!)", squeeze_dim),
    ("squeeze_.dims(Tensor(a!) self, int[] dim) -> Tensor(a!)", squeeze_dims),
    ("unsqueeze_(Tensor(a!) self, int dim) -> Tensor(a!)", unsqueeze),
    (
        "as_strided_(Tensor(a!) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a!)",
        as_strided,
    ),
]

VIEWS = [
    ("view(Tensor(a) self, SymInt[] size) -> Tensor(a)", view, CORE_VIEW),
    ("view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)", view_dtype, VIEW),
    ("view_as(Tensor(a) self, Tensor other) -> Tensor(a)", view_as, VIEW),
    ("reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)", reshape, ()),
    ("reshape_as(Tensor(a) self, Tensor other) -> Tensor(a)", reshape_as, ()),
    ("flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)", flatten, ()),
    ("unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)", unflatten, VIEW),
    ("ravel(Tensor(a) self) -> Tensor(a)", ravel, ()),
    ("squeeze(Tensor(a) self) -> Tensor(a)", squeeze, VIEW),
    ("squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)", squeeze_dim, VIEW),
    ("squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)", squeeze_dims, CORE_VIEW),
    ("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", unsqueeze, CORE_VIEW),
    ("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", transpose, VIEW),
    ("swapaxes(Tensor(a) self, int axis0, int axis1) -> Tensor(a)", swapaxes, VIEW),
    ("swapdims(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", transpose, VIEW),
    ("t(Tensor(a) self) -> Tensor(a)", t, VIEW),
    ("permute(Tensor(a) self, int[] dims) -> Tensor(a)", permute, CORE_VIEW),
    ("movedim.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)", movedim, VIEW),
    ("movedim.int(Tensor(a) self, int source, int destination) -> Tensor(a)", movedim_int, VIEW),
    ("moveaxis.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)", movedim, VIEW),
    ("moveaxis.int(Tensor(a) self, int source, int destination) -> Tensor(a)", movedim_int, VIEW),
    ("expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)", expand, CORE_VIEW),
    ("expand_as(Tensor(a) self, Tensor other) -> Tensor(a)", expand_as, VIEW),
    ("broadcast_to(Tensor(a) self, SymInt[] size) -> Tensor(a)", broadcast_to, VIEW),
    ("broadcast_tensors(Tensor[] tensors) -> Tensor[]", broadcast_tensors, VIEW),
    ("narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)", narrow, VIEW),
    (
        "narrow.Tensor(Tensor(a) self, int dim, Tensor start, SymInt length) -> Tensor(a)",
        narrow_tensor,
        ("view", "data_dependent_output"),
    ),
    ("select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)", select, CORE_VIEW),
    (
        "slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)",
        slice_,
        CORE_VIEW,
    ),
    (
        "as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)",
        as_strided,
        CORE_VIEW,
    ),
    ("diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)", diagonal, VIEW),
    ("unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)", unfold, VIEW),
    ("split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]", split, VIEW),
    ("split.sizes(Tensor(a -> *) self, SymInt[] split_size, int dim=0) -> Tensor(a)[]", split_with_sizes, VIEW),
    (
        "split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]",
        split_with_sizes,
        CORE_VIEW,
    ),
    (
        "tensor_split.sections(Tensor(a -> *) self, SymInt sections, int dim=0) -> Tensor(a)[]",
        tensor_split_sections,
        VIEW,
    ),
    (
        "tensor_split.indices(Tensor(a -> *) self, SymInt[] indices, int dim=0) -> Tensor(a)[]",
        tensor_split_indices,
        VIEW,
    ),
    (
        "tensor_split.tensor_indices_or_sections(Tensor(a -> *) self, Tensor tensor_indices_or_sections, "
        "int dim=0) -> Tensor(a)[]",
        tensor_split_tensor,
        ("view", "data_dependent_output"),
    ),
    ("hsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]", hsplit_int, VIEW),
    ("hsplit.array(Tensor(a -> *) self, int[] indices) -> Tensor(a)[]", hsplit_array, VIEW),
    ("vsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]", vsplit_int, VIEW),
    ("vsplit.array(Tensor(a -> *) self, int[] indices) -> Tensor(a)[]", vsplit_array, VIEW),
    ("dsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]", dsplit_int, VIEW),
    ("dsplit.array(Tensor(a -> *) self, int[] indices) -> Tensor(a)[]", dsplit_array, VIEW),
    ("chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]", chunk, VIEW),
    ("unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]", unbind, VIEW),
    ("alias(Tensor(a) self) -> Tensor(a)", alias, CORE_VIEW),
    ("detach(Tensor(a) self) -> Tensor(a)", detach, VIEW),
    ("view_as_real(Tensor(a) self) -> Tensor(a)", view_as_real, VIEW),
    ("view_as_complex(Tensor(a) self) -> Tensor(a)", view_as_complex, VIEW),
    ("mT(Tensor(a) self) -> Tensor(a)", mT, VIEW),
    ("mH(Tensor(a) self) -> Tensor(a)", mH, VIEW),
    ("adjoint(Tensor(a) self) -> Tensor(a)", adjoint, VIEW),
    ("matrix_H(Tensor(a) self) -> Tensor(a)", matrix_H, VIEW),
    ("numpy_T(Tensor(a) self) -> Tensor(a)", numpy_T, VIEW),
]

# Tensor properties (torch's ``t.T``, ``t.mT``, ``t.H``, ``t.mH``, ``t.real``, ``t.imag``), set unless the
# Tensor class already has them. ``real`` and ``imag`` are settable: ``t.real = v`` writes ``v`` into the view.
PROPERTIES = {"T": "numpy_T", "mT": "mT", "H": "matrix_H", "mH": "mH", "real": "real", "imag": "imag"}
SETTABLE = frozenset({"real", "imag"})


def install_properties() -> None:
    """Attach :data:`PROPERTIES` to Tensor (called once every op they name is defined)."""
    from .._ops import canonical

    for attr, name in PROPERTIES.items():
        if not isinstance(Tensor.__dict__.get(attr), property):
            op = getattr(canonical, name).default
            setter = _view_setter(op) if attr in SETTABLE else None
            setattr(Tensor, attr, property(_view_property(op), setter, doc=op.__doc__))


def _view_property(op: OpOverload) -> Callable[[Tensor], Tensor]:
    def view(self: Tensor) -> Tensor:
        return op(self)

    return view


def _view_setter(op: OpOverload) -> Callable[[Tensor, Any], None]:
    def assign(self: Tensor, value: Any) -> None:
        op(self).copy_(value)

    return assign


def _define():
    for schema, fn, tags in VIEWS:
        define(schema, fn, tags=tags)
    for schema, fn in INPLACE_VIEWS:
        define(schema, _inplace_view(fn, schema.split("(")[0]), tags=("inplace_view",))


_define()
