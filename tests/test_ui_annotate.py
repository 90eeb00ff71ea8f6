"""The annotate screen driven by Textual's pilot: every key, every way in.

Oracles: the demo generator's plan (samples per symbol, where each section was loaded),
``objdump -d --adjust-vma=LOAD -j SECTION`` (instruction boundaries and jump targets) with
the recordings' own sample addresses, and recordings written here with samples planted on
known bytes (tests/builders.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import numpy as np
import pytest
from rich.text import Text
from uihelpers import screen_text, settle, sync, wait_indexed, workers_done

from builders import MODULES, Planted, plant_module_samples
from objdump_oracle import OInsn, parse, run_objdump
from perftui.analysis.annotator import Annotator
from perftui.demo.generate import DemoPlan, write_demo
from perftui.perfdata import RecordType, open_recording
from perftui.symbols.modules.modnames import module_name
from perftui.ui.annotate import AnnotateScreen, AnnotateTable, Callee
from perftui.ui.app import PerftuiApp
from perftui.ui.screens import HelpScreen, SamplesScreen, SectionScreen
from perftui.ui.widgets.panes import Detail, SectionsPane
from perftui.ui.widgets.records import RecordList


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> DemoPlan:
    return write_demo(tmp_path_factory.mktemp("demo") / "demo.data")


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Planted]]:
    path = tmp_path_factory.mktemp("planted") / "planted.data"
    return path, plant_module_samples(path, text_in_kmod=False)


@asynccontextmanager
async def browse(path: Path, size: tuple[int, int] = (120, 40)
                 ) -> AsyncIterator[tuple[PerftuiApp, object]]:
    rec = open_recording(path)
    app = PerftuiApp(rec, [str(MODULES)])
    try:
        async with app.run_test(size=size) as pilot:
            await wait_indexed(pilot)
            yield app, pilot
    finally:
        rec.close()


async def press(app: PerftuiApp, pilot, *keys: str) -> None:  # type: ignore[no-untyped-def]
    """Keys, each followed by the workers it started and the screens it pushed."""
    for k in keys:
        await pilot.press(k)
        await settle(pilot)
        await workers_done(app)
        await settle(pilot)


async def opened(app: PerftuiApp, pilot, target) -> AnnotateScreen:  # type: ignore[no-untyped-def]
    app.open_annotate(target)
    await settle(pilot)
    await workers_done(app)
    await settle(pilot)
    screen = app.screen
    assert isinstance(screen, AnnotateScreen) and screen.loaded
    return screen


def rows(screen: AnnotateScreen) -> list[tuple[int | None, int, str]]:
    """(address or None for a source line, samples, text) of every table row."""
    table = screen.query_one(AnnotateTable)
    out = []
    for r in range(table.row_count):
        cells = [c.plain if isinstance(c, Text) else str(c) for c in table.get_row_at(r)]
        if len(cells) < 4 or not cells[2].strip():
            out.append((None, 0, cells[-1]))
        else:
            out.append((int(cells[2], 16), int((cells[1] or "0").replace(",", "")), cells[3]))
    return out


def cursor_addr(screen: AnnotateScreen) -> int | None:
    return rows(screen)[screen.query_one(AnnotateTable).cursor_row][0]


def instructions(screen: AnnotateScreen) -> list[tuple[int, int, str]]:
    return [(a, n, t) for a, n, t in rows(screen) if a is not None]


def objdump_function(ko: Path, section: str, load: int, name: str) -> list[OInsn]:
    text = run_objdump(str(ko), "-dr", f"--adjust-vma={load:#x}", "-j", section)
    return {f.name: f for f in parse(text)}[name].insns


def counts_from_ips(insns: list[OInsn], ips: np.ndarray, end: int) -> list[int]:
    """Samples per objdump instruction: each ip counts for the instruction holding it."""
    starts = np.array([i.addr for i in insns], dtype=np.uint64)
    inside = ips[(ips >= starts[0]) & (ips < np.uint64(end))]
    k = np.searchsorted(starts, inside, side="right") - 1
    return np.bincount(k, minlength=len(insns)).tolist()


def _find(planted: list[Planted], name: str) -> tuple[Planted, str, int, int]:
    for p in planted:
        for sec, fn, off, size in p.functions:
            if fn == name:
                return p, sec, off, size
    raise KeyError(name)


# ------------------------------------------------------------------------------- ways in

@sync
async def test_a_on_a_section_symbol(plan: DemoPlan) -> None:
    """m, Enter, a: the section's hottest symbol annotated; its total is the generator's
    count and every instruction's count is what objdump's boundaries give the recording's
    sample addresses; the cursor is on the hottest instruction."""
    async with browse(plan.path) as (app, pilot):
        await press(app, pilot, "m", "enter")
        sec_screen = app.screen
        assert isinstance(sec_screen, SectionScreen)
        entry = app.model.report.smap.entries[sec_screen.entry]  # type: ignore[union-attr]
        symbol = sec_screen.symbol_names[0]
        await press(app, pilot, "a")
        screen = app.screen
        assert isinstance(screen, AnnotateScreen) and screen.loaded
        assert symbol in screen_text(app).splitlines()[0]
        stem = next(m for m, _ in plan.placed if module_name(m) == entry.module)
        load, _ = plan.placed[stem, entry.section]
        assert sum(n for _, n, _ in instructions(screen)) == \
            plan.in_symbols[stem, entry.section, symbol]
        d = screen.result.annotation.disasm  # type: ignore[union-attr]
        insns = objdump_function(MODULES / f"{stem}.ko", entry.section, load, symbol)
        rec = app.model.rec
        srows = np.flatnonzero(rec.columns["type"] == RecordType.SAMPLE)
        want = counts_from_ips(insns, rec.sample_values(srows, "ip"), d.end)
        got = instructions(screen)
        assert [a for a, _, _ in got] == [i.addr for i in insns if i.addr < d.end]
        assert [n for _, n, _ in got] == want[:len(got)]
        assert cursor_addr(screen) == insns[int(np.argmax(want))].addr
        text = screen_text(app)
        for key in ("Follow", "Back", "Next hot", "Source"):  # the footer names the keys
            assert key in text


@asynccontextmanager
async def names_held_back(path: Path, monkeypatch: pytest.MonkeyPatch
                          ) -> AsyncIterator[tuple[PerftuiApp, object, threading.Event]]:
    """The browser indexed, its names pass held until the event is set."""
    from perftui.ui.model import Model

    gate = threading.Event()
    real = Model.build_names

    def held(self: Model, *a: object, **k: object) -> None:
        gate.wait(60)
        real(self, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(Model, "build_names", held)
    rec = open_recording(path)
    app = PerftuiApp(rec, [str(MODULES)])
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.model.done and bool(
                app.screen_stack[0].query_one(SectionsPane).entry_of_row), "indexed")
            yield app, pilot, gate
            gate.set()
    finally:
        gate.set()
        rec.close()


async def until(pilot, ok, what: str, timeout: float = 90.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not ok():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited for {what}")
        await pilot.pause(0.02)


@sync
async def test_a_before_the_names_opens_once_they_come(
        plan: DemoPlan, monkeypatch: pytest.MonkeyPatch) -> None:
    """a on a section's symbol while the samples are still being named: it says so, and
    the annotation opens when the names arrive (the keys a person types at once)."""
    async with names_held_back(plan.path, monkeypatch) as (app, pilot, gate):
        await pilot.press("m", "enter")
        await settle(pilot)
        sec_screen = app.screen
        assert isinstance(sec_screen, SectionScreen)
        assert sec_screen.symbol_names == []  # its symbols come with the names
        await pilot.press("a")
        await settle(pilot)
        assert app.screen is sec_screen and app.model.names is None
        gate.set()
        await until(pilot, lambda: isinstance(app.screen, AnnotateScreen)
                    and app.screen.loaded, "the annotation")
        symbol = sec_screen.symbol_names[0]  # the busiest, under the cursor
        assert symbol in screen_text(app).splitlines()[0]


@sync
async def test_a_before_the_names_then_away_opens_nothing(
        plan: DemoPlan, monkeypatch: pytest.MonkeyPatch) -> None:
    """a while naming, then Esc: the names arrive on another screen, which stays."""
    async with names_held_back(plan.path, monkeypatch) as (app, pilot, gate):
        await pilot.press("m", "enter")
        await settle(pilot)
        await pilot.press("a", "escape")
        await settle(pilot)
        main = app.screen
        assert not isinstance(main, (SectionScreen, AnnotateScreen))
        gate.set()
        await until(pilot, lambda: app.model.names is not None, "the names")
        await workers_done(app)
        await settle(pilot)
        assert app.screen is main


@sync
async def test_a_on_a_sample_in_the_list_and_on_the_record_list(
        planted: tuple[Path, list[Planted]]) -> None:
    """The first planted sample is on the first byte of the first module's first
    function: a on it (record list, then detail) annotates that function; a on a record
    that is not a sample says so and opens nothing."""
    path, plants = planted
    sec, name, off, _size = plants[0].functions[0]
    async with browse(path) as (app, pilot):
        c = app.model.rec.columns
        first = int(np.flatnonzero(c["type"] == RecordType.SAMPLE)[0])
        records = app.query_one(RecordList)
        assert records.jump_to_row(first)
        await settle(pilot)
        await press(app, pilot, "a")
        screen = app.screen
        assert isinstance(screen, AnnotateScreen)
        assert screen.result is not None and screen.result.ref.name == name
        assert screen.result.annotation.disasm.start == plants[0].loads[sec] + off  # type: ignore[union-attr]
        await press(app, pilot, "escape")
        app.query_one(Detail).focus()
        await press(app, pilot, "a")
        assert isinstance(app.screen, AnnotateScreen)
        assert app.screen.result.ref.name == name  # type: ignore[union-attr]
        await press(app, pilot, "escape")
        assert records.jump_to_row(0)  # the first record: an MMAP
        records.focus()
        await press(app, pilot, "a")
        assert not isinstance(app.screen, AnnotateScreen)
        assert any("SAMPLE" in n.message for n in app._notifications)


@pytest.mark.slow
@sync
async def test_a_in_a_symbols_samples(plan: DemoPlan) -> None:
    async with browse(plan.path) as (app, pilot):
        await press(app, pilot, "m", "enter")
        symbol = app.screen.symbol_names[0]  # type: ignore[attr-defined]
        await press(app, pilot, "enter")
        assert isinstance(app.screen, SamplesScreen)
        await press(app, pilot, "a")
        assert isinstance(app.screen, AnnotateScreen)
        assert app.screen.result.ref.name == symbol  # type: ignore[union-attr]


# ---------------------------------------------------------------------------------- keys

@pytest.mark.slow
@sync
async def test_n_N_and_h_go_through_the_hot_instructions(
        planted: tuple[Path, list[Planted]]) -> None:
    """Samples on the first, middle and last byte (periods 1, 2, 4): h is the instruction
    holding the last byte; n and N walk the hot instructions in address order, wrapping."""
    path, plants = planted
    p, sec, off, size = _find(plants, "demo_nic_rx_poll")
    start = p.loads[sec] + off
    insns = objdump_function(MODULES / "demo_nic.ko", sec, p.loads[sec], "demo_nic_rx_poll")

    def holding(addr: int) -> int:
        return max(i.addr for i in insns if i.addr <= addr)

    hot = sorted({holding(start + o) for o in (0, size // 2, size - 1)})
    assert len(hot) == 3
    async with browse(path) as (app, pilot):
        screen = await opened(app, pilot, ("demo_nic", "demo_nic_rx_poll"))
        assert cursor_addr(screen) == holding(start + size - 1)  # the most period
        await press(app, pilot, "home")
        assert cursor_addr(screen) == hot[0]
        seen = []
        for _ in range(4):
            await press(app, pilot, "n")
            seen.append(cursor_addr(screen))
        assert seen == [hot[1], hot[2], hot[0], hot[1]]
        back = []
        for _ in range(3):
            await press(app, pilot, "N")
            back.append(cursor_addr(screen))
        assert back == [hot[0], hot[2], hot[1]]
        await press(app, pilot, "end", "h")
        assert cursor_addr(screen) == holding(start + size - 1)


@sync
async def test_enter_on_a_jump_moves_within_the_function(
        planted: tuple[Path, list[Planted]]) -> None:
    """Every jump whose target objdump puts inside the function (and no relocation
    fills: ``jmp __x86_return_thunk`` reads as a jump to the next byte before it is
    relocated): Enter moves the cursor to that address."""
    path, plants = planted
    p, sec, off, size = _find(plants, "demo_nic_rx_poll")
    start = p.loads[sec] + off
    insns = objdump_function(MODULES / "demo_nic.ko", sec, p.loads[sec], "demo_nic_rx_poll")
    jumps = [(i.addr, i.target[0]) for i in insns if i.target is not None and
             not i.relocs and i.mnemonic.startswith("j") and start <= i.target[0] < start + size]
    assert len(jumps) >= 2
    async with browse(path) as (app, pilot):
        screen = await opened(app, pilot, ("demo_nic", "demo_nic_rx_poll"))
        table = screen.query_one(AnnotateTable)
        addrs = [a for a, _, _ in rows(screen)]
        for at, target in jumps:
            table.move_cursor(row=addrs.index(at))
            await press(app, pilot, "enter")
            assert app.screen is screen and cursor_addr(screen) == target


@pytest.mark.slow
@sync
async def test_enter_on_a_call_opens_the_callee_and_esc_comes_back(
        planted: tuple[Path, list[Planted]]) -> None:
    """``call demo_nic_rx_one`` (a relocation, objdump -dr): Enter annotates the callee at
    its load address; Esc returns to the caller's screen on the same row."""
    path, plants = planted
    p, sec, _off, _ = _find(plants, "demo_nic_rx_poll")
    dr = {f.name: f for f in parse(run_objdump(str(MODULES / "demo_nic.ko"), "-dr"))}
    call = next(i for i in dr["demo_nic_rx_poll"].insns if i.mnemonic == "call" and
                any(r[2] == "demo_nic_rx_one-0x4" for r in i.relocs))
    call_addr = p.loads[sec] + call.addr
    _, csec, coff, _ = _find(plants, "demo_nic_rx_one")
    async with browse(path) as (app, pilot):
        screen = await opened(app, pilot, ("demo_nic", "demo_nic_rx_poll"))
        table = screen.query_one(AnnotateTable)
        row = [a for a, _, _ in rows(screen)].index(call_addr)
        table.move_cursor(row=row)
        depth = len(app.screen_stack)
        await press(app, pilot, "enter")
        callee = app.screen
        assert isinstance(callee, AnnotateScreen) and callee is not screen
        assert len(app.screen_stack) == depth + 1
        assert callee.result is not None and callee.result.ref.name == "demo_nic_rx_one"
        assert instructions(callee)[0][0] == p.loads[csec] + coff
        await press(app, pilot, "escape")
        assert app.screen is screen and table.cursor_row == row


