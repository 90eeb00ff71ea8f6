"""SVG snapshots of the diff browser (pytest-textual-snapshot) on the demo before and after
its driver patch (``perftui diff --demo``'s recordings), at 80x24 and 120x40.

Regenerate with ``pytest tests/test_diff_snapshots.py --snapshot-update`` and look at them
(``tests/__snapshots__/test_diff_snapshots/``, rendered to PNG) before committing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot
from uihelpers import workers_done

from perftui.demo import MODULES_DIR
from perftui.demo.generate import PATCHED_SEED, generate, kallsyms_text
from perftui.perfdata import open_recording
from perftui.symbols.naming.resolver import SymbolOptions
from perftui.ui.diffapp import DiffApp
from perftui.ui.diffmodel import DiffModel

SIZES = {"80x24": (80, 24), "120x40": (120, 40)}
SCREENS: dict[str, tuple[str, ...]] = {
    "sections": (),
    # the lines: [kernel.kallsyms], [demo_nic], its .text.unlikely, its .text, ...
    "symbols": ("down", "down", "down", "enter"),  # demo_nic's .text: rx_poll, the checksums
    "module": ("down", "enter"),  # [demo_nic]'s line: its first section, .text.unlikely
    "perf": ("v",),  # perf diff's dso,sym table
    "ratio": ("c", "c"),
    "range": ("o", *["shift+right"] * 20),  # OLD's first seconds only
    # the differential flame graph, the cursor on the first thread's leaf
    "flame": ("f", "down", "down", "down"),
}


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("diffsnap")
    generate(d / "before.data")
    generate(d / "after.data", PATCHED_SEED, patched=True)
    (d / "kallsyms").write_text(kallsyms_text())  # as perftui diff --demo reads it
    return d


@pytest.fixture
def diff_app(pair: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[DiffApp]:
    monkeypatch.chdir(pair)  # relative names: the snapshots do not show tmp paths
    old, new = open_recording("before.data"), open_recording("after.data")
    try:
        yield DiffApp(DiffModel.of(old, new, [str(MODULES_DIR)], SymbolOptions(
            kallsyms=str(pair / "kallsyms"), modules_dirs=[str(MODULES_DIR)])))
    finally:
        old.close()
        new.close()


async def shown(pilot: Pilot) -> None:
    app = pilot.app
    assert isinstance(app, DiffApp)
    end = time.monotonic() + 60
    while True:
        await workers_done(app)
        await pilot.pause()
        if app.model.ready and app.diff is not None and app.shown_level == app.model.level \
                and not app.comparing and all(not p for p in app.progress.values()):
            return
        assert time.monotonic() < end, "the diff never showed"
        await pilot.pause(0.05)


def after(keys: tuple[str, ...]) -> Callable[[Pilot], object]:
    async def run_before(pilot: Pilot) -> None:
        await shown(pilot)
        for key in keys:
            await pilot.press(key)
            await shown(pilot)
        await pilot.pause(0.1)

    return run_before


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("screen", list(SCREENS))
def test_diff_snapshot(snap_compare: Callable[..., bool], diff_app: DiffApp, screen: str,
                       size: str) -> None:
    assert snap_compare(diff_app, terminal_size=SIZES[size], run_before=after(SCREENS[screen]))
