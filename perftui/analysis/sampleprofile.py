"""``perftui report``'s hotspot table (:class:`~.profile.Profile`) from every sample's
resolved locations (:class:`~perftui.symbols.naming.samplelocs.SampleLocs`).

The samples are grouped by their per-sample keys (comm, pid/tid, cpu) and their stack
(own location and callchain), a chunk at a time with bounded memory
(:func:`group_samples`, which folded stacks, pprof and the call graphs use too); the
groups are counted into rows by :func:`.tablerows.table_rows`, the aggregation the
browser's tables share.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .. import heap
from ..perfdata.grouping import DenseGrouper, group_ids
from ..symbols.naming.samplelocs import SampleLocs
from .keycodes import KeyCodes
from .packing import Packer
from .profile import Profile, ProfileRow, _group, sum_by
from .sortkeys import SORT_KEYS
from .tablerows import Stacks, Weighed, loc_keys, table_rows

Taker = Callable[[int, int], np.ndarray | slice]


def taker(pos: np.ndarray | slice, size: int) -> tuple[int, Taker]:
    """(how many, positions ``[lo, hi)`` of them) of the positions ``pos`` of ``size``
    samples (a slice stays a slice: no array as long as the samples)."""
    if isinstance(pos, slice):
        r = range(*pos.indices(size))
        base = r.start if len(r) else 0

        def sliced(lo: int, hi: int) -> np.ndarray | slice:
            return slice(base + lo, base + hi)
        return len(r), sliced

    def part(lo: int, hi: int) -> np.ndarray | slice:
        return pos[lo:hi]
    return len(pos), part

#: Samples grouped at a time: bounds the per-sample temporaries (RssAnon) at any size.
CHUNK = 1 << 18
#: Key ranges up to which the chunks are grouped by presence and id tables made once
#: (:class:`~perftui.perfdata.grouping.DenseGrouper`: 5 bytes a value) instead of a sort.
DENSE_SPACE = 1 << 20
#: Chunks' groups held before they are merged (at least; else twice the merged ones).  A
#: merge's temporaries are a few times this: 2^17, not 2^18, took a first ``report
#: --children``'s peak down by ~3 MB in the same time (more merges, each half the size).
MERGE_AT = 1 << 17
#: a children table of at least this many samples gives its blocks' freed temporaries back
#: to the system (``malloc_trim``, ~10 ms) before its rows are made: at 50 M records they
#: were ~25 MB of the report's peak
TRIM_AT = 1 << 20


@dataclass
class Groups:
    """Samples grouped by key columns: the distinct rows (columns), and per group the sum
    of the periods, the sample count, its first sample (position in the selection) and
    that sample's ``rank`` (its position, without ranks given: first in file order)."""

    cols: list[np.ndarray]
    period: np.ndarray
    count: np.ndarray
    first: np.ndarray
    rank: np.ndarray


