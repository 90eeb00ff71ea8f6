"""Fixed-position fields of many records at once, gathered from the sources with numpy.

:func:`sample_fields` reads u64 SAMPLE fields (``ip``, ``period``, ``addr``, ``id``) of
index rows at their attr's offsets, :func:`record_u64s` a u64 at one offset of records of
any type, :func:`outer_offsets` the file offset perf names for each (its COMPRESSED
record's when inside one), :func:`chunk_sample_values` a SAMPLE field of a walk's chunk
(no index yet).  No record is decoded one by one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .index import NO_SOURCE, distinct, gather
from .walk import Chunk

if TYPE_CHECKING:
    from .recording import Recording

__all__ = ["chunk_sample_values", "outer_offsets", "record_misc", "record_u64s",
           "sample_fields"]


def sample_fields(rec: Recording, rows: np.ndarray, fields: tuple[str, ...]
                  ) -> list[tuple[np.ndarray, np.ndarray]]:
    """``Recording.sample_values`` of several fields, the rows' index columns gathered once:
    per field (values, whether the row's event samples the field at all).  A ``period``
    the event does not sample is its attr's ``sample_period``, as perf's
    ``evsel__parse_sample`` sets it before reading the sample (a fixed-period event
    recorded without PERF_SAMPLE_PERIOD: every sample weighs that period)."""
    c = rec.columns
    rows = np.asarray(rows, dtype=np.int64)
    got = [(np.zeros(len(rows), dtype=np.uint64), np.zeros(len(rows), dtype=bool))
           for _ in fields]
    if not len(rows):
        return got
    src = c["src"][rows]
    attr = c["attr"][rows]
    pos = c["pos"][rows]
    size = c["size"][rows].astype(np.int64)
    dt = np.dtype(rec.order + "u8")
    known = [a for a in distinct(attr) if 0 <= a < len(rec.attrs)]
    offsets = {a: rec.decoder.sample_layouts[a].offsets for a in known}
    for a in known:  # (whatever the bytes: a row of no source still has its event)
        fixed = rec.attrs[a].sample_period if "period" not in offsets[a] else 0
        if (fixed and "period" in fields) or any(f in offsets[a] for f in fields):
            of_attr = attr == a
            for (out, has), field in zip(got, fields, strict=True):
                if field in offsets[a]:
                    has |= of_attr
                elif field == "period":
                    out[of_attr] = fixed
    for s in distinct(src):
        if s == NO_SOURCE:
            continue
        u8 = np.frombuffer(rec.sources[s].buf, dtype=np.uint8)  # type: ignore[attr-defined]
        of_src = src == s
        for a in distinct(attr[of_src]):
            if a not in offsets:
                continue
            these = of_src & (attr == a)
            for (out, _has), field in zip(got, fields, strict=True):
                off = offsets[a].get(field)
                if off is None:
                    continue
                sel = np.nonzero(these & (size >= off + 8))[0]
                out[sel] = gather(u8, pos[sel] + off, dt)
    return got


def record_u64s(rec: Recording, rows: np.ndarray, offset: int) -> np.ndarray:
    """The u64 ``offset`` bytes into the record of each of index ``rows`` (of any type;
    0 where the record is shorter), gathered with numpy."""
    c = rec.columns
    rows = np.asarray(rows, dtype=np.int64)
    out = np.zeros(len(rows), dtype=np.uint64)
    if not len(rows):
        return out
    src, pos = c["src"][rows], c["pos"][rows]
    size = c["size"][rows].astype(np.int64)
    dt = np.dtype(rec.order + "u8")
    for s in distinct(src):
        if s == NO_SOURCE:
            continue
        u8 = np.frombuffer(rec.sources[s].buf, dtype=np.uint8)  # type: ignore[attr-defined]
        sel = np.nonzero((src == s) & (size >= offset + 8))[0]
        out[sel] = gather(u8, pos[sel] + offset, dt)
    return out


def record_misc(rec: Recording, rows: np.ndarray) -> np.ndarray:
    """The header ``misc`` of the records of index ``rows`` (0 where a record cannot be
    read back), gathered with numpy."""
    c = rec.columns
    rows = np.asarray(rows, dtype=np.int64)
    out = np.zeros(len(rows), np.int64)
    src = c["src"][rows]
    dt = np.dtype(rec.order + "u2")
    for s in distinct(src):
        if s == NO_SOURCE:
            continue
        sel = np.flatnonzero(src == s)
        u8 = np.frombuffer(rec.sources[s].buf, dtype=np.uint8)  # type: ignore[attr-defined]
        out[sel] = gather(u8, c["pos"][rows[sel]].astype(np.int64) + 4, dt)
    return out


def chunk_sample_values(rec: Recording, ch: Chunk, rows: np.ndarray, attr: np.ndarray,
                        size: np.ndarray, field: str = "ip") -> np.ndarray:
    """``Recording.sample_values`` for SAMPLE records of a walk's chunk, without an index:
    ``rows`` are positions in the chunk, ``attr``/``size`` their index fields."""
    out = np.zeros(len(rows), dtype=np.uint64)
    if not len(rows):
        return out
    u8 = np.frombuffer(ch.buf, dtype=np.uint8)
    rel = np.frombuffer(ch.offs, dtype=np.int64)[rows] - ch.base
    dt = np.dtype(rec.order + "u8")
    for a in np.unique(attr):
        if not 0 <= a < len(rec.attrs):
            continue
        off = rec.decoder.sample_layouts[int(a)].offsets.get(field)
        if off is None:
            continue
        sel = np.nonzero((attr == a) & (size.astype(np.int64) >= off + 8))[0]
        out[sel] = gather(u8, rel[sel] + off, dt)
    return out


def outer_offsets(rec: Recording, rows: np.ndarray) -> np.ndarray:
    """File offsets of index rows: their own position, or their COMPRESSED record's."""
    c = rec.columns
    rows = np.asarray(rows, dtype=np.int64)
    src = c["src"][rows]
    out: np.ndarray = c["pos"][rows].copy()
    for s in np.unique(src):
        m = np.asarray(rec.outer_map(int(s)) if s != NO_SOURCE else [],
                       dtype=np.int64).reshape(-1, 2)
        if not len(m):
            continue
        sel = np.nonzero(src == s)[0]
        keys, vals = m[:, 0], m[:, 1]
        j = np.maximum(np.searchsorted(keys, out[sel], side="right") - 1, 0)
        out[sel] = vals[j]
    return out
