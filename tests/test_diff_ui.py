"""The diff browser under Textual's pilot, on two writer-built module recordings whose
planted samples are the oracle (tests/builders.py ``module_recording``): the module, section
and symbol levels show the planted shares, Enter and Backspace walk the drill-down (Enter on
a module's line opens its first section, as the one-recording sections pane does), ``c``
and ``v`` change the order and the table, a range on one timeline regroups that side only
(its samples counted from the builder's one-sample-a-millisecond plan), and the work runs
in thread workers, never on the UI thread.  The module lines of ``perftui diff --demo``'s
two recordings equal the demo generator's plans.
"""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import pytest
from textual.pilot import Pilot
from uihelpers import screen_text, sync, workers_done

from builders import module_recording
from perftui.demo import MODULES_DIR
from perftui.perfdata import open_recording
from perftui.ui.diffapp import DiffApp, DiffTable, SideTimeline
from perftui.ui.diffmodel import DiffModel, Level

MODNAME = {"demo-kvm": "demo_kvm", "demo_nic": "demo_nic", "demo_crc": "demo_crc"}
OLD = {("demo_nic", ".text", "demo_nic_rx_poll"): 400,
       ("demo_nic", ".text", "demo_nic_csum_partial"): 200,
       ("demo_nic", ".text.unlikely", "demo_nic_handle_error"): 10,
       ("demo-kvm", ".noinstr.text", "__demo_svm_vcpu_run"): 300,
       ("demo_crc", ".text", "demo_crc32_le_slice4"): 150}
NEW = {("demo_nic", ".text", "demo_nic_rx_poll"): 250,
       ("demo_nic", ".text", "demo_nic_csum_partial"): 200,
       ("demo_nic", ".text.unlikely", "demo_nic_handle_error"): 160,
       ("demo-kvm", ".noinstr.text", "__demo_svm_vcpu_run"): 300,
       ("demo-kvm", ".text.unlikely", "demo_kvm_report_emulation_failure"): 40}


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict, dict]:
    d = tmp_path_factory.mktemp("diffui")
    po = module_recording(d / "old.data", OLD, hostname="old-host")
    pn = module_recording(d / "new.data", NEW, hostname="new-host")
    return d / "old.data", d / "new.data", po, pn


def make_app(planted: tuple[Path, Path, dict, dict]) -> DiffApp:
    old, new, _po, _pn = planted
    return DiffApp(DiffModel.of(open_recording(old), open_recording(new), [str(MODULES_DIR)]))


async def shown(pilot: Pilot, timeout: float = 90.0) -> None:
    """Until both sides are grouped and the table of the current level is shown."""
    import time

    app = pilot.app
    assert isinstance(app, DiffApp)
    end = time.monotonic() + timeout
    while True:
        await workers_done(app)
        await pilot.pause()
        if app.model.ready and app.diff is not None and app.shown_level == app.model.level \
                and not app.comparing:
            return
        assert time.monotonic() < end, "the diff never showed"
        await pilot.pause(0.05)


async def press(pilot: Pilot, *keys: str) -> None:
    for k in keys:
        await pilot.press(k)
        await shown(pilot)


def shares(periods: dict, width: int, where: tuple[str, ...] = ()) -> dict:
    """Share (%) of the whole recording per key cut to ``width`` parts, under ``where``."""
    total = sum(periods.values())
    out: Counter = Counter()
    for (mod, sec, sym), p in periods.items():
        key = (MODNAME[mod], sec, sym)
        if key[:len(where)] == where:
            out[key[:width]] += p
    return {k: 100.0 * v / total for k, v in out.items()}


def largest_change(po: dict, pn: dict, width: int, where: tuple[str, ...] = ()) -> tuple:
    """The key perf diff puts first: of the rows with a NEW side, the largest |delta|."""
    o, n = shares(po, width, where), shares(pn, width, where)
    return max(n, key=lambda k: abs(n[k] - o.get(k, 0.0)))


