"""What the names in a PyTorch-format pickle mean in opweave: storages from the archive, and tensors over them.

One :class:`Loader` serves one ``opweave.load`` call. Its :meth:`Loader.globals`
table maps PyTorch's names (``torch._utils._rebuild_tensor_v2``, ``torch.FloatStorage``,
``torch.float32``, ``collections.OrderedDict`` ...) to opweave objects; the unpicklers
look names up there and nowhere else when ``weights_only=True``. Each storage
record is read once (or mapped) onto the device ``map_location`` chooses, and every
tensor that names it becomes a view of that one storage. Every argument that comes
from the file is checked before it is used: a view must lie inside its storage.
"""

from __future__ import annotations

import builtins
import collections
import numbers
import pickle
from _codecs import encode

import numpy as np

from .. import _backends, _dtype, _quantized
from .._device import device as _device
from .._tensor import Size, Storage, Tensor
from . import _names

_CPU = _device("cpu")


def bad(message: str) -> pickle.UnpicklingError:
    """The error for a file whose pickle does not describe valid opweave objects."""
    return pickle.UnpicklingError(message)


class MapLocationError(TypeError):
    """``map_location`` is not something ``load`` can use (passes through the unpicklers unchanged)."""


class StorageType:
    """A storage class named in a file (``torch.FloatStorage``): its dtype, None for ``UntypedStorage``."""

    __slots__ = ("name", "dtype")

    def __init__(self, name: str, dtype):
        self.name, self.dtype = name, dtype

    def __repr__(self):
        return f"torch.{self.name}"


class LoadedStorage:
    """A storage read from the archive, with the dtype its file declared (None: untyped bytes)."""

    __slots__ = ("storage", "dtype", "big_endian")

    def __init__(self, storage: Storage, dtype, big_endian: bool):
        self.storage, self.dtype, self.big_endian = storage, dtype, big_endian


class _Parameter:
    """``torch.nn.Parameter`` as a pickle global: builds an :class:`opweave.nn.Parameter`."""

    __slots__ = ()

    def __call__(self, data=None, requires_grad=True):
        return _parameter(data, requires_grad)


def _parameter(data, requires_grad):
    from ..nn.parameter import Parameter  # imported on first use: loading plain tensors needs no nn

    return Parameter(data, requires_grad=bool(requires_grad))


def _with_requires_grad(t: Tensor, requires_grad) -> Tensor:
    if requires_grad:
        t.requires_grad_(True)
    return t


PARAMETER = _Parameter()