@sync
async def test_s_toggles_the_source_lines(planted: tuple[Path, list[Planted]]) -> None:
    path, _ = planted
    async with browse(path) as (app, pilot):
        screen = await opened(app, pilot, ("demo_nic", "demo_nic_rx_poll"))
        at = cursor_addr(screen)
        with_source = sum(a is None for a, _, _ in rows(screen))
        assert with_source > 3 and any("demo_nic.c:" in t for a, t in
                                       [(a, t) for a, _, t in rows(screen)] if a is None)
        await press(app, pilot, "s")
        assert sum(a is None for a, _, _ in rows(screen)) == 0
        assert cursor_addr(screen) == at
        await press(app, pilot, "s")
        assert sum(a is None for a, _, _ in rows(screen)) == with_source
        assert cursor_addr(screen) == at


@sync
async def test_help_lists_the_annotate_keys(planted: tuple[Path, list[Planted]]) -> None:
    path, _ = planted
    async with browse(path) as (app, pilot):
        await opened(app, pilot, ("demo_nic", "demo_nic_rx_poll"))
        await press(app, pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = screen_text(app)  # the annotate keys come first: ? was pressed there
        block = text[text.index("annotate (here)"):]
        for key, words in (("n/N", "next / previous instruction with samples"),
                           ("Enter", "on a jump"), ("s", "source lines"),
                           ("h", "hottest"), ("Esc", "back")):
            assert any(key in ln and words in ln for ln in block.splitlines()), key
        assert "annotate: the function" in app.screen._text().plain  # the a keys


# ------------------------------------------------------------------------- what it says

@sync
async def test_a_data_symbol_says_it_is_not_code(planted: tuple[Path, list[Planted]]) -> None:
    from perftui.symbols.code.elfcode import open_elf

    img = open_elf(str(MODULES / "demo_nic.ko"))
    name = img.section_symbols(img.section(".bss").index).names[0]
    path, _ = planted
    async with browse(path) as (app, pilot):
        screen = await opened(app, pilot, ("demo_nic", name))
        assert "not code" in screen_text(app) and not instructions(screen)


@sync
async def test_names_from_files_are_shown_literally(planted: tuple[Path, list[Planted]]) -> None:
    """A name with Rich markup (as a hostile file could hold) is shown as typed, never
    interpreted."""
    path, _ = planted
    evil = "[bold red]x[/]\x1b[31m"
    async with browse(path) as (app, pilot):
        await opened(app, pilot, Callee(evil))
        text = screen_text(app)
        assert "[bold red]x[/]\\x1b[31m" in text


@sync
async def test_nothing_to_annotate_is_said_whole_at_80_columns(
        planted: tuple[Path, list[Planted]]) -> None:
    """Why there is nothing to show is said once, above the table and wrapped: the table's
    one row, saying it again, was cut at 80 columns and scrolled sideways."""
    path, _ = planted
    name = "f" + "x" * 120
    async with browse(path, size=(80, 24)) as (app, pilot):
        screen = await opened(app, pilot, Callee(name))
        assert name in screen_text(app).replace("\n", "")
        table = screen.query_one(AnnotateTable)
        assert [r[-1] for r in rows(screen)] == ["no instructions: why is said above"]
        assert table.virtual_size.width <= table.scrollable_content_region.width


@sync
async def test_the_work_is_done_in_a_worker_thread(
        planted: tuple[Path, list[Planted]], monkeypatch: pytest.MonkeyPatch) -> None:
    path, _ = planted
    threads: list[threading.Thread] = []
    real = Annotator.annotate

    def spy(self, *a, **kw):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread())
        return real(self, *a, **kw)

    monkeypatch.setattr(Annotator, "annotate", spy)
    async with browse(path) as (app, pilot):
        await opened(app, pilot, ("demo_nic", "demo_nic_rx_poll"))
    assert threads and all(t is not threading.main_thread() for t in threads)


