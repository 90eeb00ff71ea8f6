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
    kept or dropped.  ``kept``: the results derived from the recording that were kept
    or read back this session, by name (:mod:`~perftui.perfdata.derived`, the one way
    they go in and out of the cache).
    """

    origin: str = ""
    columns: Columns = field(default_factory=Columns)
    stats: IndexStats = field(default_factory=IndexStats)
    others: RowList | np.ndarray = field(default_factory=lambda: RowList("others"))
    stream_starts: list[int] = field(default_factory=list)  # first row of each stream
    unknown_ids: int = 0
    outer_maps: dict[int, np.ndarray] = field(default_factory=dict)
    kept: dict[str, Any] = field(default_factory=dict)
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
