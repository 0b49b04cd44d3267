"""Random prims: counter-based (Philox4x32-10), reproducible on every backend.

Each call is a pure function of its arguments: ``seed`` selects the key and
``offset`` the first counter block, so a generator advances by handing out
disjoint offset ranges. The exact bits and their mapping to values are
specified in :mod:`opweave._philox`; a backend must reproduce them.
"""

from __future__ import annotations

import math

from .. import _dtype
from .._meta import empty as meta_empty
from .._ops import define_prim
from .._philox import check_seed_offset
from ._utils import FLOAT, INT, check_dtype, check_shape, check_tensor

_RANDINT_DTYPES = INT | FLOAT | frozenset({_dtype.bool_})
# Largest integer magnitude a float dtype holds exactly (2 ** (mantissa bits + 1)).
_FLOAT_EXACT = {_dtype.float16: 2**11, _dtype.bfloat16: 2**8, _dtype.float32: 2**24, _dtype.float64: 2**53}


def _real_scalar(op: str, name: str, value) -> float:
    """A finite real Scalar argument as a float (TypeError for complex, ValueError for nan/inf)."""
    if isinstance(value, complex):
        raise TypeError(f"{op}: argument '{name}' must be real, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{op}: argument '{name}' must be finite, got {value}")
    return value


def _check_float_dtype(op: str, dtype) -> None:
    if dtype not in FLOAT:
        raise TypeError(f"{op}: argument 'dtype' must be a floating dtype, got {dtype.name}")


def random_bits_meta(shape, seed, offset, device):
    """Random 32-bit words: element ``i`` is word ``i`` of the Philox stream at (seed, offset).

    Returns an int64 tensor holding uint32 values (0 <= x < 2**32). Uses ``ceil(numel / 4)``
    counter blocks.
    """
    op = "prims::random_bits"
    shape = check_shape(op, "shape", shape)
    check_seed_offset(op, seed, offset)
    return meta_empty(shape, _dtype.int64)


def uniform_meta(shape, low, high, seed, offset, dtype, device):
    """Uniform values in ``[low, high)`` of a floating ``dtype``.

    float16/bfloat16/float32 use 24 random bits per element (one word, ``ceil(numel / 4)``
    blocks); float64 uses 53 bits from two words (``ceil(numel / 2)`` blocks). The value
    ``low + (high - low) * u`` is computed in float64 and rounded to ``dtype``; a value that
    rounds up to ``high`` becomes the largest value of ``dtype`` below ``high``. ValueError
    unless ``low <= high``, both finite and within ``dtype``'s range; ``low == high`` gives
    ``low`` everywhere.
    """
    op = "prims::uniform"
    shape = check_shape(op, "shape", shape)
    lo, hi = _real_scalar(op, "low", low), _real_scalar(op, "high", high)
    if lo > hi:
        raise ValueError(f"{op}: expects low <= high, got low={low} and high={high}")
    _check_float_dtype(op, dtype)
    limit = float(_dtype.finfo(dtype).max)
    if not -limit <= lo <= hi <= limit:
        raise ValueError(f"{op}: low={low} and high={high} must be within the range of {dtype.name}")
    check_seed_offset(op, seed, offset)
    return meta_empty(shape, dtype)


def normal_meta(shape, mean, std, seed, offset, dtype, device):
    """Normal values ``mean + std * z`` of a floating ``dtype`` (Box-Muller).

    Element ``i`` uses counter block ``offset + i // 2``: its four words give two 53-bit
    uniforms ``u1`` in (0, 1] and ``u2`` in [0, 1); ``z = sqrt(-2 log u1) * (cos or sin)(2 pi u2)``
    (cos for even ``i``, sin for odd). ValueError if ``std < 0``.
    """
    op = "prims::normal"
    shape = check_shape(op, "shape", shape)
    _real_scalar(op, "mean", mean)
    if _real_scalar(op, "std", std) < 0:
        raise ValueError(f"{op}: expects std >= 0.0, got {std}")
    _check_float_dtype(op, dtype)
    check_seed_offset(op, seed, offset)
    return meta_empty(shape, dtype)


