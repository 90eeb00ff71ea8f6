"""The flame chart's columns (stacks in time order, issue 30): one thread's samples binned
by time into the chart's columns, each column standing for the stack most of its samples
have (a terminal cell shows one; ties: the stack sampled first), as the Firefox Profiler's
stack chart and hotspot's timeline show what a thread was doing when."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class ChartColumns:
    """``stack``: per column, the stack it stands for (an id as given; -1: no sample in
    it); ``samples``: per column, the samples binned into it."""

    stack: np.ndarray
    samples: np.ndarray


def chart_columns(time: np.ndarray, stack: np.ndarray, lo: int, hi: int,
                  width: int) -> ChartColumns:
    """The samples at ``time`` (ns) with stack ids ``stack`` (>= 0) in ``width`` columns
    over ``[lo, hi)``: a sample at ``t`` is in column ``(t - lo) * width // (hi - lo)``."""
    t = np.asarray(time, dtype=np.int64)
    s = np.asarray(stack, dtype=np.int64)
    out = np.full(max(width, 0), -1, dtype=np.int64)
    if width <= 0 or hi <= lo:
        return ChartColumns(out, np.zeros(len(out), np.int64))
    keep = (t >= lo) & (t < hi)
    t, s = t[keep], s[keep]
    order = np.argsort(t, kind="stable")
    t, s = t[order], s[order]
    col = (t - lo) * width // (hi - lo)
    samples = np.bincount(col, minlength=width).astype(np.int64)
    if len(t):
        span = int(s.max()) + 1
        uk, first, cnt = np.unique(col * span + s, return_index=True, return_counts=True)
        c, st = uk // span, uk % span
        best = np.lexsort((first, -cnt, c))  # per column: the most samples, then the first
        cs = c[best]
        head = np.ones(len(cs), dtype=bool)
        head[1:] = cs[1:] != cs[:-1]
        out[cs[head]] = st[best][head]
    return ChartColumns(out, samples)
