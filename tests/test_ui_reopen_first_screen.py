"""A reopen from the index cache paints its complete first screen (timeline, section
counts) before the index worker starts checking the cached rows: the check holds the GIL
for long stretches, and the screen came up to 0.25 s later while it ran.  The oracle is
the demo generator's plan (how many samples each module section got)."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path
from typing import Any

import pytest
from uihelpers import wait_indexed

from perftui import startup
from perftui.demo import MODULES_DIR
from perftui.demo.generate import write_demo
from perftui.perfdata import open_recording
from perftui.perfdata.indexcache import IndexCache
from perftui.symbols.modules.modnames import module_name
from perftui.ui.app import PerftuiApp
from perftui.ui.widgets.panes import SectionsPane
from perftui.ui.widgets.timeline import Timeline


def _counts(app: PerftuiApp) -> dict[tuple[str, str | None], int] | None:
    rep = app.model.report
    if rep is None:
        return None
    return {(e.module, e.section): int(rep.counts.per_entry[k])
            for k, e in enumerate(rep.smap.entries) if rep.counts.per_entry[k]}


async def _open(path: Path, cache: Path, seen: list[dict[str, Any]], early: bool = False
                ) -> str:
    rec = open_recording(path, cache=IndexCache(str(cache)), mapped=True)
    app = PerftuiApp(rec, [str(MODULES_DIR)])
    if early:  # as `perftui FILE` does
        app.reopen_from_cache()
    real = rec.build_index
    pane_render = SectionsPane.render_line
    timeline_render = Timeline.render

    def render(timeline: Timeline) -> Any:
        """Whether each timeline drawn had its bins, and their width."""
        out = timeline_render(timeline)
        seen.append({"timeline_binned": timeline.bins is not None})
        if timeline.bins is not None:
            seen.append({"timeline_width": timeline.bins.width})
        return out

    def render_line(pane: SectionsPane, y: int) -> Any:
        """What the section pane had when it was first painted."""
        if not any("first_paint_rows" in s for s in seen):
            seen.append({"first_paint_rows": len(pane.entry_of_row),
                         "gc": gc.isenabled()})
        return pane_render(pane, y)

    def build_index(*a: Any, **k: Any) -> Any:
        """What the screen had when the worker went on to the rows."""
        pane = app.query_one(SectionsPane)
        seen.append({"painted": app.indexer.first_screen_shown.is_set(),
                     "rows": len(pane.entry_of_row),
                     "bins": app.query_one(Timeline).bins is not None,
                     "counts": _counts(app)})
        return real(*a, **k)

    rec.build_index = build_index  # type: ignore[method-assign]
    SectionsPane.render_line = render_line  # type: ignore[method-assign]
    Timeline.render = render  # type: ignore[method-assign]
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_indexed(pilot)
            seen.append({"gc_after": gc.isenabled(),
                         "final_rows": len(app.query_one(SectionsPane).entry_of_row),
                         "final_width": app.query_one(Timeline).width_cols()})
        return rec.index.origin
    finally:
        SectionsPane.render_line = pane_render  # type: ignore[method-assign]
        Timeline.render = timeline_render  # type: ignore[method-assign]
        rec.close()


def test_cached_screen_is_painted_before_the_rows_are_checked(tmp_path: Path) -> None:
    plan = write_demo(tmp_path / "demo.data")
    seen: list[dict[str, Any]] = []
    assert asyncio.run(_open(tmp_path / "demo.data", tmp_path / "cache", seen)) == "walk"
    assert asyncio.run(_open(tmp_path / "demo.data", tmp_path / "cache", seen)) == "cache"
    first, again = (s for s in seen if "painted" in s)
    assert not first["painted"]  # a first open walks the file: nothing to show before
    assert again["painted"] and again["bins"] and again["rows"] > 0
    assert again["counts"] == {(module_name(m), s): n for (m, s), n in plan.in_sections.items()}


def test_reopen_opened_before_the_app_fills_its_first_frame(tmp_path: Path) -> None:
    """``perftui FILE`` opens the cache entry before the app runs: the section pane's first
    paint already has the plan's rows, the timeline is drawn only at its laid-out width, and
    start-up's collector hold (:mod:`perftui.startup`) ends once that screen is shown."""
    plan = write_demo(tmp_path / "demo.data")
    asyncio.run(_open(tmp_path / "demo.data", tmp_path / "cache", []))
    seen: list[dict[str, Any]] = []
    startup.hold()
    try:
        assert asyncio.run(_open(tmp_path / "demo.data", tmp_path / "cache", seen,
                                 early=True)) == "cache"
    finally:
        startup.release()
    paint = next(s for s in seen if "first_paint_rows" in s)
    checked = next(s for s in seen if "painted" in s)
    end = next(s for s in seen if "gc_after" in s)
    assert paint["first_paint_rows"] == end["final_rows"] > len(plan.in_sections)
    assert not paint["gc"]  # still start-up
    assert checked["painted"]
    assert checked["counts"] == {(module_name(m), s): n for (m, s), n in plan.in_sections.items()}
    assert end["gc_after"]
    # the timeline is binned once laid out, never at a width it has before (4 columns)
    widths = {s["timeline_width"] for s in seen if "timeline_width" in s}
    assert widths == {end["final_width"]}, widths
    # ... as its first frame is drawn: a reopen never shows a frame of "indexing…" there
    assert next(s["timeline_binned"] for s in seen if "timeline_binned" in s)


