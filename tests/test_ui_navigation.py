"""Issue 9 in the browser (pilot): the crash, filters and ranges everywhere, layout, navigation,
the time base.

Expected values come from the demo generator's plan (tids and names), from numpy over the
index columns, or from arithmetic written here; never from the UI's own helpers.
"""

from __future__ import annotations

import re
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import numpy as np
import pytest
from textual.widgets import DataTable, Input
from uihelpers import screen_text, settle, sync, wait_indexed, workers_done

from perftui.analysis import sectionreport
from perftui.demo import MODULES_DIR
from perftui.demo.generate import DemoPlan, write_demo
from perftui.perfdata import RecordType, open_recording
from perftui.perfdata.constants import Misc
from perftui.ui.app import PerftuiApp
from perftui.ui.screens import InfoScreen, PromptScreen, SamplesScreen, SectionScreen
from perftui.ui.widgets.panes import Detail, HeaderLine, SectionsPane
from perftui.ui.widgets.records import RecordList
from perftui.ui.widgets.timeline import Timeline

SAMPLE = int(RecordType.SAMPLE)
VCPU0_TID = 3161  # the demo's plan: qemu's vCPU thread "CPU 0/KVM" (demo/generate.py)
IPERF_TID = 3300


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> DemoPlan:
    return write_demo(tmp_path_factory.mktemp("nav") / "demo.data")


@pytest.fixture(scope="module")
def demo(plan: DemoPlan) -> Path:
    return plan.path


@asynccontextmanager
async def browse(path: Path, size: tuple[int, int] = (120, 40), modules: bool = True,
                 **kw: object) -> AsyncIterator[tuple[PerftuiApp, object]]:
    rec = open_recording(path)
    app = PerftuiApp(rec, [str(MODULES_DIR)] if modules else [])
    try:
        async with app.run_test(size=size, **kw) as pilot:  # type: ignore[arg-type]
            await wait_indexed(pilot)
            yield app, pilot
    finally:
        rec.close()


async def prompt(pilot, text: str) -> None:  # type: ignore[no-untyped-def]
    app = pilot.app
    assert isinstance(app.screen, PromptScreen)
    app.screen.query_one(Input).value = text
    await pilot.press("enter")
    await settle(pilot)
    await workers_done(app)
    await settle(pilot)


def view_rows(app: PerftuiApp) -> np.ndarray:
    v = app.model.view()
    return np.arange(app.model.n) if v is None else v


def record_lines(text: str) -> list[str]:
    """The record rows of the list on screen (they start with a hex offset)."""
    import re

    return [ln for ln in text.splitlines() if re.match(r"^│\s+0x[0-9a-f]+[z ]", ln)]


# -- 1. the crash --------------------------------------------------------------------------
@sync
async def test_end_then_range_keeps_the_cursor_on_a_row(demo: Path, plan: DemoPlan) -> None:
    """Issue 9 §1: End, then a range that leaves fewer rows than the cursor position."""
    async with browse(demo) as (app, pilot):
        rl = app.query_one(RecordList)
        await pilot.press("end")
        await pilot.press("T", "shift+right", "shift+right")
        await settle(pilot)
        n = app.model.count()
        assert 0 < n < plan.total
        assert 0 <= rl.cursor < n  # on a row of the new view, and on its record
        assert rl.current_row() == int(view_rows(app)[rl.cursor])
        assert app.query_one(Detail).shown_row == rl.current_row()


@sync
async def test_pagedown_then_filter_keeps_the_cursor_on_a_row(demo: Path) -> None:
    async with browse(demo) as (app, pilot):
        rl = app.query_one(RecordList)
        await pilot.press("pagedown", "pagedown")
        await pilot.press("slash")
        await prompt(pilot, "type=COMM")
        want = np.nonzero(app.model.rec.columns["type"] == RecordType.COMM)[0]
        assert np.array_equal(view_rows(app), want)
        assert 0 <= rl.cursor < len(want)
        assert rl.current_row() in set(want.tolist())


