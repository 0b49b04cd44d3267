"""Complex dtypes on the device: the complex parts prims and complex support of the elementwise, cast,
reduction and matmul prims.

complex64 is ``float2`` and complex128 ``double2`` in kernels; the arithmetic is the helper library of
``codegen.complex`` (NumPy's algorithms: scaled division, ``hypot`` moduli, C99 branch cuts). Where the
device has fp64, complex64 transcendental functions (``exp``, ``log``, ``sqrt``, trigonometric, hyperbolic
and inverse ones, ``pow``...) are computed in double and rounded to float; arithmetic, moduli and
comparisons stay in float, as NumPy computes them.

Registered here: ``real``, ``imag``, ``complex``, ``polar``, ``angle`` (real floating dtypes too) and
``conj_physical`` (a copy for real dtypes). The other families call in through small hooks:
``kernels.elementwise`` and ``kernels.elementwise_extra`` (unary and binary prims of a complex dtype, ``sgn``
and ``sinc`` included: :func:`elementwise`), ``kernels.data`` (casts to and from complex,
:func:`convert_into`), ``kernels.reductions`` (``sum``/``prod``, :func:`reduction_source`) and
``kernels.linalg`` (``mm``/``bmm``, :func:`bmm_into`). Complex prims not in the tables below (a complex
``amax`` is rejected by its meta function anyway) return ``NotImplemented`` and run through the CPU fallback.
"""

from __future__ import annotations

import opweave
from opweave.backends.kernel import is_cpu_scalar, output_strides

from ..codegen import complex as gen
from ._common import BACKENDS, buf, dname, empty, i64, kernel, launch, on_device, program_kernels, runtime_of
from ._common import elementwise as run_elementwise

COMPLEX = ("complex64", "complex128")
_REAL_OF = {"complex64": "float32", "complex128": "float64"}
_COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}
_LN2, _LOG2E, _LOG10E = "0.693147180559945309417", "1.44269504088896340736", "0.434294481903251827651"

# name -> (output kind: "c" complex, "r" the real dtype, "b" bool; expression; math). ``{s}`` is the helper
# suffix, ``{z}``, ``{w}`` the operands. The math ops (transcendental functions) form their own program, so
# that the cheap ones (parts, arithmetic, tests) build and compile quickly; for complex64 they are computed in
# double where the device has fp64.
UNARY = {
    "neg": ("c", "owc_neg_{s}({z})", False),
    "conj_physical": ("c", "owc_conj_{s}({z})", False),
    "reciprocal": ("c", "owc_div_{s}(owc_make_{s}(1, 0), {z})", False),
    "sgn": ("c", "owc_sgn_{s}({z})", False),
    "abs": ("r", "owc_abs_{s}({z})", False),
    "angle": ("r", "owc_arg_{s}({z})", False),
    "real": ("r", "{z}.x", False),
    "imag": ("r", "{z}.y", False),
    "isnan": ("b", "(isnan({z}.x) || isnan({z}.y))", False),
    "isinf": ("b", "(isinf({z}.x) || isinf({z}.y))", False),
    "isfinite": ("b", "(isfinite({z}.x) && isfinite({z}.y))", False),
    "logical_not": ("b", "!owc_nonzero_{s}({z})", False),
    "exp2": ("c", "owc_exp_{s}(owc_scale_{s}({z}, " + _LN2 + "))", True),
    "log2": ("c", "owc_scale_{s}(owc_log_{s}({z}), " + _LOG2E + ")", True),
    "log10": ("c", "owc_scale_{s}(owc_log_{s}({z}), " + _LOG10E + ")", True),
    "rsqrt": ("c", "owc_div_{s}(owc_make_{s}(1, 0), owc_sqrt_{s}({z}))", True),
}
_LIBRARY_FUNCTIONS = "exp expm1 log log1p sqrt sin cos tan sinh cosh tanh asin acos atan asinh acosh atanh sinc sigmoid"
UNARY.update({name: ("c", f"owc_{name}_{{s}}({{z}})", True) for name in _LIBRARY_FUNCTIONS.split()})

