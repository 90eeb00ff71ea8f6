"""The order in which perf 6.1 applies a recording's records (its "ordered events").

``perf script`` and ``perf report`` do not process records in file order.  Read from
tools/perf/util/session.c and ordered-events.c (perf 6.1):

* A kernel record whose time perf can parse (a SAMPLE with ``PERF_SAMPLE_TIME``; any other
  kernel record through its ``sample_id`` trailer when ``sample_id_all`` is set) and whose
  time is neither 0 nor ``~0`` is *queued*.  Every other record is *delivered at once*, at its
  place in the file: perf-tool records, records of attrs without a time, and records perf
  synthesized with an all-zero trailer (``ordered_events__queue`` returns ``-ETIME`` for time
  0).  So a synthesized COMM at time 0 that sits after queued samples still applies before
  them.
* Each ``FINISHED_ROUND`` flushes the queued records whose time is at most ``next_flush``,
  then sets ``next_flush`` to the newest queued time (``OE_FLUSH__ROUND``); the first round
  flushes nothing.  The end of the input flushes everything (``OE_FLUSH__FINAL``).
* A flush delivers in time order; records of equal time keep their queueing order (file
  order): ``queue_event`` inserts a record after every queued record of the same time.
* File mode: when the first attr lacks ``sample_id_all`` perf falls back to unordered
  processing (file order) for the whole file (``__perf_session__new``).  Pipe mode skips that
  check (the attrs are not known yet), so only the records with a time are queued.

The fast path computes the delivery round of every queued record with numpy, assuming
``next_flush`` is the running maximum of the queued times.  That holds unless a record older
than an already delivered one arrives (perf counts these as "unordered events"); then the
rounds are replayed one by one, as perf does, keeping ``max_timestamp`` exactly.
"""

from __future__ import annotations

import numpy as np

from ..perfdata import Recording, RecordType
from ..perfdata.constants import USER_TYPE_START

_FORK_EXIT = (RecordType.FORK, RecordType.EXIT)
_NO_TIME = np.uint64(0)
_ALL_ONES = np.uint64(2**64 - 1)


def queue_times(rec: Recording, fork_exit_times: dict[int, int] | None = None) -> np.ndarray:
    """perf's ordering time of every index row; 0 where perf delivers the record at once.

    ``fork_exit_times`` gives the trailer time of FORK/EXIT rows when known (the index falls
    back to the body time of those records, which perf does not use for ordering).
    """
    c = rec.columns
    n = len(c["type"])
    typ = c["type"]
    times = c["time"].astype(np.uint64, copy=True)
    kernel = typ < USER_TYPE_START
    times[~kernel] = _NO_TIME
    if rec.attrs:
        a0 = rec.attrs[0]
        trailer_time = a0.sample_id_all and "time" in a0.trailer_offsets()
        non_sample = kernel & (typ != RecordType.SAMPLE)
        if not trailer_time:
            times[non_sample] = _NO_TIME
    fe = np.nonzero(np.isin(typ, _FORK_EXIT))[0]
    if len(fe):
        known = fork_exit_times or {}
        times[fe] = np.array([known.get(int(i), 0) for i in fe], dtype=np.uint64)
    times[times == _ALL_ONES] = _NO_TIME
    if n and (c["attr"] < 0).any():
        times[c["attr"] < 0] = _NO_TIME  # perf cannot parse a record of an unknown id
    return times


def unordered(rec: Recording) -> bool:
    """True when perf 6.1 processes this recording in file order (no ``sample_id_all``)."""
    return rec.mode != "pipe" and bool(rec.attrs) and not rec.attrs[0].sample_id_all


