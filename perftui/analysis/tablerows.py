"""The one aggregation under every hotspot table: weighed groups of samples into rows, as
perf report counts them, in perf's order.

Its input is :class:`Weighed`: samples grouped by their per-sample keys (comm, pid/tid,
cpu, state) and their stack, each group with its period, sample count and the rank of its
first sample in perf's processing order.  ``perftui report`` (and ``diff``) groups the
samples at hand a chunk at a time (:func:`.sampleprofile.profile_of`); the browser weighs
the groups it made once under a filter (:func:`.samplegroups.group_profile`).  From there
both count the same way, here: *self* adds a group's period to the row of its own
location; *children* adds it once to every distinct row of its stack (the own row
included: perf's he_cache check); a row's location (its names, its ``[k]``/``[.]``) is
the one of the first sample in perf's processing order that adds to it (its own location
before its callchain's, as perf's ``hist_entry_iter__add`` adds the sample's entry before
its callchain's): perf's hist entry keeps what the sample that made it had.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .keycodes import KeyCodes
from .packing import grouped, lookup
from .profile import _group, perf_order, sum_by
from .sortkeys import SORT_KEYS

#: Callchain entries of the groups expanded at a time (:func:`_children_rows`).
CHILD_ENTRIES = 1 << 17


@dataclass
class Stacks:
    """Stacks as ids: stack ``s`` is ``locs[starts[s]:starts[s + 1]]``, its own location
    first, then its callchain, innermost first (as the names keep them)."""

    starts: np.ndarray
    locs: np.ndarray


@dataclass
class Weighed:
    """Groups of samples alike in their per-sample keys and stack: per group ``cols``
    (each per-sample key's code, in key order), ``own`` (the samples' own location),
    ``period``, ``count`` and ``first`` (its first sample's rank in perf's processing
    order, :attr:`~perftui.symbols.naming.samplelocs.SampleLocs.rank`), and for
    children ``stack`` (its stack's id in a :class:`Stacks`)."""

    cols: list[np.ndarray]
    own: np.ndarray
    period: np.ndarray
    count: np.ndarray
    first: np.ndarray
    stack: np.ndarray | None = None


@dataclass
class TableRows:
    """The rows of a table in perf's order: ``key`` (codes, one column per sort key),
    ``loc`` (the row's location), ``self_p``, ``child_p``, ``count`` (samples whose own
    location is in the row, perf's ``-n``), ``child_n`` (samples through the row: the
    count ``child_p`` sums; ``count`` without children); ``packed`` and ``lk`` find the
    row of any (per-sample codes, location) (:meth:`find`)."""

    key: np.ndarray
    loc: np.ndarray
    self_p: np.ndarray
    child_p: np.ndarray
    count: np.ndarray
    child_n: np.ndarray
    packed: list[np.ndarray]
    lk: np.ndarray

    def __len__(self) -> int:
        return len(self.loc)

    def find(self, cols: list[np.ndarray], loc: np.ndarray) -> np.ndarray:
        """The row of each entry with per-sample codes ``cols`` (in key order) at location
        ``loc`` (-1: none; without children, a row only a callchain reaches)."""
        return lookup(self.packed, [*cols, self.lk[loc]])


def loc_keys(codes: KeyCodes, keys: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(dense id of each location's loc-key codes, the first location of each id)."""
    cols = [codes.of(k) for k in keys if SORT_KEYS[k].per_location]
    n = len(codes.locs)
    if not cols or not n:
        return np.zeros(n, np.int64), np.zeros(1 if n else 0, np.int64)
    _u, inv, first = _group(np.stack(cols, axis=1))
    return inv, first


def table_rows(codes: KeyCodes, keys: tuple[str, ...], children: bool, w: Weighed,
               stacks: Stacks | None = None) -> TableRows:
    """The rows ``w`` adds to by ``keys`` (``codes``: refreshed for every location of
    ``w``), with children when ``children`` (``w.stack`` and ``stacks`` then given)."""
    lk, lk_loc = loc_keys(codes, keys)
    if children:
        assert stacks is not None and w.stack is not None
        rows = _children_rows(stacks, w, lk)
    else:
        zeros = np.zeros(len(w.own), np.int64)
        count = w.count.astype(np.int64)
        rows = _sum_child_rows([*w.cols, lk[w.own]], w.period.astype(np.int64), zeros,
                               count, count, w.first * 2, w.own)
    key = _keys(codes, keys, rows.cols, lk_loc)
    order = perf_order(codes, keys, children, key, rows.loc, rows.self_p, rows.child_p)
    return TableRows(key[order], rows.loc[order], rows.self_p[order], rows.child_p[order],
                     rows.count[order], rows.child_n[order], [c[order] for c in rows.cols],
                     lk)


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


@dataclass
class _ChildRows:
    """Rows being summed: key columns (per-sample codes..., loc-key id), sums, and the
    row's location with the rank (processing order of what added it first) that chose it."""

    cols: list[np.ndarray]
    self_p: np.ndarray
    child_p: np.ndarray
    count: np.ndarray
    child_n: np.ndarray
    rank: np.ndarray
    loc: np.ndarray


def _children_rows(stacks: Stacks, w: Weighed, lk: np.ndarray) -> _ChildRows:
    """Rows with children: each group adds to its own row and to each distinct row of its
    stack's callchain, once."""
    assert w.stack is not None
    ng = len(w.first)
    g_stack = w.stack
    g_leaf = stacks.locs[stacks.starts[g_stack]].astype(np.int64)
    g_own = lk[g_leaf]
    # the distinct loc-keys of each stack's callchain (after its own location), with the
    # first entry giving each
    used = np.unique(g_stack)
    d_chain, d_key, d_loc = _chain_keys(stacks, used, lk)
    d_starts = np.searchsorted(d_chain, np.arange(len(used) + 1))
    # every group adds its period to each distinct row of its callchain once: a block of
    # groups at a time (all at once, the entries of every group's callchain took ~90 MB at
    # 50 M samples), each block's rows merged into the rows so far
    gc = np.searchsorted(used, g_stack)
    n_d = d_starts[gc + 1] - d_starts[gc]
    ends = np.cumsum(n_d)
    rows: _ChildRows | None = None
    lo = 0
    while lo < ng or rows is None:
        hi = max(lo + 1, int(np.searchsorted(ends, (ends[lo - 1] if lo else 0)
                                             + CHILD_ENTRIES, side="right")))
        hi = min(hi, ng)
        part = _child_block(np.arange(lo, hi, dtype=np.int64), w, g_own, g_leaf, gc, n_d,
                            d_starts, d_key, d_loc)
        rows = part if rows is None else _merge_child_rows([rows, part])
        lo = hi
    return rows


def _chain_keys(stacks: Stacks, used: np.ndarray, lk: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(chain, loc-key, location) of the distinct loc-keys of each stack ``used[chain]``'s
    callchain after its own location, with the location of the first entry giving each:
    by chain, then key.  A block of chains at a time (CHILD_ENTRIES entries): all at once,
    the entries' int64 temporaries were ~20 MB of a first report's peak at 50 M records."""
    starts = stacks.starts
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
        e_loc = stacks.locs[at]
        del at
        c_of = np.repeat(np.arange(lo, hi, dtype=np.int64), ln)
        (d_chain, d_key), _d_inv, d_first = grouped([c_of, lk[e_loc]], total)
        out.append((d_chain, d_key, e_loc[d_first].astype(np.int64)))
        lo = hi
    return tuple(np.concatenate(c) for c in zip(*out, strict=True))  # type: ignore[return-value]


def _child_block(gs: np.ndarray, w: Weighed, g_own: np.ndarray, g_leaf: np.ndarray,
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
    cols = [np.concatenate([c[gs], c[e_group]]) for c in w.cols]
    cols.append(np.concatenate([g_own[gs], d_key[e_d]]))
    g_period = w.period[gs].astype(np.int64)
    self_p = np.concatenate([g_period, np.zeros(len(e_group), np.int64)])
    child_p = np.concatenate([g_period, w.period[e_group].astype(np.int64)])
    count = np.concatenate([w.count[gs], np.zeros(len(e_group), np.int64)])
    child_n = np.concatenate([w.count[gs], w.count[e_group]]).astype(np.int64)
    loc = np.concatenate([g_leaf[gs], d_loc[e_d]])
    # which adds first, in processing order: its group's first sample, its own row before
    # its callchain's
    rank = np.concatenate([w.first[gs] * 2, w.first[e_group] * 2 + 1])
    return _sum_child_rows(cols, self_p, child_p, count, child_n, rank, loc)


def _sum_child_rows(cols: list[np.ndarray], self_p: np.ndarray, child_p: np.ndarray,
                    count: np.ndarray, child_n: np.ndarray, rank: np.ndarray,
                    loc: np.ndarray) -> _ChildRows:
    """Equal key rows summed; each keeps the location of its lowest rank."""
    r_cols, inv, _first = grouped(cols, len(loc))
    m = len(_first)
    best = np.full(m, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(best, inv, rank)
    pick = np.flatnonzero(rank == best[inv])
    row_loc = np.empty(m, np.int64)
    row_loc[inv[pick]] = loc[pick]
    return _ChildRows(r_cols, sum_by(inv, self_p, m), sum_by(inv, child_p, m),
                      sum_by(inv, count, m), sum_by(inv, child_n, m), best, row_loc)


def _merge_child_rows(parts: list[_ChildRows]) -> _ChildRows:
    """Rows of several blocks as one (keys summed again, the lowest rank's location)."""
    return _sum_child_rows([np.concatenate(c) for c in zip(*(p.cols for p in parts),
                                                             strict=True)],
                           np.concatenate([p.self_p for p in parts]),
                           np.concatenate([p.child_p for p in parts]),
                           np.concatenate([p.count for p in parts]),
                           np.concatenate([p.child_n for p in parts]),
                           np.concatenate([p.rank for p in parts]),
                           np.concatenate([p.loc for p in parts]))
