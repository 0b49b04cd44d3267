"""Single-precision ``linalg.matrix_exp`` is the double-precision exponential rounded once."""

from __future__ import annotations

import numpy as np
import opweave as ow
import scipy.linalg
from hypothesis import given
from hypothesis import strategies as st


@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.floats(0.01, 8.0), st.booleans())
def test_float32_matrix_exp_is_the_double_result_rounded(seed, n, scale, complex_input):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (2, n, n)) * scale
    if complex_input:
        a = a + 1j * rng.uniform(-1, 1, (2, n, n)) * scale
    single = a.astype(np.complex64 if complex_input else np.float32)
    got = ow.linalg.matrix_exp(ow.tensor(single)).numpy()
    want = scipy.linalg.expm(single.astype(np.complex128 if complex_input else np.float64))
    assert got.dtype == single.dtype
    eps = np.finfo(np.float32).eps
    # rounding each entry once: within one float32 ulp of the largest entry of its matrix
    bound = 2 * eps * np.abs(want).max(axis=(-2, -1), keepdims=True)
    assert (np.abs(got - want) <= bound).all()