BINARY = {
    "add": ("c", "owc_add_{s}({z}, {w})", False),
    "sub": ("c", "owc_sub_{s}({z}, {w})", False),
    "mul": ("c", "owc_mul_{s}({z}, {w})", False),
    "div": ("c", "owc_div_{s}({z}, {w})", False),
    "pow": ("c", "owc_pow_{s}({z}, {w})", True),
    "eq": ("b", "({z}.x == {w}.x && {z}.y == {w}.y)", False),
    "ne": ("b", "({z}.x != {w}.x || {z}.y != {w}.y)", False),
    "logical_and": ("b", "(owc_nonzero_{s}({z}) && owc_nonzero_{s}({w}))", False),
    "logical_or": ("b", "(owc_nonzero_{s}({z}) || owc_nonzero_{s}({w}))", False),
    "logical_xor": ("b", "(owc_nonzero_{s}({z}) != owc_nonzero_{s}({w}))", False),
}

#: Real float inputs, complex output.
TO_COMPLEX = {
    "complex": "owc_make_{s}(x0, x1)",
    "polar": "owc_make_{s}(x0 * cos(x1), x0 * sin(x1))",
}

_REAL_FLOATS = {"bfloat16", "float32", "float64"}


def _render(kind: str, expr: str, wide: bool, dtype: str, arity: int) -> tuple:
    """(output dtype, C expression) of one table entry for inputs of the complex ``dtype``."""
    out = {"c": dtype, "r": _REAL_OF[dtype], "b": "bool"}[kind]
    if wide and dtype == "complex64":
        text = expr.format(s="d", z="owc_widen(x0)", w="owc_widen(x1)")
        text = {"c": f"owc_narrow({text})", "r": f"(float)({text})", "b": text}[kind]
        return out, text
    return out, expr.format(s=gen.SUFFIX[dtype], z="x0", w="x1" if arity == 2 else "")


_tables: dict = {}


def _ops(arity: int, dtype: str, math: bool, wide: bool) -> dict:
    """name -> (output dtype, expression) of the ops of arity ``arity`` in the math or the plain program."""
    key = (arity, dtype, math, wide)
    ops = _tables.get(key)
    if ops is None:
        table = UNARY if arity == 1 else BINARY
        ops = _tables[key] = {
            name: _render(kind, expr, math and wide, dtype, arity)
            for name, (kind, expr, is_math) in table.items()
            if is_math == math
        }
    return ops


def _wide(rt, dtype: str) -> bool:
    return dtype == "complex64" and rt.has_fp64


def _run(key, ops: dict, in_dtypes, wide: bool, name: str, out, inputs) -> None:
    """Run op ``name`` of the program ``key`` (made of ``ops``) over ``out`` and the device ``inputs``."""
    from ..codegen.elementwise import opcodes

    rt = runtime_of(out)
    ks = program_kernels(rt, key, lambda: gen.elementwise_program(rt.dialect, ops, in_dtypes, wide=wide))

    def contiguous():
        return program_kernels(
            rt, (*key, "c"), lambda: gen.elementwise_program(rt.dialect, ops, in_dtypes, contiguous=True, wide=wide)
        )

    run_elementwise(rt, ks, name, out, inputs, opcodes(ops)[name], contiguous)


def elementwise(name: str, *inputs):
    """``prims::name`` over complex ``inputs`` (one or two, same dtype), or ``NotImplemented`` without a kernel."""
    a = next(t for t in inputs if t.device.type in BACKENDS)
    d = dname(a)
    arity = len(inputs)
    if d not in COMPLEX or arity not in (1, 2) or name not in (UNARY if arity == 1 else BINARY):
        return NotImplemented
    rt = runtime_of(a)
    wide = _wide(rt, d)
    math = (UNARY if arity == 1 else BINARY)[name][2]
    ops = _ops(arity, d, math, wide)
    out_name = ops[name][0]
    shaped = [t for t in inputs if not is_cpu_scalar(t)] or [inputs[0]]
    out = empty(shaped[0].shape, getattr(opweave, out_name), a.device, output_strides(shaped))
    operands = [on_device(t, a.device) for t in inputs]
    _run(("cew", arity, d, math, wide), ops, [d] * arity, wide, name, out, operands)
    return out


# -- the complex parts prims ------------------------------------------------------------------------------


@kernel("real")
def real(a):
    """The real part of a complex tensor (a new real tensor)."""
    return elementwise("real", a)


@kernel("imag")
def imag(a):
    """The imaginary part of a complex tensor (a new real tensor)."""
    return elementwise("imag", a)


