"""The direct indexing paths (``opweave._fastpaths``): ``t[i:j]``, ``t[mask]``, ``t[index]`` on the CPU.

Values, shapes and views are checked against NumPy's indexing of the same array; the cases the
direct paths leave to the general one (autograd, modes, out-of-range indices) keep its behaviour.
"""

from __future__ import annotations

import types

import numpy as np
import opweave
import pytest
from host_memory import HostMemory, new, view
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from opweave import _fastpaths
from opweave.dispatch import registered

DTYPES = [np.float32, np.float64, np.int64, np.bool_, np.float16]


def arrays():
    return st.sampled_from(DTYPES).flatmap(
        lambda dtype: hnp.arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5))
    )


def tensor_of(array: np.ndarray, transposed: bool) -> opweave.Tensor:
    """``array`` as a tensor, optionally laid out transposed (same values, other strides)."""
    t = opweave.tensor(array)
    if transposed and t.ndim >= 2:
        t = t.mT.contiguous().mT
    return t


@given(
    arrays(),
    st.integers(-7, 7) | st.none(),
    st.integers(-7, 7) | st.none(),
    st.integers(1, 3) | st.none(),
    st.booleans(),
)
def test_slice_is_a_view_like_numpy(array, start, stop, step, transposed):
    t = tensor_of(array, transposed)
    s = slice(start, stop, step)
    got = t[s]
    expected = array[s]
    assert got.shape == expected.shape and got.dtype == t.dtype
    np.testing.assert_array_equal(got.numpy(), expected)
    if got.numel():  # a view: writing through it changes the tensor
        got.fill_(1)
        changed = array.copy()
        changed[s] = 1
        np.testing.assert_array_equal(t.numpy(), changed)
        assert got._base is (t if t._base is None else t._base)


@given(arrays(), st.data(), st.booleans())
def test_mask_and_index_tensor_like_numpy(array, data, transposed):
    t = tensor_of(array, transposed)
    lead = data.draw(st.integers(1, array.ndim))
    mask = data.draw(hnp.arrays(np.bool_, array.shape[:lead]))
    got = t[opweave.tensor(mask)]
    np.testing.assert_array_equal(got.numpy(), array[mask])
    assert got.dtype == t.dtype
    size = array.shape[0]
    index_dtype = data.draw(st.sampled_from([np.int64, np.int32]))
    index = data.draw(
        hnp.arrays(
            index_dtype,
            hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4),
            elements=st.integers(-size, size - 1) if size else st.just(0),
        )
    )
    if size == 0 and index.size:
        return
    got = t[opweave.tensor(index)]
    np.testing.assert_array_equal(got.numpy(), array[index])
    if got.numel():  # a copy: writing to it leaves the tensor alone
        before = t.numpy().copy()
        got.fill_(0)
        np.testing.assert_array_equal(t.numpy(), before)


def test_out_of_range_index_raises_the_general_error():
    t = opweave.arange(4.0)
    with pytest.raises(IndexError, match="out of bounds"):
        t[opweave.tensor([4])]
    with pytest.raises(IndexError, match="shape of the mask"):
        t[opweave.tensor([True, False])]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        t[::-1]


def test_tensors_with_autograd_and_modes_take_the_general_path():
    t = opweave.arange(4.0, requires_grad=True)
    mask = opweave.tensor([True, False, True, True])
    assert _fastpaths.getitem(t, mask) is None
    (t[mask] * 2).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), [2.0, 0.0, 2.0, 2.0])
    plain = opweave.arange(4.0)
    assert _fastpaths.getitem(plain, mask) is not None
    with opweave.inference_mode():
        assert _fastpaths.getitem(plain, mask) is None
    with opweave.profiler.profile() as prof:
        plain[mask]
    assert any("nonzero" in e.name for e in prof.events())


def test_a_registered_index_kernel_turns_the_direct_path_off():
    t = opweave.arange(5.0)
    idx = opweave.tensor([4, 0])
    seen = []

    def spy(a, indices):
        seen.append(len(indices))
        return opweave.tensor(np.take(a.numpy(), indices[0].numpy(), axis=0))

    with registered(opweave.ops.prims.index.default, spy, backend="cpu"):
        assert _fastpaths.getitem(t, idx) is None
        np.testing.assert_array_equal(t[idx].numpy(), [4.0, 0.0])
    assert seen == [1]
    assert _fastpaths.getitem(t, idx) is not None  # removed: the direct path again


class _HostStore(HostMemory):
    """A vendor-style device whose storage is host bytes NumPy reads with the tensor's strides."""

    host_storage = True

    def host_view(self, tensor):
        """The tensor's elements over its bytes (shares memory)."""
        return view(tensor)


HOST_STORE, BYTE_STORE = _HostStore("fasthoststore"), HostMemory("fastbytestore")


@pytest.fixture(scope="module")
def host_backends():
    plugin = types.ModuleType("fast_host_plugin")

    @opweave.hookimpl
    def opweave_register(registry):
        registry.backend(HOST_STORE)
        registry.backend(BYTE_STORE)

    plugin.opweave_register = opweave_register
    opweave.backends.register_plugin(plugin, name="fast_host_plugin")
    return HOST_STORE, BYTE_STORE


def test_a_backend_declaring_host_storage_gets_the_direct_paths(host_backends):
    host, _ = host_backends
    values = np.arange(12.0).reshape(4, 3)
    t = new(host, values)
    mask, index = new(host, np.array([True, False, True, True])), new(host, np.array([3, 0, 3]))
    for idx, want in [(slice(1, 4, 2), values[1:4:2]), (mask, values[[0, 2, 3]]), (index, values[[3, 0, 3]])]:
        got = _fastpaths.getitem(t, idx)
        assert got is not None and got.device == t.device and got.dtype == opweave.float64
        np.testing.assert_array_equal(view(got), want)
    assert _fastpaths.getitem(t, slice(1, 3))._storage is t._storage
    assert _fastpaths.getitem(t, opweave.tensor([0])) is None  # an index on another device: the general path


def test_a_backend_without_host_storage_keeps_the_general_path(host_backends):
    _, other = host_backends
    t = new(other, np.arange(6.0))
    assert _fastpaths.getitem(t, slice(1, 3)) is None
    assert _fastpaths.getitem(t, new(other, np.array([1]))) is None