def processing_order(rec: Recording, times: np.ndarray) -> np.ndarray:
    """Index rows in the order perf 6.1 delivers them, given :func:`queue_times`."""
    base = rec.merged_order().astype(np.int64)
    if unordered(rec) or not len(base):
        return base
    n = len(base)
    ts = times[base]
    is_round = rec.columns["type"][base] == RecordType.FINISHED_ROUND
    queued = ts != _NO_TIME
    round_pos = np.nonzero(is_round)[0]  # file positions of the rounds
    deliver = _delivery_rounds(ts, queued, is_round)
    if deliver is None:
        deliver = _replay_rounds(ts, queued, is_round)
    # group: the file position a record is delivered at (its own, its round's, or the end)
    group = np.arange(n, dtype=np.int64)
    qpos = np.nonzero(queued)[0]
    k = deliver[qpos]
    at_end = k >= len(round_pos)
    g = np.full(len(qpos), n, dtype=np.int64)
    g[~at_end] = round_pos[k[~at_end]]
    group[qpos] = g
    sub = np.where(queued, ts, _NO_TIME)
    perm = np.lexsort((np.arange(n), sub, group))
    return base[perm]


def _round_index(is_round: np.ndarray) -> np.ndarray:
    """For each file position, how many FINISHED_ROUNDs precede it."""
    out: np.ndarray = np.cumsum(is_round) - is_round
    return out


def _delivery_rounds(ts: np.ndarray, queued: np.ndarray, is_round: np.ndarray
                     ) -> np.ndarray | None:
    """The 0-based round that delivers each queued record (``R`` = the final flush), or
    None when an unordered record makes the running-maximum shortcut inexact."""
    n_rounds = int(is_round.sum())
    r = _round_index(is_round)
    out = np.full(len(ts), n_rounds, dtype=np.int64)
    qpos = np.nonzero(queued)[0]
    if not len(qpos) or not n_rounds:
        return out
    qts, qr = ts[qpos], r[qpos]
    # max queued time read before round k (k = 0..R-1), then the limit of round k is the
    # max before round k-1: round 0 flushes nothing
    seg_max = np.zeros(n_rounds + 1, dtype=np.uint64)
    np.maximum.at(seg_max, qr, qts)
    before = np.maximum.accumulate(seg_max)[:n_rounds]  # max read before round k+1 ...
    limit = np.zeros(n_rounds, dtype=np.uint64)
    limit[1:] = before[:-1]  # round k (0-based) flushes up to the max read before round k-1
    # earliest round after the record's own read position whose limit covers it
    first = np.searchsorted(limit, qts, side="left")
    k = np.maximum(first, qr)
    k = np.minimum(k, n_rounds)
    # verify: no record may be older than what was already delivered when it is read
    delivered_max = np.zeros(n_rounds + 1, dtype=np.uint64)
    np.maximum.at(delivered_max, k, qts)
    last_flush = np.maximum.accumulate(delivered_max)
    seen = np.zeros(n_rounds + 1, dtype=np.uint64)
    seen[1:] = last_flush[:n_rounds]  # delivered before the record's segment is read
    if (qts < seen[qr]).any():
        return None
    out[qpos] = k
    return out


def _replay_rounds(ts: np.ndarray, queued: np.ndarray, is_round: np.ndarray) -> np.ndarray:
    """Exact replay of perf's rounds (one numpy step per FINISHED_ROUND)."""
    n_rounds = int(is_round.sum())
    r = _round_index(is_round)
    out = np.full(len(ts), n_rounds, dtype=np.int64)
    qpos = np.nonzero(queued)[0]
    qts, qr = ts[qpos], r[qpos]
    bounds = np.searchsorted(qr, np.arange(n_rounds + 1), side="left")
    pend_pos = np.empty(0, dtype=np.int64)
    pend_ts = np.empty(0, dtype=np.uint64)
    next_flush = 0
    max_ts = 0
    for k in range(n_rounds):
        lo, hi = bounds[k], bounds[k + 1] if k + 1 <= n_rounds else len(qpos)
        seg_ts = qts[lo:hi]
        if len(seg_ts):
            seg_max = int(seg_ts.max())
            max_ts = seg_max if not len(pend_ts) else max(max_ts, seg_max)
            pend_pos = np.concatenate([pend_pos, qpos[lo:hi]])
            pend_ts = np.concatenate([pend_ts, seg_ts])
        if not len(pend_ts):
            continue  # an empty queue: nothing flushed, next_flush unchanged
        if next_flush:
            go = pend_ts <= np.uint64(next_flush)
            out[pend_pos[go]] = k
            pend_pos, pend_ts = pend_pos[~go], pend_ts[~go]
        next_flush = max_ts
    return out
