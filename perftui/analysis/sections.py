"""Sample counts per module section, vectorised with numpy, in memory that does not grow
with the recording.

Two ways to count:

* over an index (:func:`count_sections`): each row's section (:func:`section_owner`, one
  small integer per row, kept with the index and in the cache) is worked out once;
  counting under a filter is then a pass over columns, in blocks;
* while walking a recording that has no index (:func:`stream_sections`): the kernel
  samples' ips are counted by (ip, event) as they go by, and looked up in the section map
  at the end (memory grows with the distinct ips, not with the records).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..perfdata import Recording, RecordType, derived
from ..perfdata.cacheentry import CachedIndex, in_range, one_per
from ..perfdata.constants import Misc
from ..symbols.modules.sectionmap import (
    MapRecord,
    SectionEntry,
    SectionMap,
    build_section_map,
    is_map_record,
)
from .filters import Filter, FilterContext

BLOCK = 1 << 20  # rows per pass: bounds the temporary arrays
OWNER_NAME = "sections.owner"
COUNTS_NAME = "sections.counts"
NOT_KERNEL = -2  # section_owner of a row that is not a kernel-mode SAMPLE (-1: of a
# kernel sample inside no section)


@dataclass
class SectionCounts:
    """Counts of the samples that passed a filter.

    ``per_entry[k]``: kernel-mode samples whose ip lies in entry *k* of the map;
    ``per_event[k, a]``: the same per event (attr index).  Samples of one entry can be
    listed (:meth:`rows_of`) when the counts come from an index.
    """

    rec: Recording
    per_entry: np.ndarray
    per_event: np.ndarray
    kernel_samples: int
    unattributed_kernel_samples: int
    user_samples: int
    other_samples: int
    flt: Filter | None = None
    ctx: FilterContext | None = None
    smap: SectionMap | None = None  # set when the counts come from an index
    # without an index: distinct kernel ips, their entry and their sample counts
    ips: np.ndarray = field(default_factory=lambda: np.empty(0, np.uint64))
    ip_owner: np.ndarray = field(default_factory=lambda: np.empty(0, np.int32))
    ip_counts_: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))

    def by_event(self, entry: int) -> np.ndarray:
        """Samples of one entry per attr (event) index."""
        out: np.ndarray = self.per_event[entry]
        return out

    def rows_of(self, entry: int) -> np.ndarray:
        """Index rows of the samples in ``entry`` that pass the filter (needs the index)."""
        return self.rows_in([entry])

    def rows_in(self, entries: Sequence[int]) -> np.ndarray:
        """Index rows (ascending) of the samples in any of ``entries`` that pass the filter
        (needs the index): one pass for a whole module's sections."""
        parts = list(self.row_blocks_in(entries))
        return np.concatenate(parts) if parts else np.empty(0, np.int64)

    def row_blocks_in(self, entries: Sequence[int]) -> Iterator[np.ndarray]:
        """:meth:`rows_in` a block of the index at a time (the memory of one block)."""
        if self.smap is None:
            raise ValueError("the samples of a section are listed from an index")
        owner = section_owner(self.rec, self.smap)
        want = np.asarray(entries, dtype=np.int64)
        if not len(want):
            return
        for lo in range(0, len(owner), BLOCK):
            part = owner[lo:lo + BLOCK]
            hit = part == want[0] if len(want) == 1 else np.isin(part, want)
            rows = np.flatnonzero(hit) + lo
            if len(rows) and self.flt is not None and not self.flt.empty:
                rows = rows[self.flt.mask(self.rec, rows, self.ctx)]
            yield rows

    def ips_of(self, entry: int) -> np.ndarray:
        """The ips of one entry's samples, read back from the recording."""
        return self.rec.sample_values(self.rows_of(entry), "ip")

    def ip_counts(self, entry: int) -> tuple[np.ndarray, np.ndarray]:
        """(distinct ips, samples at each) of one entry."""
        if self.smap is None:
            sel = self.ip_owner == entry
            ips, inv = np.unique(self.ips[sel], return_inverse=True)
            return ips, np.bincount(inv, weights=self.ip_counts_[sel],
                                    minlength=len(ips)).astype(np.int64)
        ips, counts = np.unique(self.ips_of(entry), return_counts=True)
        return ips, counts.astype(np.int64)


