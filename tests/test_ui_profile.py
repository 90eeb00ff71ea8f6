"""The profile views in the browser (issue 12): ``p`` (hotspot table, callers and callees,
call trees), ``f`` (flame graph), the samples behind them and the way back, driven by keys.

The counts on screen are compared with the demo generator's own plan (``DemoPlan``: what
it wrote where, per thread, and which module function each callchain names as the
caller), with the demo's module files as the generator placed them, and with numpy over
the index columns; never with perftui's analysis helpers.  perf itself is the oracle of
tests/test_ui_profile_perf.py.
"""

from __future__ import annotations

import itertools
import re
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from test_ui_pilot import browse
from textual.pilot import Pilot
from uihelpers import screen_text, settle, sync, workers_done

from builders import EVIL_COMM, hostile
from perftui.demo.generate import DemoPlan, place_modules, write_demo
from perftui.perfdata import EventAttr, RecordType, Sample
from perftui.perfdata.constants import CONTEXT_KERNEL, Misc
from perftui.perfdata.writer import Writer
from perftui.ui.app import PerftuiApp
from perftui.ui.samplescreen import ProfileSamplesScreen, SampleLines
from perftui.ui.screens import PromptScreen
from perftui.ui.widgets.calltrees import CallTreeList
from perftui.ui.widgets.flame import FlameGraph, FlamePane
from perftui.ui.widgets.hotspots import HotspotTable
from perftui.ui.widgets.profile import ProfilePane
from perftui.ui.widgets.records import RecordList

pytestmark = pytest.mark.slow



@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> DemoPlan:
    return write_demo(tmp_path_factory.mktemp("profile") / "demo.data")


# -- reading the screen ----------------------------------------------------------------------
async def idle(pilot: Pilot) -> None:
    """Until every worker (tables, trees, flame, samples) is done and its result shown."""
    app = pilot.app
    deadline = time.monotonic() + 60
    while True:
        await workers_done(app)
        await settle(pilot)
        if not any(w.is_running for w in app.workers):
            return
        if time.monotonic() > deadline:
            raise AssertionError("workers did not finish")


async def keys(pilot: Pilot, *names: str) -> None:
    for k in names:
        await pilot.press(k)
        await idle(pilot)


async def prompt(pilot: Pilot, key: str, text: str) -> None:
    """Open a prompt with ``key``, type ``text`` over what is there, Enter."""
    await keys(pilot, key)
    assert isinstance(pilot.app.screen, PromptScreen)
    await keys(pilot, "ctrl+a", "ctrl+k")  # Input: to the start, delete to the end
    if text:
        await pilot.press(*text)
    await keys(pilot, "enter")


def table(app: PerftuiApp) -> HotspotTable:
    return app.query_one(HotspotTable)


#: the percent columns perf report shows: with children (callchains), and self only
PERCENT_HEADS = {True: ["Children", "Self"], False: ["Overhead"]}


def plan_has_children(plan: DemoPlan) -> bool:
    """Whether the demo's table shows Children: the generator writes callchains (its plan
    counts the samples whose callchain names a caller), and perf report's default for a
    recording with callchains is children."""
    return sum(plan.callers.values()) > 0


def table_lines(app: PerftuiApp, children: bool | None = None
                ) -> tuple[list[str], list[list[str]]]:
    """The table's header names and, per row, its cells as drawn: the percent columns,
    the samples, then one text per sort key (cut at the header's column starts).

    The percent columns are the header's words before "Samples", and must be one of perf's
    two layouts; ``children`` (when given) says which one is expected.
    """
    t = table(app)
    head = t.header()
    assert head is not None, t.line(0).plain
    h = head.plain
    v = t.view
    assert v is not None
    names = h[:h.index("Samples")].split()
    assert names in PERCENT_HEADS.values(), h
    if children is not None:
        assert names == PERCENT_HEADS[children], h
    from perftui.present.report import HEADERS

    titles = [HEADERS[k] for k in v.gp.keys]
    starts = []
    pos = h.index("Samples") + len("Samples")
    for k, title in zip(v.gp.keys, titles, strict=True):
        # (a column narrower than its heading is headed by the key's name)
        pos = h.index(title if title in h[pos:] else k, pos)
        starts.append(pos)
    rows = []
    for i in range(t.line_count()):
        line = t.line(i).plain
        nums = line[:starts[0]].split()
        cells = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], len(line)],
                                                    strict=True)]
        rows.append(nums + cells)
    return [*names, "Samples", *titles], rows


