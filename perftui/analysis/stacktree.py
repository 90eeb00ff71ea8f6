"""Call trees built once from distinct stacks and weighed many times.

A node is (parent, frame); a frame is a location id (``>= 0``) or, at the root level of a
thread-rooted tree, a thread name (``-1 - comm``), as in :mod:`.calltree`.  The browser
builds the structure once (:class:`TrieBuilder`, from paths given root first) and weighs it
for each filter, time range or event (:meth:`Trie.weigh`): those only change how much each
path weighs, never the paths.  Everything is numpy; nothing is made per node in Python
except the children lists a view asks for.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..perfdata.index import spans as spans  # (here for the analysis layer's callers)

_SHIFT = 32
_FRAME_BIAS = 1 << 31  # frames are stored biased into 32 unsigned bits


class Interner:
    """Dense ids (0, 1, ...) for int64 keys met block by block, in order of first use.

    The known keys are kept sorted with their ids: a block's keys are found with one
    ``searchsorted`` and the new ones inserted in place."""

    def __init__(self) -> None:
        self._sorted = np.zeros(0, np.int64)
        self._sorted_ids = np.zeros(0, np.int64)
        self._new: list[np.ndarray] = []
        self._keys = np.zeros(0, np.int64)

    def __len__(self) -> int:
        return len(self._sorted)

    def ids(self, keys: np.ndarray) -> np.ndarray:
        """The id of each key (int64), new keys added."""
        keys = np.asarray(keys, dtype=np.int64)
        if not len(keys):
            return np.zeros(0, np.int64)
        uniq, inv = np.unique(keys, return_inverse=True)
        pos = np.searchsorted(self._sorted, uniq)
        known = pos < len(self._sorted)
        known[known] = self._sorted[pos[known]] == uniq[known]
        out = np.empty(len(uniq), np.int64)
        out[known] = self._sorted_ids[pos[known]]
        new = np.nonzero(~known)[0]
        if len(new):
            start = len(self._sorted)
            out[new] = np.arange(start, start + len(new))
            self._sorted = np.insert(self._sorted, pos[new], uniq[new])
            self._sorted_ids = np.insert(self._sorted_ids, pos[new], out[new])
            self._new.append(uniq[new])
        return out[inv.reshape(-1)]

    def keys(self) -> np.ndarray:
        """Every key, in id order."""
        if self._new:
            self._keys = np.concatenate([self._keys, *self._new])
            self._new = []
        return self._keys


_HASH_MUL = np.uint64(0x9E3779B97F4A7C15)
_HASH_LEN = np.uint64(0xC2B2AE3D27D4EB4F)


class PathInterner:
    """Dense ids for whole paths (sequences of frames), met block by block.

    Paths are hashed (64 bits) and interned by hash; every path is then compared with the
    stored path of its id, and the rare one a collision would have merged is interned
    exactly, by its frames.  :meth:`paths` gives the distinct paths in id order."""

    def __init__(self) -> None:
        self._ids = Interner()
        self._lengths: list[np.ndarray] = []
        self._frames: list[np.ndarray] = []
        self._starts = np.zeros(1, np.int64)
        self._flat = np.zeros(0, np.int64)
        self._pending = 0
        self._exact: dict[tuple[int, ...], int] = {}
        self._by_hash_id: list[int] = []  # path id of each hash id

    def __len__(self) -> int:
        return len(self._starts) - 1 + self._pending

    def _flush(self) -> None:
        if self._frames:
            lengths = np.concatenate(self._lengths)
            starts = np.zeros(len(lengths) + 1, np.int64)
            np.cumsum(lengths, out=starts[1:])
            self._starts = np.concatenate([self._starts[:-1], starts + self._starts[-1]])
            self._flat = np.concatenate([self._flat, *self._frames])
            self._lengths, self._frames, self._pending = [], [], 0

    def _append(self, starts: np.ndarray, frames: np.ndarray, which: np.ndarray) -> None:
        lengths = np.diff(starts)[which]
        self._lengths.append(lengths)
        self._frames.append(frames[spans(starts[which], starts[which] + lengths)])
        self._pending += len(which)

    def ids(self, starts: np.ndarray, frames: np.ndarray) -> np.ndarray:
        """The id of each path ``frames[starts[k]:starts[k + 1]]`` (every path non-empty)."""
        starts = np.asarray(starts, dtype=np.int64)
        frames = np.asarray(frames, dtype=np.int64)
        n = len(starts) - 1
        lengths = np.diff(starts)
        if not n:
            return np.zeros(0, np.int64)
        pos = np.arange(len(frames), dtype=np.int64) - np.repeat(starts[:-1], lengths)
        with np.errstate(over="ignore"):
            powers = np.cumprod(np.full(int(lengths.max()), _HASH_MUL, dtype=np.uint64))
            w = (frames.astype(np.uint64) + np.uint64(1)) * powers[pos]
            h = np.add.reduceat(w, starts[:-1]) ^ (lengths.astype(np.uint64) * _HASH_LEN)
        before = len(self._ids)
        hid = self._ids.ids(h.view(np.int64))
        new_h = np.unique(hid[hid >= before])
        # the first path of each new hash becomes the stored one
        _u, first = np.unique(hid, return_index=True)
        first_of = np.full(len(self._ids), -1, np.int64)
        first_of[_u] = first
        if len(new_h):
            base = len(self)
            self._append(starts, frames, first_of[new_h])
            self._by_hash_id.extend(range(base, base + len(new_h)))
        self._flush()
        by_hash = np.asarray(self._by_hash_id, dtype=np.int64)
        out: np.ndarray = by_hash[hid]
        # every path against the stored one of its id
        st, ln = self._starts[out], np.diff(self._starts)[out]
        same = ln == lengths
        ok_entry = np.zeros(len(frames), dtype=bool)
        sel = np.repeat(same, lengths)
        ok_entry[sel] = self._flat[np.repeat(st, lengths)[sel] + pos[sel]] == frames[sel]
        bad = ~same
        if not ok_entry.all():
            bad |= np.logical_and.reduceat(ok_entry, starts[:-1]) == 0
        for k in np.nonzero(bad)[0].tolist():  # a hash collision: by the frames
            key = tuple(frames[starts[k]:starts[k + 1]].tolist())
            got = self._exact.get(key)
            if got is None:
                got = self._exact[key] = len(self)
                self._append(starts, frames, np.array([k]))
                self._flush()
            out[k] = got
        return out

    def paths(self) -> tuple[np.ndarray, np.ndarray]:
        """(starts, frames) of every distinct path, in id order."""
        self._flush()
        return self._starts, self._flat


class TrieBuilder:
    """Merges paths (root first) into a tree, block by block."""

    def __init__(self) -> None:
        self._nodes = Interner()

    def add(self, starts: np.ndarray, frames: np.ndarray) -> np.ndarray:
        """Merge the paths ``frames[starts[k]:starts[k + 1]]``; the node each path ends at
        (-1 for an empty path)."""
        starts = np.asarray(starts, dtype=np.int64)
        frames = np.asarray(frames, dtype=np.int64)
        n = len(starts) - 1
        lengths = np.diff(starts)
        node = np.full(n, -1, np.int64)
        if n <= 0:
            return node
        for d in range(int(lengths.max())):
            sel = np.nonzero(lengths > d)[0]
            keys = ((node[sel] + 1) << _SHIFT) | (frames[starts[sel] + d] + _FRAME_BIAS)
            node[sel] = self._nodes.ids(keys)
        return node

    def trie(self) -> Trie:
        """The tree built so far."""
        keys = self._nodes.keys()
        parent = (keys >> _SHIFT) - 1
        frame = (keys & ((1 << _SHIFT) - 1)) - _FRAME_BIAS
        return Trie(parent, frame)


@dataclass
class Trie:
    """The structure of a tree: ``parent`` (-1 at the root level) and ``frame`` per node.
    A child's id is always greater than its parent's."""

    parent: np.ndarray
    frame: np.ndarray
    depth: np.ndarray = field(init=False)
    _levels: list[np.ndarray] = field(init=False)

    def __post_init__(self) -> None:
        # parents precede children: relax until stable (at most the tree's height passes)
        has = self.parent >= 0
        up = np.maximum(self.parent, 0)
        depth = np.zeros(len(self.parent), np.int64)
        while True:
            new = np.where(has, depth[up] + 1, 0)
            if np.array_equal(new, depth):
                break
            depth = new
        self.depth = depth
        order = np.argsort(depth, kind="stable")
        bounds = np.searchsorted(depth[order], np.arange(int(depth.max(initial=0)) + 2))
        self._levels = [order[bounds[d]:bounds[d + 1]] for d in range(len(bounds) - 1)]

    def __len__(self) -> int:
        return len(self.parent)

    def weigh(self, end_nodes: np.ndarray, period: np.ndarray, count: np.ndarray
              ) -> StackTree:
        """The tree with the paths ending at ``end_nodes`` weighing ``period``/``count``
        each (several paths may end at one node; -1 entries are ignored)."""
        n = len(self.parent)
        end_nodes = np.asarray(end_nodes, dtype=np.int64)
        ok = end_nodes >= 0
        self_p = np.zeros(n, np.int64)
        self_c = np.zeros(n, np.int64)
        np.add.at(self_p, end_nodes[ok], np.asarray(period, dtype=np.int64)[ok])
        np.add.at(self_c, end_nodes[ok], np.asarray(count, dtype=np.int64)[ok])
        total, cnt = self_p.copy(), self_c.copy()
        for level in reversed(self._levels[1:]):
            np.add.at(total, self.parent[level], total[level])
            np.add.at(cnt, self.parent[level], cnt[level])
        return StackTree(self, total, self_p, cnt, self_c)

    def lift(self, nodes: np.ndarray, depth: int) -> np.ndarray:
        """The ancestor of each node at ``depth`` (the node itself at its own depth; -1
        where the node is shallower)."""
        cur = np.asarray(nodes, dtype=np.int64).copy()
        ok = cur >= 0
        d = np.where(ok, self.depth[np.maximum(cur, 0)], -1)
        cur[d < depth] = -1
        while True:
            up = (cur >= 0) & (self.depth[np.maximum(cur, 0)] > depth)
            if not up.any():
                return cur
            cur[up] = self.parent[cur[up]]

    def path(self, node: int) -> list[int]:
        """Frames from the root to ``node``."""
        out = []
        while node >= 0:
            out.append(int(self.frame[node]))
            node = int(self.parent[node])
        return out[::-1]

    def nodes(self, node: int) -> list[int]:
        """Nodes from the root to ``node``."""
        out = []
        while node >= 0:
            out.append(node)
            node = int(self.parent[node])
        return out[::-1]


@dataclass
class StackTree:
    """A weighed :class:`Trie`: ``total`` (period of the paths through a node),
    ``self_period`` (of those ending there), ``count``/``self_count`` the same in
    samples.  Nodes nothing passes through are left out of :meth:`children`."""

    trie: Trie
    total: np.ndarray
    self_period: np.ndarray
    count: np.ndarray
    self_count: np.ndarray
    _kids: np.ndarray | None = None
    _kid_start: np.ndarray | None = None

    @property
    def parent(self) -> np.ndarray:
        return self.trie.parent

    @property
    def frame(self) -> np.ndarray:
        return self.trie.frame

    def __len__(self) -> int:
        return len(self.trie)

    @property
    def grand_total(self) -> int:
        """Period of every path (the roots' totals)."""
        return int(self.total[self.trie.parent < 0].sum())

    @property
    def grand_count(self) -> int:
        return int(self.count[self.trie.parent < 0].sum())

    def _index(self) -> tuple[np.ndarray, np.ndarray]:
        if self._kids is None or self._kid_start is None:
            live = np.nonzero(self.count > 0)[0]
            par = self.trie.parent[live] + 1  # 0: the root level
            order = np.lexsort((live, -self.total[live], par))
            self._kids = live[order]
            self._kid_start = np.searchsorted(par[order], np.arange(len(self.trie) + 2))
        return self._kids, self._kid_start

    def children(self, node: int) -> np.ndarray:
        """Child nodes of ``node`` (-1: the roots) with samples, heaviest first."""
        kids, start = self._index()
        i = node + 1
        return kids[start[i]:start[i + 1]]

    def has_children(self, node: int) -> bool:
        _kids, start = self._index()
        return bool(start[node + 2] > start[node + 1])
