"""The profile views' data: every sample grouped once, then tables and trees per scope.

:class:`ProfileData` belongs to the app.  Once the model has its resolver (after
indexing), a worker groups every sample (:mod:`perftui.analysis.samplegroups`) in two
passes: first by its own location (from the model's per-sample leaf array: the hotspot
table's self column at once), then with its callchain (children, call trees, the flame
graph).  A scope (filter, timeline range, event, section) weighs the groups
(:meth:`ProfileData.selection`, cached); a table by sort keys is numpy over the groups
(:meth:`ProfileData.table`, cached): switching keys never resolves again.  No widgets here.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..analysis.filters import Filter
from ..analysis.samplegroups import (
    GroupCodes,
    GroupProfile,
    GroupsBuilder,
    GroupTree,
    SampleGroups,
    Selection,
    bottom_up,
    focus_trees,
    group_profile,
    select,
    top_down,
)
from ..perfdata.constants import Sample
from ..symbols.resolved import ResolvedSamples
from ..symbols.resolver import Resolver
from .model import Model

BLOCK = 1 << 16  # samples resolved at a time
MASK_BLOCK = 1 << 20  # samples masked at a time


@dataclass(frozen=True)
class Scope:
    """Which samples a view counts: the filter (with the timeline range in it), one
    event (attr index, None: all), and optionally one module section's own samples."""

    flt: Filter
    attr: int | None = None
    section: tuple[str, str] | None = None  # (module, section)