def module_shares(periods: dict) -> dict:
    """Share (%) of the whole recording per module."""
    return {k[0]: v for k, v in shares(periods, 1).items()}


def perf_order(old: dict, new: dict, old_period: dict) -> list:
    """perf diff's delta-abs order of shares: the rows with a NEW side first, the largest
    |delta| first, then the larger baseline period, then the name (builtin-diff.c)."""
    def key(k: tuple) -> tuple:
        gone = k not in new
        delta = 0.0 if gone else new[k] - old.get(k, 0.0)
        return (gone, -abs(delta), -old_period.get(k, 0), k)

    return sorted({**old, **new}, key=key)


def planted_lines(po: dict, pn: dict) -> list:
    """The top level's lines from the builder's plans: each module in perf's order of its
    total, then its sections in perf's order of theirs."""
    def periods(plan: dict, width: int) -> Counter:
        out: Counter = Counter()
        for (mod, sec, sym), p in plan.items():
            out[(MODNAME[mod], sec, sym)[:width]] += p
        return out

    mo, mn = shares(po, 1), shares(pn, 1)
    so, sn = shares(po, 2), shares(pn, 2)
    out: list = []
    for (m,) in perf_order(mo, mn, periods(po, 1)):
        out.append(("module", m))
        out += [k for k in perf_order(so, sn, periods(po, 2)) if k[0] == m]
    return out


def module_lines(app: DiffApp) -> dict:
    """The module lines of the table: module -> (baseline, new, delta)."""
    return {ln.row.key[0]: (ln.row.baseline, ln.row.share, ln.row.delta)
            for ln in app.lines if ln.module}


def line_keys(app: DiffApp) -> list:
    """The table's lines as the top level lists them: ("module", name) for a module's
    total, then (module, section) for each of its sections."""
    return [("module", ln.row.key[0]) if ln.module else ln.row.key for ln in app.lines]


def table_rows(app: DiffApp) -> dict:
    d = app.diff
    assert d is not None
    return {r.key: (r.baseline, r.share, r.delta) for r in d.rows}


def check(app: DiffApp, po: dict, pn: dict, width: int, where: tuple[str, ...] = ()) -> None:
    want_o, want_n = shares(po, width, where), shares(pn, width, where)
    got = table_rows(app)
    assert set(got) == set(want_o) | set(want_n)
    for key, (b, n, dl) in got.items():
        o, w = want_o.get(key), want_n.get(key)
        assert (b is None) == (o is None) and (n is None) == (w is None), key
        if o is not None:
            assert abs(b - o) < 1e-9
        if w is not None:
            assert abs(n - w) < 1e-9 and abs(dl - (w - (o or 0.0))) < 1e-9
        else:
            assert dl is None


@sync
async def test_drill_down(planted) -> None:
    _o, _n, po, pn = planted
    app = make_app(planted)
    async with app.run_test(size=(100, 30)) as pilot:
        await shown(pilot)
        assert app.model.level == Level()
        check(app, po, pn, 2)  # every module's sections
        text = screen_text(app)
        assert "different hosts: old-host (OLD) and new-host (NEW)" in text
        assert "module sections" in text and "demo_crc" in text and "gone" in text
        # perf's order: the largest |delta| first
        assert app.diff.rows[0].key == largest_change(po, pn, 2)  # type: ignore[union-attr]
        at = line_keys(app).index(("demo_nic", ".text"))
        await press(pilot, *["down"] * at, "enter")  # demo_nic's .text: its symbols
        assert app.model.level == Level("sections", "demo_nic", ".text")
        check(app, po, pn, 3, ("demo_nic", ".text"))
        assert app.diff.rows[0].key == largest_change(po, pn, 3, ("demo_nic", ".text"))  # type: ignore[union-attr]
        assert "demo_nic_rx_poll" in screen_text(app)
        await press(pilot, "enter")  # the deepest level: nothing below
        assert app.model.level == Level("sections", "demo_nic", ".text")
        await press(pilot, "backspace")  # back to the sections, on the row we left
        assert app.model.level == Level()
        assert app.query_one(DiffTable).cursor_row == at
        await press(pilot, "enter", "escape")
        assert app.model.level == Level()
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


