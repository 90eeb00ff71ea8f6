"""perf 6.1's processing order as one compiled walk over the rows (see :mod:`.order`).

The walk replays ``ordered_events`` round by round, as perf does: records delivered at once
get the next position when they are read; a queued record waits in a queue kept sorted by
(time, file position), and each ``FINISHED_ROUND`` delivers the queue's head up to
``next_flush``, then sets ``next_flush`` to the newest time queued (``max_timestamp``); the
end delivers the rest.  It writes each row's position in that order (``seq``) straight away,
so neither the order nor a sort key per row is ever made: per round it sorts only the
records read since the last round and merges them into the waiting ones.

Why compiled code (numba), by measurement: the numpy way (:func:`.order.processing_order`,
kept as the reference the tests compare with) needs a delivery round per record, a global
stable sort and several gathers per record: ~1.1 s on the 4.85 M-record bench recording,
where this walk takes ~0.07 s and no per-record temporary.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_NO_TIME = np.uint64(0)


@njit(cache=True, nogil=True)
def _grow(a: np.ndarray, need: int) -> np.ndarray:
    if need <= len(a):
        return a
    out = np.empty(max(need, 2 * len(a)), a.dtype)
    out[:len(a)] = a
    return out


@njit(cache=True, nogil=True, inline="always")
def _merge(at: np.ndarray, ap: np.ndarray, a: int, a_end: int, bt: np.ndarray, bp: np.ndarray,
           b: int, b_end: int, out_t: np.ndarray, out_p: np.ndarray, k: int) -> None:
    """Merge the sorted runs ``at[a:a_end]`` and ``bt[b:b_end]`` (positions alongside) into
    ``out_t``/``out_p`` from ``k``; on equal times the first run's record goes first (it was
    read first)."""
    while a < a_end or b < b_end:
        if b >= b_end or (a < a_end and at[a] <= bt[b]):
            out_t[k] = at[a]
            out_p[k] = ap[a]
            a += 1
        else:
            out_t[k] = bt[b]
            out_p[k] = bp[b]
            b += 1
        k += 1


@njit(cache=True, nogil=True)
def _sort_runs(t: np.ndarray, p: np.ndarray, m: int) -> None:
    """Sort ``t[:m]`` (and ``p`` alongside) stably by merging its ascending runs pairwise: a
    round's records are a few per-CPU runs, each in time order, so this is ~log2(CPUs)
    passes where a general sort is ~log2(m)."""
    bounds = [0]
    for i in range(1, m):
        if t[i] < t[i - 1]:
            bounds.append(i)
    bounds.append(m)
    if len(bounds) <= 2:
        return
    tmp_t = np.empty(m, t.dtype)
    tmp_p = np.empty(m, p.dtype)
    while len(bounds) > 2:
        nb = [0]
        for r in range(0, len(bounds) - 1, 2):
            lo = bounds[r]
            if r + 2 >= len(bounds):  # an odd run out: copied as it is
                hi = bounds[r + 1]
                tmp_t[lo:hi] = t[lo:hi]
                tmp_p[lo:hi] = p[lo:hi]
                nb.append(hi)
                continue
            mid, hi = bounds[r + 1], bounds[r + 2]
            _merge(t, p, lo, mid, t, p, mid, hi, tmp_t, tmp_p, lo)
            nb.append(hi)
        t[:m] = tmp_t
        p[:m] = tmp_p
        bounds = nb


@njit(cache=True, nogil=True)
def walk_seq(ts: np.ndarray, typ: np.ndarray, round_type: int, rows: np.ndarray,
             seq: np.ndarray) -> None:
    """Fill ``seq[rows[i]]`` with the processing position of the i-th record read.

    ``ts[i]``: the ordering time of the i-th record read (0: delivered at once);
    ``typ[i]``: its type (``round_type``: a FINISHED_ROUND); ``rows``: the index row of
    each (empty: the i-th row itself).
    """
    n = len(ts)
    ident = len(rows) == 0
    pend_t = np.empty(1024, np.uint64)  # the queue, sorted by (time, read position)
    pend_p = np.empty(1024, np.int64)
    n_pend = 0
    seg_lo = 0  # read position of the first record since the last round
    seg_t = np.empty(1024, np.uint64)
    seg_p = np.empty(1024, np.int64)
    next_flush = np.uint64(0)
    max_ts = np.uint64(0)
    at = 0
    for i in range(n + 1):
        end = i == n
        if not end and ts[i] != _NO_TIME:
            continue  # queued: taken with its round's segment below
        if not end:
            seq[i if ident else rows[i]] = at
            at += 1
            if typ[i] != round_type:
                continue
        # a round (or the end): queue the records read since the last one
        m = 0
        # room for the whole segment at once: a call that returns an array costs numba's
        # atomic reference counting, and one per queued record was ~85% of this walk
        # (0.53 -> 0.07 s on the 4.85 M-record bench recording)
        seg_t = _grow(seg_t, i - seg_lo)
        seg_p = _grow(seg_p, i - seg_lo)
        for j in range(seg_lo, i):
            if ts[j] != _NO_TIME:
                seg_t[m] = ts[j]
                seg_p[m] = j
                m += 1
        seg_lo = i + 1
        if m:
            _sort_runs(seg_t, seg_p, m)  # stable: ties keep their read order
            seg_max = seg_t[m - 1]
            max_ts = seg_max if n_pend == 0 or seg_max > max_ts else max_ts
            # merge: a waiting record was read before every new one, so it goes first on ties
            out_t = np.empty(n_pend + m, np.uint64)
            out_p = np.empty(n_pend + m, np.int64)
            _merge(pend_t, pend_p, 0, n_pend, seg_t, seg_p, 0, m, out_t, out_p, 0)
            pend_t, pend_p = out_t, out_p
            n_pend += m
        if n_pend == 0:
            continue  # an empty queue: nothing flushed, next_flush unchanged
        if end:
            limit = n_pend
        elif next_flush == _NO_TIME:
            limit = 0  # the first round with a queue flushes nothing
        else:
            limit = int(np.searchsorted(pend_t[:n_pend], next_flush, side="right"))
        for k in range(limit):
            p = pend_p[k]
            seq[p if ident else rows[p]] = at
            at += 1
        pend_t = pend_t[limit:n_pend].copy()
        pend_p = pend_p[limit:n_pend].copy()
        n_pend -= limit
        next_flush = max_ts


@njit(cache=True, nogil=True, inline="always")  # (a call per row: not a call)
def _slot(keys: np.ndarray, used: np.ndarray, key: np.int64) -> int:
    mask = len(keys) - 1
    h = (np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)
    i = int(h) & mask
    while used[i] and keys[i] != key:
        i = (i + 1) & mask
    return i


@njit(cache=True, nogil=True)
def first_samples(typ: np.ndarray, tid: np.ndarray, pid: np.ndarray, seq: np.ndarray,
                  sample: int) -> np.ndarray:
    """The SAMPLE rows (``typ == sample``) that come first, in processing order (``seq``),
    among the samples of their (tid, pid), ascending."""
    cap = 1024
    keys = np.zeros(cap, np.int64)
    used = np.zeros(cap, np.bool_)
    best = np.zeros(cap, np.int64)  # the row of the earliest sample so far
    n_keys = 0
    for r in range(len(typ)):
        if typ[r] != sample:
            continue
        key = (np.int64(tid[r]) << np.int64(32)) | (np.int64(pid[r]) & np.int64(0xFFFFFFFF))
        i = _slot(keys, used, key)
        if used[i]:
            if seq[r] < seq[best[i]]:
                best[i] = r
            continue
        used[i] = True
        keys[i] = key
        best[i] = r
        n_keys += 1
        if 2 * n_keys > cap:  # rehash into a table twice the size
            old_k, old_u, old_b = keys, used, best
            cap *= 2
            keys = np.zeros(cap, np.int64)
            used = np.zeros(cap, np.bool_)
            best = np.zeros(cap, np.int64)
            for j in range(len(old_k)):
                if old_u[j]:
                    s = _slot(keys, used, old_k[j])
                    used[s] = True
                    keys[s] = old_k[j]
                    best[s] = old_b[j]
    out = np.empty(n_keys, np.int64)
    k = 0
    for j in range(cap):
        if used[j]:
            out[k] = best[j]
            k += 1
    out.sort()
    return out
