"""Type-ahead in the diff browser (issue 29): ``f`` and the keys typed after it in one
burst reach the differential flame graph, which is counted in a worker after its screen
opens (seen in tmux: ``f Down Down`` left the cursor on "all").  The oracle is the same keys
typed slowly, each once everything the previous one started has ended."""

from __future__ import annotations

from pathlib import Path

from test_diff_ui import make_app, planted, shown  # noqa: F401 - the fixture
from test_ui_typeahead import send
from testapi import keys_pending
from textual.pilot import Pilot
from uihelpers import settle, sync, workers_done

from perftui.ui.diffflamescreen import DiffFlameScreen
from perftui.ui.widgets.diffflame import DiffFlameGraph

KEYS = ("f", "down", "down", "right", "enter", "down")


async def quiet(pilot: Pilot) -> None:
    app = pilot.app
    for _ in range(400):
        await workers_done(app)
        await settle(pilot)
        if not keys_pending(app) and not app.workers:
            return
        await pilot.pause(0.02)
    raise AssertionError("the keys never settled")


async def where(planted: tuple[Path, Path, dict, dict], burst: bool) -> tuple[object, ...]:  # noqa: F811
    app = make_app(planted)
    async with app.run_test(size=(100, 30)) as pilot:
        await shown(pilot)
        if burst:
            send(app, *KEYS)  # type: ignore[arg-type]
            await quiet(pilot)
        else:
            for key in KEYS:
                await pilot.press(key)
                await quiet(pilot)
        assert isinstance(app.screen, DiffFlameScreen)
        g = app.screen.query_one(DiffFlameGraph)
        return g.cursor, tuple(g.zoom)


@sync
async def test_f_and_the_keys_after_it_in_one_burst(planted) -> None:  # noqa: F811
    slow = await where(planted, burst=False)
    assert slow[0] != (0, -1) and slow[1]  # the keys moved and zoomed
    assert await where(planted, burst=True) == slow
