"""PyTorch's zip container: uncompressed records under one top-level folder, data aligned to 64 bytes.

Writing goes through :mod:`zipfile` (zip64 when a record needs it). Each record's
local header carries an extra field ``FB`` of padding bytes so that the record's
data starts at a multiple of :data:`ALIGNMENT` from the start of the file, as
PyTorch's writer does: a storage can then be mapped from the file (``mmap=True``)
with its elements aligned.

Reading parses the central directory with :mod:`zipfile`, then reads each stored
record straight from its byte range into a buffer (one copy, no CRC pass, as
``torch.load``) or maps it. Every offset and size is checked against the file's
size before anything is allocated, so a damaged or hostile archive raises
``RuntimeError`` instead of allocating what its headers claim.
"""

from __future__ import annotations

import mmap as _mmap
import os
import struct
import zipfile

import numpy as np

ALIGNMENT = 64
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")  # signature ... name length, extra length
_LOCAL_MAGIC = b"PK\x03\x04"
_PAD_ID = b"FB"
_ZIP64_EXTRA = 20  # the zip64 extra field zipfile appends to a local header (id, size, 2 x uint64)


class ArchiveError(RuntimeError):
    """The file is not a readable PyTorch-format archive (damaged, truncated, or another format)."""


class ArchiveWriter:
    """Writes records ``<name>/<record>`` into a zip file, each one's data aligned to 64 bytes."""

    def __init__(self, fileobj, archive_name: str):
        self._zip = zipfile.ZipFile(fileobj, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True)
        self._prefix = archive_name + "/"

    def write(self, name: str, data) -> None:
        """Write one record; ``data`` is bytes or a C-contiguous uint8 NumPy array."""
        view = memoryview(data).cast("B") if not isinstance(data, bytes) else data
        info = zipfile.ZipInfo(self._prefix + name, date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED
        info.file_size = len(view)
        zip64 = info.file_size * 1.05 > zipfile.ZIP64_LIMIT
        start = self._zip.fp.tell()
        header = _LOCAL_HEADER.size + len(info.filename.encode("utf-8")) + (_ZIP64_EXTRA if zip64 else 0)
        pad = -(start + header + 4) % ALIGNMENT  # 4: the padding field's own id and length
        info.extra = _PAD_ID + struct.pack("<H", pad) + b"Z" * pad
        with self._zip.open(info, "w", force_zip64=zip64) as out:
            out.write(view)

    def close(self) -> None:
        """Write the central directory."""
        self._zip.close()


class Record:
    """Where one stored record's bytes are: ``offset`` in the file, ``size`` bytes."""

    __slots__ = ("offset", "size", "info")

    def __init__(self, offset: int, size: int, info: zipfile.ZipInfo):
        self.offset, self.size, self.info = offset, size, info


class ArchiveReader:
    """Reads the records of a PyTorch-format zip archive from a seekable binary file."""

    def __init__(self, fileobj, where: str):
        self._f = fileobj
        self._where = where
        try:
            fileobj.seek(0, os.SEEK_END)
            self._file_size = fileobj.tell()
            fileobj.seek(0)
            self._zip = zipfile.ZipFile(fileobj)
            infos = self._zip.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError, struct.error) as exc:
            raise ArchiveError(f"{where}: not a readable zip archive ({exc})") from None
        if not infos:
            raise ArchiveError(f"{where}: the zip archive is empty")
        first = infos[0].filename
        if "/" not in first:
            raise ArchiveError(f"{where}: record {first!r} is not inside the archive's top-level folder")
        self.prefix = first.split("/", 1)[0] + "/"
        self._infos = {
            i.filename[len(self.prefix) :]: i for i in infos if i.filename.startswith(self.prefix) and not i.is_dir()
        }
        self._records: dict[str, Record] = {}

    def __contains__(self, name: str) -> bool:
        return name in self._infos

    def names(self) -> list[str]:
        """The record names (without the archive folder)."""
        return list(self._infos)

    def record(self, name: str) -> Record:
        """Locate record ``name``'s bytes (checked to lie inside the file)."""
        found = self._records.get(name)
        if found is not None:
            return found
        info = self._infos.get(name)
        if info is None:
            raise ArchiveError(f"{self._where}: the archive has no record {self.prefix}{name}")
        try:
            self._f.seek(info.header_offset)
            raw = self._f.read(_LOCAL_HEADER.size)
        except (OSError, ValueError) as exc:
            raise ArchiveError(f"{self._where}: cannot read record {name}: {exc}") from None
        if len(raw) != _LOCAL_HEADER.size:
            raise ArchiveError(f"{self._where}: record {name} is truncated (its header lies past the end of the file)")
        if info.compress_type != zipfile.ZIP_STORED:
            raise ArchiveError(
                f"{self._where}: record {name} is compressed (method {info.compress_type}); "
                "PyTorch-format archives store their records uncompressed"
            )
        fields = _LOCAL_HEADER.unpack(raw)
        if fields[0] != _LOCAL_MAGIC:
            raise ArchiveError(f"{self._where}: record {name} has a damaged local header (wrong magic)")
        offset = info.header_offset + _LOCAL_HEADER.size + fields[-2] + fields[-1]
        size = info.compress_size
        if size != info.file_size:
            raise ArchiveError(f"{self._where}: record {name} is damaged (stored size {size} != size {info.file_size})")
        if offset + size > self._file_size:
            raise ArchiveError(
                f"{self._where}: record {name} is truncated: it needs bytes {offset}..{offset + size} "
                f"but the file has {self._file_size}"
            )
        found = self._records[name] = Record(offset, info.file_size, info)
        return found

    def read_small(self, name: str, limit: int | None = None) -> bytes:
        """A small record's bytes (through zipfile, which checks its CRC)."""
        info = self._infos.get(name)
        if info is None:
            raise ArchiveError(f"{self._where}: the archive has no record {self.prefix}{name}")
        self.record(name)  # bounds checks before zipfile reads anything
        if limit is not None and info.file_size > limit:
            raise ArchiveError(f"{self._where}: record {name} declares {info.file_size} bytes (more than {limit})")
        try:
            return self._zip.read(info)
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, struct.error) as exc:
            raise ArchiveError(f"{self._where}: cannot read record {name}: {exc}") from None

    def read_array(self, name: str) -> np.ndarray:
        """A record's bytes as a new writable uint8 array."""
        rec = self.record(name)
        out = np.empty(rec.size, np.uint8)
        if rec.size:
            self._f.seek(rec.offset)
            got = self._f.readinto(memoryview(out))
            if got != rec.size:
                raise ArchiveError(f"{self._where}: record {name} is truncated ({got} of {rec.size} bytes)")
        return out

    def map_array(self, name: str, mapping) -> np.ndarray:
        """A record's bytes as a view of ``mapping`` (a copy-on-write map of the whole file)."""
        rec = self.record(name)
        return np.frombuffer(mapping, np.uint8, count=rec.size, offset=rec.offset)

    def mapping(self):
        """A private (copy-on-write) map of the whole file: writes to loaded tensors never reach the file."""
        try:
            fileno = self._f.fileno()
        except (AttributeError, OSError, ValueError):
            raise ValueError(f"{self._where}: mmap=True needs a file path or a file object with a descriptor") from None
        if self._file_size == 0:
            raise ArchiveError(f"{self._where}: the file is empty")
        return _mmap.mmap(fileno, 0, access=_mmap.ACCESS_COPY)
