"""The diff browser in a real terminal (tmux): ``perftui diff --demo`` opens it on the demo
before and after its driver patch; the numbers on the screen are the generators' plans."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from test_ui_tmux import PERFTUI, Term, term  # noqa: F401 - the fixture

from perftui.demo.generate import FREQ, PATCHED_SEED, write_demo

pytestmark = pytest.mark.needs("tmux")


def test_diff_demo_end_to_end(term: Callable[[str], Term],  # noqa: F811
                              tmp_path_factory: pytest.TempPathFactory) -> None:
    d = tmp_path_factory.mktemp("diffplan")
    before = write_demo(d / "before.data")
    after = write_demo(d / "after.data", PATCHED_SEED, patched=True)
    period = 1_000_000_000 // FREQ
    old = 100 * before.in_sections["demo_nic", ".text.unlikely"] * period / (
        before.samples * period)
    new = 100 * after.in_sections["demo_nic", ".text.unlikely"] * period / (
        after.samples * period)
    t = term(f"{PERFTUI} diff --demo")
    screen = t.wait_for("module sections", f"{before.samples:,} samples",
                        f"{after.samples:,} samples", timeout=60)
    row = next(ln for ln in screen.splitlines() if ".text.unlikely" in ln and "demo_nic" in ln)
    assert f"{old:.2f}%" in row and f"{new:.2f}%" in row and f"{new - old:+.2f}%" in row
    t.keys("Enter")
    t.wait_for("demo_nic .text.unlikely ▸ symbols", "demo_nic_handle_error")
    t.keys("q")  # back up
    t.wait_for("module sections")
    t.keys("q")
    assert t.wait_exit() == 0
