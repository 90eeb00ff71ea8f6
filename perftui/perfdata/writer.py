"""Writing recordings: file or pipe mode, either byte order, compressed or not.

Used by ``perftui inject``, the demo and the tests (big-endian files, KMOD_SEC_MAP records,
malformed files).  Records are built with the construct layouts of ``schemas.py`` (and
``sample.encode_sample`` for samples) and streamed to the output: the writer keeps no
record in memory, so it also writes the multi-GB benchmark recordings.
"""

from __future__ import annotations

import struct
from typing import Any, BinaryIO

import zstandard

from .attr import EventAttr, build_attr
from .constants import (
    FILE_HEADER_SIZE,
    MAGIC_LE,
    PIPE_HEADER_SIZE,
    Feature,
    Misc,
    RecordType,
    type_code,
)
from .features import encode_feature
from .sample import encode_sample
from .schemas import layouts

MAGIC_BYTES_LE = struct.pack("<Q", MAGIC_LE)  # b"PERFILE2"
MAGIC_BYTES_BE = MAGIC_BYTES_LE[::-1]  # "2ELIFREP": what a big-endian host writes
KMOD_SEC_MAP_FIXED = 48  # sizeof(struct perf_record_kmod_sec_map) with its header


def pad8(n: int) -> int:
    return (n + 7) & ~7


def kmod_sec_map_record(order: str, section: str, filename: str, start: int, length: int,
                        pgoff: int, id_hdr_size: int, pid: int = -1, misc: int = Misc.KERNEL,
                        layout: str = "rfc") -> bytes:
    """A KMOD_SEC_MAP record exactly as the RFC synthesizer wrote it (docs/format.md,
    "Type 83"): ``48 + round8(sec_name_len + filename_len) + id_hdr_size`` bytes, the
    strings with one gap byte between them, the rest zero.

    ``layout="picture"`` writes the "name\\0filename\\0" form of the struct comment.
    """
    L = layouts(order)
    schema = L.records.KMOD_SEC_MAP if layout == "rfc" else L.records.KMOD_SEC_MAP_PICTURE
    name, path = section.encode() + b"\0", filename.encode() + b"\0"
    size = KMOD_SEC_MAP_FIXED + pad8(len(name) + len(path)) + id_hdr_size
    body = schema.build({"pid": pid, "start": start, "len": length, "pgoff": pgoff,
                         "section": name, "filename": path, "rest": b""})
    if 8 + len(body) > size:
        raise ValueError("KMOD_SEC_MAP strings too long for the record")
    head = L.record_header.build({"type": RecordType.COMPRESSED2, "misc": misc, "size": size})
    return bytes(head + body).ljust(size, b"\0")


