"""SVG snapshots of the browser (pytest-textual-snapshot) on the deterministic demo recording.

Each screen at 80x24 and 120x40.  Regenerate with ``pytest tests/test_ui_snapshots.py
--snapshot-update`` and look at them (``tests/__snapshots__/``) before committing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot
from uihelpers import settle, wait_indexed, workers_done

from perftui.demo import MODULES_DIR
from perftui.demo.generate import generate, kallsyms_text
from perftui.perfdata import Recording, open_recording
from perftui.symbols.naming.resolver import SymbolOptions
from perftui.ui.app import PerftuiApp

SIZES = {"80x24": (80, 24), "120x40": (120, 40)}
SCREENS: dict[str, tuple[str, ...]] = {
    "main": (),
    "sections": ("m",),
    "section": ("m", "down", "enter"),
    "samples": ("m", "down", "enter", "enter"),
    "info": ("i",),
    "help": ("question_mark",),
    "annotate": ("m", "enter", "a"),
    "profile": ("p",),
    "profile-trees": ("p", "down", "enter"),
    # sorted by sym,srcline (the demo has no DWARF: perf's sym+offset), a row's callers
    "profile-srcline": ("p", "s", "ctrl+a", "ctrl+k", *"sym,srcline", "enter", "down"),
    "profile-srcline-trees": ("p", "s", "ctrl+a", "ctrl+k", *"sym,srcline", "enter", "down",
                              "enter"),
    "section-profile": ("m", "down", "p"),
    "flame": ("f", "down", "down", "down"),
    "flame-zoom": ("f", "down", "right", "enter", "down", "down"),
    "chart": ("C", "right_square_bracket", "down", "down"),
    "chart-zoom": ("C", "right_square_bracket", "down", "right", "enter", "down"),
}


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("snapshots")
    generate(d / "demo.data")
    (d / "kallsyms").write_text(kallsyms_text())  # as perftui --demo reads it
    return d


@pytest.fixture
def demo_app(demo_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PerftuiApp]:
    # a relative path: the header and the info screen show "demo.data", whatever tmp is
    monkeypatch.chdir(demo_dir)
    rec: Recording = open_recording("demo.data")
    try:
        yield PerftuiApp(rec, [str(MODULES_DIR)], symbols=SymbolOptions(
            kallsyms=str(demo_dir / "kallsyms")))
    finally:
        rec.close()


async def selection_drawn(pilot: Pilot) -> None:
    """Until the row selected in a pane (after its cursor rested) is drawn in the timeline."""
    app = pilot.app
    calm = 0  # (3 times in a row: a message on its way to the timeline is not missed)
    for _ in range(400):
        await workers_done(app)
        await settle(pilot)
        calm = 0 if app.selection_pending() else calm + 1  # type: ignore[attr-defined]
        if calm == 3:
            return
        await pilot.pause(0.05)
    raise AssertionError("the selected row was not drawn")


def after(keys: tuple[str, ...]) -> Callable[[Pilot], object]:
    async def run_before(pilot: Pilot) -> None:
        await wait_indexed(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
            await workers_done(pilot.app)  # (the annotate screen's worker)
            await settle(pilot)
        # a screen filled by a worker (annotate) lays its table out, then centres the hottest
        # row after a refresh: on a loaded machine that takes more than one pause
        screen = pilot.app.screen
        for _ in range(200):
            if getattr(screen, "loaded", True):
                break
            await pilot.pause(0.05)
        await selection_drawn(pilot)
        await pilot.wait_for_scheduled_animations()
        # a passing note ("annotate: reading the symbol tables…") lasts seconds: how long
        # the machine took decides whether it is still up, so it is not pinned
        pilot.app.clear_notifications()
        for _ in range(3):
            await pilot.pause(0.05)

    return run_before


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("screen", list(SCREENS))
def test_snapshot(snap_compare: Callable[..., bool], demo_app: PerftuiApp, screen: str,
                  size: str) -> None:
    assert snap_compare(demo_app, terminal_size=SIZES[size], run_before=after(SCREENS[screen]))


#: at 60x20 (and 80x24, above) the names that fit are shown whole (issue 29): the section's
#: symbols, the samples list's symbol+offset, the profile's Symbol column first; the
#: focused bottom pane grown to its content
NARROW = ("main", "sections", "section", "samples", "profile", "profile-trees")


@pytest.mark.parametrize("screen", NARROW)
def test_snapshot_60x20(snap_compare: Callable[..., bool], demo_app: PerftuiApp,
                        screen: str) -> None:
    assert snap_compare(demo_app, terminal_size=(60, 20), run_before=after(SCREENS[screen]))
