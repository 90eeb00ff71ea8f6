"""The record index: one row per record, stored as numpy columns (35 bytes a record).

Rows are filled chunk by chunk from the walk with vectorised gathers (no Python object
per record).  Columns: source, position, type code, cpumode (``misc & 7``), size, time,
cpu, pid, tid, attr.  ``time`` 0 and ``cpu``/``attr`` -1 mean "not known for this
record"; a CPU number past 32767 is stored as 32767.  The columns live in anonymous
memory or in the mapped files of a :class:`~.colstore.ColumnStore` (then they grow without
a copy and do not count as the process's anonymous memory).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .attr import EventAttr
from .colstore import ColumnStore
from .constants import RAW_TYPE_CLAMP, USER_TYPE_START, RecordType
from .sample import SampleLayout
from .walk import Chunk

#: ``src`` of index rows whose record cannot be read back (inside compressed data, no spill)
NO_SOURCE = 65535
# A change here makes every cache entry another key (indexcache.key_of): no stale reuse.
COLUMNS: dict[str, str] = {
    "src": "u2", "pos": "i8", "type": "u2", "cpumode": "u1", "size": "u2",
    "time": "u8", "cpu": "i2", "pid": "i4", "tid": "i4", "attr": "i2",
}
_AR = {k: np.arange(k, dtype=np.int64) for k in (2, 4, 8)}
_SHIFT = {1: 0, 2: 1, 4: 2, 8: 3}
_BODY_PID = (RecordType.MMAP, RecordType.COMM, RecordType.MMAP2, RecordType.ITRACE_START,
             RecordType.NAMESPACES)
_BODY_PID_TID16 = (RecordType.FORK, RecordType.EXIT)


def gather(u8: np.ndarray, at: np.ndarray, dt: np.dtype, aligned: bool | None = None
           ) -> np.ndarray:
    """The ``dt`` field at each byte position ``at`` of ``u8`` (a typed view when every
    position is aligned, which kernel records make the common case; else a byte gather).
    ``aligned``: whether they are, when the caller knows (None: look)."""
    width = dt.itemsize
    if aligned is None:
        aligned = bool(len(at)) and not np.any(at & (width - 1))
    if aligned and len(at):
        out: np.ndarray = u8[: len(u8) // width * width].view(dt)[at >> _SHIFT[width]]
        return out
    return u8[at[:, None] + _AR[width]].view(dt).ravel()


def spans(begin: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Every index of the ranges ``[begin[k], end[k])``, one range after another."""
    lengths = np.asarray(end, dtype=np.int64) - np.asarray(begin, dtype=np.int64)
    offset = np.repeat(np.asarray(begin, dtype=np.int64) - (np.cumsum(lengths) - lengths),
                       lengths)
    return offset + np.arange(int(lengths.sum()), dtype=np.int64)


def distinct(a: np.ndarray) -> list[int]:
    """The distinct values of ``a``, ascending, as ints: a block's sources or events,
    almost always one value (then two reductions, where ``np.unique`` sorts or hashes:
    ~1 ms a block of 2^16 rows, 0.18 s of a names pass on the bench recording)."""
    if not len(a):
        return []
    lo, hi = int(a.min()), int(a.max())
    if lo == hi:
        return [lo]
    return [int(x) for x in np.unique(a).tolist()]


def _why(e: OSError) -> str:
    return e.strerror or str(e)


