"""perf 6.1's processing order and thread model of a stream still being read (a live pipe).

:class:`LiveThreads` keeps perf's ordered-events queue (:mod:`.order`'s rules) and its
machine (:class:`~.replay.Replay`) across the reads of a stream: each :meth:`~LiveThreads.
advance` takes only the rows read since the last one, delivers what perf would have
delivered by then (the records without a time at once, the queued ones as the rounds read
flush them) and replays only the newly delivered task records.  What perf has delivered is
final: a record read later is delivered after all of it (a queued one at a later round or
the end, one without a time at its own place), so the positions given here are those the
whole stream's :func:`~.order.processing_seq` gives (the tests hold them equal), and a
sample delivered so far sees the maps and names it sees once the stream is complete.

:meth:`~LiveOrder.frontier` is the first row not yet delivered: every row before it has
its place, and its samples can be named for good.  ``final``: the stream ended (or ``x``
stopped it): everything queued is delivered, as perf's final flush does.

Work per advance: the rows read since the last one, the rounds among them and the queue's
pending records (one round's worth), plus a snapshot of the model (its maps and logs: one
entry per map version and thread change, not per sample).
"""

from __future__ import annotations

import os

import numpy as np

from ...perfdata import Feature, Recording, RecordType
from ...perfdata.colstore import ColumnStore
from .order import queue_times, unordered
from .replay import Replay
from .taskrecords import TaskRecordReader, feature_build_ids
from .threads import _EVENTS, _FORK_EXIT, _TASK_TYPES, ThreadModel, trailer_times

_NO_TIME = np.uint64(0)
_EMPTY_POS = np.zeros(0, np.int64)
_EMPTY_TS = np.zeros(0, np.uint64)


class Growing:
    """A 1-D array that grows at its end, in a mapped column file (views of it stay valid:
    a grown file is mapped again, the old map kept)."""

    def __init__(self, store: ColumnStore | None, name: str, dtype: str) -> None:
        self.store, self.name, self.dtype = store, name, np.dtype(dtype)
        self.n = 0
        self._a = np.zeros(0, self.dtype)

    def reserve(self, n: int) -> np.ndarray:
        """Room for ``n`` values in all; the whole array (values past :attr:`n` unset)."""
        if n > len(self._a):
            cap = max(n, 2 * len(self._a), 1 << 12)
            grown = (self.store.array(self.name, self.dtype, cap) if self.store is not None
                     else np.zeros(cap, self.dtype))
            if self.store is None:
                grown[:self.n] = self._a[:self.n]
            self._a = grown
        return self._a

    def extend(self, values: np.ndarray) -> None:
        a = self.reserve(self.n + len(values))
        a[self.n:self.n + len(values)] = values
        self.n += len(values)

    @property
    def view(self) -> np.ndarray:
        return self._a[:self.n]


def _temporary_store() -> ColumnStore | None:
    try:
        return ColumnStore.temporary()
    except OSError:
        return None


class OrderedEvents:
    """perf 6.1's ordered-events queue fed a piece of a stream at a time: each
    :meth:`feed` gives the positions delivered by then, in delivery order (the rules of
    :mod:`.order`, replayed round by round as :func:`.orderplain._replay_rounds`)."""

    def __init__(self) -> None:
        self._pend_pos, self._pend_ts = _EMPTY_POS, _EMPTY_TS  # queued before the last round
        self._seg_pos, self._seg_ts = _EMPTY_POS, _EMPTY_TS  # queued since the last round
        self._next_flush = 0
        self._max_ts = 0
        self.read = 0  # positions fed so far

    def first_pending(self) -> int:
        """The first position not delivered yet (:attr:`read` when none waits)."""
        low = [int(a.min()) for a in (self._pend_pos, self._seg_pos) if len(a)]
        return min([self.read, *low])

    def feed(self, ts: np.ndarray, is_round: np.ndarray, final: bool = False) -> np.ndarray:
        """The next records' ordering times (0: delivered at once) and which are
        FINISHED_ROUNDs: the positions delivered now, in order (``final``: the input's
        end, every queued one delivered as perf's final flush does)."""
        lo = self.read
        hi = lo + len(ts)
        queued = ts != _NO_TIME
        now = np.flatnonzero(~queued) + lo  # delivered at their own place
        at, when, pos = [now], [np.zeros(len(now), np.uint64)], [now]
        qpos = np.flatnonzero(queued) + lo
        qts = ts[queued]
        rounds = np.flatnonzero(is_round) + lo
        start = 0
        for r, end in zip(rounds.tolist(), np.searchsorted(qpos, rounds).tolist(),
                          strict=True):
            self._queue(qpos[start:end], qts[start:end])
            start = end
            got = self._round()
            if got is not None:
                at.append(np.full(len(got[0]), r, np.int64))
                pos.append(got[0])
                when.append(got[1])
        self._queue(qpos[start:], qts[start:])
        self.read = hi
        if final:
            p = np.concatenate([self._pend_pos, self._seg_pos])
            t = np.concatenate([self._pend_ts, self._seg_ts])
            self._pend_pos = self._seg_pos = _EMPTY_POS
            self._pend_ts = self._seg_ts = _EMPTY_TS
            at.append(np.full(len(p), hi, np.int64))
            pos.append(p)
            when.append(t)
        a, t, p = np.concatenate(at), np.concatenate(when), np.concatenate(pos)
        out: np.ndarray = p[np.lexsort((p, t, a))]  # by place, then time, then position
        return out

    def _queue(self, pos: np.ndarray, ts: np.ndarray) -> None:
        if len(pos):
            self._seg_pos = np.concatenate([self._seg_pos, pos])
            self._seg_ts = np.concatenate([self._seg_ts, ts])

    def _round(self) -> tuple[np.ndarray, np.ndarray] | None:
        """A FINISHED_ROUND: what it flushes (positions, times)."""
        seg_pos, seg_ts = self._seg_pos, self._seg_ts
        self._seg_pos, self._seg_ts = _EMPTY_POS, _EMPTY_TS
        if len(seg_ts):
            seg_max = int(seg_ts.max())  # (the first record into an empty queue resets it)
            self._max_ts = seg_max if not len(self._pend_ts) else max(self._max_ts, seg_max)
            self._pend_pos = np.concatenate([self._pend_pos, seg_pos])
            self._pend_ts = np.concatenate([self._pend_ts, seg_ts])
        if not len(self._pend_ts):
            return None  # an empty queue: nothing flushed, next_flush unchanged
        out = None
        if self._next_flush:
            go = self._pend_ts <= np.uint64(self._next_flush)
            out = self._pend_pos[go], self._pend_ts[go]
            self._pend_pos, self._pend_ts = self._pend_pos[~go], self._pend_ts[~go]
        self._next_flush = self._max_ts
        return out


