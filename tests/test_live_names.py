"""A live pipe's names made a piece at a time (``symbols/tasks/livethreads``,
``symbols/naming/livenames``) against the whole recording's.

* perf 6.1's ordered-events queue fed a stream in random pieces (:class:`OrderedEvents`)
  delivers what test_order_walk's record-by-record model of perf's queue delivers, in the
  same order.
* On every corpus recording cut into pieces, each row's place equals the whole recording's
  :func:`processing_seq` (pinned to perf by test_order_walk and the perf differential
  tests), and every sample's names (thread, period, own location, frame by frame its stack
  and offsets) equal :func:`resolve_all`'s over the finished recording (held to perf by the
  corpus report tests); no sample is named twice (a counter: each piece names only the
  samples between the last piece's frontier and its own).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_names_compiled import _named, _same_partition
from test_order_walk import perf_model, streams

from conftest import RECORDINGS, corpus_path, skip_or_fail
from perftui.perfdata import RecordType, open_recording
from perftui.symbols.modules.modfiles import ModuleFiles
from perftui.symbols.modules.sectionmap import build_section_map
from perftui.symbols.naming.livenames import LiveNames
from perftui.symbols.naming.resolver import Resolver, SymbolOptions
from perftui.symbols.naming.samplelocs import resolve_all
from perftui.symbols.naming.samplestore import sample_rows_all
from perftui.symbols.tables.cache import SymbolCache
from perftui.symbols.tasks.livethreads import LiveThreads, OrderedEvents
from perftui.symbols.tasks.order import processing_seq, queue_times
from perftui.symbols.tasks.taskrecords import TaskRecordReader
from perftui.symbols.tasks.threads import trailer_times
from perftui.symbols.unwind.overlay import unwinds


def fed(ts: list[int], rnd: list[bool], cuts: list[int]) -> list[int]:
    q = OrderedEvents()
    out: list[int] = []
    bounds = [0, *sorted(c % (len(ts) + 1) for c in cuts), len(ts)]
    for k, (lo, hi) in enumerate(itertools.pairwise(bounds)):
        got = q.feed(np.array(ts[lo:hi], np.uint64), np.array(rnd[lo:hi], bool),
                     final=k == len(bounds) - 2)
        assert q.read == hi
        out += got.tolist()
    return out


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(streams(), st.lists(st.integers(0, 10**6), max_size=8))
def test_pieces_are_perfs_ordered_events(stream: tuple[list[int], list[bool]],
                                         cuts: list[int]) -> None:
    ts, rnd = stream
    assert fed(ts, rnd, cuts) == perf_model(ts, rnd)


def test_pieces_edge_cases() -> None:
    # a round's flush waits for the next round; what is queued after the last one for the end
    ts, rnd = [9, 0, 10, 0, 3, 0, 0], [False, True, False, True, False, True, False]
    for cuts in ([], [1], [2, 4], [1, 2, 3, 4, 5, 6]):
        assert fed(ts, rnd, cuts) == perf_model(ts, rnd) == [1, 3, 0, 5, 4, 2, 6]
    q = OrderedEvents()
    q.feed(np.array([5, 0, 7], np.uint64), np.array([False, True, False]))
    assert q.first_pending() == 0  # (the first round flushes nothing)


PIECES = (1, 3, 17)
LIVE = [r for r in RECORDINGS if not r.startswith("hotspot/")]
#: their samples carry DWARF user stacks: a live pipe names those whole (livepipe.py)
DWARF = ("perfparser/contentsize.data", "perfparser/cpp-inlining__cpp-inlining.perf.data",
         "perfparser/fork_static_gcc__perf.data.zstd")


def _pieces(n: int, k: int) -> list[int]:
    return sorted({n * i // k for i in range(1, k)} | {n})


def test_dwarf_ones_are_named_whole() -> None:
    for rel in DWARF:
        path = corpus_path(rel)
        if not path.is_file():
            skip_or_fail(f"{rel}: not in the corpus")
        rec = open_recording(path)
        rec.build_index()
        assert unwinds(rec), rel


@pytest.mark.slow
@pytest.mark.parametrize("rel", LIVE)
@pytest.mark.parametrize("k", PIECES)
def test_places_are_the_whole_recordings(rel: str, k: int) -> None:
    path = corpus_path(rel)
    if not path.is_file():
        skip_or_fail(f"{rel}: not in the corpus")
    rec = open_recording(path)
    rec.build_index()
    n = len(rec.columns)
    lt = LiveThreads(rec)
    ups = _pieces(n, k)
    for i, upto in enumerate(ups):
        lt.advance(final=i == len(ups) - 1, upto=upto)
    assert sum(lt.delivered) == n  # each row delivered once
    fe = rec.rows_of_type(RecordType.FORK, RecordType.EXIT)
    # the FORK/EXIT trailer times, as the whole recording's thread model reads them
    times = queue_times(rec, trailer_times(rec, TaskRecordReader(rec), fe) if len(fe) else None)
    assert np.array_equal(lt.order.seq.view, processing_seq(rec, times))


@pytest.mark.slow
@pytest.mark.parametrize("rel", [r for r in LIVE if r not in DWARF])
@pytest.mark.parametrize("k", PIECES)
def test_names_are_the_whole_recordings(rel: str, k: int) -> None:
    path = corpus_path(rel)
    if not path.is_file():
        skip_or_fail(f"{rel}: not in the corpus")
    rec = open_recording(path)
    rec.build_index()
    assert not unwinds(rec)
    whole = resolve_all(Resolver(rec), sample_rows_all(rec), callchains=True)
    rec = open_recording(path)  # (a fresh one: the whole pass set its chains overlay)
    rec.build_index()
    opts = SymbolOptions()
    live = LiveNames(rec, opts, True, build_section_map(rec), ModuleFiles.of(rec),
                     SymbolCache())
    n = len(rec.columns)
    ups = _pieces(n, k)
    frontiers = [0]
    for i, upto in enumerate(ups):
        sl = live.advance(final=i == len(ups) - 1, upto=upto)
        frontiers.append(live.named)
        assert np.all(np.diff(sl.rows) > 0)
    samples = rec.columns["type"] == RecordType.SAMPLE
    assert live.named_per_advance == [  # each piece names only its new samples
        int(samples[a:b].sum()) for a, b in itertools.pairwise(frontiers)]
    assert np.array_equal(sl.rows, whole.rows)
    assert sl.rank is not None and whole.rank is not None  # each sample's processing rank
    assert np.array_equal(sl.rank, whole.rank)
    assert _named(sl) == _named(whole)
    assert _same_partition(sl.stack, whole.stack)
    assert np.array_equal(sl.other_rows, whole.other_rows)
    names = [*sl.comm_names, ""]
    wnames = [*whole.comm_names, ""]
    assert [names[c] for c in sl.other_comm] == [wnames[c] for c in whole.other_comm]
    assert sl.thread_names == whole.thread_names
