"""Saving and loading in PyTorch's file format: ``opweave.save`` and ``opweave.load``.

Files are PyTorch's zip archives (``<name>/data.pkl``, ``<name>/data/<key>`` per
storage, ``byteorder``, ``version``), so ``torch.load`` reads what ``opweave.save``
writes and ``opweave.load`` reads what ``torch.save`` writes: tensors of every dtype
both have (float8, bfloat16, complex, bool, quantized per tensor and per channel),
views sharing a storage (they still share one after loading), any strides, and
containers of them (``state_dict``\\ s included). PyTorch is never imported.

``load`` is safe by default: ``weights_only=True`` admits only tensors, storages,
containers, primitive types and the globals allowlisted with
:func:`add_safe_globals`; anything else raises ``pickle.UnpicklingError`` naming it,
and nothing from the file runs. ``weights_only=False`` unpickles anything, running
whatever code the file names: use it only for files you trust.

safetensors files: :func:`save_file` and :func:`load_file` (``opweave.safetensors``).
See ``docs/serialization.md``.
"""

from __future__ import annotations

import io
import os
import pickle
import sys
import zlib
from collections.abc import Callable
from types import ModuleType
from typing import IO, Any

from ._device import device as _device
from ._serialization import _pickler, _unpickler, _zip
from ._serialization._allowlist import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals
from ._serialization._rebuild import Loader
from .safetensors import load_file, save_file

__all__ = [
    "save",
    "load",
    "add_safe_globals",
    "get_safe_globals",
    "clear_safe_globals",
    "safe_globals",
    "get_unsafe_globals_in_checkpoint",
    "save_file",
    "load_file",
    "DEFAULT_PROTOCOL",
]

DEFAULT_PROTOCOL = 2  # what torch.save writes
FILE_FORMAT_VERSION = "3\n"  # the archive version record PyTorch 1.6+ writes and reads
_ZIP_MAGIC = b"PK\x03\x04"

FileLike = str | os.PathLike | IO[bytes]


def save(
    obj: Any, f: FileLike, pickle_module: ModuleType | None = None, pickle_protocol: int = DEFAULT_PROTOCOL
) -> None:
    """Save ``obj`` (tensors, containers of them, ``state_dict``\\ s) to ``f`` in PyTorch's zip format.

    ``f`` is a path or a binary file object. Storages are written whole, once each,
    in the order the pickle meets them, each aligned to 64 bytes in the file (so
    ``load(..., mmap=True)`` maps them); tensors of any device are saved with that
    device as their location (``map_location`` chooses another when loading).
    ``obj`` is pickled before the file is opened: a failure leaves ``f`` untouched.
    ``pickle_module`` is accepted for ``torch.save``'s signature: None or :mod:`pickle`.
    """
    _check_pickle_module(pickle_module, "save")
    if isinstance(pickle_protocol, bool) or not isinstance(pickle_protocol, int):
        raise TypeError(f"save(): pickle_protocol must be an int, got {type(pickle_protocol).__name__}")
    if not 2 <= pickle_protocol <= pickle.HIGHEST_PROTOCOL:
        raise ValueError(f"save(): pickle_protocol must be 2 to {pickle.HIGHEST_PROTOCOL}, got {pickle_protocol}")
    if isinstance(f, (str, os.PathLike)):
        archive = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
    elif hasattr(f, "write"):
        archive = "archive"
    else:
        raise TypeError(f"save(): f must be a path or a writable binary file object, got {type(f).__name__}")
    data, refs = _pickler.pickle_object(obj, pickle_protocol)
    payloads = [(ref.key, _pickler.storage_bytes(ref.storage)) for ref in refs]
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as out:
            _write_archive(out, archive, data, payloads)
    else:
        _write_archive(f, archive, data, payloads)


def _write_archive(out, archive: str, data: bytes, payloads) -> None:
    writer = _zip.ArchiveWriter(out, archive)
    writer.write("data.pkl", data)
    writer.write(".format_version", b"1")
    writer.write(".storage_alignment", str(_zip.ALIGNMENT).encode())
    writer.write("byteorder", sys.byteorder.encode())
    crc = zlib.crc32(data)
    for key, host in payloads:
        writer.write(f"data/{key}", host)
        crc = zlib.crc32(key.encode(), crc)
    writer.write("version", FILE_FORMAT_VERSION.encode())
    writer.write(".data/serialization_id", f"{zlib.adler32(data):020d}{crc:020d}".encode())
    writer.close()


