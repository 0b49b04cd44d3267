"""Damaged, truncated, foreign and hostile files raise clear errors, and allocate nothing they claim."""

from __future__ import annotations

import collections
import io
import pickle
import sys

import numpy as np
import opweave as ow
import pytest
from hypothesis import given
from hypothesis import strategies as st
from opweave._serialization._pickler import Writer, torch_global
from serialization_support import DATA_DEVICES, assert_same, make_archive, records, rewrite, saved_bytes

CLEAR_ERRORS = (RuntimeError, pickle.UnpicklingError, ValueError, TypeError, NotImplementedError)


def _load(data: bytes):
    return ow.load(io.BytesIO(data))


def _sample():
    base = ow.arange(6.0).reshape(2, 3)
    return {
        "w": base,
        "wT": base.mT,
        "q": ow.quantize_per_channel(base, ow.tensor([0.5, 0.25], dtype=ow.float64), ow.tensor([1, 2]), 0, ow.qint8),
        "f8": ow.tensor([1.0, -2.0]).to(ow.float8_e5m2),
        "n": [1, "two", 3.0],
    }


SAMPLE = saved_bytes(_sample())


class Pid:
    """A persistent id written as given (a storage reference, well-formed or not)."""

    def __init__(self, storage_class, key, location, numel):
        self.pid = ("storage", torch_global(*storage_class), key, location, numel)


class Call:
    """Pickles as ``fn(*args)`` with ``fn`` one of PyTorch's globals."""

    def __init__(self, fn, *args):
        self.fn, self.args = torch_global(*fn), args

    def __reduce__(self):
        return (self.fn, self.args)


class Crafter(Writer):
    def __init__(self, file):
        super().__init__(file, 2, {})

    def persistent_id(self, obj):
        return obj.pid if isinstance(obj, Pid) else None


def crafted(obj, storages: dict[str, bytes]) -> bytes:
    """An archive whose data.pkl is ``obj`` pickled with PyTorch's names, plus the given storage records."""
    buf = io.BytesIO()
    Crafter(buf).dump(obj)
    entries = {"archive/data.pkl": buf.getvalue(), "archive/byteorder": sys.byteorder.encode()}
    entries.update({f"archive/data/{k}": v for k, v in storages.items()})
    entries["archive/version"] = b"3\n"
    return make_archive(entries)


FLOATS = ("torch", "FloatStorage")
V2 = ("torch._utils", "_rebuild_tensor_v2")


def v2(pid, offset, size, stride):
    return Call(V2, pid, offset, size, stride, False, None)


