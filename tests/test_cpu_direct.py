"""The CPU backend's direct kernels for hot canonical ops agree with the ops' decompositions.

The direct kernel is what a call dispatches to on the CPU; ``op.decomposition`` is
the reference written in prims. Both run on the same inputs and must match bit for
bit (both compute in the inputs' dtype), including on broadcast, transposed and
special-valued inputs where the direct kernel hands over to the decomposition.
"""

from __future__ import annotations

import numpy as np
import opweave
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from opweave import ops

DTYPES = [np.float32, np.float64, np.int32, np.float16]


def values(dtype, shape):
    """Arrays with special values for floating dtypes."""
    if np.issubdtype(dtype, np.floating):
        elements = st.floats(allow_nan=True, allow_infinity=True, width=16 if dtype == np.float16 else 32)
    else:
        elements = st.integers(-1000, 1000)
    return hnp.arrays(dtype, shape, elements=elements)


def same(a, b):
    """Bitwise equality of two tensors (NaN-aware), with equal dtype and shape."""
    assert a.dtype is b.dtype and a.shape == b.shape
    assert np.ascontiguousarray(a.numpy()).tobytes() == np.ascontiguousarray(b.numpy()).tobytes()


@given(st.sampled_from(DTYPES), hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4), st.data())
def test_binary_direct_kernels_match_decomposition(dtype, shapes, data):
    left = data.draw(values(dtype, shapes.input_shapes[0]))
    right = data.draw(values(dtype, shapes.input_shapes[1]))
    a, b = opweave.tensor(left), opweave.tensor(right)
    if data.draw(st.booleans()) and a.ndim >= 2:
        a = a.mT.contiguous().mT  # same values, transposed layout
    with np.errstate(all="ignore"):
        for op, rest in ((ops.add.Tensor, (1,)), (ops.sub.Tensor, (1,)), (ops.mul.Tensor, ())):
            same(op(a, b), op.decomposition(a, b, *rest))


@given(st.sampled_from(DTYPES[:2]), hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5), st.data())
def test_sum_direct_kernel_matches_decomposition(dtype, shape, data):
    a = opweave.tensor(data.draw(values(dtype, shape)))
    with np.errstate(all="ignore"):
        same(ops.sum.default(a), ops.sum.default.decomposition(a, None))


@given(st.sampled_from(DTYPES[:2]), st.integers(0, 4), st.integers(0, 4), st.integers(0, 4), st.data())
def test_matmul_direct_kernel_matches_decomposition(dtype, m, k, n, data):
    a = opweave.tensor(data.draw(hnp.arrays(dtype, (m, k), elements=st.floats(-8, 8, width=32))))
    b = opweave.tensor(data.draw(hnp.arrays(dtype, (k, n), elements=st.floats(-8, 8, width=32))))
    np.testing.assert_allclose(
        ops.matmul.default(a, b).numpy(), ops.matmul.default.decomposition(a, b).numpy(), rtol=1e-6, atol=1e-6
    )


def test_direct_kernels_are_what_the_cpu_dispatches_to():
    a = opweave.tensor([1.0])
    for op in (ops.add.Tensor, ops.sub.Tensor, ops.mul.Tensor):
        assert opweave.dispatch.explain(op, a, a).reasons[-1] == "Dense×cpu: kernel from cpu"