def tree_lines(app: PerftuiApp, depth: int | None = None) -> list[tuple[int, int, str]]:
    """(tree, samples, frame text) of the lines of the call trees (samples -1: the tree's
    heading), of every depth or only of ``depth`` (1: the roots); the tree and the depth
    are read from what is drawn (headings, indentation)."""
    tl = app.query_one(CallTreeList)
    out = []
    forest = -1
    for i in range(tl.line_count()):
        text = tl.line(i).plain
        if not text.startswith(" "):  # a heading: "▾ callers ..."
            forest += 1
            out.append((forest, -1, text))
            continue
        m = re.match(r"^\s*\S+\s+\S+\s+([\d,]+)  ( *)(.*)$", text)
        assert m, text
        if depth is not None and len(m.group(2)) // 2 + 1 != depth:
            continue
        frame = m.group(3).lstrip("▾▸· ").strip()
        out.append((forest, int(m.group(1).replace(",", "")), frame))
    return out


def planned_symbols(plan: DemoPlan) -> Counter[str]:
    out: Counter[str] = Counter()
    for (_mod, _sec, sym), n in plan.in_symbols.items():
        out[sym] += n
    return out


def symbol_ranges(module: str, section: str) -> dict[str, tuple[int, int]]:
    """symbol -> [start, end) as the generator placed the module (its own placement)."""
    p = next(p for p in place_modules() if p.module == module)
    table = p.mf.symbols(section)
    base = p.sections[section]
    return {n: (base + int(table.starts[i]), base + int(table.starts[i])
                + max(1, int(table.sizes[i]))) for i, n in enumerate(table.names)}


# -- the hotspot table --------------------------------------------------------------------------
@sync
async def test_section_key_opens_the_section_profile(plan: DemoPlan) -> None:
    async with browse(plan.path) as (app, pilot):
        await keys(pilot, "m", "down", "p")  # the first section line: [demo_kvm].noinstr.text
        assert app.body == "profile"
        heads, rows = table_lines(app, children=plan_has_children(plan))
        assert heads[-3:] == ["Module", "Section", "Symbol"]
        want = {sym: n for (mod, sec, sym), n in plan.in_symbols.items()
                if mod == "demo-kvm" and sec == ".noinstr.text"}
        got = {r[-1].removeprefix("[k] "): int(r[2].replace(",", "")) for r in rows}
        assert got == want
        assert {(r[-3], r[-2]) for r in rows} == {("demo_kvm", ".noinstr.text")}
        title = screen_text(app)
        assert f"{plan.in_sections['demo-kvm', '.noinstr.text']:,} samples" in title
        # Esc: back to the records, the section pane focused again
        await keys(pilot, "escape")
        assert app.body == "records" and app.focused is not None
        assert app.focused.id == "sections"
        # the module line: the whole module, every section of it
        await keys(pilot, "up", "p")
        _heads, rows = table_lines(app, children=plan_has_children(plan))
        want = {(sec, sym): n for (mod, sec, sym), n in plan.in_symbols.items()
                if mod == "demo-kvm"}
        got = {(r[-2], r[-1].removeprefix("[k] ")): int(r[2].replace(",", "")) for r in rows}
        assert got == want
        # p from the records: everything again (no section), perf's default keys
        await keys(pilot, "escape", "l", "p")
        assert "demo_kvm].noinstr" not in screen_text(app)
        heads, _rows = table_lines(app)
        assert heads[-3:] == ["Module", "Section", "Symbol"]  # the keys stay as chosen


@sync
async def test_sort_keys_and_self_only_count_what_the_plan_wrote(plan: DemoPlan) -> None:
    async with browse(plan.path) as (app, pilot):
        await keys(pilot, "p")
        heads, rows = table_lines(app)
        assert heads == ["Children", "Self", "Samples", "Command", "Shared Object", "Symbol"]
        # every sample is counted once as self
        assert sum(int(r[2].replace(",", "")) for r in rows) == plan.samples
        await prompt(pilot, "s", "sym")
        heads, rows = table_lines(app)
        assert heads == ["Children", "Self", "Samples", "Symbol"]
        got = {r[-1].removeprefix("[k] "): int(r[2].replace(",", "")) for r in rows}
        want = planned_symbols(plan)
        assert {k: got[k] for k in want} == dict(want)
        # self only: one percent column, ordered by it, shares of the period (equal periods:
        # of the samples)
        await keys(pilot, "c")
        heads, rows = table_lines(app)
        assert heads == ["Overhead", "Samples", "Symbol"]
        shares = [float(r[0].rstrip("%")) for r in rows]
        assert shares == sorted(shares, reverse=True)
        for r in rows:
            n = int(r[1].replace(",", ""))
            assert abs(float(r[0].rstrip("%")) - 100 * n / plan.samples) <= 0.005
        # S goes round the common key sets; a bad key is an error that changes nothing
        await keys(pilot, "S")
        assert table_lines(app)[0] == ["Overhead", "Samples", "Command"]  # after sym: comm
        await prompt(pilot, "s", "dso,bogus")
        assert table_lines(app)[0] == ["Overhead", "Samples", "Command"]
        await prompt(pilot, "s", "pid")
        heads, rows = table_lines(app)
        assert heads[-1] == "Pid:Command"
        by_tid = {int(r[-1].split(":")[0]): int(r[1].replace(",", "")) for r in rows}
        assert by_tid == dict(plan.by_tid)


