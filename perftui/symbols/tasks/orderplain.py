"""perf 6.1's processing order by numpy: the plain engine's (:mod:`perftui.engine`).

:func:`processing_order` lists the index rows in the order perf delivers them (the inverse
of :func:`perftui.symbols.tasks.order.processing_seq`, which the thread model uses).  It
computes the delivery round of every queued record, assuming ``next_flush`` is the running
maximum of the queued times.  That holds unless a record older than an already delivered
one arrives (perf counts these as "unordered events"); then the rounds are replayed one by
one, as perf does, keeping ``max_timestamp`` exactly (:func:`_replay_rounds`).  Moved here
from perftui (it was the production path before the compiled walk): only tests call it.
"""

from __future__ import annotations

import numpy as np

from ...perfdata import Recording, RecordType
from ...perfdata.colstore import scratch
from .order import unordered

_NO_TIME = np.uint64(0)
_BLOCK = 1 << 20  # elements per step of a blockwise pass


def _positions_of(mask: np.ndarray, dtype: type) -> np.ndarray:
    """``np.flatnonzero(mask)`` as ``dtype`` in a mapped scratch array, made in blocks."""
    counts = [int(np.count_nonzero(mask[lo:lo + _BLOCK])) for lo in range(0, len(mask), _BLOCK)]
    out = scratch(dtype, sum(counts))
    at = 0
    for lo, cnt in zip(range(0, len(mask), _BLOCK), counts, strict=True):
        out[at:at + cnt] = np.flatnonzero(mask[lo:lo + _BLOCK]) + lo
        at += cnt
    return out


def first_samples(typ: np.ndarray, tid: np.ndarray, pid: np.ndarray, seq: np.ndarray,
                  sample: int) -> np.ndarray:
    """The SAMPLE rows (``typ == sample``) that come first, in processing order (``seq``),
    among the samples of their (tid, pid), ascending."""
    rows = np.flatnonzero(typ == sample)
    key = (tid[rows].astype(np.int64) << np.int64(32)) | (
        pid[rows].astype(np.int64) & np.int64(0xFFFFFFFF))
    by = np.lexsort((seq[rows], key))
    k = key[by]
    first = np.ones(len(k), bool)
    first[1:] = k[1:] != k[:-1]
    out: np.ndarray = np.sort(rows[by][first])
    return out


