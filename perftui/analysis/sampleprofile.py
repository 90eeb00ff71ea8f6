"""The hotspot table (:class:`~.profile.Profile`) from every sample's resolved locations
(:class:`~perftui.symbols.samplelocs.SampleLocs`), with the rules of :mod:`.profile`.

The work is per *group* of samples that share their per-sample keys (comm, pid/tid, cpu)
and their stack (own location and callchain), not per sample: self is one grouped sum;
children takes each distinct stack's distinct rows once (computed once per stack) and adds
each group's period to them.  A row's location (for its names) is the one of the first
sample, in file order, that adds to it (its own location, else the first entry of its
callchain with the row's keys).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..perfdata.grouping import group_ids
from ..symbols.samplelocs import SampleLocs
from .profile import KeyCodes, Profile, ProfileRow, _group, order_rows, sum_by

_PER_SAMPLE = ("comm", "pid", "tid", "cpu")
Parts = tuple[list[np.ndarray], np.ndarray, np.ndarray, np.ndarray, np.ndarray]


class Packer:
    """Integer columns of known ranges folded into one int64 (mixed radix) and back."""

    def __init__(self) -> None:
        self.lows: list[int] = []
        self.cards: list[int] = []

    def add(self, col: np.ndarray) -> None:
        lo, hi = (int(col.min()), int(col.max())) if len(col) else (0, 0)
        self.lows.append(lo)
        self.cards.append(hi - lo + 1)

    @property
    def space(self) -> int:
        return int(np.prod(self.cards, dtype=object)) if self.cards else 1

    def pack(self, cols: list[np.ndarray], n: int) -> np.ndarray:
        flat = np.zeros(n, dtype=np.int64)
        for col, lo, card in zip(cols, self.lows, self.cards, strict=True):
            flat *= card
            flat += col - lo if lo else col
        return flat

    def unpack(self, flat: np.ndarray) -> list[np.ndarray]:
        out = []
        for lo, card in zip(reversed(self.lows), reversed(self.cards), strict=True):
            out.append(flat % card + lo)
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


def _loc_keys(codes: KeyCodes, keys: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(dense id of each location's loc-key codes, the first location of each id)."""
    cols = [{"dso": codes.dso_code, "sym": codes.sym_code, "module": codes.module_code,
             "section": codes.section_code}[k] for k in keys if k not in _PER_SAMPLE]
    n = len(codes.locs)
    if not cols or not n:
        return np.zeros(n, np.int64), np.zeros(1 if n else 0, np.int64)
    _u, inv, first = _group(np.stack(cols, axis=1))
    return inv, first


def _sample_columns(sl: SampleLocs, pos: np.ndarray | slice, tid: np.ndarray | None,
                    cpu: np.ndarray | None, keys: tuple[str, ...]) -> list[np.ndarray]:
    cols = []
    for k in keys:
        if k == "comm":
            cols.append(sl.comm[pos].astype(np.int64))
        elif k in ("pid", "tid"):
            assert tid is not None
            cols.append(tid.astype(np.int64))  # perf's pid key is the thread
        elif k == "cpu":
            assert cpu is not None
            cols.append(cpu.astype(np.int64))
    return cols


def profile_of(sl: SampleLocs, pos: np.ndarray | slice, tid: np.ndarray | None,
               cpu: np.ndarray | None, keys: tuple[str, ...], children: bool,
               comm_names: Sequence[str] | None = None,
               codes: KeyCodes | None = None) -> Profile:
    """The table of the samples at positions ``pos`` of ``sl`` (``tid``, ``cpu``: theirs,
    parallel to ``pos``, when ``keys`` has them), grouped by ``keys``."""
    if children and sl.stack is None:
        raise ValueError("the callchains were not resolved")
    codes = codes if codes is not None else KeyCodes(sl.locs, keys)
    codes.refresh()
    period = sl.period[pos]
    n = len(period)
    total_period = int(period.sum(dtype=np.uint64))
    lk, lk_loc = _loc_keys(codes, keys)
    skeys = _sample_columns(sl, pos, tid, cpu, keys)
    rows: list[ProfileRow] = []
    if n:
        if not children:
            parts = _self_rows(skeys, lk, sl.leaf[pos], period.astype(np.int64), n)
        else:
            assert sl.stack is not None
            parts = _children_rows(sl, skeys, sl.stack[pos], lk, period.astype(np.int64), n)
        rows = _rows(_keys(codes, keys, parts[0], lk_loc), *parts[1:])
    prof = Profile(keys, children, total_period, n, rows, codes)
    order_rows(prof, comm_names)
    return prof


