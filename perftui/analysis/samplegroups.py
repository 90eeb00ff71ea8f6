"""Samples grouped by everything a profile tells apart, resolved once and re-counted often.

The browser's profile views follow the filter, the timeline range and the event, and switch
sort keys at a key press: resolving names again each time would take seconds on a large
recording.  So every sample is resolved once (:class:`GroupsBuilder`, block by block) into
*groups*: samples with the same thread, CPU, event, own location and stack are one group,
and each sample keeps only its group id and period.  A filter or range is then a
:class:`Selection` (each group's period and sample count under it: one ``bincount``), and
the hotspot table by any sort keys (:func:`group_profile`), the call trees
(:mod:`.grouptrees`) and the samples behind any row or tree node are numpy over the groups
and their stacks.

The hotspot table follows :mod:`.profile`'s rules exactly (same key codes, same row order;
self from the sample's own location, children once per distinct row along the stack).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

import numpy as np

from ..symbols.naming.locations import Locations
from ..symbols.naming.samplelocs import SampleLocs
from .keycodes import KeyCodes
from .profile import Profile, ProfileRow, sum_by
from .sortkeys import SORT_KEYS
from .stacktree import Interner, PathInterner, Trie, TrieBuilder, spans
from .tablerows import Stacks, Weighed, table_rows

SELECT_BLOCK = 1 << 20  # samples weighed at a time
ROW_BLOCK = 1 << 18  # samples listed at a time by Selection.row_blocks


@dataclass
class SampleGroups:
    """Every resolved sample, as a group id, and the groups.

    Per sample (parallel): ``rows`` (SAMPLE index rows), ``group``, ``period``.  Per
    group: ``comm`` (id in ``comm_names``), ``tid``, ``cpu``, ``attr``, ``leaf`` (the
    sample's own location) and ``node``, where its stack ends in ``trie`` (top down, the
    thread name at the root), ``rank`` (the lowest processing rank of its samples: where
    perf meets the group first, :attr:`~perftui.symbols.naming.samplelocs.SampleLocs.rank`).
    ``path_loc[path_start[g]:path_start[g + 1]]`` is the stack of group ``g`` without the
    thread, outermost caller first (the own location alone for a sample without a
    callchain, as perf)."""

    rows: np.ndarray
    group: np.ndarray
    period: np.ndarray
    comm: np.ndarray
    tid: np.ndarray
    cpu: np.ndarray
    attr: np.ndarray
    leaf: np.ndarray
    node: np.ndarray
    trie: Trie
    locs: Locations
    comm_names: Sequence[str]
    callchains: bool
    rank: np.ndarray
    path_start: np.ndarray = field(init=False)
    path_loc: np.ndarray = field(init=False)
    path_group: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        t = self.trie
        lengths = t.depth[self.node] if len(self.node) else np.zeros(0, np.int64)
        self.path_start = np.zeros(len(self.node) + 1, np.int64)
        np.cumsum(lengths, out=self.path_start[1:])
        self.path_loc = np.zeros(int(self.path_start[-1]), np.int64)
        cur = self.node.copy()
        while True:
            d = t.depth[cur] if len(cur) else cur
            live = np.nonzero(d > 0)[0]
            if not len(live):
                break
            self.path_loc[self.path_start[live] + d[live] - 1] = t.frame[cur[live]]
            cur[live] = t.parent[cur[live]]
        self.path_group = np.repeat(np.arange(len(self.node), dtype=np.int64), lengths)

    def __len__(self) -> int:
        return len(self.rows)

    @cached_property
    def stacks(self) -> Stacks:
        """Each group's stack as the names keep one (stack ``g`` is group ``g``'s): its
        own location, then its path innermost first."""
        n = len(self.node)
        starts = self.path_start + np.arange(n + 1, dtype=np.int64)
        locs = np.empty(int(starts[-1]), np.int64)
        locs[starts[:-1]] = self.leaf
        g = self.path_group
        at = np.arange(len(g), dtype=np.int64)
        locs[starts[g] + self.path_start[g + 1] - at] = self.path_loc
        return Stacks(starts, locs)

    @property
    def groups(self) -> int:
        return len(self.node)

    @property
    def attrs(self) -> list[int]:
        """The events (attr indices) that have samples."""
        return [int(a) for a in np.unique(self.attr)]


class KeyIds(Protocol):
    """Dense ids for int64 keys, in order of first use (:class:`~.stacktree.Interner`)."""

    def __len__(self) -> int: ...

    def ids(self, keys: np.ndarray) -> np.ndarray: ...

    def keys(self) -> np.ndarray: ...


class GroupsBuilder:
    """Turns blocks of named samples into the groups of :class:`SampleGroups`: the caller
    stores what :meth:`add_named` returns (each sample's group id) and hands it with the
    per-sample arrays and :meth:`tables` to :func:`assemble` (the browser keeps them in
    mapped files)."""

    def __init__(self, locs: Locations, comm_names: Sequence[str], callchains: bool,
                 interner: Callable[[], KeyIds] = Interner) -> None:
        """``interner``: makes the per-key id tables (numpy's :class:`~.stacktree.Interner`,
        or :class:`~.hashids.HashInterner` where numba is loaded: the same ids)."""
        self.locs = locs
        self.comm_names = comm_names
        self.callchains = callchains
        self._paths = PathInterner()
        self._slots = interner()  # (tid, cpu, attr)
        self._pairs = interner()  # (slot, leaf)
        self._groups = interner()  # (path, pair)
        self._named = interner()  # (thread name, stack) of named samples (add_named)
        self._named_path = np.zeros(0, np.int64)  # the path id of each
        self._rank = np.zeros(0, np.int64)  # per group: the lowest rank of its samples
        self.samples = 0

    def add_named(self, sl: SampleLocs, lo: int, hi: int, tid: np.ndarray, cpu: np.ndarray,
                  attr: np.ndarray) -> np.ndarray:
        """Add samples ``lo:hi`` of named samples (cached or just resolved: no resolver)
        with their index ``tid``, ``cpu`` and ``attr``; the group id of each (int32).
        The same groups, with the same ids, as grouping the resolver's blocks of the same
        samples (tests/reference/groups.py): the interners see the same keys block by
        block."""
        n = hi - lo
        if n <= 0:
            return np.zeros(0, np.int32)
        comm = sl.comm[lo:hi].astype(np.int64)
        leaf = sl.leaf[lo:hi].astype(np.int64)
        if sl.stack is not None:
            body = sl.stack[lo:hi].astype(np.int64)
        else:  # no callchains: the path is the own location alone
            body = (np.int64(1) << 32) | leaf
        before = len(self._named)
        named = self._named.ids((comm << 33) | body)
        if len(self._named) > before:
            self._named_path = np.concatenate(
                [self._named_path, self._named_paths(sl, self._named.keys()[before:])])
        path = self._named_path[named]
        slot = self._slots.ids(((tid.astype(np.int32).astype(np.int64) + 1) << 32)
                               | (((cpu.astype(np.int32).astype(np.int64) + 1) & 0xFFFF) << 16)
                               | ((attr.astype(np.int16).astype(np.int64) + 1) & 0xFFFF))
        pair = self._pairs.ids((slot << 32) | leaf)
        g = self._groups.ids((path << 32) | pair).astype(np.int32)
        self.note_ranks(g, sl.rank[lo:hi] if sl.rank is not None
                        else np.arange(lo, hi, dtype=np.int64))
        self.samples += n
        return g

    def note_ranks(self, g: np.ndarray, rank: np.ndarray) -> None:
        """Samples of groups ``g`` have processing ranks ``rank``: each group keeps the
        lowest (a group met first here gets its first)."""
        m = len(self._groups)
        if m > len(self._rank):
            grown = np.full(max(m, 2 * len(self._rank)), np.iinfo(np.int64).max, np.int64)
            grown[:len(self._rank)] = self._rank
            self._rank = grown
        np.minimum.at(self._rank, g, rank.astype(np.int64))

    def _named_paths(self, sl: SampleLocs, keys: np.ndarray) -> np.ndarray:
        """Path ids of (thread name, stack) keys: the thread, then the stack outermost
        first (the callchain where the sample has one, else its own location; as
        :func:`~.profile.stacks` has them)."""
        comm = keys >> 33
        body = keys & ((np.int64(1) << 33) - 1)
        lone = (body >> 32) == 1
        sid = np.where(lone, 0, body)
        first = sl.stack_starts[sid]
        size = sl.stack_starts[sid + 1] - first
        # the stack is the own location, then the callchain: the callchain alone if any
        cfirst = np.where(size > 1, first + 1, first)
        clen = np.where(lone, 1, np.where(size > 1, size - 1, 1))
        pstart = np.zeros(len(keys) + 1, np.int64)
        np.cumsum(clen + 1, out=pstart[1:])
        frames = np.empty(int(pstart[-1]), np.int64)
        frames[pstart[:-1]] = -1 - comm
        j = spans(np.ones(len(keys), np.int64), clen + 1)  # 1..clen of each path
        k = np.repeat(np.arange(len(keys), dtype=np.int64), clen)
        src = cfirst[k] + clen[k] - j
        vals = np.where(lone[k], body[k] & 0xFFFFFFFF,
                        sl.stack_locs[np.where(lone[k], 0, src)] if len(sl.stack_locs)
                        else 0)
        frames[pstart[k] + j] = vals
        out: np.ndarray = self._paths.ids(pstart, frames)
        return out

    def tables(self) -> dict[str, np.ndarray]:
        """What the groups are made of besides the per-sample arrays (what
        :func:`assemble` takes; small: per distinct path, group, pair and slot)."""
        starts, frames = self._paths.paths()
        return {"path_starts": starts, "path_frames": frames,
                "group_keys": self._groups.keys(), "pair_keys": self._pairs.keys(),
                "slot_keys": self._slots.keys(),
                "group_rank": self._rank[:len(self._groups)].copy()}


def assemble(tables: dict[str, np.ndarray], rows: np.ndarray, group: np.ndarray,
             period: np.ndarray, locs: Locations, comm_names: Sequence[str],
             callchains: bool) -> SampleGroups:
    """:class:`SampleGroups` from a builder's :meth:`~GroupsBuilder.tables` and the
    per-sample arrays."""
    tb = TrieBuilder()
    end = tb.add(tables["path_starts"], tables["path_frames"])
    trie = tb.trie()
    gk = np.asarray(tables["group_keys"], dtype=np.int64)
    node = end[gk >> 32]
    pk = np.asarray(tables["pair_keys"], dtype=np.int64)[gk & 0xFFFFFFFF]
    leaf = pk & 0xFFFFFFFF
    sk = np.asarray(tables["slot_keys"], dtype=np.int64)[pk >> 32]
    tid = (sk >> 32) - 1
    cpu = ((sk >> 16) & 0xFFFF) - 1
    attr = (sk & 0xFFFF) - 1
    comm = -1 - trie.frame[trie.lift(node, 0)] if len(node) else node
    return SampleGroups(rows=rows, group=group, period=period, comm=comm, tid=tid, cpu=cpu,
                        attr=attr, leaf=leaf, node=node, trie=trie, locs=locs,
                        comm_names=comm_names, callchains=callchains,
                        rank=np.asarray(tables["group_rank"], dtype=np.int64))


@dataclass
class Selection:
    """What each group weighs under a filter, a range and an event: ``period`` and
    ``count`` per group; ``samples``: which of the store's samples are in (None: all);
    ``whole_period``: what shares are of, when not of the selection itself (perf's
    "absolute" percentages under a filter of its entries: every sample's period)."""

    store: SampleGroups
    samples: np.ndarray | None
    period: np.ndarray
    count: np.ndarray
    whole_period: int | None = None

    @property
    def total_period(self) -> int:
        return int(self.period.sum())

    @property
    def share_total(self) -> int:
        """The period a share is of: :attr:`whole_period`, else the selection's."""
        return self.total_period if self.whole_period is None else self.whole_period

    @property
    def total_samples(self) -> int:
        return int(self.count.sum())

    def restrict(self, keep: np.ndarray) -> Selection:
        """Only the groups where ``keep`` (bool per group) holds."""
        return Selection(self.store, self.samples, np.where(keep, self.period, 0),
                         np.where(keep, self.count, 0), self.whole_period)

    def rows_of(self, groups: np.ndarray) -> np.ndarray:
        """The SAMPLE index rows of the selected samples in ``groups`` (bool per group)."""
        st = self.store
        blocks = list(self.row_blocks(groups, block=max(1, len(st.group))))  # (one block)
        out: np.ndarray = blocks[0] if blocks else st.rows[:0]
        return out

    def row_blocks(self, groups: np.ndarray, block: int = ROW_BLOCK) -> Iterator[np.ndarray]:
        """:meth:`rows_of`, ``block`` samples at a time (ascending): the memory of one
        block, whatever the count (every sample at 50 M records would be ~400 MB)."""
        st = self.store
        want = np.asarray(groups, dtype=bool) & (self.count > 0)
        for lo in range(0, len(st.group), block):
            hit = want[st.group[lo:lo + block]]
            if self.samples is not None:
                hit &= self.samples[lo:lo + block]
            yield st.rows[lo:lo + block][hit]


def select(store: SampleGroups, samples: np.ndarray | None = None,
           attr: int | None = None, weights: np.ndarray | None = None) -> Selection:
    """Weigh the groups: the samples where ``samples`` (bool per store sample) holds, of
    event ``attr`` (None: every event), each by its period (or by ``weights``, one per
    store sample: off-CPU's nanoseconds)."""
    m = store.groups
    period = np.zeros(m, np.int64)
    count = np.zeros(m, np.int64)
    weigh = store.period if weights is None else weights
    for lo in range(0, len(store.group), SELECT_BLOCK):  # (temporaries of one block)
        g = store.group[lo:lo + SELECT_BLOCK]
        p = weigh[lo:lo + SELECT_BLOCK]
        if samples is not None:
            keep = samples[lo:lo + SELECT_BLOCK]
            g, p = g[keep], p[keep]
        period += sum_by(g, p, m)
        count += np.bincount(g, minlength=m)
    if attr is not None:
        other = store.attr != attr
        period[other] = 0
        count[other] = 0
    return Selection(store, samples, period, count)


class GroupCodes:
    """Key codes and sort ranks of a store's locations, threads and names, made once:
    every hotspot table of the store reads them (:class:`~.keycodes.KeyCodes`)."""

    def __init__(self, st: SampleGroups) -> None:
        self.master = KeyCodes(st.locs, (), st.comm_names)
        self.master.freeze()  # the store's locations are all there

    def codes(self, keys: tuple[str, ...]) -> KeyCodes:
        """A :class:`KeyCodes` for ``keys`` sharing the master's arrays."""
        return self.master.with_keys(keys)

    def ranks(self, key: str, code: np.ndarray, loc: np.ndarray) -> np.ndarray:
        """Sort ranks of rows by ``key`` (``code``: the key's codes, ``loc``: each row's
        location)."""
        return self.master.ranks(key, code, loc)


@dataclass
class GroupProfile:
    """A hotspot table over a :class:`Selection`, rows in perf's order as arrays:
    ``key`` (codes, one column per sort key), ``loc`` (a location of the row),
    ``self_period``, ``children_period``, ``samples``; with the way back to the groups:
    ``row_of_group`` (each group's own row, -1 when it weighs nothing) and ``path_row``
    (the row of each stack entry of :attr:`SampleGroups.path_loc`, -1 likewise)."""

    keys: tuple[str, ...]
    children: bool
    selection: Selection
    codes: KeyCodes
    key: np.ndarray
    loc: np.ndarray
    self_period: np.ndarray
    children_period: np.ndarray
    samples: np.ndarray
    children_samples: np.ndarray
    row_of_group: np.ndarray
    path_row: np.ndarray

    def __len__(self) -> int:
        return len(self.loc)

    @property
    def total_period(self) -> int:
        return self.selection.total_period

    @property
    def total_samples(self) -> int:
        return self.selection.total_samples

    @property
    def share_total(self) -> int:
        return self.selection.share_total

    def row(self, i: int) -> ProfileRow:
        """Row ``i`` as the report engine's row."""
        return ProfileRow(tuple(int(x) for x in self.key[i]), int(self.loc[i]),
                          int(self.self_period[i]), int(self.children_period[i]),
                          int(self.samples[i]), int(self.children_samples[i]))

    @property
    def shell(self) -> Profile:
        """The report engine's :class:`Profile` without its rows (what the words of a
        row need: keys, codes, totals)."""
        return Profile(self.keys, self.children, self.total_period, self.total_samples, [],
                       self.codes)

    @property
    def profile(self) -> Profile:
        """The table as the report engine's :class:`Profile` (every row made)."""
        return Profile(self.keys, self.children, self.total_period, self.total_samples,
                       [self.row(i) for i in range(len(self))], self.codes)

    def groups_of_row(self, r: int, through: bool = True) -> np.ndarray:
        """Bool per group: its own location is in row ``r`` (``through``: or its stack
        passes through the row)."""
        st = self.selection.store
        out: np.ndarray = self.row_of_group == r
        if through:
            out[st.path_group[self.path_row == r]] = True
        return out


def group_profile(sel: Selection, keys: tuple[str, ...], children: bool,
                  gc: GroupCodes | None = None) -> GroupProfile:
    """The hotspot table of ``sel`` by ``keys`` (``children``: with the cumulative
    column), counted as ``perftui report`` counts (:func:`.tablerows.table_rows`, each
    weighed group standing for its samples), rows in perf's order (``gc``: the store's
    codes, made here if not given).  Rows that weigh nothing are left out."""
    st = sel.store
    gc = gc if gc is not None else GroupCodes(st)
    codes = gc.codes(keys)
    live = np.nonzero(sel.count > 0)[0]
    columns = [getattr(st, str(SORT_KEYS[k].column)) for k in keys
               if not SORT_KEYS[k].per_location]
    w = Weighed([c[live].astype(np.int64) for c in columns], st.leaf[live], sel.period[live],
                sel.count[live], st.rank[live], live if children else None)
    t = table_rows(codes, keys, children, w, st.stacks if children else None)
    shown = np.nonzero((t.self_p > 0) | (t.child_p > 0) | (t.count > 0))[0]
    pos = np.full(len(t) + 1, -1, np.int64)  # (the last: not a row)
    pos[shown] = np.arange(len(shown))
    row_of_group = np.full(st.groups, -1, np.int64)
    row_of_group[live] = pos[t.find(w.cols, w.own)]
    # the stack entries of the live groups
    ent = spans(st.path_start[live], st.path_start[live + 1])
    eg = st.path_group[ent]
    path_row = np.full(len(st.path_loc), -1, np.int64)
    path_row[ent] = pos[t.find([c[eg].astype(np.int64) for c in columns], st.path_loc[ent])]
    return GroupProfile(keys, children, sel, codes, t.key[shown], t.loc[shown],
                        t.self_p[shown], t.child_p[shown], t.count[shown], t.child_n[shown],
                        row_of_group, path_row)
