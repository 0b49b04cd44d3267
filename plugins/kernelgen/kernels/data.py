"""Copies and casts: ``prims::copy_to`` and ``prims::convert_element_type`` over any strides.

Same-dtype copies move raw bits through an unsigned type of the same size (so
NaN payloads, -0.0 and bfloat16 bits survive); casts load in the compute type
and store with the output dtype's rounding (float -> int truncates toward zero
through ``long``, anything -> bool is "nonzero", float -> bfloat16 rounds to
nearest even). Casts from or to complex dtypes are ``kernels.complex.convert_into``
(complex -> real keeps the real part, as the CPU kernel does).
"""

from __future__ import annotations

from ..codegen import elementwise as gen
from ._common import check_dtype, dname, elementwise, empty, kernel, on_device, program_kernels, runtime_of

_RAW = {1: "uint8", 2: "int16", 4: "int32", 8: "int64", 16: "complex128"}
_INTS = {"uint8", "int8", "int16", "int32", "int64"}
_REALS = ["bool", "uint8", "int8", "int16", "int32", "int64", "bfloat16", "float32", "float64"]
_FLOATS = {"bfloat16", "float32", "float64", "float16"}


def _convert_ops(src: str, rt) -> dict:
    ops = {}
    for dst in _REALS + (["float16"] if rt.has_fp16 else []):  # float16 only on devices with it (CUDA)
        if dst in ("float64",) and not rt.has_fp64:
            continue
        expr = "(long)(x0)" if src in _FLOATS and dst in _INTS else "x0"
        ops[f"to_{dst}"] = (dst, expr)
    return ops


def copy_into(out, src) -> None:
    """Write ``src`` (same shape) into ``out`` on the device, converting the dtype."""
    rt = runtime_of(out)
    src = on_device(src, out.device)
    if src.dtype == out.dtype:
        raw = _RAW[out.dtype.itemsize]
        ops, in_dtypes = {"copy": (raw, "x0")}, [raw]
        name, key, code = "copy", ("copy", raw), (f"s_{raw}", 0)
    elif src.dtype.is_complex or out.dtype.is_complex:  # complex hook: casts of kernels/complex.py
        from .complex import convert_into

        return convert_into(out, src)
    else:
        s = dname(src)
        ops, in_dtypes = _convert_ops(s, rt), [s]
        name, key, code = f"to_{dname(out)}", ("convert", s), (f"s_{dname(out)}", 0)  # one op per output dtype
    ks = program_kernels(rt, key, lambda: gen.program(rt.dialect, ops, in_dtypes))

    def contiguous():
        return program_kernels(rt, (*key, "c"), lambda: gen.program(rt.dialect, ops, in_dtypes, contiguous=True))

    elementwise(rt, ks, name, out, [src], code, contiguous)


@kernel("copy_to")
def copy_to(a, b):
    """Write ``b`` into ``a`` (dtype conversion, any strides); returns ``a``."""
    copy_into(a, b)
    return a


@kernel("convert_element_type")
def convert_element_type(a, dtype):
    """A new tensor of ``a``'s values in ``dtype``, keeping ``a``'s dense layout."""
    from opweave.backends.kernel import contiguous_strides

    check_dtype(dtype, a.device, "prims::convert_element_type")
    spec = kernel_meta("convert_element_type", a, dtype)
    out = empty(a.shape, dtype, a.device, spec.stride() if spec is not None else contiguous_strides(a.shape))
    copy_into(out, a)
    return out


def kernel_meta(name, *args):
    """The prim's meta output (shape, dtype, strides) for ``args``."""
    import opweave

    return opweave.ops.lookup(f"prims::{name}").meta(*args)


@kernel("clone")
def clone(a, memory_format=None):
    """A copy of ``a`` with the layout the prim's meta function gives (raw bits)."""
    spec = kernel_meta("clone", a, memory_format)
    out = empty(spec.shape, spec.dtype, a.device, spec.stride())
    copy_into(out, a)
    return out


@kernel("copy_strided")
def copy_strided(a, stride):
    """A copy of ``a`` laid out with ``stride``."""
    out = empty(a.shape, a.dtype, a.device, stride)
    copy_into(out, a)
    return out
