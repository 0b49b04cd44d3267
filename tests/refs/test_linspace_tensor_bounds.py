"""``linspace``/``logspace`` with tensor bounds (PyTorch's Tensor_Tensor, Tensor_Scalar and Scalar_Tensor
overloads): 0-dim tensors give NumPy's values, tensors of more dims raise RuntimeError."""

from __future__ import annotations

import numpy as np
import opweave as D
import pytest
from hypothesis import given
from hypothesis import strategies as st

BOUND = st.floats(-4, 4, allow_nan=False)


@given(BOUND, BOUND, st.integers(0, 9), st.sampled_from(["tt", "ts", "st"]))
def test_zero_dim_tensor_bounds(start, end, steps, form):
    s = D.tensor(start, dtype=D.float64) if form[0] == "t" else start
    e = D.tensor(end, dtype=D.float64) if form[1] == "t" else end
    lin = D.linspace(s, e, steps, dtype=D.float64)
    np.testing.assert_allclose(lin.numpy(), np.linspace(start, end, steps), rtol=1e-12, atol=1e-12)
    log = D.logspace(s, e, steps, base=2.0, dtype=D.float64)
    np.testing.assert_allclose(log.numpy(), np.logspace(start, end, steps, base=2.0), rtol=1e-12)


@pytest.mark.parametrize("op", [D.linspace, D.logspace])
@pytest.mark.parametrize(
    "start, end", [(np.zeros(2), np.ones(2)), (np.zeros(1), 1.0), (0.0, np.ones((1, 1))), (np.zeros(()), np.ones(3))]
)
def test_bounds_of_more_dims_raise_runtime_error(op, start, end):
    s = D.tensor(start) if isinstance(start, np.ndarray) else start
    e = D.tensor(end) if isinstance(end, np.ndarray) else end
    with pytest.raises(RuntimeError, match="0-dimensional start and end"):
        op(s, e, 3)