def processing_order(rec: Recording, times: np.ndarray) -> np.ndarray:
    """Index rows in the order perf 6.1 delivers them, given :func:`queue_times`.

    That is the rows sorted by (where they are delivered, their time, their place in the
    file): a record delivered at once is delivered at its own place (time 0), a queued
    one at the round that flushes it (or the end).  Built without sorting the records
    delivered at once: they stay in file order, and each goes just before the queued
    records delivered at its place or later (its time, 0, is below theirs)."""
    n = len(rec.columns)
    # merged_order is the file order unless several files of a directory are merged
    in_file_order = rec.mode != "directory" or len(rec.index.stream_starts) < 2
    if unordered(rec) or not n or not in_file_order:
        base = np.asarray(rec.merged_order(), dtype=np.int64)
        if unordered(rec) or not n:
            return base
    else:
        base = np.zeros(0, np.int64)  # not needed: the file order
    ts = times[:n] if in_file_order else times[base]
    typ = rec.columns["type"]
    is_round = (typ[:n] if in_file_order else typ[base]) == RecordType.FINISHED_ROUND
    queued = ts != _NO_TIME
    deliver = _delivery_rounds(ts, queued, is_round)
    if deliver is None:
        deliver = _replay_rounds(ts, queued, is_round)
    round_pos = np.nonzero(is_round)[0]  # file positions of the rounds
    del is_round
    small = np.int32 if n < 2**31 - 2 else np.int64  # positions and rounds: kept per record
    # the per-record temporaries below live in mapped scratch files; only the sort's
    # permutation is anonymous memory
    qpos = _positions_of(queued, small)
    k = scratch(np.int64, len(qpos))
    tq = scratch(np.uint64, len(qpos))
    for lo in range(0, len(qpos), _BLOCK):
        q = qpos[lo:lo + _BLOCK]
        k[lo:lo + _BLOCK] = deliver[q]
        tq[lo:lo + _BLOCK] = ts[q]
    del deliver, ts
    # the queued records by their round, then time, then file position (stable sorts):
    # one key when (round, time) fits an int64, else two
    t0 = int(tq.min()) if len(tq) else 0
    span = int(tq.max()) - t0 + 1 if len(tq) else 1
    if (len(round_pos) + 1) * span < 2**63:
        tq -= np.uint64(t0)  # in place, as everything here: 8 bytes a record each
        key = tq.view(np.int64)
        k *= span
        key += k
        del k
        by = stable_argsort(key)
        qpos = np.take(qpos, by, out=scratch(qpos.dtype, len(qpos)))
        k = np.take(key, by, out=scratch(np.int64, len(by)))
        del key, tq, by
        k //= span
    else:
        by = np.lexsort((tq, k))
        del tq
        qpos, k = qpos[by], k[by]
        del by
    q_at = scratch(np.int64, len(k))  # where each is delivered (n: the end)
    for lo in range(0, len(k), _BLOCK):
        kb = k[lo:lo + _BLOCK]
        qb = np.full(len(kb), n, dtype=np.int64)
        mid = kb < len(round_pos)
        qb[mid] = round_pos[kb[mid]]
        q_at[lo:lo + _BLOCK] = qb
    del k
    rest = np.nonzero(~queued)[0]
    del queued
    slot = np.searchsorted(q_at, rest, side="left") + np.arange(len(rest), dtype=np.int64)
    del q_at
    out = scratch(np.int64, n)
    free = np.ones(n, dtype=bool)
    free[slot] = False
    out[slot] = rest if in_file_order else base[rest]
    at = 0
    for lo in range(0, n, _BLOCK):  # the queued records fill the free slots, in blocks
        f = np.flatnonzero(free[lo:lo + _BLOCK]) + lo
        q = qpos[at:at + len(f)]
        out[f] = q if in_file_order else base[q]
        at += len(f)
    return out


