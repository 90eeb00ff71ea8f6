"""Memory maps over time: perf 6.1's per-process maps and kernel maps, as numpy tables.

Every map perf ever holds becomes one row of :class:`MapTable` with the span of processing
steps (``born`` <= seq < ``died``) during which it is in its maps object.  Maps objects are
perf's ``struct maps``: object 0 holds the kernel maps (``machine->kmaps``), every other one a
process's maps (threads of a process share one).  :class:`MapsBuilder` applies perf's rules
while the records are replayed in processing order (tools/perf/util/map.c, maps.c,
machine.c, perf 6.1):

* a user MMAP replaces the overlapping parts of older maps (``maps__fixup_overlappings``:
  the part of an old map before the new one keeps its pgoff, the part after it gets
  ``pgoff + (new.end - old.start)``);
* FORK of a new process copies the parent's maps at that moment (``maps__clone``: a plain
  insert, no overlap fix-up); a new thread shares its process's maps object;
* kernel maps are inserted without any fix-up (``maps__insert``): the kernel MMAP replaces
  the previous kernel map, a module MMAP adds a map, KSYMBOL adds a map only where no kernel
  map covers the address yet, and an unregistering KSYMBOL removes the map at its address
  unless that is the kernel map.

Lookups (:meth:`MapTable.lookup`) are vectorised: for (maps object, seq, address) they give
the map that covers the address at that step, -1 when none does.  When two live maps of one
object overlap (possible only through clones or kernel maps) perf's rb-tree lookup depends on
the tree's shape; here the map with the greatest start wins (then the newest).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

import numpy as np

from .dsonames import MapKind

KERNEL_MAPS = 0
U64_MAX = 2**64 - 1
NEVER = np.iinfo(np.int64).max


@dataclass
class Dso:
    """One dso: ``name`` is what perf prints; ``path`` the recorded file name."""

    name: str
    kind: MapKind
    path: str
    build_id: str = ""  # hex, from MMAP2 (PERF_RECORD_MISC_MMAP_BUILD_ID) or the build-id table


@dataclass
class MapTable:
    """Every map of a recording (one row per map version), numpy columns.

    ``dso`` indexes :attr:`dsos`; ``obj`` is the maps object (0: kernel maps); ``pid`` the
    process owning the object (-1 for the kernel); ``row`` the index row of the record the
    map comes from (MMAP, MMAP2, KSYMBOL; kept through clones and splits).
    """

    start: np.ndarray  # u64
    end: np.ndarray  # u64, exclusive
    pgoff: np.ndarray  # u64
    dso: np.ndarray  # i4
    kind: np.ndarray  # u1 MapKind
    prot: np.ndarray  # u4
    flags: np.ndarray  # u4
    obj: np.ndarray  # i4
    pid: np.ndarray  # i4
    row: np.ndarray  # i8
    born: np.ndarray  # i8 seq
    died: np.ndarray  # i8 seq (NEVER while still mapped at the end)
    dsos: list[Dso]
    _order: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64), repr=False)
    _bounds: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64), repr=False)
    _reach: np.ndarray = field(default_factory=lambda: np.empty(0, np.uint64), repr=False)

    def __len__(self) -> int:
        return len(self.start)

    def dso_names(self, ids: np.ndarray, unknown: str = "[unknown]") -> np.ndarray:
        """perf's dso name of each map id (``unknown`` for -1), as an object array."""
        names = np.array([d.name for d in self.dsos] + [unknown], dtype=object)
        ids = np.asarray(ids)
        d = np.where(ids >= 0, self.dso[np.maximum(ids, 0)] if len(self) else -1, -1)
        return names[d]

    def of_kind(self, kind: MapKind) -> np.ndarray:
        """Ids of the maps of one kind (e.g. ``MapKind.KERNEL``: every kernel map version)."""
        return np.nonzero(self.kind == kind)[0]

    def set_range(self, ids: np.ndarray, start: int | None = None, end: int | None = None
                  ) -> None:
        """Move maps' bounds, as perf does once it has loaded symbols: ``map__fixup_start``
        / ``map__fixup_end`` after kallsyms, or the kcore segment holding ``_stext``.  The
        recorded kernel MMAP ends at ``_etext``; ``perf script`` extends it that way, so
        kernel ``.init.text`` (an idle task's ``start_kernel`` frames) is ``[kernel.kallsyms]``
        to perf and unmapped here until the resolver calls this."""
        ids = np.asarray(ids, dtype=np.int64)
        if start is not None:
            self.start[ids] = np.uint64(start)
        if end is not None:
            self.end[ids] = np.uint64(end)
        self._order = np.empty(0, np.int64)  # re-sort on the next lookup

    # -- lookup ------------------------------------------------------------------------------
    def _prepare(self) -> None:
        """Sort by (object, start, id) and precompute, per object, the running maximum of
        ``end`` (a scan backwards from an address stops once nothing before can reach it)."""
        n = len(self)
        order = np.lexsort((np.arange(n), self.start, self.obj))
        objs = self.obj[order]
        n_obj = int(objs.max()) + 1 if n else 1
        bounds = np.searchsorted(objs, np.arange(n_obj + 1), side="left")
        reach = self.end[order].copy()
        for k in range(n_obj):
            lo, hi = bounds[k], bounds[k + 1]
            if hi - lo > 1:
                reach[lo:hi] = np.maximum.accumulate(reach[lo:hi])
        self._order, self._bounds, self._reach = order, bounds, reach
        self.__dict__.pop("_shift", None)

    def lookup(self, obj: np.ndarray, seq: np.ndarray, addr: np.ndarray) -> np.ndarray:
        """Map id covering ``addr`` in maps object ``obj`` at processing step ``seq``
        (-1: none; ``obj`` -1: no maps to look in)."""
        obj = np.asarray(obj, dtype=np.int64)
        seq = np.asarray(seq, dtype=np.int64)
        addr = np.asarray(addr, dtype=np.uint64)
        out = np.full(len(obj), -1, dtype=np.int64)
        if not len(self) or not len(obj):
            return out
        if len(self._order) != len(self):
            self._prepare()
        bounds = self._bounds
        q = np.nonzero((obj >= 0) & (obj < len(bounds) - 1))[0]
        if not len(q):
            return out
        qo, qa, qs = obj[q], addr[q], seq[q]
        cand = self._candidates(qo, qa)
        self._scan(q, cand, bounds[qo], qa, qs, out)
        return out

    def _candidates(self, qo: np.ndarray, qa: np.ndarray) -> np.ndarray:
        """Per query, the last map (sorted position) of its object starting at or before
        the address (a position before the object's first map when none does)."""
        bounds, starts = self._bounds, self.start[self._order]
        cand = np.empty(len(qo), dtype=np.int64)
        kern = qo == KERNEL_MAPS
        if kern.any():
            lo, hi = int(bounds[0]), int(bounds[1])
            cand[kern] = lo + np.searchsorted(starts[lo:hi], qa[kern], side="right") - 1
        user = np.nonzero(~kern)[0]
        if not len(user):
            return cand
        lo = int(bounds[1])
        shift = self._user_shift()
        if shift:
            # (object, start) packed in one u64: one searchsorted for every process
            keys = (self.obj[self._order[lo:]].astype(np.uint64) << np.uint64(shift)
                    | starts[lo:])
            top = np.uint64((1 << shift) - 1)
            ua = np.minimum(qa[user], top)  # beyond every user map: clamped, still a miss
            qk = qo[user].astype(np.uint64) << np.uint64(shift) | ua
            cand[user] = lo + np.searchsorted(keys, qk, side="right") - 1
            return cand
        by_obj = user[np.argsort(qo[user], kind="stable")]
        cuts = np.nonzero(np.diff(qo[by_obj]))[0] + 1
        for part in np.split(by_obj, cuts):
            k = int(qo[part[0]])
            a, b = int(bounds[k]), int(bounds[k + 1])
            cand[part] = a + np.searchsorted(starts[a:b], qa[part], side="right") - 1
        return cand

    def _user_shift(self) -> int:
        """Bits for the address in a packed (object, address) key, 0 when they do not fit
        (a user map reaching past 2**(64 - object bits))."""
        if not hasattr(self, "_shift"):
            lo = int(self._bounds[1])
            ends = self.end[self._order[lo:]]
            need = int(ends.max()).bit_length() if len(ends) else 1
            obj_bits = max(int(len(self._bounds) - 1).bit_length(), 1)
            self._shift = need if need + obj_bits <= 64 else 0
        return int(self._shift)

    def _scan(self, q: np.ndarray, cand: np.ndarray, lo: np.ndarray, qa: np.ndarray,
              qs: np.ndarray, out: np.ndarray) -> None:
        """Walk back from each candidate to the live map covering the address."""
        order = self._order
        ends, reach = self.end[order], self._reach
        born, died = self.born[order], self.died[order]
        live = np.arange(len(q))
        while len(live):
            c = cand[live]
            ok = c >= lo[live]
            live, c = live[ok], c[ok]
            a = qa[live]
            ok = reach[c] > a  # something at or before c still reaches the address
            live, c, a = live[ok], c[ok], a[ok]
            if not len(live):
                break
            s = qs[live]
            hit = (ends[c] > a) & (born[c] <= s) & (s < died[c])
            out[q[live[hit]]] = order[c[hit]]
            live = live[~hit]
            cand[live] -= 1


