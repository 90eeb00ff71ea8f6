"""The distinct stacks of the named samples, each with its thread name, sample count and
period: what folded stacks and speedscope files list (from a
:class:`~perftui.symbols.naming.samplelocs.SampleLocs`).

A stack is what :func:`.profile.stacks` gives a sample: its callchain where it has one,
else its own location; with ``bare`` (every event samples callchains) a sample whose chain
gives no frame, as perf 6.1 drops a chain with a context marker it does not know, has no
frames, as ``perf script`` prints none for it (a folded stack of the thread name alone).
Samples that share their thread name and stack id are counted as one
(:func:`.sampleprofile.group_samples`), so nothing is named again: the names come from the
cache when it has them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..symbols.naming.samplelocs import SampleLocs
from .sampleprofile import group_samples, taker


@dataclass
class StackCounts:
    """Per distinct (thread name, stack): ``comm`` (id in the names' ``comm_names``),
    ``stack`` (stack id of the names; -1 for samples named without callchains: the own
    location ``leaf`` alone), ``count`` (samples) and ``period``."""

    sl: SampleLocs
    comm: np.ndarray
    stack: np.ndarray
    leaf: np.ndarray
    count: np.ndarray
    period: np.ndarray
    bare: bool = False  # a chain that gives no frame: no frames (see the module docstring)

    def __len__(self) -> int:
        return len(self.comm)

    def frames(self, i: int) -> list[int]:
        """The locations of stack ``i``, outermost caller first."""
        return stack_frames(self.sl, int(self.stack[i]), int(self.leaf[i]), self.bare)

    def paths(self, by_period: bool = False) -> Iterator[tuple[int, list[int], int]]:
        """(comm, frames outermost first, sample count or, ``by_period``, the period) of
        every stack, in stack order."""
        weight = self.period if by_period else self.count
        for i in range(len(self)):
            yield int(self.comm[i]), self.frames(i), int(weight[i])


def stack_frames(sl: SampleLocs, s: int, leaf: int, bare: bool) -> list[int]:
    """The locations of stack id ``s`` of ``sl`` (-1: the location ``leaf`` alone),
    outermost caller first (``bare``: see the module docstring)."""
    if s < 0:
        return [leaf]
    lo, hi = int(sl.stack_starts[s]), int(sl.stack_starts[s + 1])
    if hi - lo <= 1:  # no callchain: the own location (none: a chain perf drops)
        if bare:
            return []
        return [int(sl.stack_locs[lo])] if hi > lo else [leaf]
    out: list[int] = sl.stack_locs[lo + 1:hi][::-1].tolist()
    return out


@dataclass
class ThreadRuns:
    """One thread's samples in time order, neighbours with one thread name and stack
    merged into a run: per run its ``comm``, ``stack`` (-1: ``leaf`` alone), ``leaf`` and
    ``weight`` (samples, or periods)."""

    tid: int
    pid: int
    comm: np.ndarray
    stack: np.ndarray
    leaf: np.ndarray
    weight: np.ndarray

    def total(self) -> int:
        return int(self.weight.sum())


def thread_runs(sl: SampleLocs, pos: np.ndarray | slice, tid: np.ndarray, pid: np.ndarray,
                time: np.ndarray, by_period: bool = False) -> list[ThreadRuns]:
    """Each thread's runs (:class:`ThreadRuns`) of the samples at positions ``pos`` of
    ``sl``, whose threads, processes and times are ``tid``, ``pid``, ``time`` (aligned with
    those positions); the heaviest thread first (ties: the lower tid)."""
    at = np.arange(len(sl), dtype=np.int64)[pos]
    if not len(at):
        return []
    # (a sample at a time: int32 columns where they fit, temporaries freed as they go;
    # 750 k samples added ~100 MB to the peak before)
    order = np.lexsort((np.asarray(time), np.asarray(tid)))  # (stable: ties by position)
    p = at[order]
    del at
    t = np.asarray(tid)[order].astype(np.int32)
    comm = sl.comm[p].astype(np.int32)
    stack = sl.stack[p].astype(np.int32) if sl.stack is not None else None
    leaf = sl.leaf[p].astype(np.int32)
    new = np.ones(len(p), bool)
    new[1:] = (t[1:] != t[:-1]) | (comm[1:] != comm[:-1])
    if stack is not None:
        new[1:] |= (stack[1:] != stack[:-1]) | ((stack[1:] < 0) & (leaf[1:] != leaf[:-1]))
    else:
        new[1:] |= leaf[1:] != leaf[:-1]
    starts = np.flatnonzero(new)
    del new
    rw = np.add.reduceat(sl.period[p].astype(np.int64), starts) if by_period else \
        np.diff(np.append(starts, len(p)))
    first_pid = np.asarray(pid)[order[starts]].astype(np.int64)
    del order, p
    rt = t[starts].astype(np.int64)
    comm, leaf = comm[starts].astype(np.int64), leaf[starts].astype(np.int64)
    stack = stack[starts].astype(np.int64) if stack is not None else np.full(len(starts), -1)
    heads = np.flatnonzero(np.r_[True, rt[1:] != rt[:-1]])
    ends = np.r_[heads[1:], len(starts)]
    out = [ThreadRuns(int(rt[a]), int(first_pid[a]), comm[a:b], stack[a:b], leaf[a:b],
                      rw[a:b]) for a, b in zip(heads, ends, strict=True)]
    out.sort(key=lambda r: (-r.total(), r.tid))
    return out


def stack_counts(sl: SampleLocs, pos: np.ndarray | slice, bare: bool = False) -> StackCounts:
    """The distinct stacks of the samples at positions ``pos`` of ``sl`` (``bare``: see the
    module docstring)."""
    n, take = taker(pos, len(sl))
    by = sl.stack if sl.stack is not None else sl.leaf
    ranges: list[int | None] = [
        len(sl.comm_names),
        len(sl.stack_starts) - 1 if sl.stack is not None else len(sl.locs)]

    def columns(lo: int, hi: int) -> list[np.ndarray]:
        p = take(lo, hi)
        return [sl.comm[p], by[p]]

    g = group_samples(n, columns, lambda lo, hi: sl.period[take(lo, hi)], ranges)
    if not len(g.first):
        empty = np.zeros(0, np.int64)
        return StackCounts(sl, empty, empty, empty, empty, empty, bare)
    comm, ids = (c.astype(np.int64) for c in g.cols)
    if sl.stack is not None:
        stack, leaf = ids, sl.stack_locs[sl.stack_starts[ids]].astype(np.int64)
    else:
        stack, leaf = np.full(len(ids), -1, np.int64), ids
    order = np.lexsort([comm, stack, leaf])  # (a stable order, whatever the grouping's)
    return StackCounts(sl, comm[order], stack[order], leaf[order], g.count[order],
                       g.period[order], bare and sl.stack is not None)
