"""``opweave.safetensors`` (and ``opweave.serialization.save_file`` / ``load_file``) through the safetensors package."""

from __future__ import annotations

import numpy as np
import opweave as ow
import pytest
import safetensors
import safetensors.numpy
from hypothesis import given
from hypothesis import strategies as st
from serialization_support import DATA_DEVICES, raw_bytes, tensors

SAVABLE = [d for d in ow.safetensors.DTYPE_OF_CODE.values()]


def _same(loaded: dict, original: dict, device="cpu"):
    assert sorted(loaded) == sorted(original)  # safetensors orders a file's tensors itself
    for k, t in original.items():
        assert loaded[k].dtype is t.dtype and tuple(loaded[k].shape) == tuple(t.shape), k
        assert loaded[k].is_contiguous() and loaded[k].device.type == device, k
        assert raw_bytes(loaded[k]) == raw_bytes(t), k


@given(data=st.data())
def test_file_roundtrip_every_dtype_bit_exact(tmp_path_factory, data):
    obj = {f"t{i}_{d.name}": data.draw(tensors(d)) for i, d in enumerate(data.draw(st.lists(st.sampled_from(SAVABLE))))}
    path = tmp_path_factory.mktemp("st") / "x.safetensors"
    ow.safetensors.save_file(obj, path, metadata={"format": "pt", "note": "é"})
    _same(ow.safetensors.load_file(path), obj)
    assert ow.safetensors.load_metadata(path) == {"format": "pt", "note": "é"}
    _same(ow.safetensors.load(ow.safetensors.save(obj)), obj)


def test_serialization_namespace_exports_the_file_functions(tmp_path):
    obj = {"w": ow.arange(6.0).reshape(2, 3).mT, "b": ow.tensor([True, False])}
    ow.serialization.save_file(obj, tmp_path / "m.safetensors")
    _same(ow.serialization.load_file(tmp_path / "m.safetensors"), obj)
    assert ow.safetensors.load_metadata(tmp_path / "m.safetensors") is None


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_load_onto_a_device(tmp_path, device):
    obj = {"w": ow.arange(6.0).reshape(2, 3), "i": ow.tensor([1, 2], dtype=ow.int16)}
    ow.safetensors.save_file(obj, tmp_path / "m.safetensors")
    _same(ow.safetensors.load_file(tmp_path / "m.safetensors", device=device), obj, device)
    _same(ow.safetensors.load(ow.safetensors.save(obj), device=device), obj, device)
    moved = {k: v.to(device) for k, v in obj.items()}
    _same(ow.safetensors.load(ow.safetensors.save(moved)), obj)


def test_files_of_the_safetensors_package_and_back(tmp_path):
    arrays = {"f": np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3), "i": np.array([-5, 7], np.int64)}
    safetensors.numpy.save_file(arrays, tmp_path / "np.safetensors", metadata={"k": "v"})
    loaded = ow.safetensors.load_file(tmp_path / "np.safetensors")
    for k, a in arrays.items():
        np.testing.assert_array_equal(loaded[k].numpy(), a)
    ow.safetensors.save_file(
        {"bf": ow.tensor([1.5, -2.0]).to(ow.bfloat16), "f8": ow.tensor([0.5]).to(ow.float8_e4m3fn)},
        tmp_path / "ow.safetensors",
    )
    with safetensors.safe_open(tmp_path / "ow.safetensors", framework="np") as f:
        assert f.get_slice("bf").get_dtype() == "BF16" and f.get_slice("f8").get_dtype() == "F8_E4M3"
    data = ow.safetensors.save({"x": ow.tensor([1.0, 2.0, 3.0])})
    np.testing.assert_array_equal(safetensors.numpy.load(data)["x"], np.array([1.0, 2.0, 3.0], np.float32))


@pytest.mark.parametrize(
    "value",
    [
        ow.tensor([1j], dtype=ow.complex128),
        ow.quantize_per_tensor(ow.tensor([1.0]), 0.1, 0, ow.qint8),
        ow.empty(2, device="meta"),
        np.zeros(2),
    ],
)
def test_unsavable_values_raise_type_error(tmp_path, value):
    with pytest.raises(TypeError):
        ow.safetensors.save_file({"x": value}, tmp_path / "x.safetensors")
    assert not (tmp_path / "x.safetensors").exists()


def test_argument_errors(tmp_path):
    with pytest.raises(TypeError, match="dict"):
        ow.safetensors.save([ow.ones(1)])
    with pytest.raises(TypeError, match="names"):
        ow.safetensors.save({1: ow.ones(1)})
    with pytest.raises(TypeError, match="metadata"):
        ow.safetensors.save({"a": ow.ones(1)}, metadata={"a": 1})


def test_bad_files_raise_value_error(tmp_path):
    data = ow.safetensors.save({"x": ow.arange(100.0)})
    for cut in (0, 4, 8, 20, len(data) - 1):
        path = tmp_path / f"cut{cut}.safetensors"
        path.write_bytes(data[:cut])
        with pytest.raises(ValueError):
            ow.safetensors.load_file(path)
        with pytest.raises(ValueError):
            ow.safetensors.load(data[:cut])
    path = tmp_path / "header.safetensors"
    path.write_bytes((2**62).to_bytes(8, "little") + b"{}")
    with pytest.raises(ValueError):
        ow.safetensors.load_file(path)
