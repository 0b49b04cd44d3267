"""Elementwise prims: unary, binary and ``where``, generated per (table, input dtype).

Each table maps a prim to C expressions over the inputs ``x0, x1`` in their
compute type (16-bit floats in float, see ``dialect.base.COMPUTE_TYPES``), one for
floating dtypes, one for integer dtypes and one for bool; a missing expression
(integer ``div`` with its division-by-zero check, complex dtypes, special
functions) sends the call to the CPU fallback. Integer arithmetic wraps: 32- and
64-bit ``add``/``sub``/``mul`` go through unsigned types so that overflow is
defined behaviour in C.
"""

from __future__ import annotations

import opweave
from opweave.backends.kernel import is_cpu_scalar, output_strides

from ..codegen import elementwise as gen
from ._common import BACKENDS, dname, elementwise, empty, kernel, on_device, program_kernels, runtime_of

_INTS = {"uint8", "int8", "int16", "int32", "int64"}
_FLOATS = {"bfloat16", "float32", "float64"}
_HALF = {"float16"}  # floating too where the dialect computes float16 (``Dialect.computes_float16``: CUDA)
_UNSIGNED = {"int32": "uint", "int64": "ulong"}

# name -> (float expr, int expr, bool expr, output is bool)
_F = {n: f"{n}(x0)" for n in "sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh exp exp2 expm1 log".split()}
_F.update({n: f"{n}(x0)" for n in "log2 log10 sqrt cbrt erf erfc floor ceil trunc rsqrt".split()})
# log1p(x) rounds to x below 1e-20 in every float type; PoCL's log1p gives +0 for the smallest subnormals
_F["log1p"] = "(fabs(x0) < 1e-20f ? x0 : log1p(x0))"
UNARY = {name: (expr, None, None, False) for name, expr in _F.items()}
UNARY.update(
    {
        "round": ("rint(x0)", "x0", None, False),
        "floor": ("floor(x0)", "x0", None, False),
        "ceil": ("ceil(x0)", "x0", None, False),
        "trunc": ("trunc(x0)", "x0", None, False),
        "reciprocal": ("1 / x0", None, None, False),
        "sigmoid": ("1 / (1 + exp(-x0))", None, None, False),
        "frac": ("x0 - trunc(x0)", None, None, False),
        "abs": ("fabs(x0)", "(x0 < 0 ? -x0 : x0)", None, False),
        "neg": ("-x0", "-x0", None, False),
        "bitwise_not": (None, "~x0", "!x0", False),
        "logical_not": ("(x0 == 0)", "(x0 == 0)", "!x0", True),
        "isnan": ("isnan(x0)", "0", "0", True),
        "isinf": ("isinf(x0)", "0", "0", True),
        "isfinite": ("isfinite(x0)", "1", "1", True),
        "isposinf": ("(x0 == INFINITY)", "0", "0", True),
        "isneginf": ("(x0 == -INFINITY)", "0", "0", True),
        "signbit": ("signbit(x0)", "(x0 < 0)", "0", True),
    }
)

_CMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
BINARY = {name: (f"(x0 {op} x1)",) * 3 + (True,) for name, op in _CMP.items()}
BINARY.update(
    {
        "add": ("x0 + x1", "x0 + x1", None, False),
        "sub": ("x0 - x1", "x0 - x1", None, False),
        "mul": ("x0 * x1", "x0 * x1", None, False),
        "div": ("x0 / x1", None, None, False),
        "maximum": ("(isnan(x0) || isnan(x1)) ? (x0 + x1) : fmax(x0, x1)", "(x0 > x1 ? x0 : x1)", None, False),
        "minimum": ("(isnan(x0) || isnan(x1)) ? (x0 + x1) : fmin(x0, x1)", "(x0 < x1 ? x0 : x1)", None, False),
        "fmax": ("fmax(x0, x1)", "(x0 > x1 ? x0 : x1)", None, False),
        "fmin": ("fmin(x0, x1)", "(x0 < x1 ? x0 : x1)", None, False),
        "atan2": ("atan2(x0, x1)", None, None, False),
        "hypot": ("hypot(x0, x1)", None, None, False),
        "copysign": ("copysign(x0, x1)", None, None, False),
        "fmod": ("fmod(x0, x1)", None, None, False),
        "remainder": ("ow_remainder(x0, x1)", None, None, False),
        "pow": ("pow(x0, x1)", None, None, False),
        "heaviside": ("(x0 == 0 ? x1 : (x0 > 0))", "(x0 == 0 ? x1 : (x0 > 0))", None, False),
        "bitwise_and": (None, "x0 & x1", "x0 & x1", False),
        "bitwise_or": (None, "x0 | x1", "x0 | x1", False),
        "bitwise_xor": (None, "x0 ^ x1", "x0 ^ x1", False),
        "logical_and": ("(x0 != 0) && (x1 != 0)",) * 3 + (True,),
        "logical_or": ("(x0 != 0) || (x1 != 0)",) * 3 + (True,),
        "logical_xor": ("(x0 != 0) != (x1 != 0)",) * 3 + (True,),
    }
)

_REMAINDER = """
inline {t} ow_remainder({t} a, {t} b) {{
    {t} r = fmod(a, b);
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}}
"""

_RAW = {1: "uint8", 2: "int16", 4: "int32", 8: "int64", 16: "complex128"}


