"""The browser's hotspot table (``p``) against ``perf report`` (perf 6.1) on fresh
recordings: the rows shown, read off the screen, equal perf report's row for row (the
same keys, the same sample count, self and children within 0.01 percentage points), for
sort keys chosen with ``s``, with and without Children (``c``), under a timeline range
(perf's ``--time`` with the range's exact nanoseconds), under the ``cpu=`` filter (perf's
``--cpu``), per event (``1``/``2``; perf shows each event apart), and on a recording
without callchains (perf prints one Overhead column)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from perfprograms import Built, require
from test_ui_pilot import browse
from test_ui_profile import idle, keys, prompt, table_lines
from uihelpers import sync

pytestmark = [pytest.mark.perf, pytest.mark.slow]

LEVEL = re.compile(r"^\[[k.]\] ")
Rows = dict[tuple[str, ...], list[tuple[int, float, float]]]


def perf_table(data: Path, keys: str, children: bool, extra: tuple[str, ...] = ()
               ) -> dict[str, Rows]:
    """perf report's rows per event: keys -> [(samples, self %, children %)]."""
    perf = require("perf")
    cmd = [perf, "report", "-i", str(data), "--stdio", "-g", "none", "--sort", keys, "-t",
           ";", "-n", "--children" if children else "--no-children", *extra]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=data.parent)
    assert p.returncode == 0, p.stderr[-500:]
    out: dict[str, Rows] = {}
    rows: Rows = {}
    for line in p.stdout.splitlines():
        m = re.match(r"# Samples: \S+\s+of event '([^']*)'", line)  # (time slices: ...)
        if m:
            rows = out.setdefault(m.group(1), {})
            continue
        if not line.strip() or line.startswith("#"):
            continue
        f = [x.strip() for x in line.split(";")]
        if children:
            ch, ov, n, k = float(f[0][:-1]), float(f[1][:-1]), int(f[2]), f[3:]
        else:
            ch, ov, n, k = 0.0, float(f[0][:-1]), int(f[1]), f[2:]
        rows.setdefault(tuple(LEVEL.sub("", x) for x in k), []).append((n, ov, ch))
    return out


def shown(app: object, children: bool) -> Rows:
    """The table on screen: keys -> [(samples, self %, children %)]."""
    heads, lines = table_lines(app)  # type: ignore[arg-type]
    assert (heads[0] == "Children") == children, heads
    out: Rows = {}
    for r in lines:
        if children:
            ch, ov, n, k = float(r[0][:-1]), float(r[1][:-1]), int(r[2].replace(",", "")), \
                r[3:]
        else:
            ch, ov, n, k = 0.0, float(r[0][:-1]), int(r[1].replace(",", "")), r[2:]
        out.setdefault(tuple(LEVEL.sub("", x) for x in k), []).append((n, ov, ch))
    return out


def same(mine: Rows, theirs: Rows, keys: str) -> None:
    klist = keys.split(",")
    # perf cuts a comm longer than its column when the width was set before that name
    # appeared ("perf-exec" -> "perf-ex"): cut ours the same way
    width = {i: max(len(k[i]) for k in theirs) for i, name in enumerate(klist)
             if name == "comm" and theirs}
    cut: Rows = {}
    for k, v in mine.items():
        key = tuple(x[:width[i]] if i in width else x for i, x in enumerate(k))
        cut.setdefault(key, []).extend(v)
    # a name longer than its column is cut on screen with an ellipsis
    # ("_multiarray_umath.cpython-311-x86_64-linux-gnu.so" -> "_multiarray_umath.cpyth…"):
    # cut perf's the same way, wherever the screen cut that column's name
    cuts = {(i, x[:-1]) for k in cut for i, x in enumerate(k) if x.endswith("…")}
    folded: Rows = {}
    for k, v in theirs.items():
        key = tuple(next((p + "…" for j, p in cuts if j == i and x.startswith(p)
                          and len(x) > len(p)), x) for i, x in enumerate(k))
        folded.setdefault(key, []).extend(v)
    theirs = folded
    assert set(cut) == set(theirs), (sorted(set(theirs) - set(cut))[:5],
                                     sorted(set(cut) - set(theirs))[:5])
    for key, want in theirs.items():
        got = sorted(cut[key])
        assert len(got) == len(want), key
        for (n, ov, ch), (wn, wov, wch) in zip(got, sorted(want), strict=True):
            assert n == wn, key
            assert abs(ov - wov) <= 0.01 and abs(ch - wch) <= 0.01, (key, ov, wov, ch, wch)


@pytest.fixture(scope="module")
def program(built: Built, recorded) -> Path:  # type: ignore[no-untyped-def]
    return recorded("hotprog", built.hotprog, "3")  # as test_report_perf records it


@pytest.fixture(scope="module")
def system(built: Built, recorded) -> Path:  # type: ignore[no-untyped-def]
    return recorded("sys_report", built.hotprog, "1", system_wide=True)


@sync
async def test_program_rows_equal_perf_report(program: Path) -> None:
    async with browse(program) as (app, pilot):
        await keys(pilot, "p")
        (want,) = perf_table(program, "comm,dso,sym", True).values()
        same(shown(app, True), want, "comm,dso,sym")  # perf's default: children
        for keys_text in ("dso,sym", "sym", "pid"):
            await prompt(pilot, "s", keys_text)
            (want,) = perf_table(program, keys_text, True).values()
            same(shown(app, True), want, keys_text)
        await keys(pilot, "c")
        (want,) = perf_table(program, "pid", False).values()
        same(shown(app, False), want, "pid")
        await prompt(pilot, "s", "comm,dso,sym")
        (want,) = perf_table(program, "comm,dso,sym", False).values()
        same(shown(app, False), want, "comm,dso,sym")


