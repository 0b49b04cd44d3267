"""Shared machinery of the elementwise canonical-op tests: dtypes, PyTorch's promotion rule, inputs, layouts, checks.

The promotion rule is written out here from PyTorch's documentation (type
categories bool < integer < floating < complex; tensors with dims outrank
0-dim tensors, which outrank Python numbers; a lower tier only matters when it
is of a higher category), independently of opweave's implementation. Inputs
come from a NumPy generator seeded per test case, in a layout (contiguous,
transposed, sliced with a step, or broadcast with 0-strides); oracles are
NumPy/SciPy formulas in the tests.
"""

from __future__ import annotations

import warnings

import numpy as np
import opweave as ow

P = ow.ops.prims

BOOL = (ow.bool,)
INT = (ow.uint8, ow.int8, ow.int16, ow.int32, ow.int64)
FLOAT = (ow.float16, ow.bfloat16, ow.float32, ow.float64)
COMPLEX = (ow.complex64, ow.complex128)
REAL = INT + FLOAT
NUMERIC = REAL + COMPLEX
FLOATING = FLOAT + COMPLEX
INTEGRAL = BOOL + INT
ALL = BOOL + NUMERIC
LAYOUTS = ("contiguous", "transposed", "sliced", "broadcast")

RTOL = {
    ow.float16: 2e-3,
    ow.bfloat16: 1.6e-2,
    ow.float32: 2e-5,
    ow.float64: 1e-12,
    ow.complex64: 2e-5,
    ow.complex128: 1e-12,
}
SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0])


# -- PyTorch's promotion rule -----------------------------------------------------------


def category(d) -> int:
    """0 bool, 1 integer, 2 floating, 3 complex."""
    if d is ow.bool:
        return 0
    if d.is_complex:
        return 3
    return 2 if d.is_floating_point else 1


def _complex_of(d):
    return ow.complex128 if d in (ow.float64, ow.complex128) else ow.complex64


def promote(a, b):
    """torch.promote_types for the dtypes under test."""
    if a is b:
        return a
    ca, cb = category(a), category(b)
    if ca == 3 or cb == 3:
        wide = ow.float64 in (a, b) or ow.complex128 in (a, b)
        return ow.complex128 if wide else ow.complex64
    if ca != cb:
        return a if ca > cb else b
    if ca == 2:
        if {a, b} == {ow.float16, ow.bfloat16}:
            return ow.float32
        return a if a.itemsize > b.itemsize else b
    return ow.dtype_of_numpy(np.promote_types(a.numpy, b.numpy))


def _scalar_dtype(v):
    if isinstance(v, bool):
        return ow.bool
    if isinstance(v, int):
        return ow.int64
    if isinstance(v, float):
        return ow.get_default_dtype()
    return ow.complex128 if ow.get_default_dtype() is ow.float64 else ow.complex64


def _combine(higher, lower):
    if higher is None:
        return lower
    if lower is None or category(higher) >= category(lower):
        return higher
    if category(lower) == 3:
        return _complex_of(higher) if category(higher) == 2 else lower
    return promote(higher, lower)


def result_type(*operands):
    """PyTorch's result dtype of an elementwise op: operands are Tensors or Python numbers."""
    tiers = [None, None, None]  # tensors with dims, 0-dim tensors, Python numbers
    for v in operands:
        if v is None:
            continue
        if isinstance(v, ow.Tensor):
            tier, d = (0 if v.ndim else 1), v.dtype
        else:
            tier, d = 2, _scalar_dtype(v)
        tiers[tier] = d if tiers[tier] is None else promote(tiers[tier], d)
    return _combine(tiers[0], _combine(tiers[1], tiers[2]))


def int_to_float(d):
    """Promotion kind INT_TO_FLOAT: bool and integer results become the default float dtype."""
    return d if category(d) >= 2 else ow.get_default_dtype()


def complex_to_float(d):
    """Promotion kind COMPLEX_TO_FLOAT: complex results become their real counterpart."""
    return {ow.complex64: ow.float32, ow.complex128: ow.float64}.get(d, d)


# -- values and layouts ---------------------------------------------------------------------


def values(rng, shape, dtype, domain="any", specials=True):
    """NumPy values of ``dtype`` (a NumPy array of the dtype's NumPy type) in ``domain``.

    Domains: "any" (mixed magnitudes), "pos" (0.1..5), "unit" (-0.95..0.95), "gt1" (1.05..5),
    "nonzero" (|x| >= 0.5), "small" (integers -3..3, non-negative for unsigned), "exp" (integers 0..4
    for integer dtypes, "any" otherwise), "shift" (integers 0..7), "prob" (0.02..0.98; 1 for integers).
    Floating values get nan/±inf/-0.0 mixed in when ``specials`` is true.
    """
    shape = tuple(shape)
    if dtype is ow.bool:
        p_true = {"nonzero": 2, "pos": 2, "gt1": 2, "prob": 2}.get(domain, 0.5)
        return np.asarray(rng.random(shape) < p_true)
    if category(dtype) == 1:
        return _int_values(rng, shape, dtype, domain)
    v = np.array(_float_values(rng, shape, domain), dtype=np.float64)
    if specials and domain in ("any", "exp"):
        mask = rng.random(shape) < 0.2
        v[mask] = rng.choice(SPECIALS, int(mask.sum()))
    if dtype.is_complex:
        im = _float_values(rng, shape, domain)
        v = v + 1j * im
    return np.asarray(v).astype(dtype.numpy)


