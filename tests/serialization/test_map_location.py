"""``map_location`` (string, device, dict, callable), unavailable devices, and ``mmap=True``."""

from __future__ import annotations

import io

import numpy as np
import opweave as ow
import pytest
from serialization_support import DATA_DEVICES, DEVICES, assert_same, raw_bytes, rewrite, saved_bytes


def _sample():
    base = ow.arange(12.0).reshape(3, 4)
    return {"w": base, "wT": base.mT, "row": base[1], "i": ow.tensor([1, -2, 3]), "b": ow.tensor([True, False])}


def _check_on(loaded, original, device):
    for key, t in original.items():
        assert loaded[key].device == ow.device(device) if ":" in device else loaded[key].device.type == device
        if device != "meta":
            assert raw_bytes(loaded[key]) == raw_bytes(t)
            assert loaded[key].stride() == t.stride() and loaded[key].storage_offset() == t.storage_offset()
    if device != "meta":
        assert loaded["wT"].untyped_storage() is loaded["w"].untyped_storage()


@pytest.mark.parametrize("device", DEVICES)
def test_map_location_string_and_device(device):
    obj = _sample()
    data = saved_bytes(obj)
    _check_on(ow.load(io.BytesIO(data), map_location=device), obj, device)
    _check_on(ow.load(io.BytesIO(data), map_location=ow.device(device)), obj, device)


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_saved_device_is_restored_and_mapped_back(device):
    obj = {k: v.to(device) for k, v in _sample().items()}
    obj["wT"] = obj["w"].mT
    data = saved_bytes(obj)
    assert_same(ow.load(io.BytesIO(data)), obj)
    saved = str(obj["w"].device)
    back = ow.load(io.BytesIO(data), map_location={saved: "cpu"})
    assert all(t.device.type == "cpu" for t in back.values())
    assert back["wT"].untyped_storage() is back["w"].untyped_storage()


def _on_unknown_device() -> bytes:
    """A file whose storages were saved on an 'xpu' device (which no backend provides here)."""
    return rewrite(
        saved_bytes(_sample()), data_pkl=lambda d: d.replace(b"X\x03\x00\x00\x00cpu", b"X\x03\x00\x00\x00xpu")
    )


def test_unavailable_device_names_it_and_suggests_map_location():
    with pytest.raises(RuntimeError, match=r"'xpu'.*map_location") as info:
        ow.load(io.BytesIO(_on_unknown_device()))
    assert "xpu" in str(info.value)
    for ml in ("cpu", ow.device("cpu"), {"xpu": "cpu"}, {"xpu": ow.device("cpu")}):
        _check_on(ow.load(io.BytesIO(_on_unknown_device()), map_location=ml), _sample(), "cpu")
    with pytest.raises(RuntimeError, match="xpu"):
        ow.load(io.BytesIO(_on_unknown_device()), map_location={"cuda:0": "cpu"})


def test_map_location_callable():
    seen = []

    def keep_on_cpu(storage, location):
        seen.append(location)
        return storage

    _check_on(ow.load(io.BytesIO(_on_unknown_device()), map_location=keep_on_cpu), _sample(), "cpu")
    assert seen and set(seen) == {"xpu"}
    with pytest.raises(RuntimeError, match="xpu"):  # None: the saved location, which is unavailable
        ow.load(io.BytesIO(_on_unknown_device()), map_location=lambda s, loc: None)
    data = saved_bytes(_sample())
    _check_on(ow.load(io.BytesIO(data), map_location=lambda s, loc: "meta"), _sample(), "meta")
    with pytest.raises(TypeError, match="map_location returned"):
        ow.load(io.BytesIO(data), map_location=lambda s, loc: 3)
    with pytest.raises(TypeError, match="map_location must be"):
        ow.load(io.BytesIO(data), map_location=3)


def test_mmap_maps_storages_from_the_file(tmp_path):
    obj = _sample()
    path = tmp_path / "m.pt"
    ow.save(obj, path)
    loaded = ow.load(path, mmap=True)
    _check_on(loaded, obj, "cpu")
    before = path.read_bytes()
    loaded["w"][0, 0] = 100.0  # copy-on-write: the tensors are writable, the file does not change
    assert loaded["wT"][0, 0].item() == 100.0
    assert path.read_bytes() == before
    with open(path, "rb") as f:
        _check_on(ow.load(f, mmap=True), obj, "cpu")
    with pytest.raises(ValueError, match="mmap=True needs"):
        ow.load(io.BytesIO(before), mmap=True)


def test_mmap_storage_is_the_mapped_file(tmp_path):
    big = ow.from_numpy(np.arange(4096, dtype=np.float64))
    ow.save({"big": big}, tmp_path / "big.pt")
    loaded = ow.load(tmp_path / "big.pt", mmap=True)["big"]
    array = loaded.numpy()
    assert not array.flags.owndata
    owner = array
    while getattr(owner, "base", None) is not None:
        owner = owner.base
    import mmap

    owner = owner.obj if isinstance(owner, memoryview) else owner
    assert isinstance(owner, mmap.mmap)
    assert array.ctypes.data % 64 == 0  # records are 64-byte aligned in the file


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_mmap_then_map_location(tmp_path, device):
    ow.save(_sample(), tmp_path / "m.pt")
    _check_on(ow.load(tmp_path / "m.pt", mmap=True, map_location=device), _sample(), device)


def test_zip64_records_stay_aligned(tmp_path, monkeypatch):
    """Records past zip's 4 GiB limit get zip64 headers; their data stays 64-byte aligned (shown with a low limit)."""
    import struct
    import zipfile

    monkeypatch.setattr(zipfile, "ZIP64_LIMIT", 1000)
    obj = {"a": ow.arange(1000.0), "b": ow.arange(10)}
    ow.save(obj, tmp_path / "z.pt")
    raw = (tmp_path / "z.pt").read_bytes()
    with zipfile.ZipFile(tmp_path / "z.pt") as z:
        infos = z.infolist()
    assert any(i.file_size > 1000 for i in infos)
    for info in infos:
        name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26 : info.header_offset + 30])
        assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0, info.filename
    assert_same(ow.load(tmp_path / "z.pt", mmap=True), obj)
