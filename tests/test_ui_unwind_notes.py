"""Never silent in the browser: what could not be unwound is on the ``i`` screen, with its
counts and DSOs (the same lines the CLI writes on stderr, test_unwind_hostile.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from dwarfrecords import BASE, Sampled, dwarf_recording, words
from test_unwind_hostile import S, build, regs
from uihelpers import screen_text, settle, sync, wait_indexed

from perftui.perfdata import open_recording
from perftui.ui.app import PerftuiApp
from perftui.ui.screens import InfoScreen


async def _until(pilot, ok, what: str) -> None:  # type: ignore[no-untyped-def]
    for _ in range(3000):
        if ok():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"{what} never came")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
@sync
async def test_info_screen_says_what_was_not_unwound(tmp_path: Path,
                                                     size: tuple[int, int]) -> None:
    so, sym = build(tmp_path, "cfihostile")
    ret = BASE + sym["good_mid"] + 6
    data = dwarf_recording(tmp_path / "ui.data", str(so), [
        Sampled(regs(BASE + sym["skip_loop"], S), words(ret, 0, 0)),
        Sampled(regs(BASE + sym["good_leaf"] + 1, S), words(ret, 0, 0)),
        Sampled(regs(BASE + sym["good_leaf"] + 1, S), words(ret, 0, 0), size=1 << 20),
    ])
    rec = open_recording(data)
    app = PerftuiApp(rec, [], auto_index=True)
    try:
        async with app.run_test(size=size) as pilot:
            await wait_indexed(pilot)
            await _until(pilot, lambda: app.model.names is not None, "the names")
            await pilot.press("i")
            await settle(pilot)
            assert isinstance(app.screen, InfoScreen)
            scroll = app.screen.query_one("VerticalScroll")
            scroll.scroll_end(animate=False)
            await settle(pilot)
            text = screen_text(app)
            app.save_screenshot(str(tmp_path / f"info-{size[0]}.svg"))
            print(text)
            assert "symbols and call stacks:" in text
            # the notes wrapped to the screen: words, not the box's edge, end each line
            flat = " ".join(ln.strip("│ ").strip() for ln in text.splitlines())
            flat = " ".join(flat.split())
            assert "DWARF unwinding: 3 samples with user stacks, 0 unwound to the end" in flat
            assert "1 at the end of the copied stack (8192 bytes a sample;" in flat
            assert "1 at CFI that cannot be used" in flat
            assert ("1 not unwound (user registers or stack past the end of the record)"
                    in flat)
            # (a path longer than the screen is cut where it must be)
            assert (f"1 samples stopped in {so}: CFI that cannot be used (a CFA or register "
                    "rule that cannot be evaluated)").replace(" ", "") in flat.replace(" ", "")
    finally:
        rec.close()
