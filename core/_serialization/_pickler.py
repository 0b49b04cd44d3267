"""Writes ``data.pkl`` the way ``torch.save`` does, without PyTorch installed.

PyTorch reads tensors back through the globals its own pickles name
(``torch._utils._rebuild_tensor_v2``, ``torch.FloatStorage``, ``torch.float32``, ...).
Those names cannot be imported here, so this pickler (a subclass of Python's
pure-Python pickler) writes them as :class:`TorchGlobal` stand-ins: a ``GLOBAL``
opcode with PyTorch's module and name. Tensors reduce to PyTorch's rebuild calls
over storages, which become persistent ids ``('storage', storage_class, key,
location, numel)``; the storages' bytes are written after the pickle as records
``data/<key>``. opweave's dtypes, devices, sizes and qschemes are written as
PyTorch's, so ``torch.load`` understands everything opweave can load.

A storage is saved with the typed class of its dtype (``_rebuild_tensor_v2``,
readable by every PyTorch since 1.6) when every tensor viewing it has that
dtype; a storage viewed under several dtypes (``view_as_real``) or holding a
dtype without a typed class (float8) is saved untyped with
``_rebuild_tensor_v3``, as PyTorch 2.1 and later do.
"""

from __future__ import annotations

import collections
import io
import pickle

import numpy as np

from .. import _backends, _dtype, _quantized
from .._device import device as _device
from .._tensor import Size, Storage, Tensor
from . import _names