def map_signature(smap: SectionMap) -> str:
    """What identifies the entries of a map (a kept owner column is valid for it only)."""
    text = json.dumps([[e.module, e.section, e.start, e.end, e.source]
                       for e in smap.entries])
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def section_owner(rec: Recording, smap: SectionMap) -> np.ndarray:
    """Per index row: the map entry holding a kernel-mode SAMPLE's ip, -1 for
    one in no section, NOT_KERNEL (-2) for every other row.  Worked out once (ips read
    back in blocks) and kept with a complete index (:mod:`~perftui.perfdata.derived`)."""
    n = len(rec.columns)
    sig = map_signature(smap)
    ne = len(smap.entries)
    dtype = "i2" if ne < 32000 else "i4"

    def restore(att: CachedIndex) -> tuple[str, np.ndarray]:
        if att.meta.get("map") != sig or att.meta.get("rows") != n:
            raise derived.Stale()  # of another map (or index): worked out again
        a = att.checked({"owner": dtype})
        one_per(a, ("owner",), n, "row")
        in_range(a["owner"], NOT_KERNEL, ne, "owner")
        return sig, a["owner"]

    complete = rec.indexed  # (of part of an index: worked out each time, not kept)
    got = derived.kept(rec, OWNER_NAME, restore, "module sections",
                       "counting them again") if complete else None
    if got is not None and got[0] == sig and len(got[1]) == n:
        return got[1]
    c = rec.columns
    store = derived.begin(rec) if complete else None
    try:
        out = store.array("owner", dtype, n) if store is not None else np.zeros(n, dtype)
    except OSError:  # a full disk: in memory, not kept
        store.discard()  # type: ignore[union-attr]
        store, out = None, np.zeros(n, dtype)
    for lo in range(0, n, BLOCK):
        hi = min(n, lo + BLOCK)
        o = out[lo:hi]
        o[:] = NOT_KERNEL
        k = np.flatnonzero((c["type"][lo:hi] == RecordType.SAMPLE)
                           & (c["cpumode"][lo:hi] == Misc.KERNEL))
        o[k] = smap.lookup(rec.sample_values(k + lo, "ip"))
    derived.commit(rec, store, OWNER_NAME, {"map": sig, "rows": n}, {"owner": out}, n,
                   value=(sig, out) if complete else None)
    return out


def count_sections(rec: Recording, smap: SectionMap, flt: Filter | None = None,
                   ctx: FilterContext | None = None) -> SectionCounts:
    """Kernel samples per section entry of an index; user and other cpumodes apart.

    Unfiltered counts are kept with the index (and in the cache): a reopened recording
    shows them without a pass over its rows.
    """
    plain = flt is None or flt.empty
    na = len(rec.attrs)
    ne = len(smap.entries)
    if plain:
        kept = kept_counts(rec, smap)
        if kept is not None:
            return kept
    owner = section_owner(rec, smap)
    c = rec.columns
    n = len(owner)
    per_event = np.zeros(ne * max(na, 1), np.int64)
    per_entry = np.zeros(ne, np.int64)
    kernel = outside = user = other = 0
    for lo in range(0, n, BLOCK):
        hi = min(n, lo + BLOCK)
        rows = np.flatnonzero(c["type"][lo:hi] == RecordType.SAMPLE) + lo
        if not plain:
            rows = rows[flt.mask(rec, rows, ctx)]  # type: ignore[union-attr]
        mode = c["cpumode"][rows]
        is_k = mode == Misc.KERNEL
        u = int(np.count_nonzero(mode == Misc.USER))
        k = rows[is_k]
        kernel += len(k)
        user += u
        other += len(rows) - len(k) - u
        o = owner[k].astype(np.int64)
        outside += int(np.count_nonzero(o < 0))
        if ne:
            per_entry += np.bincount(o[o >= 0], minlength=ne)[:ne]
        a = c["attr"][k].astype(np.int64)
        ok = (o >= 0) & (a >= 0) & (a < na)
        if ne and na:
            per_event += np.bincount(o[ok] * na + a[ok], minlength=ne * na)[: ne * na]
    counts = _counts(rec, ne, na, per_event, kernel, outside, user, other, flt, ctx, smap,
                     per_entry=per_entry)
    if plain:
        _keep_counts(rec, smap, counts)
    return counts


def _counts(rec: Recording, ne: int, na: int, per_event: np.ndarray, kernel: int,
            outside: int, user: int, other: int, flt: Filter | None,
            ctx: FilterContext | None, smap: SectionMap | None,
            per_entry: np.ndarray | None = None, **more: Any) -> SectionCounts:
    pe = per_event.reshape(ne, max(na, 1))[:, :na] if ne else np.zeros((0, na), np.int64)
    if per_entry is None:
        per_entry = pe.sum(axis=1).astype(np.int64) if ne else np.zeros(0, np.int64)
    return SectionCounts(rec, per_entry, pe, kernel, outside, user, other, flt, ctx, smap,
                         **more)