def group_samples(n: int, columns: Callable[[int, int], list[np.ndarray]],
                  period: Callable[[int, int], np.ndarray],
                  ranges: Sequence[int | None],
                  rank: Callable[[int, int], np.ndarray] | None = None) -> Groups:
    """:class:`Groups` of ``n`` samples whose key columns for samples ``[lo, hi)`` are
    ``columns(lo, hi)`` and periods ``period(lo, hi)``, a chunk at a time: per chunk
    grouped and summed, then the chunks' groups merged.  ``ranges``: per column, the
    number of values it can take (``[0, k)``), or None when unknown; a column with a
    known range is compacted to the values present (a first pass notes them).
    ``rank(lo, hi)``: the samples' ranks (distinct), when a group's first sample is the
    one of lowest rank (perf's processing order) rather than the first in the selection."""
    if not n:
        z = np.zeros(0, np.int64)
        return Groups([], z, z, z, z)
    lows = [0 if r is not None else np.iinfo(np.int64).max for r in ranges]
    highs = [0 if r is not None else np.iinfo(np.int64).min for r in ranges]
    present = [np.zeros(r, dtype=bool) if r is not None else None for r in ranges]
    for lo in range(0, n, CHUNK):  # the values or the range of every column
        for j, c in enumerate(columns(lo, min(n, lo + CHUNK))):
            pj = present[j]
            if pj is not None:
                pj[c] = True
            else:
                lows[j] = min(lows[j], int(c.min()))
                highs[j] = max(highs[j], int(c.max()))
    pk = Packer()
    for lo, hi, pj in zip(lows, highs, present, strict=True):
        if pj is not None:
            pk.add_present(0, pj)
        else:
            pk.add_range(lo, hi - lo + 1)
    if pk.space >= 2**62:  # too wide for one int64: all at once, by rows
        cols = columns(0, n)
        uniq, inv, first = _group(np.stack(cols, axis=1))
        m = len(first)
        p = period(0, n).astype(np.int64)
        first, first_rank = _lowest(inv, first, rank, 0, n)
        return Groups([uniq[:, j] for j in range(uniq.shape[1])], sum_by(inv, p, m),
                      np.bincount(inv, minlength=m).astype(np.int64), first, first_rank)
    # (keys, sums, counts, firsts, their ranks) not merged yet
    parts: list[tuple[np.ndarray, ...]] = []
    merged = 0  # groups in parts[0] once merged
    dense = DenseGrouper(pk.space, min(n, CHUNK)) if pk.space <= DENSE_SPACE else None
    for lo in range(0, n, CHUNK):
        hi = min(n, lo + CHUNK)
        flat = pk.pack(columns(lo, hi), hi - lo)
        u, inv, first = dense(flat) if dense is not None else group_ids(flat, pk.space)
        del flat
        m = len(u)
        first, first_rank = _lowest(inv, first, rank, lo, hi)
        parts.append((u, sum_by(inv, period(lo, hi), m),
                      np.bincount(inv, minlength=m).astype(np.int64), first + lo,
                      first_rank))
        # the chunks' groups merged as they come, once they outgrow the merged ones: kept
        # per chunk to the end they took ~150 MB at 48 M samples (92 chunks of ~50 K)
        if sum(len(p[0]) for p in parts) > max(2 * merged, MERGE_AT):
            parts = [_merge_groups(parts)]
            merged = len(parts[0][0])
    if len(parts) > 1:
        parts = [_merge_groups(parts)]
    u, sums, counts, first, first_rank = parts[0]
    return Groups(pk.unpack(u), sums, counts, first, first_rank)


