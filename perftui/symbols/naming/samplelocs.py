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

Equal stack ids mean equal stacks, always: a stack whose hash matches one already kept is
compared with it whole (:class:`~.rawsamples.SeqTable`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ...engine import compiled
from ...perfdata import Recording, RecordType
from ...perfdata.index import NO_SOURCE, distinct
from ..tasks.callchain import callchain_spans, chain_tails, source_bytes
from ..tasks.dsonames import MapKind
from .locations import Locations
from .plainnames import PlainNames

if TYPE_CHECKING:
    from .rawsamples import NameTables
    from .resolver import Resolver

#: samples resolved at a time: bounds the temporaries (a first ``report --children`` on
#: the 4.85 M-sample bench recording peaked at 116-122 MB of RssAnon with 2^16, 104-105 MB
#: with 2^14; the names pass took the same time, ~1.9 s, either way)
BLOCK = 1 << 14
#: index rows up to which each sample's processing rank is kept (int32, 4 bytes a sample)
RANK_ROWS = 2**31 - 1
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
    #: files expected to be missing (a memfd, no /tmp/perf-PID.map): the info screen's,
    #: never stderr's, as perf says nothing of them
    quiet_notes: list[str] = field(default_factory=list)
    #: per sample: its place in perf's processing order (the thread model's ``seq`` of its
    #: row; int32, or int64 for a live stream), which sample of a table row perf's hist
    #: entry was made by (the row's names, ``[k]``/``[.]``); None: the file order is taken
    #: (names made without a thread model, a recording of 2^31 rows or more)
    rank: np.ndarray | None = None

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


def resolve_all(res: Resolver, rows: np.ndarray, callchains: bool,
                alloc: Alloc = plain_alloc, block: int = BLOCK,
                progress: Callable[[int, int], None] | None = None) -> SampleLocs:
    """Resolve SAMPLE index ``rows`` (ascending) into a :class:`SampleLocs`; its per-sample
    arrays come from ``alloc(name, dtype, n)`` (mapped files, when they are to be kept);
    ``progress(done, total)`` after each block.  Each distinct address key is named once
    and each stack kept once, in compiled hash tables (:mod:`.rawsamples`); a small
    recording (:mod:`perftui.engine`) has every address named by the resolver instead
    (:mod:`.plainnames`), and the tests hold the two equal.  (Without callchains the
    compiled pass takes 2.6 s where numpy takes 4.2 s, on the bench recording.)"""
    if callchains:  # user stacks unwound first: their samples' chains are perf's joined ones
        from ..unwind.session import ensure_unwound

        ensure_unwound(res)
    rows = np.asarray(rows, dtype=np.int64)
    n = len(rows)
    comm = alloc("comm", "i4", n)
    leaf = alloc("leaf", "i4", n)
    period = alloc("period", "u8", n)
    stack = alloc("stack", "i4", n) if callchains else None
    off_stack = alloc("off_stack", "i4", n)
    seq = res.model.seq
    rank = alloc("rank", "i4", n) if len(seq) <= RANK_ROWS else None
    namer = sample_namer(res, callchains)
    for lo in range(0, n, block):
        rs = rows[lo:lo + block]
        hi = lo + len(rs)
        comm[lo:hi], leaf[lo:hi], period[lo:hi], got_stack, off_stack[lo:hi] = name_block(
            res, namer, rs)
        if stack is not None:
            stack[lo:hi] = got_stack
        if rank is not None:
            rank[lo:hi] = seq[rs]
        if progress is not None:
            progress(hi, n)
    table_csr = namer.stacks_csr()
    offsets_csr = namer.offsets_csr()
    other_rows, other_comm = _other_comms(res, alloc)
    tid = res.rec.columns["tid"]
    tids = np.unique(np.concatenate([np.zeros(0, np.int64)] + [  # in blocks: no copy per sample
        np.unique(tid[rows[lo:lo + block]]) for lo in range(0, n, block)]))
    return SampleLocs(rows, comm, leaf, period, stack, *table_csr, res.locs,
                      list(res.comm_names), off_stack, offsets_csr[0],
                      offsets_csr[1].view(np.uint32), thread_names(res, tids), list(res.notes),
                      other_rows, other_comm,
                      quiet_notes=list(dict.fromkeys(res.quiet_notes)), rank=rank)


def sample_namer(res: Resolver, callchains: bool) -> _FastNames | PlainNames:
    """What names blocks of samples: compiled tables, or for a small recording
    (:mod:`perftui.engine`) the resolver without numba (its import costs more than it
    saves)."""
    if compiled(len(res.rec.columns)):
        return _FastNames(res, callchains)
    return PlainNames(res, callchains)


def name_block(res: Resolver, namer: _FastNames | PlainNames, rows: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(comm id, own location, period, stack id, offsets id) of a block of SAMPLE ``rows``
    (ascending): the block's index columns and thread keys read once."""
    comm, objects = res.model.sample_state(rows)
    (ip, _), (per, _) = res.rec.sample_fields(rows, ("ip", "period"))
    leaf, stack, off = namer.names(rows, ip, objects)
    return comm, leaf, per, stack, off


def thread_names(res: Resolver, tids: np.ndarray) -> dict[int, str]:
    """Each thread's last name (perf's ``Pid:Command``)."""
    return {int(t): res.thread_comm(int(t)) for t in tids.tolist()}


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

    def stacks_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """(starts, locations) of the distinct stacks, copies."""
        return self.tables.stacks.csr()

    def offsets_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """(starts, int32 bits of the uint32 offsets) of the distinct offset sequences."""
        return self.tables.offsets.csr()

    def names(self, rows: np.ndarray, ip: np.ndarray, uobj: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(own location, stack id, offsets id) of SAMPLE ``rows``, given their ``ip`` and
        their threads' maps objects (:meth:`~.threads.ThreadModel.sample_state`)."""
        rec, model = self.res.rec, self.res.model
        if self.callchains:
            src, at, count = callchain_spans(rec, rows)
            tail = chain_tails(rec, rows, src, count)
        else:
            src = rec.columns["src"][rows]
            at = np.zeros(len(rows), np.int64)
            count = np.zeros(len(rows), np.int64)
            tail = count
        seq = model.seq[rows].astype(np.int64)
        kep = model.maps.kernel_epochs(seq)
        cpumode = rec.columns["cpumode"][rows]
        big = rec.order == ">"
        srcs = distinct(src)
        if len(srcs) == 1:  # one source (the common case): the block's columns as they are
            s = srcs[0]
            u8 = source_bytes(rec, s) if s != NO_SOURCE else self._none
            return self.tables.name(u8, big, at, count, cpumode, ip, uobj, kep, seq,
                                    self.maps, self._name_keys, tail)
        out = (np.empty(len(rows), np.int32), np.zeros(len(rows), np.int32),
               np.empty(len(rows), np.int32))
        for s in srcs:
            m = np.flatnonzero(src == s)
            u8 = source_bytes(rec, s) if s != NO_SOURCE else self._none
            got = self.tables.name(u8, big, at[m], count[m], cpumode[m], ip[m],
                                   uobj[m], kep[m], seq[m], self.maps, self._name_keys,
                                   tail[m])
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
