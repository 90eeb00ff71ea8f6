"""The browser's flame chart (``C``, issue 30): one thread's stacks in time order.

Oracle: perf 6.1's ``perf script`` of the phases recording (tests/programs/phases.c,
phase_a, phase_b through phase_b_inner, phase_c, 600 ms each; tests/test_flamechart.py),
the main thread's samples binned by time by the chart's rule in plain Python: the frames
drawn over each column, top to bottom, are the binned stack of that column; after Enter on
a frame, over the frame's time span; after ``M`` (merge), the binned stacks with the
function merged away; ``v`` lists perf's samples in the frame's span whose stack goes
through the frame."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from perfprograms import perf_script_samples
from test_flamechart import binned, phases_data
from test_ui_pilot import browse
from test_ui_profile import idle, keys, prompt
from uihelpers import sync

from perftui.ui.chartscreen import FlameChart, FlameChartScreen
from perftui.ui.samplescreen import ProfileSamplesScreen

pytestmark = [pytest.mark.perf, pytest.mark.slow]

Stack = list[str]


def perf_samples(data: Path) -> tuple[int, list[tuple[int, Stack]], int, int]:
    """The busiest thread's tid, its samples (time, stack outermost first) by perf
    script, and the first and last sample times of every thread (the chart's span)."""
    script = perf_script_samples(data, callchain=True)
    tid = Counter(s.tid for s in script).most_common(1)[0][0]

    def name(sym: str | None, dso: str) -> str:
        return sym if sym is not None else f"[{dso.rsplit('/', 1)[-1]}]"

    mine = [(s.time_ns, [name(f[1], f[3]) for f in reversed(s.frames)])
            for s in script if s.tid == tid]
    times = [s.time_ns for s in script]
    return tid, mine, min(times), max(times)


def drawn(app: object) -> list[str | None]:
    """Each column's stack as the chart draws it: the frames over it, top to bottom."""
    g = app.screen.query_one(FlameChart)  # type: ignore[attr-defined]
    ch = g.chart
    cols: list[list[str]] = [[] for _ in range(ch.width)]
    for level in ch.levels:
        for f in level:
            for c in range(f.c0, f.c1):
                cols[c].append(g.label(f))
    return [";".join(c) if c else None for c in cols]


def expected(samples: list[tuple[int, Stack]], lo: int, hi: int, width: int,
             definition: Callable[[Stack], Stack | None] | None = None) -> list[str | None]:
    out = []
    for t, stack in samples:
        got = definition(stack) if definition else stack
        if got:
            out.append((t, ";".join(got)))
    return binned(out, lo, hi, width)


async def computed(pilot: object) -> FlameChartScreen:
    await idle(pilot)  # type: ignore[arg-type]
    screen = pilot.app.screen  # type: ignore[attr-defined]
    assert isinstance(screen, FlameChartScreen)
    while screen.busy or screen.graph.chart is None:
        await pilot.pause(0.02)  # type: ignore[attr-defined]
    return screen


@sync
async def test_flame_chart_columns_are_perf_scripts_stacks(shared_dir: Path) -> None:
    data = phases_data(shared_dir)
    tid, samples, first, last = perf_samples(data)
    async with browse(data) as (app, pilot):
        await keys(pilot, "C")
        screen = await computed(pilot)
        ch = screen.graph.chart
        assert ch is not None and ch.tid == tid  # the busiest thread first
        assert (ch.lo, ch.hi) == (first, last + 1)
        assert drawn(app) == expected(samples, ch.lo, ch.hi, ch.width)
        assert sum(c is not None for c in drawn(app)) >= ch.width // 2
        # the middle third is phase_b's: a frame there (the one nearest the middle column:
        # on a loaded machine that column can go unsampled), zoomed to its span
        g = screen.graph
        mid = ch.width // 2
        row0 = ch.levels[0]
        g.cursor = (0, min(range(len(row0)), key=lambda i: max(row0[i].c0 - mid, 0,
                                                               mid - (row0[i].c1 - 1))))
        await keys(pilot, "down", "down")
        f = g.current()
        assert f is not None
        t0, t1 = ch.span_of(f)
        n = sum(1 for t, s in samples if t0 <= t < t1
                and s[:f.depth] == [g.label(x) for x in
                                    _path(ch.levels, f)])
        assert f"{n:,} samples" in str(screen.query_one("#chart-status").render())
        await keys(pilot, "v")
        listed = app.screen
        assert isinstance(listed, ProfileSamplesScreen)
        assert len(listed.rows) == n
        await keys(pilot, "escape")
        await keys(pilot, "enter")
        screen = await computed(pilot)
        ch = screen.graph.chart
        assert ch is not None and (ch.lo, ch.hi) == (t0, t1)
        assert drawn(app) == expected(samples, t0, t1, ch.width)
        await keys(pilot, "backspace")
        screen = await computed(pilot)
        assert (screen.graph.chart.lo, screen.graph.chart.hi) == (first, last + 1)
        # merge phase_b_inner away: its samples are phase_b's
        g = screen.graph
        ch = g.chart
        hit = next((lv, i) for lv, row in enumerate(ch.levels) for i, f in enumerate(row)
                   if g.label(f) == "phase_b_inner")
        g.cursor = hit
        await keys(pilot, "M")
        screen = await computed(pilot)
        ch = screen.graph.chart
        assert "merge phase_b_inner" in str(screen.query_one("#chart-title").render())
        assert drawn(app) == expected(
            samples, ch.lo, ch.hi, ch.width,
            lambda s: [x for x in s if x != "phase_b_inner"] or None)
        await keys(pilot, "u")
        screen = await computed(pilot)
        assert drawn(app) == expected(samples, ch.lo, ch.hi, screen.graph.chart.width)
        # another thread by the chooser, and back to the busiest with ]
        threads = screen.graph.chart.threads
        if len(threads) > 1:
            await prompt(pilot, "t", str(threads[1][0]))
            screen = await computed(pilot)
            assert screen.graph.chart.tid == threads[1][0]
            await keys(pilot, "left_square_bracket")
            screen = await computed(pilot)
            assert screen.graph.chart.tid == tid


@sync
async def test_keys_typed_in_a_burst_reach_the_chart(shared_dir: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """``C``, arrows, Enter and a transform typed at once do what they do typed slowly
    (each waits for the chart the one before it asked for: each chart made slow here, as
    on a big recording)."""
    import time

    from perftui.ui import chartscreen

    make = chartscreen.make_chart

    def slow(*a, **k):  # type: ignore[no-untyped-def]
        time.sleep(0.3)
        return make(*a, **k)

    monkeypatch.setattr(chartscreen, "make_chart", slow)
    data = phases_data(shared_dir)
    burst = ("C", "down", "down", "enter", "down", "M", "down")  # (Enter: phase_a)
    seen = []
    for together in (False, True):
        async with browse(data) as (app, pilot):
            if together:
                await pilot.press(*burst)
                await idle(pilot)
            else:
                for k in burst:
                    await keys(pilot, k)
            screen = await computed(pilot)
            ch = screen.graph.chart
            seen.append((ch.lo, ch.hi, screen.graph.cursor, drawn(app),
                         str(screen.query_one("#chart-title").render()), len(screen.zoom)))
    assert seen[0] == seen[1]
    assert "merge" in seen[0][4] and "zoomed" in seen[0][4] and seen[0][5] == 1


def _path(levels: list, f: object) -> list:  # type: ignore[type-arg]
    """The frames from depth 1 down to ``f`` (each level's frame over its first column)."""
    out = []
    for d in range(f.depth):  # type: ignore[attr-defined]
        out.append(next(x for x in levels[d] if x.c0 <= f.c0 < x.c1))  # type: ignore[attr-defined]
    return out


def perf_event_counts(data: Path) -> dict[str, Counter[int]]:
    """perf script's samples per event name, per thread (tid -> count)."""
    import re
    import subprocess

    from perfprograms import require

    out = subprocess.run([require("perf"), "script", "-i", str(data), "--ns", "-F",
                          "tid,time,event"], capture_output=True, text=True,
                         check=True).stdout
    got: dict[str, Counter[int]] = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\d+)\s+\d+\.\d+:\s+(\S+):\s*$", line)
        if m:
            got.setdefault(m[2], Counter())[int(m[1])] += 1
    return got


def busiest(counts: Counter[int]) -> tuple[int, int]:
    """The chart's first thread: most samples, then the lowest tid."""
    tid = min(counts, key=lambda t: (-counts[t], t))
    return tid, counts[tid]


@sync
async def test_events_1_to_9_choose_what_the_chart_counts(shared_dir: Path) -> None:
    """``1``-``9`` in the chart choose the event as in the profile and the flame graph
    (cpu-clock, sched:sched_switch, then the offcpu-time they make), and ``C`` opens on
    the event of the view it was pressed in; each chart's thread and its samples are
    perf script's busiest thread of that event and its samples (offcpu-time: the
    switch-outs charged, by perf script's arithmetic, test_offcpu's)."""
    from test_offcpu import perf_offcpu
    from test_tracefmt import switch_recording

    data = switch_recording(shared_dir)
    per = perf_event_counts(data)
    charged = Counter(tid for (_t, tid), v in perf_offcpu(data)[0].items() if v[0] is not None)
    want = {"cpu-clock": busiest(per["cpu-clock"]),
            "sched:sched_switch": busiest(per["sched:sched_switch"]),
            "offcpu-time": busiest(charged)}
    assert want["cpu-clock"][1] >= 10 and want["sched:sched_switch"][1] >= 10

    def seen(screen: FlameChartScreen) -> tuple[str, tuple[int, int]]:
        ch = screen.graph.chart
        title = str(screen.query_one("#chart-title").render())
        name = next(n for n in want if f" {n} (" in title)
        return name, (ch.tid, len(ch.rows))

    async with browse(data) as (_app, pilot):
        await keys(pilot, "C")
        screen = await computed(pilot)
        assert seen(screen) == ("cpu-clock", want["cpu-clock"])
        assert "(1/3)" in str(screen.query_one("#chart-title").render())
        for key, name in (("2", "sched:sched_switch"), ("3", "offcpu-time"),
                          ("1", "cpu-clock")):
            await keys(pilot, key)
            screen = await computed(pilot)
            assert seen(screen) == (name, want[name]), key
        await keys(pilot, "escape", "f", "2", "C")  # from the flame graph on event 2
        screen = await computed(pilot)
        assert seen(screen) == ("sched:sched_switch", want["sched:sched_switch"])
