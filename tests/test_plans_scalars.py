"""Plans and Python scalars: ``x * lr`` with a new ``lr`` each step keeps the plan tables bounded and is right.

A wrapped Python scalar is part of a plan's signature by value (``docs/plans.md`` says why: the
decomposition converts it in Python and the plan keeps the converted, broadcast constant). A value met
once is not recorded, and an op keeps at most ``MAX_PLANS`` signatures per key set, so a loop over
many values makes a bounded number of plans; the results are NumPy's.
"""

from __future__ import annotations

import numpy as np
import opweave
from hypothesis import given, settings
from hypothesis import strategies as st
from opweave import _plans, ops


def _plans_in_all_tables(op) -> int:
    return sum(len(planned.plans) for planned in _plans.planned_of(op))


@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_a_thousand_float_scalars_make_a_bounded_number_of_plans(seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(8).astype(np.float16)  # float16: no direct kernel, the decomposition is planned
    t = opweave.tensor(x)
    values = rng.uniform(-1e-2, 1e-2, 1000)
    before = _plans_in_all_tables(ops.mul.Tensor)
    for k, lr in enumerate(values):
        lr = float(lr)
        got = (t * lr).numpy()
        # PyTorch: float16 * Python float computes in float32 and rounds to float16
        want = (x.astype(np.float32) * np.float32(lr)).astype(np.float16)
        np.testing.assert_array_equal(got, want, err_msg=f"step {k}, lr={lr!r}")
    assert _plans_in_all_tables(ops.mul.Tensor) - before <= _plans.MAX_PLANS


@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_repeated_int_and_float_scalars_stay_within_max_plans(seed):
    rng = np.random.default_rng(seed)
    xi = rng.integers(-1000, 1000, 6).astype(np.int32)
    xf = rng.standard_normal((2, 3)).astype(np.float16)
    ti, tf = opweave.tensor(xi), opweave.tensor(xf)
    ints = [int(v) for v in rng.integers(-(2**20), 2**20, 100)]
    floats = [float(v) for v in rng.uniform(-4, 4, 100)]
    for _ in range(3):  # each value met three times: every signature would be worth a plan
        for n, f in zip(ints, floats):
            np.testing.assert_array_equal((ti + n).numpy(), (xi.astype(np.int64) + n).astype(np.int32))
            np.testing.assert_array_equal((tf - f).numpy(), (xf.astype(np.float32) - np.float32(f)).astype(np.float16))
    for op in (ops.add.Tensor, ops.sub.Tensor):
        for planned in _plans.planned_of(op):
            assert len(planned.plans) <= _plans.MAX_PLANS
            assert len(planned.seen) <= _plans.SEEN_LIMIT
