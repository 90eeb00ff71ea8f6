"""The file-mode header: magic, the perf_file_header, attrs and their ids, the feature
table (docs/format.md, "File header" and "Features")."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from .attr import EventAttr, parse_attr
from .constants import (
    FILE_HEADER_SIZE,
    MAGIC_BE,
    MAGIC_LE,
    MAGIC_V1,
    OLD_FILE_HEADER_SIZE,
    PIPE_HEADER_SIZE,
    Feature,
    feature_name,
)
from .errors import NotPerfData, PerfDataError
from .schemas import layouts


def detect(head: bytes, where: str) -> tuple[str, str]:
    """(byte order, "file" | "pipe") from the first 16 bytes."""
    if len(head) < 16:
        raise NotPerfData(0, f"{len(head)} bytes: too short for a perf.data header", where)
    if head[:8] == MAGIC_V1:
        raise NotPerfData(0, "legacy perf.data v1 (magic PERFFILE): written by perf before "
                          "2.6.x; not supported, re-record with a newer perf", where)
    magic = struct.unpack_from("<Q", head)[0]
    if magic == MAGIC_LE:
        order = "<"
    elif magic == MAGIC_BE:
        order = ">"
    else:
        raise NotPerfData(0, f"not a perf.data file (magic {head[:8]!r})", where)
    size = layouts(order).pipe_header.parse(head[:16]).size  # magic, then the header size
    if size == PIPE_HEADER_SIZE:
        return order, "pipe"
    if size in (FILE_HEADER_SIZE, OLD_FILE_HEADER_SIZE):
        return order, "file"
    raise NotPerfData(8, f"header size {size} is neither 16 (pipe) nor 104 (file)", where)


@dataclass
class FileHeader:
    """What the header of a file-mode recording says, and what was wrong with it.

    ``features`` holds each feature section's raw bytes by feature bit (parsed by the
    recording); ``data_start``/``data_end`` bound the records.
    """

    order: str
    path: str
    header: dict[str, Any] = field(default_factory=dict)
    feature_bits: list[int] = field(default_factory=list)
    attrs: list[EventAttr] = field(default_factory=list)
    features: dict[int, bytes] = field(default_factory=dict)
    feature_offsets: dict[int, int] = field(default_factory=dict)  # file offset by bit
    data_start: int = 0
    data_end: int = 0
    interrupted: bool = False
    errors: list[PerfDataError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def read(self, buf: memoryview, path: str) -> None:
        L = layouts(self.order)
        size = len(buf)
        hsize = L.pipe_header.parse(bytes(buf[:16])).size
        if size < hsize:
            raise NotPerfData(0, f"file of {size} bytes is shorter than its {hsize}-byte "
                              "header", path)
        raw = bytes(buf[:FILE_HEADER_SIZE]).ljust(FILE_HEADER_SIZE, b"\0")
        h = L.file_header.parse(raw)
        if hsize == OLD_FILE_HEADER_SIZE:  # no feature bitmap
            h.adds_features = [0, 0, 0, 0]
        self.header = {
            "size": hsize, "attr_size": h.attr_size,
            "attrs": {"offset": h.attrs.offset, "size": h.attrs.size},
            "data": {"offset": h.data.offset, "size": h.data.size},
        }
        self.feature_bits = self._feature_bits(h.adds_features)
        self._read_attrs(buf, h.attr_size, h.attrs.offset, h.attrs.size, path)
        d_off, d_size = h.data.offset, h.data.size
        if d_off < hsize or d_off > size:
            raise NotPerfData(40, f"data offset {d_off} lies outside the file "
                              f"({size} bytes)", path)
        if d_size == 0:
            self.warnings.append("data.size is 0: perf record did not finish cleanly; "
                                 "reading records to the end of the file")
            self.interrupted = True
            self.data_start, self.data_end = d_off, size
            return
        self.interrupted = False
        end = d_off + d_size
        if end > size:
            self.errors.append(PerfDataError(48, f"data section ({d_size} bytes at {d_off}) "
                                             f"runs past the end of the file ({size} bytes); "
                                             "reading what is there", path))
            self.data_start, self.data_end = d_off, size
            return
        self._read_features(buf, end)
        self.data_start, self.data_end = d_off, end

    def _feature_bits(self, words: list[int]) -> list[int]:
        """Set bits of the bitmap, written as unsigned longs: four u64 words, or on a
        32-bit big-endian writer eight u32 words (perf's test: is HOSTNAME set?)."""
        def bits_of(words: list[int], width: int) -> list[int]:
            return [w * width + b for w, v in enumerate(words) for b in range(width)
                    if v >> b & 1]
        bits = bits_of(words, 64)
        if self.order == ">" and Feature.HOSTNAME not in bits:
            # the same bytes as eight BE u32: each BE u64 is its high word, then its low one
            alt = bits_of([x for w in words for x in (w >> 32, w & 0xFFFFFFFF)], 32)
            if Feature.HOSTNAME in alt:
                return alt
        return bits

    def _read_attrs(self, buf: memoryview, attr_size: int, off: int, size: int,
                    path: str) -> None:
        total = len(buf)
        if attr_size < 64 + 16:
            raise NotPerfData(16, f"attr_size {attr_size} is smaller than the smallest attr "
                              "entry (80)", path)
        if off + size > total:
            raise NotPerfData(24, f"attrs section ({size} bytes at {off}) runs past the end "
                              f"of the file ({total} bytes)", path)
        n = size // attr_size
        file_attr = layouts(self.order).file_attr
        for i in range(n):
            p = off + i * attr_size
            entry = file_attr.parse(bytes(buf[p:p + attr_size]), attr_size=attr_size)
            try:
                a = parse_attr(entry.attr, self.order)
            except ValueError as e:
                raise NotPerfData(p, f"attr {i}: {e}", path) from None
            ids_off, ids_size = entry.ids.offset, entry.ids.size
            if ids_off + ids_size > total or ids_size % 8:
                self.errors.append(PerfDataError(p + attr_size - 16, f"attr {i}: ids "
                                   f"section ({ids_size} bytes at {ids_off}) is out of range",
                                   path))
            else:  # one u64 per id; struct, not construct: arrays may be long
                a.ids = list(struct.unpack_from(f"{self.order}{ids_size // 8}Q", buf,
                                                ids_off))
            self.attrs.append(a)

    def _read_features(self, buf: memoryview, table: int) -> None:
        total = len(buf)
        section = layouts(self.order).section
        for k, bit in enumerate(self.feature_bits):
            p = table + 16 * k
            if p + 16 > total:
                self.errors.append(PerfDataError(p, "feature table runs past the end of the "
                                                 "file", self.path))
                break
            s = section.parse(bytes(buf[p:p + 16]))
            off, size = s.offset, s.size
            if off == 0 and size == 0:
                continue
            if off + size > total:
                self.errors.append(PerfDataError(p, f"feature {feature_name(bit)}: section "
                                   f"({size} bytes at {off}) runs past the end of the file",
                                   self.path))
                continue
            self.features[bit] = bytes(buf[off:off + size])
            self.feature_offsets[bit] = off


def read_file_header(buf: memoryview, path: str, order: str) -> FileHeader:
    """Parse the header of the file-mode recording in ``buf``; raises NotPerfData when the
    records cannot be found, and lists lesser problems in ``errors``/``warnings``."""
    h = FileHeader(order, path)
    h.read(buf, path)
    return h
