"""Call trees of resolved blocks of samples (it was ``perftui.analysis.calltree``, what
folded stacks and speedscope were made from before they counted the named samples): every
sample's stack merged into a tree, top-down (callers first) or bottom-up, with the thread
name as the root level.  The tests hold the browser's trees (``analysis.samplegroups``)
and the folded stacks (``analysis.stackcounts``) to it.

A node is (parent, frame); a frame is a location id, or a comm at the root.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from perftui.symbols.naming.resolved import ResolvedSamples
from reference.profile import stacks

_SHIFT = 32
_COMM_BASE = 1 << 30  # frames below this offset are comms: code = comm - _COMM_BASE


@dataclass
class CallTree:
    """Nodes as parallel arrays.  ``frame[n] >= 0`` is a location id, ``< 0`` a comm id
    (``-1 - frame``) at the root level.  ``total``: period of the samples through the node;
    ``self_period``: of the samples whose stack ends at it.  ``count``/``self_count`` are
    the same in samples."""

    top_down: bool
    parent: list[int] = field(default_factory=list)
    frame: list[int] = field(default_factory=list)
    _keys: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    _ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    total: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    self_period: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    count: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    self_count: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    _children: list[list[int]] | None = None

    def __len__(self) -> int:
        return len(self.parent)

    # -- building -------------------------------------------------------------------------
    def _lookup(self, parents: np.ndarray, frames: np.ndarray) -> np.ndarray:
        """Node ids of (parent, frame) pairs, adding the new ones."""
        keys = ((parents + 1) << _SHIFT) | (frames + _COMM_BASE)
        uniq, inv = np.unique(keys, return_inverse=True)
        pos = np.searchsorted(self._keys, uniq)
        known = pos < len(self._keys)
        known[known] = self._keys[pos[known]] == uniq[known]
        ids = np.empty(len(uniq), dtype=np.int64)
        ids[known] = self._ids[pos[known]]
        new = np.nonzero(~known)[0]
        if len(new):
            start = len(self.parent)
            ids[new] = np.arange(start, start + len(new))
            nk = uniq[new]
            self.parent.extend(((nk >> _SHIFT) - 1).tolist())
            self.frame.extend(((nk & ((1 << _SHIFT) - 1)) - _COMM_BASE).tolist())
            allk = np.concatenate([self._keys, nk])
            alli = np.concatenate([self._ids, ids[new]])
            order = np.argsort(allk, kind="stable")
            self._keys, self._ids = allk[order], alli[order]
            grow = len(self.parent) - len(self.total)
            pad = np.zeros(grow, np.int64)
            self.total = np.concatenate([self.total, pad])
            self.self_period = np.concatenate([self.self_period, pad])
            self.count = np.concatenate([self.count, pad])
            self.self_count = np.concatenate([self.self_count, pad])
            self._children = None
        return ids[inv.reshape(-1)]

    def add(self, s: ResolvedSamples) -> None:
        """Merge the stacks of one block of samples into the tree."""
        n = len(s)
        if not n:
            return
        sample, loc = stacks(s)
        lengths = np.bincount(sample, minlength=n)
        starts = np.zeros(n + 1, np.int64)
        np.cumsum(lengths, out=starts[1:])
        period = s.period.astype(np.int64)
        node = self._lookup(np.full(n, -1, np.int64), -1 - s.comm.astype(np.int64))
        self._account(node, period)
        for d in range(int(lengths.max()) if n else 0):
            sel = np.nonzero(lengths > d)[0]
            at = starts[sel] + (lengths[sel] - 1 - d if self.top_down else d)
            node[sel] = self._lookup(node[sel], loc[at])
            self._account(node[sel], period[sel])
        np.add.at(self.self_period, node, period)
        np.add.at(self.self_count, node, 1)

    def _account(self, nodes: np.ndarray, period: np.ndarray) -> None:
        np.add.at(self.total, nodes, period)
        np.add.at(self.count, nodes, 1)

    # -- reading ------------------------------------------------------------------------------
    def children(self, node: int) -> list[int]:
        """Child nodes of ``node`` (-1: the roots), heaviest first."""
        if self._children is None:
            kids: list[list[int]] = [[] for _ in range(len(self.parent) + 1)]
            for i, p in enumerate(self.parent):
                kids[p + 1 if p >= 0 else 0].append(i)
            tot = self.total
            for k in kids:
                k.sort(key=lambda i: (-int(tot[i]), i))
            self._children = kids
        return self._children[node + 1 if node >= 0 else 0]

    def path(self, node: int) -> list[int]:
        """Frames from the root to ``node``."""
        out = []
        while node >= 0:
            out.append(self.frame[node])
            node = self.parent[node]
        return out[::-1]

    def nodes_of(self, loc: int) -> np.ndarray:
        """Every node whose frame is location ``loc``."""
        return np.nonzero(np.asarray(self.frame, dtype=np.int64) == loc)[0]

    def neighbours(self, loc: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """(callers, callees) of location ``loc`` in a top-down tree: (frame, period)
        pairs by period, summed over every node of ``loc`` (a comm frame is negative)."""
        callers: dict[int, int] = {}
        callees: dict[int, int] = {}
        for n in self.nodes_of(loc).tolist():
            p = self.parent[n]
            if p >= 0:
                f = self.frame[p]
                callers[f] = callers.get(f, 0) + int(self.total[n])
            for c in self.children(n):
                f = self.frame[c]
                callees[f] = callees.get(f, 0) + int(self.total[c])
        def order(d: dict[int, int]) -> list[tuple[int, int]]:
            return sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))
        if not self.top_down:
            callers, callees = callees, callers
        return order(callers), order(callees)


def build_tree(blocks: Iterable[ResolvedSamples], top_down: bool = True) -> CallTree:
    """The call tree of every sample in ``blocks``."""
    tree = CallTree(top_down)
    for s in blocks:
        tree.add(s)
    return tree
