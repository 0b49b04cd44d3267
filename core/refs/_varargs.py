"""Ops whose ``Tensor[]`` argument PyTorch also takes as separate tensors.

``torch.meshgrid``, ``block_diag``, ``cartesian_prod``, ``broadcast_tensors``, ``einsum``,
``chain_matmul`` and ``atleast_{1,2,3}d`` are Python functions in PyTorch with ``*tensors``
signatures: ``meshgrid(a, b)``, ``einsum("ij,jk", a, b)``. ATen's ``cat``/``stack`` are not, and
keep taking one list.
"""

from __future__ import annotations

from .._ops import canonical

TENSOR_VARARGS = (
    "meshgrid",
    "block_diag",
    "cartesian_prod",
    "broadcast_tensors",
    "einsum",
    "chain_matmul",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
)


def mark() -> None:
    """Let every overload of those ops pack separate tensors into its ``Tensor[]`` argument."""
    for name in TENSOR_VARARGS:
        for op in getattr(canonical, name).overloads.values():
            if any(a.type.name == "Tensor" and a.type.is_list for a in op.schema.arguments):
                op.tensor_varargs = True
