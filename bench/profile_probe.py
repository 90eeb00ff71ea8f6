"""Run the browser headless on FILE and time its profile views (JSON on stdout):

- ``names_s``: from the end of indexing to every sample named and grouped (the one pass
  of the model's resolver that the record list's names and the profiles share);
- ``open_ms``: ``p`` pressed once the names are there, to the hotspot table on screen;
- ``resort_ms``: each of several sort-key changes (``s`` + keys + Enter) to the new table
  on screen (the median, and the slowest);
- ``children_ms``: ``c`` to the table without (then with) Children;
- ``range_ms``: a timeline range selected to the table counted under it;
- ``flame_ms``: ``f`` to the flame graph on screen.

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
    from perftui.cli import _tune_malloc

    _tune_malloc()
    from perftui.perfdata import open_recording
    from perftui.perfdata.indexcache import IndexCache
    from perftui.ui import app as ui_app
    from perftui.ui.app import PerftuiApp
    from perftui.ui.widgets.flame import FlamePane
    from perftui.ui.widgets.hotspots import HotspotTable
    from perftui.ui.widgets.profile import ProfilePane

    class Probe(PerftuiApp):
        CSS_PATH = str(Path(ui_app.__file__).parent / "perftui.tcss")

    rec = open_recording(path, cache=IndexCache(), mapped=True)
    app = Probe(rec, [])
    out: dict = {"origin": None}
    async with app.run_test(size=(120, 40)) as pilot:
        while not app.model.done:
            await pilot.pause(0.01)
        t_indexed = time.perf_counter()
        out["origin"] = rec.index_origin
        while app.model.groups is None:
            await pilot.pause(0.01)
        out["names_s"] = time.perf_counter() - t_indexed
        out["samples"] = len(app.model.groups)
        # the worker prepares the first table right after the names: let it (as a user
        # reading the record list would)
        await app.workers.wait_for_complete()
        table = app.query_one(HotspotTable)
        pane = app.query_one(ProfilePane)

        async def until(done, limit: float = 120.0) -> float:  # type: ignore[no-untyped-def]
            t0 = time.perf_counter()
            while not done():
                if time.perf_counter() - t0 > limit:
                    raise SystemExit("profile probe: timed out")
                await asyncio.sleep(0.001)
            await pilot.pause()  # one frame: the table is on screen
            return 1000 * (time.perf_counter() - t0)

        def shows(keys: tuple[str, ...], children: bool | None = None):  # type: ignore[no-untyped-def]
            def check() -> bool:
                v = table.view
                return (v is not None and not pane.busy and v.gp.keys == keys
                        and (children is None or v.gp.children == children))
            return check

        t0 = time.perf_counter()
        app.simulate_key("p")
        await until(shows(("comm", "dso", "sym")))
        out["open_ms"] = 1000 * (time.perf_counter() - t0)
        times = []
        for keys in SORTS:
            pane._apply_sort(keys)  # what Enter in the s prompt does
            t = time.perf_counter()
            await until(shows(tuple(keys.split(","))))
            times.append(1000 * (time.perf_counter() - t))
        out["resort_ms"] = statistics.median(times)
        out["resort_max_ms"] = max(times)
        out["resort_each_ms"] = dict(zip(SORTS, [round(x) for x in times], strict=True))
        t = time.perf_counter()
        app.simulate_key("c")
        await until(shows(("comm", "dso", "sym"), False))
        out["children_off_ms"] = 1000 * (time.perf_counter() - t)
        t = time.perf_counter()
        app.simulate_key("c")
        await until(shows(("comm", "dso", "sym"), True))
        out["children_on_ms"] = 1000 * (time.perf_counter() - t)
        # a range: the middle of the recording
        lo, hi = app.model.span()
        third = (hi - lo) // 3
        old = table.view
        t = time.perf_counter()
        app.post_message(app.query_one("#timeline").RangeChanged((lo + third, hi - third)))
        await until(lambda: table.view is not old and not pane.busy)
        out["range_ms"] = 1000 * (time.perf_counter() - t)
        t = time.perf_counter()
        app.simulate_key("f")
        flame = app.query_one(FlamePane)
        await until(lambda: flame.graph.levels and not flame.busy)
        out["flame_ms"] = 1000 * (time.perf_counter() - t)
        await app.workers.wait_for_complete()
    rec.close()
    return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1]))))