def kept_counts(rec: Recording, smap: SectionMap) -> SectionCounts | None:
    """The unfiltered counts kept with the index (a cache entry's: no pass over rows)."""
    sig, ne, na = map_signature(smap), len(smap.entries), len(rec.attrs)

    def restore(att: CachedIndex) -> tuple[str, SectionCounts]:
        meta = att.meta
        if meta.get("map") != sig or meta.get("rows") != rec.stats.records \
                or meta.get("attrs") != na:
            raise derived.Stale()  # of another map: counted again
        a = att.checked({"per_event": "i8", "per_entry": "i8"})
        one_per(a, ("per_event",), ne * max(na, 1), "section and event")
        one_per(a, ("per_entry",), ne, "section")
        for k in a:
            in_range(a[k], 0, 2**63 - 1, k)
        return sig, _counts(rec, ne, na, a["per_event"], int(meta["kernel"]),
                            int(meta["outside"]), int(meta["user"]), int(meta["other"]),
                            None, None, smap, per_entry=a["per_entry"])

    got = derived.kept(rec, COUNTS_NAME, restore, "section counts", "counting them again")
    return got[1] if got is not None and got[0] == sig else None


def _keep_counts(rec: Recording, smap: SectionMap, counts: SectionCounts) -> None:
    na = len(rec.attrs)
    pe = np.zeros((len(smap.entries), max(na, 1)), np.int64)
    pe[:, :na] = counts.per_event
    sig = map_signature(smap)
    meta = {"map": sig, "rows": rec.stats.records, "attrs": na,
            "kernel": counts.kernel_samples, "outside": counts.unattributed_kernel_samples,
            "user": counts.user_samples, "other": counts.other_samples}
    derived.keep(rec, COUNTS_NAME, meta, {"per_event": pe.ravel(),
                                          "per_entry": counts.per_entry.astype(np.int64)},
                 value=(sig, counts))


