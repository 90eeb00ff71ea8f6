"""``perftui diff --event offcpu-time`` (issue 30): two recordings' off-CPU time compared, row
by row, each side's switch-outs weighed by their nanoseconds off the CPU.

The plan: OLD is the known-answer program (tests/programs/offcpu.c: 5 x 300 ms asleep in
sleep_long, 5 x 100 ms in sleep_short), NEW the same program built with ``-DLONG_MS=150
-DSHORT_MS=200`` (sleep_long halves, sleep_short doubles).  perf diff cannot make
offcpu-time, so the expected numbers are worked out here from perf 6.1's own view of each
file (``perf script -F tid,time,event,trace,ip,sym`` with the switch records: test_offcpu's
``perf_offcpu``, hotspot's rule written from perf's events): every function's nanoseconds
exactly, its share of its recording's off-CPU time and the delta of the shares.  The
known answer bounds them too: never less than planned (a sleep does not end early), at
most half as much again (a woken thread waits for a core: 5 x 100 ms came to 557 ms on a
loaded 2-core machine)."""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from inproc import run_cli
from perfprograms import require, shared
from test_diff_ui import press, shown
from test_offcpu import perf_offcpu
from test_tracefmt import OFFCPU_C
from uihelpers import sync

from conftest import skip_or_fail
from perftui.perfdata import open_recording
from perftui.ui.diffapp import DiffApp
from perftui.ui.diffmodel import DiffModel

pytestmark = pytest.mark.perf

PLANS = {"old": (), "new": ("-DLONG_MS=150", "-DSHORT_MS=200")}
KNOWN = {"old": {"sleep_long": 1.5e9, "sleep_short": 0.5e9},
         "new": {"sleep_long": 0.75e9, "sleep_short": 1.0e9}}


def recording(shared_dir: Path, side: str) -> Path:
    """The program of ``side``'s plan under ``-e sched:sched_switch -g --switch-events``."""

    def make(d: Path, env: dict[str, str]) -> Path:
        prog, data = d / "offcpu", d / f"offcpu-{side}.data"  # (one dso name: dso,sym match)
        subprocess.run([require("cc"), "-O1", "-g", "-fno-omit-frame-pointer", *PLANS[side],
                        "-o", str(prog), str(OFFCPU_C)], check=True, capture_output=True)
        p = subprocess.run([require("perf"), "record", "-q", "-e", "sched:sched_switch", "-g",
                            "--switch-events", "-o", str(data), "--", str(prog)],
                           cwd=d, env=env, capture_output=True, text=True)
        if p.returncode != 0:
            skip_or_fail(f"perf record: {p.stderr.strip()[-300:]}")
        return data

    return shared(shared_dir, f"offcpu diff {side}", make)


def perf_side(data: Path) -> tuple[Counter[str], int]:
    """perf script's off-CPU ns under each of the program's functions, and the total of
    every charged switch-out (every thread's)."""
    under, _through, total = perf_side_counts(data)
    return under, total


def perf_side_counts(data: Path) -> tuple[Counter[str], Counter[str], int]:
    """:func:`perf_side` with the number of charged switch-outs through each function."""
    want, _prog = perf_offcpu(data)
    under: Counter[str] = Counter()
    through: Counter[str] = Counter()
    total = 0
    for ns, _state, func in want.values():
        if ns is None:
            continue
        total += ns
        if func:
            under[func] += ns
            through[func] += 1
    return under, through, total


def test_diff_of_offcpu_time_with_children(shared_dir: Path) -> None:
    old, new = recording(shared_dir, "old"), recording(shared_dir, "new")
    (o_under, o_total), (n_under, n_total) = perf_side(old), perf_side(new)
    for side, under in (("old", o_under), ("new", n_under)):
        for func, ns in KNOWN[side].items():
            assert 0.99 * ns <= under[func] < 1.5 * ns, (side, func, under[func])
    p = run_cli("diff", "--json", "--event", "offcpu-time", "--children", "-s", "sym",
                str(old), str(new))
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["event"] == "offcpu-time" and doc["period_unit"] == "ns"
    assert doc["old"]["total_period"] == o_total and doc["new"]["total_period"] == n_total
    assert doc["warnings"] == []  # (the one event compared: the same on both sides)
    rows = {r["sym"]: r for r in doc["rows"]}
    for func in ("sleep_long", "sleep_short"):
        r = rows[func]
        assert (r["baseline_period"], r["new_period"]) == (o_under[func], n_under[func]), r
        base, share = 100 * o_under[func] / o_total, 100 * n_under[func] / n_total
        assert r["baseline"] == pytest.approx(base, abs=1e-5)
        assert r["new"] == pytest.approx(share, abs=1e-5)
        assert r["delta"] == pytest.approx(share - base, abs=1e-5)
    # perf diff's order (delta-abs): the larger change in share first
    order = [r["sym"] for r in doc["rows"]]

    def change(f: str) -> float:
        return abs(n_under[f] / n_total - o_under[f] / o_total)

    first = max(("sleep_long", "sleep_short"), key=change)
    assert order.index(first) == min(order.index("sleep_long"), order.index("sleep_short"))
    # the text: each side's time of the row, as a time
    t = run_cli("diff", "--stdio", "--event", "offcpu-time", "--children", "-s", "sym",
                str(old), str(new))
    assert t.returncode == 0, t.stderr
    head = next(x for x in t.stdout.splitlines() if "Delta Abs" in x)
    assert head.split()[1:7] == ["Baseline", "Delta", "Abs", "Base", "time", "Time"], head
    line = next(x for x in t.stdout.splitlines() if x.rstrip().endswith("] sleep_long"))
    times = re.findall(r"(\d+(?:\.\d+)?) (s|ms)\b", line)
    got = [float(v) * (1e9 if u == "s" else 1e6) for v, u in times]
    assert got == [pytest.approx(o_under["sleep_long"], rel=1e-3),
                   pytest.approx(n_under["sleep_long"], rel=1e-3)], line


