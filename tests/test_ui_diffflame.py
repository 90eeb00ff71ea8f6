"""The diff browser's differential flame graph (``f``).

The numbers and colours against Brendan Gregg's rules applied to perf 6.1's own stacks:
``perf script`` of two recordings of hotprog with shifted shares (test_diff_perf's pair)
folded here with each sample's period, then ``difffolded.pl -n`` (OLD's count of a stack
scaled to NEW's total, truncated) and ``flamegraph.pl`` (a frame's width: NEW's period
through it; its delta: the delta of the stack ending there, NEW less OLD; its colour:
``color_scale(delta, maxdelta)`` over every stack of the pair, drawn or not).  The colours
of a hand-made pair come from the plan: a frame that grew is red, one that shrank blue, one
unchanged white, the largest change the deepest shade.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from perfprograms import Built, require
from test_diff_perf import NEW_MIX, OLD_MIX
from textual.pilot import Pilot
from uihelpers import sync, workers_done

from perftui.analysis.diffflame import diff_flame
from perftui.demo import MODULES_DIR
from perftui.demo.generate import PATCHED_SEED, generate, kallsyms_text
from perftui.perfdata import open_recording
from perftui.symbols.naming.resolver import SymbolOptions
from perftui.ui.diffapp import DiffApp, DiffTable
from perftui.ui.diffflamescreen import DiffFlameScreen
from perftui.ui.diffmodel import DiffModel
from perftui.ui.widgets.diffflame import DiffFlameGraph, diff_rgb


def fold_periods(data: Path) -> Counter[str]:
    """perf script's stacks folded here (comm, then the frames outermost first; an unknown
    symbol named by its dso in brackets), each weighing its samples' periods."""
    perf = require("perf")
    p = subprocess.run([perf, "script", "-i", str(data), "-F", "comm,tid,period,ip,sym,dso"],
                       capture_output=True, text=True, timeout=300, cwd=data.parent)
    assert p.returncode == 0, p.stderr[-400:]
    stacks: Counter[str] = Counter()
    head: tuple[str, int] | None = None
    frames: list[str] = []

    def flush() -> None:
        if head is not None:
            stacks[";".join([head[0], *reversed(frames)])] += head[1]

    for line in p.stdout.splitlines():
        if not line.strip():
            continue
        if not line.startswith("\t") and not line.startswith(" " * 8):
            flush()
            m = re.match(r"^\s*(.*?)\s+(-?\d+)\s+(\d+)\s*$", line)
            assert m, line
            head, frames = (m.group(1), int(m.group(3))), []
            continue
        body = line.strip().split(" ", 1)[1]
        sym, dso = body.rsplit(" (", 1)
        if sym == "[unknown]":
            short = dso[:-1].rsplit("/", 1)[-1]
            sym = short if short.startswith("[") else f"[{short}]"
        frames.append(sym.replace(";", ":"))
    flush()
    return stacks


def gregg(old: Counter[str], new: Counter[str]) -> tuple[dict[str, int], dict[str, float],
                                                         float]:
    """difffolded.pl -n then flamegraph.pl: (NEW's period through each frame path, the
    delta of the stack ending at each path, maxdelta)."""
    t_old, t_new = sum(old.values()), sum(new.values())
    width: Counter[str] = Counter()
    delta: dict[str, float] = {}
    maxdelta = 0.0
    for stack in set(old) | set(new):
        o = int(old.get(stack, 0) * t_new / t_old)  # difffolded.pl -n: int($c1 * $t2 / $t1)
        d = float(new.get(stack, 0) - o)
        delta[stack] = d
        maxdelta = max(maxdelta, abs(d))
        parts = stack.split(";")
        for i in range(1, len(parts) + 1):
            width[";".join(parts[:i])] += new.get(stack, 0)
    return dict(width), delta, maxdelta


async def flame_shown(pilot: Pilot) -> DiffFlameGraph:
    app = pilot.app
    assert isinstance(app, DiffApp)
    end = time.monotonic() + 120
    while not (app.model.ready and app.diff is not None and not app.comparing):
        await workers_done(app)
        await pilot.pause(0.05)
        assert time.monotonic() < end, "the diff never showed"
    await pilot.press("f")
    while True:
        await workers_done(app)
        await pilot.pause()
        if isinstance(app.screen, DiffFlameScreen) and not app.screen.busy:
            return app.screen.graph
        assert time.monotonic() < end, "the flame graph never showed"
        await pilot.pause(0.05)


def rgb(graph: DiffFlameGraph, node: int) -> tuple[int, int, int]:
    colour = graph.frame_style(0, node).bgcolor
    assert colour is not None
    r, g, b = colour.get_truecolor()
    return r, g, b


