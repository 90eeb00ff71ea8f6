"""``srcline`` and ``srcfile`` in the browser's sort keys, against perf 6.1's
``report --sort srcline`` on a fresh recording of dwchain (tests/dwarfprograms.py,
``-O2 -fomit-frame-pointer -g``, frame-pointer callchains).

The split by source line is made in the profile's counting worker (never on the UI thread:
keys typed meanwhile wait, type-ahead) and kept with the index cache: a reopened browser
reads no DWARF for it.  The callers and callees of a row and the samples list show each
frame's, each sample's line.  Transforms apply to it as to every table: to the functions
its rows' lines are in.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from dwarfprograms import DwarfBuilt
from perfprograms import require
from test_report_perf import _perf_key, perf_rows
from test_transforms import Definition, drop_function, focus_function, merge_function
from test_ui_pilot import browse
from test_ui_profile import idle, keys, prompt, table, tree_lines
from testapi import keys_pending
from textual.pilot import Pilot
from uihelpers import sync, wait_indexed

from perftui.perfdata import open_recording
from perftui.perfdata.indexcache import IndexCache
from perftui.present.report import key_text
from perftui.symbols.naming import srclines
from perftui.ui.app import PerftuiApp
from perftui.ui.samplescreen import ProfileSamplesScreen, SampleLines
from perftui.ui.widgets.profile import ProfilePane

pytestmark = pytest.mark.perf


@pytest.fixture(scope="module")
def fp(dwarf_built: DwarfBuilt, recorded) -> Path:
    return recorded("dwchain_fp", dwarf_built.dwchain, "20", callgraph=True)


def shown(app: PerftuiApp) -> dict[tuple[str, ...], int]:
    """The profile's rows: key texts -> samples."""
    v = table(app).view
    assert v is not None
    names = app.query_one(ProfilePane).data.names(v.gp.selection.store)
    assert names is not None
    out = {}
    for r in v.rows.tolist():
        row = v.gp.row(int(r))
        out[tuple(_perf_key(key_text(v.gp.shell, names, row, i))
                  for i in range(len(v.gp.keys)))] = \
            row.samples
    return out


def perf_samples(data: Path, keys: str) -> dict[tuple[str, ...], int]:
    (rows,) = perf_rows(data, keys, children=False)["cpu-clock"]
    return {k: sum(v[2] for v in vals) for k, vals in rows.items()}


def as_perf_prints(ours: dict[tuple[str, ...], int], perf: dict[tuple[str, ...], int]
                   ) -> dict[tuple[str, ...], int]:
    """Our rows keyed as perf prints them: perf cuts a srcline after another key to its
    column's width (``__list_del_entry`` for ``__list_del_entry_valid_or_report+71``), so
    each of our keys becomes the longest of perf's it starts with, key by key."""
    out: dict[tuple[str, ...], int] = {}
    for k, n in ours.items():
        hits = [p for p in perf if len(p) == len(k)
                and all(o == q or o.startswith(q) for o, q in zip(k, p, strict=True))]
        key = max(hits, key=lambda p: sum(map(len, p))) if hits else k
        out[key] = out.get(key, 0) + n
    return out


@pytest.mark.parametrize("sort", ["srcline", "srcfile", "sym,srcline"])
@sync
async def test_rows_equal_perf(fp: Path, sort: str) -> None:
    want = perf_samples(fp, sort)
    assert len(want) >= 5
    async with browse(fp) as (app, pilot):
        await keys(pilot, "p", "c")  # self only: perf's --no-children
        await prompt(pilot, "s", sort)
        assert as_perf_prints(shown(app), want) == want


@sync
async def test_callers_callees_and_samples_show_the_line(fp: Path) -> None:
    async with browse(fp) as (app, pilot):
        await keys(pilot, "p", "c")
        await prompt(pilot, "s", "srcline")
        at, line = next((i, k[0]) for i, k in enumerate(shown(app)) if ".c:" in k[0])
        await keys(pilot, *["down"] * at, "enter")  # the first DWARF line, dwchain.c:N
        callers = [t for t in tree_lines(app) if t[0] == 0 and t[1] >= 0]
        assert callers and line in callers[0][2]
        await keys(pilot, "escape", "v")
        assert isinstance(app.screen, ProfileSamplesScreen)
        lst = app.screen.query_one(SampleLines)
        samples = [lst.line(i).plain for i in range(lst.line_count())]
    assert len(samples) == perf_samples(fp, "srcline")[(line,)]
    assert all(s.endswith("  " + line) for s in samples)


@asynccontextmanager
async def cached(path: Path, cache: Path) -> AsyncIterator[tuple[PerftuiApp, Pilot]]:
    """The browser on ``path`` with the index cache in ``cache`` (as perftui opens it)."""
    rec = open_recording(path, cache=IndexCache(str(cache)), mapped=True)
    app = PerftuiApp(rec, [])
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_indexed(pilot)
            yield app, pilot
    finally:
        rec.close()