@kernel("angle")
def angle(a):
    """The argument ``atan2(imag, real)``; for real floats 0 or pi (pi below 0, nan kept)."""
    d = dname(a)
    if d in COMPLEX:
        return elementwise("angle", a)
    if d not in _REAL_FLOATS:
        return NotImplemented
    t = runtime_of(a).dialect.compute_type(d)
    ops = {"angle": (d, f"(isnan(x0) ? x0 : (x0 < 0 ? ({t})3.14159265358979323846 : ({t})0))")}
    out = empty(a.shape, a.dtype, a.device, output_strides([a]))
    _run(("cangle", d), ops, [d], False, "angle", out, [a])
    return out


@kernel("conj_physical")
def conj_physical(a):
    """The complex conjugate as a new tensor (a copy for real dtypes)."""
    if dname(a) in COMPLEX:
        return elementwise("conj_physical", a)
    from .data import copy_into

    out = empty(a.shape, a.dtype, a.device, output_strides([a]))
    copy_into(out, a)
    return out


def _to_complex(name: str, x, y):
    dev = next(t for t in (x, y) if t.device.type in BACKENDS)
    d = dname(dev)
    if d not in _COMPLEX_OF:
        return NotImplemented
    c = _COMPLEX_OF[d]
    ops = {n: (c, e.format(s=gen.SUFFIX[c])) for n, e in TO_COMPLEX.items()}
    shaped = [t for t in (x, y) if not is_cpu_scalar(t)] or [x]
    out = empty(shaped[0].shape, getattr(opweave, c), dev.device, output_strides(shaped))
    _run(("cmake", d), ops, [d, d], False, name, out, [on_device(t, dev.device) for t in (x, y)])
    return out


@kernel("complex")
def complex_(real, imag):
    """``real + 1j * imag``, built part by part (float32 -> complex64, float64 -> complex128)."""
    return _to_complex("complex", real, imag)


@kernel("polar")
def polar(abs, angle):
    """``abs * cos(angle) + 1j * abs * sin(angle)``."""
    return _to_complex("polar", abs, angle)


# -- casts ------------------------------------------------------------------------------------------------

_REALS = ["bool", "uint8", "int8", "int16", "int32", "int64", "bfloat16", "float32", "float64"]
_INTS = {"uint8", "int8", "int16", "int32", "int64"}


def _convert_ops(src: str, rt) -> dict:
    """``to_<dtype>`` casts from ``src`` where source or target is complex (complex -> real keeps the real part)."""
    targets = [c for c in COMPLEX if c != "complex128" or rt.has_fp64]
    ops = {f"to_{c}": (c, f"owc_make_{gen.SUFFIX[c]}({'x0.x, x0.y' if src in COMPLEX else 'x0, 0'})") for c in targets}
    if src in COMPLEX:
        for dst in _REALS + (["float16"] if rt.has_fp16 else []):  # float16 only on devices with it (CUDA)
            if dst != "float64" or rt.has_fp64:
                ops[f"to_{dst}"] = (dst, "(long)(x0.x)" if dst in _INTS else "x0.x")
    return ops


def convert_into(out, src) -> None:
    """Write ``src`` (same shape, on the device) into ``out`` where one of the two dtypes is complex."""
    rt = runtime_of(out)
    s = dname(src)
    ops = _convert_ops(s, rt)
    name = f"to_{dname(out)}"
    _run(("cconvert", s), ops, [s], False, name, out, [src])


# -- reductions and matmul --------------------------------------------------------------------------------


def reduction_source(dialect, in_dtype: str, out_dtype: str, local: int):
    """A maker of the ``sum``/``prod`` program into the complex ``out_dtype`` (``codegen.reduction``'s kernels)."""
    return lambda: gen.reduction_program(dialect, in_dtype, out_dtype, local)


def bmm_into(out, a, b, batch_strides_a, batch_strides_b, batch: int) -> None:
    """``out[i] = a[i] @ b[i]`` for complex matrices (``out`` contiguous; strides in elements)."""
    m, k = a.shape[-2], a.shape[-1]
    n = b.shape[-1]
    total = batch * m * n
    if total == 0:
        return
    rt = runtime_of(a)
    d = dname(a)
    kern = program_kernels(rt, ("cbmm", d), lambda: gen.matmul_program(rt.dialect, d))["bmm"]
    sa, sb = a.stride(), b.stride()
    launch(
        rt, kern, total, buf(out), buf(a), i64(a.storage_offset()), i64(batch_strides_a), i64(sa[-2]), i64(sa[-1]),
        buf(b), i64(b.storage_offset()), i64(batch_strides_b), i64(sb[-2]), i64(sb[-1]),
        i64(m), i64(n), i64(k), i64(total),
    )  # fmt: skip
