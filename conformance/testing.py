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

import types
import weakref

import numpy as np
import opweave as ow
from opweave.backends import Backend, Storage
from opweave.backends import kernel as K
from opweave_cpu import from_host_array, host_array, reference_kernels


def cpu_kernels(prims_only: bool = True) -> dict:
    """The CPU backend's kernels by op name (prims only by default)."""
    return reference_kernels(prims_only)


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
        return np.array(host_array(tensor), copy=True, order="C")

    def strides_of(self, tensor):
        """Strides of a tensor made from a NumPy result."""
        from opweave.backends.kernel import contiguous_strides

        if 0 in tensor.shape:
            return contiguous_strides(tensor.shape)
        return tuple(s // tensor.dtype.itemsize for s in host_array(tensor).strides)

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


def shadow_plugin(name: str, faults: dict | None = None, missing=(), config: dict | None = None, nondeterministic=()):
    """A plugin module declaring device type ``name`` with the CPU's prim kernels, some of them faulty.

    ``faults`` maps prim names to ``fault(cpu_kernel) -> kernel``; ``missing`` lists prims
    without a kernel; ``config`` is what its ``opweave_conformance_config`` hook returns;
    ``nondeterministic`` lists prims registered ``deterministic=False`` (deterministic mode
    then uses the CPU's kernel, as a backend's deterministic alternative).
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
            registry.impl(op, kernel, backend=name, deterministic=op not in nondeterministic)
            if op in nondeterministic:
                registry.deterministic_impl(op, wrap_kernel(backend, fn), backend=name)

    @ow.hookimpl
    def opweave_conformance_config(backend):
        return config if backend == name else None

    module.opweave_register = opweave_register
    module.opweave_conformance_config = opweave_conformance_config
    return module


def install(name: str, faults=None, missing=(), config=None, nondeterministic=()):
    """Register :func:`shadow_plugin` (once per device type) and return its backend."""
    loaded = {s.name for s in ow.backends.status(load_all=False) if s.loaded}
    if name not in loaded:
        ow.backends.register_plugin(shadow_plugin(name, faults, missing, config, nondeterministic), name=name)
    return ow.backends.get(name)


# -- faults ------------------------------------------------------------------------------------------


def _host(t) -> np.ndarray:
    return host_array(t)


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
        def faulty(*args):
            out = kernel(*args)
            return from_host_array(_host(out).astype(dtype.numpy), dtype)

        return faulty

    return fault


def copy_instead_of_view(kernel):
    """A view kernel that returns a contiguous copy instead of a view."""

    def faulty(*args):
        out = kernel(*args)
        return from_host_array(np.array(_host(out), copy=True), out.dtype)

    return faulty


def wrong_when_strided(kernel):
    """A kernel that reads a non-contiguous input as if it were contiguous (a classic stride bug)."""

    def faulty(a, *rest):
        if not a.is_contiguous() and a.numel():
            flat = np.ndarray((a.numel(),), a.dtype.numpy, a.untyped_storage().handle, a.storage_offset() * a.itemsize)
            a = from_host_array(flat.reshape(a.shape).copy(), a.dtype)
        return kernel(a, *rest)

    return faulty


def wrong_strides(kernel):
    """A kernel whose outputs hold the right values in column-major memory (strides the meta device does not give)."""

    def faulty(*args):
        out = kernel(*args)
        outs = out if isinstance(out, tuple) else (out,)
        moved = tuple(from_host_array(np.asfortranarray(_host(o)), o.dtype) if o.ndim >= 2 else o for o in outs)
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

    def faulty(*args):
        try:
            return kernel(*args)
        except (RuntimeError, ValueError):
            return from_host_array(np.zeros(args[0].shape, args[0].dtype.numpy), args[0].dtype)

    return faulty


def ignores_seed(kernel):
    """A random kernel that draws from a global NumPy generator, ignoring its seed and offset."""
    state = np.random.default_rng()

    def faulty(shape, low, high, seed, offset, dtype, device):
        return from_host_array(state.uniform(float(low), float(high), tuple(shape)).astype(dtype.numpy), dtype)

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


# -- faults of the kinds random samples rarely reach (see :mod:`opweave_conformance.probes`) -----------


def transformed(fn, dtypes=None):
    """The kernel's result replaced by ``fn(kernel, *args)`` when the first tensor's dtype is in ``dtypes``."""

    def fault(kernel):
        def faulty(*args):
            first = next((a for a in args if isinstance(a, ow.Tensor)), None)
            if dtypes is None or (first is not None and first.dtype in dtypes):
                return fn(kernel, *args)
            return kernel(*args)

        return faulty

    return fault


def with_args(change):
    """The kernel called with ``change(args)`` instead of its arguments (off-by-one sizes, a dropped flag...)."""

    def fault(kernel):
        def faulty(*args):
            return kernel(*change(list(args)))

        return faulty

    return fault


def saturating(kernel):
    """An integer kernel that clamps to the dtype's range instead of wrapping around (computes in int64/float)."""

    def faulty(*args):
        tensors = [a for a in args if isinstance(a, ow.Tensor)]
        out = kernel(*args)
        dt = out.dtype
        if dt.is_floating_point or dt.is_complex or dt is ow.bool or not tensors:
            return out
        wide = [from_host_array(_host(t).astype(np.float64), ow.float64) if t.dtype is dt else t for t in tensors]
        it = iter(wide)
        exact = kernel(*[next(it) if isinstance(a, ow.Tensor) else a for a in args])
        info = np.iinfo(dt.numpy)
        return from_host_array(np.clip(np.rint(_host(exact)), info.min, info.max).astype(dt.numpy), dt)

    return faulty


def narrow_accumulator(narrow=np.int32):
    """An integer reduction, scan or product that accumulates in ``narrow`` (int32) and widens the result."""

    def fault(kernel):
        def faulty(*args):
            out = kernel(*args)
            if out.dtype.is_floating_point or out.dtype.is_complex or out.dtype is ow.bool:
                return out
            cast = [
                from_host_array(_host(a).astype(narrow), ow.dtype_of_numpy(np.dtype(narrow)))
                if isinstance(a, ow.Tensor) and not (a.dtype.is_floating_point or a.dtype is ow.bool)
                else a
                for a in args
            ]
            with np.errstate(all="ignore"):
                small = kernel(*cast)
            return from_host_array(_host(small).astype(narrow).astype(out.dtype.numpy), out.dtype)

        return faulty

    return fault


def float_accumulator(kernel):
    """An integer kernel that computes in float64 (rounding beyond 2**53) and converts back."""

    def faulty(*args):
        out = kernel(*args)
        if out.dtype.is_floating_point or out.dtype.is_complex or out.dtype is ow.bool:
            return out
        wide = [
            from_host_array(_host(a).astype(np.float64), ow.float64) if isinstance(a, ow.Tensor) else a for a in args
        ]
        with np.errstate(all="ignore"):
            approx = _host(kernel(*wide))
            return from_host_array(approx.astype(np.int64).astype(out.dtype.numpy), out.dtype)

    return faulty


def _clamped_index(kernel, index_pos, dim_of, mode):
    def faulty(*args):
        args = list(args)
        size = dim_of(args)
        i = _host(args[index_pos]).astype(np.int64)
        if size:
            fixed = np.clip(i, 0, size - 1) if mode == "clamp" else np.mod(i, size)
            args[index_pos] = from_host_array(fixed.astype(args[index_pos].dtype.numpy), args[index_pos].dtype)
        return kernel(*args)

    return faulty


def clamps_indices(index_pos: int, mode: str = "clamp", bound=None):
    """An indexing kernel that clamps (``mode="clamp"``) or wraps (``"wrap"``) out-of-range indices instead of raising.

    ``index_pos`` is the index tensor's position; ``bound(args)`` the size it indexes (default:
    ``args[0].shape[args[1]]``, the dim-wise prims).
    """

    def dim_size(args):
        a, d = args[0], args[1]
        return 1 if a.ndim == 0 else a.shape[d % a.ndim]

    return lambda kernel: _clamped_index(kernel, index_pos, bound or dim_size, mode)


def shuffled(kernel_inputs, seed: int = 0):
    """A kernel whose floating inputs are permuted at random before it runs: ``kernel_inputs(args, rng)``
    returns the permuted arguments of an order-independent computation whose rounding depends on order
    (a sum in thread or atomic order)."""
    rng = np.random.default_rng(seed)

    def fault(kernel):
        def faulty(*args):
            return kernel(*kernel_inputs(list(args), rng))

        return faulty

    return fault


def random_order_sum(kernel):
    """``prims::sum`` adding in a random order (thread-order reduction): right values, not reproducible bits."""
    rng = np.random.default_rng(0)

    def faulty(inp, dims, *rest):
        out = kernel(inp, dims, *rest)
        x = _host(inp)
        if not (out.dtype.is_floating_point or out.dtype.is_complex) or x.size < 2:
            return out
        axes = tuple(range(x.ndim)) if dims is None else tuple(d % max(x.ndim, 1) for d in dims)
        moved = np.moveaxis(x, axes, tuple(range(-len(axes), 0))) if axes else x[..., None]
        flat = moved.reshape(moved.shape[: moved.ndim - max(len(axes), 1)] + (-1,)).astype(_host(out).dtype)
        perm = rng.permutation(flat.shape[-1])
        acc = np.zeros(flat.shape[:-1], flat.dtype)
        with np.errstate(all="ignore"):
            for k in perm:
                acc = acc + flat[..., k]
        return from_host_array(acc.reshape(out.shape).astype(out.dtype.numpy), out.dtype)

    return faulty


def random_order_accumulate(values_pos: int, index_pos: int, axis_of=lambda args: args[1]):
    """An index accumulation (``index_add``, ``scatter_add``) adding duplicates in a random (atomic) order."""

    def fault(kernel):
        rng = np.random.default_rng(0)

        def faulty(*args):
            args = list(args)
            index, values = args[index_pos], args[values_pos]
            dt = values.dtype
            if not (dt.is_floating_point or dt.is_complex) or index.numel() < 2:
                return kernel(*args)
            axis = axis_of(args) % max(index.ndim, 1)
            i, v = _host(index), _host(values)
            if index.ndim == 0:
                return kernel(*args)
            perm = rng.permutation(i.shape[axis])
            if i.ndim == 1 and v.ndim >= 1 and v.shape[axis] == i.shape[0]:  # index_add: one index per slice
                args[index_pos] = from_host_array(np.ascontiguousarray(i[perm]), index.dtype)
                args[values_pos] = from_host_array(np.ascontiguousarray(np.take(v, perm, axis=axis)), dt)
            elif i.shape == v.shape:  # scatter_add: permute along dim
                args[index_pos] = from_host_array(np.ascontiguousarray(np.take(i, perm, axis=axis)), index.dtype)
                args[values_pos] = from_host_array(np.ascontiguousarray(np.take(v, perm, axis=axis)), dt)
            return _sequential_add(kernel, args, index_pos, values_pos)

        return faulty

    return fault


def _sequential_add(kernel, args, index_pos, values_pos):
    """Apply an accumulation one slice at a time (so the order of duplicates decides the rounding)."""
    return kernel(*args) if args[index_pos].ndim != 1 else _one_by_one(kernel, args, index_pos, values_pos)


def _one_by_one(kernel, args, index_pos, values_pos):
    index, values, axis = args[index_pos], args[values_pos], args[1]
    out = args[0]
    i, v = _host(index), _host(values)
    for k in range(i.shape[0]):
        step = list(args)
        step[0] = out
        step[index_pos] = from_host_array(np.ascontiguousarray(i[k : k + 1]), index.dtype)
        step[values_pos] = from_host_array(
            np.ascontiguousarray(np.take(v, [k], axis=axis % max(v.ndim, 1))), values.dtype
        )
        out = kernel(*step)
    return out


def split_k_matmul(kernel):
    """``prims::mm``/``bmm`` summing the inner dimension in random chunks (split-K in scheduling order)."""
    rng = np.random.default_rng(0)

    def faulty(a, b):
        out = kernel(a, b)
        if not (out.dtype.is_floating_point or out.dtype.is_complex):
            return out
        x, y = _host(a).astype(_host(out).dtype), _host(b).astype(_host(out).dtype)
        k = x.shape[-1]
        if k < 2:
            return out
        perm = rng.permutation(k)
        acc = np.zeros(_host(out).shape, _host(out).dtype)
        with np.errstate(all="ignore"):
            for j in perm:
                acc = acc + x[..., :, j : j + 1] * y[..., j : j + 1, :]
        return from_host_array(acc.astype(out.dtype.numpy), out.dtype)

    return faulty


def computed_in(dtype_of, fn):
    """A unary kernel computed by ``fn(numpy array)`` in the input's own (16-bit) dtype: a naive formula."""

    def fault(kernel):
        def faulty(a):
            if a.dtype not in dtype_of:
                return kernel(a)
            with np.errstate(all="ignore"):
                x = _host(a)
                return from_host_array(np.asarray(fn(x)).astype(a.dtype.numpy), a.dtype)

        return faulty

    return fault
