"""The conformance expectations of every device built on the generator: skipped dtypes, known deviations."""

from __future__ import annotations

import opweave

#: Complex functions whose generated kernels do not follow C99 Annex G at infinities and NaN
#: (``exp(-inf + 0j)`` gives nan, not 0): found by the suite's special-value probe.
_COMPLEX_SPECIALS = (
    "acos acosh arccos arcsin arcsinh arctan arctanh asin asinh atan atanh cos cosh exp sin sinh tan tanh "
    "tanhshrink float_power.Scalar float_power.Tensor_Scalar float_power.Tensor_Tensor pow.Scalar "
    "pow.Tensor_Scalar pow.Tensor_Tensor prims::acos prims::acosh prims::asin prims::asinh prims::atan prims::atanh "
    "prims::cos prims::cosh prims::exp prims::pow prims::sigmoid prims::sin prims::sinh prims::tan prims::tanh"
).split()


def conformance_expectations(backend) -> dict:
    """What the conformance suite should expect of a device built on the generator (``backend``'s dtypes decide).

    Dtypes the device lacks are skipped (and raise ``TypeError`` when used; the suite also skips samples that
    convert to them); the xfails are the generator's known deviations, with their reasons.
    """
    skip = [d.name for d in (opweave.float16, opweave.float64, opweave.complex128) if d not in backend.dtypes]
    xfail: dict = {}
    reason = "complex results at inf/nan do not follow C99 Annex G (special-value probe)"
    for op in _COMPLEX_SPECIALS:
        xfail.setdefault(op, {"reason": reason, "dtypes": ["complex64", "complex128"]})
    return {"tolerances": {}, "xfail": xfail, "skip_dtypes": skip}
