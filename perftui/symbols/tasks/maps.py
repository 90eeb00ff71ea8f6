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

from array import array
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...perfdata.colstore import scratch
from .dsonames import MapKind

KERNEL_MAPS = 0
U64_MAX = 2**64 - 1
NEVER = np.iinfo(np.int64).max


@dataclass
class MapDso:
    """The dso a map names: ``name`` is what perf prints; ``path`` the recorded file name."""

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
    dsos: list[MapDso]
    _order: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64), repr=False)
    _bounds: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64), repr=False)
    _reach: np.ndarray = field(default_factory=lambda: np.empty(0, np.uint64), repr=False)
    _sorted: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    _shift: int = field(default=0, repr=False)
    _rank_shift: int = field(default=0, repr=False)
    _events: np.ndarray | None = field(default=None, repr=False)  # for :meth:`kernel_epochs`

    def __len__(self) -> int:
        return len(self.start)

    def dso_names(self, ids: np.ndarray, unknown: str = "[unknown]") -> np.ndarray:
        """perf's dso name of each map id (``unknown`` for -1), as an object array."""
        names = np.array([d.name for d in self.dsos] + [unknown], dtype=object)
        ids = np.asarray(ids)
        d = np.where(ids >= 0, self.dso[np.maximum(ids, 0)] if len(self) else -1, -1)
        return names[d]

    # -- states ------------------------------------------------------------------------------
    def kernel_epochs(self, seq: np.ndarray) -> np.ndarray:
        """The kernel maps' state at each processing step, as a number: the count of kernel
        map births and deaths at or before ``seq``.  Equal epochs see the same kernel maps,
        so :meth:`lookup` in them answers alike."""
        if self._events is None:
            kern = self.obj == KERNEL_MAPS
            died = self.died[kern]
            ev = np.concatenate([self.born[kern], died[died != NEVER]])
            ev.sort()
            self._events = ev
        out: np.ndarray = np.searchsorted(self._events, np.asarray(seq, dtype=np.int64),
                                          side="right")
        return out

    # -- lookup ------------------------------------------------------------------------------
    def _prepare(self) -> None:
        """Sort by (object, start, id); per object, the running maximum of ``end`` (a scan
        backwards from an address stops once nothing before can reach it); for the process
        objects, (object, start) packed in one u64 (start clamped to the bits left), and
        (object, rank of start) for addresses past those bits.  What is kept goes to mapped
        scratch files for a big table (~9 columns of 8 bytes a map version: ~90 MB of
        anonymous memory at 10^6 versions otherwise), each as soon as it is made."""
        n = len(self)
        # (lexsort is stable: equal (object, start) stay in id order. The steps below work
        # in place where they can: at 3 M map versions each temporary is 24 MB, and they
        # made most of a first report's peak on a long recording of many forks)
        order = _kept(np.lexsort((self.start, self.obj)))
        objs = _take(self.obj, order)
        n_obj = int(objs.max()) + 1 if n else 1
        bounds = np.searchsorted(objs, np.arange(n_obj + 1), side="left")
        ends, starts = _take(self.end, order), _take(self.start, order)
        k_end = int(bounds[1])
        shift = 64 - max(n_obj.bit_length(), 1)
        top = np.uint64((1 << shift) - 1)
        reach = _kept(ends.copy())  # (never ends itself: changed below)
        if k_end > 1:
            reach[:k_end] = np.maximum.accumulate(reach[:k_end])
        # running max of ``end`` within each process object: ends replaced by their rank
        # (an exact, order-keeping substitute that leaves room for the object in the key);
        # objects ascend, so the running max of (object, rank) stays in the object, and its
        # low bits are the rank
        u_ends = _kept(np.unique(ends[k_end:]))
        e_shift = max(len(u_ends).bit_length(), 1)
        if len(u_ends):
            key = _packed(objs[k_end:], e_shift, lambda lo, hi: np.searchsorted(
                u_ends, ends[k_end + lo:k_end + hi]))
            np.maximum.accumulate(key, out=key)
            key &= np.uint64((1 << e_shift) - 1)
            for lo in range(0, len(key), _CHUNK):
                reach[k_end + lo:k_end + lo + _CHUNK] = u_ends[
                    key[lo:lo + _CHUNK].view(np.int64)]
            del key
        keys = _packed(objs[k_end:], shift, lambda lo, hi: np.minimum(
            starts[k_end + lo:k_end + hi], top))
        uniq = _kept(np.unique(starts[k_end:]))
        rank_shift = max(len(uniq).bit_length(), 1) + 1
        rank_keys = _packed(objs[k_end:], rank_shift, lambda lo, hi: np.searchsorted(
            uniq, starts[k_end + lo:k_end + hi], side="right"))
        del objs
        self._order, self._bounds, self._reach = order, bounds, reach
        self._sorted = {"start": starts, "end": ends, "born": _take(self.born, order),
                        "died": _take(self.died, order), "keys": keys, "uniq": uniq,
                        "rank_keys": rank_keys}
        self._shift = shift
        self._rank_shift = int(rank_shift)

    def lookup(self, obj: np.ndarray, seq: np.ndarray, addr: np.ndarray) -> np.ndarray:
        """Map id (int32) covering ``addr`` in maps object ``obj`` at processing step ``seq``
        (-1: none; ``obj`` -1: no maps to look in)."""
        obj = np.asarray(obj, dtype=np.int64)
        seq = np.asarray(seq, dtype=np.int64)
        addr = np.asarray(addr, dtype=np.uint64)
        out = np.full(len(obj), -1, dtype=np.int32)
        if not len(self) or not len(obj):
            return out
        if len(self._order) != len(self):
            self._prepare()
        bounds = self._bounds
        valid = (obj >= 0) & (obj < len(bounds) - 1)
        if valid.all():
            q = None
            qo, qa, qs = obj, addr, seq
        else:
            q = np.nonzero(valid)[0]
            qo, qa, qs = obj[q], addr[q], seq[q]
        if not len(qo):
            return out
        cand = self._candidates(qo, qa)
        lo = bounds[qo]
        found = self._scan(cand, lo, qa, qs)
        if q is None:
            return found
        out[q] = found
        return out

    def lookup_arrays(self) -> tuple[np.ndarray, ...]:
        """What :meth:`lookup` walks, for a compiled walk of the same steps: per object the
        bounds of its maps sorted by start, and, so sorted, their starts, ends, running
        maximum of ends, born, died and map ids."""
        if len(self._order) != len(self) or not len(self):
            self._prepare()
        srt = self._sorted
        return (self._bounds, srt["start"], srt["end"], self._reach, srt["born"],
                srt["died"], self._order)

    def _candidates(self, qo: np.ndarray, qa: np.ndarray) -> np.ndarray:
        """Per query, the last map (sorted position) of its object starting at or before
        the address (a position before the object's first map when none does)."""
        bounds, starts = self._bounds, self._sorted["start"]
        kern = qo == KERNEL_MAPS
        k_end = int(bounds[1])
        if kern.all():
            return np.searchsorted(starts[:k_end], qa, side="right") - 1
        cand = np.empty(len(qo), dtype=np.int64)
        if kern.any():
            cand[kern] = np.searchsorted(starts[:k_end], qa[kern], side="right") - 1
        user = np.nonzero(~kern)[0]
        srt = self._sorted
        top = np.uint64((1 << self._shift) - 1)
        ua = qa[user]
        packed = ua < top  # strictly: a start clamped to ``top`` must never qualify
        if packed.all():
            cand[user] = k_end + np.searchsorted(
                srt["keys"], (qo[user].astype(np.uint64) << np.uint64(self._shift)) | ua,
                side="right") - 1
            return cand
        sel = user[packed]
        cand[sel] = k_end + np.searchsorted(
            srt["keys"], (qo[sel].astype(np.uint64) << np.uint64(self._shift)) | qa[sel],
            side="right") - 1
        # addresses past the packed bits: (object, rank of the address among the starts)
        sel = user[~packed]
        rank = np.searchsorted(srt["uniq"], qa[sel], side="right").astype(np.uint64)
        rb = np.uint64(self._rank_shift)
        cand[sel] = k_end + np.searchsorted(srt["rank_keys"],
                                            (qo[sel].astype(np.uint64) << rb) | rank,
                                            side="right") - 1
        return cand

    def _scan(self, cand: np.ndarray, lo: np.ndarray, qa: np.ndarray, qs: np.ndarray
              ) -> np.ndarray:
        """Walk back from each candidate to the live map covering the address: the first
        candidate answers nearly every query; the rest loop on what is left."""
        srt, order, reach = self._sorted, self._order, self._reach
        ends, born, died = srt["end"], srt["born"], srt["died"]
        ok = cand >= lo
        c = np.maximum(cand, 0)
        hit = ok & (ends[c] > qa) & (born[c] <= qs) & (qs < died[c])
        out = np.where(hit, order[c], -1).astype(np.int32)
        live = np.nonzero(ok & ~hit & (reach[c] > qa))[0]
        cand = cand[live] - 1
        while len(live):
            ok = cand >= lo[live]
            live, cand = live[ok], cand[ok]
            a = qa[live]
            ok = reach[cand] > a  # something at or before still reaches the address
            live, cand, a = live[ok], cand[ok], a[ok]
            if not len(live):
                break
            s = qs[live]
            hit = (ends[cand] > a) & (born[cand] <= s) & (s < died[cand])
            out[live[hit]] = order[cand[hit]]
            live, cand = live[~hit], cand[~hit] - 1
        return out


