"""Creation prims: allocation, fill, ranges.

They take no tensor arguments; the dispatcher finds the backend from their
``device`` argument.
"""

from __future__ import annotations

import math

from .. import _dtype
from .._meta import empty as meta_empty
from .._ops import define_prim
from .._tensor import contiguous_strides
from ._utils import check_shape


def empty_strided_meta(shape, strides, dtype, device):
    """Uninitialised memory with the given shape and strides."""
    op = "prims::empty_strided"
    shape = check_shape(op, "shape", shape)
    if len(strides) != len(shape):
        raise ValueError(f"{op}: 'strides' needs {len(shape)} entries, got {list(strides)}")
    return meta_empty(shape, dtype, strides)


def empty_permuted_meta(shape, physical_layout, dtype, device):
    """Uninitialised dense memory whose dims are laid out in ``physical_layout`` order (outer first)."""
    op = "prims::empty_permuted"
    shape = check_shape(op, "shape", shape)
    if sorted(physical_layout) != list(range(len(shape))):
        raise ValueError(f"{op}: 'physical_layout' must be a permutation of {len(shape)} dims")
    physical = contiguous_strides([shape[d] for d in physical_layout])
    strides = [0] * len(shape)
    for pos, d in enumerate(physical_layout):
        strides[d] = physical[pos]
    return meta_empty(shape, dtype, strides)


def full_meta(shape, fill_value, dtype, device):
    """A contiguous tensor of ``shape`` filled with ``fill_value`` (cast to ``dtype``)."""
    op = "prims::full"
    shape = check_shape(op, "shape", shape)
    _check_fill(op, fill_value, dtype)
    return meta_empty(shape, dtype)


def _check_fill(op, value, dtype):
    """PyTorch's checked scalar conversion: complex into real, and out-of-range values into integers, raise."""
    if isinstance(value, complex) and not dtype.is_complex:
        raise TypeError(f"{op}: cannot fill a {dtype.name} tensor with a complex value")
    if dtype.kind in ("int", "uint") and not isinstance(value, bool):
        info = _dtype.iinfo(dtype)
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{op}: value {value} cannot be converted to {dtype.name} without overflow")
        if isinstance(value, (int, float)) and not info.min <= int(value) <= info.max:
            raise ValueError(f"{op}: value {value} cannot be converted to {dtype.name} without overflow")


def scalar_tensor_meta(s, dtype, device):
    """A 0-dim tensor holding ``s``."""
    _check_fill("prims::scalar_tensor", s, dtype)
    return meta_empty((), dtype)


def iota_meta(length, start, step, dtype, device):
    """``start, start + step, ...`` (``length`` values) as a 1-D tensor of an integer dtype."""
    op = "prims::iota"
    if length < 0:
        raise ValueError(f"{op}: argument 'length' must be non-negative, got {length}")
    if dtype.kind not in ("int", "uint"):
        raise TypeError(f"{op}: argument 'dtype' must be an integer dtype, got {dtype.name}")
    return meta_empty((length,), dtype)


def _define():
    define_prim(
        "empty_strided(SymInt[] shape, SymInt[] strides, *, ScalarType dtype, Device device) -> Tensor",
        empty_strided_meta,
        tags=("factory",),
    )
    define_prim(
        "empty_permuted(SymInt[] shape, int[] physical_layout, *, ScalarType dtype, Device device) -> Tensor",
        empty_permuted_meta,
        tags=("factory",),
    )
    define_prim(
        "full(SymInt[] shape, Scalar fill_value, *, ScalarType dtype, Device device) -> Tensor",
        full_meta,
        tags=("factory",),
    )
    define_prim(
        "scalar_tensor(Scalar s, *, ScalarType dtype, Device device) -> Tensor", scalar_tensor_meta, tags=("factory",)
    )
    define_prim(
        "iota(SymInt length, *, SymInt start, SymInt step, ScalarType dtype, Device device) -> Tensor",
        iota_meta,
        tags=("factory",),
    )


_define()


# --- eye and triangle indices ---


def eye_meta(n, m, dtype, device):
    """An ``n × m`` matrix with ones on the main diagonal and zeros elsewhere (any dtype)."""
    op = "prims::eye"
    if n < 0 or m < 0:
        raise ValueError(f"{op}: arguments 'n' and 'm' must be non-negative, got n={n}, m={m}")
    return meta_empty((n, m), dtype)


def tril_count(row: int, col: int, offset: int) -> int:
    """Number of ``(i, j)`` with ``0 <= i < row``, ``0 <= j < col`` and ``j - i <= offset``."""
    c = offset + 1  # row i holds clip(i + c, 0, col) entries
    a = min(max(-c, 0), row)
    b = min(max(col - c, a), row)
    return (b - a) * c + (a + b - 1) * (b - a) // 2 + (row - b) * col


def _triangle_indices_meta(op, row, col, offset, dtype, count):
    if row < 0 or col < 0:
        raise ValueError(f"{op}: arguments 'row' and 'col' must be non-negative, got row={row}, col={col}")
    if dtype.kind not in ("int", "uint"):
        raise TypeError(f"{op}: argument 'dtype' must be an integer dtype, got {dtype.name}")
    return meta_empty((2, count), dtype)


def tril_indices_meta(row, col, offset, dtype, device):
    """Coordinates (2 × N, row-major order) of the lower triangle ``j - i <= offset`` of a ``row × col`` matrix."""
    return _triangle_indices_meta("prims::tril_indices", row, col, offset, dtype, tril_count(row, col, offset))


def triu_indices_meta(row, col, offset, dtype, device):
    """Coordinates (2 × N, row-major order) of the upper triangle ``j - i >= offset`` of a ``row × col`` matrix."""
    count = row * col - tril_count(row, col, offset - 1) if row >= 0 and col >= 0 else 0
    return _triangle_indices_meta("prims::triu_indices", row, col, offset, dtype, count)


def _define_eye_and_indices():
    define_prim("eye(SymInt n, SymInt m, *, ScalarType dtype, Device device) -> Tensor", eye_meta, tags=("factory",))
    for name, meta in (("tril_indices", tril_indices_meta), ("triu_indices", triu_indices_meta)):
        define_prim(
            f"{name}(int row, int col, int offset, *, ScalarType dtype, Device device) -> Tensor",
            meta,
            tags=("factory",),
        )


_define_eye_and_indices()