@sync
async def test_a_reopen_reads_no_dwarf(fp: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "fp.data"
    data.write_bytes(fp.read_bytes())
    async with cached(data, tmp_path / "cache") as (app, pilot):
        await keys(pilot, "p", "c")
        await prompt(pilot, "s", "srcline")
        first = shown(app)

    def no_dwarf(*_a: object) -> tuple[str, str]:
        raise AssertionError("the DWARF was read again")

    monkeypatch.setattr(srclines.SourceLines, "texts", no_dwarf)
    async with cached(data, tmp_path / "cache") as (app, pilot):
        await keys(pilot, "p", "c")
        await prompt(pilot, "s", "srcline")
        assert shown(app) == first
        assert not any("source lines" in n for n in app.model.rec.cache.notes)
    assert first == perf_samples(fp, "srcline")


BURST = ("p", "c", "s", "ctrl+a", "ctrl+k", *"srcline", "enter", "down", "down", "enter")


async def _burst(fp: Path, slow: bool) -> tuple[int | None, str]:
    async with browse(fp) as (app, pilot):
        if slow:
            for k in BURST:
                await pilot.press(k)
                await idle(pilot)
        else:
            await pilot.press(*BURST)
            deadline = time.monotonic() + 120
            while keys_pending(app) and time.monotonic() < deadline:
                await pilot.pause(0.05)
            await idle(pilot)
        pane = app.query_one(ProfilePane)
        return pane.tree_row is not None and table(app).view is not None and \
            table(app).current_row(), pane.tree_title


def test_keys_typed_in_a_burst_wait_for_the_table(fp: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``s srcline Enter Down Down Enter`` typed at once opens the third row's callers and
    callees, as typed slowly, though each split by source line is made 0.3 s slow (no
    cache: each browser splits anew)."""
    import asyncio

    from perftui.present import session

    real = session.by_source_line

    def slow(*a: object, **kw: object):  # type: ignore[no-untyped-def]
        time.sleep(0.3)
        return real(*a, **{**kw, "keep": False})  # type: ignore[arg-type]

    monkeypatch.setattr(session, "by_source_line", slow)
    want = asyncio.run(_burst(fp, slow=True))
    assert want[1].startswith("callers and callees of ")
    assert asyncio.run(_burst(fp, slow=False)) == want


HEAD = re.compile(r"^\s*\d+\s*$")
#: a callchain entry as perf script prints it: (symbol, (srcline, dso's base name)); the
#: definitions of tests/test_transforms.py read the symbol, first
Frame = tuple[str, tuple[str, str]]


def script_stacks(data: Path) -> Counter[tuple[Frame, ...]]:
    """Every sample's frames, outermost first, of ``perf script -F tid,ip,sym,dso,srcline``
    (each entry's line, then its srcline on the next, when it has one)."""
    p = subprocess.run([require("perf"), "script", "-i", str(data), "-F",
                        "tid,ip,sym,dso,srcline"], capture_output=True, text=True,
                       timeout=300, cwd=data.parent)
    assert p.returncode == 0, p.stderr[-400:]
    out: Counter[tuple[Frame, ...]] = Counter()
    frames: list[list[str]] | None = None
    for line in [*p.stdout.splitlines(), ""]:
        if HEAD.match(line):
            frames = []
        elif line.startswith("\t") and frames is not None:
            entry, _, dso = line.rstrip().rpartition(" (")
            parts = entry.split(None, 1)
            frames.append([parts[1] if len(parts) > 1 else "", "",
                           dso.removesuffix(")").rsplit("/", 1)[-1]])
        elif line.startswith("  ") and frames:
            frames[-1][1] = line.strip()
        elif not line.strip() and frames is not None:
            out[tuple((f[0], (f[1], f[2])) for f in reversed(frames))] += 1
            frames = None
    return out


def collapse_dso(dso: str) -> Definition:
    """collapse-resource: each run of ``dso``'s frames one frame, named by the dso (its
    srcline ``dso+0``, as ``perftui report --collapse-resource`` names it: perf's text of a
    symbol without a line)."""
    def d(fs: list[Frame]) -> list[Frame]:
        out: list[Frame] = []
        for f in fs:
            if f[1][1] != dso:
                out.append(f)
            elif not out or out[-1][0] != dso:
                out.append((dso, (f"{dso}+0", dso)))
        return out
    return d  # type: ignore[return-value]


def self_by_line(stacks: Counter[tuple[Frame, ...]], *defs: Definition
                 ) -> dict[tuple[str], int]:
    """Samples per leaf srcline after each transform's definition (tests/test_transforms.py,
    on perf script's frames), only the lines of the program's own source and collapsed
    frames (the other rows' texts differ between perf script and report: a kernel
    address, sym+off)."""
    out: Counter[tuple[str]] = Counter()
    for frames, n in stacks.items():
        got: list[Frame] | None = list(frames)
        for d in defs:
            got = d(got) if got else None  # type: ignore[arg-type]
        if got:
            out[(got[-1][1][0],)] += n
    return {k: v for k, v in out.items() if SOURCE_LINE.match(k[0])}


SOURCE_LINE = re.compile(r"^(dw(chain|lib)\.c:\d+|libdwlib\.so\+0)$")


def shown_lines(app: PerftuiApp) -> dict[tuple[str], int]:
    return {k: v for k, v in shown(app).items() if SOURCE_LINE.match(k[0])}


async def to_key(pilot: Pilot, app: PerftuiApp, key: tuple[str, ...]) -> None:
    """The table's cursor to the row ``key`` (of :func:`shown`)."""
    at = list(shown(app)).index(key)
    await keys(pilot, "home", *["down"] * at)


@sync
async def test_transforms_apply_to_the_table_by_source_line(fp: Path) -> None:
    """A transform pushed from a table by sym, then a table by srcline; and pushed from a
    table by sym,srcline (its rows' locations split by line: the transform is of their
    function).  Oracle: each transform's definition on perf 6.1's perf script frames."""
    stacks = script_stacks(fp)
    plain = self_by_line(stacks)
    assert len(plain) >= 5
    for d in (drop_function("cb_square"), focus_function("leaf"), merge_function("dwlib_tiny")):
        assert self_by_line(stacks, d) != plain  # (each transform changes the rows)
    async with browse(fp) as (app, pilot):
        await keys(pilot, "p")
        await prompt(pilot, "s", "sym")
        names = [k[0] for k in shown(app)]
        await keys(pilot, "home", *["down"] * names.index("cb_square"), "D")
        await keys(pilot, "c")  # self only
        await prompt(pilot, "s", "srcline")
        assert shown_lines(app) == self_by_line(stacks, drop_function("cb_square"))
        assert "drop cb_square" in str(app.query_one(ProfilePane).query_one(
            "#profile-title").render())
        await keys(pilot, "u")
        assert shown_lines(app) == self_by_line(stacks)
        # from the sym,srcline table: focus on leaf's function (rows of two of its lines
        # are one function), then merge dwlib_tiny into its callers
        await prompt(pilot, "s", "sym,srcline")
        leaf_rows = [k for k in shown(app) if k[0] == "leaf"]
        assert len(leaf_rows) >= 2
        await to_key(pilot, app, leaf_rows[-1])
        await keys(pilot, "o")
        await prompt(pilot, "s", "srcline")
        assert shown_lines(app) == self_by_line(stacks, focus_function("leaf"))
        await keys(pilot, "u")
        await prompt(pilot, "s", "sym,srcline")
        tiny = next(k for k in shown(app) if k[0] == "dwlib_tiny")
        await to_key(pilot, app, tiny)
        await keys(pilot, "M")
        await prompt(pilot, "s", "srcline")
        assert shown_lines(app) == self_by_line(stacks, merge_function("dwlib_tiny"))
        # libdwlib.so's runs collapsed (from the same table), then the collapsed frame
        # (a location after the split's) merged into its callers
        await keys(pilot, "u")
        await prompt(pilot, "s", "sym,srcline")
        await to_key(pilot, app, tiny)
        await keys(pilot, "L")
        await prompt(pilot, "s", "srcline")
        collapsed = self_by_line(stacks, collapse_dso("libdwlib.so"))
        assert ("libdwlib.so+0",) in collapsed
        assert shown_lines(app) == collapsed
        await prompt(pilot, "s", "sym,srcline")
        await to_key(pilot, app, ("libdwlib.so", "libdwlib.so+0"))
        await keys(pilot, "M")
        await prompt(pilot, "s", "srcline")
        both = self_by_line(stacks, collapse_dso("libdwlib.so"), merge_function("libdwlib.so"))
        assert both != collapsed
        assert shown_lines(app) == both
        assert "collapse libdwlib.so › merge libdwlib.so" in str(
            app.query_one(ProfilePane).query_one("#profile-title").render())
        # the sandwich of a row of the sym,srcline table is of its function
        await keys(pilot, "u", "u")
        await prompt(pilot, "s", "sym,srcline")
        await to_key(pilot, app, next(k for k in shown(app) if k[0] == "leaf"))
        await keys(pilot, "w")
        pane = app.query_one(ProfilePane)
        assert pane.tree_title.startswith("sandwich of leaf:"), pane.tree_title
        await idle(pilot)
        roots = [t for t in tree_lines(app, 1) if t[1] >= 0]
        assert len(roots) == 2 and all(t[2].startswith("[.] leaf ") for t in roots), roots
