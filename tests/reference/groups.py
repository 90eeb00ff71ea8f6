"""The browser's sample groups built from the resolver's blocks, the reference that
:meth:`perftui.analysis.samplegroups.GroupsBuilder.add_named` (named samples, no resolver)
is checked with: the same keys, block by block, so the same groups with the same ids.

It was ``GroupsBuilder.add`` (and ``finish``) in perftui; only tests called it.
"""

from __future__ import annotations

import numpy as np

from perftui.analysis.samplegroups import GroupsBuilder, SampleGroups, assemble
from perftui.symbols.naming.resolved import ResolvedSamples
from reference.profile import stacks


class BlockGroupsBuilder(GroupsBuilder):
    """A :class:`GroupsBuilder` fed :class:`ResolvedSamples` blocks; keeps each sample's
    row, group and period for :meth:`finish`."""

    def __init__(self, *args: object, **kw: object) -> None:
        super().__init__(*args, **kw)  # type: ignore[arg-type]
        self._rows: list[np.ndarray] = []
        self._group: list[np.ndarray] = []
        self._period: list[np.ndarray] = []

    def add(self, s: ResolvedSamples) -> np.ndarray:
        """Add one block of samples; the group id of each (int32)."""
        n = len(s)
        if not n:
            return np.zeros(0, np.int32)
        sample, loc = stacks(s)  # leaf first
        lengths = np.bincount(sample, minlength=n).astype(np.int64)
        cstart = np.zeros(n + 1, np.int64)
        np.cumsum(lengths, out=cstart[1:])
        pstart = cstart + np.arange(n + 1, dtype=np.int64)  # one more frame: the thread
        frames = np.empty(int(pstart[-1]), np.int64)
        frames[pstart[:-1]] = -1 - s.comm.astype(np.int64)
        j = np.arange(len(sample), dtype=np.int64) - cstart[sample]
        frames[pstart[sample] + lengths[sample] - j] = loc  # outermost first
        path = self._paths.ids(pstart, frames)
        slot = self._slots.ids(((s.tid.astype(np.int64) + 1) << 32)
                               | (((s.cpu.astype(np.int64) + 1) & 0xFFFF) << 16)
                               | ((s.attr.astype(np.int64) + 1) & 0xFFFF))
        pair = self._pairs.ids((slot << 32) | s.leaf.astype(np.int64))
        g = self._groups.ids((path << 32) | pair).astype(np.int32)
        self._rows.append(np.asarray(s.rows, dtype=np.int64))
        self._group.append(g)
        self._period.append(s.period.astype(np.int64))
        # (ranks: positions in file order, as the reference profile takes its samples)
        self.note_ranks(g, np.arange(self.samples, self.samples + n, dtype=np.int64))
        self.samples += n
        return g

    def finish(self) -> SampleGroups:
        """The groups of every sample added."""

        def cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
            return np.concatenate(parts) if parts else np.zeros(0, dtype)

        return assemble(self.tables(), cat(self._rows, np.int64), cat(self._group, np.int32),
                        cat(self._period, np.int64), self.locs, self.comm_names,
                        self.callchains)
