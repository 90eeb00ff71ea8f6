"""The streaming record walk: record boundaries, special user records, zstd streams.

A walk turns a byte stream into :class:`Chunk` batches of record start offsets, in file
order.  It never decodes record bodies: the index (``index.py``) reads the few fields it
needs from the chunk with numpy, and ``records.py`` decodes a record only when asked.

Records that change how the rest is read are handled here, in order (docs/format.md:
"Pipe mode", "User records", "Compression", "Type 83"):
HEADER_ATTR and HEADER_FEATURE (pipe mode), HEADER_TRACING_DATA and AUXTRACE (payload
outside the record), COMPRESSED and COMPRESSED2 (a zstd stream per input stream), and
type 83 told apart as COMPRESSED2 or KMOD_SEC_MAP.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

import numpy as np
import zstandard

from .constants import RecordType, type_name
from .errors import PerfDataError
from .sources import Source, SpillSource
from .speculate import SPECULATE_MIN, speculate
from .type83 import classify_83

T_ATTR = RecordType.HEADER_ATTR
T_TRACING = RecordType.HEADER_TRACING_DATA
T_AUXTRACE = RecordType.AUXTRACE
T_FEATURE = RecordType.HEADER_FEATURE
T_COMPRESSED = RecordType.COMPRESSED
T_83 = RecordType.COMPRESSED2
SPECIAL = frozenset({T_ATTR, T_TRACING, T_AUXTRACE, T_FEATURE, T_COMPRESSED, T_83})
BATCH = 1 << 16
FIRST_BATCH = 1 << 12
STREAM_READ = 4 << 20
SLOW_RUN = 256  # records the plain loop takes before numpy tries again
TRACING_KEEP_MAX = 64 << 20  # tracing-data blobs larger than this are skipped unread
TEXT_TAIL_MAX = 64 << 10  # a text tail longer than this is not perf's messages


def text_tail(tail: bytes | memoryview) -> str | None:
    """The text of a tail that is printable text (perf's own messages appended to a
    pipe-mode file by ``perf record -o - ... > file 2>&1``), else None."""
    raw = bytes(tail[:TEXT_TAIL_MAX + 1])
    if len(raw) < 4 or len(raw) > TEXT_TAIL_MAX:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not all(c.isprintable() or c in "\n\r\t" for c in text):
        return None
    return text


@dataclass
class Chunk:
    """Whole records of one source, in order.

    ``buf[offs[i] - base]`` is the first byte of record *i*; ``offs`` are positions in the
    source ``src`` (the file itself, a spill of standard input, or a zstd spill).
    ``outer`` is the file offset of the COMPRESSED record that held these records (None
    for records read straight from the file).  ``override`` maps a chunk index to the
    index type code for records whose raw type does not name them (type 83).
    """

    src: int
    buf: bytes | bytearray | memoryview
    base: int
    offs: array[int]
    outer: int | None = None
    override: dict[int, int] = field(default_factory=dict)


@dataclass
class Special:
    """How the walk treats one special record: its index type (type 83 told apart),
    whether the chunk ends after it, payload bytes outside the record, zstd data."""

    kind: int
    flush: bool = False
    payload: int = 0
    zstd: bytes | memoryview | None = None


@dataclass
class StreamState:
    """Per input stream: its zstd decompressor and carried partial record."""

    name: str
    dctx: object | None = None
    carry: bytes = b""
    spill: SpillSource | None = None
    spill_src: int = -1
    broken: bool = False
    # (spill position of the first record of a compressed record's output, outer offset)
    outer_map: list[tuple[int, int]] = field(default_factory=list)


class Walker:
    """Walks the record streams of one recording and yields :class:`Chunk` batches.

    ``on_attr(raw, offset)`` and ``on_feature(raw, offset)`` receive the HEADER_ATTR and
    HEADER_FEATURE records as they are met (pipe mode); errors are appended to
    ``errors`` and end the stream they occur in.
    """

    def __init__(self, order: str, sources: list[Source], errors: list[PerfDataError],
                 on_attr: Callable[[bytes, int], None] | None = None,
                 on_feature: Callable[[bytes, int], None] | None = None,
                 spill: bool = True) -> None:
        self.order = order
        self.hdr = struct.Struct(order + "IHH")
        self.hdr2 = struct.Struct(order + "I2xH")  # type and size only: the hot loop
        self.u32 = struct.Struct(order + "I")
        self.u64 = struct.Struct(order + "Q")
        self.sources = sources
        self.errors = errors
        self.on_attr = on_attr
        self.on_feature = on_feature
        self.spill = spill
        self.states: list[StreamState] = []
        self.warnings: list[str] = []
        self.on_tracing: Callable[[bytes, int], None] | None = None

    # -- the tight loop ---------------------------------------------------------------
    def _scan(self, buf: bytes | memoryview, pos: int, end: int, offs: array[int],
              limit: int) -> tuple[int, int]:
        """Append record starts from ``pos`` until a special record, ``end`` or ``limit``.

        Returns (new position, status): 0 reached ``end`` or an incomplete record, 1 a
        special record starts at the returned position, -1 a record smaller than its
        header starts there, 2 ``limit`` records are in ``offs``.
        """
        unpack = self.hdr2.unpack_from
        app = offs.append
        special = SPECIAL
        stop = end - 8
        k = limit - len(offs)
        if k <= 0:
            return pos, 2
        while pos <= stop:
            t, size = unpack(buf, pos)
            if size < 8:
                return pos, -1
            nxt = pos + size
            if nxt > end:
                return pos, 0
            if t > 63 and t in special:
                return pos, 1
            app(pos)
            pos = nxt
            k -= 1
            if not k:
                return pos, 2
        return pos, 0

    def _err(self, offset: int, message: str, name: str | None = None) -> None:
        self.errors.append(PerfDataError(offset, message, name))

    def _text_tail(self, tail: bytes | memoryview, offset: int) -> bool:
        """A warning instead of an error when the bytes after the last record are text."""
        text = text_tail(tail)
        if text is None:
            return False
        quoted = " / ".join(ln.strip() for ln in text.splitlines() if ln.strip())[:300]
        msg = (f"{len(tail)} bytes of text after the last record (offset {offset:#x}): "
               f"{quoted!r}; probably perf's own messages written into the file "
               "(perf record -o - ... > file 2>&1): ignored")
        if msg not in self.warnings:
            self.warnings.append(msg)
        return True

    # -- file-like buffers (mmap) -----------------------------------------------------
    def walk_buffer(self, src: int, buf: bytes | memoryview, start: int, end: int,
                    state: StreamState) -> Iterator[Chunk]:
        """Walk a whole in-memory (mmapped) stream ``buf[start:end]``."""
        pos = start
        offs = array("q")
        override: dict[int, int] = {}
        batch = FIRST_BATCH  # a small first batch: the first screen comes sooner
        while True:
            if end - pos >= SPECULATE_MIN:
                pos = speculate(buf, pos, end, offs, self.order, batch)
            if len(offs) < batch:
                pos, status = self._scan(buf, pos, end, offs, min(batch, len(offs) + SLOW_RUN))
            else:
                status = 2
            if status == 2:
                if len(offs) >= batch:
                    yield Chunk(src, buf, 0, offs, None, override)
                    offs, override = array("q"), {}
                    batch = BATCH
                continue
            if status in (0, -1) and pos < end and self._text_tail(buf[pos:end], pos):
                break
            if status == 0:
                if pos < end:
                    left = end - pos
                    if left < 8:
                        self._err(pos, f"{left} stray bytes after the last record")
                    else:
                        size = self.hdr.unpack_from(buf, pos)[2]
                        self._err(pos, f"record of {size} bytes runs past the end of the "
                                  f"data ({left} bytes left): truncated recording")
                break
            if status == -1:
                t, _m, size = self.hdr.unpack_from(buf, pos)
                self._err(pos, f"record of size {size} (type {t}) is smaller than its "
                          "8-byte header: corrupt data, stopping here")
                break
            # a special record at pos
            t, _m, size = self.hdr.unpack_from(buf, pos)
            raw = buf[pos:pos + size]
            sp = self._special(t, raw)
            if sp.kind != t:
                override[len(offs)] = sp.kind
            offs.append(pos)
            nxt = pos + size
            if sp.flush:
                yield Chunk(src, buf, 0, offs, None, override)
                offs, override = array("q"), {}
            self._after(t, sp, raw, pos)
            if sp.payload:
                if nxt + sp.payload > end:
                    self._err(pos, f"{type_name(t)} payload of {sp.payload} bytes runs past "
                              "the end of the data")
                    yield Chunk(src, buf, 0, offs, None, override)
                    return
                if t == T_TRACING and self.on_tracing is not None:
                    self.on_tracing(bytes(buf[nxt:nxt + sp.payload]), pos)
                nxt += sp.payload
            if sp.zstd is not None:
                yield from self._decompress(state, sp.zstd, pos)
            pos = nxt
        if offs:
            yield Chunk(src, buf, 0, offs, None, override)

    def _special(self, t: int, raw: bytes | memoryview) -> Special:
        """What a special record (type in SPECIAL) means for the walk: the one dispatch of
        the buffer walk and the stream walk."""
        if t in (T_ATTR, T_FEATURE):
            return Special(t, flush=True)
        if t in (T_TRACING, T_AUXTRACE):
            return Special(t, payload=self._payload(t, raw))
        if t in (T_COMPRESSED, T_83):
            kind = T_COMPRESSED if t == T_COMPRESSED else classify_83(raw, self.order)
            if kind == T_COMPRESSED:
                return Special(kind, flush=True, zstd=raw[8:])
            if kind == T_83:
                return Special(kind, flush=True, zstd=raw[16:16 + self._c2_size(raw)])
            return Special(kind)
        return Special(t)

    def _after(self, t: int, sp: Special, raw: bytes | memoryview, pos: int) -> None:
        """Effects of a special record once the records before it are out (new attrs and
        features apply to the records after it)."""
        if t in (T_ATTR, T_FEATURE):
            cb = self.on_attr if t == T_ATTR else self.on_feature
            if cb:
                cb(bytes(raw), pos)

    def _payload(self, t: int, raw: bytes | memoryview) -> int:
        """Bytes that follow a HEADER_TRACING_DATA (u32 at +8) or AUXTRACE (u64 at +8)
        record outside its ``header.size`` (docs/format.md, "User records")."""
        if t == T_TRACING:
            return self.u32.unpack_from(raw, 8)[0] if len(raw) >= 12 else 0
        return self.u64.unpack_from(raw, 8)[0] if len(raw) >= 16 else 0

    def _c2_size(self, raw: bytes | memoryview) -> int:
        size = len(raw)
        ds = int(self.u64.unpack_from(raw, 8)[0])
        if 16 + ds <= size < 16 + ds + 8:
            return ds
        return size - 16

    # -- zstd -------------------------------------------------------------------------
    def _decompress(self, st: StreamState, payload: bytes | memoryview,
                    outer: int) -> Iterator[Chunk]:
        if st.broken:
            return
        if st.dctx is None:
            st.dctx = zstandard.ZstdDecompressor().decompressobj()
            if self.spill:
                st.spill = SpillSource(st.name + " (decompressed)")
                st.spill_src = len(self.sources)
                self.sources.append(st.spill)
        data = bytes(payload)
        out = []
        try:
            while data:
                out.append(st.dctx.decompress(data))  # type: ignore[attr-defined]
                data = st.dctx.unused_data if st.dctx.eof else b""  # type: ignore[attr-defined]
                if data or st.dctx.eof:  # type: ignore[attr-defined]
                    st.dctx = zstandard.ZstdDecompressor().decompressobj()
        except zstandard.ZstdError as e:
            st.broken = True
            self._err(outer, f"zstd data cannot be decompressed ({e}); the compressed "
                      "records of this stream are skipped from here on")
            return
        buf = st.carry + b"".join(out)
        spill_base = (st.spill.size if st.spill else 0)
        offs = array("q")
        pos, status = self._scan_all(buf, offs)
        if status == -1:
            t, _m, size = self.hdr.unpack_from(buf, pos)
            self._err(outer, f"decompressed record of size {size} (type {t}) is smaller "
                      "than its header: corrupt compressed data")
            st.broken = True
        src = st.spill_src
        if offs:
            st.outer_map.append((spill_base, outer))
            if st.spill is not None:
                st.spill.append(buf[:pos])
            np.frombuffer(offs, dtype=np.int64)[:] += spill_base  # spill positions
            yield Chunk(src, buf, spill_base, offs, outer)
        elif st.spill is not None and pos:
            st.spill.append(buf[:pos])
        st.carry = b"" if st.broken else buf[pos:]

    def _scan_all(self, buf: bytes, offs: array[int]) -> tuple[int, int]:
        """Scan decompressed bytes: every type is plain data here."""
        unpack = self.hdr.unpack_from
        pos, end = 0, len(buf)
        while pos + 8 <= end:
            if end - pos >= SPECULATE_MIN:
                pos = speculate(buf, pos, end, offs, self.order, len(offs) + (1 << 30))
                if pos + 8 > end:
                    break
            _t, _m, size = unpack(buf, pos)
            if size < 8:
                return pos, -1
            if pos + size > end:
                break
            offs.append(pos)
            pos += size
        return pos, 0

    def finish_stream(self, st: StreamState, end_offset: int) -> None:
        if st.carry and not st.broken:
            self._err(end_offset, f"{len(st.carry)} bytes of a record left undecoded at the "
                      "end of the compressed data")

    # -- streams (stdin) ----------------------------------------------------------------
    def walk_stream(self, src: int, f: BinaryIO, start: int, state: StreamState,
                    spill: SpillSource | None, head: bytes = b"") -> Iterator[Chunk]:
        """Walk a non-seekable stream through a bounded buffer.

        ``head`` holds bytes already read (the pipe header); positions are stream
        offsets, and ``spill`` (if any) receives a copy of every byte read so records
        can be read back by position.
        """
        buf = head
        base = 0  # stream offset of buf[0]
        pos = start
        skip = 0  # payload bytes still to skip (TRACING_DATA / AUXTRACE)
        keep: list[bytes] | None = None  # tracing-data payload being collected
        keep_at = 0
        eof = False
        while True:
            if not eof and (len(buf) - (pos - base) < STREAM_READ):
                more = f.read(STREAM_READ)
                if not more:
                    eof = True
                else:
                    if spill is not None:
                        spill.append(more)
                    # drop what was consumed, keep the tail
                    cut = pos - base
                    buf = bytes(buf[cut:]) + more
                    base = pos
            if skip:
                have = len(buf) - (pos - base)
                n = min(skip, have)
                if keep is not None:
                    keep.append(bytes(buf[pos - base:pos - base + n]))
                pos += n
                skip -= n
                if not skip and keep is not None:
                    if self.on_tracing is not None:
                        self.on_tracing(b"".join(keep), keep_at)
                    keep = None
                if skip and eof:
                    self._err(pos, f"{skip} payload bytes missing at the end of the stream")
                    return
                continue
            end = base + len(buf)
            view = memoryview(buf)
            offs = array("q")
            rel_pos = pos - base
            if len(buf) - rel_pos >= SPECULATE_MIN:  # the numpy walk, as for a file
                rel_pos = speculate(view, rel_pos, len(buf), offs, self.order, BATCH)
            if len(offs) < BATCH:
                rel_pos, status = self._scan(view, rel_pos, len(buf), offs, BATCH)
            else:
                status = 2
            newpos = base + rel_pos
            if offs:
                np.frombuffer(offs, dtype=np.int64)[:] += base  # stream offsets
                yield Chunk(src, buf, base, offs)
            pos = newpos
            if status == -1 and not eof:  # text at the end (see text_tail)? read it all
                rest = [bytes(buf[pos - base:])]
                got = len(rest[0])
                while got <= TEXT_TAIL_MAX:
                    more = f.read(STREAM_READ)
                    if not more:
                        eof = True
                        break
                    if spill is not None:
                        spill.append(more)
                    rest.append(more)
                    got += len(more)
                buf, base = b"".join(rest), pos
            if status == -1 and eof and self._text_tail(buf[pos - base:], pos):
                return
            if status == -1:
                t, _m, size = self.hdr.unpack_from(buf, pos - base)
                self._err(pos, f"record of size {size} (type {t}) is smaller than its "
                          "8-byte header: corrupt data, stopping here")
                return
            if status == 2:
                continue
            if status == 0:
                if eof:
                    if pos < end and not self._text_tail(buf[pos - base:], pos):
                        self._err(pos, f"the stream ends inside a record ({end - pos} "
                                  "bytes left): truncated recording")
                    return
                continue
            # special record
            t, _m, size = self.hdr.unpack_from(buf, pos - base)
            raw = bytes(buf[pos - base:pos - base + size])
            sp = self._special(t, raw)
            override = {0: sp.kind} if sp.kind != t else {}
            yield Chunk(src, buf, base, array("q", [pos]), None, override)
            self._after(t, sp, raw, pos)
            if sp.payload:
                skip = sp.payload
                if t == T_TRACING and skip <= TRACING_KEEP_MAX:
                    keep, keep_at = [], pos
            if sp.zstd is not None:
                yield from self._decompress(state, sp.zstd, pos)
            pos += size
