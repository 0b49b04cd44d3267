"""``opweave.backends.kernel``: what a backend's kernels need from the core, as public API.

A kernel receives opweave Tensors (positional, in schema order) and returns opweave
Tensors. With this module it can

- allocate the outputs a prim's meta function describes (:func:`allocate_outputs`,
  :func:`empty_strided`);
- wrap device memory in a Tensor (:func:`wrap_storage` for a :class:`Storage`,
  :func:`wrap_handle` for a raw backend handle, :func:`native_wrapper` for results
  whose storage is made only when asked for);
- read a tensor's memory: :func:`storage`, :func:`buffer` (the backend handle),
  :func:`strides`, :func:`storage_offset`, :func:`nbytes`, :func:`cached_native`;
- change a tensor's view in place (:func:`set_view`, for ``resize``/``set_``-like prims);
- decline a case: ``raise Decline("why")`` and the dispatcher runs the next candidate
  (another registered kernel, the backend's fallback, the op's decomposition, or for
  a prim the CPU kernel with copies); ``opweave.dispatch.explain`` shows the chain and
  the last decline.

Everything here is a plain function over public objects; nothing a plugin needs is private.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _keys
from .._backends import Backend, get
from .._device import device as Device
from .._dispatcher import Decline
from .._dtype import dtype as DType
from .._quantized import QParams, int_view, make_quantized, qrange
from .._tensor import Size, Storage, Tensor, contiguous_strides
from ..prims._utils import Out, is_cpu_scalar, output_strides
from ..refs._utils import broadcast_shapes

if TYPE_CHECKING:
    from .._ops import OpOverload

__all__ = [
    "Decline",
    "Out",
    "QParams",
    "allocate_outputs",
    "broadcast_shapes",
    "buffer",
    "cached_native",
    "contiguous_strides",
    "dense_keys",
    "drop_strides",
    "empty_strided",
    "int_view",
    "is_cpu_scalar",
    "is_wrapped_number",
    "make_quantized",
    "native_wrapper",
    "nbytes",
    "output_strides",
    "qparams",
    "qrange",
    "same_kind_binary",
    "same_kind_natives",
    "set_cached_native",
    "set_view",
    "storage",
    "storage_offset",
    "strides",
    "wrap_handle",
    "wrap_storage",
]

_new = object.__new__


def dense_keys(device_type: str) -> int:
    """The dispatch key set of a Dense tensor of ``device_type`` (what :func:`wrap_storage` gives it)."""
    return _keys.layer_bit(_keys.Layer.Dense) | _keys.backend_bit(device_type)


def empty_strided(shape: Sequence[int], stride: Sequence[int], dtype: DType, device: Device) -> Tensor:
    """A new uninitialised tensor with this layout, allocated by ``device``'s backend."""
    return get(device.type).empty_strided(tuple(shape), tuple(stride), dtype, device)


def allocate_outputs(op: OpOverload, *args: Any, device: Device | None = None) -> Any:
    """Allocate, on ``device``, the outputs ``op``'s meta function describes for ``args``.

    The result has the meta function's structure (a Tensor, or a tuple/list of them):
    each output gets the shape, strides and dtype the meta function gives. ``device``
    defaults to the device of the first tensor argument. ``ValueError`` if ``op`` has no
    meta function (canonical ops have none: allocate in their kernels directly).
    """
    if op.meta is None:
        raise ValueError(f"allocate_outputs: {op.name} has no meta function")
    if device is None:
        device = next((a.device for a in _tensors(args)), None)
        if device is None:
            raise ValueError(f"allocate_outputs: {op.name}: no tensor argument; pass device=")
    described = op.meta(*args)
    return _allocate_like(described, device)


