"""Derivative formulas: one module per family of prims (and the canonical ops with their own formula).

Each module registers its formulas through :func:`opweave.autograd.layer.register_formula`
when imported. Formulas are written with opweave ops, so they are differentiable again
(``create_graph=True``), and follow PyTorch's convention for complex inputs: the gradient
of a real loss L with respect to z is ``dL/dRe(z) + i dL/dIm(z)``, i.e. for a holomorphic
``f`` the incoming gradient times ``conj(f'(z))``.
"""

from __future__ import annotations

from . import (  # noqa: F401
    canonical,
    composite,
    decompositions,
    elementwise,
    indexing,
    linalg,
    nn,
    quantization,
    reductions,
    scans,
    spectral,
    views,
)