def _expr(table: dict, name: str, dtype: str, half: bool = False):
    """(expression, output dtype) of ``name`` for ``dtype``, or None when it has no OpenCL kernel.

    ``half``: the dialect computes float16 (in float), so float16 takes the floating expressions.
    """
    entry = table.get(name)
    if entry is None:
        return None
    f, i, b, to_bool = entry
    floating = dtype in _FLOATS or (half and dtype in _HALF)
    expr = f if floating else i if dtype in _INTS else b if dtype == "bool" else None
    if expr is None:
        return None
    if dtype in _UNSIGNED and name in ("add", "sub", "mul", "neg"):
        u = _UNSIGNED[dtype]
        expr = "-(({u})x0)" if name == "neg" else f"(({u})x0 {expr[3]} ({u})x1)"
        expr = expr.format(u=u)
    return expr, "bool" if to_bool else dtype


_op_tables: dict = {}


def _ops(table: dict, arity: int, dtype: str, half: bool = False) -> dict:
    """name -> (output dtype, expression) of every op of ``table`` that has a kernel for ``dtype``."""
    key = (arity, dtype, half and dtype in _HALF)
    ops = _op_tables.get(key)
    if ops is None:
        ops = {}
        for name in table:
            found = _expr(table, name, dtype, half)
            if found is not None:
                ops[name] = (found[1], found[0])
        _op_tables[key] = ops
    return ops


def _source(dialect, table: dict, arity: int, dtype: str, contiguous: bool = False) -> str:
    half = dialect.computes_float16
    src = gen.program(dialect, _ops(table, arity, dtype, half), [dtype] * arity, contiguous)
    if arity == 2 and (dtype in _FLOATS or (half and dtype in _HALF)):
        t = dialect.compute_type(dtype)
        src = src.replace(dialect.kernel_prefix, _REMAINDER.format(t=t) + dialect.kernel_prefix, 1)
    return src


_opcodes: dict = {}


def _opcode(table: dict, arity: int, dtype: str, name: str, half: bool = False) -> tuple:
    key = (arity, dtype, half and dtype in _HALF)
    codes = _opcodes.get(key)
    if codes is None:
        codes = _opcodes[key] = gen.opcodes(_ops(table, arity, dtype, half))
    return codes[name]


_TABLES = {1: UNARY, 2: BINARY}


def source(dialect, arity: int, dtype: str, contiguous: bool = False) -> str:
    """The program of the unary (1) or binary (2) table for ``dtype`` in ``dialect``: strided, or ``<op>_c`` kernels."""
    return _source(dialect, _TABLES[arity], arity, dtype, contiguous)


def opcode(name: str, arity: int, dtype: str) -> tuple:
    """``(strided kernel name, opcode)`` of op ``name`` in the ``arity`` table's program for ``dtype``."""
    return _opcode(_TABLES[arity], arity, dtype, name)


def _run(table: dict, arity: int, name: str, *inputs):
    a = next(t for t in inputs if t.device.type in BACKENDS)
    d = dname(a)
    if a.dtype.is_complex:  # complex hook: the complex tables of kernels/complex.py
        from .complex import elementwise as complex_elementwise

        return complex_elementwise(name, *inputs)
    if d in _INTS and name in ("div", "remainder", "fmod", "pow"):  # integer forms: kernels/elementwise_extra
        from . import elementwise_extra

        return elementwise_extra.run(name, *inputs)
    rt = runtime_of(a)
    half = rt.dialect.computes_float16
    found = _expr(table, name, d, half)
    if found is None:
        return NotImplemented
    shaped = [t for t in inputs if not is_cpu_scalar(t)] or [inputs[0]]  # the meta function's layout rule
    out_dtype = opweave.bool if found[1] == "bool" else a.dtype
    out = empty(shaped[0].shape, out_dtype, a.device, output_strides(shaped))
    ks = program_kernels(rt, ("ew", arity, d), lambda: _source(rt.dialect, table, arity, d))

    def contiguous():
        return program_kernels(rt, ("ew", arity, d, "c"), lambda: _source(rt.dialect, table, arity, d, True))

    operands = [on_device(t, a.device) for t in inputs]
    elementwise(rt, ks, name, out, operands, _opcode(table, arity, d, name, half), contiguous)
    return out


def _register(table: dict, arity: int) -> None:
    for name in table:

        def fn(*args, _name=name):
            return _run(table, arity, _name, *args)

        fn.__doc__ = f"``prims::{name}`` on the OpenCL device (generated kernel)."
        kernel(name)(fn)


_register(UNARY, 1)
_register(BINARY, 2)


@kernel("where")
def where(pred, a, b):
    """``a`` where ``pred`` else ``b`` (raw bits of any dtype)."""
    dev = next(t for t in (pred, a, b) if t.device.type in BACKENDS)
    spec = opweave.ops.lookup("prims::where").meta(pred, a, b)
    raw = _RAW[spec.dtype.itemsize]
    rt = runtime_of(dev)
    out = empty(spec.shape, spec.dtype, dev.device, spec.stride())
    ops, in_dtypes = {"where": (raw, "x0 ? x1 : x2")}, ["bool", raw, raw]
    ks = program_kernels(rt, ("where", raw), lambda: gen.program(rt.dialect, ops, in_dtypes))

    def contiguous():
        return program_kernels(rt, ("where", raw, "c"), lambda: gen.program(rt.dialect, ops, in_dtypes, True))

    elementwise(rt, ks, "where", out, [on_device(t, dev.device) for t in (pred, a, b)], (f"s_{raw}", 0), contiguous)
    return out
