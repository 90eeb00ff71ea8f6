"""Issue 10: one source for the keys (``?``, the footer, the README) and sizes from the
stylesheet's breakpoints, not from code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from uihelpers import settle, sync, wait_indexed

from perftui.demo import MODULES_DIR
from perftui.demo.generate import generate
from perftui.perfdata import open_recording
from perftui.ui.app import PerftuiApp
from perftui.ui.keys import help_sections, help_text, key_name, markdown_table
from perftui.ui.screens import BackScreen, NavTable, SampleTable, SymbolList
from perftui.ui.widgets.panes import Detail, SectionsPane
from perftui.ui.widgets.records import RecordList
from perftui.ui.widgets.timeline import Timeline

ROOT = Path(__file__).parents[1]
CLASSES = (PerftuiApp, RecordList, Detail, Timeline, SectionsPane, SymbolList, SampleTable,
           NavTable, BackScreen)


def test_readme_key_table_is_the_bindings() -> None:
    readme = (ROOT / "README.md").read_text()
    assert markdown_table() in readme
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "keys_table.py"), "--check"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def test_every_binding_is_in_the_help() -> None:
    """Every binding of every place (Textual's own apart) has a help line: the README's
    table and ``?`` list them all, with the key the binding really has."""
    listed = {(title, k) for title, rows in help_sections() for keys, _ in rows
              for k in keys.split("/") if keys != "/"} | {
        (title, "/") for title, rows in help_sections() for keys, _ in rows if keys == "/"}
    keys_listed = {k for _, k in listed}
    for cls in CLASSES:
        for b in cls.BINDINGS:
            assert b.tooltip, f"{cls.__name__}: {b.key} has no help"  # type: ignore[union-attr]
            assert key_name(b.key) in keys_listed, (cls.__name__, b.key)  # type: ignore[union-attr]
    text = help_text(100)
    for _title, rows in help_sections():
        for _keys, words in rows:
            assert words.split()[0] in text


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(tmp_path_factory.mktemp("keys") / "demo.data")


@pytest.mark.parametrize("size, timeline, bottom", [((60, 18), 3, 5), ((80, 24), 5, 6),
                                                   ((120, 40), 7, 15)])
@pytest.mark.slow
@sync
async def test_sizes_follow_the_stylesheet_breakpoints(demo: Path, size: tuple[int, int],
                                                       timeline: int, bottom: int) -> None:
    rec = open_recording(demo)
    app = PerftuiApp(rec, [str(MODULES_DIR)])
    try:
        async with app.run_test(size=(100, 50)) as pilot:
            await wait_indexed(pilot)
            await pilot.resize_terminal(*size)
            await settle(pilot)
            assert app.query_one(Timeline).outer_size.height == timeline
            assert app.query_one("#bottom").outer_size.height == bottom  # -tall: 40%
            # the help fits the screen's width
            await pilot.press("question_mark")
            await settle(pilot)
            assert all(len(ln) <= size[0] - 4 for ln in help_text(size[0] - 4).splitlines())
    finally:
        rec.close()
