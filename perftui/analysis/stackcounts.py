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
        s = int(self.stack[i])
        if s < 0:
            return [int(self.leaf[i])]
        lo, hi = int(self.sl.stack_starts[s]), int(self.sl.stack_starts[s + 1])
        if hi - lo <= 1:  # no callchain: the own location (none: a chain perf drops)
            if self.bare:
                return []
            return [int(self.sl.stack_locs[lo])] if hi > lo else [int(self.leaf[i])]
        out: list[int] = self.sl.stack_locs[lo + 1:hi][::-1].tolist()
        return out

    def paths(self, by_period: bool = False) -> Iterator[tuple[int, list[int], int]]:
        """(comm, frames outermost first, sample count or, ``by_period``, the period) of
        every stack, in stack order."""
        weight = self.period if by_period else self.count
        for i in range(len(self)):
            yield int(self.comm[i]), self.frames(i), int(weight[i])


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
