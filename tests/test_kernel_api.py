"""``opweave.backends.kernel``: allocation from meta functions, wrapping memory, reading buffers, quantized views."""

from __future__ import annotations

import numpy as np
import opweave
import pytest
from hypothesis import given
from hypothesis import strategies as st
from opweave import ops
from opweave.backends import kernel as K


@given(st.lists(st.integers(0, 4), min_size=0, max_size=3), st.booleans())
def test_allocate_outputs_follows_the_meta_function(shape, transpose):
    x = opweave.zeros(shape, dtype=opweave.float32)
    if transpose and x.ndim >= 2:
        x = x.mT
    out = K.allocate_outputs(ops.prims.add.default, x, x)
    meta = ops.prims.add.default.meta(x, x)
    assert tuple(out.shape) == tuple(meta.shape) and out.stride() == meta.stride() and out.dtype is meta.dtype
    assert out.device == x.device and K.buffer(out) is not K.buffer(x)


def test_allocate_outputs_of_a_multi_output_prim_and_errors():
    x = opweave.tensor([[3.0, 1.0], [2.0, 5.0]])
    values, indices = K.allocate_outputs(ops.prims.sort.default, x, -1, False, False)
    assert values.dtype is opweave.float32 and indices.dtype is opweave.int64 and tuple(values.shape) == (2, 2)
    with pytest.raises(ValueError, match="no meta function"):
        K.allocate_outputs(ops.add.Tensor, x, x)
    with pytest.raises(ValueError, match="pass device="):
        K.allocate_outputs(ops.prims.full.default, [2], 1.0, opweave.float32, opweave.device("cpu"))


def test_wrap_handle_views_existing_memory():
    data = np.arange(12, dtype=np.float32)
    raw = data.view(np.uint8).copy()
    t = K.wrap_handle(raw, raw.nbytes, (3, 2), (4, 1), 1, dtype=opweave.float32, device=opweave.device("cpu"))
    expected = np.lib.stride_tricks.as_strided(data[1:], (3, 2), (16, 4))
    np.testing.assert_array_equal(t.numpy(), expected)
    assert K.buffer(t) is raw and K.strides(t) == (4, 1) and K.storage_offset(t) == 1 and K.nbytes(t) == 48


def test_reading_a_view():
    base = opweave.arange(24, dtype=opweave.float64).reshape(4, 6)
    v = base[1:, ::2]
    assert K.strides(v) == (6, 2) and K.storage_offset(v) == 6 and K.nbytes(v) == 24 * 8
    assert K.storage(v) is K.storage(base)
    arr = np.ndarray(tuple(v.shape), np.float64, K.buffer(v), K.storage_offset(v) * 8, (48, 16))
    np.testing.assert_array_equal(arr, np.arange(24.0).reshape(4, 6)[1:, ::2])


def test_wrap_storage_defaults_to_contiguous_strides():
    storage = K.storage(opweave.zeros(6))
    t = K.wrap_storage(storage, (2, 3), dtype=opweave.float32)
    assert t.stride() == (3, 1) and K.storage(t) is storage


def test_native_wrapper_makes_storage_lazily():
    wrap = K.native_wrapper(opweave.device("cpu"))
    a = np.arange(6.0).reshape(2, 3).T  # a permuted dense array
    t = wrap(a, opweave.float64)
    assert K.cached_native(t) is a
    assert t.stride() == (1, 3)
    np.testing.assert_array_equal(t.numpy(), a)
    assert K.nbytes(t) == 48


def test_quantized_helpers_roundtrip():
    q = opweave.quantize_per_tensor(opweave.tensor([0.0, 0.5, 1.0]), 0.5, 2, opweave.quint8)
    ints = K.int_view(q)
    np.testing.assert_array_equal(ints.numpy(), np.array([2, 3, 4], np.uint8))
    qp = K.qparams(q)
    assert qp.scale == 0.5 and qp.zero_point == 2 and K.qparams(ints) is None
    again = K.make_quantized(ints, qp, opweave.quint8)
    np.testing.assert_array_equal(again.dequantize().numpy(), np.array([0.0, 0.5, 1.0], np.float32))
    assert K.qrange(opweave.qint8) == (-128, 127)


def test_same_kind_binary_declines_what_it_does_not_handle():
    calls = []

    def compute(a, b):
        calls.append(1)
        return np.add(a, b)

    kernel = K.same_kind_binary(
        compute, frozenset({opweave.float32}), K.native_wrapper(opweave.device("cpu")), np.asarray
    )
    x = opweave.tensor([1.0, 2.0])
    np.testing.assert_array_equal(kernel(x, x).numpy(), np.array([2.0, 4.0], np.float32))
    with pytest.raises(K.Decline, match="alpha"):
        kernel(x, x, 2)
    with pytest.raises(K.Decline):
        kernel(x, x.to(opweave.float64))
    assert calls == [1]