def check_modules(app: DiffApp, want_o: dict, want_n: dict) -> None:
    """The module lines' baseline, new and delta against per-module shares (%)."""
    got = module_lines(app)
    assert set(got) == set(want_o) | set(want_n)
    for m, (b, n, dl) in got.items():
        o, w = want_o.get(m), want_n.get(m)
        assert (b is None) == (o is None) and (n is None) == (w is None), m
        if o is not None:
            assert abs(b - o) < 1e-9, m
        if w is not None:
            assert abs(n - w) < 1e-9 and abs(dl - (w - (o or 0.0))) < 1e-9, m
        else:
            assert dl is None, m


@sync
async def test_module_lines(planted) -> None:
    """The top level: each module's total (baseline, new, delta: the builder's planted
    periods summed by module), then its sections, in perf diff's order of each; Enter on a
    module's line opens its first section's symbols, Backspace comes back to the line."""
    _o, _n, po, pn = planted
    app = make_app(planted)
    async with app.run_test(size=(100, 30)) as pilot:
        await shown(pilot)
        check_modules(app, module_shares(po), module_shares(pn))
        assert line_keys(app) == planted_lines(po, pn)
        text = screen_text(app)
        assert "[demo_nic]" in text and "module / section" in text
        assert "3 modules · 5 sections · 3 in both" in text
        gone = module_lines(app)["demo_crc"]  # only in OLD: no NEW share, no delta
        assert gone[1] is None and gone[2] is None
        for m in ("demo_nic", "demo_kvm"):
            at = line_keys(app).index(("module", m))
            await press(pilot, "home", *["down"] * at)
            assert f"module {m}" in screen_text(app).splitlines()[-2]  # the status line
            await press(pilot, "enter")
            first = largest_change(po, pn, 2, (m,))  # the module's first section listed
            assert app.model.level == Level("sections", m, first[1])
            check(app, po, pn, 3, first)
            await press(pilot, "backspace")
            assert app.model.level == Level()
            assert app.query_one(DiffTable).cursor_row == at


@pytest.mark.slow
@sync
async def test_demo_module_lines(tmp_path: Path) -> None:
    """``perftui diff --demo``'s recordings: every module line's baseline, new and delta
    are the demo generator's plans (samples of one fixed period: shares of the counts),
    the kernel image and bash are lines of their own with no section under them, and the
    lines say what ``perftui diff --json --sort module`` says."""
    import json

    from perftui.cli import main
    from perftui.demo.generate import PATCHED_SEED, kallsyms_text, write_demo
    from perftui.symbols.naming.resolver import SymbolOptions

    before = write_demo(tmp_path / "before.data")
    after = write_demo(tmp_path / "after.data", PATCHED_SEED, patched=True)
    (tmp_path / "kallsyms").write_text(kallsyms_text())

    def planned(plan) -> dict:  # module -> share (%) of the recording's samples
        n: Counter = Counter()
        for (mod, _sec), k in plan.in_sections.items():
            n[MODNAME[mod]] += k
        n["[kernel.kallsyms]"] = plan.outside_modules
        n["bash"] = plan.samples - plan.kernel_samples  # the demo's one user-space program
        return {m: 100.0 * k / plan.samples for m, k in n.items()}

    opts = SymbolOptions(kallsyms=str(tmp_path / "kallsyms"), modules_dirs=[str(MODULES_DIR)])
    app = DiffApp(DiffModel.of(open_recording(before.path), open_recording(after.path),
                               [str(MODULES_DIR)], opts))
    async with app.run_test(size=(120, 40)) as pilot:
        await shown(pilot)
        want_o, want_n = planned(before), planned(after)
        check_modules(app, want_o, want_n)
        keys = line_keys(app)
        mods = [k[1] for k in keys if k[0] == "module"]
        weight = {m: want_o[m] for m in want_o}  # one period: the baseline period's order
        assert mods == perf_order(want_o, want_n, weight)
        for m in ("[kernel.kallsyms]", "bash"):  # no sections: the module's line alone
            at = keys.index(("module", m))
            assert at + 1 == len(keys) or keys[at + 1][0] == "module"
        assert "[kernel.kallsyms]" in screen_text(app) and "[[" not in screen_text(app)
        at = keys.index(("module", "bash"))
        await press(pilot, *["down"] * at, "enter")  # bash's symbols
        assert app.model.level == Level("sections", "bash", "-")
    json_args = [str(before.path), str(after.path), "--json", "--sort", "module",
                 "--kallsyms", str(tmp_path / "kallsyms"), "--modules-dir", str(MODULES_DIR)]
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["diff", *json_args]) == 0
    rows = json.loads(out.getvalue())["rows"]
    assert [r["module"] for r in rows] == mods
    for r in rows:
        assert abs(r["baseline"] - want_o[r["module"]]) < 1e-5
        assert abs(r["new"] - want_n[r["module"]]) < 1e-5


