"""The profile views' data: the model's grouped samples weighed per scope, cached.

The indexing worker groups every sample once, in the same pass that names them
(:meth:`Model.build_names <perftui.ui.model.Model.build_names>`: the one resolver).  Here
a scope (filter with the timeline range in it, event, module section) weighs the groups
(:meth:`ProfileData.selection`: a mask and one ``bincount``), and a hotspot table by any
sort keys is numpy over the groups (:meth:`ProfileData.table`); both are cached, so
switching keys or coming back to a scope never resolves or counts again.  Everything here
may be slow on a big recording: the views call it from thread workers.  No widgets here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TypeVar

import numpy as np

from .. import heap
from ..analysis.commprocesses import CommMembers, comm_members, group_pids
from ..analysis.filters import Filter
from ..analysis.grouptrees import GroupTree, bottom_up, focus_trees, top_down
from ..analysis.offcpu import OFFCPU_EVENT, off_cpu, offcpu_attr, offcpu_borrowed, weights
from ..analysis.rowsymbols import RowSymbols, row_symbols
from ..analysis.samplegroups import (
    GroupCodes,
    GroupProfile,
    SampleGroups,
    Selection,
    group_profile,
    select,
)
from ..analysis.sectionreport import SectionReport
from ..analysis.sortkeys import DEFAULT_SORT
from ..analysis.srclinelocs import SOURCE_KEYS
from ..analysis.stacktree import Trie, TrieBuilder
from ..lru import LRU
from ..present.report import Names, key_text
from ..present.report import frame_name as folded_name
from ..symbols.naming.locations import Locations
from .model import Model
from .transformed import TransformStack

MASK_BLOCK = 1 << 20  # samples masked at a time
#: stores whose key codes and flame-graph paths are kept: the base and the transformed
#: ones :class:`TransformStack` keeps, so undo and redo find theirs made
STORES_KEPT = 6
T = TypeVar("T")
#: the event switch's ``offcpu-time`` made from sched_switch (a Scope's attr): the
#: sched_switch samples, each weighing its thread's time off the CPU in ns
OFFCPU_ATTR = -2


@dataclass(frozen=True)
class Scope:
    """Which samples a view counts: the filter (the timeline range in it), one event
    (attr index; None: every event), and optionally one module's samples, or one module
    section's (``(module, section)``; section None: the whole module)."""

    flt: Filter
    attr: int | None = None
    section: tuple[str, str | None] | None = None


