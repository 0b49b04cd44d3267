"""opweave's OpenCL backend: device buffers, kernels from ``opweave_kernelgen`` compiled at run time.

Device strings are ``opencl`` and ``opencl:N`` (platform order, then device
order; ``OPWEAVE_OPENCL_DEVICE=N`` keeps only device N). Prims without an
OpenCL kernel run through the core's CPU fallback (copies in and out, a
one-time warning). ``docs/opencl.md`` describes the design.

Its device module is ``opweave.opencl`` (``device_module.py``): ``is_available``,
``unavailable_reason``, ``device_count``, ``memory_stats``, ``empty_cache``,
``synchronize``; they are also importable from this package.
"""

from __future__ import annotations

import opweave

from . import device_module
from ._backend import BACKEND, NAME
from .device_module import device_count, empty_cache, is_available, memory_stats, synchronize, unavailable_reason

__all__ = [
    "BACKEND",
    "device_count",
    "empty_cache",
    "is_available",
    "memory_stats",
    "opweave_conformance_config",
    "opweave_register",
    "synchronize",
    "unavailable_reason",
]


@opweave.hookimpl
def opweave_register(registry):
    """Declare the OpenCL backend and register its kernels (when a device exists)."""
    registry.backend(BACKEND)
    registry.device_module(NAME, device_module)
    if BACKEND.is_available():
        from opweave_kernelgen import register_kernels

        register_kernels(registry, BACKEND)


# What the conformance suite should expect from PoCL-like devices. Dtypes the device lacks are skipped (and
# raise TypeError when used); see docs/opencl.md.
# Samples of these ops convert a tensor of the listed dtype *to* float16 (or view its bits as float16); on a
# device without cl_khr_fp16 that raises TypeError, as documented, where the CPU reference runs it.
_TO_HALF = {
    "_to_copy": ["uint8"],
    "_to_copy.out": ["uint8"],
    "to.device": ["uint8"],
    "to.dtype": ["uint8"],
    "prims::convert_element_type": ["int16", "int64", "complex128"],
    "prims::view_of_dtype": ["int16"],
    "view.dtype": ["int16"],
}


#: Complex functions whose generated kernels do not follow C99 Annex G at infinities and NaN
#: (``exp(-inf + 0j)`` gives nan, not 0): found by the suite's special-value probe.
_COMPLEX_SPECIALS = (
    "acos acosh arccos arcsin arcsinh arctan arctanh asin asinh atan atanh cos cosh exp sin sinh tan tanh "
    "tanhshrink float_power.Scalar float_power.Tensor_Scalar float_power.Tensor_Tensor pow.Scalar "
    "pow.Tensor_Scalar pow.Tensor_Tensor prims::acos prims::acosh prims::asin prims::asinh prims::atan prims::atanh "
    "prims::cos prims::cosh prims::exp prims::pow prims::sigmoid prims::sin prims::sinh prims::tan prims::tanh"
).split()
#: Loses all digits of small results (``1 - igamma`` cancels): found by the 16-bit precision probe.
_IGAMMAC = ("igammac", "prims::igammac", "special_gammaincc")


def _conformance() -> dict:
    skip = [d.name for d in (opweave.float16, opweave.float64, opweave.complex128) if d not in BACKEND.dtypes]
    xfail = {}
    if "float16" in skip:
        reason = "converts to float16, which the device lacks (cl_khr_fp16): TypeError by design"
        xfail = {op: {"reason": reason, "dtypes": dtypes} for op, dtypes in _TO_HALF.items()}
    reason = "complex results at inf/nan do not follow C99 Annex G (special-value probe)"
    for op in _COMPLEX_SPECIALS:
        xfail.setdefault(op, {"reason": reason, "dtypes": ["complex64", "complex128"]})
    reason = "igammac loses the digits of results below ~1e-15 (1 - igamma cancels): 16-bit precision probe"
    for op in _IGAMMAC:
        xfail.setdefault(op, {"reason": reason, "dtypes": ["bfloat16"]})
    return {"tolerances": {}, "xfail": xfail, "skip_dtypes": skip}


@opweave.hookimpl
def opweave_conformance_config(backend):
    """The conformance expectations of the OpenCL backend (None for other backends)."""
    return _conformance() if backend == NAME else None
