"""What every OpenCL kernel module uses: the ``@kernel`` decorator, operands, launches and the CPU fallback.

A kernel function receives the prim's arguments (positional, schema order) and
returns the result, or ``NotImplemented`` for a case it does not handle (a dtype,
a data-dependent check); then the prim runs through the core's CPU fallback,
which the conformance report marks as "fallback".
"""

from __future__ import annotations

import numpy as np
import opweave
from opweave import _fallback
from opweave._keys import Layer

from .._backend import BACKEND, NAME, empty
from ..codegen.common import EW_WORDS, MAX_INPUTS, MAX_RANK, coalesce
from ..dialect import OPENCL

KERNELS: dict = {}  # "prims::name" -> kernel
NONDETERMINISTIC: set = set()
LOCAL = 64  # work-group size of 1-D launches (fixed, so PoCL compiles one work-group function per kernel)
_cpu_kernels: dict = {}
# From this many elements, all-contiguous operands take the ``_c`` kernel (no index arithmetic). Small calls
# use the strided kernel: each distinct kernel costs PoCL a work-group compile on first use, so this halves
# the kernels a cold cache builds for small tensors (the conformance run), at no measurable cost for them.
CONTIGUOUS_MIN = 1 << 14


def kernel(name: str):
    """Decorator: make ``fn`` the OpenCL kernel of ``prims::name`` (``NotImplemented`` -> CPU fallback)."""
    op = opweave.ops.lookup(f"prims::{name}")

    def register(fn):
        def run(*args):
            result = fn(*args)
            if result is NotImplemented:
                return cpu_fallback(op, args)
            return result

        run.__name__ = run.__qualname__ = f"opencl_{name}"
        run.__doc__ = fn.__doc__
        KERNELS[op.name] = run
        return fn

    return register


def cpu_fallback(op, args):
    """Run ``op`` through the core's CPU fallback (copies in and out)."""
    fn = _cpu_kernels.get(op.name)
    if fn is None:
        opweave.backends.get("cpu")
        fn = _cpu_kernels[op.name] = op._kernels[(Layer.Dense, "cpu")].fn
    return _fallback.run(op, fn, BACKEND, args)


def dname(t) -> str:
    """The dtype name of tensor ``t``."""
    return t.dtype.name


def runtime_of(t):
    """The device run time of tensor ``t``."""
    return BACKEND.runtime(t.device)


def on_device(t, device):
    """``t`` itself if it lives on ``device``, else a device copy (a 0-dim CPU operand)."""
    if t.device.type == NAME:
        return t
    return BACKEND.from_host(t.numpy(force=True), device)


def device_of(args):
    """The device of the first OpenCL tensor among ``args`` (lists searched too)."""
    for a in args:
        for v in a if isinstance(a, (list, tuple)) else (a,):
            if isinstance(v, opweave.Tensor) and v.device.type == NAME:
                return v.device
    return opweave.device(NAME, 0)


def buf(t):
    """The ``cl.Buffer`` of tensor ``t``."""
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
    """Enqueue kernel ``k`` over ``n`` work items (rounded up to whole work groups)."""
    import pyopencl as cl

    k.set_args(*args)
    cl.enqueue_nd_range_kernel(rt.queue, k, (-(-n // local) * local,), (local,))


_programs: dict = {}


def program_kernels(rt, key, make_source) -> dict:
    """The kernels of the program named ``key`` on ``rt`` (source generated once by ``make_source()``)."""
    source = _programs.get(key)
    if source is None:
        source = _programs[key] = make_source()
    return rt.kernels(source)


def elementwise(rt, kernels: dict, name: str, out, inputs, opcode: tuple, contiguous) -> None:
    """Run op ``name`` over ``out`` and the same-shaped ``inputs`` (any strides and offsets).

    ``kernels`` holds the strided kernels; ``opcode`` is ``(strided kernel name, opcode)`` from
    ``codegen.elementwise.opcodes``; ``contiguous()`` returns the ``<op>_c`` kernels (built on first use).
    """
    n = out.numel()
    if n == 0:
        return
    shape = tuple(out.shape)
    strides = [tuple(out.stride())] + [
        tuple(t.stride()) if tuple(t.shape) == shape else (0,) * len(shape) for t in inputs
    ]
    cshape, cstrides = coalesce(list(shape), [list(s) for s in strides])
    if len(cshape) > MAX_RANK:
        raise NotImplementedError(f"opencl: {name}: more than {MAX_RANK} non-mergeable dims")
    offsets = [out.storage_offset()] + [t.storage_offset() for t in inputs]
    if n >= CONTIGUOUS_MIN and len(cshape) <= 1 and all(s == [1] or s == [] for s in cstrides):
        args = [buf(out), i64(offsets[0])]
        for t, off in zip(inputs, offsets[1:]):
            args += [buf(t), i64(off)]
        launch(rt, contiguous()[f"{name}_c"], n, *args, i64(n))
        return
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
    kname, code = opcode
    p[start + MAX_RANK + 1 :].view(np.int32)[:] = (len(cshape), code)
    launch(rt, kernels[kname], n, buf(out), *[buf(t) for t in inputs], p.tobytes())


__all__ = [
    "BACKEND",
    "KERNELS",
    "NAME",
    "NONDETERMINISTIC",
    "OPENCL",
    "cpu_fallback",
    "dname",
    "elementwise",
    "empty",
    "kernel",
    "launch",
    "on_device",
    "program_kernels",
]