@sync
async def test_find_by_name_and_escape_clears_it(plan: DemoPlan) -> None:
    async with browse(plan.path) as (app, pilot):
        await keys(pilot, "p")
        await prompt(pilot, "s", "sym")
        await prompt(pilot, "slash", "CSUM")  # case-insensitive, a substring
        _heads, rows = table_lines(app, children=plan_has_children(plan))
        names = {r[-1].removeprefix("[k] ") for r in rows}
        assert names == {s for s in planned_symbols(plan) if "csum" in s}
        await prompt(pilot, "slash", "no such symbol")
        assert table(app).line_count() == 1
        assert "no row matches" in table(app).line(0).plain
        await keys(pilot, "enter", "v")  # no row under the cursor: nothing happens
        assert app.body == "profile" and len(app.screen_stack) == 1
        assert app.query_one(ProfilePane).level == "table"
        await keys(pilot, "t", "escape")  # the trees of everything, and back
        assert app.query_one(ProfilePane).level == "table"
        await keys(pilot, "escape")  # clears the find
        assert len(table_lines(app)[1]) > len(names)
        await keys(pilot, "escape")
        assert app.body == "records"


@sync
async def test_a_wider_terminal_keeps_the_cursor_on_the_note(plan: DemoPlan) -> None:
    """A note wrapped to two lines at 60 columns is one line at 200: the cursor on its
    second line comes back to the first (it stayed past the end: found by the seeded walk)."""
    async with browse(plan.path, size=(60, 18)) as (app, pilot):
        await prompt(pilot, "slash", "type=COMM,MMAP2 comm=qemu comm=iperf3 time=0%-10%,50%-60%")
        await keys(pilot, "p", "end")
        assert table(app).line_count() == 2 and table(app).cursor == 1
        await pilot.resize_terminal(200, 60)
        await idle(pilot)
        assert table(app).line_count() == 1 and table(app).cursor == 0


# -- callers, callees and call trees ------------------------------------------------------------
@sync
async def test_callers_and_callees_follow_the_plan(plan: DemoPlan) -> None:
    async with browse(plan.path) as (app, pilot):
        await keys(pilot, "p")
        await prompt(pilot, "s", "sym")
        await prompt(pilot, "slash", "demo_kvm_arch_vcpu_ioctl_run")
        assert len(table_lines(app)[1]) == 1
        await keys(pilot, "enter")
        pane = app.query_one(ProfilePane)
        assert pane.level == "trees" and app.focused is app.query_one(CallTreeList)
        lines = tree_lines(app)
        callees = [x for x in lines if x[0] == 1]
        # the callees' heading counts every sample through the function ...
        through = sum(n for (_m, _s, caller), n in plan.callers.items()
                      if caller == "demo_kvm_arch_vcpu_ioctl_run")
        assert callees[0][1] == -1 and f"{through:,} samples" in callees[0][2]
        # ... and, opened, each module function it calls has the planned samples
        # (the first root is open; its children are the callees)
        below = {name.split("  ")[0].removeprefix("[k] "): n
                 for f, n, name in tree_lines(app, depth=2) if f == 1 and "demo_" in name}
        want = {sym: n for (mod, sym, caller), n in plan.callers.items()
                if caller == "demo_kvm_arch_vcpu_ioctl_run" and mod}
        assert below == want
        # its callers, from its innermost frame up: itself (a sample in it names it as
        # its own caller too) and do_syscall_64 (an address: the demo has no vmlinux
        # symbols), nothing else
        callers = [x for x in lines if x[0] == 0]
        assert callers[1][1] == through  # the root: the function itself
        again = plan.callers["demo-kvm", "demo_kvm_arch_vcpu_ioctl_run",
                             "demo_kvm_arch_vcpu_ioctl_run"]
        level1 = {name.split("  ")[0].removeprefix("[k] "): n
                  for f, n, name in tree_lines(app, depth=2) if f == 0 and n >= 0}
        assert level1 == {"demo_kvm_arch_vcpu_ioctl_run": again,
                          "0xffffffff82b6e1a0": through - again}
        # keys: collapse, expand, subtree, all, collapse all
        tl = app.query_one(CallTreeList)
        n_open = len(tl.lines)
        assert tl.lines[tl.cursor].depth == 1  # the cursor starts on the row's own frame
        await keys(pilot, "left")  # the root of the callers: collapsed
        assert len(tl.lines) < n_open
        await keys(pilot, "right")
        assert len(tl.lines) == n_open
        await keys(pilot, "E")
        every = len(tl.lines)
        assert every > n_open
        await keys(pilot, "C")  # collapse all: the headings and their roots
        assert max(ln.depth for ln in tl.lines) == 1
        roots = len(tl.lines)
        await keys(pilot, "home", "enter")  # the callers' heading closes, and opens
        assert len(tl.lines) == roots - 1
        await keys(pilot, "enter")
        assert len(tl.lines) == roots
        await keys(pilot, "down", "e")  # the root's whole subtree
        assert len(tl.lines) > roots
        await keys(pilot, "e")
        assert len(tl.lines) == roots
        await keys(pilot, "escape")
        assert pane.level == "table" and app.focused is table(app)
        await keys(pilot, "t")  # the trees of everything shown
        lines = tree_lines(app)
        top = [x for x in lines if x[0] == 0]
        assert top[0][1] == -1 and f"{plan.samples:,} samples" in top[0][2]
        await keys(pilot, "escape", "escape", "escape")
        assert app.body == "records"


