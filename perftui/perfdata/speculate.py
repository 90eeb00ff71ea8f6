"""The numpy record walk: record starts found many at a time where the stream holds only
kernel records (the common case between perf's own records)."""

from __future__ import annotations

import threading
from array import array

import numpy as np

from .constants import RecordType

SPECULATE_MIN = 4096  # bytes left before the numpy walk is worth trying
SPECULATE_WORDS = 1 << 19  # 4 MiB of words per numpy window
KERNEL_TYPE_LAST = int(RecordType.CALLCHAIN_DEFERRED)  # the last kernel record type
T_ROUND = int(RecordType.FINISHED_ROUND)  # header only, common between kernel records
# (type and size bits a header may not have, size bits of which one must be set), per order
_MASKS = {"<": (np.uint64(0x0007_0000_FFFF_FF80), np.uint64(0xFFF8_0000_0000_0000)),
          ">": (np.uint64(0xFFFF_FF80_0000_0007), np.uint64(0xFFF8))}
_SIZE_MIN_LE = np.uint64(8 << 48)
_local = threading.local()


def _scratch(words: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Work arrays for a window of ``words`` words, kept per thread and reused."""
    bufs = getattr(_local, "bufs", None)
    if bufs is None or len(bufs[0]) < words:
        n = max(words, SPECULATE_WORDS)
        bufs = _local.bufs = (np.empty(n, np.uint64), np.empty(n, bool), np.empty(n, bool))
    t, a, b = bufs
    return t[:words], a[:words], b[:words]


def release_scratch() -> None:
    """Drop this thread's work arrays (~5 MB) once a walk is over."""
    _local.bufs = None


def speculate(buf: bytes | memoryview, pos: int, end: int, offs: array[int], order: str,
              limit: int) -> int:
    """Find record starts from ``pos`` with numpy, verifying the chain; returns where
    the plain loop must take over.

    Kernel records are 8-byte multiples, so after ``pos`` every header sits on a word
    boundary: the words that look like a header (type 1..22 or FINISHED_ROUND, size a
    multiple of 8) are candidates, and the records are the chain start -> start + size
    through them.  Where the chain leaves the candidates (a perf-tool record, a
    false candidate, the end of the window), the walk's plain loop
    (``Walker._scan``) resumes; at most ``limit`` starts end up in ``offs``.
    """
    words = min((end - pos) // 8, SPECULATE_WORDS, (limit - len(offs)) * 64)
    if words < 64:
        return pos
    w = np.frombuffer(buf, dtype=np.dtype(order + "u8"), count=words, offset=pos)
    # first cut, two whole-word tests: type < 128 with size a multiple of 8, size >= 8
    # (into reused buffers: no fresh pages for each window); one candidate a record
    tmp, ok1, ok2 = _scratch(words)
    cut, size_mask = _MASKS[order]
    np.bitwise_and(w, cut, out=tmp)
    np.equal(tmp, 0, out=ok1)
    if order == "<":  # size >= 8: a word >= 8 << 48
        np.greater_equal(w, _SIZE_MIN_LE, out=ok2)
    else:
        np.bitwise_and(w, size_mask, out=tmp)
        np.not_equal(tmp, 0, out=ok2)
    ok1 &= ok2
    cand = np.flatnonzero(ok1)
    if not len(cand) or cand[0] != 0:
        return pos
    x = w[cand]
    if order == "<":
        typ = x & np.uint64(0xFFFFFFFF)
        size = (x >> np.uint64(48)).astype(np.int64)
    else:
        typ = x >> np.uint64(32)
        size = (x & np.uint64(0xFFFF)).astype(np.int64)
    ok = ((typ - np.uint64(1)) < np.uint64(KERNEL_TYPE_LAST)) | (typ == np.uint64(T_ROUND))
    cand, size = cand[ok], size[ok]
    if not len(cand) or cand[0] != 0:
        return pos
    nxt = cand + (size >> 3)
    bad = np.nonzero(nxt[:-1] != cand[1:])[0]
    room = limit - len(offs)
    parts = []
    taken = 0
    i = 0
    stop_word = -1
    for b in bad.tolist():
        if b < i:
            continue
        q = int(nxt[b])
        if q > words:  # record b runs past the window: the plain loop judges it
            parts.append(cand[i:b])
            stop_word = int(cand[b])
            break
        parts.append(cand[i:b + 1])
        taken += b + 1 - i
        j = int(np.searchsorted(cand, q))
        if taken >= room or j >= len(cand) or int(cand[j]) != q:
            stop_word = q
            break
        i = j
    else:
        # the rest is one verified run; its last record may leave the window
        last = len(cand) - 1
        if int(nxt[last]) <= words:
            parts.append(cand[i:])
            stop_word = int(nxt[last])
        else:
            parts.append(cand[i:last])
            stop_word = int(cand[last])
    if not parts:
        return pos
    run = np.concatenate(parts)
    if len(run) > room:
        stop_word = int(run[room])
        run = run[:room]
    offs.frombytes((run * 8 + pos).astype(np.int64).tobytes())
    return pos + 8 * stop_word
