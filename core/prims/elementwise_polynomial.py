"""Orthogonal polynomial prims: ``name(Tensor x, Tensor n) -> Tensor`` (real floating dtypes).

PyTorch semantics: ``n`` is truncated to an integer; ``n < 0`` gives 0 (so does
a non-finite ``n``, where PyTorch's float-to-int cast is undefined), degree 0
gives 1. Then, in PyTorch's order: the special values at the ends of the
interval of orthogonality, a trigonometric closed form for large ``n`` inside
it (Chebyshev families), else the three-term recurrence, whose cost grows with
``n`` (as in PyTorch). Hermite polynomials are nan above PyTorch's limit on the
degree (128 for float32 and narrower dtypes, 512 for float64).
"""

from __future__ import annotations

from .._ops import define_prim
from ._utils import FLOAT, elementwise_meta

# name -> documentation
POLYNOMIALS = {
    "chebyshev_polynomial_t": "Chebyshev polynomial of the first kind ``T_n(x)``.",
    "chebyshev_polynomial_u": "Chebyshev polynomial of the second kind ``U_n(x)``.",
    "chebyshev_polynomial_v": "Chebyshev polynomial of the third kind ``V_n(x)``.",
    "chebyshev_polynomial_w": "Chebyshev polynomial of the fourth kind ``W_n(x)``.",
    "hermite_polynomial_h": "Physicists' Hermite polynomial ``H_n(x)``.",
    "hermite_polynomial_he": "Probabilists' Hermite polynomial ``He_n(x)``.",
    "laguerre_polynomial_l": "Laguerre polynomial ``L_n(x)``.",
    "legendre_polynomial_p": "Legendre polynomial ``P_n(x)``.",
    "shifted_chebyshev_polynomial_t": "Shifted Chebyshev polynomial of the first kind ``T_n(2x - 1)``.",
    "shifted_chebyshev_polynomial_u": "Shifted Chebyshev polynomial of the second kind ``U_n(2x - 1)``.",
    "shifted_chebyshev_polynomial_v": "Shifted Chebyshev polynomial of the third kind ``V_n(2x - 1)``.",
    "shifted_chebyshev_polynomial_w": "Shifted Chebyshev polynomial of the fourth kind ``W_n(2x - 1)``.",
}


def _polynomial_meta(name, doc):
    op = f"prims::{name}"

    def meta(x, n):
        return elementwise_meta(op, ("x", "n"), (x, n), FLOAT)

    meta.__name__ = meta.__qualname__ = f"{name}_meta"
    meta.__doc__ = doc + " ``n`` is truncated to an integer; 0 for ``n < 0``."
    return meta


def _define():
    for name, doc in POLYNOMIALS.items():
        define_prim(f"{name}(Tensor x, Tensor n) -> Tensor", _polynomial_meta(name, doc), tags=("pointwise",))


_define()