_COLS: tuple[tuple[str, type], ...] = (
    ("start", np.uint64), ("end", np.uint64), ("pgoff", np.uint64), ("dso", np.int32),
    ("kind", np.uint8), ("prot", np.uint32), ("flags", np.uint32), ("obj", np.int32),
    ("pid", np.int32), ("row", np.int64), ("born", np.int64), ("died", np.int64))


_MAPPED_ROWS = 1 << 16  # from this many maps on, their columns live in mapped scratch files
_CHUNK = 1 << 18  # rows of a step made a part at a time (its temporaries: a few MB)


def _kept(a: np.ndarray) -> np.ndarray:
    """``a`` itself while short, else a copy in a mapped scratch file (``a``, a temporary
    the caller drops, goes with it)."""
    if len(a) < _MAPPED_ROWS:
        return a
    out = scratch(a.dtype, len(a))
    out[:] = a
    return out


def _take(a: np.ndarray, order: np.ndarray) -> np.ndarray:
    """``a[order]`` made a chunk at a time into a column (mapped once long)."""
    out = _column(a.dtype, len(order))
    for lo in range(0, len(order), _CHUNK):
        out[lo:lo + _CHUNK] = a[order[lo:lo + _CHUNK]]
    return out


def _packed(obj: np.ndarray, shift: int,
            low: Callable[[int, int], np.ndarray]) -> np.ndarray:
    """``obj << shift | low`` as u64 (``low(lo, hi)``: the low bits of rows ``lo:hi``), made
    a chunk at a time into a column (mapped once long): no temporary of the whole length."""
    out = _column(np.dtype(np.uint64), len(obj))
    for lo in range(0, len(obj), _CHUNK):
        hi = min(len(obj), lo + _CHUNK)
        part = obj[lo:hi].astype(np.uint64)
        part <<= np.uint64(shift)
        part |= low(lo, hi).astype(np.uint64, copy=False)
        out[lo:hi] = part
    return out


