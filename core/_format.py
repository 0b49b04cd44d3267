"""Tensor repr (placeholder until the full PyTorch-style printer lands)."""

from __future__ import annotations


def format_tensor(t) -> str:
    """``tensor([...])`` with dtype and device suffixes."""
    if t.device.type == "meta":
        return f"tensor(..., device='meta', size={tuple(t.shape)}, dtype={t.dtype!r})"
    return f"tensor({t.tolist()}, dtype={t.dtype!r})"