# -- 2. pid 0 is swapper ---------------------------------------------------------------------
@sync
async def test_comm_swapper_matches_the_idle_samples(demo: Path, plan: DemoPlan) -> None:
    """Issue 9 §2: pid 0 has no COMM record; perf names it swapper, and so does comm=."""
    async with browse(demo) as (app, pilot):
        c = app.model.rec.columns
        await pilot.press("slash")
        await prompt(pilot, "comm=swapper type=SAMPLE")
        rows = view_rows(app)
        assert len(rows) == plan.by_tid[0] > 0  # the generator's idle samples
        assert np.all(c["tid"][rows] == 0)
        rl = app.query_one(RecordList)
        rl.jump_to_row(int(rows[0]))
        await settle(pilot)
        assert "comm: swapper" in "\n".join(app.query_one(Detail).lines)


# -- 3. filters and ranges -----------------------------------------------------------------
@sync
async def test_quoted_comm_and_repeated_keys(demo: Path) -> None:
    async with browse(demo, notifications=True) as (app, pilot):
        c = app.model.rec.columns
        await pilot.press("slash")
        await prompt(pilot, 'comm="CPU 0/KVM"')
        assert np.array_equal(view_rows(app), np.nonzero(c["tid"] == VCPU0_TID)[0])
        # a key twice: either value
        await pilot.press("slash")
        await prompt(pilot, 'comm="CPU 0/KVM" comm=iperf3 cpu=0 cpu=2')
        want = np.nonzero(np.isin(c["tid"], [VCPU0_TID, IPERF_TID])
                          & np.isin(c["cpu"], [0, 2]))[0]
        assert len(want) and np.array_equal(view_rows(app), want)
        # an unbalanced quote is an error, and the view stays
        app.clear_notifications()
        await pilot.press("slash")
        await prompt(pilot, 'comm="CPU 0')
        assert np.array_equal(view_rows(app), want)
        assert [n for n in app._notifications if n.severity == "error"]


@sync
async def test_a_filter_that_keeps_nothing_empties_the_detail(demo: Path) -> None:
    """No record in view: the detail pane shows none (it showed the record the cursor was
    on before the filter); a filter that keeps some shows the first again."""
    async with browse(demo) as (app, pilot):
        c = app.model.rec.columns
        detail = app.query_one(Detail)
        await pilot.press("slash")
        await prompt(pilot, f'comm="CPU 0/KVM" tid={IPERF_TID}')  # two threads: none both
        assert not len(view_rows(app)) and not np.any(
            (c["tid"] == VCPU0_TID) & (c["tid"] == IPERF_TID))
        assert detail.shown_row is None and not detail.lines
        assert str(detail.border_title) == "detail"
        await pilot.press("slash")
        await prompt(pilot, "cpu=1")
        await settle(pilot)
        assert detail.shown_row == int(np.nonzero(c["cpu"] == 1)[0][0])


@sync
async def test_active_filter_and_range_are_shown_with_the_count(demo: Path) -> None:
    async with browse(demo) as (app, pilot):
        c = app.model.rec.columns
        rl = app.query_one(RecordList)
        await pilot.press("slash")
        await prompt(pilot, "cpu=1")
        n1 = int(np.count_nonzero(c["cpu"] == 1))
        assert "cpu=1" in str(rl.border_title)
        assert f"{n1:,} of {len(c):,}" in str(rl.border_subtitle)
        await pilot.press("T", "shift+right", "shift+right", "shift+right")
        await workers_done(app)
        await settle(pilot)
        lo, hi = app.model.time_range
        t = c["time"]
        n2 = int(np.count_nonzero((c["cpu"] == 1) & (t >= lo) & (t <= hi)))
        text = screen_text(app)
        assert "cpu=1" in text and "range " in text and f"{n2:,} of {len(c):,}" in text
        # the section pane says which filter and range its counts are under, also when it
        # has the whole screen and the record list is hidden
        await pilot.press("m", "z")
        await settle(pilot)
        pane = app.query_one(SectionsPane)
        assert app.screen.maximized is pane
        head = screen_text(app).splitlines()[0]
        assert "cpu=1" in head and "range " in head, head