class ProfileData:
    """The grouped samples of the app's recording and what is derived from them."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self._lock = threading.Lock()
        #: per store (by id, the store kept with it): its key codes, its flame paths
        self._codes: LRU[int, tuple[SampleGroups, GroupCodes]] = LRU(STORES_KEPT)
        self._flames: LRU[int, tuple[SampleGroups, Flame]] = LRU(STORES_KEPT)
        self._selections: LRU[tuple[object, ...], Selection] = LRU(8)
        self._tables: LRU[tuple[object, ...], GroupProfile] = LRU(16)
        self._labels: tuple[Locations, list[str]] | None = None
        self._flame_labels: tuple[Locations, list[str]] | None = None
        #: per store: the pid of each group (the flame graph's thread names say them)
        self._pids: LRU[int, tuple[SampleGroups, np.ndarray]] = LRU(STORES_KEPT)
        #: (store, charged, ns per store sample) of the off-CPU time
        self._offcpu: tuple[SampleGroups, np.ndarray, np.ndarray] | None = None
        #: what making the off-CPU time said (shown in the info screen once made)
        self.offcpu_notes: list[str] = []
        #: the section drill-down's symbols, by (report, entry)
        self._row_symbols: LRU[tuple[int, int], tuple[SampleGroups, SectionReport, RowSymbols]] \
            = LRU(4)
        #: the transforms every view shows (focus, merge, drop, collapse)
        self.transforms = TransformStack()
        #: shares of the samples a filter of entries keeps (perf's ``--percentage
        #: relative``), not of every sample (False: perf's default, "absolute")
        self.relative_shares = False

    # -- state ----------------------------------------------------------------------------
    @property
    def store(self) -> SampleGroups | None:
        """The grouped samples (None until the names are built)."""
        return self.model.groups

    def groups(self, source: bool = False) -> tuple[SampleGroups | None, np.ndarray | None]:
        """The grouped samples under the transforms, and the groups they keep (None:
        every one): may be slow, in a worker.  ``source``: split by source line (the
        srcline and srcfile keys'; made the first time: slower)."""
        if source:
            split = self.model.source.groups()
            return self.transforms.split_store(self.model.groups, split)
        return self.transforms.store(self.model.groups)

    @property
    def ready(self) -> bool:
        return self.model.groups is not None

    @property
    def callchains(self) -> bool:
        st = self.model.groups
        return bool(st is not None and st.callchains)

    def attrs(self) -> list[int]:
        """The events with samples, in attr order; then :data:`OFFCPU_ATTR` when
        sched_switch samples make ``offcpu-time``."""
        st = self.model.groups
        if st is None:
            return []
        made = self.offcpu_source()
        return [*st.attrs, OFFCPU_ATTR] if made is not None and made in st.attrs else st.attrs

    def offcpu_source(self) -> int | None:
        """The sched_switch event whose samples make ``offcpu-time`` (None: none)."""
        return offcpu_attr(self.model.rec)

    def event_name(self, attr: int | None) -> str:
        rec = self.model.rec
        if attr == OFFCPU_ATTR:
            return OFFCPU_EVENT
        if attr is None or not 0 <= attr < len(rec.attrs):
            return "every event"
        return rec.attrs[attr].display_name

    def event_title(self, attr: int | None) -> str:
        """The event's name as titles say it: ``offcpu-time`` made from SWITCH records
        says its stacks are borrowed (from the samples before each switch-out)."""
        name = self.event_name(attr)
        if attr == OFFCPU_ATTR and offcpu_borrowed(self.model.rec):
            return f"{name} (stacks borrowed)"
        return name

    def timed(self, attr: int | None) -> bool:
        """Whether the event's periods are nanoseconds (``offcpu-time``, made here or
        recorded by perf's ``--off-cpu``): its views show times."""
        return self.event_name(attr) == OFFCPU_EVENT

    def sample_weights(self, scope: Scope, st: SampleGroups) -> np.ndarray:
        """What ``scope`` weighs each sample of ``st`` by: its period, or (offcpu-time)
        its nanoseconds off the CPU (0: not a charged switch-out)."""
        if scope.attr == OFFCPU_ATTR:
            return self._offcpu_weights(self.model.groups or st)[1]
        return st.period

    def _offcpu_weights(self, st: SampleGroups) -> tuple[np.ndarray, np.ndarray]:
        """Which store samples are charged switch-outs, and their off-CPU ns (made once)."""
        with self._lock:
            got = self._offcpu
        if got is None or got[0] is not st:
            oc = off_cpu(self.model.rec)
            got = (st, *weights(oc, st.rows))
            with self._lock:
                self._offcpu = got
                self.offcpu_notes = list(oc.notes)
        return got[1], got[2]

    def default_attr(self) -> int | None:
        """perf shows each event apart: the first event with samples."""
        attrs = self.attrs()
        return attrs[0] if attrs else None

    def codes(self) -> GroupCodes | None:
        """The store's key codes and ranks (made once per store)."""
        st = self.groups()[0]
        return None if st is None else of_store(self._codes, st, GroupCodes)

    def prepare(self, keys: tuple[str, ...] = DEFAULT_SORT) -> None:
        """What the first open of the views needs (codes, the table by ``keys`` of the
        first event under the current scope, the flame graph's tree, the labels): from the
        worker, right after the names."""
        if self.model.groups is None:
            return
        self.codes()
        scope = Scope(self.model.flt.within(self.model.time_range), self.default_attr())
        self.table(scope, keys, True)
        heap.trim()  # each step's temporaries, before the next one's (peak RssAnon)
        self.labels()
        sel = self.selection(scope)
        if sel is not None:
            self.flame(sel).tree.children(-1)
        self.flame_labels()
        heap.trim()

    # -- weighing ---------------------------------------------------------------------------
    def entries_filtered(self, scope: Scope) -> bool:
        """Whether ``scope`` keeps some of perf's table entries (a thread, a dso, a symbol,
        a module's section): then absolute and relative shares differ."""
        return scope.section is not None or scope.flt.entries_filtered

    def selection(self, scope: Scope, source: bool = False) -> Selection | None:
        """The groups weighed under ``scope`` and the transforms (None before the
        names); their shares of every sample the scope's time, CPUs and event keep, as
        perf's "absolute" percentages, unless :attr:`relative_shares`.  ``source``: of
        the groups split by source line."""
        st, keep = self.groups(source)
        if st is None:
            return None
        absolute = not self.relative_shares and self.entries_filtered(scope)
        key = (scope, self.transforms.stack, absolute, source)
        got = self._selections.get(key)
        if got is not None and got.store is st:
            return got
        mask = self._mask(st, scope.flt)
        if scope.attr == OFFCPU_ATTR:
            charged, ns = self._offcpu_weights(self.model.groups or st)
            sel = select(st, charged if mask is None else mask & charged,
                         self.offcpu_source(), ns)
        else:
            sel = select(st, mask, scope.attr)
        if scope.section is not None:
            sel = sel.restrict(self.section_groups(st, scope.section))
        if keep is not None:
            sel = sel.restrict(keep)
        if absolute:
            whole = self.selection(Scope(scope.flt.of_every_entry(), scope.attr))
            sel = replace(sel, whole_period=whole.total_period if whole else None)
        self._selections.put(key, sel)
        return sel

    def _mask(self, st: SampleGroups, flt: Filter) -> np.ndarray | None:
        if flt.empty:
            return None
        m = self.model
        ctx = m.context
        parts = [flt.mask(m.rec, st.rows[lo:lo + MASK_BLOCK], ctx)
                 for lo in range(0, len(st.rows), MASK_BLOCK)]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=bool)

    @staticmethod
    def section_locations(st: SampleGroups, section: tuple[str, str | None]) -> np.ndarray:
        """Bool per location: in module ``section[0]`` (and its section ``section[1]``)."""
        locs = st.locs
        module, name = section
        in_module = np.array([d.module == module for d in locs.dsos], dtype=bool)
        ok = in_module[locs.dso_of()] if len(locs) else np.zeros(0, dtype=bool)
        if name is not None and len(locs):
            ok &= np.array([s == name for s in locs.section], dtype=bool)
        return ok

    def section_symbols(self, report: SectionReport, entry: int) -> RowSymbols | None:
        """The section drill-down's symbols: the samples section ``entry`` of ``report``
        counts (under its filter), by ``sym`` from the names, every event, no transform
        (None before the names)."""
        st = self.model.groups
        if st is None:
            return None
        key = (id(report), entry)
        got = self._row_symbols.get(key)
        if got is not None and got[0] is st and got[1] is report:
            return got[2]
        syms = row_symbols(st, report.counts.rows_of(entry),
                           of_store(self._codes, st, GroupCodes))
        self._row_symbols.put(key, (st, report, syms))
        return syms

    def section_groups(self, st: SampleGroups, section: tuple[str, str | None]
                       ) -> np.ndarray:
        """Groups whose own location is in the module (section)."""
        out: np.ndarray = self.section_locations(st, section)[st.leaf]
        return out

    # -- tables and trees ---------------------------------------------------------------------
    def table(self, scope: Scope, keys: tuple[str, ...], children: bool
              ) -> GroupProfile | None:
        """The hotspot table of ``scope`` by ``keys`` (cached); ``children`` only counts
        when the recording has callchains.  By srcline or srcfile: of the groups split by
        source line."""
        sel = self.selection(scope, bool(SOURCE_KEYS & set(keys)))
        st = sel.store if sel is not None else None
        if st is None or sel is None:
            return None
        children = children and st.callchains
        key = (scope, keys, children, self.transforms.stack, sel.whole_period)
        got = self._tables.get(key)
        if got is not None and got.selection.store is st:
            return got
        gp = group_profile(sel, keys, children, of_store(self._codes, st, GroupCodes))
        self._tables.put(key, gp)
        return gp

    @staticmethod
    def focus(gp: GroupProfile, row: int) -> tuple[GroupTree, GroupTree]:
        """(callers, callees) of a row of ``gp``."""
        return focus_trees(gp, row)

    @staticmethod
    def whole_of(sel: Selection) -> tuple[GroupTree, GroupTree]:
        """(top-down, bottom-up) call trees of a selection."""
        return top_down(sel), bottom_up(sel)

    def flame(self, sel: Selection) -> GroupTree:
        """The flame graph's tree of a selection: top-down, thread names at the root,
        and every address no symbol covers named by its dso alone (one frame per dso, as
        flamegraph's stackcollapse-perf and ``perftui report --folded`` name them)."""
        st = sel.store
        fl = of_store(self._flames, st, Flame.of)
        tree = fl.trie.weigh(fl.end, sel.period, sel.count)
        return GroupTree(tree, np.arange(st.groups, dtype=np.int64), fl.end, st.groups)

    def comm_members(self, sel: Selection) -> dict[int, CommMembers]:
        """What each thread name (the flame graph's first level) merges under ``sel``: its
        processes and threads (in a worker)."""
        pid = self.model.rec.columns["pid"]
        pids = of_store(self._pids, sel.store, lambda st: group_pids(st, pid))
        return comm_members(sel, pids)

    def flame_locations(self, st: SampleGroups, frame: int) -> frozenset[int]:
        """The locations a frame of ``st``'s flame graph stands for (an address no symbol
        covers: every one of its dso's; a thread: itself)."""
        if frame < 0:
            return frozenset({frame})
        canon = of_store(self._flames, st, Flame.of).canon
        return frozenset(np.flatnonzero(canon == frame).tolist())

    # -- names -----------------------------------------------------------------------------------
    def names(self, store: SampleGroups | None = None) -> Names | None:
        """The names of the locations (the collapsed frames' too, under transforms; of
        ``store``'s when given: a table's own)."""
        sl = self.model.names
        if sl is None:
            return None
        st = self.groups()[0] if store is None else store
        locs = st.locs if st is not None else sl.locs
        return Names(locs, lambda c: sl.comm_names[c], sl.thread_comm)

    def labels(self, store: SampleGroups | None = None) -> list[str]:
        """Every location's label, lower case (the name filter reads them; of ``store``'s
        locations when given)."""
        st = self.groups()[0] if store is None else store
        if st is None:
            return []
        with self._lock:
            got = self._labels
        locs = st.locs
        # (a live pipe's table grows: the labels of its new locations are added)
        out = got[1] if got is not None and got[0] is locs else []
        if len(out) == len(locs):
            return out
        out = out + [locs.label(i).lower() for i in range(len(out), len(locs))]
        with self._lock:
            self._labels = (locs, out)
        return out

    def flame_labels(self) -> list[str]:
        """Every location's flame-graph name, lower case (``/`` paints by them)."""
        st = self.groups()[0]
        if st is None:
            return []
        with self._lock:
            got = self._flame_labels
        locs = st.locs
        out = got[1] if got is not None and got[0] is locs else []
        if len(out) == len(locs):
            return out
        out = out + [folded_name(locs, i).lower() for i in range(len(out), len(locs))]
        with self._lock:
            self._flame_labels = (locs, out)
        return out

    def matching_rows(self, gp: GroupProfile, text: str) -> np.ndarray:
        """Rows of ``gp`` whose printed keys contain ``text`` (case-insensitive): the
        symbol when the table has one, else any key (perf's ``/`` on symbols)."""
        want = text.strip().lower()
        if not want:
            return np.arange(len(gp), dtype=np.int64)
        st = gp.selection.store
        names = self.names(st)
        if names is None:
            return np.zeros(0, np.int64)
        hit = np.zeros(len(gp), dtype=bool)
        keys = ("sym",) if "sym" in gp.keys else gp.keys
        for k in keys:
            i = gp.keys.index(k)
            if k == "sym":
                ok = np.array([want in s for s in self.labels(st)], dtype=bool)
                hit |= ok[gp.loc] if len(ok) else False
                continue
            codes, first = np.unique(gp.key[:, i], return_index=True)
            good = [int(c) for c, f in zip(codes.tolist(), first.tolist(), strict=True)
                    if want in key_text(gp.shell, names, gp.row(int(f)), i).lower()]
            hit |= np.isin(gp.key[:, i], good)
        return np.nonzero(hit)[0]


