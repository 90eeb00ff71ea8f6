"""The browser driven by Textual's pilot: every key path of issue 4, checked against the index.

Counts the UI shows are compared with counts computed here with numpy from the recording's
index columns, or with the demo generator's own plan (``DemoPlan``: what it wrote), not with
the UI's or the analysis layer's helpers.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import numpy as np
import pytest
from textual.command import CommandPalette
from textual.widgets import DataTable, Input
from uihelpers import screen_text, settle, sync, wait_indexed, workers_done

from builders import BAD_COMM, EVIL_COMM, EVIL_KO, EVIL_LIB, EVIL_SECTION, hostile
from perftui.demo import MODULES_DIR
from perftui.demo.generate import DemoPlan, write_demo
from perftui.perfdata import RecordType, open_recording, walk
from perftui.perfdata.constants import Misc
from perftui.textsafe import safe
from perftui.ui.app import PerftuiApp
from perftui.ui.keys import help_text, places, sections_from
from perftui.ui.screens import (
    HelpScreen,
    InfoScreen,
    PromptScreen,
    SamplesScreen,
    SectionScreen,
)
from perftui.ui.widgets.panes import Detail, HeaderLine, SectionsPane
from perftui.ui.widgets.records import RecordList
from perftui.ui.widgets.timeline import Timeline

SAMPLE = int(RecordType.SAMPLE)


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> DemoPlan:
    return write_demo(tmp_path_factory.mktemp("demo") / "demo.data")


@pytest.fixture(scope="module")
def demo(plan: DemoPlan) -> Path:
    return plan.path


@asynccontextmanager
async def browse(path: Path, size: tuple[int, int] = (120, 40), index: bool = True,
                 **kw: object) -> AsyncIterator[tuple[PerftuiApp, object]]:
    """The app on ``path`` (the demo's module files at hand), indexed unless told not to."""
    rec = open_recording(path)
    app = PerftuiApp(rec, [str(MODULES_DIR)], auto_index=index)
    try:
        async with app.run_test(size=size, **kw) as pilot:  # type: ignore[arg-type]
            if index:
                await wait_indexed(pilot)
            yield app, pilot
    finally:
        rec.close()


def detail_text(app: PerftuiApp) -> str:
    return "\n".join(app.query_one(Detail).lines)


def header_text(app: PerftuiApp) -> str:
    return str(app.query_one(HeaderLine).content)


def view_rows(app: PerftuiApp) -> np.ndarray:
    """Index rows in display order, as the record list shows them."""
    m = app.model
    return np.array([m.row(i) for i in range(m.count())], dtype=np.int64)


async def type_prompt(pilot, text: str, keys: bool = False) -> None:  # type: ignore[no-untyped-def]
    """Enter ``text`` in the open prompt's Input (key by key with ``keys``), press enter."""
    app = pilot.app
    assert isinstance(app.screen, PromptScreen)
    inp = app.screen.query_one(Input)
    inp.value = ""
    if keys:
        await pilot.press(*text)
    else:
        inp.value = text
    assert inp.value == text
    await pilot.press("enter")
    await settle(pilot)


# -- indexing, header, record list ------------------------------------------------------------
@pytest.mark.slow
@sync
async def test_indexing_fills_header_and_views(demo: Path, plan: DemoPlan) -> None:
    async with browse(demo) as (app, _pilot):
        c = app.model.rec.columns
        n = len(c)
        samples = int(np.count_nonzero(c["type"] == SAMPLE))
        assert n == plan.total and samples == plan.samples
        head = header_text(app)
        assert f"{n:,} records" in head and f"{samples:,} samples" in head
        assert "indexing" not in head
        assert "perf 6.1.187" in head and "demo-host" in head
        assert app.query_one(RecordList)._count == n
        assert app.query_one(Detail).shown_row == 0
        assert app.query_one(Timeline).bins is not None
        assert isinstance(app.focused, RecordList)


@sync
async def test_record_cursor_keys_and_detail(demo: Path) -> None:
    async with browse(demo) as (app, pilot):
        rl = app.query_one(RecordList)
        rec = app.model.rec
        n = len(rec.columns)

        def shows(row: int) -> None:
            assert rl.current_row() == row
            assert app.query_one(Detail).shown_row == row
            text = detail_text(app)
            assert f"offset: {rec.outer_offset(row):#x}" in text
            assert f"type: {rec.decode(row)['type']}" in text
            assert f"raw bytes ({int(rec.columns['size'][row])}):" in text

        await pilot.press("down", "down", "down")
        assert rl.cursor == 3
        shows(3)
        await pilot.press("up")
        shows(2)
        await pilot.press("pagedown")
        page = max(1, rl.size.height - 2)
        assert rl.cursor == 2 + page
        shows(2 + page)
        await pilot.press("pageup")
        shows(2)
        await pilot.press("end")
        assert rl.cursor == n - 1
        shows(n - 1)
        # the last line is on screen
        assert f"{rec.outer_offset(n - 1):#x}" in screen_text(app)
        await pilot.press("home")
        shows(0)
        await pilot.press("up")  # stays on the first record
        shows(0)
        # a sample: its symbolised ip in the detail
        first_sample = int(np.nonzero(rec.columns["type"] == SAMPLE)[0][0])
        assert rl.jump_to_row(first_sample)
        await settle(pilot)
        text = detail_text(app)
        assert "type: SAMPLE" in text and "callchain:" in text
        assert "PERF_CONTEXT_KERNEL" in text


@sync
async def test_t_toggles_file_and_time_order(demo: Path) -> None:
    async with browse(demo) as (app, pilot):
        c = app.model.rec.columns
        t = c["time"][: len(c)]
        rl = app.query_one(RecordList)
        await pilot.press("down", "down", "down", "down", "down", "down", "down")
        keep = rl.current_row()
        assert app.model.view() is None  # file order: the identity
        await pilot.press("t")
        assert app.model.time_order
        rows = view_rows(app)
        assert sorted(rows.tolist()) == list(range(len(c)))
        assert np.array_equal(rows, np.argsort(t, kind="stable"))
        assert np.all(np.diff(t[rows].astype(np.int64)) >= 0)
        assert not np.array_equal(rows, np.arange(len(c)))  # really re-ordered
        assert rl.current_row() == keep  # the cursor stays on its record
        await pilot.press("home")
        assert rl.current_row() == int(rows[0])
        await pilot.press("t")
        assert not app.model.time_order and app.model.view() is None
        assert rl.current_row() == int(rows[0])


@pytest.mark.slow
@sync
async def test_filter_matches_numpy(demo: Path) -> None:
    async with browse(demo, notifications=True) as (app, pilot):
        c = app.model.rec.columns
        want = np.nonzero((c["type"] == SAMPLE) & (c["cpu"] == 1))[0]
        await pilot.press("slash")
        await type_prompt(pilot, "type=SAMPLE cpu=1", keys=True)
        assert app.model.count() == len(want) > 0
        assert np.array_equal(view_rows(app), want)
        assert app.query_one(RecordList)._count == len(want)
        assert any(f"{len(want):,} records match" in n.message for n in app._notifications)
        # a second filter replaces the first; time and comm filters too
        await pilot.press("slash")
        await type_prompt(pilot, "comm=iperf3 time=1s,2s")
        first = int(c["time"][c["type"] == SAMPLE].min())
        tids = iperf3_threads(app.model.rec)
        t = c["time"]
        want2 = np.nonzero(np.isin(c["tid"], tids) & (t >= first + 10**9)
                           & (t <= first + 2 * 10**9))[0]
        assert np.array_equal(view_rows(app), want2) and len(want2)
        # the empty filter clears
        await pilot.press("slash")
        await type_prompt(pilot, "")
        assert app.model.view() is None and app.model.count() == len(c)


def iperf3_threads(rec) -> list[int]:  # type: ignore[no-untyped-def]
    """Threads named iperf3 as perf names them, read from the records here: a COMM record
    naming it, or a FORK from such a thread (the child inherits the name)."""
    c = rec.columns
    named: set[int] = set()
    forks: list[tuple[int, int]] = []
    for i in np.nonzero(np.isin(c["type"], [RecordType.COMM, RecordType.FORK]))[0]:
        f = rec.decode(int(i))
        if f["type"] == "COMM" and "iperf3" in f["comm"]:
            named.add(f["tid"])
        elif f["type"] == "FORK":
            forks.append((f["ptid"], f["tid"]))
    grew = True
    while grew:
        grew = False
        for parent, child in forks:
            if parent in named and child not in named:
                named.add(child)
                grew = True
    return sorted(named)


@pytest.mark.slow
@sync
async def test_invalid_filter_notifies_and_keeps_view(demo: Path) -> None:
    async with browse(demo, notifications=True) as (app, pilot):
        await pilot.press("slash")
        await type_prompt(pilot, "type=MMAP2")
        before = view_rows(app)
        assert len(before) == 4
        flt = app.model.flt
        # a key with no value would match nothing: an error, as comm= is
        for bad in ["bogus", "type=NOPE", "[/x]", "[bold]x", "cpu=", "type=", "pid=,"]:
            app.clear_notifications()
            await pilot.press("slash")
            await type_prompt(pilot, bad)
            assert len(app.screen_stack) == 1  # the prompt closed, the app lives
            assert app.model.flt is flt
            assert np.array_equal(view_rows(app), before)
            errors = [n for n in app._notifications if n.severity == "error"]
            assert len(errors) == 1 and not errors[0].markup  # user text is never markup
            await pilot.pause(0.1)  # the toast renders (as markup, "[/x]" would raise)
            if "[" in bad:
                assert f"'{bad}': expected key=value" in screen_text(app)


@pytest.mark.slow
@sync
async def test_goto_offset_and_time(demo: Path) -> None:
    async with browse(demo, notifications=True) as (app, pilot):
        rec = app.model.rec
        rl = app.query_one(RecordList)
        c = rec.columns
        row = 5000
        await pilot.press("g")
        await type_prompt(pilot, f"{rec.outer_offset(row):#x}")
        assert rl.current_row() == row and rl.cursor == row
        assert f"offset: {rec.outer_offset(row):#x}" in detail_text(app)
        # decimal offsets too
        await pilot.press("g")
        await type_prompt(pilot, str(rec.outer_offset(123)))
        assert rl.current_row() == 123
        # a time: the earliest record at or after first sample + 2.5 s
        await pilot.press("g")
        await type_prompt(pilot, "2.5s")
        first = int(c["time"][(c["type"] == SAMPLE) & (c["time"] > 0)].min())
        t = c["time"].astype(np.int64)
        cand = np.nonzero(t >= first + 2_500_000_000)[0]
        want = int(cand[np.argmin(t[cand])])
        assert rl.current_row() == want
        assert abs(int(t[want]) - first - 2_500_000_000) < 10_000_000
        # nonsense: an error, the cursor stays
        app.clear_notifications()
        await pilot.press("g")
        await type_prompt(pilot, "[/x]")
        assert rl.current_row() == want
        assert [n for n in app._notifications if n.severity == "error"]


# -- timeline ------------------------------------------------------------------------------
@sync
async def test_timeline_range_filters_records_and_sections(demo: Path, plan: DemoPlan
                                                          ) -> None:
    async with browse(demo) as (app, pilot):
        m = app.model
        c = m.rec.columns
        tl = app.query_one(Timeline)
        await pilot.press("T")
        assert app.focused is tl
        await pilot.press("right", "right", "right", "right")
        assert tl.cursor == 4 and tl.range_start is None and m.time_range is None
        await pilot.press("left")
        assert tl.cursor == 3
        await pilot.press("shift+right", "shift+right", "shift+right", "shift+right")
        assert (tl.range_start, tl.cursor) == (3, 7)
        lo, hi = m.time_range
        assert (lo, hi) == tl.time_range()
        assert "range " in screen_text(app)
        # the record list: exactly the records timed inside the range
        t = c["time"]
        want = np.nonzero((t >= lo) & (t <= hi))[0]
        assert len(want) and m.count() == len(want)
        assert np.array_equal(view_rows(app), want)
        # the section pane: kernel samples in the range, per section
        kern = np.nonzero((c["type"] == SAMPLE) & (t >= lo) & (t <= hi)
                          & (c["cpumode"] == Misc.KERNEL))[0]
        owner = m.smap.lookup(m.rec.sample_values(kern, "ip"))
        per = np.bincount(owner[owner >= 0], minlength=len(m.smap.entries))
        assert np.array_equal(m.report.counts.per_entry, per)
        assert m.report.counts.kernel_samples == len(kern) < plan.kernel_samples
        pane = app.query_one(SectionsPane)
        top = max({e.module for e in m.smap.entries},
                  key=lambda mod: sum(int(per[k]) for k, e in enumerate(m.smap.entries)
                                      if e.module == mod))
        mod_total = sum(int(per[k]) for k, e in enumerate(m.smap.entries) if e.module == top)
        cells = [str(x) for x in pane.get_row_at(0)]
        assert cells[0] == f"[{top}]" and cells[1] == f"{mod_total:,}"
        assert f"{len(kern):,} kernel" in str(pane.border_subtitle)
        # moving without shift drops the range
        await pilot.press("right")
        assert m.time_range is None and m.count() == len(c)
        assert m.report.counts.kernel_samples == plan.kernel_samples


@sync
async def test_timeline_zoom_reset_and_cpu_rows(demo: Path) -> None:
    async with browse(demo) as (app, pilot):
        m = app.model
        tl = app.query_one(Timeline)
        full = m.span()
        await pilot.press("T", "right", "right", "right")
        await pilot.press("plus")
        assert tl.view is not None
        w0, w1 = tl.view
        assert full[0] <= w0 < w1 <= full[1] + 1
        assert (w1 - w0) < (full[1] - full[0]) * 0.6
        await pilot.press("plus")
        assert tl.view[1] - tl.view[0] < (w1 - w0) * 0.6
        assert tl.bins.t0 == tl.view[0]
        await pilot.press("minus")
        assert tl.view[1] - tl.view[0] == pytest.approx(w1 - w0, rel=0.01)
        await pilot.press("shift+right", "shift+right")
        assert m.time_range is not None
        await pilot.press("r")
        assert tl.view is None and tl.range_start is None and m.time_range is None
        assert m.count() == m.n
        # one row per CPU: the demo records on 4 CPUs
        assert tl.by == "kind" and tl.bins.labels[:2] == ["samples", "maps"]
        await pilot.press("c")
        assert tl.by == "cpu"
        cpus = np.unique(m.rec.columns["cpu"][m.rec.columns["time"] > 0])
        assert tl.bins.labels == [f"cpu {int(x)}" for x in cpus if x >= 0][: len(tl.bins.labels)]
        assert "cpu 0" in screen_text(app)
        await pilot.press("c")
        assert tl.by == "kind"



@sync
async def test_a_big_recording_bins_zoomed_and_cpu_windows_in_a_thread(
        demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above SYNC_ROWS index rows, a window the kept bins do not cover (zoomed in, or one
    row per CPU) is a pass over every row (~1 s at 50 M records): it is binned in a
    thread, not on the UI thread, and the bins drawn then are those of the window."""
    import perftui.ui.widgets.timeline as tlmod

    monkeypatch.setattr(tlmod, "SYNC_ROWS", 0)  # (the demo as if it were big)
    real = tlmod.timeline_bins
    on_ui: list[bool] = []

    def spy(*a: object, **k: object) -> object:
        on_ui.append(threading.current_thread() is threading.main_thread())
        return real(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(tlmod, "timeline_bins", spy)

    async def binned() -> None:
        for _ in range(400):
            await workers_done(app)
            await settle(pilot)
            if not tl.binning:
                return
        raise AssertionError("the window was not binned")

    async with browse(demo) as (app, pilot):
        m = app.model
        tl = app.query_one(Timeline)
        await pilot.press("T", "right", "right", "right")
        on_ui.clear()
        for key in ("plus", "plus"):
            await pilot.press(key)
            await binned()
            assert tl.view is not None and tl.bins is not None
            assert tl.bins.t0 == tl.view[0]
            want = real(m.rec, *tl.view, tl.bins.width, "kind", max_rows=8)
            assert tl.bins.labels == want.labels[:len(tl.bins.labels)]
            assert tl.bins.counts.tolist() == want.counts[:len(tl.bins.labels)].tolist()
        await pilot.press("c")  # one row per CPU, zoomed
        await binned()
        cpus = np.unique(m.rec.columns["cpu"][m.rec.columns["time"] > 0])
        assert tl.bins.labels == [f"cpu {int(x)}" for x in cpus if x >= 0][: len(tl.bins.labels)]
        assert on_ui and not any(on_ui)  # every pass in a thread
        await pilot.press("r")  # the whole recording by CPU: not kept either
        await binned()
        assert tl.view is None and tl.bins.labels[0] == "cpu 0"
        assert not any(on_ui)


# -- sections and drill-down ---------------------------------------------------------------
@pytest.mark.slow
@sync
async def test_section_drill_down_and_back(demo: Path, plan: DemoPlan) -> None:
    async with browse(demo) as (app, pilot):
        m = app.model
        pane = app.query_one(SectionsPane)
        await pilot.press("m")
        assert app.focused is pane
        assert pane.entry_of_row[0] == -1  # the module line
        await pilot.press("enter")  # on a module line: its busiest section opens
        await settle(pilot)
        assert isinstance(app.screen, SectionScreen)
        assert app.screen.entry == pane.entry_of_row[1]
        await pilot.press("escape")
        await settle(pilot)
        assert len(app.screen_stack) == 1
        await pilot.press("down")
        entry = pane.entry_of_row[pane.cursor_row]
        e = m.smap.entries[entry]
        assert (e.module, e.section) == ("demo_kvm", ".noinstr.text")
        await pilot.press("enter")
        await settle(pilot)
        scr = app.screen
        assert isinstance(scr, SectionScreen) and scr.entry == entry
        # the symbol counts are the ones the generator put there, busiest first
        want = sorted(((sym, n) for (mod, sec, sym), n in plan.in_symbols.items()
                       if (mod, sec) == ("demo-kvm", ".noinstr.text")),
                      key=lambda x: (-x[1], x[0]))
        assert want[0][0] == "__demo_svm_vcpu_run"
        table = scr.query_one("#symbols", DataTable)
        got = [(str(table.get_row_at(r)[2]), int(str(table.get_row_at(r)[0]).replace(",", "")))
               for r in range(table.row_count)]
        assert got == want
        assert sum(n for _, n in got) == plan.in_sections["demo-kvm", ".noinstr.text"]
        # by CPU: the kernel samples whose ip lies where the generator placed the section
        start, size = plan.placed["demo-kvm", ".noinstr.text"]
        c = m.rec.columns
        kern = np.nonzero((c["type"] == SAMPLE) & (c["cpumode"] == Misc.KERNEL))[0]
        ips = m.rec.sample_values(kern, "ip")
        rows = kern[(ips >= np.uint64(start)) & (ips < np.uint64(start + size))]
        by_cpu = scr.query_one("#by-cpu", DataTable)
        cpu_counts = {int(str(by_cpu.get_row_at(r)[0])):
                      int(str(by_cpu.get_row_at(r)[1]).replace(",", ""))
                      for r in range(by_cpu.row_count)}
        vals, counts = np.unique(m.rec.columns["cpu"][rows], return_counts=True)
        assert cpu_counts == {int(v): int(n) for v, n in zip(vals, counts, strict=True)}
        text = screen_text(app)
        assert "[demo_kvm].noinstr.text" in text and "qemu-system-x86" in text
        # enter on the first symbol: its samples
        await pilot.press("enter")
        await settle(pilot)
        sam = app.screen
        assert isinstance(sam, SamplesScreen) and sam.symbol == "__demo_svm_vcpu_run"
        assert len(sam.rows) == want[0][1]
        assert np.all(m.rec.columns["type"][sam.rows] == SAMPLE)
        # esc: back one level at a time, to the section pane; then in again
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, SectionScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert len(app.screen_stack) == 1 and app.focused is pane
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, SectionScreen)
        await pilot.press("enter")
        await settle(pilot)
        sam = app.screen
        assert isinstance(sam, SamplesScreen)
        # enter on the third sample: back to its record in the list
        await pilot.press("down", "down")
        target = int(sam.rows[2])
        await pilot.press("enter")
        await settle(pilot)
        assert len(app.screen_stack) == 1
        rl = app.query_one(RecordList)
        assert app.focused is rl
        assert rl.current_row() == target
        assert app.query_one(Detail).shown_row == target
        assert "__demo_svm_vcpu_run" in detail_text(app)


@pytest.mark.slow
@sync
async def test_filter_applies_to_the_drill_down_and_the_jump_keeps_it(demo: Path,
                                                                     plan: DemoPlan) -> None:
    """/cpu=1: the section pane, the section's tables and its samples count CPU 1 only;
    Enter on a sample lands on it in the (still filtered) record list."""
    async with browse(demo) as (app, pilot):
        m = app.model
        c = m.rec.columns
        await pilot.press("slash")
        await type_prompt(pilot, "cpu=1")
        await workers_done(app)
        await settle(pilot)
        kern = np.nonzero((c["type"] == SAMPLE) & (c["cpu"] == 1)
                          & (c["cpumode"] == Misc.KERNEL))[0]
        assert m.report.counts.kernel_samples == len(kern) < plan.kernel_samples
        pane = app.query_one(SectionsPane)
        assert f"{len(kern):,} kernel" in str(pane.border_subtitle)
        await pilot.press("m", "down", "enter")
        await settle(pilot)
        scr = app.screen
        assert isinstance(scr, SectionScreen)
        by_cpu = scr.query_one("#by-cpu", DataTable)
        assert [str(by_cpu.get_row_at(r)[0]) for r in range(by_cpu.row_count)] == ["1"]
        assert "cpu=1" in screen_text(app)  # the title says what is active
        await pilot.press("enter")
        await settle(pilot)
        sam = app.screen
        assert isinstance(sam, SamplesScreen) and len(sam.rows)
        assert np.all(c["cpu"][sam.rows] == 1)
        target = int(sam.rows[0])
        await pilot.press("enter")
        await settle(pilot)
        assert app.query_one(RecordList).current_row() == target
        assert m.flt.cpus == frozenset({1})  # nothing had to be cleared


@sync
async def test_info_help_and_q(demo: Path) -> None:
    async with browse(demo) as (app, pilot):
        await pilot.press("i")
        await settle(pilot)
        assert isinstance(app.screen, InfoScreen)
        text = screen_text(app)
        assert "perf version     6.1.187" in text and "demo-host" in text
        assert "KMOD_SEC_MAP" in text
        await pilot.press("q")
        await settle(pilot)
        assert len(app.screen_stack) == 1
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        text = app.screen._text().plain  # (the whole help: it scrolls)
        for key in ("record list", "timeline", "module sections", "ctrl+p", "shift+←/shift+→"):
            assert key in text
        await pilot.press("escape")
        await settle(pilot)
        assert len(app.screen_stack) == 1
        # the main screen's keys do nothing on the others
        await pilot.press("i", "t", "slash")
        await settle(pilot)
        assert isinstance(app.screen, InfoScreen) and not app.model.time_order
        await pilot.press("q", "q")
        await settle(pilot)
    assert app.return_value == 0


@sync
async def test_help_fits_80_columns(demo: Path) -> None:
    async with browse(demo, size=(80, 24)) as (app, pilot):
        await pilot.press("question_mark")
        await settle(pilot)
        text = screen_text(app)
        # no help line is wrapped or cut: the visible ones are all there, whole (the
        # record list's keys first: it has the focus)
        shown = help_text(76, sections_from("record list", places()))
        for line in shown.splitlines()[:18]:
            assert line.rstrip() in text


@pytest.mark.slow
@sync
async def test_command_palette(demo: Path) -> None:
    async with browse(demo) as (app, pilot):
        await pilot.press("ctrl+p")
        await settle(pilot)
        assert isinstance(app.screen, CommandPalette)
        for _ in range(50):  # with no query, the palette lists perftui's commands
            if "Filter records" in screen_text(app):
                break
            await pilot.pause(0.05)
        assert "Go to offset or time" in screen_text(app)
        await pilot.press(*"order")
        for _ in range(50):
            await pilot.pause(0.05)
            if "Toggle file/time order" in screen_text(app):
                break
        await pilot.press("down", "enter")
        await settle(pilot)
        assert len(app.screen_stack) == 1
        assert app.model.time_order
        # another: the recording information
        await pilot.press("ctrl+p")
        await settle(pilot)
        await pilot.press(*"info")
        for _ in range(50):
            await pilot.pause(0.05)
            if "Recording information" in screen_text(app):
                break
        await pilot.press("down", "enter")
        await settle(pilot)
        assert isinstance(app.screen, InfoScreen)


@sync
async def test_z_zooms_the_focused_pane(demo: Path) -> None:
    async with browse(demo) as (app, pilot):
        await pilot.press("z")
        assert app.screen.maximized is app.query_one(RecordList)
        await pilot.press("z")
        assert app.screen.maximized is None
        await pilot.press("m", "z")
        assert app.screen.maximized is app.query_one(SectionsPane)
        await pilot.press("escape")
        assert app.screen.maximized is None


# -- cancelling ----------------------------------------------------------------------------
@sync
async def test_x_cancels_indexing(demo: Path) -> None:
    """x before the worker walks a record: nothing indexed, the header says cancelled."""
    async with browse(demo, index=False, notifications=True) as (app, pilot):
        await pilot.press("escape")  # Esc is "back": it does not cancel
        assert not app.indexer.cancel_requested and not app.model.rec.cancelled
        await pilot.press("x")
        assert app.indexer.cancel_requested and app.model.rec.cancelled
        assert any("stopping indexing" in n.message for n in app._notifications)
        app.indexer.start()
        await wait_indexed(pilot)
        assert "indexing cancelled" in header_text(app)
        assert not app.model.rec.indexed
        assert app.model.n == 0 and len(app.model.rec.columns) == 0  # nothing indexed
        assert app.query_one(RecordList)._count == 0


@sync
async def test_x_during_indexing(demo: Path, plan: DemoPlan,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A real x while the worker is between two batches stops it there."""
    monkeypatch.setattr(walk, "BATCH", 1024)  # many batches, so there is a "between"
    rec = open_recording(demo)
    build = rec.build_index
    first_batch, resume = threading.Event(), threading.Event()

    def paused_build(progress: Callable[[int, int], None] | None = None,
                     budget: float = 0.25) -> None:
        def each(records: int, done: int) -> None:
            first_batch.set()
            resume.wait(10)
            assert progress is not None
            progress(records, done)
        build(progress=each, budget=0.0)

    rec.build_index = paused_build  # type: ignore[method-assign]
    app = PerftuiApp(rec, [str(MODULES_DIR)])
    try:
        async with app.run_test(size=(100, 30), notifications=True) as pilot:
            for _ in range(500):
                if first_batch.is_set():
                    break
                await pilot.pause(0.01)
            assert first_batch.is_set() and not app.model.done
            await pilot.press("x")
            assert app.indexer.cancel_requested and rec.cancelled
            resume.set()
            await wait_indexed(pilot)
            assert not rec.indexed and 0 < app.model.n < plan.total
            assert "indexing cancelled" in header_text(app)
            assert any("stopping indexing" in n.message for n in app._notifications)
            # what was indexed is browsable
            await pilot.press("end")
            assert app.query_one(Detail).shown_row == app.model.n - 1
    finally:
        resume.set()
        rec.close()


# -- corpus recordings ---------------------------------------------------------------------
@pytest.mark.parametrize("rel, source", [
    ("perf61/perf-normal-g.data", "none"),
    ("perf61/perf-zstd.data", "none"),
    ("quipper/perf.data.hybrid_topology", "MMAP"),
])
@sync
async def test_corpus_recordings_open(corpus: Callable[[str], Path], rel: str,
                                      source: str) -> None:
    async with browse(corpus(rel), size=(100, 30), notifications=True) as (app, pilot):
        m = app.model
        assert m.rec.indexed and not m.rec.errors and app.indexer.index_error is None
        assert not [n for n in app._notifications if n.severity == "error"]
        n = len(m.rec.columns)
        assert n > 0 and f"{n:,} records" in header_text(app)
        pane = app.query_one(SectionsPane)
        assert m.report.smap.source == source
        assert pane.border_title.endswith(source if source != "none" else "none")
        if source == "none":
            rows = [str(pane.get_row_at(r)[0]) for r in range(pane.row_count)]
            assert " ".join(rows) == NO_SECTIONS
            assert "no KMOD_SEC_MAP" in str(pane.border_subtitle)
            assert all(line in screen_text(app) for line in rows)
        # walk every record: each one decodes into the detail pane
        await pilot.press("end")
        assert app.query_one(Detail).shown_row == n - 1
        # sections without samples are hidden; a shows them
        await pilot.press("t", "home", "m", "a", "down", "enter")
        await settle(pilot)
        if source == "MMAP":
            assert isinstance(app.screen, SectionScreen)
            assert m.smap.entries[app.screen.entry].source == "MMAP"
            await pilot.press("escape")
            await settle(pilot)
        assert len(app.screen_stack) == 1


# -- hostile strings -----------------------------------------------------------------------
@sync
async def test_hostile_strings_are_shown_literally(tmp_path: Path) -> None:
    path = hostile(tmp_path / "hostile.data")
    async with browse(path, size=(200, 40), notifications=True) as (app, pilot):
        comm = EVIL_COMM.decode()  # "[bold red]x\x1b[31m"
        shown_comm = safe(comm)
        assert shown_comm == "[bold red]x\\x1b[31m"
        texts = [screen_text(app)]
        main = texts[0]
        # the record list (COMM line and its summary) and the detail of the first record
        assert "[bold red]x\\x1b" in main  # the list's comm column
        assert f"10/10 {shown_comm}" in main
        assert f"comm: {shown_comm}" in detail_text(app)
        bad = BAD_COMM.decode("utf-8", "backslashreplace")
        assert bad == "bad\\xff\\xfename" and bad in main
        # the section pane and the list's KMOD_SEC_MAP summary
        assert safe(EVIL_SECTION)[:15] in main
        assert "[evil]" in main
        assert "host[b]\\x1b[2J" in main
        # the MMAP2 file name, in the detail
        await pilot.press("down", "down", "down")
        det = detail_text(app)
        lib = EVIL_LIB.decode("utf-8", "backslashreplace")
        assert f"filename: {safe(lib)}" in det
        assert "[link=http://x]\\xff\\xfelib\\x1b]0;title\\x07.so" in det
        texts.append(screen_text(app))
        # the section drill-down: title (path with a markup link), note, splits, samples
        await pilot.press("m", "down", "enter")
        await settle(pilot)
        assert isinstance(app.screen, SectionScreen)
        sec = screen_text(app)
        texts.append(sec)
        title = sec.splitlines()[0]
        assert title.startswith(" [evil].text\\x1b]0;title\\x07 ") and EVIL_KO in title
        assert f"(looked in: {EVIL_KO}" in sec  # the note: printed, not made a link
        assert "[evil].text\\x1b]0;title\\x07" in sec
        assert "module file not found" in sec
        assert "[bold red]x\\x1b" in sec  # by process
        assert "[link=http://x]" in str(app.screen.query_one("#note").content)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, SamplesScreen)
        sam = screen_text(app)
        texts.append(sam)
        assert "[bold red]x\\x1b" in sam and "bad\\xff\\xfename"[:14] in sam
        svgs = [app.export_screenshot()]
        await pilot.press("escape", "escape", "i")
        await settle(pilot)
        texts.append(screen_text(app))
        assert "host[b]\\x1b[2J" in texts[-1]
        svgs.append(app.export_screenshot())
        # nothing raw reached the "terminal": no ESC, BEL or C1 control, no link
        for out in texts + svgs:
            assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
        for svg in svgs:
            assert "<a " not in svg and "href" not in svg


@sync
async def test_no_color_is_honoured(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """NO_COLOR: every colour on screen is a grey."""
    import re

    monkeypatch.setenv("NO_COLOR", "1")
    async with browse(demo, size=(80, 24)) as (app, _pilot):
        svg = app.export_screenshot()
    colours = set(re.findall(r"fill: #([0-9a-f]{6})", svg))
    assert colours
    for c in colours:
        r, g, b = (int(c[i:i + 2], 16) for i in (0, 2, 4))
        assert max(r, g, b) - min(r, g, b) <= 24, c


NO_SECTIONS = ("no module sections in this recording: no KMOD_SEC_MAP record and no "
               "kernel-module MMAP")


@sync
async def test_no_module_sections_said_in_full_at_80x24(corpus: Callable[[str], Path]) -> None:
    """A recording without modules (the common case): the pane says so, no line cut."""
    async with browse(corpus("perf61/perf-normal-g.data"), size=(80, 24)) as (app, _pilot):
        pane = app.query_one(SectionsPane)
        rows = [str(pane.get_row_at(r)[0]) for r in range(pane.row_count)]
        assert " ".join(rows) == NO_SECTIONS
        text = screen_text(app)
        assert all(line in text for line in rows), text


@sync
async def test_section_without_a_section_map_names_assumed_text(plan: DemoPlan,
                                                                 tmp_path: Path) -> None:
    """The demo with its KMOD_SEC_MAP records stripped: a module is one MMAP, its symbols
    named from .text at the MMAP start (perf's rule) — as many as the generator put in
    .text — and the drill-down says the .text is assumed."""
    import subprocess
    import sys

    stripped = tmp_path / "stripped.data"
    subprocess.run([sys.executable, "-m", "perftui", "inject", str(plan.path), "--strip",
                    "-o", str(stripped)], check=True, capture_output=True)
    async with browse(stripped) as (app, pilot):
        pane = app.query_one(SectionsPane)
        await pilot.press("m", "down", "enter")
        await settle(pilot)
        scr = app.screen
        assert isinstance(scr, SectionScreen)
        e = app.model.smap.entries[scr.entry]
        assert e.section is None
        table = scr.query_one("#symbols", DataTable)
        assert str(table.border_subtitle) == "assumed .text: no section map in this recording"
        mod = e.path.rsplit("/", 1)[1].removesuffix(".ko")
        want = {sym: n for (m, sec, sym), n in plan.in_symbols.items()
                if (m, sec) == (mod, ".text")}
        got = {scr.symbol_names[r]: int(str(table.get_row_at(r)[0]).replace(",", ""))
               for r in range(table.row_count)}
        assert got == want and pane.entry_of_row[1] == scr.entry
