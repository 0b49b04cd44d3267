"""One-launch kernels for canonical activations: ``relu``, ``silu``, ``gelu`` (both approximations), ``leaky_relu``.

Their decompositions run several prims (``relu`` is a comparison, a ``where`` and a zero fill: three
launches); these run one generated elementwise kernel (``codegen.elementwise``, its own program per
dtype, so the unary/binary tables' sources stay as they are). 16-bit floats compute in float and round
once, as PyTorch does; each expression is the decomposition's (``refs.elementwise_activation``), operation
for operation, so both paths round alike: ``relu`` keeps nan (``relu(nan) = nan``) and, as the
decomposition's ``where(x <= 0, 0, x)``, gives +0.0 for -0.0 (PyTorch keeps -0.0). A dtype the device lacks,
float16 on a dialect that does not compute it, and integer ``silu``/``gelu`` go to the decomposition.
``leaky_relu``'s slope is a second operand: a 0-dim device tensor of the compute dtype (float32 for 16-bit
floats), uploaded as the prims upload a scalar, so one program serves every slope.
"""

from __future__ import annotations

import math

import numpy as np
import opweave
from opweave import ops
from opweave.backends.kernel import Decline, output_strides

from ..codegen import elementwise as gen
from ._common import BACKENDS, KERNELS, buf, elementwise, empty, has_dtype, program_kernels, runtime_on

_FLOATS = ("float32", "float64", "bfloat16")
_INTS = ("uint8", "int8", "int16", "int32", "int64")


#: The decomposition's constants (``refs.elementwise_activation.gelu``), as Python computes them.
_SQRT_HALF = math.sqrt(0.5)
_BETA = math.sqrt(2) * (2 / math.sqrt(math.pi)) * 0.5


def _float_ops(t: str) -> dict:
    """name -> expression over ``x0`` in compute type ``t`` of each activation on a floating dtype."""
    c = lambda v: f"(({t}){v!r})"  # noqa: E731
    return {
        "relu": f"(x0 <= {c(0.0)} ? {c(0.0)} : x0)",
        "silu": f"(x0 / ({c(1.0)} + exp(-x0)))",
        "gelu": f"((x0 * {c(0.5)}) * ({c(1.0)} + erf(x0 * {c(_SQRT_HALF)})))",
        "gelu_tanh": (f"(({c(0.5)} * x0) * ({c(1.0)} + tanh({c(_BETA)} * (x0 + {c(0.044715)} * ((x0 * x0) * x0)))))"),
    }


def activation_ops(dialect, dtype: str) -> dict:
    """name -> (out dtype, expression) of the activations ``dtype`` has in ``dialect`` (empty: none)."""
    if dtype in _INTS:
        return {"relu": (dtype, "(x0 <= 0 ? 0 : x0)")}
    if dtype in _FLOATS or (dtype == "float16" and dialect.computes_float16):
        return {name: (dtype, expr) for name, expr in _float_ops(dialect.compute_type(dtype)).items()}
    return {}


def source(dialect, dtype: str, contiguous: bool = False) -> str:
    """The activations' program for ``dtype`` in ``dialect``: strided, or ``<op>_c`` kernels."""
    return gen.program(dialect, activation_ops(dialect, dtype), [dtype], contiguous)


def _compute_dtype(dtype: str) -> str:
    return "float32" if dtype in ("float16", "bfloat16") else dtype


def leaky_ops(dialect, dtype: str) -> dict:
    """``leaky_relu`` over ``x0`` and its slope ``x1`` (the decomposition's ``where(x > 0, x, x * slope)``)."""
    if dtype in _FLOATS or (dtype == "float16" and dialect.computes_float16):
        t = dialect.compute_type(dtype)
        return {"leaky_relu": (dtype, f"(x0 > (({t})0.0) ? x0 : x0 * x1)")}
    return {}


