"""More elementwise prims: sign, clamp, lerp, integer number theory, shifts, special log/exp forms.

Every op is a C expression over ``x0, x1, x2`` (helpers in ``codegen.elementwise_extra``)
compiled, like ``kernels.elementwise``, into one strided opcode-switched program per
input dtype, plus an ``<op>_c`` program for large contiguous calls. Unary and binary
ops share the three-input program of ``clamp`` and ``lerp``: their last operand is
passed again (the kernel reads it and ignores it).

Prims with scalar arguments (``round_decimals``, ``nan_to_num``, ``logit`` with
``eps``) take them as 0-dim device operands of a double pair (float pair without
fp64), converted in the kernel to the compute type the CPU kernel rounds them to;
large contiguous calls use ``<op>_cs`` kernels, which read those operands once.

Complex ``sgn`` and ``sinc`` run in the complex tables of ``kernels.complex``;
complex ``nan_to_num`` runs the real kernel over both parts (``view_as_real``).
float16 runs where the dialect computes it (``Dialect.computes_float16``: CUDA), in float and
rounded once, as PyTorch's CUDA kernels do (the parameter ops too: their scalars in float);
not ``nextafter`` (its step is half's). CPU fallback: complex ``lerp``, float16 elsewhere,
and integer ``floor_divide`` by zero
(detected with a device ``all`` reduction first, so that the CPU kernel raises
its RuntimeError). ``kernels.elementwise`` hands the integer forms of ``div``,
``remainder``, ``fmod`` and ``pow`` (``INTEGER_FORMS``) to :func:`run`; a zero
divisor or a negative integer power goes to the CPU kernel, which raises.
"""

from __future__ import annotations

import numpy as np
import opweave
from opweave.backends.kernel import is_cpu_scalar, output_strides
from opweave.prims.views import as_strided, view_as_real

from ..codegen import elementwise as ew
from ..codegen import elementwise_extra as gen
from ._common import (
    BACKENDS,
    CONTIGUOUS_MIN,
    KERNELS,
    backend_of,
    buf,
    dname,
    elementwise,
    empty,
    from_host,
    i64,
    kernel,
    launch,
    on_device,
    per_item,
    program_kernels,
    runtime_of,
)

_SIGNED = {"int8", "int16", "int32", "int64"}
_UNSIGNED = {"uint8"}
_FLOATS = {"bfloat16", "float32", "float64"}
_HALF = "float16"  # floating too where the dialect computes float16 (``Dialect.computes_float16``)
_BITS = {"uint8": 8, "int8": 8, "int16": 16, "int32": 32, "int64": 64}

_SIGN_INT = ("((x0 > 0) - (x0 < 0))", "(x0 > 0)")
_GCD = "ow_gcdu(ow_mag(x0), ow_mag(x1))"
_LCM = "ow_lcmu(ow_mag(x0), ow_mag(x1))"
_CLAMP_INT = "ow_clamp_i(x0, x1, x2)"

# name -> (inputs, floating expression, signed-integer expression, uint8 expression); ``{bits}`` is the width
OPS = {
    "sign": (1, "ow_sign(x0)", *_SIGN_INT),
    "sgn": (1, "ow_sign(x0)", *_SIGN_INT),
    "sinc": (1, "ow_sinc(x0)", None, None),
    "entr": (1, "ow_entr(x0)", None, None),
    "logit": (1, "log(x0 / (1 - x0))", None, None),
    "floor_divide": (2, "ow_floor_divide(x0, x1)", "ow_floor_divide_i(x0, x1)", "ow_divide_u(x0, x1)"),
    "div": (2, None, "ow_trunc_divide_i(x0, x1)", "ow_divide_u(x0, x1)"),
    "gcd": (2, None, _GCD, _GCD),
    "lcm": (2, None, _LCM, _LCM),
    "logaddexp": (2, "ow_logaddexp(x0, x1)", None, None),
    "logaddexp2": (2, "ow_logaddexp2(x0, x1)", None, None),
    "nextafter": (2, "nextafter(x0, x1)", None, None),
    "shift_left": (2, None, "ow_shift_left(x0, x1, {bits})", "ow_shift_left(x0, x1, {bits})"),
    "shift_right_arithmetic": (2, None, "ow_shift_right_i(x0, x1, {bits})", "ow_shift_right_u(x0, x1, {bits})"),
    "xlogy": (2, "ow_xlogy(x0, x1)", None, None),
    "xlog1py": (2, "ow_xlog1py(x0, x1)", None, None),
    "remainder": (2, None, "ow_remainder_i(x0, x1)", "ow_mod_u(x0, x1)"),
    "fmod": (2, None, "ow_fmod_i(x0, x1)", "ow_mod_u(x0, x1)"),
    "pow": (2, None, "ow_pow_i(x0, x1)", "ow_pow_u(x0, x1)"),
    "clamp": (3, "ow_clamp(x0, x1, x2)", _CLAMP_INT, _CLAMP_INT),
    "lerp": (3, "ow_lerp(x0, x1, x2)", None, None),
}