class ProfileData:
    """The grouped samples of the app's recording and what is derived from them."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.store: SampleGroups | None = None
        self.codes: GroupCodes | None = None
        self.chains = False  # the store has the callchains (children, trees)
        self.wants_chains = False  # the recording has callchains
        self.state = "waiting for names"  # what the views say while there is no store
        self.progress = ""  # "callchains 40%"
        self.error: str | None = None
        self.started = False
        self.version = 0  # grows with each new store
        self.timings: dict[str, float] = {}
        self._lock = threading.Lock()
        self._selections: OrderedDict[tuple[int, Scope], Selection] = OrderedDict()
        self._tables: OrderedDict[tuple[object, ...], GroupProfile] = OrderedDict()

    # -- building (in a worker) ------------------------------------------------------------
    def build(self, changed: Callable[[], None]) -> None:
        """Group every sample: own locations first, then callchains (call from a worker;
        ``changed`` is called, from the worker, after each step)."""
        m = self.model
        res, rows, leaf = m.resolver, m.sample_rows, m.leaf_loc
        if res is None or rows is None or leaf is None:
            self.state = "no symbols: indexing did not finish"
            changed()
            return
        rec = m.rec
        self.wants_chains = any(a.sample_type & Sample.CALLCHAIN for a in rec.attrs)
        t0 = time.monotonic()
        self.state = "grouping samples"
        changed()
        b = GroupsBuilder(res.locs, res.comm_names, callchains=False)
        for lo in range(0, len(rows), BLOCK):
            b.add(self._leaf_block(res, rows[lo:lo + BLOCK], leaf[lo:lo + BLOCK]))
        self._publish(b.finish(), chains=False)
        self.timings["self"] = time.monotonic() - t0
        changed()
        if not self.wants_chains:
            self.state = ""
            changed()
            return
        t1 = time.monotonic()
        b = GroupsBuilder(res.locs, res.comm_names, callchains=True)
        done = 0
        for s in res.blocks(rows, BLOCK, True):
            b.add(s)
            done += len(s)
            self.progress = f"callchains {100 * done // max(1, len(rows))}%"
            changed()
        self._publish(b.finish(), chains=True)
        self.progress = ""
        self.timings["chains"] = time.monotonic() - t1
        changed()

    def _leaf_block(self, res: Resolver, rows: np.ndarray, leaf: np.ndarray
                    ) -> ResolvedSamples:
        """Samples named by their own location only (the model's leaf array)."""
        rec = self.model.rec
        c = rec.columns
        n = len(rows)
        comm, _names = res.model.sample_comms(rows)
        period = rec.sample_values(rows, "period")
        attrs = c["attr"][rows]
        has = np.zeros(n, dtype=bool)
        for a in np.unique(attrs).tolist():
            if 0 <= a < len(rec.attrs) and \
                    "period" in rec.decoder.sample_layouts[a].offsets:
                has[attrs == a] = True
        empty = np.zeros(0, np.uint64)
        return ResolvedSamples(
            rows=rows, period=np.where(has, period, np.uint64(1)),
            comm=comm.astype(np.int32), pid=c["pid"][rows].astype(np.int32),
            tid=c["tid"][rows].astype(np.int32), cpu=c["cpu"][rows].astype(np.int32),
            attr=attrs.astype(np.int16), time=c["time"][rows],
            leaf=np.asarray(leaf, dtype=np.int32), leaf_off=np.zeros(n, np.uint64),
            chain_starts=np.zeros(n + 1, np.int64), chain_locs=np.zeros(0, np.int32),
            chain_ips=empty, chain_offs=empty)

    def _publish(self, store: SampleGroups, chains: bool) -> None:
        codes = GroupCodes(store)
        with self._lock:
            self.store, self.codes, self.chains = store, codes, chains
            self.version += 1
            self._selections.clear()
            self._tables.clear()
            self.state = "" if chains or not self.wants_chains else self.state

    # -- reading (from the UI thread or a worker) ----------------------------------------------
    def attrs(self) -> list[int]:
        """The events with samples, in attr order."""
        st = self.store
        return st.attrs if st is not None else []

    def event_name(self, attr: int | None) -> str:
        rec = self.model.rec
        if attr is None or not 0 <= attr < len(rec.attrs):
            return "all events"
        return rec.attrs[attr].display_name

    def selection(self, scope: Scope) -> Selection | None:
        """The groups weighed under ``scope`` (None before the first store)."""
        with self._lock:
            st, version = self.store, self.version
            got = self._selections.get((version, scope))
        if st is None:
            return None
        if got is not None:
            return got
        mask = self._mask(st, scope.flt)
        sel = select(st, mask, scope.attr)
        if scope.section is not None:
            sel = sel.restrict(self._section_groups(st, scope.section))
        with self._lock:
            self._selections[(version, scope)] = sel
            while len(self._selections) > 8:
                self._selections.popitem(last=False)
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
    def _section_groups(st: SampleGroups, section: tuple[str, str]) -> np.ndarray:
        """Groups whose own location is in the section ``(module, section)``."""
        locs = st.locs
        module, name = section
        ok = np.array([locs.dsos[locs.dso[i]].module == module and locs.section[i] == name
                       for i in range(len(locs))], dtype=bool)
        out: np.ndarray = ok[st.leaf]
        return out

    def table(self, scope: Scope, keys: tuple[str, ...], children: bool
              ) -> GroupProfile | None:
        """The hotspot table of ``scope`` by ``keys`` (cached)."""
        sel = self.selection(scope)
        if sel is None:
            return None
        with self._lock:
            key = (self.version, scope, keys, children)
            got = self._tables.get(key)
            codes = self.codes
        if got is not None:
            return got
        gp = group_profile(sel, keys, children and self.chains, codes)
        with self._lock:
            self._tables[key] = gp
            while len(self._tables) > 16:
                self._tables.popitem(last=False)
        return gp

    def trees(self, gp: GroupProfile, row: int | None) -> tuple[GroupTree, GroupTree]:
        """(callers, callees) of a row of ``gp``; for ``row`` None, (bottom-up,
        top-down) of the whole scope."""
        if row is None:
            return bottom_up(gp.selection), top_down(gp.selection)
        return focus_trees(gp, row)

    def flame(self, scope: Scope) -> GroupTree | None:
        """The top-down tree of ``scope`` (the flame graph)."""
        sel = self.selection(scope)
        return top_down(sel) if sel is not None else None