class Column:
    """One growable column: anonymous numpy memory, or a file of a :class:`ColumnStore`
    (grown without copying).  ``a`` has room for ``len(a)`` rows."""

    def __init__(self, name: str, dtype: str | np.dtype, capacity: int,
                 store: ColumnStore | None = None) -> None:
        self.name = name
        self.dtype = np.dtype(dtype)
        self.store = store
        self.a = self._alloc(capacity)

    def _alloc(self, rows: int) -> np.ndarray:
        if self.store is not None:
            return self.store.array(self.name, self.dtype, rows)
        return np.empty(rows, dtype=self.dtype)

    def grow(self, capacity: int, n: int) -> None:
        """Room for ``capacity`` rows, keeping the first ``n``."""
        if capacity <= len(self.a):
            return
        b = self._alloc(capacity)
        if self.store is None:
            b[:n] = self.a[:n]
        self.a = b

    def to_memory(self, n: int) -> None:
        """Leave the store: the first ``n`` rows move to anonymous memory."""
        if self.store is not None:
            self.store = None
            self.a = self.a[:n].copy()

    def fit(self, n: int) -> None:
        """Drop spare room: a file is cut to ``n`` rows; memory is copied only when the
        excess is large (pages never written cost nothing, and a copy doubles the peak)."""
        if self.store is not None:
            if len(self.a) != n:
                self.a = self.store.array(self.name, self.dtype, n)
        elif len(self.a) > 2 * n + 4096:
            self.a = self.a[:n].copy()


