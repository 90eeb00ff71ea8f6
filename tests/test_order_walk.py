"""The compiled processing-order walk (``symbols.orderwalk``) against two oracles.

* A plain Python model of perf 6.1's ``ordered_events`` written from its source
  (tools/perf/util/ordered-events.c, session.c), record by record: a record without a time is
  delivered when read; a queued one waits; ``FINISHED_ROUND`` delivers the queue's records of
  time <= ``next_flush`` in (time, queueing) order, then sets ``next_flush`` to
  ``max_timestamp`` (which the first record queued into an empty queue resets); the end
  delivers everything.  Random inputs: ordered, jittered as per-CPU buffers are, and
  unordered (older than what was delivered).
* The numpy :func:`~perftui.symbols.tasks.orderplain.processing_order` (the plain engine's,
  which the perf differential tests pin too) on every corpus recording and fuzz regression.

And the first sample of each (tid, pid) in processing order, both engines', against a dict
walk.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import RECORDINGS, corpus_path, skip_or_fail
from perftui.perfdata import RecordType, open_recording
from perftui.symbols.tasks import orderplain, orderwalk
from perftui.symbols.tasks.order import processing_seq, queue_times
from perftui.symbols.tasks.orderplain import processing_order
from perftui.symbols.tasks.orderwalk import walk_seq

FIRST_SAMPLES = [pytest.param(orderwalk.first_samples, id="compiled"),
                 pytest.param(orderplain.first_samples, id="plain")]


def perf_model(ts: list[int], is_round: list[bool]) -> list[int]:
    """Read positions in the order perf 6.1 delivers them (ts 0: not queued)."""
    out: list[int] = []
    queue: list[tuple[int, int]] = []  # (time, queueing position)
    next_flush = max_ts = 0
    for i, (t, rnd) in enumerate(zip(ts, is_round, strict=True)):
        if t:
            if not queue:
                max_ts = t  # queue_event: the first record of an empty queue
            max_ts = max(max_ts, t)
            queue.append((t, i))
            continue
        out.append(i)
        if rnd and queue:  # OE_FLUSH__ROUND (an empty queue: nothing, next_flush kept)
            queue.sort()
            go = [e for e in queue if next_flush and e[0] <= next_flush]
            out += [p for _, p in go]
            queue = queue[len(go):]
            next_flush = max_ts
    out += [p for _, p in sorted(queue)]  # OE_FLUSH__FINAL
    return out


def walk(ts: list[int], is_round: list[bool]) -> list[int]:
    seq = np.full(len(ts), -1, np.int32)  # as the thread model's (one compiled variant)
    typ = np.where(is_round, RecordType.FINISHED_ROUND, RecordType.SAMPLE).astype(np.uint16)
    walk_seq(np.array(ts, np.uint64), typ, int(RecordType.FINISHED_ROUND), np.zeros(0, np.int64),
             seq)
    order = np.empty(len(ts), np.int64)
    order[seq] = np.arange(len(ts))
    return order.tolist()


@st.composite
def streams(draw: st.DrawFn) -> tuple[list[int], list[bool]]:
    n = draw(st.integers(0, 150))
    cpus = draw(st.integers(1, 5))
    jitter = draw(st.integers(0, 60))
    clock = [draw(st.integers(1, 50)) for _ in range(cpus)]
    ts: list[int] = []
    rnd: list[bool] = []
    for _ in range(n):
        kind = draw(st.sampled_from("qqqqqir"))
        if kind == "r":
            ts.append(0)
            rnd.append(True)
            continue
        rnd.append(False)
        if kind == "i":
            ts.append(0)
            continue
        c = draw(st.integers(0, cpus - 1))
        clock[c] += draw(st.integers(0, 9))
        ts.append(max(1, clock[c] - draw(st.integers(0, jitter))))
    return ts, rnd


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(streams())
def test_walk_is_perfs_ordered_events(stream: tuple[list[int], list[bool]]) -> None:
    ts, rnd = stream
    assert walk(ts, rnd) == perf_model(ts, rnd)


def test_walk_edge_cases() -> None:
    assert walk([], []) == []
    assert walk([0, 0], [True, True]) == [0, 1]
    # equal times keep their queueing order, across rounds too
    ts, rnd = [5, 5, 0, 5, 0, 0, 5], [False, False, True, False, True, True, False]
    assert walk(ts, rnd) == perf_model(ts, rnd)
    # a record older than what a round delivered (perf's "unordered events")
    ts, rnd = [9, 0, 10, 0, 3, 0, 0], [False, True, False, True, False, True, False]
    assert walk(ts, rnd) == perf_model(ts, rnd) == [1, 3, 0, 5, 4, 2, 6]
    # the largest times sort last, not as negatives
    big = 2**64 - 2
    assert walk([big, 1, 0], [False, False, False]) == [2, 1, 0]


@pytest.mark.parametrize("rel", [r for r in RECORDINGS if not r.startswith("hotspot/")])
def test_seq_is_the_numpy_order(rel: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PERFTUI_ENGINE", "compiled")  # (these recordings are small)
    path = corpus_path(rel)
    if not path.is_file():
        skip_or_fail(f"{rel}: not in the corpus")
    rec = open_recording(path)
    rec.build_index()
    times = queue_times(rec)
    order = processing_order(rec, times)
    seq = processing_seq(rec, times)
    assert len(seq) == len(order)
    assert np.array_equal(seq[order], np.arange(len(order)))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(-1, 3), st.booleans()), max_size=200),
       st.randoms())
@pytest.mark.parametrize("first_samples", FIRST_SAMPLES)
def test_first_samples_is_a_dict_walk(first_samples: Callable[..., np.ndarray],
                                      rows: list[tuple[int, int, bool]], rnd: object) -> None:
    typ = np.array([RecordType.SAMPLE if s else RecordType.MMAP for _, _, s in rows], np.uint16)
    tid = np.array([t for t, _, _ in rows], np.int32)
    pid = np.array([p for _, p, _ in rows], np.int32)
    seq = np.arange(len(rows), dtype=np.int32)
    rnd.shuffle(seq)  # type: ignore[attr-defined]
    first: dict[tuple[int, int], int] = {}
    for r, (t, p, s) in enumerate(rows):
        if s and ((t, p) not in first or seq[r] < seq[first[t, p]]):
            first[t, p] = r
    got = first_samples(typ, tid, pid, seq, int(RecordType.SAMPLE))
    assert got.tolist() == sorted(first.values())


@pytest.mark.parametrize("first_samples", FIRST_SAMPLES)
def test_first_samples_many_threads(first_samples: Callable[..., np.ndarray]) -> None:
    """Thousands of (tid, pid) pairs (the table grows), tids and pids up to 2**31 - 1 and -1."""
    rng = np.random.default_rng(3)
    n = 40_000
    tid = rng.integers(0, 3000, n).astype(np.int32)
    tid[::7] = 2**31 - 1 - tid[::7]
    pid = np.where(rng.random(n) < 0.2, -1, tid).astype(np.int32)
    typ = np.where(rng.random(n) < 0.9, RecordType.SAMPLE, RecordType.COMM).astype(np.uint16)
    seq = rng.permutation(n).astype(np.int32)
    first: dict[tuple[int, int], int] = {}
    for r in np.flatnonzero(typ == RecordType.SAMPLE).tolist():
        k = (int(tid[r]), int(pid[r]))
        if k not in first or seq[r] < seq[first[k]]:
            first[k] = r
    assert len(first) > 3000
    got = first_samples(typ, tid, pid, seq, int(RecordType.SAMPLE))
    assert got.tolist() == sorted(first.values())