@pytest.mark.slow
@sync
async def test_range_applies_to_the_drill_down(demo: Path) -> None:
    async with browse(demo) as (app, pilot):
        c = app.model.rec.columns
        await pilot.press("T", *["right"] * 10, *["shift+right"] * 20)
        await workers_done(app)
        await settle(pilot)
        lo, hi = app.model.time_range
        await pilot.press("m", "down", "enter")
        await settle(pilot)
        assert isinstance(app.screen, SectionScreen)
        await pilot.press("enter")
        await settle(pilot)
        sam = app.screen
        assert isinstance(sam, SamplesScreen) and len(sam.rows)
        t = c["time"][sam.rows]
        assert np.all((t >= lo) & (t <= hi))
        assert "range " in screen_text(app)


@pytest.mark.slow
@sync
async def test_zoom_keeps_the_range_and_the_list_position(demo: Path) -> None:
    async with browse(demo) as (app, pilot):
        rl = app.query_one(RecordList)
        await pilot.press("T", *["right"] * 20, *["shift+right"] * 6)
        await workers_done(app)
        rng = app.model.time_range
        await pilot.press("l", "down", "down", "down", "T")
        row, count = rl.current_row(), app.model.count()
        for key in ("plus", "plus", "minus"):
            await pilot.press(key)
            await settle(pilot)
            assert app.model.time_range == rng
            assert app.query_one(Timeline).time_range() == rng
            assert rl.current_row() == row and app.model.count() == count


