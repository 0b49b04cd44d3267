"""Backends with planted faults: proof that the suite catches bugs.

:func:`shadow_plugin` builds a plugin module for a new device type whose storage
is host memory (NumPy buffers, like the CPU backend's) and whose prim kernels are
the CPU backend's, wrapped to take and return tensors of the new device. Faults
replace chosen kernels; ``missing`` leaves prims out (their ops are then "not
implemented"). The backend exposes ``memory_stats`` (live bytes of its storages),
so the allocator check runs too. Only prims are registered, as a vendor would:
every canonical op runs through its decomposition.

Fault factories (``fault(cpu_kernel) -> kernel``) for the common kinds of bug:
:func:`wrong_value`, :func:`wrong_dtype`, :func:`copy_instead_of_view`,
:func:`wrong_when_strided`, :func:`wrong_strides`, :func:`mutates_input`, :func:`no_error`,
:func:`ignores_seed`, :func:`new_storage_in_place`, :func:`leaks`.
"""

from __future__ import annotations

import importlib
import pkgutil
import types
import weakref

import numpy as np
import opweave as ow
from opweave.backends import Backend, Storage
from opweave.backends import kernel as K


def cpu_kernels(prims_only: bool = True) -> dict:
    """The CPU backend's kernels by op name (prims only by default)."""
    from opweave_cpu import kernels

    table = {}
    for info in pkgutil.iter_modules(kernels.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{kernels.__name__}.{info.name}")
        for name, fn in module.KERNELS.items():
            if not prims_only or name.startswith("prims::"):
                table[name] = fn
    return table


class ShadowBackend(Backend):
    """Host memory like the CPU's, under another device type; counts live bytes for ``memory_stats``."""

    def __init__(self, name: str):
        self.name = name
        self.device = ow.device(name)
        self.live = 0

    def _new_storage(self, handle, nbytes) -> Storage:
        storage = Storage(handle, nbytes, self.device, self)
        self.live += nbytes
        weakref.finalize(storage, self._release, nbytes)
        return storage

    def _release(self, nbytes):
        self.live -= nbytes

    def allocate(self, nbytes, device):
        """A new uninitialised byte buffer."""
        return self._new_storage(np.empty(nbytes, np.uint8), nbytes)

    def copy_from_host(self, array, device):
        """A new storage holding a copy of ``array``'s bytes."""
        flat = np.array(array, copy=True, order="C").reshape(-1)
        return self._new_storage(flat, flat.nbytes)

    def copy_to_host(self, tensor):
        """A C-contiguous copy of the tensor's elements."""
        from opweave_cpu._backend import native

        return np.array(native(tensor), copy=True, order="C")

    def strides_of(self, tensor):
        """Strides of a tensor made from a NumPy result."""
        from opweave.backends.kernel import contiguous_strides
        from opweave_cpu._backend import native

        if 0 in tensor.shape:
            return contiguous_strides(tensor.shape)
        return tuple(s // tensor.dtype.itemsize for s in native(tensor).strides)

    def memory_stats(self, device=None) -> dict:
        """``{"allocated": live bytes}``."""
        return {"allocated": self.live}


def retag(backend: ShadowBackend, value, inputs):
    """Kernel outputs as tensors of ``backend``'s device (inputs returned as they are stay themselves)."""
    if isinstance(value, (tuple, list)):
        return type(value)(retag(backend, v, inputs) for v in value)
    if not isinstance(value, ow.Tensor) or any(value is t for t in inputs) or value.device == backend.device:
        return value
    storage = value.untyped_storage()
    shadow = backend._new_storage(storage.handle, storage.nbytes)
    tagged = K.wrap_storage(shadow, value.shape, value.stride(), value.storage_offset(), dtype=value.dtype)
    native = K.cached_native(value)
    if native is not None:
        K.set_cached_native(tagged, native)
    return tagged


def wrap_kernel(backend: ShadowBackend, fn):
    """``fn`` (a CPU kernel) as a kernel of ``backend``."""

    def kernel(*args):
        inputs = [a for a in args if isinstance(a, ow.Tensor)]
        inputs += [t for a in args if isinstance(a, (list, tuple)) for t in a if isinstance(t, ow.Tensor)]
        return retag(backend, fn(*args), inputs)

    kernel.__name__ = getattr(fn, "__name__", "kernel")
    return kernel


def shadow_plugin(name: str, faults: dict | None = None, missing=(), config: dict | None = None):
    """A plugin module declaring device type ``name`` with the CPU's prim kernels, some of them faulty.

    ``faults`` maps prim names to ``fault(cpu_kernel) -> kernel``; ``missing`` lists prims
    without a kernel; ``config`` is what its ``opweave_conformance_config`` hook returns.
    """
    faults = dict(faults or {})
    backend = ShadowBackend(name)
    module = types.ModuleType(f"shadow_{name}")
    module.BACKEND = backend

    @ow.hookimpl
    def opweave_register(registry):
        registry.backend(backend)
        table = cpu_kernels()
        for op in faults:  # a fault on a prim the core implements (views): start from the core's kernel
            if op not in table:
                table[op] = ow.ops.lookup(op).composite_explicit.fn
        for op, fn in table.items():
            if op in missing:
                continue
            fault = faults.get(op)
            if fault is not None and getattr(fault, "after_wrap", False):
                kernel = fault(wrap_kernel(backend, fn))
            else:
                kernel = wrap_kernel(backend, fault(fn) if fault is not None else fn)
            registry.impl(op, kernel, backend=name)

    @ow.hookimpl
    def opweave_conformance_config(backend):
        return config if backend == name else None

    module.opweave_register = opweave_register
    module.opweave_conformance_config = opweave_conformance_config
    return module


def install(name: str, faults=None, missing=(), config=None):
    """Register :func:`shadow_plugin` (once per device type) and return its backend."""
    loaded = {s.name for s in ow.backends.status(load_all=False) if s.loaded}
    if name not in loaded:
        ow.backends.register_plugin(shadow_plugin(name, faults, missing, config), name=name)
    return ow.backends.get(name)


# -- faults ------------------------------------------------------------------------------------------


def _host(t) -> np.ndarray:
    from opweave_cpu._backend import native

    return native(t)


def wrong_value(fn_of_args, dtype=None):
    """The kernel returns ``fn_of_args(*args)`` (a tensor) instead, for inputs of ``dtype`` (None: always)."""

    def fault(kernel):
        def faulty(*args):
            if dtype is None or args[0].dtype is dtype:
                return fn_of_args(kernel, *args)
            return kernel(*args)

        return faulty

    return fault


def wrong_dtype(dtype):
    """The kernel's result comes back converted to ``dtype``."""

    def fault(kernel):
        from opweave_cpu._backend import wrap

        def faulty(*args):
            out = kernel(*args)
            return wrap(_host(out).astype(dtype.numpy), dtype)

        return faulty

    return fault


def copy_instead_of_view(kernel):
    """A view kernel that returns a contiguous copy instead of a view."""
    from opweave_cpu._backend import wrap

    def faulty(*args):
        out = kernel(*args)
        return wrap(np.array(_host(out), copy=True), out.dtype)

    return faulty


def wrong_when_strided(kernel):
    """A kernel that reads a non-contiguous input as if it were contiguous (a classic stride bug)."""
    from opweave_cpu._backend import wrap

    def faulty(a, *rest):
        if not a.is_contiguous() and a.numel():
            flat = np.ndarray((a.numel(),), a.dtype.numpy, a.untyped_storage().handle, a.storage_offset() * a.itemsize)
            a = wrap(flat.reshape(a.shape).copy(), a.dtype)
        return kernel(a, *rest)

    return faulty


def wrong_strides(kernel):
    """A kernel whose outputs hold the right values in column-major memory (strides the meta device does not give)."""
    from opweave_cpu._backend import wrap

    def faulty(*args):
        out = kernel(*args)
        outs = out if isinstance(out, tuple) else (out,)
        moved = tuple(wrap(np.asfortranarray(_host(o)), o.dtype) if o.ndim >= 2 else o for o in outs)
        return moved if isinstance(out, tuple) else moved[0]

    return faulty


def mutates_input(kernel):
    """A kernel that also writes its result into its first input."""

    def faulty(a, *rest):
        out = kernel(a, *rest)
        if a.shape == out.shape and a.dtype == out.dtype and a.numel():
            _host(a)[...] = _host(out)
        return out

    return faulty


def no_error(kernel):
    """A kernel that returns zeros instead of raising (e.g. integer division by zero)."""
    from opweave_cpu._backend import wrap

    def faulty(*args):
        try:
            return kernel(*args)
        except (RuntimeError, ValueError):
            return wrap(np.zeros(args[0].shape, args[0].dtype.numpy), args[0].dtype)

    return faulty


def ignores_seed(kernel):
    """A random kernel that draws from a global NumPy generator, ignoring its seed and offset."""
    state = np.random.default_rng()

    def faulty(shape, low, high, seed, offset, dtype, device):
        from opweave_cpu._backend import wrap

        return wrap(state.uniform(float(low), float(high), tuple(shape)).astype(dtype.numpy), dtype)

    return faulty


def new_storage_in_place(kernel):
    """``prims::copy_to`` that gives ``a`` fresh storage instead of writing into it (in-place/out= break)."""

    def faulty(a, b):
        fresh = np.empty(a.shape, a.dtype.numpy)
        fresh[...] = _host(b)
        K.set_view(
            a,
            Storage(fresh.reshape(-1), fresh.nbytes, a.device, a.untyped_storage().backend),
            a.shape,
            tuple(max(1, int(np.prod(a.shape[i + 1 :]))) for i in range(a.ndim)),
            0,
        )
        return a

    return faulty


_LEAKED: list = []


def leaks(kernel):
    """A kernel that keeps a reference to every output (device memory never returns to the allocator)."""

    def faulty(*args):
        out = kernel(*args)
        _LEAKED.append(out)
        return out

    return faulty


leaks.after_wrap = True  # wraps the device kernel, so the device tensors are what leaks