@sync
async def test_system_wide_under_a_range_and_a_cpu_filter(system: Path) -> None:
    async with browse(system) as (app, pilot):
        await keys(pilot, "p")
        await prompt(pilot, "s", "cpu")
        (want,) = perf_table(system, "cpu", True).values()
        same(shown(app, True), want, "cpu")
        # a range on the timeline: perf --time with its nanoseconds
        await keys(pilot, "T", *["right"] * 20, *["shift+right"] * 30)
        lo, hi = app.model.time_range
        span = f"{lo // 10**9}.{lo % 10**9:09d},{hi // 10**9}.{hi % 10**9:09d}"
        await keys(pilot, "p")  # from the timeline back to the table
        await prompt(pilot, "s", "comm,dso,sym")
        await idle(pilot)
        (want,) = perf_table(system, "comm,dso,sym", True, ("--time", span)).values()
        same(shown(app, True), want, "comm,dso,sym")
        # and the filter: cpu=0, perf --cpu 0
        await prompt(pilot, "F", "cpu=0")
        await keys(pilot, "c")
        (want,) = perf_table(system, "comm,dso,sym", False,
                             ("--time", span, "--cpu", "0")).values()
        same(shown(app, False), want, "comm,dso,sym")


@sync
async def test_two_events_each_apart(built: Built, recorded) -> None:  # type: ignore[no-untyped-def]
    data = recorded("two_events", built.hotprog, "2", events="cpu-clock,task-clock")
    theirs = perf_table(data, "dso,sym", False)
    assert len(theirs) == 2
    async with browse(data) as (app, pilot):
        await keys(pilot, "p", "c")
        await prompt(pilot, "s", "dso,sym")
        for n, (event, want) in enumerate(theirs.items(), start=1):
            await keys(pilot, str(n))
            from uihelpers import screen_text

            assert f"{event} ({n}/2)" in screen_text(app)
            same(shown(app, False), want, "dso,sym")
        # the flame graph counts the event the profile showed, and back
        (first, _), (second, _) = theirs.items()
        await keys(pilot, "f")
        assert app.body == "flame" and f"{second} (2/2)" in screen_text(app)
        await keys(pilot, "1", "p")
        assert app.body == "profile" and f"{first} (1/2)" in screen_text(app)


@sync
async def test_without_callchains_one_overhead_column(built: Built, recorded) -> None:  # type: ignore[no-untyped-def]
    data = recorded("hotprog_flat", built.hotprog, "1", callgraph=False)
    async with browse(data) as (app, pilot):
        await keys(pilot, "p")
        (want,) = perf_table(data, "comm,dso,sym", False).values()
        same(shown(app, False), want, "comm,dso,sym")


def one_comm(app: object, comm: str) -> Rows:
    """The table on screen without its Command column, every row's being ``comm`` (perf
    leaves out the column of a key --comm gives one value)."""
    rows = shown(app, True)
    assert {k[0] for k in rows} == {comm}
    return {k[1:]: v for k, v in rows.items()}


def title_of(app: object, pane: str) -> str:
    from textual.widgets import Label

    return str(app.query_one(f"#{pane}-title", Label).render())  # type: ignore[attr-defined]


@sync
async def test_a_comm_filter_absolute_then_relative(system: Path) -> None:
    """comm=hotprog keeps one thread name's entries: their shares are of every sample
    (perf's default, --percentage absolute), and after % of the kept ones (relative), the
    title saying which; the flame graph's "all" is the comm's share as perf's --sort comm
    row (absolute) or 100% (relative)."""
    absolute = perf_table(system, "comm,dso,sym", True, ("--comm", "hotprog"))
    relative = perf_table(system, "comm,dso,sym", True,
                          ("--comm", "hotprog", "--percentage", "relative"))
    (want_abs,), (want_rel,) = absolute.values(), relative.values()
    top = max(want_abs, key=lambda k: want_abs[k][0][2])
    assert want_rel[top][0][2] - want_abs[top][0][2] > 1.0  # (they differ: the test can fail)
    (comms,) = perf_table(system, "comm", False).values()
    ((_n, comm_share, _ch),) = comms[("hotprog",)]
    async with browse(system) as (app, pilot):
        await keys(pilot, "p")
        await prompt(pilot, "F", "comm=hotprog")
        same(one_comm(app, "hotprog"), want_abs, "dso,sym")
        assert "% of all" in title_of(app, "profile")
        await keys(pilot, "f")
        assert f"{comm_share:.2f}%" in str(app.query_one("#flame-status").render())
        await keys(pilot, "percent_sign")
        assert "100.00%" in str(app.query_one("#flame-status").render())
        assert "% of kept" in title_of(app, "flame")
        await keys(pilot, "p")
        same(one_comm(app, "hotprog"), want_rel, "dso,sym")
        assert "% of kept" in title_of(app, "profile")
        await keys(pilot, "percent_sign")
        same(one_comm(app, "hotprog"), want_abs, "dso,sym")