@sync
async def test_compute_and_view(planted) -> None:
    _o, _n, po, pn = planted
    app = make_app(planted)
    async with app.run_test(size=(120, 40)) as pilot:
        await shown(pilot)
        await press(pilot, "c")  # delta: the largest increase first
        assert app.model.compute == "delta"
        deltas = [r.delta for r in app.diff.rows if r.delta is not None]  # type: ignore[union-attr]
        assert deltas == sorted(deltas, reverse=True)
        await press(pilot, "c")  # ratio: paired rows by ratio, NEW-only, then OLD-only
        assert app.model.compute == "ratio"
        assert "Ratio" in screen_text(app)
        await press(pilot, "c")
        assert app.model.compute == "delta-abs"
        await press(pilot, "v")  # perf diff's dso,sym table
        assert app.model.level == Level("symbols")
        names = {k[1] for k in table_rows(app)}
        assert names == {sym for (_m, _s, sym) in [*po, *pn]}
        assert "shared object" in screen_text(app)


@sync
async def test_range_regroups_one_side(planted) -> None:
    _o, _n, _po, _pn = planted
    app = make_app(planted)
    async with app.run_test(size=(100, 30)) as pilot:
        await shown(pilot)
        new_before = app.model.new.tables
        await pilot.press("o")
        tl = app.query_one("#old", SideTimeline)
        assert app.focused is tl
        for _ in range(10):
            await pilot.press("shift+right")
        await shown(pilot)
        while app.model.old.time_range != tl.time_range():
            await pilot.pause(0.05)
            await shown(pilot)
        lo, hi = tl.time_range()  # type: ignore[misc]
        # the builder's plan: sample k of OLD at 1 s + (k + 1) ms
        n = sum(OLD.values())
        want = sum(1 for k in range(n) if lo <= 1_000_000_000 + (k + 1) * 1_000_000 <= hi)
        (_name, old_tab), = app.model.old.tables.values()
        assert old_tab.total_samples == want and 0 < want < n
        assert app.model.new.tables is new_before  # NEW not regrouped
        # the module lines regrouped: OLD's in the range (the builder's plan, sample k of
        # period 1000 + 250 (k mod 5), in the plan's sorted order), NEW's whole
        in_range: Counter = Counter()
        k = 0
        for (mod, _sec, _sym), count in sorted(OLD.items()):
            for _j in range(count):
                if lo <= 1_000_000_000 + (k + 1) * 1_000_000 <= hi:
                    in_range[MODNAME[mod]] += 1000 + 250 * (k % 5)
                k += 1
        total = sum(in_range.values())
        check_modules(app, {m: 100.0 * p / total for m, p in in_range.items() if p},
                      module_shares(_pn))
        assert "in 0.000–" in screen_text(app)
        await pilot.press("r")  # reset: OLD whole again
        await shown(pilot)
        while app.model.old.time_range is not None:
            await pilot.pause(0.05)
        await shown(pilot)
        (_name, old_tab), = app.model.old.tables.values()
        assert old_tab.total_samples == n