def _int(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise bad(f"{what} must be an int, got {type(value).__name__}")
    return int(value)


def _int_tuple(value, what: str) -> tuple:
    if not isinstance(value, (tuple, list)):
        raise bad(f"{what} must be a tuple of ints, got {type(value).__name__}")
    out = tuple(_int(v, what) for v in value)
    if any(v < 0 for v in out):
        raise bad(f"{what} must not be negative, got {out}")
    return out


def check_view(size, stride, offset, dtype, storage: Storage, where: str) -> tuple:
    """Validated ``(shape, stride, offset)``: the view must lie inside ``storage``."""
    shape = _int_tuple(size, f"{where}: size")
    strides = _int_tuple(stride, f"{where}: stride")
    offset = _int(offset, f"{where}: storage offset")
    if len(shape) != len(strides):
        raise bad(f"{where}: size {shape} and stride {strides} have different lengths")
    if offset < 0:
        raise bad(f"{where}: negative storage offset {offset}")
    if storage.device.type != "meta" and all(shape):
        last = offset + sum((n - 1) * s for n, s in zip(shape, strides))
        available = storage.nbytes // dtype.itemsize
        if last >= available:
            raise bad(
                f"{where}: a {dtype.name} view with size {shape}, stride {strides} and offset {offset} "
                f"needs {last + 1} elements but its storage holds {available}"
            )
    return shape, strides, offset


class Loader:
    """Resolves persistent ids and rebuild calls for one load (see the module docstring)."""

    def __init__(self, reader, map_location, mapping, where: str):
        self.reader = reader
        self.map_location = map_location
        self.mapping = mapping  # a copy-on-write map of the file (mmap=True), or None
        self.where = where
        self.big_endian = False
        self._storages: dict[str, LoadedStorage] = {}
        self._checked_devices: dict = {}

    # -- storages ----------------------------------------------------------------------------------

    def persistent_load(self, pid):
        """``('storage', storage_type, key, location, numel)`` -> the :class:`LoadedStorage` (read once per key)."""
        if type(pid) is not tuple or len(pid) != 5:
            raise bad(f"{self.where}: unsupported persistent id {pid!r}; expected a storage reference")
        kind, storage_type, key, location, numel = pid
        if kind != "storage":
            raise bad(f"{self.where}: only storages may be persistent ids, got {kind!r}")
        if isinstance(storage_type, _UnsupportedDtype):
            raise bad(f"{self.where}: the file holds a {storage_type!r}, whose dtype opweave does not have")
        if not isinstance(storage_type, StorageType):
            raise bad(f"{self.where}: {storage_type!r} is not a storage type")
        if not isinstance(key, str) or not isinstance(location, str):
            raise bad(f"{self.where}: storage key and location must be strings, got {key!r} and {location!r}")
        numel = _int(numel, f"{self.where}: storage {key} size")
        found = self._storages.get(key)
        if found is not None:
            if found.dtype is not storage_type.dtype:
                raise bad(f"{self.where}: storage {key} is declared as both {found.dtype} and {storage_type.dtype}")
            return found
        itemsize = storage_type.dtype.itemsize if storage_type.dtype is not None else 1
        nbytes = numel * itemsize
        if numel < 0:
            raise bad(f"{self.where}: storage {key} declares a negative size {numel}")
        record_name = f"data/{key}"
        target = self._restore_target(location)
        if isinstance(target, _device) and target.type == "meta":
            storage = _backends.get("meta").allocate(nbytes, target)
        else:
            record = self.reader.record(record_name)
            if record.size != nbytes:
                raise bad(
                    f"{self.where}: storage {key} declares {numel} elements of {itemsize} bytes ({nbytes} bytes) "
                    f"but its record {record_name} holds {record.size} bytes"
                )
            host = (
                self.reader.map_array(record_name, self.mapping)
                if self.mapping is not None
                else self.reader.read_array(record_name)
            )
            if self.big_endian and storage_type.dtype is not None:
                _swap_in_place(host, storage_type.dtype)
            storage = self._place(host, location, target)
        loaded = LoadedStorage(storage, storage_type.dtype, self.big_endian and storage_type.dtype is None)
        self._storages[key] = loaded
        return loaded

    def _restore_target(self, location: str):
        """The device a storage saved at ``location`` goes to (or the user's callable)."""
        ml = self.map_location
        if callable(ml) and not isinstance(ml, (str, _device)):
            return ml
        if ml is None:
            name = location
        elif isinstance(ml, (str, _device)):
            name = ml
        elif isinstance(ml, dict):
            name = ml.get(location, location)
        else:
            raise MapLocationError(
                f"{self.where}: map_location must be a str, an opweave.device, a dict or a callable, "
                f"got {type(ml).__name__}"
            )
        return self._device(name, location)

    def _device(self, name, location: str):
        dev = self._checked_devices.get((str(name), location))
        if dev is not None:
            return dev
        try:
            dev = name if isinstance(name, _device) else _device(name)
        except (TypeError, ValueError) as exc:
            raise bad(f"{self.where}: invalid storage location {name!r}: {exc}") from None
        try:
            _backends.check_device(dev)
        except RuntimeError as exc:
            saved = f" (saved at '{location}')" if str(dev) != location else ""
            raise RuntimeError(
                f"{self.where}: the file's tensors go to device '{dev}'{saved}, which is not available here: "
                f"{exc}. Pass map_location to load them elsewhere, e.g. opweave.load(f, map_location='cpu')"
            ) from None
        self._checked_devices[(str(name), location)] = dev
        return dev

    def _place(self, host: np.ndarray, location: str, target) -> Storage:
        if isinstance(target, _device):
            return _storage_on(host, target)
        cpu_storage = _storage_on(host, _CPU)
        result = target(cpu_storage, location)
        if result is None:
            return _storage_on(host, self._device(location, location))
        if isinstance(result, Storage):
            return result
        if isinstance(result, (str, _device)):
            return _storage_on(host, self._device(result, location))
        raise MapLocationError(
            f"{self.where}: map_location returned {type(result).__name__}; expected a Storage, a device or None"
        )

    # -- tensors -----------------------------------------------------------------------------------

    def _view(self, loaded, offset, size, stride, dtype, what: str) -> Tensor:
        if not isinstance(loaded, LoadedStorage):
            raise bad(f"{self.where}: {what} expects a storage, got {type(loaded).__name__}")
        storage = loaded.storage
        if loaded.big_endian:  # an untyped storage from a big-endian file: swap once its dtype is known
            _swap_storage(storage, dtype)
            loaded.big_endian = False
        shape, strides, offset = check_view(size, stride, offset, dtype, storage, f"{self.where}: {what}")
        self._check_dtype_on_device(dtype, storage.device)
        base = _quantized.STORAGE_DTYPE.get(dtype, dtype)
        return Tensor._make(storage, shape, strides, offset, base, storage.device)

    def _check_dtype_on_device(self, dtype, dev) -> None:
        backend = _backends.get(dev.type)
        supported = backend.dtypes
        plain = _quantized.STORAGE_DTYPE.get(dtype, dtype)
        if supported is not None and plain not in supported:
            raise RuntimeError(
                f"{self.where}: device '{dev}' has no {plain.name} tensors; "
                "pass map_location to load them elsewhere, e.g. map_location='cpu'"
            )

    def rebuild_tensor(self, storage, storage_offset, size, stride):
        """``torch._utils._rebuild_tensor``: a view of a typed storage."""
        dtype = self._typed(storage, "_rebuild_tensor")
        if dtype.is_quantized:
            raise bad(f"{self.where}: a {dtype.name} storage needs _rebuild_qtensor")
        return self._view(storage, storage_offset, size, stride, dtype, "_rebuild_tensor")

    def rebuild_tensor_v2(
        self, storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None, metadata=None
    ):
        """``torch._utils._rebuild_tensor_v2``; ``requires_grad`` is kept, backward hooks are dropped."""
        return _with_requires_grad(self.rebuild_tensor(storage, storage_offset, size, stride), requires_grad)

    def rebuild_tensor_v3(
        self, storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None
    ):
        """``torch._utils._rebuild_tensor_v3``: a view of an untyped storage with its own dtype."""
        if isinstance(dtype, _UnsupportedDtype):
            raise bad(f"{self.where}: the file holds a tensor of dtype {dtype!r}, which opweave does not have")
        if not isinstance(dtype, _dtype.dtype) or dtype.is_quantized:
            raise bad(f"{self.where}: _rebuild_tensor_v3 needs a plain opweave dtype, got {dtype!r}")
        if isinstance(storage, LoadedStorage) and storage.dtype is not None and storage.dtype is not dtype:
            raise bad(f"{self.where}: _rebuild_tensor_v3 views a {storage.dtype.name} storage as {dtype.name}")
        t = self._view(storage, storage_offset, size, stride, dtype, "_rebuild_tensor_v3")
        return _with_requires_grad(t, requires_grad)

    def rebuild_qtensor(
        self, storage, storage_offset, size, stride, quantizer_params, requires_grad=False, backward_hooks=None
    ):
        """``torch._utils._rebuild_qtensor``: per-tensor or per-channel affine quantized tensors."""
        dtype = self._typed(storage, "_rebuild_qtensor")
        if not dtype.is_quantized:
            raise bad(f"{self.where}: _rebuild_qtensor needs a quantized storage, got {dtype.name}")
        if not isinstance(quantizer_params, tuple) or not quantizer_params:
            raise bad(f"{self.where}: _rebuild_qtensor: malformed quantizer parameters {quantizer_params!r}")
        scheme = quantizer_params[0]
        if not isinstance(scheme, _quantized.QScheme):
            raise bad(f"{self.where}: _rebuild_qtensor: {scheme!r} is not a qscheme")
        int_tensor = self._view(storage, storage_offset, size, stride, dtype, "_rebuild_qtensor")
        if not scheme.per_channel:
            if len(quantizer_params) != 3:
                raise bad(f"{self.where}: _rebuild_qtensor: {scheme} takes (scheme, scale, zero_point)")
            scale, zero_point = quantizer_params[1:]
            if not isinstance(scale, numbers.Real) or isinstance(scale, bool):
                raise bad(f"{self.where}: _rebuild_qtensor: scale must be a float, got {scale!r}")
            zero_point = _int(zero_point, f"{self.where}: _rebuild_qtensor: zero_point")
            params = _quantized.QParams(scheme, float(scale), zero_point)
        else:
            if len(quantizer_params) != 4:
                raise bad(f"{self.where}: _rebuild_qtensor: {scheme} takes (scheme, scales, zero_points, axis)")
            scales, zero_points, axis = quantizer_params[1:]
            axis = _int(axis, f"{self.where}: _rebuild_qtensor: axis")
            if not 0 <= axis < max(int_tensor.ndim, 1) or int_tensor.ndim == 0:
                raise bad(f"{self.where}: _rebuild_qtensor: axis {axis} is out of range for {int_tensor.ndim} dims")
            channels = int_tensor.shape[axis]
            scales = _values(scales, "scales", channels, self.where, float)
            zero_points = _values(zero_points, "zero_points", channels, self.where, int)
            params = _quantized.QParams(scheme, None, None, scales, zero_points, axis)
        return _quantized.make_quantized(int_tensor, params, dtype)

    def rebuild_meta_tensor_no_storage(self, dtype, size, stride, requires_grad=False):
        """``torch._utils._rebuild_meta_tensor_no_storage``: a tensor on the meta device."""
        if not isinstance(dtype, _dtype.dtype):
            raise bad(f"{self.where}: _rebuild_meta_tensor_no_storage needs a dtype, got {dtype!r}")
        meta = _device("meta")
        storage = _backends.get("meta").allocate(0, meta)
        shape, strides, _ = check_view(size, stride, 0, dtype, storage, f"{self.where}: meta tensor")
        return Tensor._make(storage, shape, strides, 0, dtype, meta)

    def rebuild_device_tensor_from_cpu_tensor(self, data, dtype, device, requires_grad=False):
        """``torch._utils._rebuild_device_tensor_from_cpu_tensor``: ``data`` moved to ``device`` (mapped)."""
        if not isinstance(data, Tensor) or not isinstance(dtype, _dtype.dtype):
            raise bad(f"{self.where}: _rebuild_device_tensor_from_cpu_tensor: malformed arguments")
        target = self._restore_target(str(device))
        dev = target if isinstance(target, _device) else _CPU
        return data.to(device=dev, dtype=dtype)

    def rebuild_parameter(self, data, requires_grad=True, backward_hooks=None):
        """``torch._utils._rebuild_parameter``: an :class:`opweave.nn.Parameter` over ``data``."""
        if not isinstance(data, Tensor):
            raise bad(f"{self.where}: _rebuild_parameter needs a tensor, got {type(data).__name__}")
        return _parameter(data, requires_grad)

    def rebuild_parameter_with_state(self, data, requires_grad, backward_hooks, state):
        """``torch._utils._rebuild_parameter_with_state``: as :meth:`rebuild_parameter`; Python attributes refused."""
        if state:
            raise bad(f"{self.where}: parameters with Python attributes ({sorted(state)}) are not supported")
        return self.rebuild_parameter(data, requires_grad)

    def rebuild_from_type_v2(self, func, new_type, args, state):
        """``torch._tensor._rebuild_from_type_v2``: plain tensors only (no subclasses, no attributes)."""
        if new_type is not Tensor and new_type is not PARAMETER:
            raise bad(f"{self.where}: tensor subclass {new_type!r} is not supported")
        if state:
            raise bad(f"{self.where}: tensors with Python attributes are not supported")
        if not isinstance(args, tuple):
            raise bad(f"{self.where}: _rebuild_from_type_v2: malformed arguments")
        return func(*args)

    def unsupported(self, what: str):
        """A global opweave knows but cannot rebuild: calling it raises naming it."""

        def refuse(*args, **kwargs):
            raise NotImplementedError(f"{self.where}: the file holds {what}, which opweave cannot load")

        refuse.__qualname__ = what
        return refuse

    def _typed(self, storage, what: str):
        if not isinstance(storage, LoadedStorage):
            raise bad(f"{self.where}: {what} expects a storage, got {type(storage).__name__}")
        if storage.dtype is None:
            raise bad(f"{self.where}: {what} needs a typed storage, got an UntypedStorage")
        return storage.dtype

    # -- the table ---------------------------------------------------------------------------------

    def globals(self) -> dict:
        """``(module, name) -> object`` for every global a weights-only file may name."""
        table: dict = {
            ("collections", "OrderedDict"): collections.OrderedDict,
            ("collections", "Counter"): collections.Counter,
            ("builtins", "set"): builtins.set,
            ("builtins", "frozenset"): builtins.frozenset,
            ("builtins", "complex"): builtins.complex,
            ("builtins", "bytearray"): _bytearray,
            ("builtins", "bytes"): _bytes,
            ("builtins", "slice"): builtins.slice,
            ("_codecs", "encode"): encode,
            ("torch", "Size"): Size,
            ("torch", "Tensor"): Tensor,
            ("torch", "device"): _device,
            ("torch.nn.parameter", "Parameter"): PARAMETER,
            ("torch.storage", "UntypedStorage"): StorageType("UntypedStorage", None),
            ("torch._tensor", "_rebuild_from_type_v2"): self.rebuild_from_type_v2,
        }
        for name, dt in _names.TORCH_DTYPES.items():
            table[("torch", name)] = dt
        for name, dt in _names.DTYPE_OF_STORAGE_CLASS.items():
            table[("torch", name)] = StorageType(name, dt)
        for name in _names.UNSUPPORTED_STORAGE_CLASSES:
            table[("torch", name)] = _UnsupportedDtype(name)
        for name in _names.UNSUPPORTED_TORCH_DTYPES:
            table[("torch", name)] = _UnsupportedDtype(name)
        for name, q in _names.QSCHEMES.items():
            table[("torch", name)] = q
        for name in _names.UNSUPPORTED_QSCHEMES:
            table[("torch", name)] = self.unsupported(f"the qscheme torch.{name}")
        rebuilds = {
            "_rebuild_tensor": self.rebuild_tensor,
            "_rebuild_tensor_v2": self.rebuild_tensor_v2,
            "_rebuild_tensor_v3": self.rebuild_tensor_v3,
            "_rebuild_qtensor": self.rebuild_qtensor,
            "_rebuild_meta_tensor_no_storage": self.rebuild_meta_tensor_no_storage,
            "_rebuild_device_tensor_from_cpu_tensor": self.rebuild_device_tensor_from_cpu_tensor,
            "_rebuild_parameter": self.rebuild_parameter,
            "_rebuild_parameter_with_state": self.rebuild_parameter_with_state,
        }
        for name, fn in rebuilds.items():
            table[(_names.UTILS, name)] = fn
        for name in ("_rebuild_sparse_tensor", "_rebuild_nested_tensor", "_rebuild_wrapper_subclass"):
            table[(_names.UTILS, name)] = self.unsupported(f"a tensor rebuilt by torch._utils.{name}")
        table[(_names.UTILS, "_rebuild_device_tensor_from_numpy")] = self.unsupported(
            "a tensor rebuilt from a NumPy array (torch._utils._rebuild_device_tensor_from_numpy)"
        )
        table[("torch.serialization", "_get_layout")] = self.unsupported("a sparse tensor layout")
        return table


def _checked_bytes_args(args, what: str) -> None:
    """``bytes(n)`` would allocate ``n`` bytes the file never holds: only data (or nothing) is accepted."""
    if args and not isinstance(args[0], (str, bytes, bytearray)):
        raise bad(f"{what}() from a file takes a string or bytes, got {type(args[0]).__name__}")


def _bytes(*args):
    """``builtins.bytes`` as pickles use it (``bytes()``, ``bytes(data)``, ``bytes(text, encoding)``)."""
    _checked_bytes_args(args, "bytes")
    return builtins.bytes(*args)


def _bytearray(*args):
    """``builtins.bytearray`` as pickles use it (never ``bytearray(n)``)."""
    _checked_bytes_args(args, "bytearray")
    return builtins.bytearray(*args)


class _UnsupportedDtype:
    """A PyTorch dtype opweave lacks: any use of it raises naming it."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


def _values(tensor_or_seq, what: str, channels: int, where: str, kind) -> tuple:
    if isinstance(tensor_or_seq, Tensor):
        values = tensor_or_seq.cpu().numpy().reshape(-1).tolist()
    elif isinstance(tensor_or_seq, (list, tuple)):
        values = list(tensor_or_seq)
    else:
        raise bad(f"{where}: _rebuild_qtensor: {what} must be a tensor, got {type(tensor_or_seq).__name__}")
    if len(values) != channels:
        raise bad(f"{where}: _rebuild_qtensor: {len(values)} {what} for {channels} channels")
    try:
        return tuple(kind(v) for v in values)
    except (TypeError, ValueError, OverflowError) as exc:
        raise bad(f"{where}: _rebuild_qtensor: malformed {what}: {exc}") from None


def _storage_on(host: np.ndarray, dev) -> Storage:
    """A storage on ``dev`` holding ``host``'s bytes (the CPU adopts ``host`` itself: no copy)."""
    if dev.type == "cpu":
        from .._factories import from_numpy

        return from_numpy(host).untyped_storage()
    return _backends.get(dev.type).copy_from_host(host, dev)


def _swap_in_place(host: np.ndarray, dtype) -> None:
    """Big-endian elements to native order, in place (complex numbers swap each half)."""
    size = dtype.itemsize // 2 if dtype.is_complex else dtype.itemsize
    if size > 1 and host.size:
        host.view(f"u{size}").byteswap(inplace=True)


def _swap_storage(storage: Storage, dtype) -> None:
    """:func:`_swap_in_place` on a storage that is already on its device."""
    from .._tensor import Tensor as _T

    whole = _T._make(storage, (storage.nbytes,), (1,), 0, _dtype.uint8, storage.device)
    host = _backends.get(storage.device.type).copy_to_host(whole)
    _swap_in_place(host, dtype)
    if storage.device.type == "cpu":
        whole.numpy()[...] = host
    else:
        whole.copy_(
            _T._make(_storage_on(host, storage.device), (storage.nbytes,), (1,), 0, _dtype.uint8, storage.device)
        )