class TorchGlobal:
    """A global of PyTorch's (``module``, ``name``), written as a ``GLOBAL`` opcode."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name

    def __repr__(self):
        return f"{self.module}.{self.name}"

    def __call__(self, *args, **kwargs):  # pickle's reduce protocol wants a callable; only PyTorch calls it
        raise TypeError(f"{self!r} is PyTorch's; it is only written into files")


_GLOBALS: dict = {}


def torch_global(module: str, name: str) -> TorchGlobal:
    """The one stand-in for ``module.name`` (one object, so the pickle memoizes it)."""
    key = (module, name)
    found = _GLOBALS.get(key)
    if found is None:
        found = _GLOBALS[key] = TorchGlobal(module, name)
    return found


class StorageRef:
    """A storage being saved: its key in the archive, the dtype it is typed as (None: untyped), its id."""

    __slots__ = ("key", "storage", "dtype", "pid")

    def __init__(self, key: str, storage: Storage, dtype):
        self.key, self.storage, self.dtype = key, storage, dtype
        if dtype is None:
            kind, numel = torch_global("torch.storage", "UntypedStorage"), storage.nbytes
        else:
            kind, numel = torch_global(_names.TORCH, _names.STORAGE_CLASS[dtype]), storage.nbytes // dtype.itemsize
        self.pid = ("storage", kind, key, str(storage.device), numel)


def plan_storages(obj) -> dict:
    """``id(storage) -> dtype or None`` for the tensors reachable through containers (see the module docstring)."""
    seen: set = set()
    found: dict = {}
    storages: dict = {}
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, Tensor):
            if item.device.type != "meta":
                st = item.untyped_storage()
                storages[id(st)] = st
                found.setdefault(id(st), set()).add(item.dtype)
        elif isinstance(item, (dict, list, tuple, set, frozenset)):
            if id(item) in seen:
                continue
            seen.add(id(item))
            if isinstance(item, dict):
                stack.extend(item.keys())
                stack.extend(item.values())
            else:
                stack.extend(item)
    plan = {}
    for key, dtypes in found.items():
        st = storages[key]
        if len(dtypes) == 1:
            (dt,) = dtypes
            if dt in _names.STORAGE_CLASS and st.nbytes % dt.itemsize == 0:
                plan[key] = dt
                continue
        if any(d.is_quantized for d in dtypes):
            names = ", ".join(sorted(d.name for d in dtypes))
            raise RuntimeError(
                f"opweave.save: cannot save tensors that view one storage as different types ({names}) "
                "when one of them is quantized"
            )
        plan[key] = None
    return plan


class Writer(pickle._Pickler):
    """The ``data.pkl`` pickler (see the module docstring)."""

    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file, protocol: int, plan: dict):
        super().__init__(file, protocol)
        self.plan = plan
        self.refs: dict[int, StorageRef] = {}
        self.keepalive: list = []  # objects made while pickling stay alive, so their ids stay unique

    def persistent_id(self, obj):
        """Storage references become ``('storage', ...)`` persistent ids."""
        kind = type(obj)
        if kind is StorageRef:
            return obj.pid
        if kind is Storage:
            return self._ref(obj, None).pid
        return None

    def reducer_override(self, obj):
        """Tensors, devices and sizes reduce to PyTorch's calls."""
        if isinstance(obj, Tensor):
            from ..nn.parameter import Parameter  # on first save: importing opweave needs no nn

            if type(obj) is Parameter:
                fn = torch_global(_names.UTILS, "_rebuild_parameter")
                hooks = collections.OrderedDict()
                self.keepalive.append(hooks)
                return (fn, (obj.detach(), obj.requires_grad, hooks))
            return self._reduce_tensor(obj)
        kind = type(obj)
        if kind is _device:
            args = (obj.type,) if obj.index is None else (obj.type, obj.index)
            return (torch_global(_names.TORCH, "device"), args)
        if kind is Size:
            return (torch_global(_names.TORCH, "Size"), (tuple(obj),))
        return NotImplemented

    def save_torch_global(self, obj: TorchGlobal) -> None:
        """Write ``GLOBAL module name`` and memoize it."""
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        self.memoize(obj)

    def save_dtype(self, obj) -> None:
        """An opweave dtype as ``torch.<name>``."""
        self.save(torch_global(_names.TORCH, obj.name))

    dispatch[TorchGlobal] = save_torch_global
    dispatch[_dtype.dtype] = save_dtype
    dispatch[_quantized.QScheme] = save_dtype  # qschemes are torch.per_tensor_affine ..., by name too

    def _ref(self, storage: Storage, dtype) -> StorageRef:
        ref = self.refs.get(id(storage))
        if ref is None:
            if id(storage) in self.plan:
                typed = self.plan[id(storage)]
            elif dtype is not None and dtype in _names.STORAGE_CLASS and storage.nbytes % dtype.itemsize == 0:
                typed = dtype
            else:
                typed = None
            ref = self.refs[id(storage)] = StorageRef(str(len(self.refs)), storage, typed)
        elif ref.dtype is not None and dtype is not None and ref.dtype is not dtype:
            raise RuntimeError(
                "opweave.save: cannot save tensors that view the same storage as different types "
                f"({ref.dtype.name} and {dtype.name}) when one of them is only reachable through another object; "
                "put them in a dict, list or tuple"
            )
        return ref

    def _reduce_tensor(self, t: Tensor):
        shape, stride, offset = tuple(t.shape), tuple(t.stride()), t.storage_offset()
        if t.device.type == "meta":
            fn = torch_global(_names.UTILS, "_rebuild_meta_tensor_no_storage")
            return (fn, (t.dtype, shape, stride, False))
        ref = self._ref(t.untyped_storage(), t.dtype)
        hooks = collections.OrderedDict()
        self.keepalive.append(hooks)
        qp = t._qparams
        if qp is not None:
            if qp.per_channel_scheme:
                from .._factories import tensor

                scales = tensor(np.asarray(qp.scales, np.float64))
                zero_points = tensor(np.asarray(qp.zero_points, np.int64))
                self.keepalive += [scales, zero_points]
                params = (qp.qscheme, scales, zero_points, qp.axis)
            else:
                params = (qp.qscheme, qp.scale, qp.zero_point)
            fn = torch_global(_names.UTILS, "_rebuild_qtensor")
            return (fn, (ref, offset, shape, stride, params, False, hooks))
        if ref.dtype is None:
            fn = torch_global(_names.UTILS, "_rebuild_tensor_v3")
            return (fn, (ref, offset, shape, stride, t.requires_grad, hooks, t.dtype))
        fn = torch_global(_names.UTILS, "_rebuild_tensor_v2")
        return (fn, (ref, offset, shape, stride, t.requires_grad, hooks))


def pickle_object(obj, protocol: int) -> tuple[bytes, list[StorageRef]]:
    """``obj``'s ``data.pkl`` bytes and the storages it references (in key order)."""
    buf = io.BytesIO()
    writer = Writer(buf, protocol, plan_storages(obj))
    writer.dump(obj)
    return buf.getvalue(), list(writer.refs.values())


def storage_bytes(storage: Storage) -> np.ndarray:
    """A storage's bytes on the host (a view on the CPU, a copy from other devices)."""
    whole = Tensor._make(storage, (storage.nbytes,), (1,), 0, _dtype.uint8, storage.device)
    backend = _backends.get(storage.device.type)
    host = backend.host_view(whole)
    if host is None:
        host = backend.copy_to_host(whole)
    return np.ascontiguousarray(host).view(np.uint8).reshape(-1)
