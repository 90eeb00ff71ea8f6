"""A recording's index in the index cache: found, restored, checked, and saved.

:func:`open_cached` takes a valid entry's totals, errors and small tables into a
:class:`~perftui.perfdata.recording.Recording`; :func:`load_cached_columns` maps its
columns and checks them block by block; :func:`save_index` keeps a walk's complete index.
A bad entry is removed and everything taken from it undone (:func:`forget_entry`), so the
recording builds its index again.  The on-disk format is :mod:`perftui.perfdata.indexcache`.
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


def open_cached(rec: Recording) -> bool:
    """Take a valid cache entry's totals, errors and small tables (its columns are checked
    later, by :func:`load_cached_columns`).  False when there is none."""
    if rec.cache_entry is not None:
        return True
    if rec.cache is None or rec.walks:
        return False
    ident = cache_identity(rec)
    if ident is None:
        return False
    entry = rec.cache.lookup(*ident)
    if entry is None:
        return False
    try:
        _restore(rec, entry)
    except _CACHE_ERRORS as e:
        forget_entry(rec, entry, e)
        return False
    rec.cache_entry = entry
    return True


def _restore(rec: Recording, entry: CachedIndex) -> None:
    st = entry.state
    if st["mode"] != rec.mode or st["sources"] != rec.n_file_sources:
        raise CacheError("made for another kind of recording")
    stats = IndexStats.from_json(st["stats"])
    if stats.records != entry.rows:
        raise CacheError("totals do not match the row count")
    for name in entry.arrays:
        if not _row_array(name, entry):
            entry.check(name)  # not a row column: checked whole, now
    others = entry.array("others")
    if len(others) and (others[-1] >= entry.rows or np.any(np.diff(others) <= 0)
                        or others[0] < 0):
        raise CacheError("others: rows out of order")
    for k, sp in enumerate(st["spills"]):
        src = int(sp["src"])
        if src != len(rec.sources):
            raise CacheError("spill sources out of order")
        m = entry.array(f"spill{k}")
        rec.sources.append(MmapSource(str(sp["name"]), m.data))
        outer = entry.array(f"outer{k}")
        rec.outer_maps[src] = outer.reshape(-1, 2)
    rec.stats = stats
    rec.entry_others = others
    rec.stream_starts = [int(x) for x in st["stream_starts"]]
    rec.unknown_ids = int(st["unknown_ids"])
    rec.derived_meta = dict(entry.meta)
    replay = [tuple(int(x) for x in r) for r in st["replay"]]
    if rec.mode == "pipe":
        rec.replay_header_records(replay)  # type: ignore[arg-type]
    del rec.errors[rec.n_open_errors:]  # the walk's errors, as it met them
    rec.errors.extend(PerfDataError(int(e[0]), str(e[1]), e[2] if e[2] is None
                                    else str(e[2])) for e in st["errors"])
    rec.index_origin = "cache"


def load_cached_columns(rec: Recording, progress: Callable[[int, int], None] | None,
                        budget: float) -> bool:
    """Map the entry's columns and check them block by block; rows become visible as their
    blocks pass.  False (the entry removed) when one does not."""
    entry = rec.cache_entry
    assert entry is not None
    try:
        arrays = {k: entry.array(k) for k in COLUMNS}
        for k, a in arrays.items():
            if a.dtype != np.dtype(COLUMNS[k]) or len(a) != entry.rows:
                raise CacheError(f"{k}: not a column of this perftui")
        rowwise = [k for k in entry.arrays if _row_array(k, entry) and k not in arrays]
        cols = rec.columns = Columns.of(arrays, 0)
        last = time.monotonic()
        nsrc = len(rec.sources)
        for lo in range(0, entry.rows, BLOCK_ROWS):
            if rec.cancelled:
                break
            hi = min(entry.rows, lo + BLOCK_ROWS)
            for k in (*arrays, *rowwise):
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
    for k in rowwise:
        if k.startswith("d."):
            rec.derived_arrays[k[2:]] = entry.array(k)
    rec.indexed = not rec.cancelled
    if progress is not None:
        progress(len(rec.columns), -1)
    return True


def forget_entry(rec: Recording, entry: CachedIndex, why: BaseException) -> None:
    """A bad entry: removed, and everything taken from it undone."""
    assert rec.cache is not None
    rec.cache.discard(entry.directory, f"index cache entry for {rec.path} was not "
                      f"usable ({why}): building the index again")
    entry.close()
    rec.cache_entry = None
    rec.entry_others = None
    del rec.sources[rec.n_file_sources:]
    del rec.errors[rec.n_open_errors:]
    rec.outer_maps = {}
    rec.stats = IndexStats()
    rec.columns = Columns()
    rec.derived_meta = {}
    rec.derived_arrays = {}
    rec.stream_starts = []
    rec.index_origin = ""


def save_index(rec: Recording) -> bool:
    """Keep the complete index of the last walk (and the derived arrays and ``derived_meta``
    added since) in the cache.  False when it is not kept."""
    store = rec.store
    ident = cache_identity(rec)
    if (rec.cache is None or store is None or not store.keep or ident is None
            or not rec.indexed or rec.index_origin != "walk" or rec.cancelled):
        return False
    key, files = ident
    n = len(rec.columns)
    arrays: dict[str, np.ndarray] = {k: rec.columns[k] for k in COLUMNS}
    arrays["others"] = rec.others.rows
    spills: list[dict[str, Any]] = []
    for st in rec.last_walker.states if rec.last_walker is not None else []:
        if st.spill_src < 0 or st.spill is None:
            continue
        k = len(spills)
        spills.append({"src": st.spill_src, "name": st.spill.name})
        arrays[f"spill{k}"] = np.frombuffer(st.spill.buf, dtype=np.uint8)
        arrays[f"outer{k}"] = rec.outer_maps.get(
            st.spill_src, np.zeros((0, 2), np.int64)).ravel()
    for name, a in rec.derived_arrays.items():
        arrays["d." + name] = a
    t = rec.columns["type"]
    o = rec.others.rows
    heads = o[np.isin(t[o], _REPLAY)] if rec.mode == "pipe" else o[:0]
    c = rec.columns
    replay = [[int(t[i]), int(c["src"][i]), int(c["pos"][i]), int(c["size"][i])]
              for i in heads]
    state = {"mode": rec.mode, "sources": rec.n_file_sources, "spills": spills,
             "stats": rec.stats.as_json(), "stream_starts": list(rec.stream_starts),
             "unknown_ids": rec.unknown_ids, "replay": replay,
             "errors": [[e.offset, e.message, e.path]
                        for e in rec.errors[rec.n_open_errors:][:1000]]}
    manifest = {"files": files, "rows": n, "state": state, "meta": rec.derived_meta}
    rec.store = None
    return rec.cache.commit(store, key, manifest, arrays)


def _row_array(name: str, entry: CachedIndex) -> bool:
    """A column, or a derived array with one value per row: checked block by block."""
    return name in COLUMNS or (name.startswith("d.")
                               and entry.arrays[name]["length"] == entry.rows)