@sync
async def test_work_off_the_ui_thread(planted, monkeypatch: pytest.MonkeyPatch) -> None:
    """Indexing, grouping and comparing never run on the UI thread."""
    from perftui.ui import diffmodel

    threads: list[str] = []
    ui = threading.current_thread()

    def spy(name: str, fn):
        def wrapped(*a, **kw):
            threads.append(name if threading.current_thread() is not ui else f"{name}@UI")
            return fn(*a, **kw)
        return wrapped

    monkeypatch.setattr(diffmodel.DiffSide, "load", spy("load", diffmodel.DiffSide.load))
    monkeypatch.setattr(diffmodel.DiffSide, "compute", spy("compute",
                                                           diffmodel.DiffSide.compute))
    monkeypatch.setattr(diffmodel.DiffModel, "diff", spy("diff", diffmodel.DiffModel.diff))
    app = make_app(planted)
    async with app.run_test(size=(80, 24)) as pilot:
        await shown(pilot)
        await press(pilot, "enter", "c", "v")
        await pilot.press("o", "shift+right", "shift+right")
        await shown(pilot)
    assert {"load", "compute", "diff"} <= set(threads)
    assert not [t for t in threads if t.endswith("@UI")], threads


def test_diff_keys_are_the_bindings() -> None:
    """Every key of the diff browser has a help line, ``?`` and the README list them all."""
    from perftui.ui.diffapp import DiffApp, DiffHelp
    from perftui.ui.keys import diff_help_sections, key_name, markdown_table

    listed = {k for _t, rows in diff_help_sections() for keys, _w in rows
              for k in keys.split("/")}
    for cls in (DiffApp, DiffTable, SideTimeline, DiffHelp):
        for b in cls.BINDINGS:
            assert b.tooltip, f"{cls.__name__}: {b.key} has no help"  # type: ignore[union-attr]
            if cls is not DiffHelp:
                assert key_name(b.key) in listed, (cls.__name__, b.key)  # type: ignore[union-attr]
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    assert markdown_table(diff_help_sections()) in readme


