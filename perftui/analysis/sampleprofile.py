"""The hotspot table (:class:`~.profile.Profile`) from every sample's resolved locations
(:class:`~perftui.symbols.naming.samplelocs.SampleLocs`), with the rules of :mod:`.profile`.

The work is per *group* of samples that share their per-sample keys (comm, pid/tid, cpu)
and their stack (own location and callchain), not per sample: self is one grouped sum;
children takes each distinct stack's distinct rows once (computed once per stack) and adds
each group's period to them.  A row's location (for its names) is the one of the first
sample, in file order, that adds to it (its own location, else the first entry of its
callchain with the row's keys).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .. import heap
from ..perfdata.grouping import DenseGrouper, group_ids
from ..symbols.naming.samplelocs import SampleLocs
from .keycodes import KeyCodes
from .profile import Profile, ProfileRow, _group, order_rows, sum_by
from .sortkeys import SORT_KEYS

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

Parts = tuple[list[np.ndarray], np.ndarray, np.ndarray, np.ndarray, np.ndarray]


class Packer:
    """Integer columns folded into one int64 (mixed radix) and back.  A column is either
    a range ``[low, low + card)``, or compacted: its values present, ranked (``rank``
    maps ``value - low`` to the rank, ``values`` a rank to the value), so that the folded
    space is the product of the values present, not of the ranges."""

    def __init__(self) -> None:
        self.lows: list[int] = []
        self.cards: list[int] = []
        self.ranks: list[np.ndarray | None] = []
        self.values: list[np.ndarray | None] = []

    def add(self, col: np.ndarray) -> None:
        lo, hi = (int(col.min()), int(col.max())) if len(col) else (0, 0)
        self.add_range(lo, hi - lo + 1)

    def add_range(self, lo: int, card: int) -> None:
        self.lows.append(lo)
        self.cards.append(card)
        self.ranks.append(None)
        self.values.append(None)

    def add_present(self, lo: int, present: np.ndarray) -> None:
        """A compacted column: ``present[v - lo]`` for each value ``v`` met."""
        values = np.flatnonzero(present)
        rank = np.cumsum(present, dtype=np.int64) - 1
        self.lows.append(lo)
        self.cards.append(max(1, len(values)))
        self.ranks.append(rank)
        self.values.append(values + lo)

    @property
    def space(self) -> int:
        return int(np.prod(self.cards, dtype=object)) if self.cards else 1

    def pack(self, cols: list[np.ndarray], n: int) -> np.ndarray:
        flat = np.zeros(n, dtype=np.int64)
        for col, lo, card, rank in zip(cols, self.lows, self.cards, self.ranks, strict=True):
            flat *= card
            v = col - lo if lo else col
            flat += rank[v] if rank is not None else v
        return flat

    def unpack(self, flat: np.ndarray) -> list[np.ndarray]:
        out = []
        for lo, card, values in zip(reversed(self.lows), reversed(self.cards),
                                    reversed(self.values), strict=True):
            r = flat % card
            out.append(values[r] if values is not None else r + lo)
            flat = flat // card
        return out[::-1]


def _grouped(cols: list[np.ndarray], n: int) -> tuple[list[np.ndarray], np.ndarray,
                                                       np.ndarray]:
    """(the distinct rows of ``cols``, as columns; inverse; first index of each)."""
    pk = Packer()
    for c in cols:
        pk.add(c)
    if pk.space >= 2**62:  # too wide for one int64: rows
        uniq, inv, first = _group(np.stack(cols, axis=1))
        return [uniq[:, j] for j in range(uniq.shape[1])], inv, first
    u, inv, first = group_ids(pk.pack(cols, n), pk.space)
    return pk.unpack(u), inv, first


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
    of the periods, the sample count and the first sample (position in the selection)."""

    cols: list[np.ndarray]
    period: np.ndarray
    count: np.ndarray
    first: np.ndarray


