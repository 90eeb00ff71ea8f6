"""Building a recording's index by walking its records: the columns, totals and others.

:func:`new_index` makes the empty :class:`~.recindex.RecordingIndex` a walk fills (its
columns in a cache entry in the making, in unlinked temporary files, or in memory);
:func:`walk_index` walks every record of a :class:`~perftui.perfdata.recording.Recording`
into it: numpy :class:`~perftui.perfdata.index.Columns`, the totals (:class:`IndexStats`)
and the rows that are not samples.  :func:`scan` counts the records in one pass that keeps
no index.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from .colstore import ColumnStore
from .constants import RecordType
from .index import NO_SOURCE, Columns, RowList
from .indexpersist import cache_identity
from .recindex import RecordingIndex
from .stats import IndexStats

if TYPE_CHECKING:
    from .recording import Recording

__all__ = ["new_index", "scan", "walk_index"]


def new_index(rec: Recording) -> RecordingIndex:
    """The empty index a walk of ``rec`` fills."""
    store = _new_store(rec)
    return RecordingIndex(origin="walk", columns=Columns(store=store),
                          others=RowList("others", store), store=store)


def walk_index(rec: Recording, idx: RecordingIndex,
               progress: Callable[[int, int], None] | None, budget: float) -> None:
    """Index every record into ``idx`` (of :func:`new_index`, held by ``rec``) by walking
    them; ``progress(records, bytes_done)`` about every ``budget`` s (``bytes_done`` -1 for
    records inside compressed data, and at the end)."""
    cols, others, stats = idx.columns, idx.others, idx.stats
    assert isinstance(others, RowList)
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
    idx.unknown_ids = rec.builder.unknown_ids
    idx.stream_starts = list(rec.walk_starts)
    cols.trim()
    others.trim()
    trouble = cols.store_error or others.store_error
    if trouble:  # a full disk: what was in the store is in memory now; nothing to keep
        if rec.cache is not None:
            rec.cache.note(f"index kept in memory, not cached ({trouble})")
        rec.drop_store()
    walker = rec.last_walker
    idx.outer_maps = {st.spill_src: np.array(st.outer_map, dtype=np.int64).reshape(-1, 2)
                      for st in (walker.states if walker is not None else [])
                      if st.spill_src >= 0}
    idx.complete = not rec.cancelled
    if progress is not None:
        progress(len(cols), -1)


def scan(rec: Recording) -> RecordingIndex:
    """The totals of every record in one pass that keeps no index: an index of no rows
    with those totals."""
    stats = IndexStats()
    rec.builder.unknown_ids = 0
    with rec.chunks_ahead() as chunks:
        for _src, ch in chunks:
            part = rec.builder.rows(ch, 0, lean=True)
            stats.add(part["type"], part["attr"], part["time"], len(rec.attrs))
    return RecordingIndex(stats=stats, unknown_ids=rec.builder.unknown_ids)


def _new_store(rec: Recording) -> ColumnStore | None:
    """Where the walk puts its columns: a cache entry in the making, else unlinked temporary
    files, else (nothing writable) anonymous memory."""
    if rec.cache is not None and cache_identity(rec) is not None:
        store = rec.cache.begin()
        if store is not None:
            return store
    if not rec.mapped:
        return None
    try:
        return ColumnStore.temporary()
    except OSError:
        return None


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