@sync
async def test_closing_the_screen_while_it_works(
        planted: tuple[Path, list[Planted]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Esc before the disassembly is done: back at once, and the late result is dropped."""
    path, _ = planted
    real = Annotator.annotate
    release = threading.Event()

    def held(self, *a, **kw):  # type: ignore[no-untyped-def]
        release.wait(30)  # until the test has closed the screen
        return real(self, *a, **kw)

    monkeypatch.setattr(Annotator, "annotate", held)
    async with browse(path) as (app, pilot):
        app.open_annotate(("demo_nic", "demo_nic_rx_poll"))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AnnotateScreen) and not screen.loaded
        await pilot.press("escape")
        await settle(pilot)
        assert len(app.screen_stack) == 1
        release.set()
        await workers_done(app)
        await pilot.pause(0.2)
        assert app._exception is None and len(app.screen_stack) == 1
        assert not screen.loaded  # the result went nowhere


@pytest.mark.slow
@sync
async def test_a_smaller_terminal_keeps_the_cursor_in_view(plan: DemoPlan) -> None:
    """The demo's hottest function opened at 120x40 (the cursor on its hottest instruction,
    the generator's plan's busiest symbol), the terminal shrunk to 80x24 and grown back:
    the cursor's row stays on screen each time."""
    async with browse(plan.path) as (app, pilot):
        screen = await opened(app, pilot, ("[demo_kvm]", "__demo_svm_vcpu_run"))
        table = screen.query_one(AnnotateTable)
        row = table.cursor_row
        assert row > 24  # far enough down that 80x24 cannot show it unscrolled

        def visible() -> bool:
            top = int(table.scroll_y)
            return top <= row < top + table.scrollable_content_region.height

        assert visible()
        for size in ((80, 24), (120, 40), (80, 12)):
            await pilot.resize_terminal(*size)
            await settle(pilot)
            await pilot.pause(0.1)
            assert table.cursor_row == row and visible(), size
