"""The CPU's ``prims::where`` on calls large enough for its bitwise blend, bit for bit against ``np.where``.

The blend selects raw bits, so nan payloads, -0.0 and subnormals come through unchanged; the oracle is
NumPy's ``where`` on the same arrays, compared as unsigned integers of the element's width.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import opweave as ow
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("opweave_cpu")
from opweave_cpu.kernels.elementwise_ternary import BLEND_MIN  # noqa: E402

P = ow.ops.prims
DTYPES = (np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.int8, np.int64, np.bool_, np.complex64)
SPECIALS = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 5e-324, 1e-40, -3.5])


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.itemsize <= 8 else a.view(np.uint64)


def _values(rng: np.random.Generator, shape, dtype) -> np.ndarray:
    raw = np.where(rng.random(shape) < 0.2, rng.choice(SPECIALS, shape), rng.normal(size=shape) * 100)
    if np.dtype(dtype).kind in "iub":
        return np.nan_to_num(raw, nan=0, posinf=7, neginf=-7).astype(dtype)
    return raw.astype(dtype)


@settings(max_examples=12, deadline=None)
@given(
    dtype=st.sampled_from(DTYPES),
    seed=st.integers(0, 2**32 - 1),
    layout=st.sampled_from(["same", "row-broadcast", "scalar-branch", "transposed"]),
)
def test_large_where_is_np_where_bit_for_bit(dtype, seed, layout):
    rng = np.random.default_rng(seed)
    shape = (96, 128)
    assert 96 * 128 >= BLEND_MIN  # the blend runs, not np.where itself
    c = rng.random(shape) < 0.5
    a, b = _values(rng, shape, dtype), _values(rng, shape, dtype)
    if layout == "row-broadcast":
        b = b[:1]
    elif layout == "scalar-branch":
        a = np.array(a[0, 0])
    elif layout == "transposed":
        c, a, b = c.T, a.T, np.ascontiguousarray(b.T)
    # the prim takes one shape: broadcast operands arrive as expanded (stride-0) views
    ta, tb = (ow.from_numpy(x).expand(*c.shape) for x in (a, b))
    got = P.where(ow.from_numpy(c), ta, tb).numpy()
    want = np.where(c, a, b)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(_bits(got), _bits(want))
    public = ow.where(ow.from_numpy(c), ow.from_numpy(a), ow.from_numpy(b)).numpy()  # the canonical op's kernel
    np.testing.assert_array_equal(_bits(public), _bits(want))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_where_leaves_inputs_intact(dtype):
    rng = np.random.default_rng(0)
    c = rng.random(20000) < 0.5
    a, b = _values(rng, 20000, dtype), _values(rng, 20000, dtype)
    ca, cb, cc = a.copy(), b.copy(), c.copy()
    P.where(ow.from_numpy(c), ow.from_numpy(a), ow.from_numpy(b))
    for before, after in ((ca, a), (cb, b), (cc, c)):
        np.testing.assert_array_equal(_bits(before), _bits(after))