def _keys(codes: KeyCodes, keys: tuple[str, ...], packed: list[np.ndarray],
          lk_loc: np.ndarray) -> np.ndarray:
    """Row key codes in ``keys`` order from the columns (per-sample codes..., loc-key id)."""
    m = len(packed[-1])
    loc = lk_loc[packed[-1]] if len(lk_loc) else np.zeros(m, np.int64)
    by_loc = {"dso": codes.dso_code, "sym": codes.sym_code, "module": codes.module_code,
              "section": codes.section_code}
    cols = []
    j = 0
    for k in keys:
        if k in _PER_SAMPLE:
            cols.append(packed[j])
            j += 1
        else:
            cols.append(by_loc[k][loc])
    return np.stack(cols, axis=1) if cols else np.zeros((m, 0), np.int64)


def _rows(keys: np.ndarray, self_p: np.ndarray, child_p: np.ndarray, count: np.ndarray,
          loc: np.ndarray) -> list[ProfileRow]:
    return [ProfileRow(tuple(k), int(lc), int(s), int(c), int(m))
            for k, lc, s, c, m in zip(keys.tolist(), loc.tolist(), self_p.tolist(),
                                      child_p.tolist(), count.tolist(), strict=True)]


def _self_rows(skeys: list[np.ndarray], lk: np.ndarray, leaf: np.ndarray,
               period: np.ndarray, n: int) -> Parts:
    cols, inv, first = _grouped([*skeys, lk[leaf]], n)
    m = len(first)
    self_p = sum_by(inv, period, m)
    count = np.bincount(inv, minlength=m).astype(np.int64)
    return cols, self_p, np.zeros(m, np.int64), count, leaf[first].astype(np.int64)


def _children_rows(sl: SampleLocs, skeys: list[np.ndarray], stack: np.ndarray,
                   lk: np.ndarray, period: np.ndarray, n: int) -> Parts:
    # groups of samples alike in everything the rows depend on
    g_cols, g_inv, g_first = _grouped([*skeys, stack.astype(np.int64)], n)
    ng = len(g_first)
    g_period = sum_by(g_inv, period, ng)
    g_count = np.bincount(g_inv, minlength=ng).astype(np.int64)
    g_sk = g_cols[:-1]
    g_stack = g_cols[-1]
    starts = sl.stack_starts
    g_leaf = sl.stack_locs[starts[g_stack]].astype(np.int64)
    g_own = lk[g_leaf]
    # the distinct loc-keys of each stack's callchain (after its own location), with the
    # first entry giving each
    used = np.unique(g_stack)
    lens = starts[used + 1] - starts[used] - 1
    total = int(lens.sum())
    c_of = np.repeat(np.arange(len(used), dtype=np.int64), lens)
    at = np.repeat(starts[used] + 1, lens) + np.arange(total, dtype=np.int64) - np.repeat(
        np.cumsum(lens) - lens, lens)
    e_loc = sl.stack_locs[at].astype(np.int64)
    (d_chain, d_key), _d_inv, d_first = _grouped([c_of, lk[e_loc]], total)
    d_loc = e_loc[d_first]
    d_starts = np.searchsorted(d_chain, np.arange(len(used) + 1))
    # every group adds its period to each distinct row of its callchain once
    gc = np.searchsorted(used, g_stack)
    n_d = d_starts[gc + 1] - d_starts[gc]
    e_total = int(n_d.sum())
    e_group = np.repeat(np.arange(ng, dtype=np.int64), n_d)
    e_d = np.repeat(d_starts[gc], n_d) + np.arange(e_total, dtype=np.int64) - np.repeat(
        np.cumsum(n_d) - n_d, n_d)
    # the group's own row has its period already (perf's he_cache check)
    keep = d_key[e_d] != g_own[e_group]
    e_group, e_d = e_group[keep], e_d[keep]
    cols = [np.concatenate([c, c[e_group]]) for c in g_sk]
    cols.append(np.concatenate([g_own, d_key[e_d]]))
    self_p = np.concatenate([g_period, np.zeros(len(e_group), np.int64)])
    child_p = np.concatenate([g_period, g_period[e_group]])
    count = np.concatenate([g_count, np.zeros(len(e_group), np.int64)])
    loc = np.concatenate([g_leaf, d_loc[e_d]])
    # which adds first, in file order: its group's first sample, its own row before its
    # callchain's
    rank = np.concatenate([g_first * 2, g_first[e_group] * 2 + 1])
    r_cols, inv, _first = _grouped(cols, len(loc))
    m = len(_first)
    best = np.full(m, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(best, inv, rank)
    pick = np.flatnonzero(rank == best[inv])
    row_loc = np.empty(m, np.int64)
    row_loc[inv[pick]] = loc[pick]
    return (r_cols, sum_by(inv, self_p, m), sum_by(inv, child_p, m), sum_by(inv, count, m),
            row_loc)