class RecordBuilder:
    """Builds record bytes for one byte order and set of attrs."""

    def __init__(self, order: str, attrs: list[EventAttr]) -> None:
        self.order = order
        self.attrs = attrs
        self.L = layouts(order)

    @property
    def id_hdr_size(self) -> int:
        return self.attrs[0].id_hdr_size if self.attrs else 0

    def raw(self, rtype: int, misc: int, body: bytes, trailer: bytes = b"") -> bytes:
        size = 8 + len(body) + len(trailer)
        if size > 0xFFFF:
            raise ValueError(f"record of {size} bytes does not fit in a u16 size")
        head: bytes = self.L.record_header.build({"type": rtype, "misc": misc, "size": size})
        return head + body + trailer

    def sample(self, fields: dict[str, Any], misc: int = Misc.USER, attr_idx: int = 0
               ) -> bytes:
        a = self.attrs[attr_idx]
        return self.raw(RecordType.SAMPLE, misc, encode_sample(a, self.order, fields))

    def kernel(self, name: str, fields: dict[str, Any], misc: int = 0,
               sample_id: dict[str, int] | None = None, attr_idx: int = 0) -> bytes:
        """A kernel record (types 1..22 but SAMPLE) from its field dict, body padded to 8."""
        rtype = type_code(name)
        schema = getattr(self.L.records, name)
        f = dict(fields)
        if name == "MMAP2":
            if "build_id" in f:
                bid = bytes.fromhex(f.pop("build_id"))
                f["u"] = self.L.records.mmap2_build_id.build(
                    {"build_id_size": len(bid), "build_id": bid.ljust(20, b"\0")})
                misc |= Misc.MMAP_BUILD_ID
            else:
                f["u"] = self.L.records.mmap2_inode.build(
                    {k: f.pop(k, 0) for k in ("maj", "min", "ino", "ino_generation")})
        for k in ("filename", "comm", "name", "path"):
            if isinstance(f.get(k), str):
                f[k] = f[k].encode()
        body = schema.build(f)
        body = body.ljust(pad8(len(body)), b"\0")
        a = self.attrs[attr_idx] if self.attrs else None
        trailer = a.trailer(self.order).encode(sample_id) if a is not None else b""
        return self.raw(rtype, misc, body, trailer)

    def user(self, name: str, fields: dict[str, Any] | None = None, misc: int = 0,
             pad: bool = True) -> bytes:
        """A perf-tool record (types >= 64) from its construct layout."""
        rtype = type_code(name)
        schema = getattr(self.L.records, name)
        body = schema.build(fields or {})
        if pad:
            body = body.ljust(pad8(len(body)), b"\0")
        return self.raw(rtype, misc, body)

    def kmod_sec_map(self, section: str, filename: str, start: int, length: int, pgoff: int,
                     **kw: Any) -> bytes:
        return kmod_sec_map_record(self.order, section, filename, start, length, pgoff,
                                   self.id_hdr_size, **kw)

    def header_attr(self, attr: EventAttr) -> bytes:
        return self.user("HEADER_ATTR", {"attr": build_attr(attr, self.order),
                                         "ids": attr.ids}, pad=False)

    def header_feature(self, feat: int, payload: bytes) -> bytes:
        return self.user("HEADER_FEATURE", {"feat_id": feat, "data": payload}, pad=False)

    def compressed(self, kind: str, piece: bytes) -> bytes:
        """One COMPRESSED (81, unpadded) or COMPRESSED2 (83, padded to 8) record."""
        if kind == "COMPRESSED2":
            body = self.L.records.COMPRESSED2.build({"data_size": len(piece), "data": piece})
            return self.raw(RecordType.COMPRESSED2, 0, body.ljust(pad8(len(body)), b"\0"))
        return self.raw(RecordType.COMPRESSED, 0, self.L.records.COMPRESSED.build({"data": piece}))


