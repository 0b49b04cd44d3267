"""``requires_grad=`` on factories: PyTorch's Python argument parser adds it to every op with
TensorOptions (the schemas do not carry it), and so does each factory's generated entry point."""

from __future__ import annotations


def factory_result(result, op: str):
    """``result`` of factory ``op`` made a leaf that records gradients (``requires_grad=True``)."""
    if isinstance(result, tuple):
        raise RuntimeError(f"{op}(): requires_grad=True needs a single tensor result")
    return result.requires_grad_(True)