class _IpCounter:
    """Counts of (ip, attr) pairs: each chunk's reduced at once, all of them whenever the
    pending pairs reach twice the distinct ones (and 64 K), so memory follows the distinct
    pairs, not the samples."""

    REDUCE_AT = 1 << 16

    def __init__(self) -> None:
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.pending = 0
        self.distinct = 0

    def add(self, ips: np.ndarray, attrs: np.ndarray) -> None:
        if not len(ips):
            return
        for a in np.unique(attrs).tolist():
            u, n = np.unique(ips[attrs == a], return_counts=True)
            self.parts.append((u, np.full(len(u), a, np.int16), n.astype(np.int64)))
            self.pending += len(u)
        if self.pending >= max(self.REDUCE_AT, 2 * self.distinct):
            self._reduce()

    def _reduce(self) -> None:
        if not self.parts:
            return
        ips = np.concatenate([p[0] for p in self.parts])
        attrs = np.concatenate([p[1] for p in self.parts])
        counts = np.concatenate([p[2] for p in self.parts])
        order = np.lexsort((ips, attrs))
        ips, attrs, counts = ips[order], attrs[order], counts[order]
        new = np.ones(len(ips), dtype=bool)
        new[1:] = (ips[1:] != ips[:-1]) | (attrs[1:] != attrs[:-1])
        starts = np.flatnonzero(new)
        self.parts = [(ips[starts], attrs[starts], np.add.reduceat(counts, starts))]
        self.pending = self.distinct = len(starts)

    def finish(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        self._reduce()
        if not self.parts:
            return np.empty(0, np.uint64), np.empty(0, np.int16), np.empty(0, np.int64)
        return self.parts[0]


MAP_NAME = "sections.map"


def keep_section_map(rec: Recording, smap: SectionMap, build_ids: dict[str, str]) -> None:
    """Keep the map and the modules' build ids with the index: a reopened recording shows
    its section pane before its rows are read."""
    meta = {"source": smap.source, "warnings": list(smap.warnings), "build_ids": dict(build_ids),
            "entries": [[e.module, e.section, e.start, e.end, e.pgoff, e.path, e.source, e.record]
                        for e in smap.entries]}
    derived.keep(rec, MAP_NAME, meta, value=(smap, dict(build_ids)))


def kept_section_map(rec: Recording) -> tuple[SectionMap, dict[str, str]] | None:
    """The map and build ids kept by :func:`keep_section_map`, if any."""
    return derived.kept(rec, MAP_NAME, _restore_map, "section map", "building it again")


def _restore_map(att: CachedIndex) -> tuple[SectionMap, dict[str, str]]:
    meta = att.meta
    att.checked({})
    entries = [SectionEntry(str(m), None if s is None else str(s), int(a), int(b),
                            int(pg), str(p), str(src), int(r))
               for m, s, a, b, pg, p, src, r in meta["entries"]]
    smap = SectionMap(entries=entries, source=str(meta["source"]),
                      warnings=[str(w) for w in meta["warnings"]])
    build_ids = {str(k): str(v) for k, v in dict(meta["build_ids"]).items()}
    smap.finish()
    return smap, build_ids


@dataclass
class StreamedSections:
    """What one walk gives the section report: the map, the counts, the build-id records."""

    smap: SectionMap
    counts: SectionCounts
    build_id_records: list[dict[str, Any]]


def stream_sections(rec: Recording, flt: Filter | None = None) -> StreamedSections:
    """Count the kernel samples per section in one pass over a recording that has no
    index (``flt`` may not use ``section`` or ``comm``: they need what the index knows)."""
    map_records: list[MapRecord] = []
    build_ids: list[dict[str, Any]] = []
    acc = _IpCounter()
    user = other = 0
    base = 0
    # cpu, pid and tid are gathered only when the filter asks about them
    lean = flt is None or all(v is None for v in (flt.cpus, flt.pids, flt.tids, flt.comm))
    with rec.chunks_ahead() as chunks:
        for src, ch in chunks:
            part = rec.builder.rows(ch, max(src, 0), lean=lean)
            t = part["type"]
            special = np.flatnonzero(is_map_record(t, part["cpumode"])
                                     | (t == RecordType.HEADER_BUILD_ID))
            for i in special.tolist():
                offset = ch.outer if ch.outer is not None else int(ch.offs[i])
                try:
                    f: dict[str, Any] | ValueError = rec.chunk_decode(
                        ch, i, int(part["attr"][i]), int(t[i]))
                except ValueError as e:
                    f = e
                if t[i] == RecordType.HEADER_BUILD_ID:
                    if isinstance(f, dict):
                        build_ids.append(f)
                else:
                    map_records.append((base + i, offset, f))
            sm = np.flatnonzero(t == RecordType.SAMPLE)
            if flt is not None and not flt.empty:
                sm = sm[flt.mask(rec, sm, None, cols=part)]
            mode = part["cpumode"][sm]
            k = sm[mode == Misc.KERNEL]
            u = int(np.count_nonzero(mode == Misc.USER))
            user += u
            other += len(sm) - len(k) - u
            acc.add(rec.chunk_sample_values(ch, k, part["attr"][k], part["size"][k]),
                    part["attr"][k])
            base += len(t)
    smap = build_section_map(rec, map_records)
    ips, attrs, counts = acc.finish()
    owner = smap.lookup(ips).astype(np.int64)
    ne, na = len(smap.entries), len(rec.attrs)
    a = attrs.astype(np.int64)
    ok = (owner >= 0) & (a >= 0) & (a < na)
    per_event = np.zeros(ne * max(na, 1), np.int64)
    if ne and na:
        per_event += np.bincount(owner[ok] * na + a[ok], weights=counts[ok],
                                 minlength=ne * na)[: ne * na].astype(np.int64)
    in_entry = owner >= 0
    per_entry = (np.bincount(owner[in_entry], weights=counts[in_entry], minlength=ne)
                 .astype(np.int64) if ne else np.zeros(0, np.int64))
    sc = _counts(rec, ne, na, per_event, int(counts.sum()), int(counts[owner < 0].sum()),
                 user, other, flt, None, None, per_entry=per_entry, ips=ips,
                 ip_owner=owner.astype(np.int32), ip_counts_=counts)
    return StreamedSections(smap, sc, build_ids)


def split_by(rec: Recording, rows: np.ndarray, column: str) -> list[tuple[int, int]]:
    """(value, count) of an index column (``cpu``, ``pid``, ``tid``) over rows, by count."""
    vals, counts = np.unique(rec.columns[column][rows], return_counts=True)
    order = np.lexsort((vals, -counts))
    return [(int(vals[i]), int(counts[i])) for i in order]
