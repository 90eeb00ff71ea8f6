"""The walk run ahead in a thread (``perfdata.prefetch``, ``Recording.chunks_ahead``): every
item in order, errors where they came, the thread stopped when the caller leaves; and the
chunks of a real recording, a truncated one and a compressed one the same as the plain
walk's (the plain walk is the oracle: its results are checked against perf elsewhere)."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from conftest import corpus_path, skip_or_fail
from perftui.demo import demo_path
from perftui.perfdata import open_recording
from perftui.perfdata.prefetch import Prefetch


def counted(n: int, made: list[int], fail_at: int | None = None,
            closed: list[bool] | None = None) -> Iterator[int]:
    try:
        for i in range(n):
            if i == fail_at:
                raise ValueError(f"bad item {i}")
            made.append(i)
            yield i
    finally:
        if closed is not None:
            closed.append(threading.current_thread() is not threading.main_thread())


def test_every_item_in_order() -> None:
    made: list[int] = []
    with Prefetch(counted(1000, made)) as ahead:
        assert list(ahead) == list(range(1000))


def test_an_error_comes_after_the_items_before_it() -> None:
    made: list[int] = []
    got: list[int] = []
    with pytest.raises(ValueError, match="bad item 7"), Prefetch(counted(20, made, 7)) as ahead:
        for x in ahead:
            got.append(x)
    assert got == list(range(7))


def test_leaving_early_stops_and_closes_the_iterator_in_its_thread() -> None:
    made: list[int] = []
    closed: list[bool] = []
    with Prefetch(counted(10_000, made, closed=closed), ahead=2) as ahead:
        for x in ahead:
            if x == 3:
                break
    assert closed == [True]  # its finally ran, in the walk's thread
    assert len(made) <= 3 + 1 + 2 + 1  # the item taken, the queue, the one being put
    assert not ahead._thread.is_alive()  # stopped, not left waiting on its queue


def test_it_runs_at_most_a_few_items_ahead() -> None:
    made: list[int] = []
    with Prefetch(counted(100, made), ahead=2) as ahead:
        it = iter(ahead)
        next(it)
        time.sleep(0.2)  # the thread runs as far as the queue lets it
        assert len(made) <= 1 + 2 + 1
        assert list(it) == list(range(1, 100))


def chunk_offsets(rec_path: Path, ahead: bool) -> tuple[list[tuple[int, list[int], int | None]],
                                                        list[str]]:
    rec = open_recording(rec_path, spill=False)
    out = []
    if ahead:
        with rec.chunks_ahead() as chunks:
            for src, ch in chunks:
                out.append((src, np.asarray(ch.offs).tolist(), ch.outer))
    else:
        for src, ch in rec.chunks():
            out.append((src, np.asarray(ch.offs).tolist(), ch.outer))
    return out, [str(e) for e in rec.errors]


@pytest.mark.parametrize("rel", ["perf61/perf-zstd.data", "linux-perf-data/sleep.compressed.data",
                                 "linux-perf-data/sleep.compressed2.data",
                                 "linux-perf-data/sleep.compressed.pipe.data"])
def test_chunks_ahead_equal_the_plain_walk_on_compressed_data(rel: str, tmp_path: Path) -> None:
    p = corpus_path(rel)
    if not p.exists():
        skip_or_fail(f"the shared corpus has no {rel}")
    f = tmp_path / "z.data"
    shutil.copyfile(p, f)
    got, want = chunk_offsets(f, True), chunk_offsets(f, False)
    assert got == want
    assert any(outer is not None for _s, _o, outer in want[0])  # from COMPRESSED records


def test_chunks_ahead_equal_the_plain_walk_on_the_demo(tmp_path: Path) -> None:
    demo = Path(demo_path())
    assert chunk_offsets(demo, True) == chunk_offsets(demo, False)
    # cut short in the middle of a record: the same chunks, the same error
    cut = tmp_path / "cut.data"
    data = demo.read_bytes()
    cut.write_bytes(data[: len(data) * 2 // 3 + 5])
    got, want = chunk_offsets(cut, True), chunk_offsets(cut, False)
    assert got == want and want[1]
