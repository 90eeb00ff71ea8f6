"""The diff browser in a real terminal (tmux): ``perftui diff --demo`` opens it on the demo
before and after its driver patch; the numbers on the screen are the generators' plans."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from test_ui_tmux import PERFTUI, Term, term  # noqa: F401 - the fixture

from perftui.demo.generate import FREQ, PATCHED_SEED, write_demo

pytestmark = [pytest.mark.needs("tmux"), pytest.mark.slow]  # a real terminal each


def test_diff_demo_end_to_end(term: Callable[[str], Term],  # noqa: F811
                              tmp_path_factory: pytest.TempPathFactory) -> None:
    d = tmp_path_factory.mktemp("diffplan")
    before = write_demo(d / "before.data")
    after = write_demo(d / "after.data", PATCHED_SEED, patched=True)
    period = 1_000_000_000 // FREQ

    def share(plan, *sections: tuple[str, str]) -> float:
        return 100 * sum(plan.in_sections[s] for s in sections) * period / (
            plan.samples * period)

    nic = [s for s in before.in_sections | after.in_sections if s[0] == "demo_nic"]
    t = term(f"{PERFTUI} diff --demo")
    screen = t.wait_for("module sections", f"{before.samples:,} samples",
                        f"{after.samples:,} samples", timeout=60)
    lines = screen.splitlines()
    # demo_nic's line: its sections' total; under it, its .text.unlikely
    at = next(i for i, ln in enumerate(lines) if "[demo_nic]" in ln)
    for ln, secs in ((lines[at], nic), (next(ln for ln in lines[at + 1:]
                                              if ".text.unlikely" in ln),
                                         [("demo_nic", ".text.unlikely")])):
        old, new = share(before, *secs), share(after, *secs)
        assert f"{old:.2f}%" in ln and f"{new:.2f}%" in ln and f"{new - old:+.2f}%" in ln, ln
    head = next(i for i, ln in enumerate(lines) if "module / section" in ln)
    t.keys(*["Down"] * (at - head - 1))
    t.wait_for("module demo_nic")  # the status line
    t.keys("Enter")  # a module's line: its first section (the largest change)
    t.wait_for("demo_nic .text.unlikely ▸ symbols", "demo_nic_handle_error")
    t.keys("q")  # back up
    t.wait_for("module sections")
    t.keys("q")
    assert t.wait_exit() == 0