class MapsBuilder:
    """Collects map rows while the records are replayed (see the module docstring)."""

    def __init__(self) -> None:
        self.cols: dict[str, list[int]] = {k: [] for k in (
            "start", "end", "pgoff", "dso", "kind", "prot", "flags", "obj", "pid", "row",
            "born", "died")}
        self.dsos: list[Dso] = []
        self._dso_ids: dict[tuple[str, int, str, str], int] = {}
        # per maps object: live map ids sorted by start (parallel list of starts)
        self._starts: list[list[int]] = [[]]
        self._ids: list[list[int]] = [[]]
        self.obj_pid: list[int] = [-1]

    # -- dsos and objects --------------------------------------------------------------------
    def dso(self, name: str, kind: MapKind, path: str, build_id: str = "") -> int:
        key = (name, int(kind), path, build_id)
        d = self._dso_ids.get(key)
        if d is None:
            d = self._dso_ids[key] = len(self.dsos)
            self.dsos.append(Dso(name, kind, path, build_id))
        return d

    def new_object(self, pid: int) -> int:
        self._starts.append([])
        self._ids.append([])
        self.obj_pid.append(pid)
        return len(self._ids) - 1

    def live(self, obj: int) -> list[int]:
        return list(self._ids[obj])

    # -- rows --------------------------------------------------------------------------------
    def _add(self, obj: int, start: int, end: int, pgoff: int, dso: int, kind: int,
             prot: int, flags: int, row: int, seq: int) -> int:
        c = self.cols
        mid = len(c["start"])
        c["start"].append(start)
        c["end"].append(min(end, U64_MAX))
        c["pgoff"].append(pgoff & U64_MAX)
        c["dso"].append(dso)
        c["kind"].append(kind)
        c["prot"].append(prot)
        c["flags"].append(flags)
        c["obj"].append(obj)
        c["pid"].append(self.obj_pid[obj])
        c["row"].append(row)
        c["born"].append(seq)
        c["died"].append(NEVER)
        return mid

    def _link(self, obj: int, mid: int) -> None:
        s = self.cols["start"][mid]
        starts, ids = self._starts[obj], self._ids[obj]
        k = bisect_right(starts, s)
        while k < len(starts) and starts[k] == s and ids[k] < mid:
            k += 1
        starts.insert(k, s)
        ids.insert(k, mid)

    def _unlink(self, obj: int, mid: int, seq: int) -> None:
        ids = self._ids[obj]
        k = ids.index(mid)
        del ids[k]
        del self._starts[obj][k]
        self.cols["died"][mid] = seq

    def _copy(self, mid: int, obj: int, seq: int, start: int | None = None,
              end: int | None = None, pgoff: int | None = None) -> int:
        c = self.cols
        return self._add(obj, c["start"][mid] if start is None else start,
                         c["end"][mid] if end is None else end,
                         c["pgoff"][mid] if pgoff is None else pgoff, c["dso"][mid],
                         c["kind"][mid], c["prot"][mid], c["flags"][mid], c["row"][mid], seq)

    # -- perf's operations -------------------------------------------------------------------
    def insert_fixup(self, obj: int, start: int, end: int, pgoff: int, dso: int, kind: int,
                     prot: int, flags: int, row: int, seq: int) -> int:
        """``thread__insert_map``: cut the overlapped parts of older maps, insert the new one."""
        c = self.cols
        starts, ids = self._starts[obj], self._ids[obj]
        k = bisect_right(starts, start) - 1
        if k < 0 or c["end"][ids[k]] <= start:
            k += 1
        hit = []
        while k < len(ids) and c["start"][ids[k]] < end:
            if c["end"][ids[k]] > start:
                hit.append(ids[k])
            k += 1
        for old in hit:
            self._unlink(obj, old, seq)
            o_start, o_end = c["start"][old], c["end"][old]
            if start > o_start:
                self._link(obj, self._copy(old, obj, seq, end=start))
            if end < o_end:
                self._link(obj, self._copy(old, obj, seq, start=end,
                                           pgoff=c["pgoff"][old] + end - o_start))
        mid = self._add(obj, start, end, pgoff, dso, kind, prot, flags, row, seq)
        self._link(obj, mid)
        return mid

    def insert(self, obj: int, start: int, end: int, pgoff: int, dso: int, kind: int,
               prot: int, flags: int, row: int, seq: int) -> int:
        """``maps__insert``: no overlap fix-up (kernel maps)."""
        mid = self._add(obj, start, end, pgoff, dso, kind, prot, flags, row, seq)
        self._link(obj, mid)
        return mid

    def remove(self, obj: int, mid: int, seq: int) -> None:
        self._unlink(obj, mid, seq)

    def clone(self, dst: int, src: int, seq: int) -> None:
        """``maps__clone``: copy every live map of ``src`` into ``dst`` (plain inserts)."""
        for mid in list(self._ids[src]):
            self._link(dst, self._copy(mid, dst, seq))

    def find(self, obj: int, addr: int) -> int:
        """The live map of ``obj`` covering ``addr`` now (-1), same tie rule as lookup."""
        c = self.cols
        starts, ids = self._starts[obj], self._ids[obj]
        k = bisect_right(starts, addr) - 1
        while k >= 0:
            if c["end"][ids[k]] > addr:
                return ids[k]
            k -= 1
        return -1

    def table(self) -> MapTable:
        c = self.cols
        u64 = np.uint64
        return MapTable(
            start=np.array(c["start"], dtype=u64), end=np.array(c["end"], dtype=u64),
            pgoff=np.array(c["pgoff"], dtype=u64), dso=np.array(c["dso"], dtype=np.int32),
            kind=np.array(c["kind"], dtype=np.uint8), prot=np.array(c["prot"], dtype=np.uint32),
            flags=np.array(c["flags"], dtype=np.uint32), obj=np.array(c["obj"], dtype=np.int32),
            pid=np.array(c["pid"], dtype=np.int32), row=np.array(c["row"], dtype=np.int64),
            born=np.array(c["born"], dtype=np.int64), died=np.array(c["died"], dtype=np.int64),
            dsos=self.dsos)
