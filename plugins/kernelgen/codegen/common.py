"""What every generated program shares: the dims struct, 16-bit float and bool conversions, loads and stores.

Shapes, strides and offsets are kernel *arguments*: a ``dims_t`` struct of
``MAX_RANK`` longs passed by value, so one compiled kernel serves every shape and
layout. Programs therefore specialise only on the op and the dtypes.
"""

from __future__ import annotations

MAX_RANK = 8

DIMS_STRUCT = f"typedef struct {{ long v[{MAX_RANK}]; }} dims_t;\n"

#: Inputs an elementwise kernel may have (``where`` has three).
MAX_INPUTS = 3

#: Every scalar argument of a strided elementwise kernel in one by-value struct: setting one kernel
#: argument costs about as much as launching the kernel on PoCL, so the launch sets two or four, not 14.
#: Host layout (int64 words): oo, ao[3], ost, ast[3], shape, n, per, then ndim and opcode as two int32.
EW_STRUCT = f"""typedef struct {{
    long oo;
    long ao[{MAX_INPUTS}];
    dims_t ost;
    dims_t ast[{MAX_INPUTS}];
    dims_t shape;
    long n;
    long per;
    int ndim;
    int opcode;
}} ew_args_t;
"""
EW_WORDS = 1 + MAX_INPUTS + MAX_RANK * (2 + MAX_INPUTS) + 3

BF16_HELPERS = """
inline float ow_bf16_to_float(ushort v) { return as_float(((uint)v) << 16); }
inline ushort ow_float_to_bf16(float f) {
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}
"""


def header(dialect, dtypes) -> str:
    """Pragmas, the dims struct and the helpers the kernels of ``dtypes`` need."""
    out = dialect.header(dtypes) + DIMS_STRUCT
    if "bfloat16" in dtypes:
        out += BF16_HELPERS
    return out


def load(dtype: str, expr: str) -> str:
    """Expression: the value stored at ``expr`` in its compute type."""
    if dtype == "bfloat16":
        return f"ow_bf16_to_float({expr})"
    return expr


def store(dialect, dtype: str, value: str) -> str:
    """Expression: ``value`` converted to the storage type of ``dtype`` (bool: nonzero; bfloat16: round to even)."""
    if dtype == "bfloat16":
        return f"ow_float_to_bf16((float)({value}))"
    if dtype == "bool":
        return f"(uchar)(({value}) != 0)"
    if dtype.startswith("complex"):  # a pair is stored as it is (C cannot cast a struct to its own type)
        return value
    return dialect.cast(dialect.type_name(dtype), value)


def coalesce(shape, strides_list):
    """Drop size-1 dims and merge dims that are contiguous in every operand; returns (shape, strides_list)."""
    keep = [d for d, n in enumerate(shape) if n != 1]
    shape = [shape[d] for d in keep]
    strides_list = [[st[d] for d in keep] for st in strides_list]
    i = len(shape) - 1
    while i > 0:
        if all(st[i - 1] == st[i] * shape[i] for st in strides_list):
            shape[i - 1] *= shape[i]
            del shape[i]
            for st in strides_list:
                st[i - 1] = st[i]
                del st[i]
        i -= 1
    return shape, strides_list