# -- samples and the way to their records --------------------------------------------------------
@sync
async def test_samples_of_a_row_jump_to_their_records_and_back(plan: DemoPlan) -> None:
    sym = "demo_nic_csum_partial"
    lo, hi = symbol_ranges("demo_nic", ".text")[sym]
    want = planned_symbols(plan)[sym]
    async with browse(plan.path) as (app, pilot):
        await keys(pilot, "p")
        await prompt(pilot, "s", "dso,sym")
        await prompt(pilot, "slash", sym)
        await keys(pilot, "c")  # self only: the samples whose own symbol it is
        await keys(pilot, "v")
        screen = app.screen
        assert isinstance(screen, ProfileSamplesScreen)
        rows = screen.rows
        assert len(rows) == want
        c = app.model.rec.columns
        assert (c["type"][rows] == RecordType.SAMPLE).all()
        ips = app.model.rec.sample_values(rows, "ip")
        assert ((ips >= lo) & (ips < hi)).all()
        lines = screen.query_one(SampleLines)
        assert lines.line_count() == want
        await keys(pilot, "down", "down", "enter")  # the third sample: its record
        assert len(app.screen_stack) == 1 and app.body == "records"
        rl = app.query_one(RecordList)
        assert rl.current_row() == int(rows[2])
        await keys(pilot, "escape")  # back to the samples, the same one under the cursor
        assert isinstance(app.screen, ProfileSamplesScreen)
        assert app.screen.query_one(SampleLines).cursor == 2
        await keys(pilot, "escape")
        assert app.body == "profile" and table(app).view is not None
        # with Children, v lists the samples through the row
        await keys(pilot, "escape", "escape")
        assert app.body == "records"


# -- the flame graph ------------------------------------------------------------------------------
def status(app: PerftuiApp) -> str:
    return str(app.query_one("#flame-status").render())


@sync
async def test_flame_graph_paints_zooms_and_counts_as_planned(plan: DemoPlan) -> None:
    async with browse(plan.path) as (app, pilot):
        await keys(pilot, "f")
        assert app.body == "flame"
        g = app.query_one(FlameGraph)
        assert app.focused is g
        assert status(app).startswith("all") and f"{plan.samples:,} samples" in status(app)
        # / paints: the share of the matching frames is the planned share of the symbol
        await prompt(pilot, "slash", "__demo_svm_vcpu_run")
        share = 100 * planned_symbols(plan)["__demo_svm_vcpu_run"] / plan.samples
        assert f"{share:.2f}% matched" in screen_text(app)
        await keys(pilot, "n")
        assert "__demo_svm_vcpu_run" in status(app)
        # down to the threads, right to CPU 0/KVM: its planned samples
        await keys(pilot, "home", "down")
        for _ in range(12):
            if "CPU 0/KVM" in status(app):
                break
            await keys(pilot, "right")
        assert f"comm CPU 0/KVM (pid 3150)  {plan.by_tid[3161]:,} samples" in status(app)
        await keys(pilot, "enter")  # zoom into the thread
        assert g.zoom and "zoom: CPU 0/KVM" in screen_text(app)
        top = g.levels[0]
        assert len(top) == 1 and top[0].x1 - top[0].x0 == g.size.width
        await keys(pilot, "down", "down")
        assert "[demo_kvm]" not in status(app) or "samples" in status(app)
        await keys(pilot, "v")  # the samples through the frame
        assert isinstance(app.screen, ProfileSamplesScreen)
        n = len(app.screen.rows)
        assert f"{n:,} samples" in status(app)
        await keys(pilot, "escape")
        await keys(pilot, "escape")  # zoom out
        assert not g.zoom and "CPU 0/KVM" in status(app)
        await keys(pilot, "escape")  # clear the paint
        assert g.match is None
        await keys(pilot, "escape")  # back where it came from
        assert app.body == "records"
        # f again from the profile: back to the profile
        await keys(pilot, "p", "f")
        assert app.body == "flame"
        await keys(pilot, "f")
        assert app.body == "profile"


