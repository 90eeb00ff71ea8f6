"""Issue 29's timeline: a range typed (``R``, the ``--time`` syntax of ``perftui report``)
instead of arrow presses, and the ``/`` filter redrawing the bars for what it keeps.

Expected values: perf's percentages by hand (tools/perf/util/time-utils.c,
set_percent_time: [first + p1 * span, first + p2 * span], the end one ns short unless it
is the last sample's), seconds from the first sample by hand, and the bars counted with
numpy over the index's columns between the columns' edges.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import numpy as np
import pytest
from textual.widgets import Input
from uihelpers import settle, sync, wait_indexed, wait_views, workers_done

from perftui.demo import MODULES_DIR
from perftui.demo.generate import write_demo
from perftui.perfdata import RecordType, open_recording
from perftui.ui.app import PerftuiApp
from perftui.ui.screens import PromptScreen
from perftui.ui.widgets.timeline import Timeline

pytestmark = pytest.mark.slow  # a browser each


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_demo(tmp_path_factory.mktemp("typed") / "demo.data").path


@asynccontextmanager
async def browse(path: Path) -> AsyncIterator[tuple[PerftuiApp, object]]:
    rec = open_recording(path)
    app = PerftuiApp(rec, [str(MODULES_DIR)])
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_indexed(pilot)
            await wait_views(pilot)
            yield app, pilot
    finally:
        rec.close()


async def typed(pilot, key: str, text: str) -> None:  # type: ignore[no-untyped-def]
    app = pilot.app
    await pilot.press(key)
    await settle(pilot)
    assert isinstance(app.screen, PromptScreen)
    app.screen.query_one(Input).value = text
    await pilot.press("enter")
    await settle(pilot)
    await workers_done(app)
    await settle(pilot)


def sample_span(app: PerftuiApp) -> tuple[int, int]:
    c = app.model.rec.columns
    t = c["time"][(c["type"] == RecordType.SAMPLE) & (c["time"] > 0)].astype(np.int64)
    return int(t.min()), int(t.max())


@sync
async def test_a_typed_range_is_the_range_perf_takes(demo: Path) -> None:
    async with browse(demo) as (app, pilot):
        first, last = sample_span(app)
        tl = app.query_one(Timeline)
        await pilot.press("T")
        # the second half, as perf report --time 50%/2 takes it
        await typed(pilot, "R", "50%/2")
        want = (first + round(0.5 * (last - first)), last)
        assert app.model.time_range == want == tl.selection
        c = app.model.rec.columns
        t = c["time"].astype(np.int64)
        assert app.model.count() == int(((t >= want[0]) & (t <= want[1])).sum())
        # seconds from the first sample
        await typed(pilot, "R", "1s,2.5s")
        assert app.model.time_range == (first + 1_000_000_000, first + 2_500_000_000)
        # an open end: to the last record with a time
        await typed(pilot, "R", "3s,")
        assert app.model.time_range == (first + 3_000_000_000, int(t.max()))
        # two ranges, or a bad one: said, nothing changed
        for bad in ("1s,2s 3s,4s", "2s,1s", "nonsense"):
            await typed(pilot, "R", bad)
            assert app.model.time_range == (first + 3_000_000_000, int(t.max())), bad
        # empty: no range
        await typed(pilot, "R", "")
        assert app.model.time_range is None and tl.selection is None


@sync
async def test_the_prompt_starts_with_the_range_selected(demo: Path) -> None:
    async with browse(demo) as (app, pilot):
        first, _last = sample_span(app)
        await pilot.press("T")
        await typed(pilot, "R", "1.25s,2s")
        await pilot.press("R")
        await settle(pilot)
        assert app.screen.query_one(Input).value == "1.250000000s,2.000000000s"
        await pilot.press("enter")
        await settle(pilot)
        assert app.model.time_range == (first + 1_250_000_000, first + 2_000_000_000)


@sync
async def test_the_filter_redraws_the_bars_for_what_it_keeps(demo: Path) -> None:
    async with browse(demo) as (app, pilot):
        tl = app.query_one(Timeline)
        c = app.model.rec.columns
        t = c["time"].astype(np.int64)

        def counted(keep: np.ndarray) -> np.ndarray:
            """Per column, the timed records ``keep`` selects, between the edges."""
            b = tl.bins
            assert b is not None and b.edges is not None
            edges = np.asarray(b.edges, dtype=np.int64)
            times = t[keep & (t > 0) & (t >= edges[0]) & (t < edges[-1])]
            return np.bincount(np.searchsorted(edges, times, side="right") - 1,
                               minlength=b.width)

        everything = tl.bins.counts.sum(axis=0)  # type: ignore[union-attr]
        assert (everything == counted(np.ones(len(t), bool))).all()
        await typed(pilot, "slash", "cpu=1")
        assert tl.border_title == "timeline · cpu=1"
        bars = tl.bins.counts.sum(axis=0)  # type: ignore[union-attr]
        want = counted(c["cpu"] == 1)
        assert want.sum() and want.sum() < everything.sum()
        assert (bars == want).all()
        await typed(pilot, "slash", "")
        assert tl.border_title == "timeline"
        assert (tl.bins.counts.sum(axis=0) == everything).all()  # type: ignore[union-attr]


@sync
async def test_the_timeline_says_the_range_as_the_record_list(demo: Path) -> None:
    """The timeline's axis and the record list's title say a typed range alike, in perf
    script's microseconds (the axis said 3.000 where the list said 2.999859), at 100 and
    at 60 columns (the ends left out there, the range kept)."""
    from uihelpers import screen_text

    async with browse(demo) as (app, pilot):
        first, last = sample_span(app)
        await pilot.press("T")
        await typed(pilot, "R", "50%/2")
        lo = first + round(0.5 * (last - first))
        words = f"range {(lo - first) / 1e9:.6f}–{(last - first) / 1e9:.6f} +s"
        text = screen_text(app)
        assert text.count(words) == 2, (words, text)  # the axis and the records' title
        await pilot.resize_terminal(60, 20)
        await settle(pilot)
        axis = next(line for line in screen_text(app).splitlines() if "range " in line)
        assert words in axis, axis