def leaky_source(dialect, dtype: str, contiguous: bool = False) -> str:
    """The ``leaky_relu`` program for ``dtype`` (inputs: ``dtype`` and its compute dtype)."""
    return gen.program(dialect, leaky_ops(dialect, dtype), [dtype, _compute_dtype(dtype)], contiguous)


def _leaky_relu(x, negative_slope=0.01):
    kind = type(negative_slope)
    if not (x.device.type in BACKENDS and has_dtype(x.dtype, x.device)) or not (kind is float or kind is int):
        raise Decline("leaky_relu: not a kernelgen tensor with a Python number slope")
    rt = runtime_on(x.device)
    d = x.dtype.name
    key = (rt.dialect.name, d, "leaky")
    code = _opcodes.get(key)
    if code is None:
        found = leaky_ops(rt.dialect, d)
        code = _opcodes[key] = gen.opcodes(found)["leaky_relu"] if found else False
    if not code:
        raise Decline(f"leaky_relu: no one-launch kernel for {d} on this device")
    c = _compute_dtype(d)
    slope_dtype = getattr(opweave, c)
    if not has_dtype(slope_dtype, x.device) or not abs(negative_slope) <= float(np.finfo(c).max):
        raise Decline("leaky_relu: the slope's dtype or value is the decomposition's")
    slope = BACKENDS[x.device.type].empty_strided((), (), slope_dtype, x.device)
    rt.copy_from_host(buf(slope), np.array(negative_slope, c).reshape(1).view(np.uint8))
    out = empty(x.shape, x.dtype, x.device, output_strides([x]))
    ks = program_kernels(rt, ("act", d, "leaky"), lambda: leaky_source(rt.dialect, d))

    def contiguous():
        return program_kernels(rt, ("act", d, "leaky", "c"), lambda: leaky_source(rt.dialect, d, True))

    elementwise(rt, ks, "leaky_relu", out, [x, slope], code, contiguous)
    return out


_opcodes: dict = {}


def _run(name: str, x):
    if not (x.device.type in BACKENDS and has_dtype(x.dtype, x.device)):
        raise Decline(f"{name}: not a tensor of a kernelgen dtype")
    rt = runtime_on(x.device)
    d = x.dtype.name
    key = (rt.dialect.name, d)
    codes = _opcodes.get(key)
    if codes is None:
        found = activation_ops(rt.dialect, d)
        codes = _opcodes[key] = gen.opcodes(found) if found else {}
    code = codes.get(name)
    if code is None:
        raise Decline(f"{name}: no one-launch kernel for {d} on this device")
    out = empty(x.shape, x.dtype, x.device, output_strides([x]))
    ks = program_kernels(rt, ("act", d), lambda: source(rt.dialect, d))

    def contiguous():
        return program_kernels(rt, ("act", d, "c"), lambda: source(rt.dialect, d, True))

    elementwise(rt, ks, name, out, [x], code, contiguous)
    return out


def _register(op, name: str, approximate: bool = False) -> None:
    if approximate:

        def kernel(self, approximate="none"):
            if approximate == "none":
                return _run("gelu", self)
            if approximate == "tanh":
                return _run("gelu_tanh", self)
            raise Decline("gelu: the decomposition reports the unknown approximation")
    else:

        def kernel(self):
            return _run(name, self)

    kernel.__name__ = kernel.__qualname__ = f"kernelgen_{op.name}"
    kernel.__doc__ = f"``{op.name}`` as one generated elementwise launch (else the decomposition)."
    KERNELS[op.name] = kernel


_register(ops.relu.default, "relu")
_register(ops.silu.default, "silu")
_register(ops.gelu.default, "gelu", approximate=True)
_leaky_relu.__name__ = _leaky_relu.__qualname__ = "kernelgen_leaky_relu"
_leaky_relu.__doc__ = (
    "``leaky_relu`` as one generated elementwise launch, the slope an operand (else the decomposition)."
)
KERNELS[ops.leaky_relu.default.name] = _leaky_relu