@sync
async def test_flame_graph_is_readable_at_80x24(plan: DemoPlan) -> None:
    async with browse(plan.path, size=(80, 24)) as (app, pilot):
        await keys(pilot, "f", "down", "down")
        text = screen_text(app)
        lines = text.splitlines()
        # the title, the threads named, a status line naming the frame under the cursor
        assert any(ln.startswith(" flame graph") for ln in lines)
        assert any("swapper" in ln and "CPU 0/KVM" in ln for ln in lines)
        assert "samples" in lines[-2] and "%" in lines[-2]
        g = app.query_one(FlameGraph)
        for row in g.levels:  # frames tile the row, never overlap
            for a, b in itertools.pairwise(row):
                assert a.x1 <= b.x0
        await pilot.resize_terminal(60, 18)
        await idle(pilot)
        assert all(f.x1 <= 60 for row in g.levels for f in row)
        await pilot.resize_terminal(200, 60)
        await idle(pilot)
        assert g.levels[0][0].x1 == 200


# -- following the filter and the range ------------------------------------------------------------
@sync
async def test_profile_and_flame_follow_the_filter_and_the_range(plan: DemoPlan) -> None:
    async with browse(plan.path) as (app, pilot):
        c = app.model.rec.columns
        samples = np.nonzero(c["type"][:len(c)] == RecordType.SAMPLE)[0]
        await keys(pilot, "p")
        await prompt(pilot, "F", "cpu=1")
        want = int((c["cpu"][samples] == 1).sum())
        assert f"{want:,} samples" in screen_text(app)
        _h, rows = table_lines(app)
        assert sum(int(r[2].replace(",", "")) for r in rows) == want
        # End, then a range on the timeline: the table shrinks, the cursor stays on a row
        await keys(pilot, "end")
        await keys(pilot, "T", *["right"] * 10, *["shift+right"] * 6)
        lo, hi = app.model.time_range
        t = c["time"][samples]
        want = int(((c["cpu"][samples] == 1) & (t >= lo) & (t <= hi)).sum())
        assert f"{want:,} samples" in screen_text(app)
        tb = table(app)
        assert 0 <= tb.cursor < tb.line_count()
        _h, rows = table_lines(app)
        assert sum(int(r[2].replace(",", "")) for r in rows) == want
        # the flame graph counts the same samples
        await keys(pilot, "f")
        assert app.query_one(FlamePane).samples == want
        # a range with no sample: both say so
        await prompt(pilot, "F", "cpu=1 time=0.0001s,0.0002s")
        assert "no samples" in screen_text(app)
        await keys(pilot, "p")
        assert "no samples" in table(app).line(0).plain
        await keys(pilot, "enter", "v", "t", "c", "S")
        assert len(app.screen_stack) == 1


# -- every way back -------------------------------------------------------------------
@sync
async def test_every_level_goes_back(plan: DemoPlan) -> None:
    async with browse(plan.path) as (app, pilot):
        for path in (("p",), ("p", "enter"), ("p", "t"), ("f",), ("f", "down", "enter")):
            await keys(pilot, *path)
            for _ in range(6):
                if app.body == "records":
                    break
                await keys(pilot, "escape")
            assert app.body == "records", path
            assert app.focused is app.query_one(RecordList)
        # q goes back too, never quits from a profile view
        await keys(pilot, "p", "enter", "q", "q")
        assert app.body == "records" and app.is_running
        await keys(pilot, "f", "q")
        assert app.body == "records" and app.is_running
        # p and f again toggle back
        await keys(pilot, "p", "p")
        assert app.body == "records"
        # m and l from a profile view: the records and the pane asked for
        await keys(pilot, "f", "m")
        assert app.body == "records" and app.focused is not None
        assert app.focused.id == "sections"
        await keys(pilot, "p", "l")
        assert app.body == "records" and app.focused is app.query_one(RecordList)