class LiveOrder:
    """Each row's place in perf's processing order, over a stream read so far (see the
    module doc)."""

    def __init__(self, rec: Recording, store: ColumnStore | None = None) -> None:
        self.rec = rec
        self.delivered = 0
        #: per row its place in perf's processing order (-1: not delivered yet)
        self.seq = Growing(store, "seq", "i8")
        self.reader = TaskRecordReader(rec)
        self.events = OrderedEvents()

    def frontier(self) -> int:
        """The first row not delivered yet (every row before it has its place)."""
        return self.events.first_pending()

    def advance(self, final: bool = False, upto: int | None = None) -> np.ndarray:
        """Take the rows read since the last call (up to row ``upto``, default every
        row); the rows delivered now, in perf's processing order (``final``: the end of
        the stream flushes every queued one)."""
        rec = self.rec
        lo = self.events.read
        hi = len(rec.columns) if upto is None else upto
        typ = rec.columns["type"][lo:hi]
        fe = np.flatnonzero(np.isin(typ, _FORK_EXIT)) + lo
        times = queue_times(rec, trailer_times(rec, self.reader, fe), lo, hi)
        if unordered(rec):  # (perf processes such a file in file order)
            times[:] = _NO_TIME
        rows = self.events.feed(times, typ == RecordType.FINISHED_ROUND, final)
        seq = self.seq.reserve(hi)
        seq[self.seq.n:hi] = -1
        self.seq.n = hi
        seq[rows] = np.arange(self.delivered, self.delivered + len(rows), dtype=np.int64)
        self.delivered += len(rows)
        return rows


class LiveThreads:
    """perf's threads and maps over a stream read so far: :meth:`advance` gives the
    thread model of what perf has processed (see the module doc)."""

    def __init__(self, rec: Recording) -> None:
        self.rec = rec
        self.store = _temporary_store()
        self.order = LiveOrder(rec, self.store)
        arch = rec.feature(Feature.ARCH) or os.uname().machine
        self.replay = Replay(x86_64=arch == "x86_64")
        for e in feature_build_ids(rec):
            self.replay.build_id(e)
        self.replay.idle()
        self._threads = np.zeros(0, np.int64)  # (tid, pid) keys of the samples met, sorted
        #: rows delivered by each advance (a counter of the work done)
        self.delivered: list[int] = []

    def advance(self, final: bool = False, upto: int | None = None) -> ThreadModel:
        """The rows read since the last call (up to row ``upto``), delivered and
        replayed; the model now."""
        rec = self.rec
        rows = self.order.advance(final, upto)
        self.delivered.append(len(rows))
        seq = self.order.seq.view
        c = rec.columns
        typ = c["type"][rows]
        replayed = np.isin(typ, _TASK_TYPES)
        # the first sample of a thread (in processing order) can change it: the rest
        # find it as it is (ThreadModel._touch_rows)
        s = np.flatnonzero(typ == RecordType.SAMPLE)
        key = (c["tid"][rows[s]].astype(np.int64) << np.int64(32)) | (
            c["pid"][rows[s]].astype(np.int64) & np.int64(0xFFFFFFFF))
        uk, first = np.unique(key, return_index=True)
        new = ~np.isin(uk, self._threads)
        replayed[s[first[new]]] = True
        self._threads = np.union1d(self._threads, uk[new])
        todo = rows[replayed]
        for lo in range(0, len(todo), _EVENTS):
            ThreadModel.replay_block(rec, self.order.reader, self.replay, seq,
                                     todo[lo:lo + _EVENTS])
        return ThreadModel(rec, self.replay, seq, live=True)