def stable_argsort(key: np.ndarray, bucket: int = 1 << 20) -> np.ndarray:
    """``np.argsort(key, kind="stable")`` in a mapped scratch array, with anonymous memory
    for about ``bucket`` elements, not for all of them: the keys are spread into buckets
    of key ranges (splitters taken from a sample of the keys; equal keys share a bucket),
    in file order, then each bucket is sorted alone (a stable sort of its keys)."""
    n = len(key)
    if n <= bucket:
        return np.argsort(key, kind="stable")
    sample = np.sort(key[:: max(1, n // (1 << 16))])
    parts = -(-n // bucket)
    splitters = np.unique(sample[np.linspace(0, len(sample) - 1, parts + 1)[1:-1].astype(
        np.int64)])
    sizes = np.zeros(len(splitters) + 1, np.int64)
    for lo in range(0, n, _BLOCK):
        b = np.searchsorted(splitters, key[lo:lo + _BLOCK], side="right")
        sizes += np.bincount(b, minlength=len(sizes))
    starts = np.zeros(len(sizes) + 1, np.int64)
    np.cumsum(sizes, out=starts[1:])
    out = scratch(np.int64, n)
    fill = starts[:-1].copy()
    for lo in range(0, n, _BLOCK):  # each bucket's positions, ascending
        b = np.searchsorted(splitters, key[lo:lo + _BLOCK], side="right")
        cnt = np.bincount(b, minlength=len(sizes))
        by = np.argsort(b, kind="stable")
        del b
        by += lo
        f = 0
        for i in np.flatnonzero(cnt).tolist():
            c = int(cnt[i])
            out[fill[i]:fill[i] + c] = by[f:f + c]
            fill[i] += c
            f += c
    for i in range(len(sizes)):  # then sorted by key (a tie keeps the file order)
        a, z = int(starts[i]), int(starts[i + 1])
        if z - a > 1:
            pos = out[a:z]
            out[a:z] = pos[np.argsort(key[pos], kind="stable")]
    return out


def _queued(ts: np.ndarray, queued: np.ndarray, is_round: np.ndarray, rt: type
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """File position, rounds before it, and time of each queued record, in mapped scratch
    arrays made in blocks (a queued record is never a round: those have no time)."""
    qpos = _positions_of(queued, np.int64)
    qr = scratch(rt, len(qpos))
    qts = scratch(np.uint64, len(qpos))
    before_block = 0
    for lo in range(0, len(ts), _BLOCK):
        a, b = np.searchsorted(qpos, [lo, lo + _BLOCK])
        rb: np.ndarray = np.cumsum(is_round[lo:lo + _BLOCK], dtype=rt) + before_block
        qr[a:b] = rb[qpos[a:b] - lo]
        qts[a:b] = ts[qpos[a:b]]
        before_block = int(rb[-1])
    return qpos, qr, qts


def _delivery_rounds(ts: np.ndarray, queued: np.ndarray, is_round: np.ndarray
                     ) -> np.ndarray | None:
    """The 0-based round that delivers each queued record (``R`` = the final flush), or
    None when an unordered record makes the running-maximum shortcut inexact."""
    n_rounds = int(is_round.sum())
    # (round numbers as int32 while they fit, temporaries freed as soon as done: each
    # costs 4 or 8 bytes a record)
    rt = np.int32 if n_rounds < 2**31 - 1 else np.int64
    out = scratch(rt, len(ts))
    out.fill(n_rounds)
    if not n_rounds or not queued.any():
        return out
    qpos, qr, qts = _queued(ts, queued, is_round, rt)
    # max queued time read before round k (k = 0..R-1), then the limit of round k is the
    # max before round k-1: round 0 flushes nothing
    seg_max = np.zeros(n_rounds + 1, dtype=np.uint64)
    np.maximum.at(seg_max, qr, qts)
    before = np.maximum.accumulate(seg_max)[:n_rounds]  # max read before round k+1 ...
    limit = np.zeros(n_rounds, dtype=np.uint64)
    limit[1:] = before[:-1]  # round k (0-based) flushes up to the max read before round k-1
    # earliest round after the record's own read position whose limit covers it
    k = scratch(rt, len(qts))
    for lo in range(0, len(qts), _BLOCK):
        kb = np.searchsorted(limit, qts[lo:lo + _BLOCK], side="left")
        np.maximum(kb, qr[lo:lo + _BLOCK], out=kb)
        np.minimum(kb, n_rounds, out=kb)
        k[lo:lo + _BLOCK] = kb
    # verify: no record may be older than what was already delivered when it is read
    delivered_max = np.zeros(n_rounds + 1, dtype=np.uint64)
    np.maximum.at(delivered_max, k, qts)
    last_flush = np.maximum.accumulate(delivered_max)
    seen = np.zeros(n_rounds + 1, dtype=np.uint64)
    seen[1:] = last_flush[:n_rounds]  # delivered before the record's segment is read
    step = 1 << 20
    if any((qts[i:i + step] < seen[qr[i:i + step]]).any() for i in range(0, len(qts), step)):
        return None
    del qts, qr
    for lo in range(0, len(k), _BLOCK):
        out[qpos[lo:lo + _BLOCK]] = k[lo:lo + _BLOCK]
    return out


def _replay_rounds(ts: np.ndarray, queued: np.ndarray, is_round: np.ndarray) -> np.ndarray:
    """Exact replay of perf's rounds (one numpy step per FINISHED_ROUND)."""
    n_rounds = int(is_round.sum())
    rt = np.int32 if n_rounds < 2**31 - 1 else np.int64
    out = scratch(rt, len(ts))
    out.fill(n_rounds)
    qpos, qr, qts = _queued(ts, queued, is_round, rt)
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
