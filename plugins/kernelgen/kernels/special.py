"""Special functions: error and gamma families, Bessel and Airy functions, orthogonal polynomials.

Two programs per dtype (float32, float64; bfloat16 runs the float32 kernels between
two casts, as the CPU kernel widens it to float32), each one elementwise
program of ``codegen.elementwise`` (an opcode-switched strided kernel, and the
per-op contiguous kernels for large calls) with the C library of
``codegen.special`` that its ops call: the unary functions, and the functions of
two tensors (``igamma``, ``igammac``, ``zeta``, the polynomials, and ``polygamma``
and ``mvlgamma``, whose integer argument travels as a broadcast 0-dim operand).
Everything computes in double and rounds once to the output dtype (twice for bfloat16:
to float32, then to bfloat16, like the CPU kernel). float16 has programs of its own where the
dialect computes it (CUDA): each element loaded as half, the function in double, the result
rounded once to half.

Left to the CPU fallback (``NotImplemented``): devices without fp64; float16 where the
dialect does not compute it; ``polygamma`` and ``mvlgamma`` when ``n``/``p`` is not exactly
a float32 (above 2**24) for float32 and bfloat16 tensors, or a float16 (above 2048) for
float16. ``mvlgamma`` checks its domain on the device and raises the CPU kernel's ValueError.
"""

from __future__ import annotations

import opweave
from opweave.backends.kernel import is_cpu_scalar, output_strides

from ..codegen import elementwise as ew
from ..codegen import special as gen
from ._common import BACKENDS, dname, elementwise, empty, kernel, native_half, on_device, program_kernels, runtime_of

_DTYPES = {"bfloat16", "float32", "float64"}

# name -> (C expression over x0, library sections)
UNARY = {
    "erf_inv": ("ow_erfinv(x0)", ("erf",)),
    "erfcx": ("ow_erfcx(x0)", ("erf",)),
    "ndtr": ("ow_ndtr(x0)", ("erf",)),
    "ndtri": ("ow_ndtri(x0)", ("erf",)),
    "log_ndtr": ("ow_log_ndtr(x0)", ("erf",)),
    "lgamma": ("ow_lgamma(x0)", ("gamma",)),
    "digamma": ("ow_digamma(x0)", ("gamma",)),
    "bessel_j0": ("ow_bessel_jy(x0, 0)", ("bessel",)),
    "bessel_j1": ("ow_bessel_jy(x0, 1)", ("bessel",)),
    "bessel_y0": ("ow_bessel_jy(x0, 2)", ("bessel",)),
    "bessel_y1": ("ow_bessel_jy(x0, 3)", ("bessel",)),
    "bessel_i0": ("ow_bessel_i(x0, 0)", ("bessel",)),
    "bessel_i0e": ("ow_bessel_i(x0, 1)", ("bessel",)),
    "bessel_i1": ("ow_bessel_i(x0, 2)", ("bessel",)),
    "bessel_i1e": ("ow_bessel_i(x0, 3)", ("bessel",)),
    "modified_bessel_k0": ("ow_bessel_k(x0, 0)", ("bessel",)),
    "modified_bessel_k1": ("ow_bessel_k(x0, 1)", ("bessel",)),
    "scaled_modified_bessel_k0": ("ow_bessel_k(x0, 2)", ("bessel",)),
    "scaled_modified_bessel_k1": ("ow_bessel_k(x0, 3)", ("bessel",)),
    "spherical_bessel_j0": ("ow_spherical_j0(x0)", ("bessel",)),
    "airy_ai": ("ow_airy_ai(x0)", ("airy",)),
}

POLYNOMIALS = (
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
)

# name -> (C expression over x0, x1, library sections); "@LIMIT@" is the dtype's Hermite degree limit
BINARY = {
    "igamma": ("ow_igamma(x0, x1, 0)", ("igamma",)),
    "igammac": ("ow_igamma(x0, x1, 1)", ("igamma",)),
    "zeta": ("ow_zeta(x0, x1)", ("gamma",)),
    "polygamma": ("ow_polygamma(x0, x1)", ("gamma",)),
    "mvlgamma": ("ow_mvlgamma(x0, x1)", ("gamma",)),
}
BINARY.update({name: (f"ow_polynomial({kind}, x0, x1, @LIMIT@)", ("poly",)) for kind, name in enumerate(POLYNOMIALS)})

_TABLES = {1: UNARY, 2: BINARY}


