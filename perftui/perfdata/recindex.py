"""A recording's index as one object: its columns, totals, non-sample rows and derived data.

:class:`RecordingIndex` is what building an index gives: the walk
(:mod:`~perftui.perfdata.indexwalk`) fills a new one as it reads the records, the cache
(:mod:`~perftui.perfdata.indexpersist`) restores one from an entry, and
:class:`~perftui.perfdata.recording.Recording` holds the one it was last given
(``Recording.index``), assigned once per build; nothing else sets its parts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .colstore import ColumnStore, scratch
from .constants import RecordType
from .index import Columns, RowList
from .indexcache import CachedIndex
from .stats import IndexStats

__all__ = ["RecordingIndex"]

SCAN_BLOCK = 1 << 18  # rows per block when every sample row is listed


@dataclass(eq=False)
class RecordingIndex:
    """One build of a recording's index.

    ``origin``: "walk" or "cache" (the empty index of a recording not indexed yet, or only
    counted, has ""); ``complete``: every record is in ``columns`` (not stopped part way).
    ``others``: the rows of every record that is not a SAMPLE, ascending (a growing list
    while walking, a cache entry's array when restored).  ``outer_maps``: per spill source,
    (spill position, file offset of its COMPRESSED record) pairs.  ``store``: where a walk's
    columns are written (a cache entry in the making, or temporary files), until it is
    kept or dropped.  ``derived_arrays`` and ``derived_meta`` are the analysis layer's
    (named and filled there); a cache keeps them with the index.
    """

    origin: str = ""
    columns: Columns = field(default_factory=Columns)
    stats: IndexStats = field(default_factory=IndexStats)
    others: RowList | np.ndarray = field(default_factory=lambda: RowList("others"))
    stream_starts: list[int] = field(default_factory=list)  # first row of each stream
    unknown_ids: int = 0
    outer_maps: dict[int, np.ndarray] = field(default_factory=dict)
    derived_arrays: dict[str, np.ndarray] = field(default_factory=dict)
    derived_meta: dict[str, Any] = field(default_factory=dict)
    entry: CachedIndex | None = None  # the cache entry it was restored from
    store: ColumnStore | None = None
    complete: bool = False

    def other_rows(self) -> np.ndarray:
        """The rows that are not samples (of those indexed so far)."""
        o = self.others.rows if isinstance(self.others, RowList) else self.others
        return o[: int(np.searchsorted(o, len(self.columns)))]

    def rows_of_type(self, *codes: int) -> np.ndarray:
        """Index rows (of those indexed so far) whose type is one of ``codes``.

        Records that are not samples are listed apart while indexing, so asking for them
        looks at that short list, not at every row.
        """
        n = len(self.columns)
        t = self.columns["type"]
        if RecordType.SAMPLE not in codes:
            o = self.other_rows()
            return o[np.isin(t[o], codes)]
        # every sample: millions of rows, so two passes (count, then fill) into a mapped
        # scratch array rather than the blocks' parts and their concatenation in memory
        # (blocks of 2^18 rows: with 2^20 the fill's temporaries left ~15 MB in the heap
        # through a first report's names pass)
        block = SCAN_BLOCK
        counts = [int(np.count_nonzero(np.isin(t[lo:lo + block], codes)))
                  for lo in range(0, n, block)]
        out = scratch(np.int64, sum(counts))
        at = 0
        for lo, cnt in zip(range(0, n, block), counts, strict=True):
            if cnt:
                rows = np.flatnonzero(np.isin(t[lo:lo + block], codes))
                rows += lo
                out[at:at + cnt] = rows
                at += cnt
        return out

    def derived(self, name: str) -> np.ndarray | None:
        """A derived array kept with the index (None if there is none)."""
        a = self.derived_arrays.get(name)
        if a is not None:
            return a
        entry = self.entry
        if entry is not None and entry.has("d." + name):
            spec = entry.arrays["d." + name]
            if spec["length"] != entry.rows:  # checked at open; row arrays once indexed
                return entry.array("d." + name)
        return None

    def new_derived(self, name: str, dtype: str | np.dtype, length: int) -> np.ndarray:
        """A writable array for derived data, mapped from the index store when there is
        one; saving the index keeps it."""
        a: np.ndarray | None = None
        if self.store is not None:
            try:
                a = self.store.array("d." + name, dtype, length)
            except OSError:
                a = None
        if a is None:
            a = np.zeros(length, dtype=dtype)
        self.derived_arrays[name] = a
        return a