# -- recordings without callchains, without samples, with hostile names -------------------------
def flat_recording(path: Path, callchain: bool, samples: int) -> Path:
    """Kernel samples in the demo module demo_crc's .text (its .ko is at hand), with or
    without callchains; two threads."""
    placed = next(p for p in place_modules() if p.module == "demo_crc")
    base = placed.sections[".text"]
    st = Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD
    if callchain:
        st |= Sample.CALLCHAIN
    attr = EventAttr(type=1, size=128, sample_type=int(st), flags=1 << 18, ids=[7],
                     name="cpu-clock")
    with open(path, "wb") as f:
        w = Writer(f, [attr], {})
        b = w.b
        w.write(b.kernel("MMAP", {"pid": -1, "tid": 0, "addr": base, "len": 0x1000, "pgoff": 0,
                                  "filename": placed.path}, misc=Misc.KERNEL))
        for tid, comm in ((41, "alpha"), (42, "beta")):
            w.write(b.kernel("COMM", {"pid": tid, "tid": tid, "comm": comm}))
        for k in range(samples):
            tid = 41 + k % 2
            ip = base + 0x10 + (k % 3)
            s = {"ip": ip, "pid": tid, "tid": tid, "time": 1000 + k, "cpu": 0, "period": 1}
            if callchain:
                s["callchain"] = [CONTEXT_KERNEL, ip]
            w.write(b.sample(s, misc=Misc.KERNEL))
        w.close()
    return path


@sync
async def test_a_recording_without_callchains(tmp_path: Path) -> None:
    path = flat_recording(tmp_path / "flat.data", callchain=False, samples=30)
    async with browse(path) as (app, pilot):
        await keys(pilot, "p")
        heads, rows = table_lines(app)
        assert heads[0] == "Overhead"  # no Children column
        assert sum(int(r[1].replace(",", "")) for r in rows) == 30
        assert {r[2] for r in rows} == {"alpha", "beta"}
        await keys(pilot, "c")  # nothing to toggle: said, nothing changes
        assert table_lines(app)[0][0] == "Overhead"
        await keys(pilot, "enter")
        lines = tree_lines(app)
        # callers: the function, then its thread; callees: the function alone
        assert [n for f, n, _t in lines if f == 0][1:3] == [15, 15]
        await keys(pilot, "escape", "f", "down", "down")
        assert "15 samples" in status(app)


@sync
async def test_a_recording_without_samples(tmp_path: Path) -> None:
    path = flat_recording(tmp_path / "none.data", callchain=True, samples=0)
    async with browse(path) as (app, pilot):
        await keys(pilot, "p")
        assert "no samples" in table(app).line(0).plain
        await keys(pilot, "enter", "v", "t", "c", "s")
        if isinstance(app.screen, PromptScreen):
            await keys(pilot, "escape")
        await keys(pilot, "f", "enter", "down", "right", "v", "slash")
        if isinstance(app.screen, PromptScreen):
            await keys(pilot, "escape")
        assert "no samples" in screen_text(app)
        await keys(pilot, "escape")  # back to the profile it was opened from
        assert app.body == "profile"
        await keys(pilot, "escape", "escape")
        assert app.body == "records"


@sync
async def test_hostile_names_stay_text(tmp_path: Path) -> None:
    path = hostile(tmp_path / "hostile.data")
    async with browse(path) as (app, pilot):
        for path_keys in (("p",), ("p", "enter"), ("f", "down")):
            await keys(pilot, *path_keys)
            text = screen_text(app)
            assert "\x1b" not in text and "\x07" not in text
            await keys(pilot, "escape", "escape", "escape")
        await keys(pilot, "p")
        _h, rows = table_lines(app)
        comms = {r[3] for r in rows}
        assert any("\\x1b" in c for c in comms), comms  # written as an escape
        assert EVIL_COMM.decode()[:5] in "".join(comms)  # the markup as text


@sync
async def test_before_the_names_the_views_say_so(plan: DemoPlan) -> None:
    async with browse(plan.path, index=False) as (app, pilot):
        await keys(pilot, "p")
        assert "indexing" in table(app).line(0).plain
        await keys(pilot, "enter", "t", "v")
        await keys(pilot, "escape", "f")
        assert "indexing" in screen_text(app)
        app.indexer.start()
        deadline = time.monotonic() + 60
        while app.model.groups is None and time.monotonic() < deadline:
            await pilot.pause(0.05)
        await idle(pilot)
        assert app.query_one(FlamePane).samples == plan.samples
        await keys(pilot, "escape")
        await keys(pilot, "p")
        assert table(app).view is not None



