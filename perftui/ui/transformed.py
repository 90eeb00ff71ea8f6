"""The browser's transforms: one stack of them for every view, and the samples they make.

Each transform (:mod:`perftui.analysis.transforms`) is pushed from a frame or a row and
undone last first; the grouped samples a stack makes are made in a view's worker and kept
for the last few stacks.  No widgets."""

from __future__ import annotations

import threading
from dataclasses import replace

import numpy as np

from ..analysis.samplegroups import SampleGroups
from ..analysis.srclinelocs import NO_ORIGIN, origins
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
        #: the base's locations when it became the base (a live pipe's table grows under
        #: a store: its collapsed frames' ids are after these)
        self._n_base = 0
        self._made: LRU[tuple[Transform, ...], tuple[SampleGroups, np.ndarray]] = LRU(4)
        #: the samples split by source line (of the base's names; the srcline and srcfile
        #: keys' store), each of its locations' base location, and the stores they make
        self._split: tuple[SampleGroups, np.ndarray] | None = None
        self._made_split: LRU[tuple[Transform, ...], tuple[SampleGroups, np.ndarray]] = \
            LRU(2)

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
            into = (self._n_base if self._base is not None else len(locs)) \
                + self.frames.index(frame)
        return Transform(COLLAPSE_RESOURCE, frozenset(np.flatnonzero(hit).tolist()),
                         into=into, label=name)

    @staticmethod
    def _name(st: SampleGroups, loc: int) -> str:
        if loc < 0:
            return st.comm_names[-1 - loc]
        return frame_name(st.locs, loc)

    # -- the stores -------------------------------------------------------------------------
    def _current(self, base: SampleGroups | None
                 ) -> tuple[tuple[Transform, ...], list[tuple[int, str, str | None]]]:
        """The transforms and collapsed frames, once ``base`` is the base (new names: the
        transforms carried over to them, :func:`carried`)."""
        with self._lock:
            if base is not self._base:
                n_new = len(base.locs) if base is not None else 0
                if self._base is not None:  # new names: the transforms carried over
                    self.stack, self.frames = carried(self.stack, self.frames,
                                                      (self._base, self._n_base),
                                                      (base, n_new))
                    self._made = LRU(4)
                self._base, self._n_base = base, n_new
                self._split, self._made_split = None, LRU(2)
            return self.stack, list(self.frames)

    def store(self, base: SampleGroups | None) -> tuple[SampleGroups | None, np.ndarray | None]:
        """The grouped samples under the transforms (the base itself with none) and which
        groups the transforms keep (None: every one)."""
        stack, frames = self._current(base)
        if base is None or not stack:
            return base, None
        with self._making:
            got = self._made.get(stack)
            if got is None:
                locs = with_frames(base.locs, frames, self._n_base)[0] if frames \
                    else base.locs
                got = transform_groups(base, stack, locs)
                self._made.put(stack, got)
        return got

    def split_store(self, base: SampleGroups | None, split: SampleGroups | None
                    ) -> tuple[SampleGroups | None, np.ndarray | None]:
        """:meth:`store` of the samples split by source line (``split``, made from
        ``base``'s names): each transform's functions (base locations) are every split
        location of them, its collapsed frames after the split's locations.  Slow the
        first time (each split location's base location is found): in a worker."""
        stack, frames = self._current(base)
        if base is None or split is None:
            return split, None
        with self._making:
            with self._lock:
                got_split = self._split
            if got_split is None or got_split[0] is not split:
                got_split = (split, origins(base.locs, split.locs))
                with self._lock:
                    self._split, self._made_split = got_split, LRU(2)
            if not stack:
                return split, None
            got = self._made_split.get(stack)
            if got is None:
                origin = got_split[1]
                moved = tuple(_into_split(t, origin, self._n_base) for t in stack)
                locs = with_frames(split.locs, frames)[0] if frames else split.locs
                got = transform_groups(split, moved, locs)
                self._made_split.put(stack, got)
        return got

    def to_base(self, t: Transform) -> Transform:
        """A transform made on the split store's locations (a table by srcline or srcfile,
        or its trees) as the base's: each split location its base location, a collapsed
        frame the base's id of it."""
        return replace(t, ids=self.base_ids(t.ids), path=tuple(map(self.base_ids, t.path)))

    def base_ids(self, ids: frozenset[int]) -> frozenset[int]:
        """Locations of the split store as the base's (see :meth:`to_base`); none when
        no split is known (new names came since: the split's ids name nothing now)."""
        with self._lock:
            got, base, n_base = self._split, self._base, self._n_base
        if got is None or base is None:
            return frozenset()
        origin = got[1]
        n_split = len(origin)
        out = {i for i in ids if i < 0} | {i - n_split + n_base for i in ids if i >= n_split}
        mapped = origin[[i for i in ids if 0 <= i < n_split]]
        return frozenset(out | set(mapped[mapped != NO_ORIGIN].tolist()))

    def base_name(self, loc: int) -> str:
        """The name of the base store's location ``loc`` (a thread, a function, or a
        collapsed library's frame)."""
        with self._lock:
            base, frames, n_base = self._base, list(self.frames), self._n_base
        if base is None:
            return "?"
        if loc >= n_base:
            return frames[loc - n_base][1] if loc - n_base < len(frames) else "?"
        return self._name(base, loc)


