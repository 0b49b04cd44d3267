"""Helpers of the serialization tests: devices, bitwise comparison of loaded objects, archive surgery."""

from __future__ import annotations

import collections
import io
import zipfile
from importlib.metadata import entry_points

import numpy as np
import opweave as ow
from hypothesis import strategies as st

#: the installed device plugins' names (not the fake devices other test modules register in this process)
_INSTALLED = {ep.name for ep in entry_points(group="opweave.backends")} | {"meta"}
#: every available device type (cpu, meta and each installed plugin's)
DEVICES = [r.name for r in ow.backends.status() if r.kind == "device" and r.available and r.name in _INSTALLED]
DATA_DEVICES = [d for d in DEVICES if d != "meta"]


def all_dtypes():
    """Every non-quantized opweave dtype."""
    from opweave import _dtype

    return list(_dtype.ALL_DTYPES)


def device_dtypes(device: str):
    """The dtypes ``device`` can hold."""
    supported = ow.backends.get(ow.device(device).type).dtypes
    return [d for d in all_dtypes() if supported is None or d in supported]


def raw_bytes(t) -> bytes:
    """The bytes of ``t``'s elements in row-major order (the integer representation if quantized)."""
    if t.is_quantized:
        t = t.int_repr()
    return np.ascontiguousarray(t.numpy(force=True)).reshape(-1).view(np.uint8).tobytes()


def assert_same(loaded, original, pairs=None, path="obj") -> None:
    """``loaded`` equals ``original``: same types and structure, tensors bit for bit with the same layout.

    ``pairs`` collects (loaded storage, original storage) so that aliasing can be compared afterwards.
    """
    pairs = pairs if pairs is not None else []
    assert type(loaded) is type(original), f"{path}: {type(loaded)} != {type(original)}"
    if isinstance(original, ow.Tensor):
        assert loaded.dtype is original.dtype, path
        assert tuple(loaded.shape) == tuple(original.shape), path
        assert tuple(loaded.stride()) == tuple(original.stride()), path
        if original.device.type != "meta":  # PyTorch's format saves meta tensors without storage or offset
            assert loaded.storage_offset() == original.storage_offset(), path
        assert loaded.device == original.device, path
        if original.is_quantized:
            assert loaded.qscheme() is original.qscheme(), path
            if original.qscheme().per_channel:
                assert loaded.q_per_channel_scales().tolist() == original.q_per_channel_scales().tolist(), path
                assert loaded.q_per_channel_zero_points().tolist() == original.q_per_channel_zero_points().tolist()
                assert loaded.q_per_channel_axis() == original.q_per_channel_axis(), path
            else:
                assert loaded.q_scale() == original.q_scale() and loaded.q_zero_point() == original.q_zero_point()
        if original.device.type != "meta":
            assert raw_bytes(loaded) == raw_bytes(original), f"{path}: elements differ"
            pairs.append((loaded.untyped_storage(), original.untyped_storage(), path))
        return
    if isinstance(original, dict):
        assert list(loaded.keys()) == list(original.keys()), path
        for k in original:
            assert_same(loaded[k], original[k], pairs, f"{path}[{k!r}]")
        return
    if isinstance(original, (list, tuple)):
        assert len(loaded) == len(original), path
        for i, (a, b) in enumerate(zip(loaded, original)):
            assert_same(a, b, pairs, f"{path}[{i}]")
        return
    if isinstance(original, float) and original != original:
        assert loaded != loaded, path
        return
    assert loaded == original, f"{path}: {loaded!r} != {original!r}"
    if isinstance(original, float):
        assert np.float64(loaded).tobytes() == np.float64(original).tobytes(), path


def assert_aliasing_kept(pairs) -> None:
    """Tensors sharing a storage before saving share one after loading, and only those."""
    loaded_of = {}
    for loaded, original, path in pairs:
        previous = loaded_of.setdefault(id(original), loaded)
        assert previous is loaded, f"{path}: a view lost its storage"
    assert len({id(v) for v in loaded_of.values()}) == len(loaded_of), "distinct storages were merged"


def roundtrip(obj, **load_kwargs):
    """``load(save(obj))`` through memory."""
    buf = io.BytesIO()
    ow.save(obj, buf)
    buf.seek(0)
    return ow.load(buf, **load_kwargs)


def saved_bytes(obj, **save_kwargs) -> bytes:
    """The bytes ``opweave.save`` writes for ``obj``."""
    buf = io.BytesIO()
    ow.save(obj, buf, **save_kwargs)
    return buf.getvalue()


def records(archive: bytes) -> dict[str, bytes]:
    """``{full record name: bytes}`` of an archive, in order."""
    with zipfile.ZipFile(io.BytesIO(archive)) as z:
        return {name: z.read(name) for name in z.namelist()}


def make_archive(entries: dict[str, bytes]) -> bytes:
    """An uncompressed zip archive of ``entries`` (names include the archive folder)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name, data in entries.items():
            z.writestr(name, data)
    return buf.getvalue()


def rewrite(archive: bytes, **changes) -> bytes:
    """``archive`` with some records replaced: ``rewrite(a, data_pkl=b"...")`` (``/`` and ``.`` as ``_``)."""
    entries = records(archive)
    prefix = next(iter(entries)).split("/")[0] + "/"
    for key, value in changes.items():
        name = {"data_pkl": "data.pkl"}.get(key, key.replace("__", "/"))
        entries[prefix + name] = value(entries[prefix + name]) if callable(value) else value
    return make_archive(entries)


@st.composite
def tensors(draw, dtype, device="cpu", max_dims=3):
    """A tensor of ``dtype`` on ``device`` with arbitrary bits (NaN payloads, -0.0 ...), maybe a strided view."""
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=max_dims)))
    numel = int(np.prod(shape)) if shape else 1
    extra = draw(st.integers(0, 3))
    n = numel + extra
    if dtype is ow.bool:
        host = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), np.bool_)
    else:
        host = np.frombuffer(draw(st.binary(min_size=n * dtype.itemsize, max_size=n * dtype.itemsize)), dtype.numpy)
    base = ow.from_numpy(host.copy()) if device == "cpu" else ow.from_numpy(host.copy()).to(device)
    if device == "meta":
        return ow.empty(shape, dtype=dtype, device="meta")
    kind = draw(st.sampled_from(["flat", "offset", "transposed"]))
    if kind == "offset" and numel:
        return ow.as_strided(base, shape, _contiguous(shape), extra)
    flat = ow.as_strided(base, shape, _contiguous(shape), 0)
    if kind == "transposed" and len(shape) >= 2:
        return flat.transpose(0, len(shape) - 1)
    return flat


def _contiguous(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def ordered(items):
    """An OrderedDict (as PyTorch's state_dicts are)."""
    return collections.OrderedDict(items)
