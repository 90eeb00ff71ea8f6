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

The thread model takes each row's place from :func:`processing_seq`: one compiled walk
(:mod:`.orderwalk`), or for a small recording the numpy way of the same order
(:mod:`.orderplain`, :mod:`perftui.engine`); the tests hold the two equal, and equal to a
record-by-record model of perf's queue.
"""

from __future__ import annotations

import numpy as np

from ...engine import compiled
from ...perfdata import Recording, RecordType
from ...perfdata.colstore import scratch
from ...perfdata.constants import USER_TYPE_START

_FORK_EXIT = (RecordType.FORK, RecordType.EXIT)
_NO_TIME = np.uint64(0)
_ALL_ONES = np.uint64(2**64 - 1)
_BLOCK = 1 << 20  # elements per step of a blockwise pass


def queue_times(rec: Recording, fork_exit_times: np.ndarray | None = None, lo: int = 0,
                hi: int | None = None) -> np.ndarray:
    """perf's ordering time of index rows ``lo:hi`` (default: every row); 0 where perf
    delivers the record at once.

    ``fork_exit_times`` gives the trailer time of each FORK/EXIT row among them (in row
    order; 0 when unknown): the index keeps the body time of those records, which perf
    does not use for ordering.  Without it they count as unknown.
    """
    c = rec.columns
    hi = len(c["time"]) if hi is None else hi
    typ, attr = c["type"], c["attr"]
    times = scratch(np.uint64, hi - lo)  # per record: in a mapped file
    a0 = rec.attrs[0] if rec.attrs else None
    # no trailer time: perf delivers a kernel record that is not a sample at once
    no_trailer = a0 is not None and not (a0.sample_id_all and "time" in a0.trailer_offsets())
    fe_parts = []
    for at in range(lo, hi, _BLOCK):  # in blocks: no temporary per record
        end = min(hi, at + _BLOCK)
        tb = c["time"][at:end].astype(np.uint64)
        tyb = typ[at:end]
        kernel = tyb < USER_TYPE_START
        tb[~kernel] = _NO_TIME
        if no_trailer:
            tb[kernel & (tyb != RecordType.SAMPLE)] = _NO_TIME
        times[at - lo:end - lo] = tb
        fe_parts.append(np.flatnonzero(np.isin(tyb, _FORK_EXIT)) + (at - lo))
    fe = np.concatenate(fe_parts) if fe_parts else np.zeros(0, np.int64)
    if len(fe):
        if fork_exit_times is None:
            times[fe] = 0
        else:
            if len(fork_exit_times) != len(fe):
                raise ValueError("one FORK/EXIT time per FORK/EXIT row is expected")
            times[fe] = fork_exit_times
    for at in range(lo, hi, _BLOCK):
        tb = times[at - lo:at - lo + _BLOCK]  # a view: cleared in place
        tb[tb == _ALL_ONES] = _NO_TIME
        tb[attr[at:at + len(tb)] < 0] = _NO_TIME  # perf cannot parse a record of an unknown id
    return times


def unordered(rec: Recording) -> bool:
    """True when perf 6.1 processes this recording in file order (no ``sample_id_all``)."""
    return rec.mode != "pipe" and bool(rec.attrs) and not rec.attrs[0].sample_id_all


def processing_seq(rec: Recording, times: np.ndarray) -> np.ndarray:
    """Each index row's position in perf 6.1's processing order, in a mapped scratch array
    (int32 while the rows fit), by one compiled walk (:mod:`.orderwalk`)."""
    n = len(rec.columns)
    seq = scratch(np.int32 if n < 2**31 - 2 else np.int64, n)
    in_file_order = rec.mode != "directory" or len(rec.index.stream_starts) < 2
    if unordered(rec) or not n or not in_file_order:
        base = np.asarray(rec.merged_order(), dtype=np.int64)
        if unordered(rec) or not n:
            seq[base] = np.arange(n, dtype=seq.dtype)
            return seq
    else:
        base = np.zeros(0, np.int64)
    if not compiled(n):  # a small recording: numba would cost more than it saves
        from .orderplain import processing_order

        seq[processing_order(rec, times)] = np.arange(n, dtype=seq.dtype)
        return seq
    from .orderwalk import walk_seq  # numba: only when a thread model is built

    ts = times[:n] if in_file_order else times[base]
    typ = rec.columns["type"]
    walk_seq(ts, typ[:n] if in_file_order else typ[base], int(RecordType.FINISHED_ROUND), base,
             seq)
    return seq
