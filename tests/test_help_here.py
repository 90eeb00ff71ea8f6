"""``?`` starts with the keys of the place it was pressed in, then everywhere's (issue 29);
the events' ``1``-``9`` are listed with every view that shows an event.

The oracle is each place's own widget: the help's first section must hold every tooltip of
the BINDINGS of the widget that had the focus (read from the class here, not from
:mod:`perftui.ui.keys`), and its second section is everywhere's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.binding import Binding
from textual.pilot import Pilot
from uihelpers import settle, sync, wait_indexed, wait_views, workers_done

from perftui.demo import MODULES_DIR
from perftui.demo.generate import generate
from perftui.perfdata import open_recording
from perftui.ui.annotate import AnnotateTable
from perftui.ui.app import PerftuiApp
from perftui.ui.screens import HelpScreen, SymbolList
from perftui.ui.widgets.calltrees import CallTreeList
from perftui.ui.widgets.flame import FlameGraph
from perftui.ui.widgets.hotspots import HotspotTable
from perftui.ui.widgets.panes import Detail, SectionsPane
from perftui.ui.widgets.records import RecordList
from perftui.ui.widgets.timeline import Timeline

pytestmark = pytest.mark.slow  # nine places, a help each

EVENTS = "the n-th event of the recording (1-9), when it has several"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(tmp_path_factory.mktemp("helphere") / "demo.data")


def sections(text: str) -> list[tuple[str, str]]:
    """(title, body) of each section of the help's text (titles start at column 0)."""
    out: list[tuple[str, str]] = []
    for line in text.splitlines():
        if line and not line.startswith(" "):
            out.append((line, ""))
        elif out:
            out[-1] = (out[-1][0], out[-1][1] + " " + line.strip())
    return [(t, " ".join(b.split())) for t, b in out]


def tooltips(cls: type) -> list[str]:
    return [b.tooltip for b in cls.BINDINGS if isinstance(b, Binding) and b.tooltip]


async def help_of(pilot: Pilot) -> list[tuple[str, str]]:
    await pilot.press("question_mark")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, HelpScreen)
    got = sections(screen._text().plain)
    await pilot.press("escape")
    await settle(pilot)
    return got


async def go(pilot: Pilot, *keys: str) -> None:
    for key in keys:
        await pilot.press(key)
        await settle(pilot)
        await workers_done(pilot.app)
        await settle(pilot)


# (keys from the main screen, the widget focused there, the help's first title, whether
# the events' keys belong there); q/Escape after each goes back to the main screen
PLACES = [
    ((), RecordList, "record list", False, ()),
    (("T",), Timeline, "timeline", False, ()),
    (("m",), SectionsPane, "module sections", False, ()),
    (("l", "tab"), Detail, "detail", False, ()),
    (("m", "down", "enter"), SymbolList, "section drill-down", False, ("q",)),
    (("p",), HotspotTable, "profile (p)", True, ("p",)),
    (("p", "t"), CallTreeList, "call trees", True, ("escape", "p")),
    (("f",), FlameGraph, "flame graph (f)", True, ("q",)),
    (("m", "enter", "a"), AnnotateTable, "annotate", False, ("q", "q")),
]


@sync
async def test_help_starts_with_the_keys_of_where_it_was_asked(demo: Path) -> None:
    rec = open_recording(demo)
    app = PerftuiApp(rec, [str(MODULES_DIR)])
    try:
        async with app.run_test(size=(120, 50)) as pilot:
            await wait_indexed(pilot)
            await wait_views(pilot)
            for keys, cls, title, events, back in PLACES:
                await go(pilot, *keys)
                assert isinstance(app.focused, cls), (keys, app.focused)
                got = await help_of(pilot)
                assert got[0][0] == f"{title} (here)", (keys, got[0][0])
                assert got[1][0] == "everywhere"
                for tip in tooltips(cls):
                    assert " ".join(tip.split()) in got[0][1], (title, tip)
                assert (EVENTS in got[0][1]) == events, title
                # every other place once, after
                titles = [t for t, _ in got]
                assert len(titles) == len(set(titles)) and title not in titles[1:]
                await go(pilot, *back)
                assert len(app.screen_stack) == 1 and app.body == "records", keys
                await go(pilot, "l")
    finally:
        rec.close()