# Ops of the parameter program: ``x1`` and ``x2`` are (double or float) pairs of scalar arguments.
PARAM_OPS = {
    "logit_eps": "ow_logit_eps(x0, x1.x, x1.y)",
    "round_decimals": "ow_round_decimals(x0, x1.x, x1.y)",
    "nan_to_num": "ow_nan_to_num(x0, x2.x, x1.x, x1.y)",
}

# Integer ops that divide: a zero divisor goes to the CPU kernel, which raises.
_DIVIDING = {"floor_divide", "div", "remainder", "fmod"}
#: Integer ops of ``kernels.elementwise``'s tables that run here (their float forms stay there).
INTEGER_FORMS = {"div", "remainder", "fmod", "pow"}


def _expr(name: str, dtype: str, half: bool = False):
    """The C expression of ``name`` for inputs of ``dtype``, or None when it has no OpenCL kernel.

    ``half``: the dialect computes float16 (in float), so float16 takes the floating expressions.
    """
    _, f, i, u = OPS[name]
    if half and dtype == _HALF:
        return None if name == "nextafter" else f
    if dtype in _FLOATS:
        return "ow_nextafter_bf16(x0, x1)" if name == "nextafter" and dtype == "bfloat16" else f
    if dtype in _SIGNED:
        return i and i.format(bits=_BITS[dtype])
    if dtype in _UNSIGNED:
        return u and u.format(bits=_BITS[dtype])
    return None


_tables: dict = {}


def _table(dtype: str, half: bool = False) -> dict:
    """name -> (output dtype, expression) of every op of ``OPS`` with a kernel for ``dtype``."""
    key = (dtype, half and dtype == _HALF)
    ops = _tables.get(key)
    if ops is None:
        ops = _tables[key] = {n: (dtype, e) for n in OPS if (e := _expr(n, dtype, half)) is not None}
    return ops


def _param_dtype(rt) -> str:
    return "complex128" if rt.has_fp64 else "complex64"


def _source(dialect, dtype: str, contiguous: bool) -> str:
    half = dialect.computes_float16 and dtype == _HALF
    helper = gen.helpers(dialect, dtype, dtype in _FLOATS or half)
    return gen.program(dialect, _table(dtype, half), [dtype] * 3, helper, contiguous)


def _param_source(dialect, dtype: str, pair: str, contiguous: bool) -> str:
    ops = {name: (dtype, expr) for name, expr in PARAM_OPS.items()}
    helper = gen.helpers(dialect, dtype, True)
    return gen.program(dialect, ops, [dtype, pair, pair], helper, contiguous, scalars=True)


_opcodes: dict = {}


def _opcode(key, ops: dict, name: str) -> tuple:
    codes = _opcodes.get(key)
    if codes is None:
        codes = _opcodes[key] = ew.opcodes(ops)
    return codes[name]


def _output(inputs, dtype):
    """A new device tensor with the layout the elementwise meta function gives for ``inputs``."""
    shaped = [t for t in inputs if not is_cpu_scalar(t)] or [inputs[0]]
    dev = next(t for t in inputs if t.device.type in BACKENDS).device
    return empty(shaped[0].shape, dtype, dev, output_strides(shaped))


def run(name: str, *inputs):
    """``prims::name`` of ``OPS`` over ``inputs`` on the device, or ``NotImplemented`` (CPU fallback)."""
    a = next(t for t in inputs if t.device.type in BACKENDS)
    if a.dtype.is_complex:  # complex hook: the complex tables of kernels/complex.py (sgn, sinc)
        from .complex import elementwise as complex_elementwise

        return complex_elementwise(name, *inputs)
    d = dname(a)
    rt = runtime_of(a)
    half = rt.dialect.computes_float16 and d == _HALF
    if _expr(name, d, half) is None:
        return NotImplemented
    operands = [on_device(t, a.device) for t in inputs]
    if name in _DIVIDING and d not in _FLOATS and not half and not _all_nonzero(operands[1]):
        return NotImplemented
    if name == "pow" and d in _SIGNED and not _all_nonnegative(operands[1]):
        return NotImplemented  # the CPU kernel raises for negative integer powers
    out = _output(inputs, a.dtype)
    ks = program_kernels(rt, ("ewx", d), lambda: _source(rt.dialect, d, False))

    def contiguous():
        return program_kernels(rt, ("ewx", d, "c"), lambda: _source(rt.dialect, d, True))

    operands += [operands[-1]] * (3 - len(operands))
    elementwise(rt, ks, name, out, operands, _opcode(("ewx", d, half), _table(d, half), name), contiguous)
    return out


