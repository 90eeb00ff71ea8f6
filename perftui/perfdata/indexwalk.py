"""Building a recording's index by walking its records: the columns, totals and others.

:func:`walk_index` walks every record of a :class:`~perftui.perfdata.recording.Recording`
into numpy :class:`~perftui.perfdata.index.Columns` (in a cache entry in the making, in
unlinked temporary files, or in memory), with the totals (:class:`IndexStats`) and the rows
that are not samples; :func:`scan` counts the records in one pass that keeps no index.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from .colstore import ColumnStore
from .constants import RecordType
from .index import NO_SOURCE, Columns, RowList
from .indexpersist import cache_identity, open_cached
from .stats import IndexStats

if TYPE_CHECKING:
    from .recording import Recording

__all__ = ["scan", "walk_index"]


def walk_index(rec: Recording, progress: Callable[[int, int], None] | None,
               budget: float) -> None:
    """Index every record by walking them; ``progress(records, bytes_done)`` about every
    ``budget`` s (``bytes_done`` -1 for records inside compressed data, and at the end)."""
    rec.drop_store()
    store = _new_store(rec)
    cols = rec.columns = Columns(store=store)
    others = rec.others = RowList("others", store)
    rec.entry_others = None
    stats = rec.stats = IndexStats()
    rec.derived_arrays = {}
    rec.derived_meta = {}
    rec.outer_maps = {}
    rec.index_origin = "walk"
    rec.builder.unknown_ids = 0
    last = time.monotonic()
    first = True
    start_at = rec.streams[0][2] if rec.streams else 0
    growth = _Growth(rec.file_size, start_at)
    with rec.chunks_ahead() as chunks:
        for src, ch in chunks:
            if rec.cancelled:
                break
            if ch.outer is None and len(ch.offs) and rec.file_size > 0 and src == 0:
                growth.reserve(cols, int(ch.offs[-1]))
            part = rec.builder.rows(ch, src if src >= 0 else NO_SOURCE)
            base = len(cols)
            stats.add(part["type"], part["attr"], part["time"], len(rec.attrs))
            not_sample = np.flatnonzero(part["type"] != RecordType.SAMPLE)
            if len(not_sample):
                others.extend(not_sample + base)
            cols.append(part)  # last: a reader sees the rows once the rest is in place
            if progress is not None:
                now = time.monotonic()
                if now - last >= budget or first:  # the first chunk at once: first screen
                    first = False
                    last = now
                    progress(len(cols), int(ch.offs[-1]) if ch.outer is None else -1)
    rec.unknown_ids = rec.builder.unknown_ids
    cols.trim()
    others.trim()
    trouble = cols.store_error or others.store_error
    if trouble:  # a full disk: what was in the store is in memory now; nothing to keep
        if rec.cache is not None:
            rec.cache.note(f"index kept in memory, not cached ({trouble})")
        rec.drop_store()
    walker = rec.last_walker
    rec.outer_maps = {st.spill_src: np.array(st.outer_map, dtype=np.int64).reshape(-1, 2)
                      for st in (walker.states if walker is not None else [])
                      if st.spill_src >= 0}
    rec.indexed = not rec.cancelled
    if progress is not None:
        progress(len(cols), -1)


def scan(rec: Recording) -> IndexStats:
    """The totals of every record in one pass that keeps no index; from the cache when it
    has this recording."""
    if open_cached(rec):
        return rec.stats
    stats = rec.stats = IndexStats()
    rec.builder.unknown_ids = 0
    with rec.chunks_ahead() as chunks:
        for _src, ch in chunks:
            part = rec.builder.rows(ch, 0, lean=True)
            stats.add(part["type"], part["attr"], part["time"], len(rec.attrs))
    rec.unknown_ids = rec.builder.unknown_ids
    return stats


def _new_store(rec: Recording) -> ColumnStore | None:
    """Where the walk puts its columns: a cache entry in the making, else unlinked temporary
    files, else (nothing writable) anonymous memory."""
    if rec.cache is not None and cache_identity(rec) is not None:
        store = rec.cache.begin()
        if store is not None:
            rec.store = store
            return store
    if not rec.mapped:
        return None
    try:
        rec.store = ColumnStore.temporary()
    except OSError:
        return None
    return rec.store


class _Growth:
    """Grows the columns to the record count the bytes read so far predict.

    Estimated after the first chunk and again at 5%, 15% and 40% of the file, while the
    columns are still small: a late growth would copy (and briefly double) them all.
    """

    def __init__(self, file_size: int, start_at: int) -> None:
        self.file_size = file_size
        self.start_at = start_at
        self.next_estimate = 0.0

    def reserve(self, cols: Columns, done_at: int) -> None:
        start_at = self.start_at
        done = (done_at - start_at) / max(1, self.file_size - start_at)
        if done < self.next_estimate:
            return
        self.next_estimate = next((f for f in (0.05, 0.15, 0.4) if f > done), 2.0)
        per_byte = len(cols) / max(1, done_at - start_at)
        if per_byte > 0:
            cols.reserve(int((self.file_size - start_at) * per_byte * 1.05) + 1024)