# -- a: annotate from the profile views ------------------------------------------------------------
@sync
async def test_a_annotates_the_row_line_or_frame(plan: DemoPlan) -> None:
    from test_ui_annotate import instructions

    from perftui.ui.annotate import AnnotateScreen

    sym = "__demo_svm_vcpu_run"
    want = planned_symbols(plan)[sym]

    async def annotated() -> None:
        screen = app.screen
        assert isinstance(screen, AnnotateScreen), type(screen)
        for _ in range(200):
            if screen.loaded:
                break
            await pilot.pause(0.05)
        assert sym in screen_text(app).splitlines()[0]
        # its samples per instruction add up to the samples the generator put in it
        assert sum(n for _a, n, _t in instructions(screen)) == want
        await keys(pilot, "escape")

    async with browse(plan.path) as (app, pilot):
        await keys(pilot, "p", "a")  # comm,dso,sym: the first row's function is unnamed
        assert len(app.screen_stack) == 1
        await prompt(pilot, "s", "comm")
        await keys(pilot, "a")  # no sym key: said, nothing opens
        assert len(app.screen_stack) == 1
        await prompt(pilot, "s", "sym")
        await prompt(pilot, "slash", sym)
        await keys(pilot, "a")
        await annotated()
        assert app.body == "profile" and app.focused is table(app)
        await keys(pilot, "enter", "a")  # the callers' root: the function itself
        await annotated()
        assert app.query_one(ProfilePane).level == "trees"
        await keys(pilot, "escape", "f")
        await prompt(pilot, "slash", sym)
        await keys(pilot, "n", "a")
        await annotated()
        assert app.body == "flame"


@sync
async def test_a_failing_count_is_said_and_the_browser_goes_on(
        plan: DemoPlan, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from perftui.ui.profiledata import ProfileData

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # where the traceback goes

    def broken(*_a: object, **_k: object) -> None:
        raise RuntimeError("planted failure")

    async with browse(plan.path) as (app, pilot):
        monkeypatch.setattr(ProfileData, "table", broken)
        monkeypatch.setattr(ProfileData, "selection", broken)
        await keys(pilot, "p")
        line = table(app).line(0).plain
        assert "internal error (RuntimeError: planted failure)" in line
        assert list((tmp_path / "perftui").glob("crash-*.txt"))
        await keys(pilot, "f")
        assert "planted failure" in screen_text(app)
        await keys(pilot, "escape", "escape", "l", "down")
        assert app.is_running and app.body == "records"


async def selected_row(pilot: Pilot, want: list[int] | None, timeout: float = 30) -> None:
    """Until the timeline draws the selected row as ``want`` (its counts per column; None:
    no such row)."""
    from perftui.ui.widgets.timeline import SELECTED, Timeline

    tl = pilot.app.query_one(Timeline)
    deadline = time.monotonic() + timeout
    while True:
        await idle(pilot)
        b = tl.bins
        got = (b.counts[1].tolist() if b is not None and len(b.labels) > 1
               and b.labels[1] == SELECTED else None)
        if got == want:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"selected row: {got} (want {want})")
        await pilot.pause(0.05)


def by_columns(app: PerftuiApp, rows: np.ndarray) -> list[int]:
    """The samples of index ``rows`` per column of the timeline, binned here by the edges
    its bins say their columns have."""
    from perftui.ui.widgets.timeline import Timeline

    b = app.query_one(Timeline).bins
    assert b is not None and b.edges is not None
    t = app.model.rec.columns["time"][rows].astype(np.int64)
    col = np.searchsorted(np.asarray(b.edges, dtype=np.int64), t, side="right") - 1
    return np.bincount(col[(col >= 0) & (col < b.width)], minlength=b.width).tolist()


