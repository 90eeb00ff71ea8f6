"""A recording's index in the index cache: found, restored, checked, and saved.

:func:`open_cached` restores a :class:`~.recindex.RecordingIndex` from a valid entry:
its totals, small tables and its columns mapped but not yet visible (the recording's errors
and, in pipe mode, attrs and features come back too); :func:`load_cached_columns` checks
the columns block by block, rows becoming visible as they pass; :func:`save_index` keeps a
walk's complete index.  A bad entry is removed and everything taken from it undone
(:func:`forget_entry`), so the recording builds its index again.  The on-disk format is
:mod:`perftui.perfdata.indexcache`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from .constants import RecordType
from .errors import PerfDataError
from .index import COLUMNS, NO_SOURCE, Columns
from .indexcache import BLOCK_ROWS, CachedIndex, CacheError, file_identity, key_of
from .recindex import RecordingIndex
from .sources import MmapSource
from .stats import IndexStats

if TYPE_CHECKING:
    from .recording import Recording

__all__ = ["cache_identity", "forget_entry", "load_cached_columns", "open_cached",
           "save_index"]

#: pipe-mode header records, read again from the file when an index is restored
_REPLAY = (RecordType.HEADER_ATTR, RecordType.HEADER_FEATURE, RecordType.HEADER_TRACING_DATA)
#: what a bad entry raises while it is read (it is then removed, never trusted)
_CACHE_ERRORS = (CacheError, OSError, ValueError, KeyError, TypeError, IndexError)


def cache_identity(rec: Recording) -> tuple[str, list[dict[str, Any]]] | None:
    """(cache key, identity of each file), or None for standard input."""
    if rec.stdin is not None:
        return None
    files = []
    for s in rec.sources[: rec.n_file_sources]:
        if not isinstance(s, MmapSource) or s.stat is None or s.path is None:
            return None
        files.append(file_identity(s.path, s.stat, s.buf))
    if rec.mode == "directory":
        files[0]["path"] = os.path.abspath(rec.path)
    return key_of(rec.mode, files, COLUMNS), files


def open_cached(rec: Recording) -> RecordingIndex | None:
    """The index of a valid cache entry with its totals and small tables, its columns of
    no visible rows yet (checked by :func:`load_cached_columns`).  None when there is none."""
    if rec.cache is None or rec.walks:
        return None
    ident = cache_identity(rec)
    if ident is None:
        return None
    entry = rec.cache.lookup(*ident)
    if entry is None:
        return None
    try:
        return _restore(rec, entry)
    except _CACHE_ERRORS as e:
        forget_entry(rec, entry, e)
        return None


def _restore(rec: Recording, entry: CachedIndex) -> RecordingIndex:
    st = entry.state
    if st["mode"] != rec.mode or st["sources"] != rec.n_file_sources:
        raise CacheError("made for another kind of recording")
    stats = IndexStats.from_json(st["stats"])
    if stats.records != entry.rows:
        raise CacheError("totals do not match the row count")
    for name in entry.arrays:
        if name not in COLUMNS:
            entry.check(name)  # not a row column: checked whole, now
    others = entry.array("others")
    if len(others) and (others[-1] >= entry.rows or np.any(np.diff(others) <= 0)
                        or others[0] < 0):
        raise CacheError("others: rows out of order")
    arrays = {k: entry.array(k) for k in COLUMNS}
    for name, a in arrays.items():
        if a.dtype != np.dtype(COLUMNS[name]) or len(a) != entry.rows:
            raise CacheError(f"{name}: not a column of this perftui")
    outer_maps: dict[int, np.ndarray] = {}
    for k, sp in enumerate(st["spills"]):
        src = int(sp["src"])
        if src != len(rec.sources):
            raise CacheError("spill sources out of order")
        m = entry.array(f"spill{k}")
        rec.sources.append(MmapSource(str(sp["name"]), m.data))
        outer = entry.array(f"outer{k}")
        outer_maps[src] = outer.reshape(-1, 2)
    idx = RecordingIndex(
        origin="cache", columns=Columns.of(arrays, 0), stats=stats, others=others,
        stream_starts=[int(x) for x in st["stream_starts"]],
        unknown_ids=int(st["unknown_ids"]), outer_maps=outer_maps, entry=entry)
    replay = [tuple(int(x) for x in r) for r in st["replay"]]
    if rec.mode == "pipe":
        rec.replay_header_records(replay)  # type: ignore[arg-type]
    del rec.errors[rec.n_open_errors:]  # the walk's errors, as it met them
    rec.errors.extend(PerfDataError(int(e[0]), str(e[1]), e[2] if e[2] is None
                                    else str(e[2])) for e in st["errors"])
    return idx


def load_cached_columns(rec: Recording, idx: RecordingIndex,
                        progress: Callable[[int, int], None] | None, budget: float) -> bool:
    """Check the columns of ``idx`` (of :func:`open_cached`, held by ``rec``) block by block;
    rows become visible as their blocks pass.  False (the entry removed) when one does not."""
    entry = idx.entry
    assert entry is not None
    cols = idx.columns
    try:
        arrays = {k: cols.cols[k] for k in COLUMNS}
        last = time.monotonic()
        nsrc = len(rec.sources)
        for lo in range(0, entry.rows, BLOCK_ROWS):
            if rec.cancelled:
                break
            hi = min(entry.rows, lo + BLOCK_ROWS)
            for k in arrays:
                entry.check(k, lo, hi)
            src = arrays["src"][lo:hi]
            if np.any((src >= nsrc) & (src != NO_SOURCE)):
                raise CacheError("src: a source this recording does not have")
            cols.n = hi
            now = time.monotonic()
            if progress is not None and (now - last >= budget or lo == 0):
                last = now
                progress(hi, -1)
    except _CACHE_ERRORS as e:
        forget_entry(rec, entry, e)
        return False
    idx.complete = not rec.cancelled
    if progress is not None:
        progress(len(cols), -1)
    return True


def forget_entry(rec: Recording, entry: CachedIndex, why: BaseException) -> None:
    """A bad entry: removed, and what the recording took from it (spill sources, errors)
    undone; the caller drops the index restored from it."""
    assert rec.cache is not None
    rec.cache.discard(entry.directory, f"index cache entry for {rec.path} was not "
                      f"usable ({why}): building the index again")
    entry.close()
    del rec.sources[rec.n_file_sources:]
    del rec.errors[rec.n_open_errors:]


def save_index(rec: Recording, idx: RecordingIndex) -> bool:
    """Keep ``idx``, the complete index of the last walk of ``rec``, in the cache (with
    the results derived from it kept so far, :mod:`.derived`).  False when it is not
    kept."""
    store = idx.store
    ident = cache_identity(rec)
    if (rec.cache is None or store is None or not store.keep or ident is None
            or not idx.complete or idx.origin != "walk" or rec.cancelled):
        return False
    key, files = ident
    cols = idx.columns
    n = len(cols)
    arrays: dict[str, np.ndarray] = {k: cols[k] for k in COLUMNS}
    arrays["others"] = idx.other_rows()
    spills: list[dict[str, Any]] = []
    for st in rec.last_walker.states if rec.last_walker is not None else []:
        if st.spill_src < 0 or st.spill is None:
            continue
        k = len(spills)
        spills.append({"src": st.spill_src, "name": st.spill.name})
        arrays[f"spill{k}"] = np.frombuffer(st.spill.buf, dtype=np.uint8)
        arrays[f"outer{k}"] = idx.outer_maps.get(
            st.spill_src, np.zeros((0, 2), np.int64)).ravel()
    t = cols["type"]
    o = arrays["others"]
    heads = o[np.isin(t[o], _REPLAY)] if rec.mode == "pipe" else o[:0]
    replay = [[int(t[i]), int(cols["src"][i]), int(cols["pos"][i]), int(cols["size"][i])]
              for i in heads]
    state = {"mode": rec.mode, "sources": rec.n_file_sources, "spills": spills,
             "stats": idx.stats.as_json(), "stream_starts": list(idx.stream_starts),
             "unknown_ids": idx.unknown_ids, "replay": replay,
             "errors": [[e.offset, e.message, e.path]
                        for e in rec.errors[rec.n_open_errors:][:1000]]}
    manifest = {"files": files, "rows": n, "state": state, "meta": {}}
    idx.store = None
    return rec.cache.commit(store, key, manifest, arrays)

