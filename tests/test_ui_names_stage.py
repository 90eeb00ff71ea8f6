"""Before the first sample is named, the names pass replays the recording's thread and map
events (seconds at 50 M records): the browser says so, instead of a bare "naming samples…"
with no figure, and then counts the samples named."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_ui_pilot import browse, header_text
from uihelpers import settle, sync, wait_views

from perftui.demo import MODULES_DIR
from perftui.demo.generate import write_demo
from perftui.perfdata import open_recording
from perftui.perfdata.indexcache import IndexCache
from perftui.ui.messages import NamesProgress
from perftui.ui.model import Model
from perftui.ui.widgets.panes import HeaderLine
from perftui.ui.widgets.profile import ProfilePane

STEP = "replaying the recording's thread and map events"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("stage") / "demo.data"
    write_demo(path)
    return path


def _names(path: Path, cache: Path) -> list[tuple[str, object]]:
    """What ``Model.build_names`` reported, in order."""
    rec = open_recording(path, cache=IndexCache(str(cache)), mapped=True)
    try:
        m = Model(rec, [str(MODULES_DIR)])
        rec.build_index()
        m.finish()
        m.save()
        said: list[tuple[str, object]] = []
        m.build_names(progress=lambda done, total: said.append(("progress", (done, total))),
                      stage=lambda what: said.append(("stage", what)))
        assert m.names is not None
        return said
    finally:
        rec.close()


def test_the_step_comes_before_the_first_count(demo: Path, tmp_path: Path) -> None:
    said = _names(demo, tmp_path / "cache")
    assert said[0] == ("stage", STEP)
    assert [k for k, _ in said].count("stage") == 1
    counts = [v for k, v in said if k == "progress"]
    assert counts and counts[-1][0] == counts[-1][1] > 0  # every sample, at the end
    # named from the cache the next time: no replay, so no step said
    assert not [k for k, _ in _names(demo, tmp_path / "cache") if k == "stage"]


@sync
async def test_the_header_and_the_profile_say_the_step(demo: Path) -> None:
    async with browse(demo, index=False) as (app, pilot):
        await pilot.press("p")
        await wait_views(pilot)
        app.post_message(NamesProgress(0, 0, STEP))
        await settle(pilot)
        assert f"naming samples: {STEP}…" in header_text(app)
        pane = app.query_one(ProfilePane)
        assert pane.note.startswith(f"naming samples: {STEP}…")
        app.post_message(NamesProgress(5, 10))
        await settle(pilot)
        assert "naming samples… 50%" in header_text(app)


@pytest.mark.parametrize("size, want_step, want_count", [
    # the demo's name and counts take ~50 columns; "  naming samples… 50%" 21 more
    ((70, 24), "naming…", "naming 50%"),
    ((160, 40), f"naming samples: {STEP}…", "naming samples… 50%"),
])
@sync
async def test_the_header_keeps_the_figure_whole(demo: Path, size: tuple[int, int],
                                                 want_step: str, want_count: str) -> None:
    """Where the whole note would be cut after the file name and the counts, the header
    says its short form whole (the percentage stays readable over ssh at 80 columns with
    a longer file name or bigger counts)."""
    async with browse(demo, size=size) as (app, pilot):
        for msg, want in ((NamesProgress(0, 0, STEP), want_step),
                          (NamesProgress(5, 10), want_count)):
            app.post_message(msg)
            await settle(pilot)
            text = header_text(app)
            assert text.endswith("  " + want), text
            assert len(text) <= size[0], text
        app.query_one(HeaderLine).progress = "indexing cancelled"  # another note: no short
        app.query_one(HeaderLine).update_line()
        assert header_text(app).endswith("indexing cancelled")


@sync
async def test_the_profile_and_flame_graph_say_the_step_whole_at_80_columns(
        demo: Path) -> None:
    """The step's note is longer than 80 columns: the profile's table and the flame graph
    wrap it (it was cut at "(the profile")."""
    from perftui.ui.widgets.flame import FlameGraph
    from perftui.ui.widgets.hotspots import HotspotTable

    want = f"naming samples: {STEP}… (the profile opens when every sample has its symbol)"
    async with browse(demo, size=(80, 24), index=False) as (app, pilot):
        await pilot.press("p")
        await wait_views(pilot)
        table = app.query_one(HotspotTable)
        table.show(None, want)  # (what the pane shows once indexed, until named)
        await settle(pilot)
        got = [table.line(i).plain for i in range(table.line_count())]
        assert len(got) > 1 and " ".join(got) == want, got
        assert all(len(g) < table.size.width for g in got), got
        assert table.line_count() == len(got)  # (the lines drawn are those)
        await pilot.press("f")
        await wait_views(pilot)
        graph = app.query_one(FlameGraph)
        graph.placeholder = want
        w = graph.size.width
        rows = [graph.render_line(y).text.rstrip() for y in range(4)]
        assert " ".join(r for r in rows if r) == want, rows
        assert all(len(r) <= w for r in rows)
