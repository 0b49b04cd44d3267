"""Files written by ``torch.save`` (tests/fixtures/torch, made by scripts/make_torch_fixtures.py) load in opweave.

Each ``NAME.json`` describes what PyTorch saved and ``NAME.npz`` holds every tensor's
expected elements as raw bytes, computed from NumPy; PyTorch is not imported here.
"""

from __future__ import annotations

import collections
import json
import pathlib

import numpy as np
import opweave as ow
import pytest
from serialization_support import DATA_DEVICES, device_dtypes, raw_bytes

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "torch"
NAMES = sorted(p.stem for p in FIXTURES.glob("*.pt"))


class Checker:
    """Walks a loaded object against its JSON description."""

    def __init__(self, arrays, device=None):
        self.arrays = arrays
        self.device = device
        self.storages: dict[int, object] = {}

    def __call__(self, obj, desc, path="obj"):
        if "tensor" in desc:
            return self.tensor(obj, desc, path)
        kind, value = next(iter(desc.items()))
        if kind in ("dict", "ordered_dict"):
            expected_type = collections.OrderedDict if kind == "ordered_dict" else dict
            assert type(obj) is expected_type, path
            keys = [self.plain(k) for k, _ in value]
            assert list(obj.keys()) == keys, path
            for (_, v), key in zip(value, keys):
                self(obj[key], v, f"{path}[{key!r}]")
            if "metadata" in desc:
                self(obj._metadata, desc["metadata"], f"{path}._metadata")
            return
        if kind in ("list", "tuple"):
            assert type(obj) is (list if kind == "list" else tuple), path
            assert len(obj) == len(value), path
            for i, (item, d) in enumerate(zip(obj, value)):
                self(item, d, f"{path}[{i}]")
            return
        if kind == "set":
            assert obj == {self.plain(d) for d in value}, path
            return
        expected = self.plain(desc)
        assert type(obj) is type(expected), f"{path}: {type(obj)} != {type(expected)}"
        assert obj == expected, path
        if isinstance(expected, float):
            assert obj.hex() == expected.hex(), path

    @staticmethod
    def plain(desc):
        kind, value = next(iter(desc.items()))
        return {
            "const": lambda v: v,
            "int": int,
            "float": float.fromhex,
            "complex": lambda v: complex(float.fromhex(v[0]), float.fromhex(v[1])),
            "str": str,
            "bytes": bytes.fromhex,
            "dtype": lambda v: getattr(ow, v),
            "device": ow.device,
        }[kind](value)

    def tensor(self, t, desc, path):
        assert isinstance(t, ow.Tensor), path
        assert t.dtype is getattr(ow, desc["dtype"]), path
        assert list(t.shape) == desc["shape"], path
        device = self.device or desc["device"]
        assert t.device.type == ow.device(device).type, path
        if desc["device"] == "meta":
            return
        assert list(t.stride()) == desc["stride"] and t.storage_offset() == desc["offset"], path
        seen = self.storages.setdefault(desc["storage"], t.untyped_storage())
        assert seen is t.untyped_storage(), f"{path}: does not share the storage it shared in PyTorch"
        assert raw_bytes(t) == self.arrays[desc["tensor"]].tobytes(), f"{path}: elements differ"
        quant = desc.get("quant")
        assert t.is_quantized == (quant is not None), path
        if quant and quant["scheme"] == "per_tensor_affine":
            assert t.qscheme() is ow.per_tensor_affine
            assert (t.q_scale(), t.q_zero_point()) == (quant["scale"], quant["zero_point"]), path
        elif quant:
            assert t.qscheme() is ow.per_channel_affine and t.q_per_channel_axis() == quant["axis"], path
            assert t.q_per_channel_scales().tolist() == quant["scales"], path
            assert t.q_per_channel_zero_points().tolist() == quant["zero_points"], path

    def check_distinct(self):
        assert len({id(s) for s in self.storages.values()}) == len(self.storages), "distinct storages were merged"


def _fixture(name):
    desc = json.loads((FIXTURES / f"{name}.json").read_text())
    with np.load(FIXTURES / f"{name}.npz") as npz:
        arrays = {k: npz[k] for k in npz.files}
    return desc, arrays


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("mmap", [False, True])
def test_torch_files_load_bit_exact(name, mmap):
    desc, arrays = _fixture(name)
    check = Checker(arrays)
    check(ow.load(FIXTURES / f"{name}.pt", mmap=mmap), desc)
    check.check_distinct()


def test_fixture_set_is_complete():
    assert {"dtypes", "views", "quantized", "module_state_dict", "optimizer_state_dict", "checkpoint", "nested"} <= set(
        NAMES
    )
    desc, _ = _fixture("dtypes")
    dtypes = {d["dtype"] for _, d in desc["dict"]}
    assert dtypes == {d.name for d in device_dtypes("cpu")}


@pytest.mark.parametrize("device", [d for d in DATA_DEVICES if d != "cpu"])
@pytest.mark.parametrize("name", ["views", "module_state_dict", "optimizer_state_dict", "quantized"])
def test_torch_files_load_onto_other_devices(name, device):
    desc, arrays = _fixture(name)
    check = Checker(arrays, device)
    check(ow.load(FIXTURES / f"{name}.pt", map_location=device), desc)


def test_torch_files_resave_identically_readable(tmp_path):
    """opweave.save of what PyTorch saved gives a file that loads to the same thing (the other direction is
    checked with PyTorch installed by scripts/check_torch_interop.py)."""
    for name in NAMES:
        desc, arrays = _fixture(name)
        ow.save(ow.load(FIXTURES / f"{name}.pt"), tmp_path / f"{name}.pt")
        Checker(arrays)(ow.load(tmp_path / f"{name}.pt"), desc)
