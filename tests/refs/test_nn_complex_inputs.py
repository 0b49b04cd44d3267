"""Complex inputs of ``pairwise_distance`` (a real distance) and ``rms_norm`` (PyTorch's complex formula)."""

from __future__ import annotations

import numpy as np
import opweave as ow
from hypothesis import given
from hypothesis import strategies as st
from opweave.nn import functional as F


def _complex(rng, shape, dtype):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


@given(st.integers(0, 2**32 - 1), st.sampled_from([(3,), (2, 4), (2, 1, 3)]), st.sampled_from([1, 2, 3]))
def test_complex_pairwise_distance_is_the_norm_of_the_difference(seed, shape, p):
    rng = np.random.default_rng(seed)
    a, b = _complex(rng, shape, np.complex128), _complex(rng, shape, np.complex128)
    got = F.pairwise_distance(ow.tensor(a), ow.tensor(b), p=p)
    want = (np.abs(a - b + 1e-6) ** p).sum(-1) ** (1 / p)
    assert got.dtype == ow.float64
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    single = F.pairwise_distance(ow.tensor(a.astype(np.complex64)), ow.tensor(b.astype(np.complex64)), p=p)
    assert single.dtype == ow.float32


@given(st.integers(0, 2**32 - 1), st.sampled_from([(3,), (2, 4), (2, 3, 2)]), st.booleans())
def test_complex_rms_norm_uses_the_complex_square(seed, shape, weighted):
    rng = np.random.default_rng(seed)
    x = _complex(rng, shape, np.complex128)
    w = _complex(rng, shape[-1:], np.complex128) if weighted else None
    eps = float(np.finfo(np.float64).eps)
    want = x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)  # principal square roots, as PyTorch
    if weighted:
        want = want * w
    got = F.rms_norm(ow.tensor(x), shape[-1:], None if w is None else ow.tensor(w))
    assert got.dtype == ow.complex128
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-9, atol=1e-12)