@sync
async def test_the_selected_row_and_section_show_in_the_timeline(plan: DemoPlan) -> None:
    """DESIGN §3: whatever row is selected (a process, a symbol, a section) also shows in
    the timeline as its own density row, under the samples; it follows the cursor, and
    goes with the view."""
    async with browse(plan.path) as (app, pilot):
        await keys(pilot, "p", "c")  # self only: a row's samples are its own
        await prompt(pilot, "s", "pid")
        c = app.model.rec.columns
        samples = c["type"] == RecordType.SAMPLE
        _heads, rows = table_lines(app)
        for i in range(min(3, len(rows))):
            tid = int(rows[i][-1].split(":")[0])
            want = by_columns(app, np.flatnonzero(samples & (c["tid"] == tid)))
            assert sum(want) == plan.by_tid[tid]
            await selected_row(pilot, want)
            await keys(pilot, "down")
        await keys(pilot, "escape")  # the records: no row
        await selected_row(pilot, None)
        # a section of the section pane (its kernel samples with an ip in the section
        # where the generator placed it)
        from perftui.ui.widgets.panes import SectionsPane

        pane = app.query_one(SectionsPane)
        pane.focus()
        rep = app.model.report
        assert rep is not None
        from perftui.symbols.modules.modnames import module_name

        placed = {(module_name(f), sec): v for (f, sec), v in plan.placed.items()}
        planned = {(module_name(f), sec): v for (f, sec), v in plan.in_sections.items()}
        ks = np.flatnonzero(samples & (c["cpumode"] == Misc.KERNEL))
        ips = app.model.rec.sample_values(ks, "ip").astype(np.uint64)
        for r in range(len(pane.entry_of_row)):
            k = pane.entry_of_row[r]
            if k < 0:
                continue
            e = rep.smap.entries[k]
            start, size = placed[(e.module, e.section)]
            inside = ks[(ips >= np.uint64(start)) & (ips < np.uint64(start + size))]
            assert len(inside) == planned[(e.module, e.section)]
            pane.move_cursor(row=r)
            await selected_row(pilot, by_columns(app, inside))
            break
        else:
            raise AssertionError("no section with samples in the pane")
        app.query_one(RecordList).focus()  # away from the pane: no row
        await selected_row(pilot, None)
        # the flame graph's frame: "all" first, every sample; then a thread's frame
        await keys(pilot, "f")
        assert status(app).startswith("all ")
        every = np.flatnonzero(samples)
        assert len(every) == plan.samples
        await selected_row(pilot, by_columns(app, every))
        await keys(pilot, "down")
        m = re.match(r"comm (.+?) \((?:pid \d+|[^)]*)\)\s+([\d,]+) samples", status(app))
        assert m is not None, status(app)
        thread = np.array([app.model.comm_of(int(r)) == m.group(1) for r in every])
        want = by_columns(app, every[thread])
        assert sum(want) == int(m.group(2).replace(",", ""))
        await selected_row(pilot, want)


@sync
async def test_a_new_selection_does_not_bin_the_timeline_again(
        plan: DemoPlan, monkeypatch: pytest.MonkeyPatch) -> None:
    """Zoomed in, the timeline's kind rows are a pass over every row (seconds at 50 M
    records): a cursor moving in the profile changes only the selected row."""
    import perftui.ui.widgets.timeline as tlmod

    async with browse(plan.path) as (app, pilot):
        await keys(pilot, "p", "c")
        await prompt(pilot, "s", "pid")
        tl = app.query_one(tlmod.Timeline)
        tl.focus()
        await keys(pilot, "plus", "plus")  # zoomed in: a window of a quarter
        assert tl.view is not None
        calls: list[object] = []
        real = tlmod.timeline_bins

        def counting(*a: object, **k: object) -> object:
            calls.append(a)
            return real(*a, **k)  # type: ignore[arg-type]

        monkeypatch.setattr(tlmod, "timeline_bins", counting)
        app.query_one(ProfilePane).focus_view()
        c = app.model.rec.columns
        samples = c["type"] == RecordType.SAMPLE
        _heads, rows = table_lines(app)
        for i in range(2):
            tid = int(rows[i][-1].split(":")[0])
            await selected_row(pilot, by_columns(app, np.flatnonzero(samples & (c["tid"] == tid))))
            await keys(pilot, "down")
        assert not calls


@sync
async def test_a_call_tree_line_shows_in_the_timeline(plan: DemoPlan) -> None:
    """The call trees' line under the cursor: its samples (through it) as the selected row,
    as many as the line says; the heading, every sample of its tree."""
    async with browse(plan.path) as (app, pilot):
        await keys(pilot, "p", "t")
        trees = app.query_one(CallTreeList)
        lines = tree_lines(app)
        assert lines[0][1] == -1  # the first tree's heading: every sample
        every = np.flatnonzero(app.model.rec.columns["type"] == RecordType.SAMPLE)
        trees.cursor = 0
        await selected_row(pilot, by_columns(app, every))
        from perftui.ui.widgets.timeline import SELECTED, Timeline

        tl = app.query_one(Timeline)
        for i in (1, 2):  # a root (a thread), then its first child
            trees.cursor = i
            want = tree_lines(app)[i][1]
            assert want > 0
            for _ in range(400):
                await idle(pilot)
                b = tl.bins
                if b is not None and b.labels[1] == SELECTED and int(b.counts[1].sum()) == want:
                    break
                await pilot.pause(0.05)
            else:
                raise AssertionError(f"line {i}: the selected row never held {want} samples")
