"""The flame chart's columns (stacks in time order, issue 30): one thread's samples binned
by time into the chart's columns, each column standing for the stack most of its samples
have (a terminal cell shows one; ties: the stack sampled first), as the Firefox Profiler's
stack chart and hotspot's timeline show what a thread was doing when."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .stacktree import Trie


@dataclass
class ChartColumns:
    """``stack``: per column, the stack it stands for (an id as given; -1: no sample in
    it); ``samples``: per column, the samples binned into it."""

    stack: np.ndarray
    samples: np.ndarray


def chart_columns(time: np.ndarray, stack: np.ndarray, lo: int, hi: int,
                  width: int, weight: np.ndarray | None = None,
                  duration: np.ndarray | None = None) -> ChartColumns:
    """The samples at ``time`` (ns) with stack ids ``stack`` (>= 0) in ``width`` columns
    over ``[lo, hi)``: a sample at ``t`` is in column ``(t - lo) * width // (hi - lo)``.
    A column shows the stack with the most samples there; with ``weight`` (a timed event's
    ns: offcpu-time) the one with the most weight, so a 300 ms sleep is not hidden by the
    few preemptions of a busy moment beside it.

    With ``duration`` (ns per sample: a switch-out's time off the CPU) a sample stands for
    the interval ``[t, t + duration)``: it is in every column the interval overlaps, and
    weighs there the time it overlaps that column (``weight`` is then not used)."""
    t = np.asarray(time, dtype=np.int64)
    s = np.asarray(stack, dtype=np.int64)
    out = np.full(max(width, 0), -1, dtype=np.int64)
    if width <= 0 or hi <= lo:
        return ChartColumns(out, np.zeros(len(out), np.int64))
    w: np.ndarray | None
    if duration is not None:
        col, s, w = _interval_columns(t, s, np.asarray(duration, np.int64), lo, hi, width)
    else:
        keep = (t >= lo) & (t < hi)
        w = np.asarray(weight, dtype=np.int64)[keep] if weight is not None else None
        t, s = t[keep], s[keep]
        order = np.argsort(t, kind="stable")
        t, s = t[order], s[order]
        w = w[order] if w is not None else None
        col = (t - lo) * width // (hi - lo)
    samples = np.bincount(col, minlength=width).astype(np.int64)
    if len(col):
        span = int(s.max()) + 1
        uk, first, inv, cnt = np.unique(col * span + s, return_index=True,
                                        return_inverse=True, return_counts=True)
        c, st = uk // span, uk % span
        heavy = -cnt if w is None else -np.bincount(inv, weights=w, minlength=len(uk))
        best = np.lexsort((first, -cnt, heavy, c))  # per column: the most weight, samples,
        # then the first
        cs = c[best]
        head = np.ones(len(cs), dtype=bool)
        head[1:] = cs[1:] != cs[:-1]
        out[cs[head]] = st[best][head]
    return ChartColumns(out, samples)


def _interval_columns(t: np.ndarray, s: np.ndarray, dur: np.ndarray, lo: int, hi: int,
                      width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Intervals ``[t, t + dur)`` (at least 1 ns) cut into the columns they overlap: per
    piece, in time order, its column, its stack and the ns it overlaps the column."""
    end = t + np.maximum(dur, 1)
    keep = (t < hi) & (end > lo)
    order = np.argsort(t[keep], kind="stable")
    t0 = np.maximum(t[keep], lo)[order]
    t1 = np.minimum(end[keep], hi)[order]
    s = s[keep][order]
    c0 = (t0 - lo) * width // (hi - lo)
    c1 = (t1 - 1 - lo) * width // (hi - lo)
    n = c1 - c0 + 1  # (one thread's intervals do not overlap: about width + len(t) pieces)
    piece = np.repeat(np.arange(len(t0)), n)
    col = c0[piece] + np.arange(len(piece)) - np.repeat(np.cumsum(n) - n, n)
    span = hi - lo
    c_lo = lo + -((-col * span) // width)
    c_hi = lo + -((-(col + 1) * span) // width)
    w = np.minimum(t1[piece], c_hi) - np.maximum(t0[piece], c_lo)
    return col, s[piece], w


@dataclass(frozen=True)
class ChartFrame:
    """A frame as the chart lays it out: trie ``node`` at ``depth`` (1: the outermost
    caller) over columns ``[c0, c1)``, the columns whose stacks all go through it."""

    node: int
    depth: int
    c0: int
    c1: int


def chart_levels(trie: Trie, column_node: np.ndarray, max_depth: int = 1024
                 ) -> list[list[ChartFrame]]:
    """The chart's frames by depth (index 0: depth 1), left to right: at each depth, each
    run of neighbouring columns whose stacks (trie nodes; -1: none) have the same node
    there is one frame (the same node: the same path from the thread down to it)."""
    paths = [trie.nodes(int(n))[1:max_depth + 1] if n >= 0 else [] for n in column_node]
    deepest = max((len(p) for p in paths), default=0)
    levels: list[list[ChartFrame]] = []
    for d in range(deepest):
        row: list[ChartFrame] = []
        for c, p in enumerate(paths):
            node = p[d] if d < len(p) else -1
            if node < 0:
                continue
            if row and row[-1].node == node and row[-1].c1 == c:
                row[-1] = ChartFrame(node, d + 1, row[-1].c0, c + 1)
            else:
                row.append(ChartFrame(node, d + 1, c, c + 1))
        levels.append(row)
    return levels


def column_time(lo: int, hi: int, width: int, c: int) -> int:
    """Where column ``c`` of ``width`` over ``[lo, hi)`` begins (ns): the first ``t`` that
    :func:`chart_columns` puts in it."""
    span = hi - lo
    return lo + -((-c * span) // width)


def through(trie: Trie, node: np.ndarray, frame_node: int) -> np.ndarray:
    """Bool per ``node`` (trie nodes, -1: none): its path goes through ``frame_node``."""
    want = int(trie.depth[frame_node])
    cur = np.asarray(node, dtype=np.int64).copy()
    ok = cur >= 0
    cur[ok & (trie.depth[np.maximum(cur, 0)] < want)] = -1
    while True:
        deep = (cur >= 0) & (trie.depth[np.maximum(cur, 0)] > want)
        if not deep.any():
            break
        cur[deep] = trie.parent[cur[deep]]
    out: np.ndarray = cur == frame_node
    return out
