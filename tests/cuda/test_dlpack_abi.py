"""The DLPack capsules of the CUDA plugin, checked against NumPy's DLPack on host memory (no GPU needed).

Export and import are the same code for CUDA and host pointers (only the device tuple
differs), so NumPy consuming our capsules and producing capsules we read checks the
structures, the capsule names, the versioned and legacy forms and the deleters.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from opweave_cuda import _dlpack


class _Producer:
    def __init__(self, array, versioned):
        self.array, self.versioned = array, versioned

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        a = self.array
        strides = tuple(s // a.itemsize for s in a.strides)
        versioned = self.versioned and max_version is not None and max_version[0] >= 1
        return _dlpack.export(a, a.ctypes.data, (1, 0), a.shape, strides, a.dtype.name, versioned)

    def __dlpack_device__(self):
        return (1, 0)


DTYPES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]


@given(
    dtype=st.sampled_from(DTYPES),
    shape=st.lists(st.integers(0, 5), min_size=0, max_size=3),
    versioned=st.booleans(),
    flip=st.booleans(),
)
def test_numpy_reads_exported_capsules_zero_copy_and_releases_them(dtype, shape, versioned, flip):
    base = (np.arange(int(np.prod(shape)) if shape else 1) % 7).astype(dtype).reshape(shape)
    view = base[::-1] if flip and base.ndim else base.T  # negative and transposed strides
    before = _dlpack.live_exports()
    got = np.from_dlpack(_Producer(view, versioned))
    np.testing.assert_array_equal(got, view)
    if view.size:
        assert got.__array_interface__["data"][0] == view.__array_interface__["data"][0]  # the same memory
    assert _dlpack.live_exports() == before + 1
    del got
    gc.collect()
    assert _dlpack.live_exports() == before  # NumPy called our deleter


def test_an_unconsumed_capsule_releases_its_tensor_when_collected():
    before = _dlpack.live_exports()
    a = np.arange(4.0)
    capsule = _Producer(a, True).__dlpack__(max_version=(1, 0))
    assert _dlpack.live_exports() == before + 1
    del capsule
    gc.collect()
    assert _dlpack.live_exports() == before


@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_numpy_capsules_are_read_and_their_deleter_called_once(max_version):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]
    kwargs = {} if max_version is None else {"max_version": max_version}
    capsule = a.__dlpack__(**kwargs)
    imported = _dlpack.Imported(capsule)
    assert imported.dtype == "float32" and imported.shape == (3, 2) and imported.strides == (4, 2)
    assert imported.data == a.ctypes.data and imported.device == (1, 0)
    with pytest.raises(BufferError, match="not an unconsumed"):
        _dlpack.Imported(capsule)  # renamed "used_..." on import
    assert imported.span(4) == (0, (2 * 4 + 1 * 2 + 1) * 4)
    imported.release()
    imported.release()


def test_negative_strides_span_below_the_data_pointer():
    a = np.arange(10, dtype=np.int64)[::-1]
    imported = _dlpack.Imported(a.__dlpack__())
    assert imported.strides == (-1,)
    assert imported.span(8) == (-9, 80)
    imported.release()
