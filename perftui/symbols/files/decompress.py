"""Read a file from a recording's world safely: regular files only, size-capped, and
decompressed by content (xz, gzip, zstd) with a cap on the output.

Every problem becomes one :class:`FileError` line naming the file; callers wrap it in
their own error type.
"""

from __future__ import annotations

import io
import lzma
import os
import stat
import zlib
from collections.abc import Callable

from ..errors import FileError

ELF_MAGIC = b"\x7fELF"
_XZ_MAGIC = b"\xfd7zXZ\x00"
_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

_CHUNK = 1 << 20  # decompression output step
_XZ_MEMLIMIT = 128 << 20  # xz -9 needs about 65 MiB; the kernel uses a 1 MiB dictionary
_ZSTD_MAX_WINDOW_LOG = 27  # libzstd's own default limit (128 MiB)
_ZSTD_MAX_EXPANSION = 1 << 15  # an RLE block: 4 input bytes give up to 128 KiB of output


class MemStream:
    """A read-only seekable stream over a buffer, without copying it (for pyelftools)."""

    def __init__(self, buf: bytes | bytearray) -> None:
        self._view = memoryview(buf)
        self._pos = 0

    def seek(self, pos: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: len(self._view)}[whence]
        self._pos = max(0, base + pos)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def read(self, n: int = -1) -> bytes:
        end = len(self._view) if n is None or n < 0 else min(len(self._view), self._pos + n)
        data = bytes(self._view[self._pos : end]) if end > self._pos else b""
        self._pos = max(self._pos, end)
        return data


def read_capped(path: str, max_size: int) -> bytes:
    """The bytes of a regular file, at most ``max_size`` of them."""
    fd, _size = open_regular(path, max_size, FileError)
    try:
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(_CHUNK, max_size + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_size:
                raise FileError(path, f"file is over the {mib(max_size)} cap")
    except OSError as e:
        raise FileError(path, f"cannot read: {e.strerror or e}") from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def open_regular(path: str, max_size: int, error: type[FileError] = FileError
                 ) -> tuple[int, int]:
    """Open a regular file of at most ``max_size`` bytes (never a FIFO or a device: the
    open does not block, and the file opened is checked again); return ``(fd, size)``.
    Problems raise ``error(path, problem)``."""
    try:
        st = os.stat(path)
    except (OSError, ValueError) as e:
        raise error(path, f"cannot stat: {getattr(e, 'strerror', None) or e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise error(path, f"not a regular file ({file_kind(st.st_mode)})")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    flags |= getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise error(path, f"cannot open: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)  # the file opened may not be the one stat()ed
        if not stat.S_ISREG(st.st_mode):
            raise error(path, f"not a regular file ({file_kind(st.st_mode)})")
        if st.st_size > max_size:
            raise error(path, f"file is {st.st_size} bytes, over the {mib(max_size)} cap")
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


def file_kind(mode: int) -> str:
    for test, word in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return word
    return "not a file"


def mib(n: int) -> str:
    return f"{n / (1 << 20):g} MiB" if n >= 1 << 20 else f"{n} bytes"


class _Sink:
    """Collects decompressed output, failing once it passes the cap or is not ELF."""

    def __init__(self, path: str, fmt: str, limit: int, expect: bytes = b"") -> None:
        self.path, self.fmt, self.limit, self.expect = path, fmt, limit, expect
        self.buf = bytearray()

    @property
    def room(self) -> int:
        """How much more output to ask for: up to one byte past the cap, in steps."""
        return min(_CHUNK, self.limit + 1 - len(self.buf))

    def add(self, chunk: bytes) -> None:
        had = len(self.buf)
        self.buf += chunk
        if len(self.buf) > self.limit:
            raise FileError(
                self.path, f"{self.fmt} data decompresses to over the {mib(self.limit)} cap"
            )
        n = len(self.expect)
        if n and had < n <= len(self.buf) and self.buf[:n] != self.expect:
            raise FileError(self.path, f"{self.fmt} data does not hold an ELF file")


def _streams(path: str, data: bytes, magic: bytes, fmt: str,
             one: Callable[[bytes], bytes]) -> None:
    """Back-to-back compressed streams (zero padding between them is allowed): ``one``
    decompresses the stream at the start of its argument and returns what follows it."""
    while True:
        rest = one(data).lstrip(b"\0")
        if not rest:
            return
        if not rest.startswith(magic):
            raise FileError(path, f"garbage after the {fmt} data")
        data = rest


def _unxz(path: str, data: bytes, sink: _Sink) -> None:
    def one(pending: bytes) -> bytes:
        d = lzma.LZMADecompressor(format=lzma.FORMAT_XZ, memlimit=_XZ_MEMLIMIT)
        while not d.eof:
            if d.needs_input and not pending:
                raise FileError(path, "xz data is truncated")
            sink.add(d.decompress(pending, max_length=sink.room))
            pending = b""
        return d.unused_data

    _streams(path, data, _XZ_MAGIC, "xz", one)


def _ungzip(path: str, data: bytes, sink: _Sink) -> None:
    def one(pending: bytes) -> bytes:
        d = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        while not d.eof:
            chunk = d.decompress(pending, sink.room)
            pending = d.unconsumed_tail
            if not chunk and not pending:
                raise FileError(path, "gzip data is truncated")
            sink.add(chunk)
        return d.unused_data

    _streams(path, data, _GZIP_MAGIC, "gzip", one)


def _unzstd(path: str, data: bytes, sink: _Sink) -> None:
    import zstandard  # optional at import time of the package

    wlog = max(10, min(_ZSTD_MAX_WINDOW_LOG, sink.limit.bit_length()))
    dctx = zstandard.ZstdDecompressor(max_window_size=1 << wlog)
    pos = 0
    while pos < len(data):
        if data[pos : pos + 4] != _ZSTD_MAGIC:
            if not data[pos:].strip(b"\0"):
                return
            raise FileError(path, "garbage after the zstd data")
        d = dctx.decompressobj()
        # Feed small slices so that one call cannot produce unbounded output.
        while not d.eof:
            if pos >= len(data):
                raise FileError(path, "zstd data is truncated")
            step = max(16, min(_CHUNK, sink.room) // _ZSTD_MAX_EXPANSION)
            piece = data[pos : pos + step]
            pos += len(piece)
            sink.add(d.decompress(piece))
        pos -= len(d.unused_data)


_DECOMPRESSORS: tuple[tuple[bytes, str, Callable[[str, bytes, _Sink], None]], ...] = (
    (_XZ_MAGIC, "xz", _unxz),
    (_GZIP_MAGIC, "gzip", _ungzip),
    (_ZSTD_MAGIC, "zstd", _unzstd),
)


def decompress(path: str, data: bytes, max_size: int, expect: bytes = b""
               ) -> tuple[bytes | bytearray, str | None]:
    """``data`` decompressed by content magic (unchanged when not compressed), and the
    format name; ``expect``: the magic the output must start with (checked early)."""
    for magic, fmt, func in _DECOMPRESSORS:
        if data.startswith(magic):
            sink = _Sink(path, fmt, max_size, expect)
            try:
                func(path, data, sink)
            except FileError:
                raise
            except MemoryError:
                raise FileError(path, f"out of memory decompressing {fmt} data") from None
            except Exception as e:  # lzma.LZMAError, zlib.error, zstandard.ZstdError, ...
                raise FileError(path, f"bad {fmt} data: {one_line(e)}") from None
            return sink.buf, fmt
    return data, None


def one_line(e: BaseException) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text[:200]
