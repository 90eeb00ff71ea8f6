"""The differential flame graph's numbers: NEW's stacks as a tree of frame names, each
frame with its period in NEW and in OLD along the same path of names.

As Brendan Gregg's differential flame graphs (``difffolded.pl -n`` then ``flamegraph.pl``):
a frame is as wide as NEW's samples through it, and its colour is the change of its own
(self) share, OLD normalised to NEW's total; here both sides are shares of their own total
period, so a change is in percentage points, as ``perf diff``'s Delta.  A stack of OLD is
matched to NEW's by its names (thread name, then the frames outermost first), so two
builds of a program compare; OLD's period through a path NEW has no samples on is counted
apart (``old_elsewhere``), not drawn; flamegraph.pl still counts such a stack's change
in the largest change the colours are scaled by (:meth:`DiffFlame.max_delta`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .stacktree import StackTree, Trie

#: a stack as the exports give it: frame names, outermost first (thread name first), and
#: its period
NamedStack = tuple[Sequence[str], int]


@dataclass
class DiffFlame:
    """Node 0 is "all"; every other node is a frame under its ``parent``, named ``name``.
    ``new_total``/``old_total``: the period of each side's stacks through the node;
    ``new_self``/``old_self``: of those ending there; ``new_sum``/``old_sum``: each side's
    whole period."""

    name: list[str]
    parent: np.ndarray
    new_total: np.ndarray
    new_self: np.ndarray
    old_total: np.ndarray
    old_self: np.ndarray
    new_sum: int
    old_sum: int
    old_elsewhere: int
    old_elsewhere_max: int = 0  # the period of OLD's heaviest stack NEW has no path for

    def __len__(self) -> int:
        return len(self.name)

    def share(self, value: np.ndarray, side: str) -> np.ndarray:
        """Periods of one side (``"new"`` or ``"old"``) as percent of its total."""
        total = self.new_sum if side == "new" else self.old_sum
        out = np.asarray(value, dtype=np.float64) * (100.0 / total if total else 0.0)
        return out

    def self_delta(self) -> np.ndarray:
        """Per node: NEW's self share minus OLD's, in percentage points (the colour)."""
        out: np.ndarray = self.share(self.new_self, "new") - self.share(self.old_self, "old")
        return out

    def max_delta(self) -> float:
        """The largest change of one stack, in percentage points: what flamegraph.pl
        scales its colours by (``$maxdelta``: every stack of the folded pair, drawn or
        not)."""
        d = self.self_delta()
        gone = float(self.share(np.array([self.old_elsewhere_max]), "old")[0])
        return max(float(np.abs(d).max(initial=0.0)), gone)

    def stack_tree(self) -> StackTree:
        """The tree as an icicle draws it, weighed by NEW: node ``k`` is node ``k + 1``
        here (no "all"), the threads at the root level; a node's frame is its own id."""
        n = len(self.name) - 1
        parent = self.parent[1:] - 1  # "all"'s children: -1, the root level
        trie = Trie(parent, np.arange(n, dtype=np.int64))
        live = (self.new_total[1:] > 0).astype(np.int64)
        return StackTree(trie, self.new_total[1:], self.new_self[1:], live,
                         (self.new_self[1:] > 0).astype(np.int64))

    def path(self, node: int) -> list[str]:
        """The names from the outermost frame (the thread) down to ``node``."""
        out: list[str] = []
        while node > 0:
            out.append(self.name[node])
            node = int(self.parent[node])
        return out[::-1]


def diff_flame(old: Iterable[NamedStack], new: Iterable[NamedStack]) -> DiffFlame:
    """The tree of NEW's stacks, OLD's periods laid along the same paths."""
    ids: dict[tuple[int, str], int] = {}
    name, parent = ["all"], [-1]
    new_total, new_self = [0], [0]
    new_sum = 0
    for frames, period in new:
        node = 0
        new_total[0] += period
        new_sum += period
        for f in frames:
            k = (node, f)
            nxt = ids.get(k)
            if nxt is None:
                nxt = ids[k] = len(name)
                name.append(f)
                parent.append(node)
                new_total.append(0)
                new_self.append(0)
            node = nxt
            new_total[node] += period
        new_self[node] += period
    old_total = np.zeros(len(name), dtype=np.int64)
    old_self = np.zeros(len(name), dtype=np.int64)
    old_sum = elsewhere = 0
    gone: dict[tuple[str, ...], int] = {}
    for frames, period in old:
        old_sum += period
        node, whole = 0, True
        old_total[0] += period
        for f in frames:
            nxt = ids.get((node, f))
            if nxt is None:
                whole = False
                break
            node = nxt
            old_total[node] += period
        if whole:
            old_self[node] += period
        else:
            elsewhere += period
            key = tuple(frames)
            gone[key] = gone.get(key, 0) + period
    return DiffFlame(name, np.asarray(parent, dtype=np.int64),
                     np.asarray(new_total, dtype=np.int64), np.asarray(new_self, dtype=np.int64),
                     old_total, old_self, new_sum, old_sum, elsewhere,
                     max(gone.values(), default=0))
