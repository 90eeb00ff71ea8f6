"""Transforms on stacks, as the Firefox Profiler defines and names them.

A stack is a path of frames, outermost caller first (location ids, ``>= 0``; a thread at
the root of a thread-rooted tree is ``-1 - comm``, and is never a function).  The paths
are one CSR (:class:`Paths`) with a ``keep`` flag each; a transform maps it to another
with the same number of paths (path ``k`` is still sample group ``k``'s), so every view's
weights stay where they were.  Everything is numpy; nothing is made per path.

- ``focus-subtree``: only the paths that begin with the given path (its first frame
  matched at the root, after a thread root the given path does not name); the subtree's
  own frame becomes the root.
- ``focus-function``: only the paths through the function, each cut above its outermost
  call of it (every call site merged: the function is the root).
- ``merge-function``: the function's frames taken out of every path; its self time goes
  to its caller.  A path left empty is dropped (a sample with no stack: the Firefox
  Profiler's null stack).
- ``drop-function``: the paths through the function dropped.
- ``collapse-resource``: each run of consecutive frames of one library (a dso, or a
  kernel module's section) made one frame, ``into``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

FOCUS_SUBTREE = "focus-subtree"
FOCUS_FUNCTION = "focus-function"
MERGE_FUNCTION = "merge-function"
DROP_FUNCTION = "drop-function"
COLLAPSE_RESOURCE = "collapse-resource"
KINDS = (FOCUS_SUBTREE, FOCUS_FUNCTION, MERGE_FUNCTION, DROP_FUNCTION, COLLAPSE_RESOURCE)


@dataclass(frozen=True)
class Transform:
    """One transform: ``kind`` (one of :data:`KINDS`); ``ids``, the frames that are the
    function (or the resource's frames, for ``collapse-resource``); ``path``, for
    ``focus-subtree``, the frames each level may be, root first; ``into``, the frame a
    collapsed run becomes; ``label``, what a breadcrumb says."""

    kind: str
    ids: frozenset[int] = frozenset()
    path: tuple[frozenset[int], ...] = ()
    into: int = 0
    label: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown transform {self.kind!r}")


@dataclass
class Paths:
    """Paths ``frames[starts[k]:starts[k + 1]]``, outermost first, and ``keep`` (False:
    path ``k`` is dropped)."""

    starts: np.ndarray
    frames: np.ndarray
    keep: np.ndarray

    @classmethod
    def of(cls, starts: np.ndarray, frames: np.ndarray) -> Paths:
        starts = np.asarray(starts, dtype=np.int64)
        return cls(starts, np.asarray(frames, dtype=np.int64),
                   np.ones(len(starts) - 1, dtype=bool))

    def __len__(self) -> int:
        return len(self.starts) - 1

    def path(self, k: int) -> list[int]:
        out: list[int] = self.frames[self.starts[k]:self.starts[k + 1]].tolist()
        return out

    def _owner(self) -> np.ndarray:
        return np.repeat(np.arange(len(self), dtype=np.int64), np.diff(self.starts))

    def _subset(self, entry_ok: np.ndarray, keep: np.ndarray) -> Paths:
        """The paths with only the entries ``entry_ok``; a path left empty is dropped."""
        lengths = np.bincount(self._owner()[entry_ok], minlength=len(self)).astype(np.int64)
        starts = np.zeros(len(self) + 1, np.int64)
        np.cumsum(lengths, out=starts[1:])
        return Paths(starts, self.frames[entry_ok], keep & (lengths > 0))


def _member(frames: np.ndarray, ids: frozenset[int]) -> np.ndarray:
    """Bool per entry: the frame is one of ``ids``."""
    if not ids:
        return np.zeros(len(frames), dtype=bool)
    return np.isin(frames, np.fromiter(ids, dtype=np.int64, count=len(ids)))


def apply(paths: Paths, transforms: Sequence[Transform]) -> Paths:
    """``paths`` after each of ``transforms`` in turn."""
    for t in transforms:
        paths = apply_one(paths, t)
    return paths


def apply_one(p: Paths, t: Transform) -> Paths:
    """``p`` after the transform ``t`` (see the module doc)."""
    if t.kind == FOCUS_SUBTREE:
        return _focus_subtree(p, t.path)
    hit = _member(p.frames, t.ids)
    owner = p._owner()
    if t.kind == DROP_FUNCTION:
        through = np.bincount(owner[hit], minlength=len(p)) > 0
        return Paths(p.starts, p.frames, p.keep & ~through)
    if t.kind == MERGE_FUNCTION:
        return p._subset(~hit, p.keep)
    idx = np.arange(len(p.frames), dtype=np.int64)
    if t.kind == FOCUS_FUNCTION:
        first = np.full(len(p), len(p.frames), np.int64)
        np.minimum.at(first, owner[hit], idx[hit])
        return p._subset(idx >= first[owner], p.keep & (first < len(p.frames)))
    # collapse-resource: a run's first frame becomes ``into``, the rest go
    after = np.zeros(len(p.frames), dtype=bool)
    after[1:] = hit[1:] & hit[:-1] & (owner[1:] == owner[:-1])
    out = p._subset(~after, p.keep)
    out.frames = out.frames.copy()
    out.frames[hit[~after]] = t.into
    return out


def _focus_subtree(p: Paths, path: tuple[frozenset[int], ...]) -> Paths:
    n, k = len(p), len(path)
    if not k:
        return p
    lengths = np.diff(p.starts)
    # a thread root the given path does not begin with is passed over
    head = np.where(lengths > 0, p.frames[np.minimum(p.starts[:-1], len(p.frames) - 1)], 0)
    skip = ((head < 0) & ~_member(head, path[0])).astype(np.int64)
    ok = p.keep & (lengths >= skip + k)
    begin = p.starts[:-1] + skip
    for level, ids in enumerate(path):
        at = np.minimum(begin + level, max(len(p.frames) - 1, 0))
        ok &= _member(p.frames[at], ids) if len(p.frames) else False
    owner = p._owner()
    pos = np.arange(len(p.frames), dtype=np.int64) - begin[owner]
    return p._subset(pos >= k - 1, ok if n else p.keep)
