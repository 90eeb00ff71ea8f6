"""A seeded random walk over every key of the diff browser: it must never raise.

Each step is a key of a binding (the app, the compared table, the two timelines, the help),
a resize between 60x18 and 200x60, or a run of shift+arrows on a timeline (a range on one
side, which regroups that side).  The walk runs on the demo before and after its patch;
``PERFTUI_MONKEY=long`` walks 10,000 steps instead of 300.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from test_ui_monkey import SIZES, press
from textual.pilot import Pilot
from uihelpers import settle, sync, workers_done

from perftui.demo import MODULES_DIR
from perftui.demo.generate import PATCHED_SEED, generate
from perftui.perfdata import open_recording
from perftui.ui.diffapp import DiffApp, DiffHelp, DiffTable, SideTimeline
from perftui.ui.diffmodel import DiffModel
from perftui.ui.widgets.timeline import Timeline

STEPS = int(os.environ.get("PERFTUI_MONKEY_STEPS") or
            (10000 if os.environ.get("PERFTUI_MONKEY") == "long" else 300))


def diff_keys() -> list[str]:
    keys: set[str] = set()
    for cls in (DiffApp, DiffTable, SideTimeline, Timeline, DiffHelp):
        for b in cls.BINDINGS:
            for k in b.key.split(","):  # type: ignore[union-attr]
                keys.add(k.strip())
    keys -= {"ctrl+c", "q"}  # quitting ends the walk
    return sorted(keys | {"tab", "shift+tab", "enter", "escape", "up", "down", "backspace"})


def check(app: DiffApp) -> None:
    if app._exception is not None:
        raise app._exception
    table = app.screen_stack[0].query_one(DiffTable)
    assert table.row_count == 0 or 0 <= table.cursor_row < table.row_count


async def ready(pilot: Pilot) -> None:
    app = pilot.app
    assert isinstance(app, DiffApp)
    for _ in range(1200):
        if app.model.ready and app.diff is not None:
            break
        await pilot.pause(0.05)
    await workers_done(app)
    await settle(pilot)


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("diffmonkey")
    return generate(d / "before.data"), generate(d / "after.data", PATCHED_SEED, patched=True)


@pytest.mark.slow
@sync
async def test_diff_monkey(pair: tuple[Path, Path], tmp_path: Path,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # P saves the screen in the cwd (perftui.screen.N)
    rng = random.Random(7)
    keys = diff_keys()
    old, new = (open_recording(p) for p in pair)
    app = DiffApp(DiffModel.of(old, new, [str(MODULES_DIR)]))
    tally = {"keys": 0, "ranges": 0, "resizes": 0}
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            for step in range(STEPS):
                r = rng.random()
                if r < 0.05:
                    await pilot.resize_terminal(*rng.choice(SIZES))
                    tally["resizes"] += 1
                elif r < 0.12 and len(app.screen_stack) == 1:
                    side = rng.choice(["o", "n"])
                    arrows = [rng.choice(["shift+right", "shift+left"])] * rng.randrange(1, 12)
                    tally["keys"] += await press(pilot, side, *arrows, "d")
                    tally["ranges"] += 1
                else:
                    tally["keys"] += await press(pilot, rng.choice(keys))
                if step % 8 == 0:
                    await pilot.pause()
                check(app)
            await workers_done(app)
            await settle(pilot)
            check(app)
    finally:
        old.close()
        new.close()
    print(f"diff monkey: {STEPS} steps, {tally}")
    assert tally["keys"] >= STEPS // 2