class Columns:
    """The index table: growable numpy columns of one length ``n`` (amortised growth,
    trimmed by :meth:`trim`); in anonymous memory, or in the files of ``store``."""

    def __init__(self, capacity: int = 1 << 12, store: ColumnStore | None = None) -> None:
        self.n = 0
        self.store = store
        self.store_error = ""
        try:
            self.columns = {k: Column(k, v, capacity, store) for k, v in COLUMNS.items()}
        except OSError as e:
            self.store, self.store_error = None, _why(e)
            self.columns = {k: Column(k, v, capacity) for k, v in COLUMNS.items()}
        self.cols = {k: c.a for k, c in self.columns.items()}

    @classmethod
    def of(cls, arrays: dict[str, np.ndarray], n: int) -> Columns:
        """Columns over existing arrays of ``n`` rows (a cache entry's maps)."""
        self = cls.__new__(cls)
        self.n = n
        self.store = None
        self.store_error = ""
        self.columns = {}
        self.cols = {k: arrays[k] for k in COLUMNS}
        return self

    def __len__(self) -> int:
        return self.n

    def _sync(self) -> None:
        self.cols = {k: c.a for k, c in self.columns.items()}

    def reserve(self, capacity: int) -> None:
        """Grow every column to ``capacity`` rows at once (an estimate from the file size)."""
        if self.columns and capacity > len(self.cols["pos"]):
            try:
                for c in self.columns.values():
                    c.grow(capacity, self.n)
            except OSError as e:  # the store is full or gone: go on in memory
                self.store, self.store_error = None, _why(e)
                for c in self.columns.values():
                    c.to_memory(self.n)
                    c.grow(capacity, self.n)
            self._sync()

    def append(self, part: dict[str, np.ndarray]) -> None:
        m = len(part["pos"])
        need = self.n + m
        cap = len(self.cols["pos"])
        if need > cap:
            self.reserve(max(need, cap + cap // 2 + 1024))
        for k, a in self.cols.items():
            a[self.n:need] = part[k]
        self.n = need

    def trim(self) -> None:
        """Drop spare capacity (see :meth:`Column.fit`)."""
        for c in self.columns.values():
            c.fit(self.n)
        self._sync()

    def __getitem__(self, name: str) -> np.ndarray:
        return self.cols[name][: self.n]

    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.cols.values())


class RowList:
    """A growable list of int64 (index rows), in memory or in a store's file."""

    def __init__(self, name: str, store: ColumnStore | None = None) -> None:
        self.store_error = ""
        try:
            self.col = Column(name, "i8", 1024, store)
        except OSError as e:
            self.store_error = _why(e)
            self.col = Column(name, "i8", 1024)
        self.n = 0

    def extend(self, rows: np.ndarray) -> None:
        need = self.n + len(rows)
        if need > len(self.col.a):
            cap = max(need, 2 * len(self.col.a))
            try:
                self.col.grow(cap, self.n)
            except OSError as e:
                self.store_error = _why(e)
                self.col.to_memory(self.n)
                self.col.grow(cap, self.n)
        self.col.a[self.n:need] = rows
        self.n = need

    def trim(self) -> None:
        self.col.fit(self.n)

    @property
    def rows(self) -> np.ndarray:
        return self.col.a[: self.n]


@dataclass
class _AttrPos:
    """Byte offsets the index reads for one attr (-1: absent)."""

    s_time: int
    s_cpu: int
    s_tid: int
    s_min: int
    t_size: int
    t_time: int
    t_cpu: int
    t_tid: int


def _attr_pos(attr: EventAttr, order: str) -> _AttrPos:
    lay = SampleLayout(attr, order)
    sample, t = lay.offsets, attr.trailer_offsets()
    return _AttrPos(sample.get("time", -1), sample.get("cpu", -1), sample.get("pid", -1),
                    8 + lay.fixed_size, attr.id_hdr_size,
                    t.get("time", -1), t.get("cpu", -1), t.get("pid", -1))


class IndexBuilder:
    """Turns walk chunks into index rows for one recording's attrs and byte order."""

    def __init__(self, order: str) -> None:
        self.order = order
        self.dt = {k: np.dtype(order + c) for k, c in
                   (("u2", "u2"), ("u4", "u4"), ("u8", "u8"), ("i4", "i4"))}
        self.attrs: list[EventAttr] = []
        self.pos: list[_AttrPos] = []
        self.id_keys = np.empty(0, dtype=np.uint64)
        self.id_vals = np.empty(0, dtype=np.int16)
        self.unknown_ids = 0

    def set_attrs(self, attrs: list[EventAttr]) -> None:
        self.attrs = list(attrs)
        self.pos = [_attr_pos(a, self.order) for a in attrs]
        pairs = sorted((i, k) for k, a in enumerate(attrs) for i in a.ids)
        self.id_keys = np.array([p[0] for p in pairs], dtype=np.uint64)
        self.id_vals = np.array([p[1] for p in pairs], dtype=np.int16)

    def _g(self, u8: np.ndarray, at: np.ndarray, width: int, dt: str,
           aligned: bool | None = None) -> np.ndarray:
        return gather(u8, at, self.dt[dt], aligned)

    def _lookup(self, ids: np.ndarray) -> np.ndarray:
        """attr index of each id; id 0 -> 0 (synthesized), unknown -> -1."""
        out = np.full(len(ids), -1, dtype=np.int16)
        if len(self.id_keys):
            j = np.searchsorted(self.id_keys, ids)
            j = np.minimum(j, len(self.id_keys) - 1)
            hit = self.id_keys[j] == ids
            out[hit] = self.id_vals[j[hit]]
        out[ids == 0] = 0
        return out

    def rows(self, chunk: Chunk, src: int, lean: bool = False) -> dict[str, np.ndarray]:
        """Index rows of one chunk (``src`` is where the records can be read back).

        ``lean``: only ``type``, ``attr``, ``time``, ``cpumode`` and ``size`` (what the
        totals and the section counts need), sooner.
        """
        u8 = np.frombuffer(chunk.buf, dtype=np.uint8)
        offs = np.frombuffer(chunk.offs, dtype=np.int64)
        n = len(offs)
        rel = offs - chunk.base
        # kernel records keep 8-byte alignment: then every header is one aligned u64, and
        # a field at a multiple of 8 bytes into a record is aligned too
        al = bool(n) and not np.any(rel & 7)
        if al:
            hdr = self._g(u8, rel, 8, "u8", True)
            if self.order == "<":
                raw_type, misc, size = hdr & 0xFFFFFFFF, (hdr >> 32) & 0xFFFF, hdr >> 48
            else:
                raw_type, misc, size = hdr >> 32, (hdr >> 16) & 0xFFFF, hdr & 0xFFFF
            size = size.astype(np.int64)
        else:
            raw_type = self._g(u8, rel, 4, "u4")
            misc = self._g(u8, rel + 4, 2, "u2")
            size = self._g(u8, rel + 6, 2, "u2").astype(np.int64)
        typ = np.minimum(raw_type, RAW_TYPE_CLAMP).astype(np.uint16)
        for i, code in chunk.override.items():
            typ[i] = code
        time = np.zeros(n, dtype=np.uint64)
        if not lean:
            cpu = np.full(n, -1, dtype=np.int32)
            pid = np.full(n, -1, dtype=np.int32)
            tid = np.full(n, -1, dtype=np.int32)
        attr = np.full(n, -1, dtype=np.int16)
        kernel = typ < USER_TYPE_START
        is_sample = typ == RecordType.SAMPLE
        na = len(self.attrs)
        if na == 1:
            attr[kernel] = 0
        elif na > 1:
            a0 = self.attrs[0]
            sm = np.nonzero(is_sample)[0]
            if len(sm) and a0.id_pos >= 0:
                ok = sm[size[sm] >= 16 + 8 * a0.id_pos]
                attr[ok] = self._lookup(self._g(u8, rel[ok] + 8 + 8 * a0.id_pos, 8, "u8", al))
            other = np.nonzero(kernel & ~is_sample)[0]
            if len(other):
                if a0.sample_id_all and a0.is_pos >= 0:
                    ok = other[size[other] >= 8 + 8 * a0.is_pos]
                    attr[ok] = self._lookup(
                        self._g(u8, rel[ok] + size[ok] - 8 * a0.is_pos, 8, "u8"))
                else:
                    attr[other] = 0
            self.unknown_ids += int(np.count_nonzero(kernel & (attr < 0)))
        for k, ap in enumerate(self.pos):
            mine = attr == k
            if not mine.any():
                continue
            sm = np.nonzero(mine & is_sample & (size >= ap.s_min))[0]
            if len(sm):
                if ap.s_time >= 0:
                    time[sm] = self._g(u8, rel[sm] + ap.s_time, 8, "u8", al)
                if ap.s_cpu >= 0 and not lean:
                    cpu[sm] = self._g(u8, rel[sm] + ap.s_cpu, 4, "i4", al)
                if ap.s_tid >= 0 and not lean:
                    pid[sm] = self._g(u8, rel[sm] + ap.s_tid, 4, "i4", al)
                    tid[sm] = self._g(u8, rel[sm] + ap.s_tid + 4, 4, "i4", al)
            if ap.t_size:
                ot = np.nonzero(mine & ~is_sample & kernel & (size >= 8 + ap.t_size))[0]
                if len(ot):
                    ts = rel[ot] + size[ot] - ap.t_size
                    if ap.t_time >= 0:
                        time[ot] = self._g(u8, ts + ap.t_time, 8, "u8")
                    if ap.t_cpu >= 0 and not lean:
                        cpu[ot] = self._g(u8, ts + ap.t_cpu, 4, "i4")
                    if ap.t_tid >= 0 and not lean:
                        pid[ot] = self._g(u8, ts + ap.t_tid, 4, "i4")
                        tid[ot] = self._g(u8, ts + ap.t_tid + 4, 4, "i4")
        bp = np.nonzero(np.isin(typ, _BODY_PID) & (size >= 16))[0] if not lean else ()
        if len(bp):
            pid[bp] = self._g(u8, rel[bp] + 8, 4, "i4")
            tid[bp] = self._g(u8, rel[bp] + 12, 4, "i4")
        bp = np.nonzero(np.isin(typ, _BODY_PID_TID16) & (size >= 32))[0]
        if len(bp):
            if not lean:
                pid[bp] = self._g(u8, rel[bp] + 8, 4, "i4")
                tid[bp] = self._g(u8, rel[bp] + 16, 4, "i4")
            notime = bp[time[bp] == 0]
            time[notime] = self._g(u8, rel[notime] + 24, 8, "u8")
        if lean:
            return {"type": typ, "attr": attr, "time": time,
                    "cpumode": (misc & 7).astype(np.uint8), "size": size}
        return {
            "src": np.full(n, src, dtype=np.uint16), "pos": offs.copy(), "type": typ,
            "cpumode": (misc & 7).astype(np.uint8),
            "size": size.astype(np.uint16),
            "time": time, "cpu": np.clip(cpu, -1, 32767).astype(np.int16),
            "pid": pid, "tid": tid, "attr": attr,
        }