def test_a_crafted_file_loads_when_well_formed():
    pid = Pid(FLOATS, "0", "cpu", 4)
    t = _load(crafted(v2(pid, 1, (3,), (1,)), {"0": np.arange(4, dtype=np.float32).tobytes()}))
    assert t.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize(
    ("obj", "match"),
    [
        (v2(Pid(FLOATS, "0", "cpu", 2**60), 0, (4,), (1,)), "declares"),  # a huge storage: no allocation
        (v2(Pid(FLOATS, "0", "cpu", 4), 0, (2**40,), (1,)), "needs"),  # a view past its storage
        (v2(Pid(FLOATS, "0", "cpu", 4), 3, (2, 2), (2, 1)), "needs"),
        (v2(Pid(FLOATS, "0", "cpu", 4), -1, (2,), (1,)), "negative"),
        (v2(Pid(FLOATS, "0", "cpu", 4), 0, (-2,), (1,)), "negative"),
        (v2(Pid(FLOATS, "0", "cpu", 4), 0, (2, 2), (1,)), "lengths"),
        (v2(Pid(FLOATS, "0", "cpu", 3), 0, (3,), (1,)), "declares"),  # 12 bytes declared, 16 stored
        (v2(Pid(FLOATS, "1", "cpu", 4), 0, (4,), (1,)), "no record"),
        (v2(Pid(FLOATS, "0", "cpu", -4), 0, (4,), (1,)), "negative"),
        (v2(Pid(FLOATS, "0", "cpu", 4), 0, (2.5,), (1,)), "must be an int"),
        (v2(Pid(("torch.storage", "UntypedStorage"), "0", "cpu", 16), 0, (4,), (1,)), "typed storage"),
        (v2(Pid(("torch", "ComplexHalfStorage"), "0", "cpu", 4), 0, (4,), (1,)), "ComplexHalfStorage"),
        (v2(Pid(FLOATS, "0", "not a device!", 4), 0, (4,), (1,)), "location"),
        (v2("not a storage", 0, (4,), (1,)), "expects a storage"),
        (
            Call(
                ("torch._utils", "_rebuild_tensor_v3"),
                Pid(("torch.storage", "UntypedStorage"), "0", "cpu", 16),
                0,
                (4,),
                (1,),
                False,
                None,
                torch_global("torch", "uint16"),
            ),
            r"torch\.uint16",
        ),
        (
            Call(
                ("torch._utils", "_rebuild_qtensor"),
                Pid(("torch", "QInt8Storage"), "0", "cpu", 16),
                0,
                (4, 4),
                (4, 1),
                (torch_global("torch", "per_channel_affine"), [0.1], [0], 0),
                False,
                None,
            ),
            "channels",
        ),
        (
            Call(
                ("torch._utils", "_rebuild_qtensor"),
                Pid(("torch", "QInt8Storage"), "0", "cpu", 16),
                0,
                (16,),
                (1,),
                (torch_global("torch", "per_tensor_affine"), "big", 0),
                False,
                None,
            ),
            "scale",
        ),
    ],
)
def test_malformed_tensor_descriptions(obj, match):
    with pytest.raises((pickle.UnpicklingError, RuntimeError), match=match):
        _load(crafted(obj, {"0": np.arange(4, dtype=np.float32).tobytes()}))


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"", "empty"),
        (b"\x00" * 100, "not a PyTorch-format file"),
        (pickle.dumps({"a": 1}, protocol=2), "legacy"),
        (b"PK\x03\x04" + b"\x00" * 60, "not a readable zip"),
        (make_archive({"archive/version": b"3\n"}), "no archive/data.pkl"),
        (make_archive({"archive/constants.pkl": b"", "archive/code/m.py": b""}), "TorchScript"),
        (make_archive({"loose.pkl": b""}), "top-level folder"),
    ],
    ids=["empty", "zeros", "legacy", "bad-zip", "no-data-pkl", "torchscript", "no-top-folder"],  # stable under xdist
)
def test_foreign_files(data, match):
    with pytest.raises(RuntimeError, match=match):
        _load(data)


def test_every_truncation_raises_a_clear_error():
    for cut in range(0, len(SAMPLE), 11):
        with pytest.raises(CLEAR_ERRORS):
            _load(SAMPLE[:cut])


def test_unknown_dtype_names_it():
    data = rewrite(SAMPLE, data_pkl=lambda d: d.replace(b"torch\nfloat8_e5m2\n", b"torch\nuint16\n"))
    with pytest.raises(pickle.UnpicklingError, match=r"torch\.uint16"):
        _load(data)
    data = rewrite(SAMPLE, data_pkl=lambda d: d.replace(b"torch\nFloatStorage\n", b"torch\nNoSuchStorage\n"))
    with pytest.raises(pickle.UnpicklingError, match=r"torch\.NoSuchStorage"):
        _load(data)


def test_storage_record_shorter_than_declared():
    key = next(n for n in records(SAMPLE) if n.endswith("/data/0")).split("/", 1)[1].replace("/", "__")
    with pytest.raises(pickle.UnpicklingError, match="declares"):
        _load(rewrite(SAMPLE, **{key: lambda d: d[:-4]}))


def test_bad_byteorder_record():
    with pytest.raises(RuntimeError, match="byte order"):
        _load(rewrite(SAMPLE, byteorder=b"middle"))