_INT_RANGES = {"small": (-3, 3), "exp": (0, 4), "shift": (0, 7), "pos": (1, 40), "gt1": (2, 40), "unit": (-1, 1)}


def _int_values(rng, shape, dtype, domain):
    lo, hi = _INT_RANGES.get(domain, (1, 1) if domain == "prob" else (-40, 40))
    lo = max(lo, int(np.iinfo(dtype.numpy).min))
    v = np.asarray(rng.integers(lo, hi + 1, shape))
    if domain == "nonzero":
        v = np.where(v == 0, 1, v)
    return v.astype(dtype.numpy)


def _float_values(rng, shape, domain):
    if domain == "pos":
        return rng.uniform(0.1, 5, shape)
    if domain == "unit":
        return rng.uniform(-0.95, 0.95, shape)
    if domain == "gt1":
        return rng.uniform(1.05, 5, shape)
    if domain == "prob":
        return rng.uniform(0.02, 0.98, shape)
    if domain in ("small", "shift"):
        return rng.integers(-3 if domain == "small" else 0, 4, shape).astype(np.float64)
    v = rng.standard_normal(shape) * 10.0 ** rng.integers(-1, 2, shape)
    if domain == "nonzero":
        v = np.where(np.abs(v) < 0.5, np.copysign(0.5, v) + v, v)
    return v


def make(array, dtype, layout="contiguous"):
    """A tensor with ``array``'s values (of ``dtype``) in ``layout``."""
    array = np.asarray(array).astype(dtype.numpy)
    if layout == "transposed" and array.ndim >= 2:
        perm = list(range(array.ndim))
        perm[-1], perm[-2] = perm[-2], perm[-1]
        return P.transpose(ow.tensor(np.ascontiguousarray(array.transpose(perm)), dtype=dtype), perm)
    if layout == "sliced" and array.ndim >= 1:
        big = np.repeat(array, 2, axis=-1)
        base = ow.tensor(big, dtype=dtype)
        n = array.ndim
        return P.slice(base, [0] * n, list(big.shape), [1] * (n - 1) + [2])
    if layout == "broadcast" and array.ndim >= 1 and array.size:
        first = ow.tensor(np.ascontiguousarray(array[..., :1]), dtype=dtype)
        return P.broadcast_in_dim(first, list(array.shape), list(range(array.ndim)))
    return ow.tensor(array, dtype=dtype)


def generate(rng, shape, dtype, layout="contiguous", domain="any", specials=True):
    """``(tensor, numpy values)`` for one operand (the values reflect a broadcast layout)."""
    v = values(rng, shape, dtype, domain, specials)
    t = make(v, dtype, layout)
    return t, np.array(t.numpy())


def wide(a: np.ndarray) -> np.ndarray:
    """Values widened for an oracle: float64 / complex128 / int64 / bool."""
    a = np.asarray(a)
    if a.dtype.kind == "b":
        return a
    if a.dtype.kind in "iu":
        return a.astype(np.int64)
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    return a.astype(np.float64)


# -- checks --------------------------------------------------------------------------------------


def check(actual, expected, dtype, rtol=None, atol=None, exact_zero_sign=False):
    """``actual`` (a Tensor) has ``dtype`` and ``expected``'s values (rounded to ``dtype`` first)."""
    assert actual.dtype is dtype, f"dtype {actual.dtype} != expected {dtype}"
    got = np.array(actual.numpy())
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        want = np.asarray(expected).astype(dtype.numpy)
    assert got.shape == want.shape, f"shape {got.shape} != expected {want.shape}"
    if category(dtype) <= 1:
        np.testing.assert_array_equal(got, want)
        return
    tol = RTOL[dtype] if rtol is None else max(rtol, RTOL[dtype])
    atol = tol if atol is None else atol
    got, want = wide(got), wide(want)
    if got.dtype.kind == "c":
        # NumPy compares complex infinities as whole values (-inf-0.0642j must equal -inf-0.06423328j exactly):
        # where a part is inf or nan, each part is compared on its own, the finite one within the tolerance
        special = ~(np.isfinite(got) & np.isfinite(want))
        for part in (np.real, np.imag):
            np.testing.assert_allclose(part(got[special]), part(want[special]), rtol=tol, atol=atol, equal_nan=True)
        got, want = got[~special], want[~special]
    np.testing.assert_allclose(got, want, rtol=tol, atol=atol, equal_nan=True)
    if exact_zero_sign and category(dtype) == 2:
        zeros = wide(want) == 0
        np.testing.assert_array_equal(np.signbit(wide(got))[zeros], np.signbit(wide(want))[zeros])


def meta_like(t):
    """An uninitialised meta tensor with ``t``'s shape and dtype."""
    return ow.empty(list(t.shape), dtype=t.dtype, device="meta")


def snapshot(*tensors):
    """Copies of the tensors' values (to check that inputs were not modified)."""
    return [np.array(t.numpy()) for t in tensors if isinstance(t, ow.Tensor)]


def unchanged(tensors, before):
    """Assert each tensor still holds its snapshot."""
    for t, b in zip([t for t in tensors if isinstance(t, ow.Tensor)], before):
        np.testing.assert_array_equal(wide(np.array(t.numpy())), wide(b))


def oracle_errors():
    """A context that silences NumPy's floating-point warnings inside oracles."""
    return np.errstate(all="ignore")