def _all_nonzero(t) -> bool:
    """Whether no element of the device tensor ``t`` is zero (one ``all`` reduction, one element read back)."""
    if t.numel() == 0:
        return True
    flag = KERNELS["prims::all"](t, None)
    return bool(backend_of(flag.device).copy_to_host(flag).reshape(()))


def _all_nonnegative(t) -> bool:
    """Whether no element of the integer device tensor ``t`` is negative (one ``amin``, one element read back)."""
    if t.numel() == 0:
        return True
    low = KERNELS["prims::amin"](t, None)
    return bool(backend_of(low.device).copy_to_host(low).reshape(()) >= 0)


def _run_param(name: str, a, first: tuple, second: tuple = (0.0, 0.0), out=None):
    """``PARAM_OPS[name]`` over ``a`` with the scalar pairs ``first`` (``x1``) and ``second`` (``x2``).

    The result goes to ``out`` when given (same shape and dtype as ``a``), else to a new tensor.
    """
    d = dname(a)
    rt = runtime_of(a)
    if d not in _FLOATS and not (rt.dialect.computes_float16 and d == _HALF):
        return NotImplemented
    pair = _param_dtype(rt)
    cplx = np.complex128 if pair == "complex128" else np.complex64
    both = from_host(np.array([complex(*first), complex(*second)], cplx), a.device)  # one upload
    params = [as_strided(both, (), (), i) for i in (0, 1)]
    out = _output([a], a.dtype) if out is None else out
    n = out.numel()
    if n >= CONTIGUOUS_MIN and a.is_contiguous() and out.is_contiguous():
        ks = program_kernels(rt, ("ewx_param", d, pair, "c"), lambda: _param_source(rt.dialect, d, pair, True))
        per = per_item(rt)
        offsets = [i64(t.storage_offset()) for t in (out, a, *params)]
        args = [x for t, off in zip((out, a, *params), offsets) for x in (buf(t), off)]
        launch(rt, ks[f"{name}{gen.SCALARS}"], -(-n // per), *args, i64(n), i64(per))
        return out
    ops = {op: (d, e) for op, e in PARAM_OPS.items()}
    ks = program_kernels(rt, ("ewx_param", d, pair), lambda: _param_source(rt.dialect, d, pair, False))
    elementwise(rt, ks, name, out, [a, *params], _opcode(("ewx_param", d), ops, name), _no_contiguous)
    return out


def _no_contiguous():
    raise AssertionError("scalar parameters are broadcast: the strided kernel serves every small or strided call")


def _register() -> None:
    for name in OPS:
        if name in INTEGER_FORMS or name == "logit":
            continue  # kernels.elementwise owns these and hands their integer forms to run(); logit: below

        def fn(*args, _name=name):
            return run(_name, *args)

        fn.__doc__ = f"``prims::{name}`` on the OpenCL device (generated kernel)."
        kernel(name)(fn)


_register()


@kernel("logit")
def logit(a, eps):
    """``log(x / (1 - x))``, ``x`` first clamped to ``[eps, 1 - eps]`` when ``eps`` is given and non-negative."""
    if eps is None or not eps >= 0:
        return run("logit", a)
    return _run_param("logit_eps", a, (eps, 1 - eps))


@kernel("round_decimals")
def round_decimals(a, decimals):
    """Round half to even at ``decimals`` decimal places (the scale is ``10**|decimals|`` in ``a``'s dtype)."""
    with np.errstate(over="ignore"):
        scale = float(np.power(np.float64(10), abs(decimals)))
    return _run_param("round_decimals", a, (scale, 1.0 if decimals >= 0 else -1.0))


@kernel("nan_to_num")
def nan_to_num(a, nan, posinf, neginf):
    """Replace nan, +inf and -inf (per part for complex); ``None`` limits are the dtype's finite extremes."""
    info = opweave.finfo(a.dtype.to_real())
    hi = float(info.max) if posinf is None else posinf
    lo = float(info.min) if neginf is None else neginf
    params = ((hi, lo), (0.0 if nan is None else nan, 0.0))
    if not a.dtype.is_complex:
        return _run_param("nan_to_num", a, *params)
    out = _output([a], a.dtype)  # the real and imaginary parts as a trailing dim of 2 of the real dtype
    if _run_param("nan_to_num", view_as_real(a), *params, out=view_as_real(out)) is NotImplemented:
        return NotImplemented
    return out
