"""``offcpu-time`` in the browser (issue 30): on a ``sched:sched_switch -g`` recording the
event switch offers it after the recorded events, and the hotspot table, the callers and
callees and the call trees show each row's time off the CPU as a time.

Oracle: the known-answer program (tests/programs/offcpu.c: 5 x 300 ms asleep in sleep_long,
5 x 100 ms in sleep_short) and perf 6.1's own view of the recording (``perf script -F
tid,time,event,trace,ip,sym``), worked into off-CPU nanoseconds by test_offcpu's
``perf_offcpu`` (hotspot's rule, written there from perf's events, not from perftui)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from perfprograms import shared
from test_offcpu import perf_offcpu
from test_tracefmt import record_offcpu
from test_ui_flamechart import computed
from test_ui_pilot import browse
from test_ui_profile import idle, keys, prompt
from uihelpers import screen_text, sync

from perftui.ui.app import PerftuiApp
from perftui.ui.widgets.calltrees import CallTreeList
from perftui.ui.widgets.hotspots import HotspotTable

pytestmark = [pytest.mark.perf, pytest.mark.slow]

TIME = re.compile(r"(\d+(?:\.\d+)?) (s|ms|us|ns)\b")
SCALE = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}


def sched_switch_alone(shared_dir: Path) -> Path:
    """The known-answer program under ``-e sched:sched_switch -g`` (one recorded event)."""
    return shared(shared_dir, "offcpu ss", lambda d, env: record_offcpu(
        d, env, "-e", "sched:sched_switch", "-g"))


def perf_times(data: Path) -> tuple[Counter[str], int]:
    """perf script's off-CPU ns under each of the program's functions, and how many
    switch-outs were charged (every thread's)."""
    want, _prog = perf_offcpu(data)
    out: Counter[str] = Counter()
    for ns, _state, func in want.values():
        if ns is not None and func:
            out[func] += ns
    return out, sum(1 for ns, _s, _f in want.values() if ns is not None)


def parse_time(text: str) -> tuple[int, int]:
    """A time as drawn (``1.502 s``) as (ns, the half of its last digit's unit in ns)."""
    m = TIME.search(text)
    assert m, text
    digits = m[1].split(".")[1] if "." in m[1] else ""
    unit = SCALE[m[2]]
    return round(float(m[1]) * unit), unit // 10 ** len(digits) // 2 + 1


def near(shown: str, ns: int) -> bool:
    got, slack = parse_time(shown)
    return abs(got - ns) <= slack


def table_times(app: PerftuiApp) -> dict[str, str]:
    """The hotspot table's Time cell per symbol (sorted by sym alone)."""
    t = app.query_one(HotspotTable)
    head = t.header()
    assert head is not None, t.line(0).plain
    h = head.plain
    assert h.split()[:4] == ["Children", "Self", "Time", "Samples"], h
    at = h.index("Time") + len("Time")
    out = {}
    for i in range(t.line_count()):
        line = t.line(i).plain
        sym = line[h.index("Symbol"):].strip().removeprefix("[.] ").removeprefix("[k] ")
        out[sym] = line[at - 9:at].strip()
    return out


@sync
async def test_offcpu_time_in_the_profile_and_the_trees(shared_dir: Path) -> None:
    data = sched_switch_alone(shared_dir)
    want, charged = perf_times(data)
    assert abs(want["sleep_long"] - 1.5e9) < 0.15e9 + 5 * 30e6, want  # (known answer)
    async with browse(data) as (app, pilot):
        await keys(pilot, "p")
        title = screen_text(app)
        assert "sched:sched_switch (1/2)" in title, title
        await keys(pilot, "2")  # the second event: offcpu-time
        title = screen_text(app).splitlines()
        line = next(x for x in title if " profile " in x)
        assert "offcpu-time (2/2)" in line and f"{charged:,} samples" in line, line
        assert near(line.split("samples")[1], sum(
            ns for ns, _s, _f in perf_offcpu(data)[0].values() if ns is not None)), line
        await prompt(pilot, "s", "sym")
        times = table_times(app)
        for func in ("sleep_long", "sleep_short"):
            assert near(times[func], want[func]), (func, times[func], want[func])
        # Enter on sleep_long: its callees tree's root carries its time
        t = app.query_one(HotspotTable)
        assert t.view is not None
        row = next(i for i in range(t.line_count()) if t.line(i).plain.rstrip()
                   .endswith("sleep_long"))
        t.cursor = row
        await idle(pilot)
        await keys(pilot, "enter")
        tl = app.query_one(CallTreeList)
        assert tl.header() is not None and "Time" in tl.header().plain  # type: ignore[union-attr]
        lines = [tl.line(i).plain for i in range(tl.line_count())]
        roots = [x for x in lines if re.search(r"[▾▸·] \[\.\] sleep_long  ", x)]
        assert len(roots) == 2, lines  # the callers tree's root, the callees tree's
        assert all(near(x, want["sleep_long"]) for x in roots), (roots, want)
        # back to sched_switch: shares of samples again, no Time column
        await keys(pilot, "escape", "1")
        head = app.query_one(HotspotTable).header()
        assert head is not None and "Time" not in head.plain, head


WEIGHS = re.compile(r"([\d,]+) samples?  (\d+\.\d\d)%")
TIMED = re.compile(r"(\d+(?:\.\d+)? (?:s|ms|us|ns))  (\d+\.\d\d)%  ([\d,]+) samples?")


def timed_weight(text: str) -> tuple[str, float, int]:
    """(the time, the share, the samples) a timed status says (``1.502 s  69.90%  5
    samples``)."""
    m = TIMED.search(text)
    assert m, text
    return m[1], float(m[2]), int(m[3].replace(",", ""))


@sync
async def test_status_lines_say_times_for_offcpu_and_samples_otherwise(shared_dir: Path
                                                                       ) -> None:
    """The flame graph's status, the sandwich's trees and the flame chart's status say one
    thing one way: for offcpu-time the frame's time off the CPU, its share and its
    switch-outs (``1.510 s  69.90%  5 samples``), for the recorded event its samples and
    their share.  Oracle: perf script's switch-outs worked into ns (perf_offcpu), and perf
    script's sched_switch samples with sleep_long on their stack (period 1 each)."""
    data = sched_switch_alone(shared_dir)
    want, _prog = perf_offcpu(data)
    charged = {k: v for k, v in want.items() if v[0] is not None}
    total_ns = sum(v[0] for v in charged.values())
    long_ns = sum(v[0] for v in charged.values() if v[2] == "sleep_long")
    long_n = sum(1 for v in charged.values() if v[2] == "sleep_long")
    assert long_n >= 5 and abs(long_ns - 1.5e9) < 0.15e9 + 5 * 30e6
    share = round(100 * long_ns / total_ns, 2)
    async with browse(data) as (app, pilot):
        # the recorded event: samples and shares, no time
        await keys(pilot, "f")
        await prompt(pilot, "slash", "sleep_long")
        await keys(pilot, "home", "n")
        st = str(app.query_one("#flame-status").render())
        assert "sleep_long" in st and not TIMED.search(st), st
        m = WEIGHS.search(st)
        assert m and int(m[1].replace(",", "")) == len(want) - sum(
            1 for v in want.values() if v[2] != "sleep_long"), st
        assert float(m[2]) == round(100 * int(m[1].replace(",", "")) / len(want), 2), st
        # offcpu-time: its time, its share, its switch-outs
        await keys(pilot, "2")
        await idle(pilot)
        await keys(pilot, "home", "n")
        st = str(app.query_one("#flame-status").render())
        shown, pct, n = timed_weight(st)
        assert near(shown, long_ns) and pct == share and n == long_n, (st, long_ns, share)
        # the sandwich of sleep_long: each tree's line says the same
        await keys(pilot, "w")
        tl = app.query_one(CallTreeList)
        heads = [tl.line(i).plain for i in range(tl.line_count())
                 if tl.line(i).plain.startswith(("▾", "▸"))]
        assert len(heads) == 2, heads
        for h in heads:
            shown, pct, n = timed_weight(h)
            assert near(shown, long_ns) and pct == share and n == long_n, h
        # the flame chart of offcpu-time (C from the flame graph): a sleep_long frame
        await keys(pilot, "f", "C")
        screen = await computed(pilot)
        g = screen.graph
        ch = g.chart
        assert " offcpu-time (2/2)" in str(screen.query_one("#chart-title").render())
        # a switch-out is drawn over its time off the CPU: what a frame weighs is the part
        # of each interval [t, t + ns) inside the frame's span

        def within(t: int, ns: int, lo: int, hi: int) -> int:
            return max(0, min(t + ns, hi) - max(t, lo))

        mine = {t: v for (t, tid), v in charged.items()
                if tid == ch.tid and within(t, v[0], ch.lo, ch.hi)}
        hit = next((lv, i) for lv, row in enumerate(ch.levels) for i, f in enumerate(row)
                   if g.label(f) == "sleep_long")
        g.cursor = hit
        t0, t1 = ch.span_of(ch.levels[hit[0]][hit[1]])
        ns = [within(t, v[0], t0, t1) for t, v in mine.items()
              if within(t, v[0], t0, t1) and v[2] == "sleep_long"]
        shown, pct, n = timed_weight(g.describe(screen.data.model).plain)
        assert near(shown, sum(ns)) and n == len(ns) >= 1, (g.describe(screen.data.model).plain, ns)
        assert pct == round(100 * sum(ns) / sum(within(t, v[0], ch.lo, ch.hi)
                                                for t, v in mine.items()), 2)
        # the frame covers its sleep (a point at the switch-out would be one column of it)
        assert sum(ns) >= 0.5 * max(v[0] for t, v in mine.items()
                                    if within(t, v[0], t0, t1) and v[2] == "sleep_long")
