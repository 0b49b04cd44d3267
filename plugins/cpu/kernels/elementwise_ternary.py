"""Ternary elementwise prims: ``where``, ``clamp``, ``lerp``."""

from __future__ import annotations

import numpy as np

from ._common import native
from ._elementwise import elementwise, result


def where(pred, a, b):
    """``a`` where ``pred``, else ``b`` (no widening: a pure selection)."""
    return result(np.where(native(pred), native(a), native(b)), a.dtype, (a, b))


def _clamp(a, lo, hi):
    return np.minimum(np.maximum(a, lo), hi)


def _lerp(start, end, weight):
    diff = end - start
    return np.where(np.abs(weight) < 0.5, start + weight * diff, end - diff * (1 - weight))


KERNELS = {
    "prims::where": where,
    "prims::clamp": elementwise(_clamp),
    "prims::lerp": elementwise(_lerp),
}