def _ops(arity: int, dtype: str) -> dict:
    """name -> (output dtype, expression) of the program of ``arity`` for input ``dtype``."""
    limit = "512" if dtype == "float64" else "128"  # PyTorch's getHermitianLimit
    return {name: (dtype, _widen(expr.replace("@LIMIT@", limit), arity)) for name, (expr, _) in _TABLES[arity].items()}


def _widen(call: str, arity: int) -> str:
    """``call`` with its tensor operands ``x0``/``x1`` converted to double."""
    for i in range(arity):
        call = call.replace(f"x{i}", f"(double)x{i}")
    return call


def _sections(arity: int) -> list:
    return sorted({s for _, sections in _TABLES[arity].values() for s in sections})


_opcodes: dict = {}


def _opcode(arity: int, dtype: str, name: str) -> tuple:
    key = (arity, dtype)
    codes = _opcodes.get(key)
    if codes is None:
        codes = _opcodes[key] = ew.opcodes(_ops(arity, dtype))
    return codes[name]


def _run(arity: int, name: str, *inputs):
    """Run op ``name`` of the ``arity`` program over ``inputs`` (CPU 0-dim operands are broadcast)."""
    a = next(t for t in inputs if t.device.type in BACKENDS)
    d = dname(a)
    rt = runtime_of(a)
    if (d not in _DTYPES and not native_half(a.dtype, a.device)) or not rt.has_fp64:
        return NotImplemented
    shaped = [t for t in inputs if not is_cpu_scalar(t)] or [inputs[0]]  # the meta function's layout rule
    shape, strides = shaped[0].shape, output_strides(shaped)
    operands = [on_device(t, a.device) for t in inputs]
    if d != "bfloat16":
        out = empty(shape, a.dtype, a.device, strides)
        _launch(rt, arity, name, d, out, operands)
        return out
    # bfloat16 runs the float32 program (which rounds the double result to float32, as the CPU kernel does)
    # between two casts: two fewer programs to build, and a build costs more than the casts.
    convert = opweave.ops.lookup("prims::convert_element_type")
    out = empty(shape, opweave.float32, a.device, strides)
    _launch(rt, arity, name, "float32", out, [convert(t, opweave.float32) for t in operands])
    return convert(out, opweave.bfloat16)


def _launch(rt, arity: int, name: str, d: str, out, operands) -> None:
    """Enqueue op ``name`` of the ``arity`` program for dtype ``d`` over ``out`` and ``operands``."""
    sections = _sections(arity)

    def source(contiguous=False):
        return gen.program(rt.dialect, _ops(arity, d), [d] * arity, sections, contiguous)

    ks = program_kernels(rt, ("special", arity, d), source)

    def contiguous():
        return program_kernels(rt, ("special", arity, d, "c"), lambda: source(True))

    elementwise(rt, ks, name, out, operands, _opcode(arity, d, name), contiguous)


def _register() -> None:
    for arity, table in _TABLES.items():
        for name in table:
            if name in ("polygamma", "mvlgamma"):
                continue

            def fn(*args, _name=name, _arity=arity):
                return _run(_arity, _name, *args)

            fn.__doc__ = f"``prims::{name}`` on the OpenCL device (generated kernel, computed in double)."
            kernel(name)(fn)


_register()


def _scalar_operand(x, value):
    """``value`` as a 0-dim CPU tensor of the dtype ``x`` computes in, or None when it cannot hold it exactly."""
    s = opweave.tensor(float(value), dtype=opweave.float32 if x.dtype is opweave.bfloat16 else x.dtype)
    return s if float(s.item()) == float(value) else None


@kernel("polygamma")
def polygamma(self, n):
    """``prims::polygamma``: digamma for ``n = 0``, else ``(-1)**(n+1) n! zeta(n + 1, x)``."""
    s = _scalar_operand(self, n)
    if s is None:
        return NotImplemented
    return _run(2, "polygamma", self, s)


@kernel("mvlgamma")
def mvlgamma(self, p):
    """``prims::mvlgamma``: ``sum(lgamma(x - j/2) for j < p) + p (p-1)/4 log(pi)``; ValueError off its domain."""
    s = _scalar_operand(self, p)
    if s is None:
        return NotImplemented
    out = _run(2, "mvlgamma", self, s)
    if out is NotImplemented:
        return out
    # The kernel writes nan exactly where an element is not above (p-1)/2 (nan included).
    if out.numel() and bool(opweave.isnan(out).any()):
        raise ValueError("prims::mvlgamma: all elements must be greater than (p-1)/2")
    return out
