"""``perftui diff``'s options in its browser, as in its text: ``--children`` (each row weighs
the samples through it: ``perf report --children``'s share of each side), ``--cpu`` and
``--time`` (``perf diff --cpu --time``'s rows), ``--event`` (the event shown first), and a
missing event said before the screen opens.  Fresh recordings of hotprog with two work mixes
(tests/perfprograms.py), perf 6.1 the oracle.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from inproc import run_cli
from perfprograms import Built, require
from test_diff_perf import NEW_MIX, OLD_MIX
from test_diff_ui import press, shown
from uihelpers import screen_text, sync

from perftui.cli.diff import diff_browser
from perftui.cli.errors import UsageError
from perftui.perfdata import open_recording
from perftui.present.diff import key_text
from perftui.present.diffrun import DiffRequest, time_ranges
from perftui.ui.diffapp import DiffApp
from perftui.ui.diffmodel import DiffModel, ViewOptions

pytestmark = pytest.mark.perf

LEVEL = re.compile(r"^\[(.)\] ")
ADDRESS = re.compile(r"(0x)?[0-9a-f]{16}")
UNRESOLVED = "(unresolved)"


@pytest.fixture(scope="module")
def pair(built: Built, recorded) -> tuple[Path, Path]:
    """hotprog's two mixes, each recorded -g with two events (task-clock second)."""
    return (recorded("diffui_old", built.hotprog, "2", OLD_MIX, events="cpu-clock,task-clock"),
            recorded("diffui_new", built.hotprog, "2", NEW_MIX, events="cpu-clock,task-clock"))


def app_of(pair: tuple[Path, Path], time: str = "", **kw: object) -> DiffApp:
    t_old, t_new = time_ranges(time)
    opts = (ViewOptions(t_old, **kw), ViewOptions(t_new, **kw))  # type: ignore[arg-type]
    return DiffApp(DiffModel.of(open_recording(pair[0]), open_recording(pair[1]),
                                options=opts))


def browser_rows(app: DiffApp) -> dict[tuple[str, str], tuple[float | None, float | None]]:
    """The symbols view's rows: (dso, sym) -> (OLD's share, NEW's share)."""
    d = app.diff
    assert d is not None and d.keys == ("dso", "sym")
    out = {}
    for r in d.rows:
        dso, sym = key_text(d, r, 0), LEVEL.sub("", key_text(d, r, 1))
        # (a dso's unresolved addresses are one row, shown at one of them)
        out[dso, UNRESOLVED if ADDRESS.fullmatch(sym) else sym] = (r.baseline, r.share)
    assert len(out) == len(d.rows)
    return out


def report_children(data: Path, event: str) -> dict[tuple[str, str], float]:
    """``perf report --children --sort dso,sym``'s Children share of ``event``'s rows."""
    p = subprocess.run([require("perf"), "report", "-i", str(data), "--children", "-g", "none",
                        "--sort", "dso,sym", "-t", ";", "--stdio"],
                       capture_output=True, text=True, timeout=300, cwd=data.parent)
    assert p.returncode == 0, p.stderr[-500:]
    out: dict[tuple[str, str], float] = {}
    mine = False  # in the event's part (perf prints one per event, each under its name)
    for line in p.stdout.splitlines():
        m = re.match(r"# Samples: .* of event '([^']*)'", line)
        if m:
            mine = m.group(1) == event
        f = [x.strip() for x in line.split(";")]
        if mine and len(f) == 4 and f[0].endswith("%"):
            out[f[2], LEVEL.sub("", f[3])] = float(f[0][:-1])
    assert out, f"no rows of {event} in perf report's output"
    return out


def unresolved_as_one(rows: dict[tuple[str, str], float]) -> dict[tuple[str, str], float]:
    """A dso's rows of addresses no symbol names as one, ``(dso, UNRESOLVED)``: perf diff
    pairs rows by ``sort__sym_sort``, for which two missing symbols are equal (perftui's
    diff too, ``SymKey.ident``; ``perf report`` keeps one row per address)."""
    out: dict[tuple[str, str], float] = {}
    for (dso, sym), share in rows.items():
        key = (dso, UNRESOLVED) if ADDRESS.fullmatch(sym) else (dso, sym)
        out[key] = out.get(key, 0.0) + share
    return out


