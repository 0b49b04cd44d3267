"""What every prim kernel module uses: the ``@kernel`` decorator, operands, launches and the CPU fallback.

A kernel function receives the prim's arguments (positional, schema order) and
returns the result, or ``NotImplemented`` for a case it does not handle (a dtype,
a data-dependent check). The registered wrapper turns that into the core's decline
protocol (``raise opweave.backends.kernel.Decline``): the dispatcher then runs the
prim's next candidate, the CPU kernel with copies, which the conformance report
marks as "fallback".

The same kernel functions serve every device built on this package: a tensor's
device type names its :class:`~opweave_kernelgen.backend.KernelBackend` (``BACKENDS``),
whose :class:`~opweave_kernelgen.runtime.Runtime` compiles the generated source in
its own dialect and launches it.
"""

from __future__ import annotations

import numpy as np
import opweave
from opweave.backends.kernel import Decline

from ..codegen.common import EW_WORDS, MAX_INPUTS, MAX_RANK, coalesce

KERNELS: dict = {}  # "prims::name" -> kernel
NONDETERMINISTIC: set = set()
BACKENDS: dict = {}  # device type -> KernelBackend whose kernels these are
LOCAL = 64  # work-group size of 1-D launches (fixed, so PoCL compiles one work-group function per kernel)
# From this many elements, all-contiguous operands take the ``_c`` kernel (no index arithmetic). Small calls
# use the strided kernel: each distinct kernel costs PoCL a work-group compile on first use, so this halves
# the kernels a cold cache builds for small tensors (the conformance run), at no measurable cost for them.
CONTIGUOUS_MIN = 1 << 14
#: Elements each work item of a contiguous elementwise kernel handles on a CPU device: PoCL runs a work item
#: as a loop iteration, so a block per item saves the per-item index work and lets the block loop vectorize.
CPU_BLOCK = 16
#: The same for the strided kernels, which walk their block dim by dim (see ``codegen.elementwise``).
STRIDED_BLOCK = 256


def kernel(name: str):
    """Decorator: make ``fn`` the kernel of ``prims::name`` (``NotImplemented`` -> ``Decline``)."""
    op = opweave.ops.lookup(f"prims::{name}")

    def register(fn):
        def run(*args):
            result = fn(*args)
            if result is NotImplemented:
                raise Decline(f"kernelgen has no kernel for this case of {op.name}")
            return result

        run.__name__ = run.__qualname__ = f"kernelgen_{name}"
        run.__doc__ = fn.__doc__
        KERNELS[op.name] = run
        return fn

    return register


def backend_of(device):
    """The :class:`~opweave_kernelgen.backend.KernelBackend` of ``device``."""
    return BACKENDS[device.type]


def runtime_on(device):
    """The runtime of ``device``."""
    return BACKENDS[device.type].runtime(device)


def from_host(array, device):
    """A new contiguous tensor on ``device`` holding a copy of ``array``."""
    return BACKENDS[device.type].from_host(array, device)


def check_dtype(dtype, device, what: str) -> None:
    """``TypeError`` naming ``what`` if ``device`` has no ``dtype``."""
    BACKENDS[device.type].check_dtype(dtype, what)


def has_dtype(dtype, device) -> bool:
    """Whether ``device`` has ``dtype``."""
    return dtype in BACKENDS[device.type].dtypes


def empty(shape, dtype, device, stride=None):
    """A new uninitialised tensor on ``device`` (contiguous unless ``stride`` is given)."""
    from opweave.backends.kernel import contiguous_strides

    shape = tuple(shape)
    stride = tuple(stride) if stride is not None else contiguous_strides(shape)
    return BACKENDS[device.type].empty_strided(shape, stride, dtype, device)


def dname(t) -> str:
    """The dtype name of tensor ``t``."""
    return t.dtype.name


def runtime_of(t):
    """The runtime of tensor ``t``'s device."""
    return BACKENDS[t.device.type].runtime(t.device)


def native_half(dtype, device) -> bool:
    """Whether ``dtype`` is float16 and ``device``'s dialect computes float16 (``Dialect.computes_float16``: CUDA)."""
    return dtype is opweave.float16 and BACKENDS[device.type].runtime(device).dialect.computes_float16


def on_device(t, device):
    """``t`` itself if it lives on ``device``, else a device copy (a 0-dim CPU operand)."""
    if t.device.type in BACKENDS:
        return t
    return from_host(t.numpy(force=True), device)


def device_of(args):
    """The device of the first kernelgen-device tensor among ``args`` (lists searched too)."""
    for a in args:
        for v in a if isinstance(a, (list, tuple)) else (a,):
            if isinstance(v, opweave.Tensor) and v.device.type in BACKENDS:
                return v.device
    raise RuntimeError("kernelgen: no operand lives on a kernelgen device")


def buf(t):
    """The runtime buffer of tensor ``t``'s storage."""
    return t.untyped_storage().handle.buffer


def i64(v) -> np.int64:
    """A ``long`` kernel argument."""
    return np.int64(v)


def dims(values) -> bytes:
    """A ``dims_t`` kernel argument (``MAX_RANK`` longs, zero-padded)."""
    a = np.zeros(MAX_RANK, np.int64)
    a[: len(values)] = values
    return a.tobytes()


