"""The profile and flame graph panes are not part of start-up (issue 15's reopen time): their
modules are imported and the panes mounted, hidden, once the first screen is painted, or
when a key asks for them first.  A key pressed before they are mounted still does what it
says, and a note given to them before they exist is shown by them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from test_ui_pilot import browse
from uihelpers import settle, sync, wait_views

from perftui.demo.generate import write_demo
from perftui.ui.app import PerftuiApp
from perftui.ui.screens import HelpScreen
from perftui.ui.widgets.flame import FlamePane
from perftui.ui.widgets.profile import ProfilePane

LAZY = ("perftui.ui.profiledata", "perftui.ui.samplescreen", "perftui.ui.widgets.profile",
        "perftui.ui.widgets.flame", "perftui.ui.widgets.hotspots",
        "perftui.ui.widgets.calltrees", "perftui.analysis.report",
        "perftui.analysis.samplegroups", "perftui.analysis.stacktree")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("lazy") / "demo.data"
    write_demo(path)
    return path


def test_start_up_does_not_import_the_profile_views() -> None:
    """What `perftui FILE` imports before its first screen leaves the profile views out."""
    code = ("import sys, perftui.launch, perftui.cli, perftui.ui.app; "
            f"print(' '.join(m for m in {LAZY!r} if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, check=True)
    assert r.stdout.split() == []


async def _mounted(app: PerftuiApp) -> bool:
    return bool(app.query(ProfilePane)) and bool(app.query(FlamePane))


@sync
async def test_views_mounted_once_the_first_screen_is_painted(demo: Path) -> None:
    async with browse(demo) as (app, pilot):
        await settle(pilot)
        await wait_views(pilot)
        assert await _mounted(app)
        assert not app.query_one(ProfilePane).display and not app.query_one(FlamePane).display
        assert len(app.query(ProfilePane)) == 1  # once


@sync
async def test_p_and_f_before_the_views_exist(demo: Path) -> None:
    """Without an index worker no first screen comes: the first `p` mounts the views and
    shows the profile; `f` the flame graph; Esc goes back to the records."""
    async with browse(demo, index=False) as (app, pilot):
        await settle(pilot)
        assert not await _mounted(app)
        await pilot.press("p")
        await settle(pilot)
        assert app.body == "profile" and app.query_one(ProfilePane).display
        await pilot.press("escape")
        await settle(pilot)
        assert app.body == "records" and not app.query_one(ProfilePane).display
        await pilot.press("f")
        await settle(pilot)
        assert app.body == "flame" and app.query_one(FlamePane).display
        assert len(app.query(ProfilePane)) == 1 and len(app.query(FlamePane)) == 1


@sync
async def test_a_screen_opened_while_the_views_mount_wins(demo: Path) -> None:
    """`p` then `?` in the same instant: the help screen is shown, and the profile is not
    switched in under it once the views are mounted (nor does anything fail)."""
    async with browse(demo, index=False) as (app, pilot):
        await settle(pilot)
        app.action_profile()  # the views start mounting
        app.action_help()
        await settle(pilot)
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        assert app.body == "records" and await _mounted(app)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("p")
        await settle(pilot)
        assert app.body == "profile"


@sync
async def test_a_note_given_before_the_views_exist_reaches_them(demo: Path) -> None:
    async with browse(demo, index=False) as (app, pilot):
        await settle(pilot)
        app.views.set_notes("no profile: indexing was cancelled", "no flame", redraw=False)
        await pilot.press("p")
        await settle(pilot)
        assert app.query_one(ProfilePane).note == "no profile: indexing was cancelled"
        assert app.query_one(FlamePane).note == "no flame"


@sync
async def test_views_mounted_with_another_pane_zoomed(demo: Path) -> None:
    """The first screen painted while another pane has the whole screen (``z``: the
    timeline not laid out, so not binned): the views still mount.  They waited for the
    timeline's bins, which come only when it is shown again: the seeded walk on the
    truncated demo once ended with "the profile and flame graph panes were never
    mounted"."""
    from perftui.ui.widgets.timeline import Timeline

    async with browse(demo, index=False) as (app, pilot):
        await settle(pilot)
        await pilot.press("z")
        await settle(pilot)
        assert app.screen.maximized is not None and app.query_one(Timeline).bins is None
        app.index_display._mount_views_once_complete()  # (what the painted first screen calls)
        await wait_views(pilot, timeout=10)
        assert await _mounted(app)
