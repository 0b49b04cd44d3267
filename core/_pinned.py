"""Pinned (page-locked) host memory: ``Tensor.pin_memory()``, ``Tensor.is_pinned()``, factories' ``pin_memory=``.

The core holds no hardware code: a device backend that can page-lock host memory sets
``Backend.has_pinned_memory`` and implements ``pinned_host_alloc`` (a buffer of page-locked
bytes, freed when collected) and ``is_pinned_host`` (whether an address lies in such memory).
A pinned tensor is an ordinary CPU tensor whose memory is such a buffer; copying it to that
device with ``to(device, non_blocking=True)`` goes through ``Backend.from_host_async``.

As in PyTorch, the accelerator is the one named by ``device`` or else the current one (the
first available backend with pinned memory, ``cuda`` first). Without one, ``pin_memory()``
raises ``RuntimeError: Cannot access accelerator device when none is available.`` and a
factory with ``pin_memory=True`` raises PyTorch's message for that case; ``is_pinned()`` is
False.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

import numpy as np

from . import _backends
from ._device import as_device
from ._tensor import Storage, Tensor, contiguous_strides

NO_ACCELERATOR = "Cannot access accelerator device when none is available."
NO_PINNED_ALLOCATOR = (
    "pin_memory=True requires a CUDA or other accelerator backend; no pinned memory allocator is available on this "
    "system."
)


def _loaded_pinning_backends() -> list:
    """Loaded, available backends that page-lock host memory (``cuda`` first, then by name)."""
    found = [
        b
        for name, b in sorted(_backends._backends.items(), key=lambda item: (item[0] != "cuda", item[0]))
        if getattr(b, "has_pinned_memory", False)
    ]
    return [b for b in found if _available(b)]


def _available(backend) -> bool:
    try:
        return bool(backend.is_available())
    except RuntimeError:
        return False


def accelerator(device: Any = None, message: str = NO_ACCELERATOR) -> Any:
    """The backend that pins host memory for ``device`` (None: the current accelerator); ``RuntimeError`` if none."""
    if device is not None:
        dev = as_device(device)
        if dev.type in ("cpu", "meta"):
            raise RuntimeError(
                f"pin_memory: {dev.type} is not an accelerator device (pinned memory is for copies to one)"
            )
        backend = _backends.get(dev.type)
        if not getattr(backend, "has_pinned_memory", False) or not _available(backend):
            raise RuntimeError(f"pin_memory: the {dev.type} backend has no pinned host memory here")
        return backend
    from ._plugins import autoload_enabled, load

    if autoload_enabled():
        load()  # the accelerator's plugin may not be imported yet
    found = _loaded_pinning_backends()
    if not found:
        raise RuntimeError(message)
    return found[0]


def is_pinned(self: Tensor, device: Any = None) -> bool:
    """Whether this tensor is in pinned (page-locked) host memory (made by ``pin_memory()`` or ``pin_memory=True``)."""
    if self.device.type != "cpu" or self.numel() == 0:
        return False
    if device is not None:
        backends = [accelerator(device)]
    else:
        backends = _loaded_pinning_backends()
    address = self.data_ptr()
    return any(b.is_pinned_host(address) for b in backends)


def _type_name(tensor) -> str:
    return f"opweave.{tensor.device.type}.{tensor.dtype.name}"


def pinned_empty_like(tensor: Tensor, backend: Any) -> Tensor:
    """A new contiguous CPU tensor of ``tensor``'s shape and dtype in ``backend``'s pinned host memory."""
    np_dtype = np.dtype(tensor.dtype.numpy)
    numel = tensor.numel()
    buffer = backend.pinned_host_alloc(max(numel * np_dtype.itemsize, 1))
    flat = np.frombuffer(buffer, dtype=np.uint8, count=numel * np_dtype.itemsize).view(np_dtype)
    cpu = as_device("cpu")
    shape = tuple(tensor.shape)
    storage = Storage(flat, flat.nbytes, cpu, _backends.get("cpu"))
    return Tensor._make(storage, shape, contiguous_strides(shape), 0, tensor.dtype, cpu, native=flat.reshape(shape))


def pin_memory(self: Tensor, device: Any = None) -> Tensor:
    """A copy of this CPU tensor in pinned (page-locked) host memory, or itself if it is pinned already.

    Pinned memory makes copies to the accelerator faster and lets ``to(device, non_blocking=True)``
    return before the copy is done. ``RuntimeError`` for a tensor not on the CPU, and without an accelerator.
    """
    if self.device.type != "cpu":
        raise RuntimeError(f"cannot pin '{_type_name(self)}' only dense CPU tensors can be pinned")
    if self.dtype.is_quantized:
        raise RuntimeError(f"cannot pin '{_type_name(self)}': quantized tensors cannot be pinned")
    backend = accelerator(device)
    if self.numel() and is_pinned(self):
        return self
    return _pinned_copy(self, backend)


def _pinned_copy(tensor, backend):
    out = pinned_empty_like(tensor, backend)
    return out.copy_(tensor)


def with_pinning(fn: Any) -> Any:
    """``fn`` (a factory ref) whose result is pinned when its ``pin_memory`` argument is true (``fn`` itself when it
    has no such parameter). ``RuntimeError`` for ``pin_memory=True`` on a device other than the CPU (meta aside),
    and without an accelerator."""
    names = list(inspect.signature(fn).parameters)
    if "pin_memory" not in names:
        return fn
    position = names.index("pin_memory")
    device_at = names.index("device") if "device" in names else None

    @functools.wraps(fn)
    def factory(*args: Any, **kwargs: Any):
        pin = kwargs.get("pin_memory") if len(args) <= position else args[position]
        if not pin:
            return fn(*args, **kwargs)
        if device_at is not None:  # an explicit device other than the CPU fails before any work
            device = as_device(kwargs.get("device") if len(args) <= device_at else args[device_at])
            if device is not None and device.type not in ("cpu", "meta"):
                raise RuntimeError(f"{fn.__name__}: Only dense CPU tensors can be pinned (pin_memory=True on {device})")
        return pinned_result(fn.__name__, fn(*args, **kwargs))

    return factory


def pinned_result(op: str, out: Tensor) -> Tensor:
    """The result of a factory called with ``pin_memory=True``: ``out`` copied into pinned memory (meta: as is)."""
    if out.device.type == "meta":
        return out
    if out.device.type != "cpu":
        raise RuntimeError(f"{op}: Only dense CPU tensors can be pinned (pin_memory=True on {out.device})")
    return _pinned_copy(out, accelerator(None, NO_PINNED_ALLOCATOR))
