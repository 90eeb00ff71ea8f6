"""Run the browser headless on FILE and time its profile views (JSON on stdout):

- ``indexed_s``: from opening the file to the end of indexing (or of checking the cache);
- ``names_s``: from the end of indexing to every sample named and grouped (the one pass
  of the model's resolver that the record list's names and the profiles share);
- ``open_ms``: ``p`` pressed once the names are there, to the hotspot table on screen;
- ``resort_ms``: each of several sort-key changes (``s`` + keys + Enter) to the new table
  on screen (the median, and the slowest);
- ``children_ms``: ``c`` to the table without (then with) Children;
- ``range_ms``: a timeline range selected to the table counted under it;
- ``flame_ms``: ``f`` to the flame graph on screen;
- ``transform_ms`` / ``transform_cpu_s``: in the profile, then in the flame graph, each of
  ``M`` (merge the top row's function: computed), ``u`` (undo), ``M`` again (redo) and
  ``u`` to the view drawn again (wall ms, and the process's CPU seconds meanwhile);
- ``chart_ms`` / ``chart_cpu_s``: from the flame graph, ``C`` to the flame chart drawn, each
  arrow key to the chart drawn again, Enter (zoom: counted again), Backspace, then ``M``
  on the frame under the cursor, ``u``, ``M`` and ``u`` (the same, in the chart).

``python bench/profile_probe.py FILE``.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

SORTS = ["dso,sym", "sym", "comm", "pid", "dso", "cpu", "module,section,sym", "comm,dso,sym"]


async def main(path: str) -> dict:
    from perftui.cli import tune_malloc

    tune_malloc()
    from perftui.perfdata import open_recording
    from perftui.perfdata.indexcache import IndexCache
    from perftui.ui import app as ui_app
    from perftui.ui.app import PerftuiApp
    from perftui.ui.widgets.flame import FlameGraph, FlamePane
    from perftui.ui.widgets.hotspots import HotspotTable
    from perftui.ui.widgets.profile import ProfilePane

    class Probe(PerftuiApp):
        CSS_PATH = str(Path(ui_app.__file__).parent / "perftui.tcss")

    # what the table and the flame graph drew, and when: (time, the data drawn)
    painted: list[tuple[float, int]] = []

    def noting(cls: type, data: str) -> None:
        draw = cls.render_line

        def render_line(self, y: int):  # type: ignore[no-untyped-def]
            painted.append((time.perf_counter(), id(getattr(self, data))))
            return draw(self, y)

        cls.render_line = render_line  # type: ignore[method-assign]

    noting(HotspotTable, "view")
    noting(FlameGraph, "levels")
    from perftui.ui.chartscreen import FlameChartScreen
    from perftui.ui.widgets.flamechart import FlameChart

    noting(FlameChart, "chart")

    t_start = time.perf_counter()
    rec = open_recording(path, cache=IndexCache(), mapped=True)
    app = Probe(rec, [])
    out: dict = {"origin": None}
    async with app.run_test(size=(120, 40)):
        # polled with a plain sleep: the pilot's pause repaints the screen each time,
        # 100 repaints a second that a terminal's user never causes, and that slowed the
        # worker (the GIL): names_s 10.2 s polled so, 6.7 s with the sleep (4.85 M records)
        while not app.model.done:
            await asyncio.sleep(0.01)
        t_indexed = time.perf_counter()
        out["origin"] = rec.index.origin
        out["indexed_s"] = t_indexed - t_start
        while app.model.groups is None:
            await asyncio.sleep(0.01)
        out["names_s"] = time.perf_counter() - t_indexed
        out["samples"] = len(app.model.groups)
        # the worker prepares the first table right after the names: let it (as a user
        # reading the record list would)
        await app.workers.wait_for_complete()
        table = app.query_one(HotspotTable)
        pane = app.query_one(ProfilePane)

        async def until(done, shown, limit: float = 120.0) -> float:  # type: ignore[no-untyped-def]
            """Until ``done()`` and then ``shown()`` (the data) drawn: when it was drawn."""
            t0 = time.perf_counter()
            while not done():
                if time.perf_counter() - t0 > limit:
                    raise SystemExit(f"profile probe: timed out after {out}")
                await asyncio.sleep(0.001)
            want = id(shown())
            while True:
                hit = [t for t, d in painted if d == want and t >= t0]
                if hit:
                    return 1000 * (hit[0] - t0)
                if time.perf_counter() - t0 > limit:
                    raise SystemExit("profile probe: not drawn")
                await asyncio.sleep(0.001)

        def view():  # type: ignore[no-untyped-def]
            return table.view

        def shows(keys: tuple[str, ...], children: bool | None = None):  # type: ignore[no-untyped-def]
            def check() -> bool:
                v = table.view
                return (v is not None and not pane.busy and v.gp.keys == keys
                        and (children is None or v.gp.children == children))
            return check

        app.simulate_key("p")
        out["open_ms"] = await until(shows(("comm", "dso", "sym")), view)
        times = []
        for keys in SORTS:
            pane._apply_sort(keys)  # what Enter in the s prompt does
            times.append(await until(shows(tuple(keys.split(","))), view))
        out["resort_ms"] = statistics.median(times)
        out["resort_max_ms"] = max(times)
        out["resort_each_ms"] = dict(zip(SORTS, [round(x) for x in times], strict=True))
        app.simulate_key("c")
        out["children_off_ms"] = await until(shows(("comm", "dso", "sym"), False), view)
        app.simulate_key("c")
        out["children_on_ms"] = await until(shows(("comm", "dso", "sym"), True), view)
        # a range: the middle of the recording
        lo, hi = app.model.span()
        third = (hi - lo) // 3
        old = table.view
        app.post_message(app.query_one("#timeline").RangeChanged((lo + third, hi - third)))
        out["range_ms"] = await until(lambda: table.view is not old and not pane.busy, view)
        # transforms on the table's top row: merged, undone, merged again, undone
        ms: dict[str, float] = {}
        cpu: dict[str, float] = {}
        for n, key in enumerate(("M", "u", "M", "u")):
            table.cursor = 0  # the same row each time (the first of the untransformed)
            old, c0 = table.view, time.process_time()
            app.simulate_key(key)
            ms[f"profile {n + 1} {key}"] = await until(
                lambda old=old: table.view is not old and not pane.busy, view)
            cpu[f"profile {n + 1} {key}"] = time.process_time() - c0
        app.simulate_key("f")
        flame = app.query_one(FlamePane)
        out["flame_ms"] = await until(lambda: flame.graph.levels and not flame.busy,
                                      lambda: flame.graph.levels)
        graph = flame.graph
        for n, key in enumerate(("M", "u", "M", "u")):
            graph.action_top()  # the same frame each time: the first thread's first
            graph.action_move("down")
            graph.action_move("down")
            old, c0 = graph.levels, time.process_time()
            app.simulate_key(key)
            ms[f"flame {n + 1} {key}"] = await until(
                lambda old=old: graph.levels is not old and not flame.busy,
                lambda: graph.levels)
            cpu[f"flame {n + 1} {key}"] = time.process_time() - c0
        out["transform_ms"] = {k: round(v) for k, v in ms.items()}
        out["transform_cpu_s"] = {k: round(v, 3) for k, v in cpu.items()}
        out["chart_ms"], out["chart_cpu_s"] = await chart_steps(app, until, FlameChartScreen)
        await app.workers.wait_for_complete()
    rec.close()
    return out


async def chart_steps(app, until, screen_class) -> tuple[dict, dict]:  # type: ignore[no-untyped-def]
    """The flame chart's keys (``C`` pressed where the app is), each to the chart drawn
    again: (wall ms, CPU s) per step."""
    ms: dict[str, float] = {}
    cpu: dict[str, float] = {}

    def screen():  # type: ignore[no-untyped-def]
        return app.screen if isinstance(app.screen, screen_class) else None

    async def step(name: str, key: str, done) -> None:  # type: ignore[no-untyped-def]
        c0 = time.process_time()
        app.simulate_key(key)
        ms[name] = await until(done, lambda: screen().graph.chart)
        cpu[name] = time.process_time() - c0

    def computed(old=None):  # type: ignore[no-untyped-def]
        return lambda: (screen() is not None and not screen().busy and
                        screen().graph.chart is not None and screen().graph.chart is not old)

    await step("C", "C", computed())
    g = screen().graph
    levels = g.chart.levels
    # a frame of the first level with a callee under it (down and up then move)
    g.cursor = (0, next((i for i, f in enumerate(levels[0]) if len(levels) > 1 and any(
        f.c0 <= x.c0 < f.c1 for x in levels[1])), 0))
    for key in ("right", "right", "left", "left", "down", "up"):
        cur = g.cursor
        await step(f"{key} {len(ms)}", key, lambda cur=cur: g.cursor != cur)
    old = g.chart
    await step("Enter (zoom)", "enter", computed(old))
    old = g.chart
    await step("Backspace", "backspace", computed(old))
    g.action_top()  # the busiest thread's first frame under its name (as the flame graph's)
    g.action_move("down")
    g.action_move("down")
    for n, key in enumerate(("M", "u", "M", "u")):
        old = g.chart
        await step(f"{n + 1} {key}", key, computed(old))
    return ({k: round(v) for k, v in ms.items()}, {k: round(v, 3) for k, v in cpu.items()})


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1]))))