@sync
async def test_section_report_is_counted_off_the_ui_thread(
        demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 10: re-counting on a range or filter change runs in a worker thread."""
    async with browse(demo) as (_app, pilot):
        threads: list[str] = []
        real = sectionreport.count_sections

        def spy(*a, **k):  # type: ignore[no-untyped-def]
            threads.append(threading.current_thread().name)
            return real(*a, **k)

        monkeypatch.setattr(sectionreport, "count_sections", spy)
        await pilot.press("T", "shift+right")
        await pilot.press("slash")
        await prompt(pilot, "cpu=2")
        assert len(threads) >= 2
        assert threading.main_thread().name not in threads


# -- 4. layout and navigation -------------------------------------------------------------
@pytest.mark.slow
@sync
async def test_z_gives_the_pane_the_whole_screen(demo: Path) -> None:
    async with browse(demo) as (app, pilot):
        for key, pane in (("m", SectionsPane), ("T", Timeline), ("l", RecordList)):
            await pilot.press(key, "z")
            await settle(pilot)
            w = app.query_one(pane)
            assert app.screen.maximized is w
            assert w.outer_size.width == 120 and w.outer_size.height >= 38
            await pilot.press("z")
        await pilot.press("tab")  # the detail pane
        det = app.query_one(Detail)
        if app.focused is not det:
            det.focus()
        await pilot.press("z")
        await settle(pilot)
        assert det.outer_size.width == 120


@sync
async def test_80x24_and_60x18_show_rows_and_a_readable_header(demo: Path, plan: DemoPlan
                                                                ) -> None:
    async with browse(demo, size=(80, 24)) as (app, pilot):
        text = screen_text(app)
        assert len(record_lines(text)) >= 8
        head = text.splitlines()[0]
        assert "demo.data" in head and f"{plan.total:,} records" in head
        assert f"{plan.samples:,} samples" in head
        # the timeline keeps its four rows
        assert app.query_one(Timeline).bins.labels == ["samples", "maps", "tasks", "other"]
        assert all(k in text for k in ("samples ", "maps ", "tasks ", "other "))
        await pilot.resize_terminal(60, 18)
        await settle(pilot)
        assert len(record_lines(screen_text(app))) >= 3


@pytest.mark.slow
@sync
async def test_resize_keeps_cursor_time_rows_and_one_width(demo: Path) -> None:
    async with browse(demo, size=(120, 40)) as (app, pilot):
        tl = app.query_one(Timeline)
        rl = app.query_one(RecordList)
        await pilot.press("T", *["right"] * 37)
        b = tl.bins
        t_cursor = b.col_time(tl.cursor)
        labels = list(b.labels)
        for size in ((80, 24), (200, 60), (61, 19), (120, 40)):
            await pilot.resize_terminal(*size)
            await settle(pilot)
            b = tl.bins
            col_ns = (b.t1 - b.t0) // b.width + 1
            assert abs(b.col_time(tl.cursor) - t_cursor) <= col_ns, size
            # every visible record line is drawn for the width the list has now
            for y in range(1, min(rl.size.height, rl._count)):
                row = app.model.row(int(rl.scroll_offset.y) + y - 1)
                cached = rl.line_text(row)
                rl.clear_cache()
                assert rl.line_text(row).plain == cached.plain, size
        assert tl.bins.labels == labels


@pytest.mark.slow
@sync
async def test_home_end_in_drill_down_tables_and_esc_returns_to_the_sample(demo: Path) -> None:
    async with browse(demo) as (app, pilot):
        await pilot.press("m", "down", "enter")
        await settle(pilot)
        sec = app.screen
        assert isinstance(sec, SectionScreen)
        table = sec.query_one("#symbols", DataTable)
        await pilot.press("end")
        assert table.cursor_row == table.row_count - 1 > 0
        await pilot.press("home")
        assert table.cursor_row == 0
        await pilot.press("down", "enter")  # the second symbol's samples
        await settle(pilot)
        sam = app.screen
        assert isinstance(sam, SamplesScreen)
        st = sam.query_one(DataTable)
        await pilot.press("end")
        assert st.cursor_row == st.row_count - 1
        await pilot.press("home", "down", "down", "down")
        target = int(sam.rows[3])
        symbol = sam.symbol
        await pilot.press("enter")
        await settle(pilot)
        assert len(app.screen_stack) == 1
        assert app.query_one(RecordList).current_row() == target
        # Esc: back to that samples list, on that row; again: the section, on the symbol
        await pilot.press("escape")
        await settle(pilot)
        back = app.screen
        assert isinstance(back, SamplesScreen) and back.symbol == symbol
        assert back.query_one(DataTable).cursor_row == 3
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, SectionScreen)
        assert app.screen.query_one("#symbols", DataTable).cursor_row == 1
        # q is "back one level" too: after a jump, back to the samples list (not out)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("down", "enter")
        await settle(pilot)
        assert len(app.screen_stack) == 1
        await pilot.press("q")
        await settle(pilot)
        assert app.is_running and isinstance(app.screen, SamplesScreen)
        assert app.screen.query_one(DataTable).cursor_row == 1


@sync
async def test_empty_sections_hidden_and_said_so(demo: Path) -> None:
    async with browse(demo) as (app, pilot):
        m = app.model
        c = m.rec.columns
        kern = np.nonzero((c["type"] == SAMPLE) & (c["cpumode"] == Misc.KERNEL))[0]
        per = np.bincount(m.smap.lookup(m.rec.sample_values(kern, "ip")) + 1,
                          minlength=len(m.smap.entries) + 1)[1:]
        pane = app.query_one(SectionsPane)
        shown = [k for k in pane.entry_of_row if k >= 0]
        assert sorted(shown) == sorted(np.nonzero(per)[0].tolist())  # only the busy ones
        empty = int(np.count_nonzero(per == 0))
        last = pane.get_row_at(pane.row_count - 1)
        assert empty and str(last[0]) == f"+{empty} empty" and str(last[1]) == "a shows"
        labels = [str(col.label) for col in pane.columns.values()]
        assert "% kernel" in labels
        await pilot.press("m", "a")
        assert sorted(k for k in pane.entry_of_row if k >= 0) == list(range(len(per)))
        # open an empty one: it says so
        r = next(i for i, k in enumerate(pane.entry_of_row) if k >= 0 and per[k] == 0)
        pane.move_cursor(row=r)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, SectionScreen)
        assert "no samples in" in screen_text(app)
        assert not app.screen.query(DataTable)


@sync
async def test_share_columns_say_what_they_are_a_share_of(demo: Path) -> None:
    async with browse(demo) as (app, pilot):
        assert "% of" in str(app.query_one(SectionsPane).border_subtitle)
        await pilot.press("m", "down", "enter")
        await settle(pilot)
        t = app.screen.query_one("#symbols", DataTable)
        assert "% of section" in [str(col.label) for col in t.columns.values()]
        for tid in ("#by-cpu", "#by-proc"):
            t = app.screen.query_one(tid, DataTable)
            assert "share" in [str(col.label) for col in t.columns.values()]
            assert "% of section" in str(t.border_title)


@sync
async def test_missing_module_file_message_in_full(demo: Path) -> None:
    async with browse(demo, size=(80, 24), modules=False) as (app, pilot):
        await pilot.press("m", "down", "enter")
        await settle(pilot)
        scr = app.screen
        assert isinstance(scr, SectionScreen)
        note = app.model.report.files.notes[app.model.smap.entries[scr.entry].module]
        assert "looked in" in note
        # every word of the note is on screen: wrapped at spaces, a path longer than the
        # line folded onto the next (the test's home is a long /tmp path), not cut
        shown = "".join(ln.strip(" │") for ln in screen_text(app).splitlines())
        for word in note.split():
            assert word in shown, word


@pytest.mark.slow
@sync
async def test_g_inside_a_record_and_g_seconds(demo: Path) -> None:
    async with browse(demo) as (app, pilot):
        rec = app.model.rec
        c = rec.columns
        rl = app.query_one(RecordList)
        row = 4321
        await pilot.press("g")
        await prompt(pilot, hex(rec.outer_offset(row) + int(c["size"][row]) - 1))
        assert rl.current_row() == row
        first = int(c["time"][(c["type"] == SAMPLE) & (c["time"] > 0)].min())
        t = c["time"].astype(np.int64)
        cand = np.nonzero(t >= first + 2_500_000_000)[0]
        want = int(cand[np.argmin(t[cand])])
        for text in ("2.5", "2.5s"):
            await pilot.press("home", "g")
            await prompt(pilot, text)
            assert rl.current_row() == want, text
        # absolute base: a bare number is an absolute time
        await pilot.press("b", "home", "g")
        await prompt(pilot, f"{(first + 2_500_000_000) / 1e9:.9f}")
        assert rl.current_row() == want


@sync
async def test_ctrl_c_quits(demo: Path) -> None:
    async with browse(demo) as (app, pilot):
        await pilot.press("m", "down", "enter")
        await settle(pilot)
        await pilot.press("ctrl+c")
        await settle(pilot)
        assert not app.is_running
    assert app.return_code == 0


@sync
async def test_info_lists_every_decode_error(tmp_path: Path, demo: Path) -> None:
    """A directory whose two data.N files are both cut inside a record: two errors."""
    raw = demo.read_bytes()
    rec0 = open_recording(demo)
    rec0.build_index()
    start = int(rec0.columns["pos"][0])
    rec0.close()
    d = tmp_path / "two.data"
    d.mkdir()
    (d / "data").write_bytes(raw)
    cuts = {}
    for k, cut in ((0, 1003), (1, 2005)):
        (d / f"data.{k}").write_bytes(raw[start:start + cut])
    async with browse(d) as (app, pilot):
        errs = app.model.rec.errors
        assert len(errs) == 2
        cuts = {e.offset for e in errs}
        assert "(+1 more: i)" in str(app.query_one(HeaderLine).content)
        await pilot.press("i")
        await settle(pilot)
        assert isinstance(app.screen, InfoScreen)
        await pilot.press("end")
        await settle(pilot)
        text = str(app.screen.query_one("Static").content)
        assert "decode errors: 2" in text
        for off in cuts:
            assert f"offset {off:#x}" in text


# -- 5. one time base ------------------------------------------------------------------------
@pytest.mark.slow
@sync
async def test_b_switches_every_pane_between_relative_and_absolute(demo: Path) -> None:
    async with browse(demo) as (app, pilot):
        c = app.model.rec.columns
        rl = app.query_one(RecordList)
        first = int(c["time"][(c["type"] == SAMPLE) & (c["time"] > 0)].min())
        row = int(np.nonzero(c["type"] == SAMPLE)[0][100])
        t = int(c["time"][row])
        rel = f"{(t - first) / 1e9:.6f}"
        absolute = f"{t // 10**9}.{t % 10**9 // 1000:06d}"  # as perf script prints it
        rl.jump_to_row(row)
        await settle(pilot)
        text = screen_text(app)
        assert "time +s" in text and f" {rel} " in text
        assert f"time: {rel} +s ({t} ns)" in "\n".join(app.query_one(Detail).lines)
        await pilot.press("b")
        await settle(pilot)
        text = screen_text(app)
        assert "time s" in text and f" {absolute} " in text
        assert f"time: {absolute} s ({t} ns)" in "\n".join(app.query_one(Detail).lines)
        assert f"{first // 10**9}." in app.query_one(Timeline).render().plain  # the axis
        await pilot.press("m", "down", "enter")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        st = app.screen.query_one(DataTable)
        assert str(next(iter(st.columns.values())).label) == "time s"
        r0 = int(app.screen.rows[0])
        t0 = int(c["time"][r0])
        assert str(st.get_row_at(0)[0]) == f"{t0 // 10**9}.{t0 % 10**9 // 1000:06d}"


# -- 2. one place names threads ----------------------------------------------------------------
class FakeComms:
    """A stand-in comm model: "T<tid><time parity>" (odd/even ns)."""

    def __init__(self, columns: object) -> None:
        self.c = columns

    def comm(self, tid: int, time: int) -> str:
        return f"T{tid}{'odd' if time % 2 else 'even'}"

    def sample_comms(self, rows: np.ndarray) -> tuple[np.ndarray, list[str]]:
        names = [self.comm(int(self.c["tid"][r]), int(self.c["time"][r]))  # type: ignore[index]
                 for r in rows]
        table = sorted(set(names))
        return np.array([table.index(n) for n in names], dtype=np.int64), table


@pytest.mark.slow
@sync
async def test_every_comm_goes_through_the_model_s_one_object(demo: Path) -> None:
    """Issue 9 §2 (the part that does not need perf's rules): swapping Model.comms changes
    the list, the detail, the drill-down and comm= at once."""
    async with browse(demo) as (app, pilot):
        m = app.model
        c = m.rec.columns
        m.comms = FakeComms(c)
        rl = app.query_one(RecordList)
        rl.clear_cache()
        row = int(np.nonzero(c["tid"] == VCPU0_TID)[0][5])
        t = int(c["time"][row])
        name = f"T{VCPU0_TID}{'odd' if t % 2 else 'even'}"
        rl.jump_to_row(row)
        await settle(pilot)
        assert name in screen_text(app)
        assert f"comm: {name}" in "\n".join(app.query_one(Detail).lines)
        await pilot.press("slash")
        await prompt(pilot, f"comm=T{VCPU0_TID}odd")
        odd = np.nonzero((c["tid"] == VCPU0_TID) & (c["time"] % 2 == 1))[0]
        assert np.array_equal(view_rows(app), odd)
        await pilot.press("slash")
        await prompt(pilot, "")
        await pilot.press("m", "down", "enter")
        await settle(pilot)
        assert "T3150" in screen_text(app)  # by process: qemu's pid through the model
        await pilot.press("enter")
        await settle(pilot)
        assert re.search(r"T\d+(odd|even)", screen_text(app))


@sync
async def test_the_thread_model_swaps_in_at_one_place(
        demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """analysis.tasks.comm_model is the one switch: with symbols.threads.ThreadModel (perf's
    rules) every pane and comm= follow (and keep following once the names pass has put
    its own per-sample names, made by the same rules, in its place)."""
    from perftui.analysis import tasks
    from perftui.symbols.tasks.threads import ThreadModel

    built: list[ThreadModel] = []

    def build(rec: object) -> ThreadModel:
        built.append(ThreadModel.build(rec))  # type: ignore[arg-type]
        return built[-1]

    monkeypatch.setattr(tasks, "comm_model", build)
    async with browse(demo) as (app, pilot):
        c = app.model.rec.columns
        assert built, "the switch was not used"
        await pilot.press("slash")
        await prompt(pilot, "comm~CPU type=SAMPLE")
        want = np.nonzero((c["type"] == SAMPLE) & np.isin(c["tid"], [3161, 3162]))[0]
        assert np.array_equal(view_rows(app), want)
        row = int(np.nonzero((c["type"] == SAMPLE) & (c["tid"] == 0))[0][0])
        assert app.model.comm_of(row) == built[0].comm(0, int(c["time"][row])) == "swapper"