def group_samples(n: int, columns: Callable[[int, int], list[np.ndarray]],
                  period: Callable[[int, int], np.ndarray],
                  ranges: Sequence[int | None]) -> Groups:
    """:class:`Groups` of ``n`` samples whose key columns for samples ``[lo, hi)`` are
    ``columns(lo, hi)`` and periods ``period(lo, hi)``, a chunk at a time: per chunk
    grouped and summed, then the chunks' groups merged.  ``ranges``: per column, the
    number of values it can take (``[0, k)``), or None when unknown; a column with a
    known range is compacted to the values present (a first pass notes them)."""
    if not n:
        return Groups([], np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
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
        return Groups([uniq[:, j] for j in range(uniq.shape[1])], sum_by(inv, p, m),
                      np.bincount(inv, minlength=m).astype(np.int64), first)
    parts: list[tuple[np.ndarray, ...]] = []  # (keys, sums, counts, firsts) not merged yet
    merged = 0  # groups in parts[0] once merged
    dense = DenseGrouper(pk.space, min(n, CHUNK)) if pk.space <= DENSE_SPACE else None
    for lo in range(0, n, CHUNK):
        hi = min(n, lo + CHUNK)
        flat = pk.pack(columns(lo, hi), hi - lo)
        u, inv, first = dense(flat) if dense is not None else group_ids(flat, pk.space)
        del flat
        m = len(u)
        parts.append((u, sum_by(inv, period(lo, hi), m),
                      np.bincount(inv, minlength=m).astype(np.int64), first + lo))
        # the chunks' groups merged as they come, once they outgrow the merged ones: kept
        # per chunk to the end they took ~150 MB at 48 M samples (92 chunks of ~50 K)
        if sum(len(p[0]) for p in parts) > max(2 * merged, MERGE_AT):
            parts = [_merge_groups(parts, n)]
            merged = len(parts[0][0])
    if len(parts) > 1:
        parts = [_merge_groups(parts, n)]
    u, sums, counts, first = parts[0]
    return Groups(pk.unpack(u), sums, counts, first)


def _merge_groups(parts: list[tuple[np.ndarray, ...]], n: int) -> tuple[np.ndarray, ...]:
    """One (keys, sums, counts, firsts) of several: equal keys summed, the first kept.
    By a sort: a presence table over the keys' range took ~50 MB at 10^6 keys, where the
    sort's temporaries are a few times the keys."""
    u, inv, _f = group_ids(np.concatenate([p[0] for p in parts]))
    m = len(u)
    first = np.full(m, n, dtype=np.int64)
    np.minimum.at(first, inv, np.concatenate([p[3] for p in parts]))
    return (u, sum_by(inv, np.concatenate([p[1] for p in parts]), m),
            sum_by(inv, np.concatenate([p[2] for p in parts]), m), first)


def _loc_keys(codes: KeyCodes, keys: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(dense id of each location's loc-key codes, the first location of each id)."""
    cols = [codes.of(k) for k in keys if SORT_KEYS[k].per_location]
    n = len(codes.locs)
    if not cols or not n:
        return np.zeros(n, np.int64), np.zeros(1 if n else 0, np.int64)
    _u, inv, first = _group(np.stack(cols, axis=1))
    return inv, first


def profile_of(sl: SampleLocs, pos: np.ndarray | slice, index: Mapping[str, np.ndarray],
               keys: tuple[str, ...], children: bool,
               comm_names: Sequence[str] | None = None,
               codes: KeyCodes | None = None) -> Profile:
    """The table of the samples at positions ``pos`` of ``sl``, grouped by ``keys``
    (``index``: the index columns, for the tid and cpu keys)."""
    if children and sl.stack is None:
        raise ValueError("the callchains were not resolved")
    codes = codes.with_keys(keys) if codes is not None else KeyCodes(sl.locs, keys,
                                                                      sl.comm_names)
    codes.refresh()
    n, take = taker(pos, len(sl))
    lk, lk_loc = _loc_keys(codes, keys)
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

    g = group_samples(n, columns, lambda lo, hi: sl.period[take(lo, hi)], ranges)
    if n >= TRIM_AT:  # the chunks' freed temporaries: given back before the next step's
        heap.trim()
    total_period = int(g.period.astype(np.uint64).sum(dtype=np.uint64))
    rows: list[ProfileRow] = []
    if n:
        if not children:
            parts = (g.cols, g.period, np.zeros(len(g.first), np.int64), g.count,
                     _leaf_at(sl, pos, g.first))
        else:
            parts = _children_rows(sl, g, lk)
            if n >= TRIM_AT:  # its blocks' temporaries, freed: given back before the rows
                heap.trim()
        rows = _rows(_keys(codes, keys, parts[0], lk_loc), *parts[1:])
    prof = Profile(keys, children, total_period, n, rows, codes)
    order_rows(prof, comm_names)
    return prof


def _leaf_at(sl: SampleLocs, pos: np.ndarray | slice, first: np.ndarray) -> np.ndarray:
    at = first + pos.indices(len(sl))[0] if isinstance(pos, slice) else pos[first]
    out: np.ndarray = sl.leaf[at].astype(np.int64)
    return out


def _keys(codes: KeyCodes, keys: tuple[str, ...], packed: list[np.ndarray],
          lk_loc: np.ndarray) -> np.ndarray:
    """Row key codes in ``keys`` order from the columns (per-sample codes..., loc-key id)."""
    m = len(packed[-1])
    loc = lk_loc[packed[-1]] if len(lk_loc) else np.zeros(m, np.int64)
    cols = []
    j = 0
    for k in keys:
        if not SORT_KEYS[k].per_location:
            cols.append(packed[j])
            j += 1
        else:
            cols.append(codes.of(k)[loc])
    return np.stack(cols, axis=1) if cols else np.zeros((m, 0), np.int64)


def _rows(keys: np.ndarray, self_p: np.ndarray, child_p: np.ndarray, count: np.ndarray,
          loc: np.ndarray) -> list[ProfileRow]:
    tuples = zip(*(keys[:, j].tolist() for j in range(keys.shape[1])), strict=True)
    return [ProfileRow(k, lc, s, c, m)
            for k, lc, s, c, m in zip(tuples, loc.tolist(), self_p.tolist(),
                                      child_p.tolist(), count.tolist(), strict=True)]


def _children_rows(sl: SampleLocs, g: Groups, lk: np.ndarray) -> Parts:
    """Rows with children from the groups of samples alike in their per-sample keys and
    their stack: each group adds to its own row and to each distinct row of its stack's
    callchain, once."""
    ng = len(g.first)
    g_stack = g.cols[-1]
    starts = sl.stack_starts
    g_leaf = sl.stack_locs[starts[g_stack]].astype(np.int64)
    g_own = lk[g_leaf]
    # the distinct loc-keys of each stack's callchain (after its own location), with the
    # first entry giving each
    used = np.unique(g_stack)
    d_chain, d_key, d_loc = _chain_keys(sl, used, lk)
    d_starts = np.searchsorted(d_chain, np.arange(len(used) + 1))
    # every group adds its period to each distinct row of its callchain once: a block of
    # groups at a time (all at once, the entries of every group's callchain took ~90 MB at
    # 50 M samples), each block's rows merged into the rows so far
    gc = np.searchsorted(used, g_stack)
    n_d = d_starts[gc + 1] - d_starts[gc]
    ends = np.cumsum(n_d)
    rows: _ChildRows | None = None
    lo = 0
    while lo < ng:
        hi = max(lo + 1, int(np.searchsorted(ends, (ends[lo - 1] if lo else 0)
                                             + CHILD_ENTRIES, side="right")))
        part = _child_block(np.arange(lo, hi, dtype=np.int64), g, g_own, g_leaf, gc, n_d,
                            d_starts, d_key, d_loc)
        rows = part if rows is None else _merge_child_rows([rows, part])
        lo = hi
    if rows is None:
        rows = _child_block(np.zeros(0, np.int64), g, g_own, g_leaf, gc, n_d, d_starts,
                            d_key, d_loc)
    return rows.cols, rows.self_p, rows.child_p, rows.count, rows.loc


def _chain_keys(sl: SampleLocs, used: np.ndarray, lk: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(chain, loc-key, location) of the distinct loc-keys of each stack ``used[chain]``'s
    callchain after its own location, with the location of the first entry giving each:
    by chain, then key.  A block of chains at a time (CHILD_ENTRIES entries): all at once,
    the entries' int64 temporaries were ~20 MB of a first report's peak at 50 M records."""
    starts = sl.stack_starts
    lens = starts[used + 1] - starts[used] - 1
    ends = np.cumsum(lens)
    out: list[tuple[np.ndarray, ...]] = []
    lo = 0
    while lo < len(used) or not out:
        hi = max(lo + 1, int(np.searchsorted(ends, (ends[lo - 1] if lo else 0) + CHILD_ENTRIES,
                                             side="right")))
        hi = min(hi, len(used))
        ln = lens[lo:hi]
        total = int(ln.sum())
        at = np.arange(total, dtype=np.int64)
        at += np.repeat(starts[used[lo:hi]] + 1 - (np.cumsum(ln) - ln), ln)
        e_loc = sl.stack_locs[at]
        del at
        c_of = np.repeat(np.arange(lo, hi, dtype=np.int64), ln)
        (d_chain, d_key), _d_inv, d_first = _grouped([c_of, lk[e_loc]], total)
        out.append((d_chain, d_key, e_loc[d_first].astype(np.int64)))
        lo = hi
    return tuple(np.concatenate(c) for c in zip(*out, strict=True))  # type: ignore[return-value]


#: Callchain entries of the groups expanded at a time by :func:`_children_rows`.
CHILD_ENTRIES = 1 << 17


@dataclass
class _ChildRows:
    """Rows with children being summed: key columns, sums, and the row's location with the
    rank (file order of what added it first) that chose it."""

    cols: list[np.ndarray]
    self_p: np.ndarray
    child_p: np.ndarray
    count: np.ndarray
    rank: np.ndarray
    loc: np.ndarray


def _child_block(gs: np.ndarray, g: Groups, g_own: np.ndarray, g_leaf: np.ndarray,
                 gc: np.ndarray, n_d: np.ndarray, d_starts: np.ndarray, d_key: np.ndarray,
                 d_loc: np.ndarray) -> _ChildRows:
    """The rows groups ``gs`` add to: each its own row, and each distinct row of its
    stack's callchain but its own (perf's he_cache check)."""
    nb = n_d[gs]
    e_total = int(nb.sum())
    e_group = np.repeat(gs, nb)
    e_d = np.repeat(d_starts[gc[gs]], nb) + np.arange(e_total, dtype=np.int64) - np.repeat(
        np.cumsum(nb) - nb, nb)
    keep = d_key[e_d] != g_own[e_group]
    e_group, e_d = e_group[keep], e_d[keep]
    cols = [np.concatenate([c[gs], c[e_group]]) for c in g.cols[:-1]]
    cols.append(np.concatenate([g_own[gs], d_key[e_d]]))
    g_period = g.period[gs]
    self_p = np.concatenate([g_period, np.zeros(len(e_group), np.int64)])
    child_p = np.concatenate([g_period, g.period[e_group]])
    count = np.concatenate([g.count[gs], np.zeros(len(e_group), np.int64)])
    loc = np.concatenate([g_leaf[gs], d_loc[e_d]])
    # which adds first, in file order: its group's first sample, its own row before its
    # callchain's
    rank = np.concatenate([g.first[gs] * 2, g.first[e_group] * 2 + 1])
    return _sum_child_rows(cols, self_p, child_p, count, rank, loc)


def _sum_child_rows(cols: list[np.ndarray], self_p: np.ndarray, child_p: np.ndarray,
                    count: np.ndarray, rank: np.ndarray, loc: np.ndarray) -> _ChildRows:
    """Equal key rows summed; each keeps the location of its lowest rank."""
    r_cols, inv, _first = _grouped(cols, len(loc))
    m = len(_first)
    best = np.full(m, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(best, inv, rank)
    pick = np.flatnonzero(rank == best[inv])
    row_loc = np.empty(m, np.int64)
    row_loc[inv[pick]] = loc[pick]
    return _ChildRows(r_cols, sum_by(inv, self_p, m), sum_by(inv, child_p, m),
                      sum_by(inv, count, m), best, row_loc)


def _merge_child_rows(parts: list[_ChildRows]) -> _ChildRows:
    """Rows of several blocks as one (keys summed again, the lowest rank's location)."""
    return _sum_child_rows([np.concatenate(c) for c in zip(*(p.cols for p in parts),
                                                             strict=True)],
                           np.concatenate([p.self_p for p in parts]),
                           np.concatenate([p.child_p for p in parts]),
                           np.concatenate([p.count for p in parts]),
                           np.concatenate([p.rank for p in parts]),
                           np.concatenate([p.loc for p in parts]))
