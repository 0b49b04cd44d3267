"""Direct OpenCL kernels for hot canonical ops: ``add``/``sub``/``mul``/``div`` of two tensors, softmax.

The decomposition of ``a + b`` promotes, broadcasts, runs the prim's meta function and then the
prim's kernel: tens of microseconds of Python for a launch that costs a few. These kernels serve
the common case — two tensors of one dtype on one OpenCL device, any shapes that broadcast, no
``alpha`` — from a launch plan cached per (op, dtype, layouts): the output layout is the one the
decomposition gives, the launch is the same generated kernel. A Python scalar (or a CPU 0-dim tensor of
the dtype) beside a device tensor is uploaded into a 0-dim device tensor when PyTorch's promotion keeps
the tensor's dtype (``a - 2.0``, ``3 * a``), and takes the same path. Every other call goes to the
decomposition, so both paths agree (tests/opencl/test_canonical.py, tests/cuda/test_canonical_values.py).

``softmax``/``log_softmax`` (and ATen's ``_softmax``/``_log_softmax``) of a contiguous float32/float64
tensor along its last dim run on a CPU device as one kernel (``codegen.softmax``: a work item per row)
instead of the decomposition's five prims, and on a runtime with the ``"group_softmax"`` override (CUDA) as
one work group per row; every other call (another dim, a layout, a ``dtype`` argument, 16-bit floats,
another GPU) is the decomposition's.
"""

from __future__ import annotations

import math

import numpy as np
import opweave
from opweave import ops
from opweave.backends.kernel import Decline, broadcast_shapes, is_wrapped_number, output_strides

from ..codegen import softmax as softmax_gen
from . import elementwise as ew
from ._common import (
    BACKENDS,
    KERNELS,
    LOCAL,
    backend_of,
    buf,
    empty,
    has_dtype,
    i64,
    kernel_plan,
    launch,
    program_kernels,
    runtime_on,
)

_SAME_DTYPE = {
    "add": ("float32", "float64", "int8", "uint8", "int16", "int32", "int64"),
    "sub": ("float32", "float64", "int8", "uint8", "int16", "int32", "int64"),
    "mul": ("float32", "float64", "int8", "uint8", "int16", "int32", "int64"),
    "div": ("float32", "float64"),  # integer division promotes to float: the decomposition
}
_plans: dict = {}  # (op, dtype, device, layouts) -> plan, or False for the decomposition


