"""The browser's transforms: one stack of them for every view, and the samples they make.

Each transform (:mod:`perftui.analysis.transforms`) is pushed from a frame or a row and
undone last first; the grouped samples a stack makes are made in a view's worker and kept
for the last few stacks.  No widgets."""

from __future__ import annotations

import threading

import numpy as np

from ..analysis.samplegroups import SampleGroups
from ..analysis.transformlocs import transform_groups, with_frames
from ..analysis.transforms import (
    COLLAPSE_RESOURCE,
    DROP_FUNCTION,
    FOCUS_FUNCTION,
    FOCUS_SUBTREE,
    MERGE_FUNCTION,
    Transform,
)
from ..lru import LRU
from ..present.report import frame_name

#: what a breadcrumb calls each kind
CRUMB = {FOCUS_SUBTREE: "focus", FOCUS_FUNCTION: "focus fn", MERGE_FUNCTION: "merge",
         DROP_FUNCTION: "drop", COLLAPSE_RESOURCE: "collapse"}


class TransformStack:
    """The transforms applied to every view, in order, and the stores they make."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: held while a store is made: two views asking for the same one at once (the
        #: table's and the flame graph's workers) make it once, the second waits for it
        self._making = threading.Lock()
        self.stack: tuple[Transform, ...] = ()
        #: the frames collapsed runs become: (dso, name, section), location ids after the
        #: base store's (kept when undone: ids once given stay; one per library)
        self.frames: list[tuple[int, str, str | None]] = []
        self._base: SampleGroups | None = None
        self._made: LRU[tuple[Transform, ...], tuple[SampleGroups, np.ndarray]] = LRU(4)

    def crumbs(self) -> str:
        """The breadcrumb: each transform in order."""
        return " › ".join(f"{CRUMB[t.kind]} {t.label}" for t in self.stack)

    def push(self, t: Transform) -> None:
        self.stack = (*self.stack, t)

    def pop(self) -> Transform | None:
        if not self.stack:
            return None
        t, self.stack = self.stack[-1], self.stack[:-1]
        return t

    # -- transforms from what a view shows -------------------------------------------------
    def of_function(self, kind: str, st: SampleGroups, ids: frozenset[int]) -> Transform:
        """``kind`` (focus-function, merge-function, drop-function) on the function whose
        locations are ``ids``."""
        return Transform(kind, ids, label=self._name(st, min(ids)))

    def of_path(self, st: SampleGroups, path: tuple[frozenset[int], ...]) -> Transform:
        """focus-subtree on a tree node's path (the locations of each level, root first;
        a thread root is ``-1 - comm``)."""
        return Transform(FOCUS_SUBTREE, path=path, label=self._name(st, min(path[-1])))

    def of_resource(self, st: SampleGroups, loc: int) -> Transform:
        """collapse-resource on ``loc``'s dso (a kernel module's frame: its section)."""
        locs = st.locs
        dso = locs.dso[loc]
        d = locs.dsos[dso]
        section = locs.section[loc] if d.module is not None else None
        name = f"{d.short_name}{section}" if section else d.short_name
        dsos = np.asarray(locs.dso, dtype=np.int64)
        hit = dsos == dso
        if section:
            hit &= np.array([s == section for s in locs.section], dtype=bool)
        with self._lock:  # the frame made before for the same library (a redo: the same
            frame = (dso, name, section)  # transform, its samples found made)
            if frame not in self.frames:
                self.frames.append(frame)
            into = len(self._base_locs(st)) + self.frames.index(frame)
        return Transform(COLLAPSE_RESOURCE, frozenset(np.flatnonzero(hit).tolist()),
                         into=into, label=name)

    def _base_locs(self, st: SampleGroups) -> list[int]:
        base = self._base if self._base is not None else st
        out: list[int] = base.locs.dso
        return out

    @staticmethod
    def _name(st: SampleGroups, loc: int) -> str:
        if loc < 0:
            return st.comm_names[-1 - loc]
        return frame_name(st.locs, loc)

    # -- the stores -------------------------------------------------------------------------
    def store(self, base: SampleGroups | None) -> tuple[SampleGroups | None, np.ndarray | None]:
        """The grouped samples under the transforms (the base itself with none) and which
        groups the transforms keep (None: every one)."""
        with self._lock:
            if base is not self._base:
                if self._base is not None:  # new names: the transforms were of the old ones
                    self.stack, self.frames = (), []
                    self._made = LRU(4)
                self._base = base
            stack, frames = self.stack, list(self.frames)
        if base is None or not stack:
            return base, None
        with self._making:
            got = self._made.get(stack)
            if got is None:
                locs = with_frames(base.locs, frames)[0] if frames else base.locs
                got = transform_groups(base, stack, locs)
                self._made.put(stack, got)
        return got
