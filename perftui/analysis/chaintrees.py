"""The rows' call-graph trees of :mod:`.callgraph`, built with numpy: every chain each row
gets (a group of samples' chain from the row's first frame on) is a *path*, and the paths
are interned into trie nodes one level at a time (a node is its parent and its frame's
match key), their periods and counts summed per node.  Only the nodes a printout can
reach become :class:`~.callgraph.Node` objects: those of at least the least period asked
for (a node's parent has at least its period, so every kept node's parent is kept).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .profile import sum_by


@dataclass
class Paths:
    """Per path: its row, its group of samples and where in that group's chain (in the
    tree's order) it starts; per group: its chain's start in ``stack_locs`` (the leaf, as
    stored), its length, period and count."""

    row: np.ndarray
    group: np.ndarray
    start: np.ndarray
    g_at: np.ndarray
    g_len: np.ndarray
    g_period: np.ndarray
    g_count: np.ndarray


def row_lookup(keys: np.ndarray, rows: np.ndarray, want: np.ndarray) -> np.ndarray:
    """The row of each of ``want`` among the sorted ``keys`` (their rows ``rows``), -1
    where there is none."""
    if not len(keys):
        return np.full(len(want), -1, np.int64)
    at = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
    out = np.asarray(rows, np.int64)[at]
    out[keys[at] != want] = -1
    return out


def paths(g_ps: np.ndarray, g_stack: np.ndarray, g_period: np.ndarray, g_count: np.ndarray,
          starts: np.ndarray, stack_locs: np.ndarray, lk: np.ndarray, n_lk: int,
          row_keys: np.ndarray, row_ids: np.ndarray, caller: bool, children: bool,
          n_rows: int) -> tuple[Paths, np.ndarray]:
    """Every path of the groups (``g_ps``: each group's per-sample key id, ``g_stack`` its
    stack; a row's key is ``ps * n_lk + lk[location]``, found in ``row_keys``): the own
    row's whole chain, and with ``children`` each other row met along the chain from its
    first frame in the tree's order.  Also each group's own row (-1: none)."""
    g_at = starts[g_stack] + 1
    g_len = (starts[g_stack + 1] - g_at).astype(np.int64)
    own = stack_locs[starts[g_stack]].astype(np.int64)
    r0 = row_lookup(row_keys, row_ids, g_ps * n_lk + lk[own])
    selfp = np.flatnonzero((r0 >= 0) & (g_len > 0))
    p_row, p_group, p_start = [r0[selfp]], [selfp], [np.zeros(len(selfp), np.int64)]
    if children and len(g_len):
        total = int(g_len.sum())
        e_group = np.repeat(np.arange(len(g_len), dtype=np.int64), g_len)
        e_off = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(g_len) - g_len, g_len)
        e_loc = stack_locs[g_at[e_group] + e_off].astype(np.int64)
        e_row = row_lookup(row_keys, row_ids, g_ps[e_group] * n_lk + lk[e_loc])
        e_pos = (g_len[e_group] - 1 - e_off) if caller else e_off
        keep = (e_row >= 0) & (e_row != r0[e_group])
        e_group, e_row, e_pos = e_group[keep], e_row[keep], e_pos[keep]
        # each (group, row) once, at its first frame in the tree's order
        order = np.lexsort((e_pos, e_row, e_group))
        e_group, e_row, e_pos = e_group[order], e_row[order], e_pos[order]
        first = np.ones(len(e_group), dtype=bool)
        first[1:] = (e_group[1:] != e_group[:-1]) | (e_row[1:] != e_row[:-1])
        p_row.append(e_row[first])
        p_group.append(e_group[first])
        p_start.append(e_pos[first])
    out = Paths(np.concatenate(p_row), np.concatenate(p_group), np.concatenate(p_start),
                g_at, g_len, g_period.astype(np.int64), g_count.astype(np.int64))
    return out, r0


@dataclass
class Trie:
    """The nodes of every row's tree: node ``i < n_rows`` is row ``i``'s root; the others
    have a parent, a match key (``fk``), a location (for its name) and sums."""

    n_rows: int
    parent: np.ndarray
    loc: np.ndarray
    fk: np.ndarray
    hit: np.ndarray
    count: np.ndarray
    cum: np.ndarray
    ccount: np.ndarray


def build_trie(p: Paths, stack_locs: np.ndarray, fk: np.ndarray, caller: bool,
               n_rows: int, least: int = 0, fraction: float | None = None) -> Trie:
    """The paths interned level by level: at level ``d`` every path still that long goes
    from its node to the child of its ``d``-th frame's key.  A path goes on below a node
    only when a printout can reach the node: its period is at least ``least`` or, with
    ``fraction`` (fractal mode), at least that share (rounded up) of its parent's
    children's period.  The children of such a node are all made (their number is its
    ``kids``), with exact sums; below the others nothing is (a system-wide recording's
    23 K rows: 0.36 s without this, most of it for nodes no printout shows)."""
    n_fk = int(fk.max(initial=0)) + 1
    period, count = p.g_period[p.group], p.g_count[p.group]
    length = p.g_len[p.group] - p.start
    parents, locs, fks = [np.full(n_rows, -1, np.int64)], [np.full(n_rows, -1, np.int64)], \
        [np.full(n_rows, -1, np.int64)]
    hits, counts = [np.zeros(n_rows, np.int64)], [np.zeros(n_rows, np.int64)]
    cums = [sum_by(p.row, period, n_rows)]
    ccounts = [sum_by(p.row, count, n_rows)]
    node = p.row.astype(np.int64)
    active = np.arange(len(node), dtype=np.int64)
    next_id = n_rows
    d = 0
    up_cum, up_hit, up_base = cums[0], hits[0], 0  # the level above's sums
    while len(active):
        pos = p.start[active] + d  # in the tree's order
        glen = p.g_len[p.group[active]]
        off = (glen - 1 - pos) if caller else pos
        loc = stack_locs[p.g_at[p.group[active]] + off].astype(np.int64)
        key = node[active] * n_fk + fk[loc]
        uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
        inv = inv.reshape(-1)
        m = len(uniq)
        ids = np.arange(next_id, next_id + m, dtype=np.int64)
        parents.append(uniq // n_fk)
        fks.append(uniq % n_fk)
        locs.append(loc[first])
        cums.append(sum_by(inv, period[active], m))
        ccounts.append(sum_by(inv, count[active], m))
        node[active] = ids[inv]
        ends = length[active] == d + 1
        hits.append(sum_by(inv[ends], period[active][ends], m))
        counts.append(sum_by(inv[ends], count[active][ends], m))
        if fraction is None:
            reach = cums[-1] >= least
        else:
            par = parents[-1] - up_base
            reach = cums[-1] >= np.ceil((up_cum[par] - up_hit[par]) * fraction)
        up_cum, up_hit, up_base = cums[-1], hits[-1], next_id
        next_id += m
        active = active[~ends & reach[inv]]
        d += 1
    return Trie(n_rows, np.concatenate(parents), np.concatenate(locs), np.concatenate(fks),
                np.concatenate(hits), np.concatenate(counts), np.concatenate(cums),
                np.concatenate(ccounts))
