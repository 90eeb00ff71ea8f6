"""Threads, their names and their maps over a recording, as perf 6.1 models them.

``ThreadModel.build(rec)`` replays the records that change threads and maps in perf's
processing order (:mod:`.order`) with perf's rules (tools/perf/util/machine.c, thread.c,
session.c), then answers per-row questions with numpy:

* :meth:`ThreadModel.sample_comms` the name perf prints for each row's thread
  (:meth:`~ThreadModel.comm_at` for one tid at a time),
* :meth:`ThreadModel.map_of` the map of each SAMPLE's ip; :meth:`ThreadModel.map_at_rows`
  the map of any address seen in a row's context; :meth:`ThreadModel.callchain_maps` every
  callchain entry of SAMPLE rows with its cpumode and map,
* :attr:`ThreadModel.maps` (a :class:`~perftui.symbols.tasks.maps.MapTable`): every map version
  with its dso (perf's printed name, recorded path, build id, :class:`MapKind`).

What is deliberately not here: symbols (the resolver loads them per dso); the kernel map
stretch perf applies once it has loaded kallsyms or /proc/kcore (the recorded kernel MMAP,
which ends at ``_etext``, is kept as it is); DWARF unwinding of
``--call-graph dwarf`` stacks; ``perf script``'s ``--max-stack`` (127) cut of long chains.
Guest samples get no map, as in perf 6.1 without ``--guest``, and ``perf script`` does not
print them at all (they are filtered, HIST_FILTER__GUEST).

The rules perf models threads and maps by are in :mod:`.replay`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ...engine import compiled
from ...perfdata import Feature, Recording, RecordType
from ...perfdata.constants import Misc
from ...perfdata.index import NO_SOURCE
from ..unwind.overlay import overlay_of
from .callchain import MARKER, callchain_spans, chain_cpumodes, chain_tails, sample_callchains
from .dsonames import (
    VDSO,
)
from .maps import KERNEL_MAPS, MapTable
from .order import processing_seq, queue_times
from .replay import IDLE_COMM, Replay
from .taskrecords import (
    Comm,
    Ksymbol,
    Mmap,
    Task,
    TaskRecordReader,
    Touch,
    feature_build_ids,
    header_build_id,
)

_TASK_TYPES = (RecordType.COMM, RecordType.FORK, RecordType.EXIT, RecordType.MMAP,
               RecordType.MMAP2, RecordType.KSYMBOL, RecordType.NAMESPACES,
               RecordType.HEADER_BUILD_ID)
_CHUNK = 1 << 22  # callchain entries looked up at a time
# task records decoded at a time during the replay: each block's records and its Python
# ints are short-lived small objects among the model's long-lived ones; 2^10, not 2^14,
# left ~3 MB less of a fragmented heap after a 50 M-record replay, in the same time
_EVENTS = 1 << 10
_FORK_EXIT = (RecordType.FORK, RecordType.EXIT)




@dataclass
class CallchainMaps:
    """Callchains of some SAMPLE rows, flattened: row ``k``'s entries are
    ``ips[starts[k]:starts[k] + counts[k]]``.  ``modes`` is each entry's cpumode
    (:data:`~perftui.symbols.tasks.callchain.MARKER` for context markers, which are not frames);
    ``ok[k]`` is False when perf 6.1 drops row ``k``'s whole chain; ``maps`` the map id of each
    entry (-1: none, or a marker)."""

    ips: np.ndarray
    starts: np.ndarray
    counts: np.ndarray
    modes: np.ndarray
    ok: np.ndarray
    maps: np.ndarray

    def frames(self) -> np.ndarray:
        """Mask of the entries perf prints as frames (not markers, chain not dropped)."""
        mask: np.ndarray = (self.modes != MARKER) & np.repeat(self.ok, self.counts)
        return mask

    def offsets(self) -> np.ndarray:
        """CSR offsets (len + 1): row ``k``'s entries are ``offsets[k]:offsets[k + 1]``."""
        return np.append(self.starts, self.starts[-1] + self.counts[-1] if len(self.starts)
                         else 0)