def _into_split(t: Transform, origin: np.ndarray, n_base: int) -> Transform:
    """``t`` (of the base store's locations) on the split store's: each base location
    every split location made from it, a collapsed frame's id moved past the split's."""
    n_split = len(origin)

    def ids(s: frozenset[int]) -> frozenset[int]:
        out = {i for i in s if i < 0} | {i - n_base + n_split for i in s if i >= n_base}
        inside = [i for i in s if 0 <= i < n_base]
        if inside:
            out |= set(np.flatnonzero(np.isin(origin, inside)).tolist())
        return frozenset(out)

    into = t.into - n_base + n_split if t.kind == COLLAPSE_RESOURCE else t.into
    return replace(t, ids=ids(t.ids), path=tuple(ids(p) for p in t.path), into=into)


Base = tuple[SampleGroups, int]  # a base store, and its locations when it became the base


def carried(stack: tuple[Transform, ...], frames: list[tuple[int, str, str | None]],
            old: Base, new: tuple[SampleGroups | None, int]
            ) -> tuple[tuple[Transform, ...], list[tuple[int, str, str | None]]]:
    """The transforms of ``old``'s locations as ``new``'s (new names: a live pipe's next
    update, whose table is the same one grown or, for a DWARF stream, a new one): a
    function by its locations' identity, a thread by its name, a collapsed library by
    its dso (every location of it in ``new``), its frame after ``new``'s locations.  A
    transform whose function, thread or library ``new`` lacks is dropped."""
    (ost, n_old), (nst, n_new) = old, new
    if nst is None or not stack:
        return (), []
    ol, nl = ost.locs, nst.locs
    dso_of = {d: nl.dso_ids.get((ld.name, ld.kernel), -1) for d, ld in enumerate(ol.dsos)}
    moved = [(max(dso_of.get(d, -1), 0), name, section) for d, name, section in frames]
    comm_of = {c: i for i, c in enumerate(nst.comm_names)}

    def ids(s: frozenset[int]) -> frozenset[int] | None:
        inside = frozenset(i for i in s if 0 <= i < n_old)
        out = set(inside if nl is ol else ol.same_in(inside, nl))
        out |= {i - n_old + n_new for i in s if i >= n_old}
        for i in s:
            if i < 0:
                c = -1 - i
                name = ost.comm_names[c] if c < len(ost.comm_names) else None
                if name not in comm_of:
                    return None  # (a thread the new names lack)
                out.add(-1 - comm_of[name])
        return frozenset(out) if out or not s else None

    out = []
    for t in stack:
        if t.kind == COLLAPSE_RESOURCE:
            k = t.into - n_old
            if not 0 <= k < len(frames) or dso_of.get(frames[k][0], -1) < 0:
                continue
            dso, _name, section = moved[k]
            hit = np.asarray(nl.dso[:n_new], dtype=np.int64) == dso
            if section:
                hit &= np.array([x == section for x in nl.section[:n_new]], dtype=bool)
            shifted = {i - n_old + n_new for i in t.ids if i >= n_old}
            out.append(replace(t, ids=frozenset(np.flatnonzero(hit).tolist()) | shifted,
                               into=n_new + k))
            continue
        new_ids, path = ids(t.ids), [ids(p) for p in t.path]
        if new_ids is None or any(p is None for p in path):
            continue  # (its function is not in the new names)
        out.append(replace(t, ids=new_ids, path=tuple(p for p in path if p is not None)))
    return tuple(out), moved
