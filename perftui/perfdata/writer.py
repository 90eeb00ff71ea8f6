"""Writing recordings: file or pipe mode, either byte order, compressed or not.

Used by ``perftui inject``, the demo and the tests (big-endian files, KMOD_SEC_MAP records,
malformed files).  Records are built with the construct layouts of ``schemas.py`` (and
``sample.encode_sample`` for samples) and streamed to the output: the writer keeps no
record in memory, so it also writes the multi-GB benchmark recordings.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
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
from .sample import encode_sample
from .schemas import layouts

MAGIC_BYTES_LE = struct.pack("<Q", MAGIC_LE)  # b"PERFILE2"
MAGIC_BYTES_BE = MAGIC_BYTES_LE[::-1]  # "2ELIFREP": what a big-endian host writes


def pad8(n: int) -> int:
    return (n + 7) & ~7


def header_bytes(order: str, rtype: int, misc: int, size: int) -> bytes:
    return struct.pack(order + "IHH", rtype, misc, size)


def header_string(order: str, s: str | bytes) -> bytes:
    """perf_header_string: u32 len (strlen+1 rounded up to 64) then the NUL-padded bytes."""
    raw = s.encode() if isinstance(s, str) else s
    n = (len(raw) + 1 + 63) // 64 * 64
    return struct.pack(order + "I", n) + raw.ljust(n, b"\0")


def kmod_sec_map_record(order: str, section: str, filename: str, start: int, length: int,
                        pgoff: int, id_hdr_size: int, pid: int = -1, misc: int = Misc.KERNEL,
                        layout: str = "rfc") -> bytes:
    """A KMOD_SEC_MAP record exactly as the RFC synthesizer wrote it (FORMAT.md §13.4).

    ``layout="picture"`` writes the "name\\0filename\\0" form of the struct comment.
    """
    name = section.encode() + b"\0"
    path = filename.encode() + b"\0"
    size = 48 + pad8(len(name) + len(path)) + id_hdr_size
    data = name + (b"\0" if layout == "rfc" else b"") + path
    fixed = struct.pack(order + "iIQQQHH", pid, 0, start, length, pgoff, len(name), len(path))
    body = fixed + data
    rec = header_bytes(order, RecordType.COMPRESSED2, misc, size) + body
    if len(rec) > size:
        raise ValueError("KMOD_SEC_MAP strings too long for the record")
    return rec.ljust(size, b"\0")


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
        return header_bytes(self.order, rtype, misc, size) + body + trailer

    def sample(self, fields: dict[str, Any], misc: int = Misc.USER, attr: int = 0) -> bytes:
        a = self.attrs[attr]
        return self.raw(RecordType.SAMPLE, misc, encode_sample(a, self.order, fields))

    def kernel(self, name: str, fields: dict[str, Any], misc: int = 0,
               sample_id: dict[str, int] | None = None, attr: int = 0) -> bytes:
        """A kernel record (types 1..22 but SAMPLE) from its field dict, body padded to 8."""
        rtype = type_code(name)
        schema = getattr(self.L.rec, name)
        f = dict(fields)
        if name == "MMAP2":
            if "build_id" in f:
                bid = bytes.fromhex(f.pop("build_id"))
                f["u"] = self.L.rec.mmap2_build_id.build(
                    {"build_id_size": len(bid), "build_id": bid.ljust(20, b"\0")})
                misc |= Misc.MMAP_BUILD_ID
            else:
                f["u"] = self.L.rec.mmap2_inode.build(
                    {k: f.pop(k, 0) for k in ("maj", "min", "ino", "ino_generation")})
        for k in ("filename", "comm", "name", "path"):
            if isinstance(f.get(k), str):
                f[k] = f[k].encode()
        body = schema.build(f)
        body = body.ljust(pad8(len(body)), b"\0")
        a = self.attrs[attr] if self.attrs else None
        trailer = a.trailer(self.order).encode(sample_id) if a is not None else b""
        return self.raw(rtype, misc, body, trailer)

    def user(self, name: str, fields: dict[str, Any] | None = None, misc: int = 0,
             pad: bool = True) -> bytes:
        """A perf-tool record (types >= 64) from its construct layout."""
        rtype = type_code(name)
        schema = getattr(self.L.rec, name)
        body = schema.build(fields or {})
        if pad:
            body = body.ljust(pad8(len(body)), b"\0")
        return self.raw(rtype, misc, body)

    def kmod_sec_map(self, section: str, filename: str, start: int, length: int, pgoff: int,
                     **kw: Any) -> bytes:
        return kmod_sec_map_record(self.order, section, filename, start, length, pgoff,
                                   self.id_hdr_size, **kw)

    def header_attr(self, attr: EventAttr) -> bytes:
        body = build_attr(attr, self.order) + struct.pack(f"{self.order}{len(attr.ids)}Q",
                                                          *attr.ids)
        return self.raw(RecordType.HEADER_ATTR, 0, body)

    def header_feature(self, feat: int, payload: bytes) -> bytes:
        return self.raw(RecordType.HEADER_FEATURE, 0, struct.pack(self.order + "Q", feat)
                        + payload)


def encode_feature(order: str, feat: int, value: Any, attrs: list[EventAttr]) -> bytes:
    """Payload bytes of a feature from a decoded-style value (bytes pass through)."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    p = struct.pack
    if feat in (Feature.HOSTNAME, Feature.OSRELEASE, Feature.VERSION, Feature.ARCH,
                Feature.CPUDESC, Feature.CPUID):
        return header_string(order, value)
    if feat == Feature.CMDLINE:
        return p(order + "I", len(value)) + b"".join(header_string(order, s) for s in value)
    if feat == Feature.NRCPUS:
        return p(order + "II", value["nr_cpus_avail"], value["nr_cpus_online"])
    if feat == Feature.TOTAL_MEM:
        return p(order + "Q", value)
    if feat == Feature.SAMPLE_TIME:
        return p(order + "QQ", value["first"], value["last"])
    if feat == Feature.CLOCKID:
        return p(order + "Q", value)
    if feat == Feature.DIR_FORMAT:
        return p(order + "Q", value)
    if feat == Feature.COMPRESSED:
        return p(order + "5I", value["version"], value["type"], value["level"],
                 value["ratio"], value["mmap_len"])
    if feat == Feature.CLOCK_DATA:
        return p(order + "IIQQ", value["version"], value["clockid"], value["wall_clock_ns"],
                 value["clockid_ns"])
    if feat == Feature.EVENT_DESC:
        size = max((a.size for a in attrs), default=128)
        out = p(order + "II", len(attrs), size)
        for a in attrs:
            raw = build_attr(a, order).ljust(size, b"\0")
            out += raw + p(order + "I", len(a.ids)) + header_string(order, a.display_name)
            out += p(f"{order}{len(a.ids)}Q", *a.ids)
        return out
    if feat == Feature.BUILD_ID:
        out = b""
        for e in value:
            name = e["filename"].encode() + b"\0"
            size = 36 + (len(name) + 63) // 64 * 64
            bid = bytes.fromhex(e["build_id"])
            out += (header_bytes(order, 0, e.get("misc", Misc.KERNEL | 0x8000), size)
                    + p(order + "i", e.get("pid", -1)) + bid.ljust(20, b"\0")
                    + bytes([len(bid), 0, 0, 0]) + name.ljust(size - 36, b"\0"))
        return out
    if feat == Feature.PMU_MAPPINGS:
        return p(order + "I", len(value)) + b"".join(
            p(order + "I", m["type"]) + header_string(order, m["name"]) for m in value)
    if feat == Feature.GROUP_DESC:
        return p(order + "I", len(value)) + b"".join(
            header_string(order, g["name"]) + p(order + "II", g["leader_idx"], g["nr_members"])
            for g in value)
    raise ValueError(f"no encoder for feature {feat}; pass its payload as bytes")


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
        return [(f, encode_feature(self.order, f, v, self.attrs))
                for f, v in sorted(self.features.items())]

    def _start_pipe(self) -> None:
        w = self.out.write
        w(self.magic + struct.pack(self.order + "Q", PIPE_HEADER_SIZE))
        for a in self.attrs:
            w(self.b.header_attr(a))
        for f, payload in self._payloads():
            w(self.b.header_feature(f, payload))
        w(self.b.header_feature(32, b""))  # end-of-features marker (perf 6.1's LAST_FEATURE)
        self.data_offset = PIPE_HEADER_SIZE

    def _start_file(self) -> None:
        o = self.order
        ids_off = FILE_HEADER_SIZE
        ids = b"".join(struct.pack(f"{o}{len(a.ids)}Q", *a.ids) for a in self.attrs)
        attr_size = max((a.size for a in self.attrs), default=128) + 16
        attrs_off = ids_off + len(ids)
        entries = b""
        pos = ids_off
        for a in self.attrs:
            raw = build_attr(a, o).ljust(attr_size - 16, b"\0")
            entries += raw + struct.pack(o + "QQ", pos, 8 * len(a.ids))
            pos += 8 * len(a.ids)
        self.attr_size = attr_size
        self.attrs_off = attrs_off
        self.attrs_size = len(entries)
        self.data_offset = attrs_off + len(entries)
        self.out.write(b"\0" * FILE_HEADER_SIZE + ids + entries)

    # -- records --------------------------------------------------------------------------
    def write(self, rec: bytes) -> None:
        if self._cctx is None:
            self.out.write(rec)
            return
        self._pending.append(rec)
        self._pending_size += len(rec)
        if self._pending_size >= self.chunk:
            self.flush_compressed()

    def write_all(self, recs: Iterable[bytes]) -> None:
        for r in recs:
            self.write(r)

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
        o = self.order
        step = 0xFFFF - 24
        for i in range(0, len(z), step):
            piece = z[i:i + step]
            if self.compress == "COMPRESSED2":
                size = pad8(16 + len(piece))
                rec = (header_bytes(o, RecordType.COMPRESSED2, 0, size)
                       + struct.pack(o + "Q", len(piece)) + piece).ljust(size, b"\0")
            else:
                rec = header_bytes(o, RecordType.COMPRESSED, 0, 8 + len(piece)) + piece
            self.out.write(rec)

    def close(self) -> None:
        """Finish: flush compression; in file mode write the features and the header."""
        if self._cctx is not None:
            self.flush_compressed()
            self._cctx = None
        if self.mode == "pipe":
            self.out.flush()
            return
        o = self.order
        end = self.out.tell()
        data_size = end - self.data_offset
        payloads = self._payloads()
        table = b""
        pos = end + 16 * len(payloads)
        for _f, payload in payloads:
            table += struct.pack(o + "QQ", pos, len(payload))
            pos += len(payload)
        self.out.write(table + b"".join(p for _f, p in payloads))
        bits = 0
        for f, _p in payloads:
            bits |= 1 << f
        words = [(bits >> (64 * k)) & (2**64 - 1) for k in range(4)]
        head = (self.magic + struct.pack(o + "QQ", FILE_HEADER_SIZE, self.attr_size)
                + struct.pack(o + "QQ", self.attrs_off, self.attrs_size)
                + struct.pack(o + "QQ", self.data_offset, data_size)
                + struct.pack(o + "QQ", 0, 0) + struct.pack(o + "4Q", *words))
        self.out.seek(0)
        self.out.write(head)
        self.out.seek(0, 2)
        self.out.flush()
