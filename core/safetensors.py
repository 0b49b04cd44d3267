"""safetensors files for dicts of opweave tensors, through the ``safetensors`` package's NumPy API.

The functions mirror ``safetensors.torch``: :func:`save_file` / :func:`load_file` for
files, :func:`save` / :func:`load` for bytes, plus :func:`load_metadata`. Writing
goes through ``safetensors.numpy``; reading lets the package parse and validate the
header (``safe_open`` / ``deserialize``) and maps its dtype codes to opweave's,
bfloat16 and float8 included (the package's NumPy reader lacks them, so their
bytes are read as the format defines them: little-endian, row-major, at the
header's offsets).

safetensors stores each tensor as its own contiguous bytes: views are saved as
copies and load as separate tensors, complex128, quantized and meta tensors have
no safetensors form (``TypeError``); use ``opweave.save`` for those.
"""

from __future__ import annotations

import json
import os
import struct

import numpy as np

from . import _dtype
from ._device import as_device
from ._device import device as _device
from ._tensor import Tensor

__all__ = ["save", "save_file", "load", "load_file", "load_metadata"]

#: safetensors dtype code -> opweave dtype
DTYPE_OF_CODE = {
    "BOOL": _dtype.bool_,
    "U8": _dtype.uint8,
    "I8": _dtype.int8,
    "I16": _dtype.int16,
    "I32": _dtype.int32,
    "I64": _dtype.int64,
    "F16": _dtype.float16,
    "BF16": _dtype.bfloat16,
    "F32": _dtype.float32,
    "F64": _dtype.float64,
    "C64": _dtype.complex64,
    "F8_E4M3": _dtype.float8_e4m3fn,
    "F8_E5M2": _dtype.float8_e5m2,
}
_SAVABLE = frozenset(DTYPE_OF_CODE.values())
_HEADER_LIMIT = 100_000_000  # the format's own limit on the JSON header


def _package(op: str):
    try:
        import safetensors
        import safetensors.numpy
    except ImportError:
        raise ImportError(f'{op}: needs the safetensors package: pip install "opweave[serialization]"') from None
    return safetensors


def _arrays(tensors, op: str) -> dict:
    if not isinstance(tensors, dict):
        raise TypeError(f"{op}: expected a dict of name -> Tensor, got {type(tensors).__name__}")
    out = {}
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"{op}: tensor names must be str, got {type(name).__name__}")
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name!r} must be a Tensor, got {type(t).__name__}")
        if t.is_quantized or t.dtype not in _SAVABLE:
            raise TypeError(
                f"{op}: {name!r} has dtype {t.dtype.name}, which safetensors cannot store; use opweave.save"
            )
        if t.device.type == "meta":
            raise TypeError(f"{op}: {name!r} is a meta tensor (no data); safetensors stores data")
        host = t.numpy(force=True)
        out[name] = (
            host if host.flags.c_contiguous else np.array(host, order="C")
        )  # (ascontiguousarray makes 0-dim 1-dim)
    return out


def _check_metadata(metadata, op: str):
    if metadata is None:
        return None
    if not isinstance(metadata, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        raise TypeError(f"{op}: metadata must be a dict of str -> str")
    return metadata


def save(tensors: dict, metadata: dict | None = None) -> bytes:
    """The safetensors bytes of a dict of tensors (``metadata``: optional str -> str)."""
    _package("save")
    import safetensors.numpy

    return safetensors.numpy.save(_arrays(tensors, "save"), metadata=_check_metadata(metadata, "save"))


def save_file(tensors: dict, filename: str | os.PathLike, metadata: dict | None = None) -> None:
    """Write a dict of tensors to a safetensors file (``metadata``: optional str -> str)."""
    _package("save_file")
    import safetensors.numpy

    safetensors.numpy.save_file(
        _arrays(tensors, "save_file"), filename, metadata=_check_metadata(metadata, "save_file")
    )


def _tensor(host: np.ndarray, code: str, shape, device, where: str) -> Tensor:
    from ._factories import from_numpy

    dt = DTYPE_OF_CODE.get(code)
    if dt is None:
        raise TypeError(f"{where}: safetensors dtype {code} is not supported by opweave")
    shape = tuple(int(s) for s in shape)
    numel = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if host.size != numel * dt.itemsize:
        raise ValueError(f"{where}: {numel} {dt.name} elements need {numel * dt.itemsize} bytes, got {host.size}")
    t = from_numpy(host.view(dt.numpy).reshape(shape))
    return t if device.type == "cpu" else t.to(device=device)


def load(data: bytes, device: _device | str | int = "cpu") -> dict[str, Tensor]:
    """The tensors of safetensors bytes ``data``, on ``device``."""
    safetensors = _package("load")
    dev = as_device(device)
    try:
        entries = safetensors.deserialize(bytes(data))
    except safetensors.SafetensorError as exc:
        raise ValueError(f"load: not valid safetensors data: {exc}") from None
    out = {}
    for name, info in entries:
        host = np.frombuffer(bytearray(info["data"]), np.uint8)
        out[name] = _tensor(host, info["dtype"], info["shape"], dev, f"load: {name!r}")
    return out


def load_file(filename: str | os.PathLike, device: _device | str | int = "cpu") -> dict[str, Tensor]:
    """The tensors of a safetensors file, on ``device`` (each read into its own writable memory)."""
    safetensors = _package("load_file")
    dev = as_device(device)
    where = f"load_file({os.fspath(filename)!r})"
    try:
        with safetensors.safe_open(filename, framework="np") as handle:
            keys = list(handle.keys())
    except safetensors.SafetensorError as exc:
        raise ValueError(f"{where}: not a valid safetensors file: {exc}") from None
    with open(filename, "rb") as f:
        header, start, size = _header(f, where)
        out = {}
        for name in keys:
            info = header[name]
            begin, end = (int(v) for v in info["data_offsets"])
            if not 0 <= begin <= end <= size - start:
                raise ValueError(f"{where}: {name!r} lies outside the file")
            host = np.empty(end - begin, np.uint8)
            f.seek(start + begin)
            if f.readinto(memoryview(host)) != host.size:
                raise ValueError(f"{where}: {name!r} is truncated")
            out[name] = _tensor(host, info["dtype"], info["shape"], dev, f"{where}: {name!r}")
    return out


def load_metadata(filename: str | os.PathLike) -> dict | None:
    """The ``__metadata__`` (str -> str) of a safetensors file, or None."""
    safetensors = _package("load_metadata")
    try:
        with safetensors.safe_open(filename, framework="np") as handle:
            return handle.metadata()
    except safetensors.SafetensorError as exc:
        raise ValueError(f"load_metadata({os.fspath(filename)!r}): not a valid safetensors file: {exc}") from None


def _header(f, where: str) -> tuple[dict, int, int]:
    f.seek(0, os.SEEK_END)
    size = f.tell()
    f.seek(0)
    raw = f.read(8)
    if len(raw) != 8:
        raise ValueError(f"{where}: truncated header")
    (n,) = struct.unpack("<Q", raw)
    if n > min(_HEADER_LIMIT, size - 8):
        raise ValueError(f"{where}: the header declares {n} bytes")
    return json.loads(f.read(n)), 8 + n, size
