"""The section drill-down's symbols (:meth:`ProfileData.section_symbols`): the names pass and
the one aggregation, against ``perf report --sort sym`` and against the demo's plan."""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from inproc import run_cli
from test_sections import KPATH, NIC, _text_functions_by_readelf, layout, plant
from textual.widgets import DataTable
from uihelpers import screen_text, settle, sync, workers_done

from perftui.demo import MODULES_DIR
from perftui.demo.generate import write_demo
from perftui.perfdata import open_recording
from perftui.perfdata.constants import Misc
from perftui.symbols.modules.sectiontable import NO_SYMBOL
from perftui.ui.app import PerftuiApp
from perftui.ui.model import Model
from perftui.ui.profiledata import ProfileData, Scope
from perftui.ui.screens import SamplesScreen, SectionScreen
from perftui.ui.widgets.panes import SectionsPane

ROW = re.compile(r"^\s+[\d.]+%\s+(\d+)\s+\[k\] (\S+)\s*$")


def _model(path: Path, modules_dir: Path | str) -> Model:
    """A headless browser model of ``path``, indexed and named."""
    m = Model(open_recording(path), [str(modules_dir)])
    m.rec.build_index()
    m.finish()
    m.build_names()
    assert m.report is not None and m.groups is not None
    return m


def _planted_in_symfs(tmp_path: Path) -> tuple[list, dict, list, Path, Path]:
    """A module without a section map (its .text at the MMAP start), each readelf function
    of its .text sampled 1..7 times and two addresses past them (3 and 2 samples), with
    the .ko in a ``--symfs`` tree at its recorded path: (funcs, layout, ips, file, symfs)."""
    funcs = _text_functions_by_readelf()
    at = layout()
    ips = [(at[".text"] + value + size // 2, Misc.KERNEL)
           for k, (_n, value, size) in enumerate(funcs) for _ in range(k + 1)]
    # past every function of .text: two addresses, each a row of perf's
    ips += [(at[".text"] + 0xFFF0, Misc.KERNEL)] * 3 + [(at[".text"] + 0xFF00, Misc.KERNEL)] * 2
    p = tmp_path / "f.data"
    plant(p, ips, with_kmod=False)
    symfs = tmp_path / "symfs"
    ko = symfs / KPATH.lstrip("/")
    ko.parent.mkdir(parents=True)
    shutil.copy(NIC, ko)
    return funcs, at, ips, p, symfs


@pytest.mark.perf
def test_symbols_equal_perf_report_sort_sym(tmp_path: Path) -> None:
    """A module without a section map (its .text at the MMAP start, perf's rule): each
    readelf function sampled 1..7 times and two addresses no symbol covers; perf 6.1 reads
    the .ko through --symfs.  Every named row equals perf's.  perf has a row for each
    address (printed file-relative, 0x10090, as perftui report prints it:
    :func:`test_report_through_symfs_is_perfs`); the drill-down lists them together as
    ``[no symbol]``, as ``perftui sections --symbols`` does."""
    funcs, at, ips, p, symfs = _planted_in_symfs(tmp_path)
    assert len(funcs) >= 5
    ko = symfs / KPATH.lstrip("/")
    out = subprocess.run(["perf", "report", "-f", "--stdio", "--sort", "sym", "-n",
                          "--no-children", "--symfs", str(symfs), "-i", str(p)],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    perf = [(m.group(2), int(m.group(1))) for m in map(ROW.match, out.splitlines()) if m]
    perf_named = {n: c for n, c in perf if not n.startswith("0x")}
    assert len(perf_named) == len(funcs) and sum(c for _n, c in perf) == len(ips)

    m = _model(p, ko.parent)
    (entry,) = range(len(m.report.smap.entries))
    syms = ProfileData(m).section_symbols(m.report, entry)
    assert syms is not None
    got = [(name, syms.counts[i]) for i, name in enumerate(syms.labels)]
    assert {n: c for (n, c), named in zip(got, syms.named, strict=True) if named} == perf_named
    # the addresses no symbol covers: perf's two rows are one, as perftui sections lists them
    assert sorted(c for n, c in perf if n.startswith("0x")) == [2, 3]
    assert [(n, c) for (n, c), named in zip(got, syms.named, strict=True) if not named] == \
        [(NO_SYMBOL, 5)]
    assert [c for _n, c in got] == sorted(c for _n, c in got)[::-1]  # busiest first
    ip_of = {row: ip for row, ip in zip(m.rec.rows_of_type(9).tolist(),
                                        (ip for ip, _m in ips), strict=True)}
    for i, name in enumerate(syms.labels):
        rows = syms.rows_named(name)
        assert len(rows) == syms.counts[i]
        if syms.named[i]:
            k = [f[0] for f in funcs].index(name)
            assert {ip_of[int(r)] for r in rows} == {at[".text"] + funcs[k][1] + funcs[k][2] // 2}


@pytest.mark.perf
@pytest.mark.parametrize("children", ["--no-children", "--children"])
def test_report_through_symfs_is_perfs(tmp_path: Path, children: str) -> None:
    """A module found through ``--symfs`` (its recorded path under the directory, as perf
    joins them), with samples inside its functions and at two addresses of its .text no
    symbol covers: ``perftui report`` prints perf 6.1's report byte for byte, call graphs
    included.  perf shows an uncovered address of a module it read from the module's start
    in the file (map__map_ip, pgoff the .text's sh_offset: readelf's), not as recorded."""
    funcs, _at, _ips, p, symfs = _planted_in_symfs(tmp_path)
    args = ["--stdio", "--sort", "dso,sym", "-n", children, "-i", str(p), "--symfs", str(symfs)]
    perf = subprocess.run(["perf", "report", "-f", *args], capture_output=True, text=True,
                          timeout=120, check=True).stdout
    text_offset = int(subprocess.run(
        ["readelf", "-SW", str(NIC)], capture_output=True, text=True, check=True
    ).stdout.split(" .text ")[1].split()[2], 16)  # Type, Address, Off
    assert f"[k] 0x{0xFFF0 + text_offset:016x}" in perf  # what the docstring says perf does
    ours = run_cli("report", *args[1:], "--no-cache")
    assert ours.returncode == 0, ours.stderr

    def rows(text: str) -> list[str]:
        return [line for line in text.splitlines() if line and not line.startswith("#")]

    assert rows(ours.stdout) == rows(perf)
    assert sum(f"[k] {n}" in ours.stdout for n, _v, _s in funcs) == len(funcs)


def test_demo_sections_equal_the_plan_and_the_profile(tmp_path: Path) -> None:
    """Every KMOD_SEC_MAP section of the demo: the generator's planted symbol counts, and
    the same rows as the profile's ``sym`` table of that section (the sections pane's p)."""
    plan = write_demo(tmp_path / "demo.data")
    m = _model(plan.path, MODULES_DIR)
    data = ProfileData(m)
    seen = 0
    for k, e in enumerate(m.report.smap.entries):
        want = {sym: n for (mod, sec, sym), n in plan.in_symbols.items()
                if (mod.replace("-", "_"), sec) == (e.module, e.section)}
        syms = data.section_symbols(m.report, k)
        assert syms is not None
        got = {name: syms.counts[i] for i, name in enumerate(syms.labels)}
        assert got == want, e.label
        if not want:
            continue
        seen += 1
        assert all(syms.named)
        counts = Counter()
        for attr in m.groups.attrs:  # the profile shows one event at a time
            gp = data.table(Scope(m.flt, attr, (e.module, e.section)), ("sym",), False)
            assert gp is not None
            for r in range(len(gp)):
                counts[m.groups.locs.label(int(gp.loc[r]))] += int(gp.samples[r])
        assert dict(counts) == got, e.label
    assert seen >= 3


@pytest.mark.slow
@sync
async def test_a_drill_down_opened_before_the_names_fills_in_when_they_come(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The names pass held back: the section's symbols pane says it waits for them, the
    splits are there; once the names are built the pane lists the plan's symbols, and Enter
    lists a symbol's samples."""
    plan = write_demo(tmp_path / "demo.data")
    release = threading.Event()
    build_names = Model.build_names

    def held(self: Model, *a: object, **k: object) -> None:
        release.wait(60)
        build_names(self, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(Model, "build_names", held)
    rec = open_recording(plan.path)
    app = PerftuiApp(rec, [str(MODULES_DIR)])
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            deadline = time.monotonic() + 60
            while not (app.model.done and app.query_one(SectionsPane).entry_of_row):
                assert time.monotonic() < deadline, "indexing did not finish"
                await pilot.pause(0.05)
            await pilot.press("m", "down", "enter")
            await settle(pilot)
            scr = app.screen
            assert isinstance(scr, SectionScreen) and app.model.groups is None
            e = app.model.report.smap.entries[scr.entry]
            assert (e.module, e.section) == ("demo_kvm", ".noinstr.text")
            assert "naming the samples…" in screen_text(app) and scr.symbol_names == []
            assert scr.query_one("#by-cpu", DataTable).row_count
            release.set()
            await workers_done(app)
            await settle(pilot)
            want = sorted(((sym, n) for (mod, sec, sym), n in plan.in_symbols.items()
                           if (mod, sec) == ("demo-kvm", ".noinstr.text")),
                          key=lambda x: (-x[1], x[0]))
            table = scr.query_one("#symbols", DataTable)
            assert [(str(table.get_row_at(r)[2]),
                     int(str(table.get_row_at(r)[0]).replace(",", "")))
                    for r in range(table.row_count)] == want
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, SamplesScreen) and app.screen.symbol == want[0][0]
            assert len(app.screen.rows) == want[0][1]
    finally:
        release.set()
        rec.close()