def bernoulli_meta(p, seed, offset):
    """0/1 draws with probabilities ``p`` (a floating tensor; the output has ``p``'s dtype and shape).

    Element ``i`` (row-major order of ``p``'s shape) is 1 where ``u < p[i]``, ``u`` being the
    uniform [0, 1) value of element ``i`` (24 bits, or 53 bits for float64). The CPU kernel
    raises ValueError if some ``p`` is outside [0, 1] or nan (as torch does).
    """
    op = "prims::bernoulli"
    check_tensor(op, "p", p)
    check_dtype(op, "p", p, FLOAT)
    check_seed_offset(op, seed, offset)
    return meta_empty(p.shape, p.dtype)


def _check_int_range(op: str, low: int, high: int, dtype) -> None:
    """ValueError unless ``low`` and ``high - 1`` are representable in ``dtype``."""
    if dtype is _dtype.bool_:
        lo_lim, hi_lim = 0, 1
    elif dtype.kind in ("int", "uint"):
        info = _dtype.iinfo(dtype)
        lo_lim, hi_lim = int(info.min), int(info.max)
    else:
        lo_lim, hi_lim = -_FLOAT_EXACT[dtype], _FLOAT_EXACT[dtype]
    if not (lo_lim <= low and high - 1 <= hi_lim):
        raise ValueError(f"{op}: the range [{low}, {high}) does not fit dtype {dtype.name}")


def randint_meta(shape, low, high, seed, offset, dtype, device):
    """Uniform integers in ``[low, high)``: ``low + V % (high - low)``.

    ``V`` is the 64-bit value of words ``2i`` and ``2i + 1`` (``ceil(numel / 2)`` blocks).
    ``dtype`` is an integer, bool or floating dtype that holds ``low`` and ``high - 1``
    exactly. ValueError if ``high <= low``.
    """
    op = "prims::randint"
    shape = check_shape(op, "shape", shape)
    if high <= low:
        raise ValueError(f"{op}: expects low < high, got low={low} and high={high}")
    if dtype not in _RANDINT_DTYPES:
        raise TypeError(f"{op}: argument 'dtype' has unsupported dtype {dtype.name}")
    _check_int_range(op, low, high, dtype)
    if not -(2**63) <= low < high <= 2**63:
        raise ValueError(f"{op}: low and high must fit int64, got [{low}, {high})")
    check_seed_offset(op, seed, offset)
    return meta_empty(shape, dtype)


def randperm_meta(n, seed, offset, dtype, device):
    """A random permutation of ``0 .. n-1``: the stable argsort of ``n`` random 64-bit keys.

    Key ``i`` is the 64-bit value of words ``2i`` and ``2i + 1`` (``ceil(n / 2)`` blocks).
    ``dtype`` is an integer or floating dtype that holds ``n - 1`` exactly.
    """
    op = "prims::randperm"
    if n < 0:
        raise ValueError(f"{op}: argument 'n' must be non-negative, got {n}")
    if dtype not in INT | FLOAT:
        raise TypeError(f"{op}: argument 'dtype' has unsupported dtype {dtype.name}")
    if n > 1:
        _check_int_range(op, 0, n, dtype)
    check_seed_offset(op, seed, offset)
    return meta_empty((n,), dtype)


_TAGS = ("random", "nondeterministic_seeded")
_FACTORY = ("random", "nondeterministic_seeded", "factory")

RANDOM_PRIMS = [
    ("random_bits(SymInt[] shape, int seed, int offset, *, Device device) -> Tensor", random_bits_meta, _FACTORY),
    (
        "uniform(SymInt[] shape, Scalar low, Scalar high, int seed, int offset, *, ScalarType dtype, Device device)"
        " -> Tensor",
        uniform_meta,
        _FACTORY,
    ),
    (
        "normal(SymInt[] shape, Scalar mean, Scalar std, int seed, int offset, *, ScalarType dtype, Device device)"
        " -> Tensor",
        normal_meta,
        _FACTORY,
    ),
    ("bernoulli(Tensor p, int seed, int offset) -> Tensor", bernoulli_meta, _TAGS),
    (
        "randint(SymInt[] shape, int low, int high, int seed, int offset, *, ScalarType dtype, Device device)"
        " -> Tensor",
        randint_meta,
        _FACTORY,
    ),
    (
        "randperm(SymInt n, int seed, int offset, *, ScalarType dtype, Device device) -> Tensor",
        randperm_meta,
        _FACTORY,
    ),
]


def _define():
    for schema, meta, tags in RANDOM_PRIMS:
        define_prim(schema, meta, tags=tags)


_define()
