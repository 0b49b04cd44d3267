"""Bool ``addr`` (logical, as PyTorch) and ``linalg.vander`` of a 0-d tensor (one point)."""

from __future__ import annotations

import itertools

import numpy as np
import opweave as ow
import pytest
from hypothesis import given
from hypothesis import strategies as st


@given(
    st.lists(st.booleans(), min_size=0, max_size=4),
    st.lists(st.booleans(), min_size=0, max_size=4),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_bool_addr_is_logical(v1, v2, beta, alpha, row_self):
    rng = np.random.default_rng(len(v1) * 7 + len(v2))
    shape = (1, len(v2)) if row_self else (len(v1), len(v2))
    s = rng.integers(0, 2, shape).astype(bool)
    a, b = np.array(v1, bool), np.array(v2, bool)
    want = (beta & s) | (alpha & np.outer(a, b))
    got = ow.addr(ow.tensor(s), ow.tensor(a), ow.tensor(b), beta=beta, alpha=alpha)
    assert got.dtype == ow.bool and tuple(got.shape) == want.shape
    np.testing.assert_array_equal(got.numpy(), np.broadcast_to(want, (len(v1), len(v2))))


def test_bool_addr_checks_the_shape_of_self():
    v = ow.tensor([True, False])
    with pytest.raises(ValueError, match="addr"):
        ow.addr(ow.ones(3, 3, dtype=ow.bool), v, v)


@pytest.mark.parametrize(("value", "n"), list(itertools.product([2.0, -1.5, 0.0], [2, 3, 5])))
def test_vander_of_a_0d_tensor_is_one_row(value, n):
    got = ow.linalg.vander(ow.tensor(value, dtype=ow.float64), N=n)
    np.testing.assert_allclose(got.numpy(), np.vander([value], n, increasing=True))