@sync
async def test_children_are_perf_reports_children_share_on_each_side(pair) -> None:
    """Each side's share of every (dso, sym) row is ``perf report --children``'s, a dso's
    unresolved addresses summed as perf diff pairs them."""
    app = app_of(pair, children=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await shown(pilot)
        await press(pilot, "v")  # perf diff's dso,sym table
        got = browser_rows(app)
        head = screen_text(app)
    reports = [report_children(p, "cpu-clock") for p in pair]
    old, new = (unresolved_as_one(r) for r in reports)
    # (perf prints each row to 0.01: a dso's unresolved rows summed carry each one's rounding,
    # 0.36 against 0.3745 on one run that caught several garbage addresses)
    merged = [Counter((dso, UNRESOLVED) if ADDRESS.fullmatch(sym) else (dso, sym)
                      for dso, sym in r) for r in reports]
    assert set(got) == set(old) | set(new)
    for key, (b, n) in got.items():
        assert (b is None) == (key not in old) and (n is None) == (key not in new), key
        tol_b, tol_n = (0.005 * (m[key] + 1) for m in merged)
        assert b is None or abs(b - old[key]) <= tol_b, (key, b, old[key], merged[0][key])
        assert n is None or abs(n - new[key]) <= tol_n, (key, n, new[key], merged[1][key])
    # children's shares of main and _start are ~100%, not their own few samples
    assert max(s for s in old.values()) > 99.0
    assert "children" in head


def perf_diff_event(pair: tuple[Path, Path], event: str, *extra: str
                    ) -> dict[tuple[str, str], tuple[str, str]]:
    """``perf diff -t ';'``'s rows of ``event`` (it prints each event's under its name):
    (dso, sym) -> (baseline cell, delta cell)."""
    p = subprocess.run([require("perf"), "diff", "-t", ";", str(pair[0]), str(pair[1]), *extra],
                       capture_output=True, text=True, timeout=300, cwd=pair[0].parent)
    assert p.returncode == 0, p.stderr[-500:]
    out: dict[tuple[str, str], tuple[str, str]] = {}
    mine = False
    for line in p.stdout.splitlines():
        m = re.match(r"# Event '([^']*)'", line)
        if m:
            mine = m.group(1) == event
        if mine and line.strip() and not line.startswith("#"):
            f = [x.strip() for x in line.split(";")]
            key = (f[2], LEVEL.sub("", f[3]))
            assert key not in out, key
            out[key] = (f[0], f[1])
    assert out, f"no rows of {event} in perf diff's output"
    return out


@sync
async def test_time_and_event_are_perf_diffs(pair) -> None:
    """The browser on ``--event task-clock --time 10%-70%`` (of each recording's own span,
    as perf diff takes one range for both) opens on task-clock and shows perf diff's rows of
    it over that time."""
    app = app_of(pair, "10%-70%", event="task-clock")
    async with app.run_test(size=(120, 40)) as pilot:
        await shown(pilot)
        await press(pilot, "v")
        assert app.model.event_name() == "task-clock"
        got = browser_rows(app)
        head = screen_text(app)
    want = perf_diff_event(pair, "task-clock", "--time", "10%-70%")
    assert set(got) == set(want)
    for key, (b, n) in got.items():
        base, cell = want[key]
        assert (b is None) == (not base), key
        assert b is None or abs(b - float(base.rstrip("%"))) <= 0.01, (key, b, base)
        if cell:  # perf's delta: NEW's share minus the baseline
            assert n is not None and abs(n - (b or 0.0) - float(cell.rstrip("%"))) <= 0.015, key
        else:
            assert n is None, key
    # the whole recordings' table differs: the range is applied, not only said
    whole = perf_diff_event(pair, "task-clock")
    assert {k: v[0] for k, v in whole.items()} != {k: v[0] for k, v in want.items()}
    assert "--time 10%-70%" in head


@pytest.fixture(scope="module")
def system_pair(built: Built, recorded) -> tuple[Path, Path]:
    return (recorded("diffui_sys_old", built.hotprog, "1", OLD_MIX, system_wide=True),
            recorded("diffui_sys_new", built.hotprog, "1", NEW_MIX, system_wide=True))


@sync
async def test_cpu_is_the_text_diffs(system_pair) -> None:
    """``--cpu 0`` on system-wide recordings: the browser's rows are ``perftui diff --json
    --cpu 0``'s (whose --cpu the text tests hold to the recordings' plans), not the whole
    recordings'."""
    app = app_of(system_pair, cpu="0")
    async with app.run_test(size=(120, 40)) as pilot:
        await shown(pilot)
        await press(pilot, "v")
        got = browser_rows(app)
        head = screen_text(app)

    def text(*extra: str) -> dict[tuple[str, str], tuple[float | None, float | None]]:
        doc = json.loads(run_cli("diff", *map(str, system_pair), "--json", *extra).stdout)
        return {(r["dso"], UNRESOLVED if ADDRESS.fullmatch(r["sym"]) else r["sym"]):
                (r["baseline"], r["new"]) for r in doc["rows"]}

    want = text("--cpu", "0")
    assert set(got) == set(want) and want != text()
    for key, (b, n) in got.items():
        wb, wn = want[key]
        assert (b is None) == (wb is None) and (n is None) == (wn is None), key
        assert b is None or (abs(b - wb) < 1e-4 and n is None) or abs(n - wn) < 1e-4, key
    assert "cpu 0" in head


def test_cpu_of_a_recording_without_cpus_is_refused_as_perf_refuses(pair) -> None:
    """A recording of a command (no -a) samples no CPU: perf diff and perf report refuse
    ``--cpu``; so do perftui's report, text diff and diff browser (before its screen), not
    an empty table."""
    perf = subprocess.run([require("perf"), "diff", str(pair[0]), str(pair[1]), "--cpu", "0"],
                          capture_output=True, text=True, timeout=300, cwd=pair[0].parent)
    assert "does not contain CPU events" in perf.stdout + perf.stderr
    for args in (("diff", str(pair[0]), str(pair[1]), "--stdio"), ("report", str(pair[0]))):
        got = run_cli(*args, "--cpu", "0")
        assert got.returncode == 2 and "samples have no CPU" in got.stderr, got
    with pytest.raises(UsageError, match="samples have no CPU"):
        diff_browser(str(pair[0]), str(pair[1]), DiffRequest(cpu="0"))


def test_a_missing_event_is_said_before_the_browser_opens(pair) -> None:
    """As the text diff says it (a usage error: status 2, one line), not an empty browser:
    the browser's entry raises it before any screen."""
    text = run_cli("diff", str(pair[0]), str(pair[1]), "--event", "cycles", "--stdio")
    assert text.returncode == 2 and "no event 'cycles'" in text.stderr
    with pytest.raises(UsageError, match="no event 'cycles'"):
        diff_browser(str(pair[0]), str(pair[1]), DiffRequest(event="cycles"))