@pytest.mark.parametrize("device", DATA_DEVICES)
def test_big_endian_files_are_swapped(device):
    z = ow.tensor([1 + 2j, -3.5 - 0.0j], dtype=ow.complex64)
    obj = {
        "f": ow.tensor([1.5, -0.0, 3.0]),
        "c": ow.tensor([1j, 2.0], dtype=ow.complex128),
        "i": ow.tensor([1, -2], dtype=ow.int16),
        "z": z,
        "r": ow.view_as_real(z),
        "b": ow.tensor([True, False]),
    }
    swap_sizes = {"0": 4, "1": 8, "2": 2, "3": 4, "4": 1}  # storages in the order the pickle meets them
    data = saved_bytes(obj)
    changes = {"byteorder": b"big" if sys.byteorder == "little" else b"little"}
    for key, size in swap_sizes.items():
        changes[f"data__{key}"] = lambda d, size=size: np.frombuffer(d, f"u{size}").byteswap().tobytes()
    loaded = ow.load(io.BytesIO(rewrite(data, **changes)), map_location=device)
    assert loaded["r"].untyped_storage() is loaded["z"].untyped_storage()
    assert_same({k: v.cpu() for k, v in loaded.items()}, obj)


_MUTATIONS = st.lists(st.tuples(st.integers(0, len(SAMPLE) - 1), st.integers(0, 255)), min_size=1, max_size=8)


@given(mutations=_MUTATIONS, cut=st.none() | st.integers(0, len(SAMPLE)))
def test_fuzzed_archives_raise_only_clear_errors(mutations, cut):
    data = bytearray(SAMPLE)
    for position, value in mutations:
        data[position] = value
    if cut is not None:
        data = data[:cut]
    try:
        _load(bytes(data))
    except CLEAR_ERRORS as exc:
        assert str(exc)


_PICKLE = next(v for k, v in records(SAMPLE).items() if k.endswith("/data.pkl"))


@given(
    mutations=st.lists(st.tuples(st.integers(0, len(_PICKLE) - 1), st.integers(0, 255)), min_size=1, max_size=4),
    cut=st.none() | st.integers(0, len(_PICKLE)),
)
def test_fuzzed_pickles_in_valid_archives_raise_only_clear_errors(mutations, cut):
    data = bytearray(_PICKLE)
    for position, value in mutations:
        data[position] = value
    if cut is not None:
        data = data[:cut]
    try:
        _load(rewrite(SAMPLE, data_pkl=bytes(data)))
    except CLEAR_ERRORS as exc:
        assert str(exc)


def test_parameters_and_device_rebuilds_load():
    """A ``torch.nn.Parameter`` loads as a Parameter; ``_rebuild_device_tensor_from_cpu_tensor`` moves data."""
    pid = Pid(FLOATS, "0", "cpu", 4)
    data = {"0": np.arange(4, dtype=np.float32).tobytes()}
    hooks = collections.OrderedDict()
    for requires_grad in (True, False):
        parameter = Call(("torch._utils", "_rebuild_parameter"), v2(pid, 0, (4,), (1,)), requires_grad, hooks)
        loaded = _load(crafted(parameter, data))
        assert isinstance(loaded, ow.nn.Parameter) and loaded.requires_grad is requires_grad
        assert loaded.tolist() == [0.0, 1.0, 2.0, 3.0]
    moved = Call(
        ("torch._utils", "_rebuild_device_tensor_from_cpu_tensor"),
        v2(pid, 0, (2, 2), (2, 1)),
        torch_global("torch", "float64"),
        "cpu",
        False,
    )
    t = _load(crafted(moved, data))
    assert t.dtype is ow.float64 and t.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    subclass = Call(
        ("torch._tensor", "_rebuild_from_type_v2"),
        torch_global("torch._utils", "_rebuild_tensor_v2"),
        torch_global("torch", "Tensor"),
        (pid, 1, (3,), (1,), False, hooks),
        {},
    )
    assert _load(crafted(subclass, data)).tolist() == [1.0, 2.0, 3.0]
    with_state = Call(
        ("torch._tensor", "_rebuild_from_type_v2"),
        torch_global("torch._utils", "_rebuild_tensor_v2"),
        torch_global("torch", "Tensor"),
        (pid, 1, (3,), (1,), False, hooks),
        {"extra": 1},
    )
    with pytest.raises(pickle.UnpicklingError, match="attributes"):
        _load(crafted(with_state, data))
    sparse = Call(("torch._utils", "_rebuild_sparse_tensor"), 1)
    with pytest.raises(NotImplementedError, match="_rebuild_sparse_tensor"):
        _load(crafted(sparse, data))
