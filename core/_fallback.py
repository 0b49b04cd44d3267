"""The CPU fallback: run a prim the device has no kernel for on the CPU, with copies in and out.

Opt-in, per backend (``Backend.cpu_fallback = True``) or for every backend
(``OPWEAVE_CPU_FALLBACK=1``). The dispatcher asks :func:`kernel_for` only after
everything else failed (no kernel, no fallback, no decomposition), so canonical
ops still decompose into the device's prims; only prims reach the CPU.

A fallback call copies each device tensor argument to the host, runs the CPU
backend's kernel, and copies each result to the inputs' device with the CPU
result's dense layout (which is the meta function's). Arguments the schema marks
as written (``Tensor(a!)``) get the CPU's values written back into the device
tensor. The first call of each (op, device type) warns, naming the op;
:data:`calls` counts the calls (the conformance suite reads it to mark ops that
ran through the fallback).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import warnings
from collections import Counter

import numpy as np

from . import _backends
from ._device import device as make_device
from ._tensor import Tensor

calls: Counter = Counter()  # op name -> fallback calls, every backend together
_warned: set = set()


def enabled(backend) -> bool:
    """Whether ``backend`` (a Backend) lets prims without a kernel run on the CPU."""
    return bool(getattr(backend, "cpu_fallback", False)) or os.environ.get("OPWEAVE_CPU_FALLBACK") == "1"


def kernel_for(op, device_type: str | None, cpu_kernel, copy_to, declined: bool = False):
    """The fallback kernel of ``op`` on ``device_type``, or None (not enabled, or no CPU kernel).

    ``cpu_kernel()`` gives the op's registered CPU ``Kernel`` or None (asked again after loading
    the CPU plugin); ``copy_to`` is the ``prims::copy_to`` op that writes results back.
    ``declined``: the device has a kernel of its own that may decline a case; the CPU
    kernel then takes such cases whether or not the backend opted in.
    """
    if device_type in (None, "cpu", "meta") or op.kind != "prim":
        return None
    backend = _backends._backends.get(device_type)
    if backend is None or not (declined or enabled(backend)):
        return None
    cpu = cpu_kernel()
    if cpu is None:
        _backends.ensure_loaded("cpu")
        cpu = cpu_kernel()
    if cpu is None:
        return None

    if not backend.is_available():  # a factory's device= names a device this machine lacks: say why

        def on_cpu(*args):
            extra = f'; install it with pip install "opweave[{backend.extra}]"' if backend.extra else ""
            raise RuntimeError(
                f"{op.name}: device '{device_type}' is not available: {backend.unavailable_reason()}{extra}"
            )

    else:

        def on_cpu(*args):
            return run(op, cpu.fn, backend, args, copy_to)

    return dataclasses.replace(cpu, fn=on_cpu, source="cpu fallback")


_CORE_DIR = os.path.dirname(os.path.abspath(__file__))


def _user_stacklevel() -> int:
    """The ``stacklevel`` that points a warning at the first frame outside opweave's core and its entry points."""
    frame, level = sys._getframe(1), 1
    while frame is not None and (
        frame.f_code.co_filename.startswith(_CORE_DIR) or frame.f_code.co_filename.startswith("<opweave op")
    ):
        frame, level = frame.f_back, level + 1
    return level


def run(op, cpu_kernel, backend, args: tuple, copy_to):
    """Run ``cpu_kernel`` on host copies of ``args``; results (and written arguments) go back to the device."""
    device = _device_of(args, backend.name)
    key = (op.name, backend.name)
    if key not in _warned:
        _warned.add(key)
        warnings.warn(
            f"{op.name}: no {backend.name} kernel for this call; running it on the CPU (inputs and results are copied)",
            UserWarning,
            stacklevel=_user_stacklevel(),
        )
    calls[op.name] += 1
    host_args = tuple(_to_host(a, backend.name) for a in args)
    result = cpu_kernel(*host_args)
    for arg, host, spec in zip(args, host_args, op.schema.arguments):
        if isinstance(arg, Tensor) and arg.device.type == backend.name and _written(spec):
            _write_back(arg, host, copy_to)
    if isinstance(result, Tensor) and any(result is h for h in host_args):  # returned its written argument
        return next(a for a, h in zip(args, host_args) if h is result)
    _check_dtypes(op, result, backend)
    return _to_device(result, _layouts(op, args), backend, device)


def _check_dtypes(op, result, backend) -> None:
    """``TypeError`` when a result has a dtype the device does not have (as making it there would raise)."""
    if backend.dtypes is None:
        return
    for t in result if isinstance(result, (list, tuple)) else (result,):
        if isinstance(t, Tensor) and t.dtype not in backend.dtypes:
            raise TypeError(f"{op.name}: the {backend.name} device has no {t.dtype.name}")


def _layouts(op, args):
    """The output strides the prim's meta function gives (None where it gives none)."""
    specs = op.meta(*args) if op.meta is not None else None
    if isinstance(specs, Tensor):
        return tuple(specs.stride())
    if isinstance(specs, (list, tuple)):
        return [tuple(s.stride()) if isinstance(s, Tensor) else None for s in specs]
    return None


def _written(spec) -> bool:
    alias = spec.type.alias
    return alias is not None and alias.is_write


def _device_of(args, device_type: str):
    for a in args:
        for v in a if isinstance(a, (list, tuple)) else (a,):
            if isinstance(v, Tensor) and v.device.type == device_type:
                return v.device
            if type(v).__name__ == "device" and getattr(v, "type", None) == device_type:
                return v if v.index is not None else make_device(device_type, 0)
    return make_device(device_type, 0)


def _to_host(value, device_type: str):
    if isinstance(value, Tensor):
        if value.device.type != device_type:
            return value
        array = value._storage.backend.copy_to_host(value)
        return _backends.get("cpu").from_host(array, make_device("cpu"))
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value):
        return type(value)(_to_host(v, device_type) for v in value)
    if type(value).__name__ == "device" and getattr(value, "type", None) == device_type:
        return make_device("cpu")
    return value


def _to_device(value, stride, backend, device):
    if isinstance(value, Tensor):
        return _upload(value, stride if isinstance(stride, tuple) else None, backend, device)
    if isinstance(value, (list, tuple)):
        strides = stride if isinstance(stride, list) else [None] * len(value)
        return type(value)(_to_device(v, s, backend, device) for v, s in zip(value, strides))
    return value


def _upload(t, stride, backend, device):
    """A device copy of CPU tensor ``t`` laid out with ``stride`` (default ``t``'s) when that layout is dense."""
    a = t.numpy(force=True)
    shape = tuple(t.shape)
    stride = tuple(stride) if stride is not None and len(stride) == len(shape) else tuple(t.stride())
    span = 1 + sum((n - 1) * s for n, s in zip(shape, stride))
    if 0 in shape or min(stride, default=0) < 0 or span != a.size:
        return backend.from_host(np.asarray(a, order="C"), device)  # asarray keeps a 0-dim result 0-dim
    flat = np.empty(span, a.dtype)
    np.lib.stride_tricks.as_strided(flat, shape, tuple(s * a.itemsize for s in stride))[...] = a
    storage = backend.copy_from_host(flat, device)
    return Tensor._make(storage, shape, stride, 0, t.dtype, device)


def _write_back(target, host, copy_to) -> None:
    """Write the CPU tensor ``host`` into the device tensor ``target`` (same shape and dtype)."""
    source = target._storage.backend.from_host(np.array(host.numpy(force=True), order="C"), target.device)
    copy_to(target, source)