def of_store(cache: LRU[int, tuple[SampleGroups, T]], st: SampleGroups,
             make: Callable[[SampleGroups], T]) -> T:
    """What ``make`` makes of ``st``, kept in ``cache`` (by the store's id, checked to be
    the same store: an id is reused once its store is freed)."""
    got = cache.get(id(st))
    if got is not None and got[0] is st:
        return got[1]
    value = make(st)
    cache.put(id(st), (st, value))
    return value


@dataclass(frozen=True)
class Flame:
    """A store's flame-graph paths: the trie, the node each group's path ends at, and each
    location's stand-in (:func:`unknown_by_dso`)."""

    trie: Trie
    end: np.ndarray
    canon: np.ndarray

    @classmethod
    def of(cls, st: SampleGroups) -> Flame:
        canon = unknown_by_dso(st)
        return cls(*flame_paths(st, canon), canon)


def unknown_by_dso(st: SampleGroups) -> np.ndarray:
    """Each location's stand-in in the flame graph: itself when a symbol names it, else
    the first unresolved location of its dso."""
    locs = st.locs
    n = len(locs)
    out = np.arange(n, dtype=np.int64)
    first: dict[int, int] = {}
    for i in range(n):
        if locs.name[i] is None:
            out[i] = first.setdefault(locs.dso[i], i)
    return out


def flame_paths(st: SampleGroups, canon: np.ndarray | None = None
                ) -> tuple[Trie, np.ndarray]:
    """The trie of every group's stack under its thread, unresolved addresses merged by
    dso (``canon``, :func:`unknown_by_dso`'s), and the node each group's path ends at."""
    canon = unknown_by_dso(st) if canon is None else canon
    lengths = np.diff(st.path_start) + 1
    starts = np.zeros(st.groups + 1, np.int64)
    np.cumsum(lengths, out=starts[1:])
    frames = np.empty(int(starts[-1]), np.int64)
    head = starts[:-1]
    frames[head] = -1 - st.comm
    body = np.ones(len(frames), dtype=bool)
    body[head] = False
    frames[body] = canon[st.path_loc] if len(st.path_loc) else st.path_loc
    b = TrieBuilder()
    end = b.add(starts, frames)
    return b.trie(), end
