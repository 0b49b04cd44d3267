"""``weights_only=True`` (the default) admits tensors, containers and the allowlist, and runs nothing else."""

from __future__ import annotations

import builtins
import collections
import io
import json
import os
import pickle

import opweave as ow
import pytest
from opweave import serialization
from serialization_support import make_archive, roundtrip, saved_bytes


class Point:
    """A user class: refused unless allowlisted."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):
        return type(other) is Point and (self.x, self.y) == (other.x, other.y)


class MakesMarker:
    """Unpickling this creates a file (when anything runs it)."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (builtins.open, (self.path, "w"))


class CallsSystem:
    """Unpickling this calls ``os.system`` (when anything runs it)."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"echo pwned > {self.path}",))


def archive_with_pickle(payload, protocol=2) -> io.BytesIO:
    """A PyTorch-format archive whose data.pkl is ``pickle.dumps(payload)``."""
    data = pickle.dumps(payload, protocol=protocol)
    return io.BytesIO(
        make_archive({"archive/data.pkl": data, "archive/byteorder": b"little", "archive/version": b"3\n"})
    )


@pytest.fixture(autouse=True)
def _clean_allowlist():
    serialization.clear_safe_globals()
    yield
    serialization.clear_safe_globals()


@pytest.mark.parametrize("protocol", [2, 4])
def test_malicious_open_is_refused_and_nothing_runs(tmp_path, protocol):
    marker = tmp_path / "marker"
    evil = archive_with_pickle({"weights": [1, 2], "x": MakesMarker(str(marker))}, protocol)
    with pytest.raises(pickle.UnpicklingError, match=r"(builtins|io)\.open"):
        ow.load(evil)
    assert not marker.exists()
    evil.seek(0)
    with pytest.raises(pickle.UnpicklingError, match=r"(builtins|io)\.open"):
        ow.load(evil, weights_only=True)
    assert not marker.exists()
    evil.seek(0)
    ow.load(evil, weights_only=False)  # the same file, trusted: it does run (so the check above means something)
    assert marker.exists()


def test_os_system_is_refused_even_when_allowlisted(tmp_path):
    marker = tmp_path / "system-marker"
    evil = archive_with_pickle(CallsSystem(str(marker)))
    with pytest.raises(pickle.UnpicklingError, match=r"(posix|nt|os)\.system"):
        ow.load(evil)
    serialization.add_safe_globals([os.system])
    evil.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="blocked"):
        ow.load(evil)
    assert not marker.exists()


@pytest.mark.parametrize(
    "payload",
    [
        pickle.GLOBAL + b"builtins\neval\n" + pickle.NONE,  # a global never admitted
        pickle.PROTO + b"\x02" + pickle.GLOBAL + b"collections\nOrderedDict\n" + pickle.EMPTY_TUPLE + pickle.BUILD,
        pickle.PROTO + b"\x02" + pickle.EMPTY_DICT + pickle.MARK + pickle.NONE + pickle.APPENDS,  # APPENDS on a dict
        pickle.PROTO + b"\x02" + pickle.EMPTY_LIST + pickle.NONE + pickle.NONE + pickle.SETITEM,  # SETITEM on a list
        pickle.PROTO + b"\x02" + pickle.NONE + pickle.EMPTY_TUPLE + pickle.REDUCE,  # calling None
        pickle.PROTO + b"\x02" + pickle.NONE + pickle.BINPERSID,  # a persistent id that is not a storage
        pickle.PROTO + b"\x02" + pickle.INST + b"os\nsystem\n",  # protocol-0 instantiation
        pickle.PROTO + b"\x02" + pickle.BINGET + b"\x05",  # an unknown memo entry
        pickle.PROTO + b"\x02" + pickle.BINUNICODE + b"\xff\xff\xff\x7f" + b"abc",  # a string longer than the file
    ],
)
def test_hostile_opcode_sequences_raise_unpickling_error(payload):
    archive = make_archive({"archive/data.pkl": payload + pickle.STOP, "archive/version": b"3\n"})
    with pytest.raises(pickle.UnpicklingError):
        ow.load(io.BytesIO(archive))


def test_a_pickle_without_stop_is_truncated():
    archive = make_archive({"archive/data.pkl": pickle.PROTO + b"\x02" + pickle.EMPTY_LIST})
    with pytest.raises(pickle.UnpicklingError):
        ow.load(io.BytesIO(archive))


def test_user_class_needs_the_allowlist():
    obj = {"point": Point(1, ow.arange(3)), "t": ow.ones(2)}
    buf = io.BytesIO(saved_bytes(obj))
    name = f"{Point.__module__}.{Point.__qualname__}"
    with pytest.raises(pickle.UnpicklingError, match=name.replace(".", r"\.")) as info:
        ow.load(buf)
    assert "add_safe_globals" in str(info.value)
    buf.seek(0)
    assert serialization.get_unsafe_globals_in_checkpoint(buf) == [name]
    with serialization.safe_globals([Point]):
        buf.seek(0)
        loaded = ow.load(buf)
        assert serialization.get_safe_globals() == [Point]
    assert loaded["point"].x == 1 and loaded["point"].y.tolist() == [0, 1, 2]
    assert serialization.get_safe_globals() == []
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError):
        ow.load(buf)
    serialization.add_safe_globals([(Point, name)])
    buf.seek(0)
    assert ow.load(buf)["point"].x == 1
    serialization.clear_safe_globals()
    assert serialization.get_safe_globals() == []


def test_add_safe_globals_validates_its_entries():
    with pytest.raises(ValueError, match="pairs"):
        serialization.add_safe_globals([(Point, "a", "b")])
    with pytest.raises(TypeError, match="str"):
        serialization.add_safe_globals([(Point, 3)])
    assert serialization.get_safe_globals() == []


def test_weights_only_false_loads_arbitrary_objects():
    obj = {"point": Point(2, 3), "counter": collections.Counter("aab"), "t": ow.arange(2)}
    loaded = roundtrip(obj, weights_only=False)
    assert loaded["point"] == Point(2, 3) and loaded["counter"] == collections.Counter("aab")


def test_containers_and_primitives_need_no_allowlist():
    obj = collections.OrderedDict(
        a=[1, 2.5, None, True, "s", b"bytes", b"", bytearray(b"ba"), 1 + 2j, {1, 2}, frozenset({3}), (4,)],
        c=collections.Counter("xyz"),
    )
    assert roundtrip(obj) == obj


def test_load_argument_errors():
    buf = io.BytesIO(saved_bytes([1]))
    with pytest.raises(TypeError, match="weights_only"):
        ow.load(buf, weights_only="yes")
    with pytest.raises(TypeError, match="pickle_module"):
        ow.load(buf, pickle_module=json)
    with pytest.raises(TypeError, match="pickle_module"):
        ow.save([1], io.BytesIO(), json)
    buf.seek(0)
    assert ow.load(buf, pickle_module=pickle, weights_only=None, mmap=None) == [1]
    buf.seek(0)
    with pytest.raises(TypeError, match="unexpected"):
        ow.load(buf, fix_imports=True)
    with pytest.raises(TypeError, match="BytesIO"):
        ow.load(saved_bytes([1]))


def test_python2_strings_follow_encoding():
    payload = pickle.PROTO + b"\x02" + pickle.SHORT_BINSTRING + b"\x02\xc3\xa9" + pickle.STOP
    archive = make_archive({"archive/data.pkl": payload})
    assert ow.load(io.BytesIO(archive)) == "é"
    assert ow.load(io.BytesIO(archive), encoding="bytes") == b"\xc3\xa9"
    assert ow.load(io.BytesIO(archive), encoding="latin1") == "Ã©"
    assert ow.load(io.BytesIO(archive), weights_only=False, encoding="bytes") == b"\xc3\xa9"
    with pytest.raises(pickle.UnpicklingError, match="decode"):
        ow.load(io.BytesIO(archive), encoding="ascii")


@pytest.mark.parametrize("name", [b"bytes", b"bytearray"])
def test_bytes_of_a_declared_size_is_refused(name):
    """``bytes(10**12)`` would allocate what the file never holds."""
    payload = (
        pickle.PROTO
        + b"\x02"
        + pickle.GLOBAL
        + b"builtins\n"
        + name
        + b"\n"
        + pickle.LONG1
        + b"\x06"
        + (10**12).to_bytes(6, "little")
        + pickle.TUPLE1
        + pickle.REDUCE
        + pickle.STOP
    )
    with pytest.raises(pickle.UnpicklingError, match="string or bytes"):
        ow.load(io.BytesIO(make_archive({"archive/data.pkl": payload})))