def load(
    f: FileLike,
    map_location: str | _device | dict[str, str] | Callable | None = None,
    pickle_module: ModuleType | None = None,
    *,
    weights_only: bool | None = True,
    mmap: bool | None = False,
    **pickle_load_args: Any,
) -> Any:
    """Load what :func:`save` or ``torch.save`` wrote to ``f`` (a path or a binary file object).

    - ``map_location``: where storages go. None: the device each was saved on; a
      device or device string: all there; a dict: ``{saved location: device}``
      (others stay); a callable ``(storage, location) -> Storage, device or None``
      receives each storage on the CPU (None: its saved device). A device that is
      not available raises ``RuntimeError`` naming it and suggesting ``map_location``.
    - ``weights_only`` (default True): only tensors, storages, containers, primitive
      types and allowlisted globals (:func:`add_safe_globals`) are admitted; anything
      else raises ``pickle.UnpicklingError`` naming the global, before it can run.
      ``weights_only=False`` runs whatever the file names: for trusted files only.
    - ``mmap``: map storages from the file (copy-on-write: writes to the tensors
      never reach the file) instead of reading them; needs a path or a real file.
    - ``encoding``: how Python 2 ``str`` objects in old files are decoded (``"bytes"`` keeps them as
      bytes), as ``torch.load``; default ``"utf-8"``.

    ``weights_only=None`` means the default (True) and ``pickle_module`` may be None or
    :mod:`pickle`, as ``torch.load`` accepts them.

    A damaged, truncated or foreign file raises ``RuntimeError`` (the archive) or
    ``pickle.UnpicklingError`` (its pickle), and nothing is returned.
    """
    _check_pickle_module(pickle_module, "load")
    weights_only = True if weights_only is None else weights_only  # None: the default, as torch.load
    mmap = bool(mmap)
    if pickle_load_args.keys() - {"encoding"}:
        unknown = ", ".join(sorted(pickle_load_args.keys() - {"encoding"}))
        raise TypeError(f"load(): unexpected keyword argument(s) {unknown}")
    if not isinstance(weights_only, bool):
        raise TypeError(f"load(): weights_only must be a bool, got {type(weights_only).__name__}")
    where = "opweave.load" + (f"({os.fspath(f)!r})" if isinstance(f, (str, os.PathLike)) else "")
    with _open_for_reading(f, where) as (handle, _):
        reader = _open_archive(handle, where)
        data = reader.read_small("data.pkl")
        mapping = reader.mapping() if mmap else None
        loader = Loader(reader, map_location, mapping, where)
        loader.big_endian = _is_foreign_byte_order(reader, where)
        table = loader.globals()
        encoding = pickle_load_args.get("encoding", "utf-8")
        if weights_only:
            return _unpickler.RestrictedUnpickler(data, table, loader.persistent_load, where, encoding).load()
        return _unpickler.TrustedUnpickler(data, table, loader.persistent_load, encoding).load()


def _check_pickle_module(module, op: str) -> None:
    if module is not None and module is not pickle:
        raise TypeError(f"{op}(): pickle_module must be None or pickle; opweave uses its own picklers")


def get_unsafe_globals_in_checkpoint(f: FileLike) -> list[str]:
    """The globals ``f``'s pickle names that ``weights_only=True`` would refuse (found without running it)."""
    where = "get_unsafe_globals_in_checkpoint"
    with _open_for_reading(f, where) as (handle, _):
        reader = _open_archive(handle, where)
        data = reader.read_small("data.pkl")
    table = Loader(None, None, None, where).globals()
    from ._serialization._allowlist import user_globals

    allowed = {f"{m}.{n}" for m, n in table} | set(user_globals())
    return [g for g in _unpickler.globals_in(data) if g not in allowed]


class _open_for_reading:  # noqa: N801 - a context manager used like a function
    """A seekable binary handle on ``f`` (a path is opened and closed; a stream is read into memory)."""

    def __init__(self, f, where: str):
        self.f, self.where, self.owned = f, where, None

    def __enter__(self):
        f = self.f
        if isinstance(f, (str, os.PathLike)):
            try:
                self.owned = open(f, "rb")  # noqa: SIM115 - closed in __exit__
            except FileNotFoundError:
                raise FileNotFoundError(f"{self.where}: no such file: {os.fspath(f)!r}") from None
            return self.owned, True
        if isinstance(f, (bytes, bytearray, memoryview)):
            raise TypeError(f"{self.where}: f must be a path or a binary file object; wrap bytes in io.BytesIO")
        if not hasattr(f, "read"):
            raise TypeError(f"{self.where}: f must be a path or a binary file object, got {type(f).__name__}")
        seekable = getattr(f, "seekable", None)
        if seekable is None or not seekable():
            return io.BytesIO(f.read()), False
        return f, False

    def __exit__(self, *exc):
        if self.owned is not None:
            self.owned.close()
        return False


def _open_archive(handle, where: str) -> _zip.ArchiveReader:
    start = handle.tell()
    head = handle.read(4)
    handle.seek(start)
    if not head:
        raise _zip.ArchiveError(f"{where}: the file is empty")
    if head != _ZIP_MAGIC:
        if head[:1] == b"\x80" or head[:1] == b"c":
            raise _zip.ArchiveError(
                f"{where}: the file is a bare pickle or PyTorch's legacy (pre-1.6) format, which opweave does not "
                "read; re-save it with a current torch.save"
            )
        raise _zip.ArchiveError(f"{where}: not a PyTorch-format file (it starts with {head!r}, not a zip header)")
    reader = _zip.ArchiveReader(handle, where)
    if "data.pkl" not in reader:
        if "constants.pkl" in reader or any(n.startswith("code/") for n in reader.names()):
            raise _zip.ArchiveError(f"{where}: the file is a TorchScript archive (torch.jit.save), not torch.save's")
        raise _zip.ArchiveError(f"{where}: the archive has no {reader.prefix}data.pkl record")
    return reader


def _is_foreign_byte_order(reader: _zip.ArchiveReader, where: str) -> bool:
    if "byteorder" not in reader:
        return False  # files from before PyTorch 1.12 have no byteorder record: native order
    order = reader.read_small("byteorder", limit=16).decode("ascii", "replace")
    if order not in ("little", "big"):
        raise _zip.ArchiveError(f"{where}: unknown byte order {order!r} in the archive's byteorder record")
    return order != sys.byteorder