@pytest.mark.perf
@pytest.mark.slow
@sync
async def test_widths_deltas_and_colours_follow_gregg_on_perf_script(
        built: Built, recorded) -> None:
    old_data = recorded("diff_old", built.hotprog, "2", OLD_MIX)
    new_data = recorded("diff_new", built.hotprog, "2", NEW_MIX)
    old_f, new_f = fold_periods(old_data), fold_periods(new_data)
    width, delta, maxdelta = gregg(old_f, new_f)
    old, new = open_recording(old_data), open_recording(new_data)
    try:
        app = DiffApp(DiffModel.of(old, new))
        async with app.run_test(size=(120, 40)) as pilot:
            graph = await flame_shown(pilot)
            fl = graph.flame
            assert fl is not None
            paths = {";".join(fl.path(k)): k for k in range(1, len(fl))}
            # every frame path of NEW's, and only those, each as wide as perf's periods
            assert set(paths) == {p for p, w in width.items() if w > 0}
            scale = fl.new_sum / 100.0
            for path, k in paths.items():
                assert int(fl.new_total[k]) == width[path], path
                want = delta.get(path, 0.0)
                # perftui keeps OLD unscaled-then-shared; difffolded.pl truncates: < 1 apart
                assert abs(float(fl.self_delta()[k]) * scale - want) < 1.0 + 1e-6 * abs(want), \
                    path
                er, eg, eb = diff_rgb(want, maxdelta)  # flamegraph.pl's color_scale
                got = rgb(graph, k - 1)
                assert all(abs(a - b) <= 1 for a, b in zip(got, (er, eg, eb), strict=True)), \
                    (path, got, (er, eg, eb))
            assert abs(fl.max_delta() * scale - maxdelta) < 1.0 + 1e-6 * maxdelta
            # hot_gamma's spin is only in NEW: it grew, and red it is
            grew = [k for p, k in paths.items() if p.endswith(";spin") and delta[p] > 0]
            assert grew and all(rgb(graph, k - 1)[0] == 255 for k in grew)
    finally:
        old.close()
        new.close()


def test_colours_follow_the_plan() -> None:
    """A hand-made pair: ``a`` grew by 20 points, ``b`` shrank by 10, ``c`` is the same;
    OLD's ``gone`` (40 points, NEW has no path for it) is the largest change, so the
    shades are against 40 points, as flamegraph.pl scales them."""
    old = [(["p", "main", "a"], 10), (["p", "main", "b"], 30), (["p", "main", "c"], 20),
           (["p", "main", "gone"], 40)]
    new = [(["p", "main", "a"], 30), (["p", "main", "b"], 20), (["p", "main", "c"], 20),
           (["p", "main"], 30)]
    fl = diff_flame(old, new)
    assert fl.max_delta() == 40.0
    g = DiffFlameGraph()
    g.flame, g.delta, g.max_delta = fl, fl.self_delta(), fl.max_delta()
    at = {fl.path(k)[-1]: k - 1 for k in range(1, len(fl))}
    assert rgb(g, at["a"]) == (255, int(210 * 20 / 40), int(210 * 20 / 40))  # red
    assert rgb(g, at["b"]) == (int(210 * 30 / 40), int(210 * 30 / 40), 255)  # blue
    assert rgb(g, at["c"]) == (255, 255, 255)  # unchanged: white
    assert rgb(g, at["main"]) == (255, int(210 * 10 / 40), int(210 * 10 / 40))  # +30
    assert diff_rgb(40.0, 40.0) == (255, 0, 0) and diff_rgb(-40.0, 40.0) == (0, 0, 255)


@pytest.fixture(scope="module")
def demo_pair(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("dflame")
    generate(d / "before.data")
    generate(d / "after.data", PATCHED_SEED, patched=True)
    (d / "kallsyms").write_text(kallsyms_text())
    return d


@pytest.mark.slow
@sync
async def test_keys_zoom_paint_and_lead_to_the_diff_row(demo_pair: Path) -> None:
    """Arrows, Enter and Esc as the flame graph's; ``v`` on a frame opens perf diff's
    dso,sym table on the frame's function; Esc without zoom or paint goes back."""
    old, new = open_recording(demo_pair / "before.data"), open_recording(demo_pair / "after.data")
    try:
        app = DiffApp(DiffModel.of(old, new, [str(MODULES_DIR)], SymbolOptions(
            kallsyms=str(demo_pair / "kallsyms"), modules_dirs=[str(MODULES_DIR)])))
        async with app.run_test(size=(120, 40)) as pilot:
            graph = await flame_shown(pilot)
            fl = graph.flame
            assert fl is not None and graph.current() is not None
            assert graph.current().node == -1  # type: ignore[union-attr]
            for key in ("down", "down", "down"):
                await pilot.press(key)
            cur = graph.current()
            assert cur is not None and cur.node >= 0
            assert graph.cursor[0] == 3 and len(fl.path(cur.node + 1)) == 3
            await pilot.press("enter")
            assert graph.zoom == [cur.node] and graph.levels[0][0].node == cur.node
            await pilot.press("escape")
            assert graph.zoom == []
            assert graph.current() == cur  # back on the frame zoomed into
            name = fl.name[cur.node + 1]  # its row in the dso,sym table
            await pilot.press("v")
            end = time.monotonic() + 60
            while app.comparing or app.shown_level is None or \
                    app.shown_level.view != "symbols":
                await workers_done(app)
                await pilot.pause(0.05)
                assert time.monotonic() < end
            await pilot.pause()
            table = app.query_one(DiffTable)
            line = app.lines[table.cursor_row]
            assert line.row.key[line.of.keys.index("sym")] == name
            await pilot.press("f")
            await flame_shown_again(pilot)
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, DiffFlameScreen)
    finally:
        old.close()
        new.close()


async def flame_shown_again(pilot: Pilot) -> DiffFlameGraph:
    app = pilot.app
    end = time.monotonic() + 60
    while True:
        await workers_done(app)
        await pilot.pause()
        if isinstance(app.screen, DiffFlameScreen) and not app.screen.busy:
            return app.screen.graph
        assert time.monotonic() < end


def test_self_delta_sums_to_nothing() -> None:
    """Both sides are shares of their own totals: the self changes of NEW's frames and
    less the share of OLD's stacks NEW has no path for sum to zero."""
    old = [(["p", "x"], 7), (["p", "y"], 5), (["q", "z"], 9)]
    new = [(["p", "x"], 3), (["p", "y"], 11)]
    fl = diff_flame(old, new)
    gone = 100.0 * fl.old_elsewhere / fl.old_sum
    assert abs(float(np.sum(fl.self_delta())) - gone) < 1e-9