def _plan(name: str, a, b):
    """``(shape, strides, dtype, runtime, kernel, items, by-value arguments)`` of ``name(a, b)``, or None.

    None sends the call to the decomposition (a dtype without a direct kernel, shapes that do not broadcast).
    """
    dtype = a.dtype
    if dtype.name not in _SAME_DTYPE[name] or not has_dtype(dtype, a.device):
        return None
    try:
        shape = broadcast_shapes(name, a.shape, b.shape)
    except ValueError:
        return None  # the decomposition raises the error
    wide_a, wide_b = a.expand(shape), b.expand(shape)
    out = opweave.empty_strided(shape, output_strides([wide_a, wide_b]), dtype=dtype, device=a.device)
    rt = runtime_on(a.device)
    d = dtype.name
    n, fast, scalars, per = kernel_plan(name, out, [wide_a, wide_b], ew.opcode(name, 2, d), rt.is_cpu)
    items, local = -(-n // per), LOCAL
    if fast:
        k = program_kernels(rt, ("ew", 2, d, "c"), lambda: ew.source(rt.dialect, 2, d, True))[f"{name}_c"]
        scalars = (*scalars, i64(per))
        cap = rt.properties.grid_stride_items
        if cap and rt.dialect.grid_stride:  # a grid-stride kernel (see kernels._common.elementwise)
            items, local = min(items, cap), rt.properties.grid_stride_local
    else:
        k = program_kernels(rt, ("ew", 2, d), lambda: ew.source(rt.dialect, 2, d))[ew.opcode(name, 2, d)[0]]
    return tuple(out.shape), out.stride(), dtype, rt, k if n else None, items, fast, scalars, local


def _scalar_operand(name: str, tensor, scalar):
    """``scalar`` (a CPU 0-dim tensor beside device tensor ``tensor``) as a 0-dim tensor of ``tensor``'s dtype there.

    PyTorch's promotion keeps ``tensor``'s dtype for a wrapped Python number of its kind or a lower one (a float
    with a floating tensor; a bool or an int, whose value the dtype holds, with any) and for a 0-dim tensor
    of its own dtype; those are uploaded as the prims upload a scalar operand (CUDA: a memset queued on the
    current stream, no wait). Every other case raises ``Decline`` (the decomposition promotes or reports it).
    """
    if tensor.device.type not in BACKENDS or scalar.device.type != "cpu" or scalar.ndim:
        raise Decline("not a device tensor and a CPU scalar")
    dtype, kind = tensor.dtype, scalar.dtype
    if dtype.name not in _SAME_DTYPE[name]:
        raise Decline("no direct kernel for this dtype")
    if is_wrapped_number(scalar):
        if kind.is_floating_point and not dtype.is_floating_point or kind.is_complex:
            raise Decline("a float scalar promotes an integer tensor")
    elif kind is not dtype:
        raise Decline("a 0-dim tensor of another dtype")
    value = scalar.numpy(force=True).item()  # a CPU tensor: its array, without the item prim
    lo, hi, np_dtype = _RANGES[dtype.name]
    if not lo <= value <= hi and value == value and abs(value) != math.inf:
        raise Decline("the decomposition takes a value beyond the dtype's range")
    out = backend_of(tensor.device).empty_strided((), (), dtype, tensor.device)
    runtime_on(tensor.device).copy_from_host(buf(out), np.array(value, np_dtype).reshape(1).view(np.uint8))
    return out


def _range(name: str) -> tuple:
    """``(least, largest finite value, NumPy dtype)`` of dtype ``name``."""
    d = np.dtype(name)
    if d.kind == "f":
        big = float(np.finfo(d).max)
        return -big, big, d
    info = np.iinfo(d)
    return int(info.min), int(info.max), d


_RANGES = {n: _range(n) for n in _SAME_DTYPE["add"]}


def _binary(name: str):
    op = getattr(ops, name).Tensor

    def kernel(self, other, *rest):
        if is_wrapped_number(other) or other.device.type == "cpu":
            other = _scalar_operand(name, self, other)
        elif is_wrapped_number(self) or self.device.type == "cpu":  # 2.0 - a
            self = _scalar_operand(name, other, self)
        if (
            (rest and not (type(rest[0]) is int and rest[0] == 1))
            or type(other) is not opweave.Tensor
            or self.dtype is not other.dtype
            or self.device != other.device
            or other.device.type not in BACKENDS
        ):
            raise Decline("not two same-dtype device tensors without alpha")
        key = (name, self.dtype, self.device, self.shape, self.stride(), self.storage_offset())
        key += (other.shape, other.stride(), other.storage_offset())
        plan = _plans.get(key)
        if plan is None:
            if len(_plans) > 4096:
                _plans.clear()
            plan = _plans[key] = _plan(name, self, other) or False
        if plan is False:
            raise Decline("no direct kernel for this dtype or these shapes")
        shape, strides, dtype, rt, k, items, fast, scalars, local = plan
        out = backend_of(self.device).empty_strided(shape, strides, dtype, self.device)
        if k is None:
            return out
        if fast:  # <op>_c(out, oo, a, ao, b, bo, n, per)
            launch(rt, k, items, buf(out), scalars[0], buf(self), scalars[1], buf(other), *scalars[2:], local=local)
        else:
            launch(rt, k, items, buf(out), buf(self), buf(other), scalars)
        return out

    kernel.__name__ = kernel.__qualname__ = f"kernelgen_{name}_tensor"
    kernel.__doc__ = (
        f"``{name}.Tensor`` of two same-dtype device tensors, or of one and a Python/0-dim CPU scalar that keeps"
        " its dtype (else the decomposition)."
    )
    KERNELS[op.name] = kernel


for _name in _SAME_DTYPE:
    _binary(_name)


#: Work items per row of the GPU softmax (``codegen.softmax.group_program``; runtimes with ``"group_softmax"``).
GROUP_SOFTMAX_LOCAL = 256


def _softmax(packet_name: str, log: bool, internal: bool):
    op = getattr(ops, packet_name)
    op = op.default if internal else op.int
    name = "log_softmax_rows" if log else "softmax_rows"

    def kernel(self, dim, third=None):
        # third: ``dtype`` (softmax.int) or ``half_to_float`` (_softmax)
        converts = bool(third) if internal else third is not None and third is not self.dtype
        d = self.dtype.name
        if (
            converts
            or d not in ("float32", "float64")
            or self.ndim == 0
            or self.numel() == 0
            or dim not in (-1, self.ndim - 1)
            or not self.is_contiguous()
        ):
            raise Decline("not a contiguous float32/float64 softmax over the last dim")
        rt = runtime_on(self.device)
        if "group_softmax" in rt.overrides:  # a GPU: one work group per row
            n = self.shape[-1]
            out = empty(self.shape, self.dtype, self.device)
            sub = rt.properties.subgroup_size
            make = lambda: softmax_gen.group_program(rt.dialect, d, sub)  # noqa: E731
            k = program_kernels(rt, ("softmax_group", d, sub), make)[name]
            rows = self.numel() // n
            group = GROUP_SOFTMAX_LOCAL
            launch(rt, k, rows * group, buf(out), buf(self), i64(self.storage_offset()), i64(rows), i64(n), local=group)
            return out
        if "vector_softmax" not in rt.overrides:
            raise Decline("not a contiguous float32/float64 softmax over the last dim on a vector CPU device")
        n = self.shape[-1]
        out = empty(self.shape, self.dtype, self.device)
        lanes = rt.lanes(d)
        k = program_kernels(rt, ("softmax", d, lanes), lambda: softmax_gen.program(rt.dialect, d, lanes))[name]
        rows = self.numel() // n
        launch(rt, k, rows, buf(out), buf(self), i64(self.storage_offset()), i64(rows), i64(n))
        return out

    kernel.__name__ = kernel.__qualname__ = f"kernelgen_{op.name}"
    kernel.__doc__ = (
        f"``{op.name}`` of a contiguous float32/float64 tensor along its last dim (else the decomposition)."
    )
    KERNELS[op.name] = kernel


for _packet, _log, _internal in (
    ("softmax", False, False),
    ("log_softmax", True, False),
    ("_softmax", False, True),
    ("_log_softmax", True, True),
):
    _softmax(_packet, _log, _internal)