@sync
async def test_help_screen(planted) -> None:
    app = make_app(planted)
    async with app.run_test(size=(80, 24)) as pilot:
        await shown(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        text = screen_text(app)
        assert "compared table" in text and "the NEW recording's timeline" in text
        # the keys of where ? was pressed first (the table), then everywhere's (issue 29)
        titles = [ln[1:60].strip() for ln in text.splitlines()
                  if ln.startswith("│") and ln[1:2] != " " and ln[1:60].strip()]
        assert titles[:2] == ["compared table (here)", "everywhere"], titles
        await pilot.press("o")  # the main screen's keys do nothing here
        await pilot.pause()
        assert len(app.screen_stack) == 2
        await pilot.press("escape")
        await pilot.pause()
        assert len(app.screen_stack) == 1 and app.model.level == Level()
        await pilot.press("o", "question_mark")  # from OLD's timeline: the timelines' keys
        await pilot.pause()
        await pilot.pause()
        text = screen_text(app)
        assert "OLD and NEW timelines (here)" in text.splitlines()[1], text


def test_two_files_without_a_terminal(planted, capsys: pytest.CaptureFixture[str]) -> None:
    """``perftui OLD NEW`` with standard output not a terminal prints perf diff's table,
    the same as ``perftui diff OLD NEW --stdio``."""
    from perftui.cli import main

    old, new, _po, _pn = planted
    dirs = ["--modules-dir", str(MODULES_DIR)]
    assert main([str(old), str(new), *dirs]) == 0
    browser = capsys.readouterr().out
    assert main(["diff", str(old), str(new), "--stdio", *dirs]) == 0
    assert browser == capsys.readouterr().out
    assert "# Baseline  Delta Abs  Shared Object" in browser
    assert main(["diff", "-", str(new)]) == 2  # two files, never standard input


@sync
async def test_different_events_still_compare(tmp_path: Path) -> None:
    """OLD of cpu-clock, NEW of task-clock (one event each): said at the top, and the rows
    still pair up, each side's shares the builder's plan (perf diff would show OLD alone;
    the browser compares them, as it says)."""
    po = module_recording(tmp_path / "old.data", OLD)
    pn = module_recording(tmp_path / "new.data", NEW, event="task-clock", config=1)
    app = make_app((tmp_path / "old.data", tmp_path / "new.data", po, pn))
    async with app.run_test(size=(100, 30)) as pilot:
        await shown(pilot)
        assert "different events: cpu-clock (OLD) and task-clock (NEW)" in screen_text(app)
        check(app, po, pn, 2)
        assert app.diff is not None and app.diff.matched > 0


@sync
async def test_a_truncated_side_says_so(planted, tmp_path: Path) -> None:
    """NEW cut short (its last 100 bytes gone, so its data section runs past the end of the
    file): the line under the header says NEW has an error (at 80 columns too), as the
    one-recording browser's header does; nothing is said of OLD."""
    old, new, _po, _pn = planted
    cut = tmp_path / "cut.data"
    raw = new.read_bytes()
    cut.write_bytes(raw[:-100])
    app = DiffApp(DiffModel.of(open_recording(old), open_recording(cut), [str(MODULES_DIR)]))
    async with app.run_test(size=(80, 24)) as pilot:
        await shown(pilot)
        said = [ln for ln in screen_text(app).splitlines() if "error at offset" in ln]
        assert len(said) == 1 and "NEW cut.data" in said[0], said


@sync
async def test_one_sample_is_singular(tmp_path: Path) -> None:
    """OLD of one planted sample: the header, the status line and the table's count say
    "1 sample" and "1 row", not "1 samples"."""
    one = {("demo_nic", ".text", "demo_nic_rx_poll"): 1}
    po = module_recording(tmp_path / "old.data", one)
    pn = module_recording(tmp_path / "new.data", {**one, **dict(list(NEW.items())[:1])})
    app = make_app((tmp_path / "old.data", tmp_path / "new.data", po, pn))
    async with app.run_test(size=(120, 30)) as pilot:
        await shown(pilot)
        text = screen_text(app)
        assert "old.data 1 sample " in text and "1 samples" not in text
        assert "OLD 100.00% (1 sample, period 1,000)" in text  # the module's line
        assert "1 module · 1 section · 1 in both" in text


def test_a_side_keeps_its_index_and_names_for_the_next_open(planted, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    """The diff browser's sides get their names as ``perftui diff`` does
    (present/session.named_samples): a first load walks, keeps the index and the names in
    the cache; a second open of the same file restores both and makes no resolver.  The
    planted sample counts per module are the oracle for the names of both loads."""
    from perftui.perfdata.indexcache import IndexCache
    from perftui.present import session

    made = []
    real = session.Resolver

    def counting(*a, **k):  # type: ignore[no-untyped-def]
        made.append(1)
        return real(*a, **k)

    monkeypatch.setattr(session, "Resolver", counting)
    old, new, _po, _pn = planted
    cache = IndexCache(str(tmp_path / "cache"))
    want: Counter = Counter()
    for (m, _s, _f), n in OLD.items():  # the planted samples per module
        want[MODNAME[m]] += n
    origins = []
    for _ in range(2):
        model = DiffModel.of(open_recording(old, cache=cache, mapped=True),
                             open_recording(new), [str(MODULES_DIR)])
        model.old.load()
        origins.append((model.old.rec.index.origin, len(made)))
        sl = model.old.sl
        assert sl is not None
        got = Counter(sl.locs.dsos[sl.locs.dso[int(x)]].module for x in sl.leaf)
        assert +Counter({m: got[m] for m in want}) == want
    assert origins == [("walk", 1), ("cache", 1)]
