"""``Tensor.new_tensor``: a copy of ``data`` with this tensor's dtype and device unless told otherwise.

PyTorch's documented behaviour: dtype and device default to ``self``'s, the result never shares memory with
``data``, it is a leaf (``requires_grad`` as asked), and a tensor ``data`` is copied with a ``UserWarning``.
Values are compared with NumPy's cast of the same data.
"""

from __future__ import annotations

import warnings

import numpy as np
import opweave
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

DTYPES = [opweave.float32, opweave.float64, opweave.int64, opweave.int32, opweave.bool, opweave.complex64]
SOURCE_DTYPES = [np.float64, np.float32, np.int64, np.int16, np.bool_]


def cast(values, dtype: opweave.dtype) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        return np.asarray(values).astype(dtype.numpy)


@given(
    st.sampled_from(DTYPES),
    st.sampled_from(SOURCE_DTYPES).flatmap(
        lambda dt: hnp.arrays(
            dt,
            hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
            elements={"min_value": -50, "max_value": 50} if dt is not np.bool_ else None,
        )
    ),
)
def test_numpy_data_takes_self_dtype_and_is_a_copy(self_dtype, array):
    self = opweave.zeros(2, dtype=self_dtype)
    got = self.new_tensor(array)
    assert got.dtype == self_dtype and got.device == self.device and tuple(got.shape) == array.shape
    np.testing.assert_array_equal(got.numpy(), cast(array, self_dtype))
    if array.size:
        before = got.numpy().copy()
        array.flat[0] = not array.flat[0] if array.dtype == np.bool_ else array.flat[0] + 1
        np.testing.assert_array_equal(got.numpy(), before)  # never shares memory with data


def test_nested_lists_and_scalars():
    self = opweave.ones(3, dtype=opweave.float64)
    nested = [[1, 2, 3], [4, 5, 6]]
    got = self.new_tensor(nested)
    assert got.dtype == opweave.float64 and got.shape == (2, 3)
    np.testing.assert_array_equal(got.numpy(), np.array(nested, dtype=np.float64))
    for scalar in (3, 2.5, True):
        s = self.new_tensor(scalar)
        assert s.shape == () and s.dtype == opweave.float64 and s.item() == float(scalar)
    ints = opweave.zeros(1, dtype=opweave.int32).new_tensor([1.75, -2.5])
    assert ints.dtype == opweave.int32
    np.testing.assert_array_equal(ints.numpy(), np.array([1.75, -2.5]).astype(np.int32))


def test_dtype_device_and_requires_grad_arguments():
    self = opweave.zeros(2, dtype=opweave.float32)
    got = self.new_tensor([1, 2], dtype=opweave.int64)
    assert got.dtype == opweave.int64
    np.testing.assert_array_equal(got.numpy(), [1, 2])
    assert self.new_tensor([1.0], device="meta").device.type == "meta"
    leaf = self.new_tensor([1.0, 2.0], requires_grad=True)
    assert leaf.requires_grad and leaf.is_leaf and leaf.grad_fn is None
    (leaf * 3).sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), [3.0, 3.0])
    plain = self.new_tensor([1.0])
    assert not plain.requires_grad and plain.is_leaf
    assert self.new_tensor([1.0], layout=opweave.strided).shape == (1,)
    with pytest.raises(NotImplementedError, match="new_tensor"):
        self.new_tensor([1.0], layout="sparse_coo")
    with pytest.raises(TypeError, match="dtype"):
        self.new_tensor([1.0], dtype="float32")
    with pytest.raises(TypeError):
        self.new_tensor([1.0], opweave.float64)  # dtype is keyword-only


def test_tensor_data_is_copied_detached_with_a_warning():
    self = opweave.zeros(1, dtype=opweave.float64)
    source = opweave.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3), requires_grad=True)
    view = source.detach().t()  # non-contiguous
    with pytest.warns(UserWarning, match=r"sourceTensor\.detach\(\)\.clone\(\)"):
        got = self.new_tensor(source)
    assert got.dtype == opweave.float64 and not got.requires_grad and got.is_leaf and got.grad_fn is None
    np.testing.assert_array_equal(got.numpy(), np.arange(6.0).reshape(2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        t = self.new_tensor(view)
    np.testing.assert_array_equal(t.numpy(), np.arange(6.0).reshape(2, 3).T)
    t.add_(1)
    np.testing.assert_array_equal(view.numpy(), np.arange(6.0).reshape(2, 3).T)  # never shares memory
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning for non-tensor data
        self.new_tensor([1.0])