def test_startup_release_freezes_what_start_up_made() -> None:
    startup.hold()
    assert not gc.isenabled()
    startup.release()
    try:
        assert gc.isenabled() and gc.get_freeze_count() > 0
        startup.release()  # a second release changes nothing
        assert gc.isenabled()
    finally:
        gc.unfreeze()


@pytest.mark.slow
def test_entry_opened_early_without_its_report_is_not_opened_twice(tmp_path: Path) -> None:
    """An entry that opens but keeps no section report (``prepare_cached`` False): the
    worker indexes from the entry already open (``open_cached`` is then called only by
    ``build_index``, which returns the open entry), and a failure while opening early
    leaves the opening to the worker (one call more)."""
    write_demo(tmp_path / "demo.data")
    asyncio.run(_open(tmp_path / "demo.data", tmp_path / "cache", []))

    async def run(prepare: Any) -> tuple[int, str]:
        rec = open_recording(tmp_path / "demo.data", cache=IndexCache(str(tmp_path / "cache")),
                             mapped=True)
        app = PerftuiApp(rec, [str(MODULES_DIR)])
        calls = []
        real = rec.open_cached

        def open_cached() -> bool:
            calls.append(1)
            return real()

        rec.open_cached = open_cached  # type: ignore[method-assign]
        app.model.prepare_cached = prepare  # type: ignore[method-assign]
        assert not app.reopen_from_cache()
        prepare_calls = len(calls)
        app.model.prepare_cached = lambda: False  # type: ignore[method-assign]
        try:
            async with app.run_test(size=(120, 40)) as pilot:
                await wait_indexed(pilot)
            return len(calls) - prepare_calls, rec.index.origin
        finally:
            rec.close()

    def broken() -> bool:
        raise OSError("a module file that cannot be read")

    assert asyncio.run(run(lambda: False)) == (1, "cache")
    assert asyncio.run(run(broken)) == (2, "cache")


def test_reopen_reads_no_module_file_on_the_ui_thread(tmp_path: Path) -> None:
    """The section pane's rows need no .ko file: a reopen paints them before any is read,
    and the files (the drill-down's symbols) are read by the index worker, never on the UI
    thread; once indexed, every module of the plan has its file."""
    import threading

    from perftui.symbols.modules import modfiles

    plan = write_demo(tmp_path / "demo.data")
    asyncio.run(_open(tmp_path / "demo.data", tmp_path / "cache", []))
    seen: list[dict[str, Any]] = []
    loads: list[tuple[str, bool, bool]] = []
    real = modfiles.load_module

    def load_module(path: str) -> Any:
        painted = any("first_paint_rows" in s for s in seen)
        loads.append((Path(path).name, threading.current_thread() is threading.main_thread(),
                      painted))
        return real(path)

    modfiles.load_module = load_module  # type: ignore[assignment]
    try:
        assert asyncio.run(_open(tmp_path / "demo.data", tmp_path / "cache", seen,
                                 early=True)) == "cache"
    finally:
        modfiles.load_module = real  # type: ignore[assignment]
    assert loads, "the worker reads the module files"
    assert not any(on_ui for _name, on_ui, _painted in loads), loads
    assert all(painted for _name, _on_ui, painted in loads), loads
    assert {name for name, _ui, _p in loads} == {f"{m}.ko" for m, _s in plan.in_sections}


def test_entry_written_by_report_gives_the_complete_first_screen(tmp_path: Path) -> None:
    """``perftui report`` keeps the index for the next open, and with it what the browser
    draws its first screen from (timeline bins, section counts, section map): a browser
    opened after a report paints the plan's section counts and a binned timeline before
    the rows are checked.  (Before, such an entry kept none of it: every reopen counted the
    sections and binned the timeline over every row first, ~9 s at 50 M records.)"""
    import contextlib
    import io

    from perftui.cli import main as perftui_main

    plan = write_demo(tmp_path / "demo.data")
    cache = tmp_path / "cache"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert perftui_main(["report", "--no-children", "--cache-dir", str(cache),
                             "--modules-dir", str(MODULES_DIR), str(tmp_path / "demo.data")]) == 0
    seen: list[dict[str, Any]] = []
    startup.hold()
    try:
        assert asyncio.run(_open(tmp_path / "demo.data", cache, seen, early=True)) == "cache"
    finally:
        startup.release()
    paint = next(s for s in seen if "first_paint_rows" in s)
    checked = next(s for s in seen if "painted" in s)
    end = next(s for s in seen if "final_rows" in s)
    assert checked["painted"] and checked["bins"]
    assert checked["counts"] == {(module_name(m), s): n for (m, s), n in plan.in_sections.items()}
    assert paint["first_paint_rows"] == end["final_rows"] > len(plan.in_sections)
    assert next(s["timeline_binned"] for s in seen if "timeline_binned" in s)
