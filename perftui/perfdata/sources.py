"""Byte sources records are read back from: a mapped file, or a spill file (a copy of
standard input, decompressed zstd output).  Each source owns and closes what it opened."""

from __future__ import annotations

import mmap
import os
import tempfile


class Source:
    """A byte source records can be read back from by position."""

    name: str

    def read(self, pos: int, size: int) -> bytes:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:
        pass


class MmapSource(Source):
    """A file mapped read-only (or bytes already in memory); owns and closes its map."""

    def __init__(self, name: str, buf: memoryview, owned: mmap.mmap | None = None
                 ) -> None:
        self.name = name
        self.buf = buf
        self._owned = owned
        self.stat: os.stat_result | None = None  # of the file mapped (by open)
        self.path: str | None = None

    @classmethod
    def open(cls, path: str, name: str) -> MmapSource:
        """Map ``path``; raises OSError.  An empty file maps to no bytes."""
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if st.st_size == 0:
                src = cls(name, memoryview(b""))
            else:
                m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
                src = cls(name, memoryview(m), m)
        src.stat, src.path = st, path
        return src

    def read(self, pos: int, size: int) -> bytes:
        return bytes(self.buf[pos:pos + size])

    def close(self) -> None:
        if self._owned is None:
            return
        if isinstance(self.buf, memoryview):
            self.buf.release()
        try:
            self._owned.close()
        except BufferError:  # a numpy view still uses it: the map goes with the last view
            return
        self._owned = None


class SpillSource(Source):
    """An append-only temporary file: decompressed zstd output or a copy of stdin."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.file = tempfile.TemporaryFile(prefix="perftui-")  # noqa: SIM115 - lives with self
        self.size = 0
        self._map: mmap.mmap | None = None

    def append(self, data: bytes | memoryview) -> None:
        self.file.write(data)
        self.size += len(data)

    def read(self, pos: int, size: int) -> bytes:
        self.file.flush()
        return os.pread(self.file.fileno(), size, pos)

    @property
    def buf(self) -> memoryview:
        """The bytes written so far, mapped (re-mapped when the file has grown)."""
        if self._map is None or len(self._map) != self.size:
            self.file.flush()
            if self.size == 0:
                return memoryview(b"")
            self._map = mmap.mmap(self.file.fileno(), self.size, access=mmap.ACCESS_READ)
        return memoryview(self._map)

    def close(self) -> None:
        self.file.close()