def launch(rt, k, n: int, *args, local: int = LOCAL) -> None:
    """Launch kernel ``k`` over ``n`` work items (rounded up to whole work groups of ``local``).

    ``args`` are buffers and by-value arguments (NumPy scalars, ``bytes`` of a struct).
    """
    rt.launch(k, (-(-n // local),), (local,), args)


_programs: dict = {}


def program_kernels(rt, key, make_source) -> dict:
    """The kernels of the program named ``key`` on ``rt`` (source generated once by ``make_source()``)."""
    key = (rt.dialect.name, key)
    source = _programs.get(key)
    if source is None:
        source = _programs[key] = make_source()
    return rt.compile(source)


def elementwise(rt, kernels: dict, name: str, out, inputs, opcode: tuple, contiguous) -> None:
    """Run op ``name`` over ``out`` and the same-shaped ``inputs`` (any strides and offsets).

    ``kernels`` holds the strided kernels; ``opcode`` is ``(strided kernel name, opcode)`` from
    ``codegen.elementwise.opcodes``; ``contiguous()`` returns the ``<op>_c`` kernels (built on first use).
    """
    cpu = rt.is_cpu
    key = (name, opcode, cpu, out.shape, out.stride(), out.storage_offset())
    key += tuple((t.shape, t.stride(), t.storage_offset()) for t in inputs)
    plan = _plans.get(key)
    if plan is None:
        if len(_plans) > 4096:
            _plans.clear()
        plan = _plans[key] = kernel_plan(name, out, inputs, opcode, cpu)
    n, fast, scalars, per = plan
    if n == 0:
        return
    if fast:
        args = [buf(out), scalars[0]]
        for t, off in zip(inputs, scalars[1:-1]):
            args += [buf(t), off]
        items, local = -(-n // per), LOCAL
        cap = rt.properties.grid_stride_items
        if cap and rt.dialect.grid_stride:  # a grid-stride kernel: a few groups per multiprocessor
            items, local = min(items, cap), rt.properties.grid_stride_local
        launch(rt, contiguous()[f"{name}_c"], items, *args, scalars[-1], i64(per), local=local)
    else:
        launch(rt, kernels[opcode[0]], -(-n // per), buf(out), *[buf(t) for t in inputs], scalars)


def per_item(rt) -> int:
    """Elements per work item of the ``<op>_c`` kernels: a block on CPU devices, one on GPUs."""
    return CPU_BLOCK if rt.is_cpu else 1


_plans: dict = {}  # elementwise launch plans by layout: (numel, contiguous kernel?, by-value arguments, per item)


def kernel_plan(name: str, out, inputs, opcode: tuple, cpu: bool) -> tuple:
    """``(numel, contiguous?, by-value arguments, elements per work item)`` of an :func:`elementwise` launch.

    Dims are put in the order of the output's strides (largest first) before they are coalesced: an
    elementwise op may visit elements in any order, and this one makes same-layout transposed operands
    contiguous. ``cpu``: the device is a CPU (work items take blocks, see ``CPU_BLOCK``).
    """
    n = out.numel()
    shape = tuple(out.shape)
    strides = [tuple(out.stride())] + [
        tuple(t.stride()) if tuple(t.shape) == shape else (0,) * len(shape) for t in inputs
    ]
    order = sorted(range(len(shape)), key=lambda d: -abs(strides[0][d]))
    cshape, cstrides = coalesce([shape[d] for d in order], [[st[d] for d in order] for st in strides])
    if len(cshape) > MAX_RANK:
        raise NotImplementedError(f"kernelgen: {name}: more than {MAX_RANK} non-mergeable dims")
    offsets = [out.storage_offset()] + [t.storage_offset() for t in inputs]
    if n >= CONTIGUOUS_MIN and len(cshape) <= 1 and all(s == [1] or s == [] for s in cstrides):
        return n, True, (*[i64(off) for off in offsets], i64(n)), CPU_BLOCK if cpu else 1  # as per_item
    per = STRIDED_BLOCK if cpu else 1
    p = np.zeros(EW_WORDS, np.int64)  # the ew_args_t struct of codegen.common
    p[0] = offsets[0]
    p[1 : 1 + len(inputs)] = offsets[1:]
    base = 1 + MAX_INPUTS
    p[base : base + len(cstrides[0])] = cstrides[0]
    for i, st in enumerate(cstrides[1:]):
        start = base + MAX_RANK * (1 + i)
        p[start : start + len(st)] = st
    start = base + MAX_RANK * (1 + MAX_INPUTS)
    p[start : start + len(cshape)] = cshape
    p[start + MAX_RANK] = n
    p[start + MAX_RANK + 1] = per
    p[start + MAX_RANK + 2 :].view(np.int32)[:] = (len(cshape), opcode[1])
    return n, False, p.tobytes(), per


__all__ = [
    "BACKENDS",
    "KERNELS",
    "NONDETERMINISTIC",
    "backend_of",
    "check_dtype",
    "dname",
    "elementwise",
    "empty",
    "from_host",
    "has_dtype",
    "kernel",
    "kernel_plan",
    "launch",
    "on_device",
    "per_item",
    "program_kernels",
    "runtime_of",
    "runtime_on",
]