def _record_bytes(rec: Recording, rows: np.ndarray) -> Iterator[tuple[int, bytes]]:
    """(row, bytes) of index rows, read straight from the sources' buffers (rows inside
    compressed data that was not kept are skipped)."""
    c = rec.columns
    src, pos, size = (c[k][rows].tolist() for k in ("src", "pos", "size"))
    bufs = {s: getattr(rec.sources[s], "buf", None) for s in set(src) if s != NO_SOURCE}
    for i, s, p, n in zip(rows.tolist(), src, pos, size, strict=True):
        buf = bufs.get(s)
        if buf is None:
            continue
        yield i, bytes(buf[p:p + n])


def trailer_times(rec: Recording, reader: TaskRecordReader, rows: np.ndarray) -> np.ndarray:
    """The ``sample_id`` trailer time of FORK/EXIT ``rows`` (ascending; 0: unknown), which
    perf orders them by (the index keeps their body time)."""
    c = rec.columns
    out = np.zeros(len(rows), np.uint64)
    for i, raw in _record_bytes(rec, rows):
        attr = int(c["attr"][i])
        if reader.read(int(c["type"][i]), raw, attr) is not None:
            out[np.searchsorted(rows, i)] = reader.trailer_time(raw, attr)
    return out


def _latest(keys: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Index of the last sorted ``keys`` entry <= each query (-1 when none)."""
    return np.searchsorted(keys, query, side="right") - 1


class ThreadModel:
    """perf 6.1's threads, comms and maps of one indexed recording (see the module doc).

    Attributes: ``seq`` (per index row: its position in perf's processing order; int32
    while the rows fit), ``order`` (index rows in that order), ``names`` (comm strings;
    ids index it), ``maps`` (:class:`~perftui.symbols.tasks.maps.MapTable`, map ids index it).
    Only ``seq`` is kept per row: ``order`` is made again when asked for.
    """

    def __init__(self, rec: Recording, replay: Replay, seq: np.ndarray,
                 live: bool = False) -> None:
        """``live``: the replay goes on (a stream still read, :mod:`.livethreads`): the
        model is a snapshot of it, its maps and logs copies (else the replay's maps are
        taken over)."""
        self.rec = rec
        self.seq = seq
        n = len(self.seq)
        self.names = replay.names
        self._name_ids = replay._name_ids
        self.maps: MapTable = replay.b.snapshot() if live else replay.b.table()
        self._span = n + 2  # seq + 1 lies in [0, n]
        # (copies: an array exporting its buffer cannot grow, and a live replay's does)
        cl = np.array(replay.comm_log, dtype=np.int64).reshape(-1, 4)
        sl = np.array(replay.state_log, dtype=np.int64).reshape(-1, 3)
        self._tids = np.unique(np.concatenate([cl[:, 0], sl[:, 0]]))
        self._comm_key, self._comm_name, self._comm_time = self._log(cl[:, 0], cl[:, 1],
                                                                     cl[:, 2], cl[:, 3])
        self._state_key, self._state_obj, _ = self._log(sl[:, 0], sl[:, 1], sl[:, 2])

    @property
    def order(self) -> np.ndarray:
        """Index rows in perf's processing order (the inverse of :attr:`seq`)."""
        out = np.empty(len(self.seq), dtype=np.int64)
        out[self.seq] = np.arange(len(self.seq), dtype=np.int64)
        return out

    def _log(self, tid: np.ndarray, seq1: np.ndarray, val: np.ndarray,
             time: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Sort a log by (tid, seq, insertion) into searchable combined keys."""
        k = np.lexsort((np.arange(len(tid)), seq1, tid))
        t = np.searchsorted(self._tids, tid[k])
        key = t * self._span + seq1[k]
        tm = time[k] if time is not None else np.empty(0, dtype=np.int64)
        return key, val[k], tm

    def _keys(self, tids: np.ndarray, seq1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        tids = np.asarray(tids, dtype=np.int64)
        j = np.minimum(np.searchsorted(self._tids, tids), max(len(self._tids) - 1, 0))
        known = (self._tids[j] == tids) if len(self._tids) else np.zeros(len(tids), bool)
        return j * self._span + seq1, known

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def build(cls, rec: Recording) -> ThreadModel:
        """Replay an indexed recording (``rec.build_index()`` done)."""
        c = rec.columns
        typ = c["type"]
        reader = TaskRecordReader(rec)
        task_rows = rec.rows_of_type(*_TASK_TYPES)  # the short list of non-samples
        # first only the FORK/EXIT trailer times (the order needs them); the records are
        # decoded again, a block at a time, as the replay reaches them (no Python object
        # per task record kept: their small-object heap would stay fragmented)
        fork_exit_times = trailer_times(rec, reader, task_rows[np.isin(typ[task_rows],
                                                                        _FORK_EXIT)])
        times = queue_times(rec, fork_exit_times)
        seq = processing_seq(rec, times)
        del times  # (not kept: the model keeps only seq)
        touch = cls._touch_rows(rec, seq)
        arch = rec.feature(Feature.ARCH) or os.uname().machine
        replay = Replay(x86_64=arch == "x86_64")
        for e in feature_build_ids(rec):
            replay.build_id(e)
        replay.idle()
        rows = np.concatenate([task_rows.astype(np.int64), touch])
        rows = rows[np.argsort(seq[rows], kind="stable")]
        for lo in range(0, len(rows), _EVENTS):
            cls.replay_block(rec, reader, replay, seq, rows[lo:lo + _EVENTS])
        return cls(rec, replay, seq)

    @staticmethod
    def replay_block(rec: Recording, reader: TaskRecordReader, replay: Replay,
                      seq: np.ndarray, rows: np.ndarray) -> None:
        """Apply task records and touching samples ``rows`` (in processing order)."""
        c = rec.columns
        typs = c["type"][rows]
        raws = dict(_record_bytes(rec, np.sort(rows[typs != RecordType.SAMPLE])))
        # the rows' fields as Python ints at once (a numpy scalar read per field and row
        # costs more than the rest of the loop)
        cols = (rows.tolist(), seq[rows].tolist(), typs.tolist(), c["pid"][rows].tolist(),
                c["tid"][rows].tolist(), c["time"][rows].tolist(), c["attr"][rows].tolist())
        for i, s, t, pid, tid, stime, attr in zip(*cols, strict=True):
            if t == RecordType.SAMPLE:  # a touching sample
                replay.findnew(pid, tid, s, stime)
                continue
            raw = raws.get(i)
            if raw is None:
                continue
            if t == RecordType.HEADER_BUILD_ID:
                entry = header_build_id(rec, raw)
                if entry is not None:
                    replay.build_id(entry)
                continue
            ev = reader.read(t, raw, attr)
            if ev is None:
                continue
            tm = reader.trailer_time(raw, attr)
            if isinstance(ev, Comm):
                replay.comm(ev, s, tm)
            elif isinstance(ev, Mmap):
                replay.mmap(ev, i, s, tm)
            elif isinstance(ev, Ksymbol):
                replay.ksymbol(ev, i, s)
            elif isinstance(ev, Touch):
                replay.findnew(ev.pid, ev.tid, s, tm)
            elif isinstance(ev, Task) and t == RecordType.FORK:
                replay.fork(ev.pid, ev.ppid, ev.tid, ev.ptid, ev.fork_exec, s, tm)
            elif isinstance(ev, Task):  # EXIT: perf only looks the thread up
                replay.find(ev.pid, ev.tid, s, tm)

    @staticmethod
    def _touch_rows(rec: Recording, seq: np.ndarray) -> np.ndarray:
        """The samples that can change a thread: the first one (in processing order) of
        each (tid, pid); later ones find the thread as it is."""
        c = rec.columns
        args = (c["type"], c["tid"], c["pid"], seq, int(RecordType.SAMPLE))
        if compiled(len(c)):
            from .orderwalk import first_samples  # numba: compiled with the processing order

            return first_samples(*args)
        from .orderplain import first_samples as plain_first_samples

        return plain_first_samples(*args)

    # -- names -------------------------------------------------------------------------------
    def sample_comms(self, rows: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """(comm id per row, the names table): the name perf gives each row's thread (a
        SAMPLE's, or any record's with a tid) when it processes that row."""
        rows = np.asarray(rows, dtype=np.int64)
        tids = self.rec.columns["tid"][rows].astype(np.int64)
        key, known = self._keys(tids, self.seq[rows] + 1)
        return self._comm_ids(tids, key, known), self.names

    def sample_state(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`sample_comms`' ids and :meth:`thread_objects` of the same rows, the
        thread keys searched once (the names pass asks for both, a block at a time)."""
        rows = np.asarray(rows, dtype=np.int64)
        tids = self.rec.columns["tid"][rows].astype(np.int64)
        key, known = self._keys(tids, self.seq[rows] + 1)
        return self._comm_ids(tids, key, known), self._objects_of(key, known)

    def _comm_ids(self, tids: np.ndarray, key: np.ndarray, known: np.ndarray) -> np.ndarray:
        j = _latest(self._comm_key, key)
        ok = known & (j >= 0)
        if ok.any():
            ok[ok] = self._comm_key[j[ok]] // self._span == key[ok] // self._span
        out = np.full(len(tids), -1, dtype=np.int32)
        out[ok] = self._comm_name[j[ok]]
        for k in np.nonzero(~ok)[0].tolist():  # tids perf would only now create
            out[k] = self._name(f":{int(tids[k])}")
        return out

    def _name(self, s: str) -> int:
        k = self._name_ids.get(s)
        if k is None:
            k = self._name_ids[s] = len(self.names)
            self.names.append(s)
        return k

    def comm_of_row(self, row: int) -> str:
        ids, names = self.sample_comms(np.array([row]))
        return names[int(ids[0])]

    def comm(self, tid: int, time: int) -> str:
        """Same as :meth:`comm_at` (``analysis.tasks.CommTable.comm``'s signature)."""
        return self.comm_at(tid, time)

    def comm_at(self, tid: int, time: int) -> str:
        """The name of ``tid`` at ``time`` (ns): the last name set (in processing order) by
        a record of time <= ``time`` (synthesized records, time 0, always count); a time
        before all of them gives the name the thread had once its first record was applied
        (a forked child: the inherited name)."""
        if tid == 0 and not len(self._tids):
            return IDLE_COMM
        j = np.searchsorted(self._tids, tid)
        if j >= len(self._tids) or self._tids[j] != tid:
            return f":{tid}"
        lo = np.searchsorted(self._comm_key, j * self._span, side="left")
        hi = np.searchsorted(self._comm_key, (j + 1) * self._span, side="left")
        if lo == hi:
            return f":{tid}"
        tm = self._comm_time[lo:hi]
        ok = np.nonzero(tm <= time)[0]
        if len(ok):
            k = lo + int(ok[-1])
        else:  # the name right after the first record that made the thread
            keys = self._comm_key[lo:hi]
            k = lo + int(np.searchsorted(keys, keys[0], side="right")) - 1
        return self.names[int(self._comm_name[k])]

    # -- maps --------------------------------------------------------------------------------
    def thread_objects(self, rows: np.ndarray) -> np.ndarray:
        """The maps object of each row's thread when perf processes the row (-1: none)."""
        rows = np.asarray(rows, dtype=np.int64)
        tids = self.rec.columns["tid"][rows].astype(np.int64)
        return self._objects(tids, self.seq[rows] + 1)

    def _objects(self, tids: np.ndarray, seq1: np.ndarray) -> np.ndarray:
        return self._objects_of(*self._keys(tids, seq1))

    def _objects_of(self, key: np.ndarray, known: np.ndarray) -> np.ndarray:
        j = _latest(self._state_key, key)
        ok = known & (j >= 0)
        if ok.any():
            ok[ok] = self._state_key[j[ok]] // self._span == key[ok] // self._span
        out = np.full(len(key), -1, dtype=np.int64)
        out[ok] = self._state_obj[j[ok]]
        return out

    def map_of(self, rows: np.ndarray) -> np.ndarray:
        """Map id of each SAMPLE row's ip (-1: none, perf's ``[unknown]``)."""
        rows = np.asarray(rows, dtype=np.int64)
        ips = self.rec.sample_values(rows, "ip")
        return self.map_at_rows(rows, ips, self.rec.columns["cpumode"][rows])

    def map_at_rows(self, rows: np.ndarray, ips: np.ndarray, cpumodes: np.ndarray
                    ) -> np.ndarray:
        """Map id of addresses seen in the context of index rows (a sample's callchain
        entries: repeat the row per entry, give each entry's cpumode from
        :func:`~perftui.symbols.tasks.callchain.chain_cpumodes`).  Kernel cpumode looks in the
        kernel maps, user cpumode in the row's thread's maps; hypervisor, guest and
        unknown cpumodes find nothing, as in perf 6.1 without ``--guest``."""
        rows = np.asarray(rows, dtype=np.int64)
        cpumodes = np.asarray(cpumodes)
        obj = np.full(len(rows), -1, dtype=np.int64)
        user = cpumodes == Misc.USER
        if user.any():
            obj[user] = self.thread_objects(rows[user])
        obj[cpumodes == Misc.KERNEL] = KERNEL_MAPS
        return self.maps.lookup(obj, self.seq[rows], np.asarray(ips, dtype=np.uint64))

    def callchain_maps(self, rows: np.ndarray) -> CallchainMaps:
        """The callchains of SAMPLE rows with the map of every entry (see
        :class:`CallchainMaps`)."""
        rows = np.asarray(rows, dtype=np.int64)
        flat, starts, counts = sample_callchains(self.rec, rows)
        tails = chain_tails(self.rec, rows, callchain_spans(self.rec, rows)[0], counts) \
            if overlay_of(self.rec) is not None else None
        modes, ok = chain_cpumodes(flat, starts, tails)
        obj = np.full(len(rows), -1, dtype=np.int32)
        some = counts > 0
        if some.any():
            obj[some] = self.thread_objects(rows[some])
        seq = self.seq[rows]
        maps = np.full(len(flat), -1, dtype=np.int32)
        # in slices of rows, to bound the temporaries of long recordings
        ends = starts + counts
        r0 = 0
        while r0 < len(rows):
            r1 = int(np.searchsorted(ends, ends[r0] + _CHUNK, side="right"))
            r1 = max(r1, r0 + 1)
            a, b = int(starts[r0]), int(ends[r1 - 1])
            if b > a:
                cnt = counts[r0:r1]
                e_obj = np.repeat(obj[r0:r1], cnt)
                m = modes[a:b]
                e_obj[m == Misc.KERNEL] = KERNEL_MAPS
                e_obj[(m != Misc.USER) & (m != Misc.KERNEL)] = -1
                e_obj[~np.repeat(ok[r0:r1], cnt)] = -1
                maps[a:b] = self.maps.lookup(e_obj, np.repeat(seq[r0:r1], cnt), flat[a:b])
            r0 = r1
        return CallchainMaps(flat, starts, counts, modes, ok, maps)

    def dso_names(self, map_ids: np.ndarray) -> np.ndarray:
        """perf's dso string for map ids (``[unknown]`` for -1)."""
        return self.maps.dso_names(map_ids)


__all__ = ["IDLE_COMM", "VDSO", "CallchainMaps", "ThreadModel"]