def test_diff_of_offcpu_time_self_is_the_kernels(shared_dir: Path) -> None:
    """Without --children a switch-out's own location is where the kernel switched (perf's
    sample ip for sched_switch): every nanosecond of each side in kernel rows."""
    old, new = recording(shared_dir, "old"), recording(shared_dir, "new")
    p = run_cli("diff", "--json", "--event", "offcpu-time", "-s", "sym", str(old), str(new))
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert sum(r["baseline_period"] or 0 for r in doc["rows"]) == perf_side(old)[1]
    assert not {"sleep_long", "sleep_short"} & {r["sym"] for r in doc["rows"]}


def test_diff_of_an_event_neither_has(shared_dir: Path) -> None:
    old = recording(shared_dir, "old")
    p = run_cli("diff", "--stdio", "--event", "cycles", str(old), str(old))
    assert p.returncode == 2 and "no event 'cycles'" in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr


@pytest.mark.slow
@sync
async def test_diff_browser_offcpu_time(shared_dir: Path) -> None:
    """The diff browser offers offcpu-time after the recorded event (``e``); its dso,sym
    table (``v``) weighs each row by the stacks through it, and the status line says each
    side's time and its switch-outs through the row (was '0 samples': the count was of
    the samples whose own location is the row, the kernel's for every switch-out)."""
    old, new = recording(shared_dir, "old"), recording(shared_dir, "new")
    (o_under, o_through, o_total), (n_under, n_through, n_total) = (
        perf_side_counts(old), perf_side_counts(new))
    app = DiffApp(DiffModel.of(open_recording(old), open_recording(new)))
    async with app.run_test(size=(120, 40)) as pilot:
        await shown(pilot)
        assert app.model.event_name() == "sched:sched_switch"
        await press(pilot, "e", "v")
        assert app.model.event_name() == "offcpu-time"
        rows = {ln.row.key[-1]: (k, ln.row) for k, ln in enumerate(app.lines)}
        for func in ("sleep_long", "sleep_short"):
            k, r = rows[func]
            assert r.old is not None and r.new is not None
            assert (r.old.period, r.new.period) == (o_under[func], n_under[func])
            assert r.baseline == pytest.approx(100 * o_under[func] / o_total, abs=1e-6)
            assert r.share == pytest.approx(100 * n_under[func] / n_total, abs=1e-6)
        k, _r = rows["sleep_long"]
        app.update_status(k)
        status = str(app.query_one("#status").render())
        times = re.findall(r"(\d+(?:\.\d+)?) (s|ms)\b", status)
        got = [float(v) * (1e9 if u == "s" else 1e6) for v, u in times]
        assert got == [pytest.approx(o_under["sleep_long"], rel=1e-3),
                       pytest.approx(n_under["sleep_long"], rel=1e-3)], status
        counts = [int(n.replace(",", "")) for n in re.findall(r"\(([\d,]+) samples?,", status)]
        assert counts == [o_through["sleep_long"], n_through["sleep_long"]], status
        assert counts[0] >= 5  # (5 sleeps at least: one switch-out each)
        # the differential flame graph of offcpu-time: each side's stacks by their ns
        fl = app.model.flame()
        assert fl is not None and (fl.old_sum, fl.new_sum) == (o_total, n_total)
        for func in ("sleep_long", "sleep_short"):
            at = [i for i, n in enumerate(fl.name) if n == func]
            assert at, fl.name
            assert int(sum(fl.new_total[i] for i in at)) == n_under[func]
            assert int(sum(fl.old_total[i] for i in at)) == o_under[func]