class Writer:
    """Streams a recording to ``out`` (a seekable binary file for file mode).

    Usage: ``w = Writer(f, attrs, features, mode="file", order="<")``, then
    ``w.write(record_bytes)`` for each record (``w.b`` builds them), then ``w.close()``.
    With ``compress="COMPRESSED"`` or ``"COMPRESSED2"``, records written after
    :meth:`start_compression` go into zstd records of one never-closed frame, as perf
    writes them, ``chunk`` bytes of input per compressed record.
    """

    def __init__(self, out: BinaryIO, attrs: list[EventAttr],
                 features: dict[int, Any] | None = None, mode: str = "file",
                 order: str = "<", compress: str | None = None, chunk: int = 8192,
                 level: int = 1) -> None:
        if mode not in ("file", "pipe"):
            raise ValueError(mode)
        self.out = out
        self.attrs = attrs
        self.features = dict(features or {})
        self.mode = mode
        self.order = order
        self.b = RecordBuilder(order, attrs)
        self.L = layouts(order)
        self.compress = compress
        self.chunk = chunk
        self.level = level
        self._cctx: Any = None
        self._pending: list[bytes] = []
        self._pending_size = 0
        self.magic = MAGIC_BYTES_LE if order == "<" else MAGIC_BYTES_BE
        if compress and Feature.COMPRESSED not in self.features:
            self.features[Feature.COMPRESSED] = {"version": 0, "type": 1, "level": level,
                                                 "ratio": 0, "mmap_len": 528384}
        if mode == "pipe":
            self._start_pipe()
        else:
            self._start_file()

    # -- layout ---------------------------------------------------------------------------
    def _payloads(self) -> list[tuple[int, bytes]]:
        """Feature payloads in bit order; EVENT_DESC ``True`` describes the writer's attrs."""
        out = []
        for f, v in sorted(self.features.items()):
            if f == Feature.EVENT_DESC and v is True:
                v = [{"attr": a, "name": a.display_name, "ids": a.ids} for a in self.attrs]
            out.append((f, encode_feature(self.order, f, v)))
        return out

    def _start_pipe(self) -> None:
        w = self.out.write
        w(self.L.pipe_header.build({"magic": self.magic, "size": PIPE_HEADER_SIZE}))
        for a in self.attrs:
            w(self.b.header_attr(a))
        for f, payload in self._payloads():
            w(self.b.header_feature(f, payload))
        w(self.b.header_feature(32, b""))  # end-of-features marker (perf 6.1's LAST_FEATURE)
        self.data_offset = PIPE_HEADER_SIZE

    def _start_file(self) -> None:
        """The ids of every attr after the (for now blank) header, then the attrs section."""
        L = self.L
        ids_off = FILE_HEADER_SIZE
        ids = b"".join(L.u64[len(a.ids)].build(a.ids) for a in self.attrs)
        attr_size = max((a.size for a in self.attrs), default=128) + 16
        attrs_off = ids_off + len(ids)
        entries = b""
        pos = ids_off
        for a in self.attrs:
            raw = build_attr(a, self.order).ljust(attr_size - 16, b"\0")
            entries += L.file_attr.build({"attr": raw, "ids": {"offset": pos,
                                                               "size": 8 * len(a.ids)}},
                                         attr_size=attr_size)
            pos += 8 * len(a.ids)
        self.attr_size = attr_size
        self.attrs_off = attrs_off
        self.attrs_size = len(entries)
        self.data_offset = attrs_off + len(entries)
        self.out.write(b"\0" * FILE_HEADER_SIZE + ids + entries)

    # -- records --------------------------------------------------------------------------
    def write(self, raw: bytes) -> None:
        """Write one record's bytes (into the pending compressed data once compressing)."""
        if self._cctx is None:
            self.out.write(raw)
            return
        self._pending.append(raw)
        self._pending_size += len(raw)
        if self._pending_size >= self.chunk:
            self.flush_compressed()

    def start_compression(self) -> None:
        """Compress the records written from now on (perf compresses the ring data)."""
        if not self.compress:
            return
        self._cctx = zstandard.ZstdCompressor(level=self.level).compressobj()

    def flush_compressed(self) -> None:
        if not self._pending:
            return
        data = b"".join(self._pending)
        self._pending, self._pending_size = [], 0
        z = self._cctx.compress(data) + self._cctx.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)
        step = 0xFFFF - 24
        for i in range(0, len(z), step):
            self.out.write(self.b.compressed(self.compress or "", z[i:i + step]))

    def close(self) -> None:
        """Finish: flush compression; in file mode write the features and the header."""
        if self._cctx is not None:
            self.flush_compressed()
            self._cctx = None
        if self.mode == "pipe":
            self.out.flush()
            return
        L = self.L
        end = self.out.tell()
        data_size = end - self.data_offset
        payloads = self._payloads()
        table = []
        pos = end + L.section.sizeof() * len(payloads)
        for _f, payload in payloads:
            table.append({"offset": pos, "size": len(payload)})
            pos += len(payload)
        self.out.write(L.section[len(table)].build(table) + b"".join(p for _f, p in payloads))
        bits = 0
        for f, _p in payloads:
            bits |= 1 << f
        head = L.file_header.build({
            "magic": self.magic, "size": FILE_HEADER_SIZE, "attr_size": self.attr_size,
            "attrs": {"offset": self.attrs_off, "size": self.attrs_size},
            "data": {"offset": self.data_offset, "size": data_size},
            "event_types": {"offset": 0, "size": 0},
            "adds_features": [bits >> (64 * k) & (2**64 - 1) for k in range(4)]})
        self.out.seek(0)
        self.out.write(head)
        self.out.seek(0, 2)
        self.out.flush()
