"""Every sample's resolved locations, in a form that counting is quick over.

:func:`resolve_all` runs the resolver over SAMPLE rows block by block and keeps, per sample,
its thread name id (``comm``), its own location (``leaf``), its period, and, with
callchains, the id of its *stack* (its own location, then its callchain's locations, leaf
first, as :class:`~.resolved.ResolvedSamples` has them) among the distinct stacks, kept
once each (``stack_starts``/``stack_locs``, CSR), and likewise the id of its *offsets*
(the offset of its ip into its symbol, then each callchain entry's: ``off_stack`` among
``off_starts``/``off_vals``), so a sample's own line and callchain can be named as the
resolver names them (``sym+0xoff``) without the resolver.  Samples repeat their stacks: the bench
recording has 69 K distinct stacks in 267 K samples, so per-stack work (the children
column) is done a quarter as often, and the arrays are small enough to keep in the index
cache (:mod:`.samplestore`).

Equal stack ids mean equal stacks, always: stacks are grouped by a 64-bit hash of their
locations and every member is compared with its group's first; a stack whose hash
collides with another's gets an id of its own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..perfdata import Recording, RecordType
from ..perfdata.grouping import group_ids
from ..perfdata.index import NO_SOURCE, distinct
from .callchain import callchain_spans, source_bytes
from .dsonames import MapKind
from .locations import Locations

if TYPE_CHECKING:
    from .rawsamples import NameTables
    from .resolver import Resolver

#: samples resolved at a time: bounds the temporaries (a first ``report --children`` on
#: the 4.85 M-sample bench recording peaked at 116-122 MB of RssAnon with 2^16, 104-105 MB
#: with 2^14; the names pass took the same time, ~1.9 s, either way)
BLOCK = 1 << 14
Alloc = Callable[[str, str, int], np.ndarray]


def plain_alloc(_name: str, dtype: str, n: int) -> np.ndarray:
    return np.empty(n, dtype=dtype)


@dataclass
class SampleLocs:
    """Resolved locations of SAMPLE index rows (``rows``, ascending); see the module doc."""

    rows: np.ndarray  # int64 index rows
    comm: np.ndarray  # int32 comm id (comm_names)
    leaf: np.ndarray  # int32 location id of the sample's ip
    period: np.ndarray  # uint64 (the event's sample_period where it samples none)
    stack: np.ndarray | None  # int32 stack id; None: callchains not resolved
    stack_starts: np.ndarray  # int64, one more than there are distinct stacks
    stack_locs: np.ndarray  # int32: each stack's own location, then its callchain's
    locs: Locations
    comm_names: list[str]
    off_stack: np.ndarray  # int32 id of the sample's offsets (off_starts/off_vals)
    off_starts: np.ndarray  # int64, one more than there are distinct offset sequences
    off_vals: np.ndarray  # uint32: the ip's offset into its symbol, then each entry's
    thread_names: dict[int, str] = field(default_factory=dict)  # tid -> its last name
    notes: list[str] = field(default_factory=list)
    #: every other record's row (ascending) and its thread's name then (comm id), as the
    #: thread model names them (the record list, the ``comm=`` filter)
    other_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    other_comm: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    origin: str = "resolved"  # or "cache"
    #: tells these names from any other (what was computed from them is kept with it)
    token: str = field(default_factory=lambda: os.urandom(8).hex())

    def __len__(self) -> int:
        return len(self.rows)

    def positions(self, rows: np.ndarray) -> np.ndarray | slice:
        """Positions in these arrays of index ``rows`` (each must be one of :attr:`rows`):
        a slice when they are all of them."""
        if len(rows) == len(self.rows):  # both ascending and distinct: the same rows
            return slice(0, len(rows))
        at = np.searchsorted(self.rows, rows)
        if len(rows) and (at.max() >= len(self.rows) or np.any(self.rows[at] != rows)):
            raise ValueError("rows that are not resolved samples")
        return at

    def thread_comm(self, tid: int) -> str:
        return self.thread_names.get(tid, f":{tid}")

    def position(self, row: int) -> int | None:
        """The position of index ``row`` in these arrays (None: not a resolved sample)."""
        k = int(np.searchsorted(self.rows, row))
        return k if k < len(self.rows) and int(self.rows[k]) == row else None

    def frames(self, k: int) -> tuple[list[int], list[int]]:
        """(locations, offsets) of sample ``k``: its own first, then its callchain's
        (the callchain's only when :attr:`stack` was kept)."""
        o = int(self.off_stack[k])
        offs = self.off_vals[int(self.off_starts[o]):int(self.off_starts[o + 1])].tolist()
        if self.stack is None:
            return [int(self.leaf[k])], offs[:1]
        s = int(self.stack[k])
        locs = self.stack_locs[int(self.stack_starts[s]):int(self.stack_starts[s + 1])]
        return locs.tolist(), offs


_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLD = np.uint64(0x9E3779B97F4A7C15)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: every input bit moves every output bit."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * _M1
        x = (x ^ (x >> np.uint64(27))) * _M2
        out: np.ndarray = x ^ (x >> np.uint64(31))
        return out


def chain_hashes(starts: np.ndarray, locs: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each chain of a CSR (``starts``: len + 1): order and length count."""
    lengths = np.diff(starts)
    pos = np.arange(len(locs), dtype=np.int64) - np.repeat(starts[:-1], lengths)
    with np.errstate(over="ignore"):
        v = _mix((locs.astype(np.uint64) + np.uint64(1)) * _GOLD + pos.astype(np.uint64))
    out = np.zeros(len(lengths), dtype=np.uint64)
    some = lengths > 0
    if some.any():
        out[some] = np.add.reduceat(v, starts[:-1][some])
    return _mix(out ^ lengths.astype(np.uint64))


def _same_chains(a_starts: np.ndarray, a_locs: np.ndarray, a: np.ndarray,
                 b_starts: np.ndarray, b_locs: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per pair, whether chain ``a[i]`` (of CSR a) equals chain ``b[i]`` (of CSR b)."""
    la = a_starts[a + 1] - a_starts[a]
    lb = b_starts[b + 1] - b_starts[b]
    same = la == lb
    k = np.nonzero(same)[0]
    lens = la[k]
    total = int(lens.sum())
    if total:
        first = np.repeat(np.cumsum(lens) - lens, lens)
        step = np.arange(total, dtype=np.int64) - first
        ea = np.repeat(a_starts[a[k]], lens) + step
        eb = np.repeat(b_starts[b[k]], lens) + step
        bad = a_locs[ea] != b_locs[eb]
        if bad.any():
            same[k[np.unique(np.repeat(np.arange(len(k)), lens)[bad])]] = False
    out: np.ndarray = same
    return out


class ChainTable:
    """Distinct sequences of locations (stacks) and their ids, filled block by block (id 0:
    the empty one)."""

    def __init__(self) -> None:
        self._hashes = np.zeros(0, np.uint64)  # sorted: the first chain of each hash
        self._hash_ids = np.zeros(0, np.int64)
        self._starts = np.zeros(1 << 12, dtype=np.int64)
        self._locs = np.zeros(1 << 16, dtype=np.int32)
        self.n = 0
        self._add(np.zeros(2, np.int64), np.zeros(0, np.int32), np.zeros(1, np.int64))

    @property
    def starts(self) -> np.ndarray:
        return self._starts[:self.n + 1]

    @property
    def locs(self) -> np.ndarray:
        return self._locs[:int(self._starts[self.n])]

    def _add(self, starts: np.ndarray, locs: np.ndarray, which: np.ndarray) -> np.ndarray:
        """Append chains ``which`` of a CSR; their new ids."""
        lens = starts[which + 1] - starts[which]
        total = int(lens.sum())
        end = int(self._starts[self.n])
        while self.n + len(which) + 1 > len(self._starts):
            self._starts = np.concatenate([self._starts, np.zeros_like(self._starts)])
        while end + total > len(self._locs):
            self._locs = np.concatenate([self._locs, np.zeros_like(self._locs)])
        if total:
            first = np.repeat(np.cumsum(lens) - lens, lens)
            src = np.repeat(starts[which], lens) + np.arange(total, dtype=np.int64) - first
            self._locs[end:end + total] = locs[src]
        self._starts[self.n + 1:self.n + 1 + len(which)] = end + np.cumsum(lens)
        ids = np.arange(self.n, self.n + len(which), dtype=np.int64)
        self.n += len(which)
        return ids

    def ids(self, starts: np.ndarray, locs: np.ndarray) -> np.ndarray:
        """The id of each chain of a CSR block (new chains added)."""
        n = len(starts) - 1
        out = np.empty(n, dtype=np.int32)
        if not n:
            return out
        h = chain_hashes(starts, locs)
        uh, inv, first = group_ids(h)
        # every member must equal its group's first: else (a hash collision) it is exact
        # from here on, by its bytes
        odd = ~_same_chains(starts, locs, np.arange(n), starts, locs, first[inv])
        known = np.full(len(uh), -1, dtype=np.int64)
        if len(self._hashes):
            at = np.minimum(np.searchsorted(self._hashes, uh), len(self._hashes) - 1)
            hit = self._hashes[at] == uh
            known[hit] = self._hash_ids[at[hit]]
        have = known >= 0
        if have.any():  # a block's chain found in the table: compare with the table's
            ok = _same_chains(starts, locs, first[have], self.starts, self.locs, known[have])
            if not ok.all():
                bad = np.nonzero(have)[0][~ok]
                odd |= np.isin(inv, bad)
                known[bad] = -2  # not to be taken from the table, nor added to it
        new = np.nonzero(known == -1)[0]
        if len(new):
            known[new] = self._add(starts, locs, first[new])
            at = np.searchsorted(self._hashes, uh[new])  # uh is sorted: so are these
            self._hashes = np.insert(self._hashes, at, uh[new])
            self._hash_ids = np.insert(self._hash_ids, at, known[new])
        out[:] = known[inv]
        if odd.any():
            self._exact(starts, locs, np.nonzero(odd)[0], out)
        return out

    def _exact(self, starts: np.ndarray, locs: np.ndarray, which: np.ndarray,
               out: np.ndarray) -> None:
        """Ids for chains the hash could not tell apart: one per distinct chain, by bytes."""
        seen: dict[bytes, int] = {}
        for k in which.tolist():
            body = locs[starts[k]:starts[k + 1]].tobytes()
            i = seen.get(body)
            if i is None:
                i = seen[body] = int(self._add(starts, locs, np.array([k]))[0])
            out[k] = i


def with_leaf(starts: np.ndarray, locs: np.ndarray, leaf: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """A CSR of callchains with each one's own location put first."""
    out_starts = starts + np.arange(len(starts), dtype=np.int64)
    return out_starts, np.insert(locs, starts[:-1], leaf).astype(np.int32)


def clamp_offsets(offs: np.ndarray) -> np.ndarray:
    """Offsets into symbols as kept (uint32; a larger one as the largest)."""
    out: np.ndarray = np.minimum(offs, np.uint64(2**32 - 1)).astype(np.uint32)
    return out


def resolve_all(res: Resolver, rows: np.ndarray, callchains: bool,
                alloc: Alloc = plain_alloc, block: int = BLOCK,
                progress: Callable[[int, int], None] | None = None,
                fast: bool | None = None) -> SampleLocs:
    """Resolve SAMPLE index ``rows`` (ascending) into a :class:`SampleLocs`; its per-sample
    arrays come from ``alloc(name, dtype, n)`` (mapped files, when they are to be kept);
    ``progress(done, total)`` after each block.  ``fast``: name each distinct address key
    once and keep each stack once, in compiled hash tables (:mod:`.rawsamples`), the
    default; False names every address with the resolver (the same names: the reference
    the tests compare with).  (The thread model's walks load numba anyway; without
    callchains the compiled pass still takes 2.6 s where numpy takes 4.2 s, on the bench
    recording.)"""
    if fast is None:
        fast = True
    rows = np.asarray(rows, dtype=np.int64)
    n = len(rows)
    comm = alloc("comm", "i4", n)
    leaf = alloc("leaf", "i4", n)
    period = alloc("period", "u8", n)
    stack = alloc("stack", "i4", n) if callchains else None
    off_stack = alloc("off_stack", "i4", n)
    table = ChainTable()
    offsets = ChainTable()  # (the table of int32 sequences, the uint32 bits in them)

    def name(rs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(leaf, stack id, offsets id) of SAMPLE rows, every one resolved."""
        s = res.samples(rs, callchains)
        offs = clamp_offsets(s.leaf_off).view(np.int32)
        st = np.zeros(len(s), np.int32)
        if callchains:
            st = table.ids(*with_leaf(s.chain_starts, s.chain_locs, s.leaf))
            off = offsets.ids(*with_leaf(
                s.chain_starts, clamp_offsets(s.chain_offs).view(np.int32), offs))
        else:
            off = offsets.ids(np.arange(len(s) + 1, dtype=np.int64), offs)
        return s.leaf, st, off

    compiled = _FastNames(res, callchains) if fast else None
    for lo in range(0, n, block):
        rs = rows[lo:lo + block]
        hi = lo + len(rs)
        if compiled is not None:  # each block's index columns and thread keys read once
            comm[lo:hi], objects = res.model.sample_state(rs)
            (ip, _), (per, _) = res.rec.sample_fields(rs, ("ip", "period"))
            period[lo:hi] = per
            got = compiled.names(rs, ip, objects)
        else:
            comm[lo:hi] = res.model.sample_comms(rs)[0]
            period[lo:hi] = res.periods(rs)
            got = name(rs)
        leaf[lo:hi] = got[0]
        if stack is not None:
            stack[lo:hi] = got[1]
        off_stack[lo:hi] = got[2]
        if progress is not None:
            progress(hi, n)
    if compiled is not None:
        table_csr = compiled.tables.stacks.csr()
        offsets_csr = compiled.tables.offsets.csr()
    else:
        table_csr = table.starts.copy(), table.locs.copy()
        offsets_csr = offsets.starts.copy(), offsets.locs.copy()
    other_rows, other_comm = _other_comms(res, alloc)
    tid = res.rec.columns["tid"]
    tids = np.unique(np.concatenate([np.zeros(0, np.int64)] + [  # in blocks: no copy per sample
        np.unique(tid[rows[lo:lo + block]]) for lo in range(0, n, block)]))
    threads = {int(t): res.thread_comm(int(t)) for t in tids.tolist()}
    return SampleLocs(rows, comm, leaf, period, stack, *table_csr, res.locs,
                      list(res.comm_names), off_stack, offsets_csr[0],
                      offsets_csr[1].view(np.uint32), threads, list(res.notes), other_rows,
                      other_comm)


class _FastNames:
    """Samples named through :class:`~.rawsamples.NameTables`: the resolver names each
    distinct address key once."""

    def __init__(self, res: Resolver, callchains: bool) -> None:
        from .rawsamples import NameTables, alone_maps  # numba: when naming, not from the cache

        self.res = res
        self.callchains = callchains
        self.tables: NameTables = NameTables(callchains)
        self._none = np.zeros(8, np.uint8)
        mt = res.model.maps
        user = (mt.kind == MapKind.USER) | (mt.kind == MapKind.VDSO)  # perf's map__map_ip
        # what names a user map's addresses: its dso (the resolver's tables are per dso;
        # a JIT map's perf map is the one its dso names)
        walk = mt.lookup_arrays()
        bounds, m_start, m_end, _reach, born, died, _order = walk
        self.maps = (*walk, mt.dso, user, mt.start, mt.pgoff,
                     alone_maps(bounds, m_start, m_end, born, died))

    def names(self, rows: np.ndarray, ip: np.ndarray, uobj: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(own location, stack id, offsets id) of SAMPLE ``rows``, given their ``ip`` and
        their threads' maps objects (:meth:`~.threads.ThreadModel.sample_state`)."""
        rec, model = self.res.rec, self.res.model
        if self.callchains:
            src, at, count = callchain_spans(rec, rows)
        else:
            src = rec.columns["src"][rows]
            at = np.zeros(len(rows), np.int64)
            count = np.zeros(len(rows), np.int64)
        seq = model.seq[rows].astype(np.int64)
        kep = model.maps.kernel_epochs(seq)
        cpumode = rec.columns["cpumode"][rows]
        big = rec.order == ">"
        srcs = distinct(src)
        if len(srcs) == 1:  # one source (the common case): the block's columns as they are
            s = srcs[0]
            u8 = source_bytes(rec, s) if s != NO_SOURCE else self._none
            return self.tables.name(u8, big, at, count, cpumode, ip, uobj, kep, seq,
                                    self.maps, self._name_keys)
        out = (np.empty(len(rows), np.int32), np.zeros(len(rows), np.int32),
               np.empty(len(rows), np.int32))
        for s in srcs:
            m = np.flatnonzero(src == s)
            u8 = source_bytes(rec, s) if s != NO_SOURCE else self._none
            got = self.tables.name(u8, big, at[m], count[m], cpumode[m], ip[m],
                                   uobj[m], kep[m], seq[m], self.maps, self._name_keys)
            for o, g in zip(out, got, strict=True):
                o[m] = g
        return out

    def _name_keys(self, maps: np.ndarray, ips: np.ndarray, seq: np.ndarray,
                   frame: np.ndarray, kernel: np.ndarray, level: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
        """(location, offset) of address keys not met before."""
        maps = maps.copy()
        kern = np.flatnonzero(maps == -2)
        if len(kern):
            maps[kern] = self.res.model.maps.lookup(np.zeros(len(kern), np.int64),
                                                    seq[kern], ips[kern])
        loc = np.empty(len(ips), np.int32)
        off = np.empty(len(ips), np.uint64)
        for fr in (False, True):
            sel = np.flatnonzero(frame == fr)
            if len(sel):
                loc[sel], off[sel] = self.res.resolve(maps[sel], ips[sel], kernel[sel],
                                                      frames=fr, level=level[sel])
        return loc, off


def _other_rows(rec: Recording) -> Iterator[np.ndarray]:
    """The rows of every record but the samples, ascending, a block at a time."""
    t = rec.columns["type"]
    for lo in range(0, len(t), 1 << 20):
        yield np.flatnonzero(t[lo:lo + (1 << 20)] != RecordType.SAMPLE) + lo


def _other_comms(res: Resolver, alloc: Alloc) -> tuple[np.ndarray, np.ndarray]:
    """Every other record's row and its thread's name id (the resolver's thread model)."""
    n = sum(len(b) for b in _other_rows(res.rec))
    rows = alloc("other_rows", "i8", n)
    comm = alloc("other_comm", "i4", n)
    at = 0
    for b in _other_rows(res.rec):
        rows[at:at + len(b)] = b
        comm[at:at + len(b)] = res.model.sample_comms(b)[0]
        at += len(b)
    return rows, comm
