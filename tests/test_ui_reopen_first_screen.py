"""A reopen from the index cache paints its complete first screen (timeline, section
counts) before the index worker starts checking the cached rows: the check holds the GIL
for long stretches, and the screen came up to 0.25 s later while it ran.  The oracle is
the demo generator's plan (how many samples each module section got)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from uihelpers import wait_indexed

from perftui.demo import MODULES_DIR
from perftui.demo.generate import write_demo
from perftui.perfdata import open_recording
from perftui.perfdata.indexcache import IndexCache
from perftui.symbols.modnames import module_name
from perftui.ui.app import PerftuiApp
from perftui.ui.widgets.panes import SectionsPane
from perftui.ui.widgets.timeline import Timeline


def _counts(app: PerftuiApp) -> dict[tuple[str, str | None], int] | None:
    rep = app.model.report
    if rep is None:
        return None
    return {(e.module, e.section): int(rep.counts.per_entry[k])
            for k, e in enumerate(rep.smap.entries) if rep.counts.per_entry[k]}


async def _open(path: Path, cache: Path, seen: list[dict[str, Any]]) -> str:
    rec = open_recording(path, cache=IndexCache(str(cache)), mapped=True)
    app = PerftuiApp(rec, [str(MODULES_DIR)])
    real = rec.build_index

    def build_index(*a: Any, **k: Any) -> Any:
        """What the screen had when the worker went on to the rows."""
        pane = app.query_one(SectionsPane)
        seen.append({"painted": app._cached_shown.is_set(), "rows": len(pane.entry_of_row),
                     "bins": app.query_one(Timeline).bins is not None,
                     "counts": _counts(app)})
        return real(*a, **k)

    rec.build_index = build_index  # type: ignore[method-assign]
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_indexed(pilot)
        return rec.index_origin
    finally:
        rec.close()


def test_cached_screen_is_painted_before_the_rows_are_checked(tmp_path: Path) -> None:
    plan = write_demo(tmp_path / "demo.data")
    seen: list[dict[str, Any]] = []
    assert asyncio.run(_open(tmp_path / "demo.data", tmp_path / "cache", seen)) == "walk"
    assert asyncio.run(_open(tmp_path / "demo.data", tmp_path / "cache", seen)) == "cache"
    first, again = seen
    assert not first["painted"]  # a first open walks the file: nothing to show before
    assert again["painted"] and again["bins"] and again["rows"] > 0
    assert again["counts"] == {(module_name(m), s): n for (m, s), n in plan.in_sections.items()}
