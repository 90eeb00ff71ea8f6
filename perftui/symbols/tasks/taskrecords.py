"""Fast reads of the records that change threads and maps (COMM, FORK, EXIT, MMAP, MMAP2,
KSYMBOL, NAMESPACES, build ids): fixed struct layouts (docs/format.md, "Records"), no dict decoding.

A record too short for its layout gives None: perf would fail on it the same way
("problem processing ..., skipping event").
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from construct import ConstructError

from ...perfdata import Feature, Recording, RecordType
from ...perfdata.constants import Misc
from ...perfdata.schemas import cstring, layouts


@dataclass(slots=True)
class Comm:
    pid: int
    tid: int
    comm: str


@dataclass(slots=True)
class Task:
    """FORK or EXIT."""

    pid: int
    ppid: int
    tid: int
    ptid: int
    fork_exec: bool  # PERF_RECORD_MISC_FORK_EXEC: perf synthesized it, no maps clone


@dataclass(slots=True)
class Mmap:
    pid: int
    tid: int
    start: int
    length: int
    pgoff: int
    filename: str
    prot: int
    flags: int
    build_id: str
    cpumode: int


@dataclass(slots=True)
class Ksymbol:
    addr: int
    length: int
    ksym_type: int
    unregister: bool
    name: str


@dataclass(slots=True)
class Touch:
    """A record that only makes perf find (or create) a thread: a SAMPLE or NAMESPACES."""

    pid: int
    tid: int


class TaskRecordReader:
    """Reads task records of one recording (its byte order and attrs)."""

    def __init__(self, rec: Recording) -> None:
        o = rec.order
        self.rec = rec
        self.ii = struct.Struct(o + "ii")
        self.task = struct.Struct(o + "iiii")
        self.mmap = struct.Struct(o + "iiQQQ")
        self.mmap2_tail = struct.Struct(o + "II")
        self.ksym = struct.Struct(o + "QIHH")
        self.u64 = struct.Struct(o + "Q")
        self.misc = struct.Struct(o + "H")
        self.trailer: list[tuple[int, int]] = []  # per attr: (trailer size, time offset)
        for a in rec.attrs:
            t = a.trailer_offsets()
            self.trailer.append((a.id_hdr_size, t.get("time", -1)))

    def _body_end(self, raw: bytes, attr: int) -> int:
        size = len(raw)
        if 0 <= attr < len(self.trailer):
            return max(8, size - self.trailer[attr][0])
        return size

    def trailer_time(self, raw: bytes, attr: int) -> int:
        """The record's sample_id time (0 without one), the time perf orders it by."""
        if not 0 <= attr < len(self.trailer):
            return 0
        n, off = self.trailer[attr]
        if off < 0 or len(raw) < 8 + n:
            return 0
        return int(self.u64.unpack_from(raw, len(raw) - n + off)[0])

    def read(self, typ: int, raw: bytes, attr: int
             ) -> Comm | Task | Mmap | Ksymbol | Touch | None:
        misc = self.misc.unpack_from(raw, 4)[0]
        end = self._body_end(raw, attr)
        try:
            if typ == RecordType.COMM:
                pid, tid = self.ii.unpack_from(raw, 8)
                return Comm(pid, tid, cstring(raw[16:end]))
            if typ in (RecordType.FORK, RecordType.EXIT):
                pid, ppid, tid, ptid = self.task.unpack_from(raw, 8)
                return Task(pid, ppid, tid, ptid, bool(misc & Misc.COMM_EXEC))
            if typ == RecordType.MMAP:
                pid, tid, start, length, pgoff = self.mmap.unpack_from(raw, 8)
                prot = 0 if misc & Misc.MMAP_DATA else 4
                return Mmap(pid, tid, start, length, pgoff, cstring(raw[40:end]), prot, 0, "",
                            misc & Misc.CPUMODE_MASK)
            if typ == RecordType.MMAP2:
                pid, tid, start, length, pgoff = self.mmap.unpack_from(raw, 8)
                prot, flags = self.mmap2_tail.unpack_from(raw, 64)
                bid = ""
                if misc & Misc.MMAP_BUILD_ID:
                    n = min(raw[40], 20)
                    bid = raw[44:44 + n].hex()
                return Mmap(pid, tid, start, length, pgoff, cstring(raw[72:end]), prot, flags,
                            bid, misc & Misc.CPUMODE_MASK)
            if typ == RecordType.KSYMBOL:
                addr, length, ktype, flags = self.ksym.unpack_from(raw, 8)
                return Ksymbol(addr, length, ktype, bool(flags & 1), cstring(raw[24:end]))
            if typ == RecordType.NAMESPACES:
                pid, tid = self.ii.unpack_from(raw, 8)
                return Touch(pid, tid)
        except (struct.error, IndexError):
            return None
        return None


def feature_build_ids(rec: Recording) -> list[dict[str, Any]]:
    """Host entries (machine pid -1) of the BUILD_ID feature: perf reads them when it opens
    the file, before any record."""
    table = rec.feature(Feature.BUILD_ID) or []
    return [e for e in table if isinstance(e, dict) and e.get("pid") == -1]


def header_build_id(rec: Recording, raw: bytes) -> dict[str, Any] | None:
    """A HEADER_BUILD_ID record (pipe mode), or None when malformed."""
    try:
        return dict(layouts(rec.order).build_id_record.parse(raw))
    except (ValueError, ConstructError):
        return None