def _tensors(args):
    for a in args:
        if isinstance(a, Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (v for v in a if isinstance(v, Tensor))


def _allocate_like(described, device):
    if isinstance(described, Tensor):
        return empty_strided(described.shape, described.stride(), described.dtype, device)
    if isinstance(described, (list, tuple)):
        return type(described)(_allocate_like(d, device) for d in described)
    return described


def wrap_storage(
    storage: Storage,
    shape: Sequence[int],
    stride: Sequence[int] | None = None,
    offset: int = 0,
    *,
    dtype: DType,
    device: Device | None = None,
) -> Tensor:
    """A Dense tensor viewing ``storage`` (no copy): ``stride`` defaults to contiguous, ``offset`` is in elements."""
    shape = tuple(shape)
    stride = contiguous_strides(shape) if stride is None else tuple(stride)
    return Tensor._make(storage, shape, stride, offset, dtype, device or storage.device)


def wrap_handle(
    handle: Any,
    nbytes: int,
    shape: Sequence[int],
    stride: Sequence[int] | None = None,
    offset: int = 0,
    *,
    dtype: DType,
    device: Device,
    backend: Backend | None = None,
) -> Tensor:
    """A tensor over device memory ``handle`` of ``nbytes`` bytes owned by ``backend`` (default: the device's)."""
    storage_ = Storage(handle, nbytes, device, backend or get(device.type))
    return wrap_storage(storage_, shape, stride, offset, dtype=dtype, device=device)


def native_wrapper(device: Device) -> Callable[..., Tensor]:
    """A fast ``wrap(native, dtype, storage=None) -> Tensor`` for results held as a backend-native array.

    The tensor has ``native.shape``, keeps ``native`` (see :func:`cached_native`) and gets its
    strides, and its storage unless one is given, only when asked for, from
    ``Backend.strides_of``/``Backend.storage_for`` of ``device``'s backend: most intermediate
    results are never asked for them.
    """
    if device.index is None and device.type not in ("cpu", "meta"):
        device = Device(device.type, 0)
    keys = dense_keys(device.type)

    def wrap(native: Any, dtype: DType, storage: Storage | None = None) -> Tensor:
        t = _new(Tensor)
        t._st = storage
        t._shape = Size(native.shape)
        t._stride = None
        t._offset = 0
        t._dtype = dtype
        t._device = device
        t._keys = keys
        t._native = native
        t._wrapped_number = False
        t._qparams = None
        t._ag = None
        t._base = None
        return t

    return wrap


def storage(t: Tensor) -> Storage:
    """The :class:`Storage` ``t`` views (made now if the backend creates storages lazily)."""
    return t._storage


def buffer(t: Tensor) -> Any:
    """The backend handle of ``t``'s storage (a NumPy byte array, a ``cl.Buffer``, a device pointer...)."""
    return t._storage.handle


def strides(t: Tensor) -> tuple[int, ...]:
    """``t``'s strides in elements."""
    return t.stride()


def storage_offset(t: Tensor) -> int:
    """Offset of ``t``'s first element in its storage, in elements."""
    return t._offset


def nbytes(t: Tensor) -> int:
    """Size of ``t``'s whole storage in bytes (not only the bytes its elements span)."""
    return t._storage.nbytes


def cached_native(t: Tensor) -> Any:
    """The backend-native view cached on ``t`` (a NumPy array on the CPU), or None."""
    return t._native


def set_cached_native(t: Tensor, native: Any) -> None:
    """Cache ``native`` as ``t``'s backend-native view (it must show exactly ``t``'s elements)."""
    t._native = native


def set_view(t: Tensor, storage_: Storage, shape: Sequence[int], stride: Sequence[int], offset: int) -> None:
    """Make ``t`` view ``storage_`` with this layout, in place (``resize_``, ``set_``); the native cache is dropped."""
    t._set_metadata(storage_, shape, stride, offset)


def drop_strides(t: Tensor) -> None:
    """Forget ``t``'s strides so that they are asked of the backend again (after its native view changed)."""
    t._stride = None


def is_wrapped_number(t: Tensor) -> bool:
    """Whether ``t`` is a Python scalar wrapped as a 0-dim tensor (it promotes like a scalar)."""
    return t._wrapped_number


def qparams(t: Tensor) -> QParams | None:
    """The quantization parameters of ``t`` (None if it is not quantized)."""
    return t._qparams


_LARGEST: dict = {}


def _largest(dtype: DType) -> float:
    """The largest finite value of a floating dtype."""
    found = _LARGEST.get(dtype)
    if found is None:
        found = _LARGEST[dtype] = float(np.finfo(dtype.numpy).max)
    return found


def same_kind_binary(
    compute: Callable[[Any, Any], Any],
    dtypes: frozenset,
    wrap: Callable[[Any, DType], Tensor],
    materialise: Callable[[Tensor], Any],
    what: str = "binary op",
    result_dtype: DType | None = None,
) -> Callable[..., Tensor]:
    """A direct kernel for a binary canonical op (``add.Tensor``, ``mul.Tensor``...) on backend-native arrays.

    The kernel takes ``(x, y, *rest)``. When ``x`` and ``y`` share a dtype in ``dtypes`` and a
    shape, and ``rest`` is empty or ``alpha=1``, it returns ``wrap(compute(nx, ny), dtype)``,
    where ``nx`` is ``x``'s cached native view or ``materialise(x)``; otherwise it declines, so
    the op's decomposition (promotion, broadcasting, the prim) runs the call. It is the CPU's
    ``a + b``; building it here keeps that path as short as a hand-written one.

    A wrapped Python bool/int/float beside a floating tensor of one of ``dtypes`` is taken too
    (``a * 2.0``, ``1 - a``): PyTorch's promotion keeps the tensor's dtype, and ``compute``
    receives the Python number itself (NumPy's weak scalars give the same result), so no
    tensor is made for the scalar. A value the dtype cannot hold finitely declines.
    ``result_dtype``: the result's dtype when it is not the operands' (``bool`` for comparisons).
    """

    def kernel(x, y, *rest):
        if rest and not (type(rest[0]) is int and rest[0] == 1):
            raise Decline(f"{what}: alpha != 1")
        dtype = x._dtype
        if dtype is y._dtype and dtype in dtypes and x._shape == y._shape:
            a, b = x._native, y._native
            return wrap(
                compute(materialise(x) if a is None else a, materialise(y) if b is None else b), result_dtype or dtype
            )
        # A Python bool/int/float beside a floating tensor keeps the tensor's dtype (PyTorch's promotion);
        # NumPy's weak Python scalars compute the same, and no tensor is made for the scalar.
        other = y._dtype
        if y._wrapped_number and dtype in dtypes and dtype.is_floating_point and other.kind != "complex":
            value = y._native.item()
            if -_largest(dtype) <= value <= _largest(dtype):  # else NumPy warns on the cast; PyTorch gives inf
                a = x._native
                return wrap(compute(materialise(x) if a is None else a, value), result_dtype or dtype)
        if x._wrapped_number and other in dtypes and other.is_floating_point and dtype.kind != "complex":
            value = x._native.item()
            if -_largest(other) <= value <= _largest(other):
                b = y._native
                return wrap(compute(value, materialise(y) if b is None else b), result_dtype or other)
        raise Decline(f"{what}: not two same-shape tensors of one of its dtypes")

    kernel.__doc__ = f"{what} for two same-shape tensors of one dtype in {sorted(d.name for d in dtypes)}."
    return kernel


def same_kind_natives(x: Tensor, y: Tensor, dtypes: frozenset) -> tuple | None:
    """``(dtype, native of x, native of y)`` when ``x`` and ``y`` share a dtype in ``dtypes`` and a shape, else None.

    The natives are the cached ones (None where none is cached yet). It is the test a fast
    elementwise kernel makes before taking its one-call path (the CPU's ``a + b``), done in one call.
    """
    dtype = x._dtype
    if dtype is y._dtype and dtype in dtypes and x._shape == y._shape:
        return dtype, x._native, y._native
    return None