def _column(dtype: np.dtype, n: int) -> np.ndarray:
    """A column of ``n`` map rows: in memory while short, else in a mapped scratch file (a
    recording of many forks has ~10^6 map versions: ~65 MB of columns, ~2x while grown)."""
    return scratch(dtype, n) if n >= _MAPPED_ROWS else np.empty(n, dtype=dtype)


class MapsBuilder:
    """Collects map rows while the records are replayed (see the module docstring).

    Rows live in growable numpy columns, so a FORK's copy of a process's maps is one
    fancy-indexing step per column, not a Python loop."""

    def __init__(self) -> None:
        self.n = 0
        self.c: dict[str, np.ndarray] = {k: np.empty(1024, dtype=dt) for k, dt in _COLS}
        self.dsos: list[MapDso] = []
        self._dso_ids: dict[tuple[str, int, str, str], int] = {}
        # per maps object: live map ids sorted by (start, id), with their starts (typed
        # arrays: a recording of many forks keeps ~10^6 live maps, 16 bytes each here,
        # where lists of ints and a dict of their ends took ~150 bytes each)
        self._starts: list[array[int]] = [array("Q")]
        self._ids: list[array[int]] = [array("q")]
        self.obj_pid: list[int] = [-1]

    # -- dsos and objects --------------------------------------------------------------------
    def dso(self, name: str, kind: MapKind, path: str, build_id: str = "") -> int:
        key = (name, int(kind), path, build_id)
        d = self._dso_ids.get(key)
        if d is None:
            d = self._dso_ids[key] = len(self.dsos)
            self.dsos.append(MapDso(name, kind, path, build_id))
        return d

    def new_object(self, pid: int) -> int:
        self._starts.append(array("Q"))
        self._ids.append(array("q"))
        self.obj_pid.append(pid)
        return len(self._ids) - 1

    def live(self, obj: int) -> list[int]:
        return list(self._ids[obj])

    def release(self, obj: int) -> None:
        """Maps object ``obj`` can never be reached again (no thread uses it): its live map
        lists go; its rows stay in the table, as every lookup reads them by time."""
        self._starts[obj] = array("Q")
        self._ids[obj] = array("q")

    # -- rows --------------------------------------------------------------------------------
    def _grow(self, need: int) -> None:
        cap = len(self.c["start"])
        if need <= cap:
            return
        new = max(need, 2 * cap)
        for k, a in self.c.items():
            b = _column(a.dtype, new)
            b[: self.n] = a[: self.n]
            self.c[k] = b

    def _add(self, obj: int, start: int, end: int, pgoff: int, dso: int, kind: int,
             prot: int, flags: int, row: int, seq: int) -> int:
        mid = self.n
        self._grow(mid + 1)
        end = min(end, U64_MAX)
        c = self.c
        c["start"][mid] = start
        c["end"][mid] = end
        c["pgoff"][mid] = pgoff & U64_MAX
        c["dso"][mid] = dso
        c["kind"][mid] = kind
        c["prot"][mid] = prot
        c["flags"][mid] = flags
        c["obj"][mid] = obj
        c["pid"][mid] = self.obj_pid[obj]
        c["row"][mid] = row
        c["born"][mid] = seq
        c["died"][mid] = NEVER
        self.n = mid + 1
        return mid

    def _link(self, obj: int, mid: int, start: int) -> None:
        starts, ids = self._starts[obj], self._ids[obj]
        k = bisect_right(starts, start)
        while k < len(starts) and starts[k] == start and ids[k] < mid:
            k += 1
        starts.insert(k, start)
        ids.insert(k, mid)

    def _unlink(self, obj: int, mid: int, seq: int) -> None:
        ids = self._ids[obj]
        k = ids.index(mid)
        del ids[k]
        del self._starts[obj][k]
        self.c["died"][mid] = seq

    def _piece(self, mid: int, seq: int, start: int, end: int, pgoff: int) -> int:
        c = self.c
        return self._add(int(c["obj"][mid]), start, end, pgoff, int(c["dso"][mid]),
                         int(c["kind"][mid]), int(c["prot"][mid]), int(c["flags"][mid]),
                         int(c["row"][mid]), seq)

    # -- perf's operations -------------------------------------------------------------------
    def insert_fixup(self, obj: int, start: int, end: int, pgoff: int, dso: int, kind: int,
                     prot: int, flags: int, row: int, seq: int) -> int:
        """``thread__insert_map``: cut the overlapped parts of older maps, insert the new one."""
        ends = self.c["end"]
        starts, ids = self._starts[obj], self._ids[obj]
        k = bisect_right(starts, start) - 1
        if k < 0 or ends[ids[k]] <= start:
            k += 1
        hit = []
        while k < len(ids) and starts[k] < end:
            if ends[ids[k]] > start:
                hit.append((ids[k], starts[k]))
            k += 1
        for old, o_start in hit:
            o_end = int(ends[old])
            o_pgoff = int(self.c["pgoff"][old])
            self._unlink(obj, old, seq)
            if start > o_start:
                self._link(obj, self._piece(old, seq, o_start, start, o_pgoff), o_start)
            if end < o_end:
                self._link(obj, self._piece(old, seq, end, o_end, o_pgoff + end - o_start), end)
        mid = self._add(obj, start, end, pgoff, dso, kind, prot, flags, row, seq)
        self._link(obj, mid, start)
        return mid

    def insert(self, obj: int, start: int, end: int, pgoff: int, dso: int, kind: int,
               prot: int, flags: int, row: int, seq: int) -> int:
        """``maps__insert``: no overlap fix-up (kernel maps)."""
        mid = self._add(obj, start, end, pgoff, dso, kind, prot, flags, row, seq)
        self._link(obj, mid, start)
        return mid

    def remove(self, obj: int, mid: int, seq: int) -> None:
        self._unlink(obj, mid, seq)

    def clone(self, dst: int, src: int, seq: int) -> None:
        """``maps__clone``: copy every live map of ``src`` into ``dst`` (plain inserts)."""
        ids = self._ids[src]
        if not ids:
            return
        n = len(ids)
        base = self.n
        self._grow(base + n)
        take = np.array(ids, dtype=np.int64)
        for a in self.c.values():
            a[base:base + n] = a[take]
        c = self.c
        c["obj"][base:base + n] = dst
        c["pid"][base:base + n] = self.obj_pid[dst]
        c["born"][base:base + n] = seq
        c["died"][base:base + n] = NEVER
        self.n = base + n
        new_ids = range(base, base + n)
        if not self._ids[dst]:  # a fresh process: same order as the parent's
            self._starts[dst] = array("Q", self._starts[src])
            self._ids[dst] = array("q", new_ids)
            return
        for mid, s in zip(new_ids, array("Q", self._starts[src]), strict=True):
            self._link(dst, mid, s)

    def find(self, obj: int, addr: int) -> int:
        """The live map of ``obj`` covering ``addr`` now (-1), same tie rule as lookup."""
        starts, ids, ends = self._starts[obj], self._ids[obj], self.c["end"]
        k = bisect_right(starts, addr) - 1
        while k >= 0:
            if ends[ids[k]] > addr:
                return ids[k]
            k -= 1
        return -1

    def set_build_id(self, dso: int, build_id: str) -> None:
        self.dsos[dso].build_id = build_id

    def snapshot(self) -> MapTable:
        """The maps so far as a table, the builder kept (a replay that goes on)."""
        c = {k: a[: self.n].copy() for k, a in self.c.items()}
        return MapTable(start=c["start"], end=c["end"], pgoff=c["pgoff"], dso=c["dso"],
                        kind=c["kind"], prot=c["prot"], flags=c["flags"], obj=c["obj"],
                        pid=c["pid"], row=c["row"], born=c["born"], died=c["died"],
                        dsos=self.dsos)

    def table(self) -> MapTable:
        """The maps as a table; the builder's columns go (one at a time: no second copy of
        them all at once)."""
        c = {}
        for k in list(self.c):
            a = self.c.pop(k)
            c[k] = _column(a.dtype, self.n)
            c[k][:] = a[: self.n]
            del a
        return MapTable(start=c["start"], end=c["end"], pgoff=c["pgoff"], dso=c["dso"],
                        kind=c["kind"], prot=c["prot"], flags=c["flags"], obj=c["obj"],
                        pid=c["pid"], row=c["row"], born=c["born"], died=c["died"],
                        dsos=self.dsos)
