"""``perftui annotate --event offcpu-time``: a function's instructions weighed by the time
off the CPU of the switch-outs whose stack passes through it (issue 30).

A sched_switch sample's own ip is where the kernel switched (``__schedule``), so annotate's
rule (a sample counts at its ip alone) would put every nanosecond there.  Off-CPU time is
put where each stack passes through the function instead: its innermost callchain entry
in the function (the ip the thread resumes at: the instruction after the ``syscall`` or
the ``call`` it waits in), weighed by the switch-out's nanoseconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..symbols.naming.resolver import Resolver
from .annotatefunction import SampleLeaves
from .offcpu import OffCpu

BLOCK = 1 << 14  # samples resolved at a time


@dataclass
class Waits:
    """Per (switch-out, function on its stack): the sample row, the location, the offset
    of the innermost entry in it and the switch-out's nanoseconds (parallel arrays)."""

    rows: np.ndarray  # int64
    loc: np.ndarray  # int32
    off: np.ndarray  # uint64
    ns: np.ndarray  # uint64

    @property
    def leaves(self) -> SampleLeaves:
        """As annotate's samples: a switch-out counts once for each function it passes."""
        return SampleLeaves(self.rows, self.loc)

    def of(self, loc: int) -> tuple[np.ndarray, np.ndarray]:
        """``(offsets into the function, nanoseconds)`` of location ``loc``."""
        keep = self.loc == loc
        return self.off[keep], self.ns[keep]


def waits(res: Resolver, rows: np.ndarray, oc: OffCpu) -> Waits:
    """The charged switch-outs among ``rows`` (ascending SAMPLE rows), each stack's
    functions with the innermost entry's offset in each."""
    rows = rows[np.isin(rows, oc.rows)]
    ns_of = oc.ns[np.searchsorted(oc.rows, rows)] if len(rows) else np.zeros(0, np.uint64)
    parts: list[tuple[np.ndarray, ...]] = []
    done = 0
    for s in res.blocks(rows, BLOCK, callchains=True):
        lengths = np.diff(s.chain_starts)
        owner = np.repeat(np.arange(len(s), dtype=np.int64), lengths)
        # the innermost entry of each location of a stack: the first of (sample, loc)
        key = owner * (int(s.chain_locs.max(initial=0)) + 1) + s.chain_locs
        _u, first = np.unique(key, return_index=True)
        first.sort()
        parts.append((s.rows[owner[first]], s.chain_locs[first],
                      s.chain_offs[first], ns_of[done + owner[first]]))
        done += len(s)
    if not parts:
        return Waits(rows[:0], np.zeros(0, np.int32), np.zeros(0, np.uint64),
                     np.zeros(0, np.uint64))
    r, loc, off, ns = (np.concatenate(c) for c in zip(*parts, strict=True))
    return Waits(r.astype(np.int64), loc.astype(np.int32), off.astype(np.uint64),
                 ns.astype(np.uint64))
