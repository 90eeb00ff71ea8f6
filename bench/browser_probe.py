"""Run the browser headless on FILE; print how fast the first screen came, when the
timeline and the section counts were complete on screen, when every row was indexed (or,
from the cache, checked) and the cache written, and how long page-down took while
indexing ran and after it (JSON on stdout).

``python bench/browser_probe.py FILE START`` where START is the parent's ``time.time()``
when it launched this process (so interpreter start-up counts).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path


async def main(path: str, started: float) -> dict:
    from perftui import startup

    startup.hold()  # as the `perftui` command does (perftui.launch)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from perftui.cli import tune_malloc

    tune_malloc()  # as `perftui` itself does at start
    from perftui.perfdata import open_recording
    from perftui.perfdata.indexcache import IndexCache
    from perftui.ui import app as ui_app
    from perftui.ui.app import PerftuiApp
    from perftui.ui.messages import Progress
    from perftui.ui.widgets.panes import SectionsPane
    from perftui.ui.widgets.records import RecordList
    from perftui.ui.widgets.timeline import Timeline

    marks: dict[str, float] = {}

    class Probe(PerftuiApp):
        CSS_PATH = str(Path(ui_app.__file__).parent / "perftui.tcss")

        def compose(self):  # type: ignore[no-untyped-def]
            for w in super().compose():
                if isinstance(w, RecordList):
                    w.__class__ = ProbeList
                    w._watch = False  # type: ignore[attr-defined]
                yield w

        def on_progress(self, msg: Progress) -> None:
            super().on_progress(msg)
            if "first" not in marks and msg.records > 0:
                self.call_after_refresh(lambda: marks.setdefault("first", time.time()))

    # complete on screen: the first frame written out in which the timeline was drawn with
    # its bins while the section pane had its rows (whichever path put them there: the
    # first screen of a reopen has them before any progress message)
    draw = Timeline.render

    drawn: list[bool] = []

    def timeline_render(self):  # type: ignore[no-untyped-def]
        out = draw(self)  # (it may bin the timeline as it draws it)
        if self.bins is not None and self.app.query_one(SectionsPane).entry_of_row:
            drawn.append(True)
        return out

    display = PerftuiApp._display

    def app_display(self, screen, renderable):  # type: ignore[no-untyped-def]
        display(self, screen, renderable)  # the frame written out: complete if it had both
        if drawn and renderable is not None and "complete" not in marks:
            marks["complete"] = time.time()

    PerftuiApp._display = app_display  # type: ignore[method-assign]

    Timeline.render = timeline_render  # type: ignore[method-assign]
    painted: list[float] = []

    class ProbeList(RecordList):
        """Notes when the line under the cursor is painted (the end of a page-down)."""

        def render_line(self, y: int):  # type: ignore[no-untyped-def]
            strip = super().render_line(y)
            if self._watch and y - 1 + int(self.scroll_offset.y) == self.cursor:
                painted.append(time.perf_counter())
                self._watch = False
            return strip

    rec = open_recording(path, cache=IndexCache(), mapped=True)  # as `perftui FILE` does
    app = Probe(rec, [])
    app.reopen_from_cache()  # as `perftui` does
    during: list[float] = []
    after: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        while "first" not in marks:
            await pilot.pause(0.005)
        records = app.query_one(RecordList)

        async def page_down() -> float | None:
            """Post the key as the terminal driver would; wait for the new cursor line."""
            records._watch = True  # type: ignore[attr-defined]
            painted.clear()
            t = time.perf_counter()
            app.simulate_key("pagedown")
            while not painted and time.perf_counter() - t < 2:
                await asyncio.sleep(0.001)
            return 1000 * (painted[0] - t) if painted else None

        while not app.model.done and len(during) < 40:
            ms = await page_down()
            if ms is not None:
                during.append(ms)
            await pilot.pause(0.02)
        indexed_during = app.model.done
        while not app.model.done:
            await pilot.pause(0.05)
        marks["indexed"] = time.time()
        for _ in range(40):
            ms = await page_down()
            if ms is not None:
                after.append(ms)
        cursor = records.cursor
        await app.workers.wait_for_complete()  # the cache entry written
        marks["saved"] = time.time()
    rec.close()
    return {
        "origin": rec.index.origin,
        "first_screen_s": marks["first"] - started,
        "complete_s": marks.get("complete", marks["indexed"]) - started,
        "indexed_s": marks["indexed"] - started,
        "saved_s": marks["saved"] - started,
        "records": len(rec.columns),
        "pagedown_during_ms": statistics.median(during) if during else None,
        "pagedown_during_n": len(during),
        "finished_before_pagedowns": indexed_during and not during,
        "pagedown_after_ms": statistics.median(after) if after else None,
        "cursor": cursor,
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], float(sys.argv[2])))))