def _lowest(inv: np.ndarray, first: np.ndarray, rank: Callable[[int, int], np.ndarray] | None,
            lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """(position in ``[lo, hi)`` of each group's sample of lowest rank, that rank) of samples
    ``lo:hi`` grouped as ``inv`` (``first``: each group's first sample there); without
    ranks, the first sample and its position ``lo + first`` as its rank."""
    if rank is None:
        return first, first + lo
    r = np.asarray(rank(lo, hi), dtype=np.int64)
    return _least(inv, r, len(first))


def _least(inv: np.ndarray, r: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """(position of each of ``m`` groups' lowest ``r``, that value): ``r`` distinct."""
    best = np.full(m, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(best, inv, r)
    pick = np.flatnonzero(r == best[inv])
    at = np.empty(m, np.int64)
    at[inv[pick]] = pick
    return at, best


def _merge_groups(parts: list[tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
    """One (keys, sums, counts, firsts, ranks) of several: equal keys summed, the first
    of lowest rank kept.  By a sort: a presence table over the keys' range took ~50 MB at
    10^6 keys, where the sort's temporaries are a few times the keys."""
    u, inv, _f = group_ids(np.concatenate([p[0] for p in parts]))
    m = len(u)
    at, first_rank = _least(inv, np.concatenate([p[4] for p in parts]), m)
    first = np.concatenate([p[3] for p in parts])[at]
    return (u, sum_by(inv, np.concatenate([p[1] for p in parts]), m),
            sum_by(inv, np.concatenate([p[2] for p in parts]), m), first, first_rank)


def profile_of(sl: SampleLocs, pos: np.ndarray | slice, index: Mapping[str, np.ndarray],
               keys: tuple[str, ...], children: bool,
               comm_names: Sequence[str] | None = None,
               codes: KeyCodes | None = None) -> Profile:
    """The table of the samples at positions ``pos`` of ``sl``, grouped by ``keys``
    (``index``: the index columns, for the tid and cpu keys): the samples grouped here a
    chunk at a time, counted by :func:`.tablerows.table_rows`."""
    if children and sl.stack is None:
        raise ValueError("the callchains were not resolved")
    codes = codes.with_keys(keys) if codes is not None else KeyCodes(sl.locs, keys,
                                                                      sl.comm_names)
    if comm_names is not None:
        codes.comm_names = comm_names
    codes.refresh()
    n, take = taker(pos, len(sl))
    lk, _lk_loc = loc_keys(codes, keys)
    by = sl.stack if children else sl.leaf
    assert by is not None
    per_sample = [SORT_KEYS[k] for k in keys if not SORT_KEYS[k].per_location]
    ranges: list[int | None] = [k.code_range(sl.comm_names) for k in per_sample]
    ranges.append(len(sl.stack_starts) - 1 if children else int(lk.max(initial=-1)) + 1)

    def columns(lo: int, hi: int) -> list[np.ndarray]:
        p = take(lo, hi)
        cols = []
        for k in per_sample:
            if k.column == "comm":
                cols.append(sl.comm[p])  # (int32 codes: packed as they are)
            else:  # the index's column (perf's pid key is the thread: its tid)
                assert k.column is not None
                cols.append(index[k.column][sl.rows[p]].astype(np.int64))
        last = by[p]  # (int32 ids)
        cols.append(last if children else lk[last])
        return cols

    ranks = sl.rank
    g = group_samples(n, columns, lambda lo, hi: sl.period[take(lo, hi)], ranges,
                      None if ranks is None else lambda lo, hi: ranks[take(lo, hi)])
    if n >= TRIM_AT:  # the chunks' freed temporaries: given back before the next step's
        heap.trim()
    total_period = int(g.period.astype(np.uint64).sum(dtype=np.uint64))
    rows: list[ProfileRow] = []
    if n:
        if children:
            stack = g.cols[-1]
            own = sl.stack_locs[sl.stack_starts[stack]].astype(np.int64)
        else:
            stack, own = None, _leaf_at(sl, pos, g.first)
        w = Weighed(g.cols[:-1], own, g.period, g.count, g.rank, stack)
        t = table_rows(codes, keys, children, w,
                       Stacks(sl.stack_starts, sl.stack_locs) if children else None)
        if children and n >= TRIM_AT:  # the expansion's temporaries, before the rows
            heap.trim()
        rows = _rows(t.key, t.loc, t.self_p, t.child_p, t.count, t.child_n)
    return Profile(keys, children, total_period, n, rows, codes)


def _leaf_at(sl: SampleLocs, pos: np.ndarray | slice, first: np.ndarray) -> np.ndarray:
    at = first + pos.indices(len(sl))[0] if isinstance(pos, slice) else pos[first]
    out: np.ndarray = sl.leaf[at].astype(np.int64)
    return out


def _rows(keys: np.ndarray, loc: np.ndarray, self_p: np.ndarray, child_p: np.ndarray,
          count: np.ndarray, child_n: np.ndarray) -> list[ProfileRow]:
    tuples = zip(*(keys[:, j].tolist() for j in range(keys.shape[1])), strict=True)
    return [ProfileRow(k, lc, s, c, m, cn)
            for k, lc, s, c, m, cn in zip(tuples, loc.tolist(), self_p.tolist(),
                                          child_p.tolist(), count.tolist(), child_n.tolist(),
                                          strict=True)]
