"""Tensor basics: metadata, storage sharing, NumPy and DLPack interop, conversions, devices."""

from __future__ import annotations

import pickle

import numpy as np
import opweave
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

NUMPY_DTYPES = [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16, np.float32, np.float64]
NUMPY_DTYPES += [np.complex64, np.complex128]


def arrays():
    """Arrays of every NumPy dtype opweave shares, 0-dim and empty included."""
    return st.sampled_from(NUMPY_DTYPES).flatmap(
        lambda dt: hnp.arrays(dt, hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
    )


@given(arrays())
def test_from_numpy_shares_memory_both_ways(array):
    t = opweave.from_numpy(array)
    assert t.shape == array.shape and t.dtype.numpy == array.dtype
    assert t.stride() == tuple(s // array.itemsize for s in array.strides)
    back = t.numpy()
    assert np.shares_memory(back, array) or array.size == 0
    if array.size:
        flat_index = (0,) * array.ndim
        array[flat_index] = array[flat_index]  # still writable
        back[flat_index] = np.ones((), array.dtype)
        assert array[flat_index] == np.ones((), array.dtype)


@given(arrays())
def test_dlpack_round_trip_is_zero_copy(array):
    t = opweave.from_dlpack(array)
    assert t.dtype.numpy == array.dtype and t.shape == array.shape
    out = np.from_dlpack(t)
    np.testing.assert_array_equal(out, array)
    if array.size:
        assert np.shares_memory(out, array)
    assert t.__dlpack_device__() == (1, 0)


def test_transposed_and_strided_numpy_views_keep_their_layout():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    view = base[::2, 1::2].T
    t = opweave.from_numpy(view)
    assert t.stride() == (2, 12) and not t.is_contiguous()
    np.testing.assert_array_equal(t.numpy(), view)
    np.testing.assert_array_equal(np.asarray(t), view)
    with pytest.raises(ValueError, match="negative strides"):
        opweave.from_numpy(base[::-1])


@given(st.lists(st.floats(allow_nan=False, width=32), min_size=1, max_size=6))
def test_tensor_copies_and_infers_dtype(values):
    t = opweave.tensor(values)
    assert t.dtype is opweave.float32
    assert t.tolist() == [float(np.float32(v)) for v in values]
    assert opweave.tensor([1, 2]).dtype is opweave.int64
    assert opweave.tensor([True]).dtype is opweave.bool
    assert opweave.tensor([1j]).dtype is opweave.complex64
    array = np.array(values, np.float64)
    t64 = opweave.tensor(array)
    array[0] = 123.0
    assert t64.tolist()[0] == values[0], "tensor() copies"


def test_tensor_rejects_bad_data():
    with pytest.raises(ValueError, match="ragged"):
        opweave.tensor([[1, 2], [3]])
    with pytest.raises(TypeError):
        opweave.tensor("abc")
    with pytest.raises(TypeError, match="dtype"):
        opweave.tensor([1], dtype="float32")


def test_scalar_conversions_and_python_protocols():
    t = opweave.tensor([[1.5, 2.0], [3.0, 4.0]])
    assert len(t) == 2
    rows = list(t)
    assert [r.tolist() for r in rows] == [[1.5, 2.0], [3.0, 4.0]]
    one = opweave.tensor(2.5)
    assert float(one) == 2.5 and int(one) == 2 and bool(one) and one.item() == 2.5
    assert complex(opweave.tensor(1 + 2j)) == 1 + 2j
    assert [0, 1, 2][opweave.tensor(1)] == 1
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(t)
    with pytest.raises(ValueError, match="only one-element"):
        float(t)
    with pytest.raises(TypeError, match="0-d"):
        len(one)
    assert opweave.tensor(True).item() is True
    assert isinstance(opweave.tensor(3).item(), int)


def test_to_changes_dtype_and_device_and_keeps_identity_when_nothing_changes():
    t = opweave.tensor([1.7, -2.2])
    assert t.to(opweave.float32) is t
    assert t.to("cpu") is t
    assert t.to(opweave.int32).tolist() == [1, -2]
    m = t.to("meta")
    assert m.device == opweave.device("meta") and m.shape == t.shape
    assert t.to(device="cpu", dtype=opweave.float64).dtype is opweave.float64
    c = t.to(opweave.float32, copy=True)
    assert c is not t and c.tolist() == t.tolist()
    with pytest.raises(RuntimeError, match="meta"):
        m.tolist()


def test_every_dtype_round_trips_through_numpy():
    for dt in opweave.ALL_DTYPES:
        array = np.arange(6).reshape(2, 3).astype(dt.numpy)
        t = opweave.tensor(array, dtype=dt)
        assert t.dtype is dt and t.element_size() == dt.itemsize
        as_wide = np.complex128 if dt.is_complex else np.float64
        np.testing.assert_array_equal(t.numpy().astype(as_wide), array.astype(as_wide))


def test_pickle_round_trip():
    t = opweave.tensor([[1, 2], [3, 4]], dtype=opweave.int16)
    u = pickle.loads(pickle.dumps(t))
    assert u.dtype is opweave.int16 and u.tolist() == t.tolist()


def test_size_and_metadata():
    t = opweave.tensor(np.zeros((2, 3, 4), np.float32))
    assert repr(t.shape) == "opweave.Size([2, 3, 4])"
    assert t.size() == (2, 3, 4) and t.size(-1) == 4 and t.stride(0) == 12
    assert t.ndim == t.dim() == 3 and t.numel() == 24 and t.nbytes == 96
    assert t.is_contiguous() and t.storage_offset() == 0 and t.get_device() == -1
    assert t.untyped_storage().nbytes == 96
    with pytest.raises(IndexError, match="dimension out of range"):
        t.size(3)


def test_devices_parse_and_compare():
    assert opweave.device("opencl:1") == opweave.device("opencl", 1)
    assert opweave.device("opencl:1") != opweave.device("opencl")
    assert opweave.device("cpu") == "cpu"
    assert str(opweave.device("cuda:0")) == "cuda:0"
    assert repr(opweave.device("cuda", 0)) == "device(type='cuda', index=0)"
    assert hash(opweave.device("cpu")) == hash(opweave.device("cpu"))
    for bad in ("cuda:x", "", "a:b:c", "cuda:-1"):
        with pytest.raises(ValueError):
            opweave.device(bad)
    with pytest.raises(TypeError):
        opweave.device(3)
    opweave.set_default_device("meta")
    try:
        assert opweave.get_default_device() == "meta"
    finally:
        opweave.set_default_device(None)
    assert opweave.get_default_device() == "cpu"


def test_status_lists_cpu_and_meta():
    rows = {row.name: row for row in opweave.backends.status()}
    assert rows["cpu"].available and rows["cpu"].devices == 1 and rows["cpu"].plugin == "opweave_cpu"
    assert rows["meta"].available and rows["meta"].plugin == "core"
    assert "cpu" in str(opweave.backends.status())


def test_real_and_imag_are_settable_view_properties_as_in_pytorch():
    z = np.array([1 + 2j, -3.5 - 0.25j], np.complex64)
    t = opweave.tensor(z)
    assert t.real.tolist() == z.real.tolist() and t.imag.tolist() == z.imag.tolist()
    t.real = opweave.tensor([5.0, 6.0])
    t.imag = 0.5
    assert t.tolist() == [5 + 0.5j, 6 + 0.5j]
    t.real[0] = -1.0  # a view: writing through it writes the tensor
    assert t.tolist()[0] == -1 + 0.5j
    r = opweave.tensor([1.0, 2.0])
    assert r.real.data_ptr() == r.data_ptr()
    with pytest.raises(RuntimeError, match="imag"):
        _ = r.imag


@pytest.mark.parametrize("device", ["cpu", "vnpu", "opencl", "ccpu"])  # the installed devices that hold data
def test_zero_dim_data_stays_zero_dim_on_every_device(device):
    if not opweave.backends.is_available(device):
        pytest.skip(f"no {device} device here")
    for data in (np.zeros((), np.int32), np.float64(2.5), 3, True):
        t = opweave.tensor(data, device=device)
        assert t.shape == () and t.cpu().numpy().shape == ()
        assert t.item() == np.asarray(data).item()
