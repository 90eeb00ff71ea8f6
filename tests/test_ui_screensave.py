"""``P`` saves what is on screen to a text file (issue 29), as perf's TUI ``P`` writes
``perf.hist.N``: ``perftui.screen.N`` in the current directory, the first N free.

The oracle for the text is the terminal: tmux's ``capture-pane`` of the screen the key was
typed on, on every kind of screen (main, profile, flame graph, help, info, a section's
drill-down, the diff browser).  The pilot tests check the file naming: files and links
already there are never written through, and a directory that cannot be written is said
in a toast, not a crash.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from test_ui_tmux import PERFTUI, Term
from test_ui_tmux_bursts import settled
from uihelpers import settle, sync, wait_indexed

from perftui.demo import MODULES_DIR
from perftui.demo.generate import generate
from perftui.perfdata import open_recording
from perftui.ui.app import PerftuiApp

NAMED = re.compile(r"perftui\.screen\.(\d+) written")


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Callable[[str], Term]]:
    """A command run at 80x24 in ``tmp_path/cwd``, where ``P`` writes its files."""
    made: list[Term] = []
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "TEXTUAL_ANIMATIONS": "none"}
    (tmp_path / "cwd").mkdir()

    def start(command: str) -> Term:
        t = Term(f"cd {tmp_path / 'cwd'} && {command}", env, tmp_path, size=(80, 24))
        made.append(t)
        return t

    yield start
    for t in made:
        t.close()


def lines(text: str) -> list[str]:
    """A screen's rows, trailing blanks cut (tmux cuts them too)."""
    return [ln.rstrip() for ln in text.rstrip("\n").split("\n")]


def save_and_compare(t: Term, cwd: Path, n: int) -> None:
    """``P`` on the settled screen: the file ``perftui.screen.n`` holds the screen tmux
    shows, and the toast names it."""
    shown = settled(t)
    t.keys("P")
    toast = t.wait(lambda s: NAMED.search(s) is not None, "the toast")
    m = NAMED.search(toast)
    assert m is not None and m.group(1) == str(n), toast
    path = cwd / f"perftui.screen.{n}"
    assert lines(path.read_text()) == lines(shown)
    t.wait(lambda s: NAMED.search(s) is None, "the toast to go", timeout=30)
    settled(t)


@pytest.mark.slow
@pytest.mark.needs("tmux")
def test_P_saves_the_screen_tmux_shows(terminal: Callable[[str], Term],
                                       tmp_path: Path) -> None:
    t = terminal(f"{PERFTUI} --demo")
    t.wait(lambda s: "[demo_kvm]" in s and not any(
        w in s for w in ("indexing", "checking", "naming")), "the demo indexed and named")
    cwd = tmp_path / "cwd"
    n = 0
    # the main screen, the profile, the flame graph, help, info, a section's symbols
    for keys, back in (((), ()), (("p",), ("p",)), (("f",), ("q",)), (("?",), ("Escape",)),
                       (("i",), ("Escape",)), (("m", "Down", "Enter"), ("q",))):
        for key in keys:
            t.keys(key)
            settled(t)
        save_and_compare(t, cwd, n)
        n += 1
        for key in back:
            t.keys(key)
            settled(t)
    assert sorted(p.name for p in cwd.iterdir()) == [f"perftui.screen.{i}" for i in range(n)]
    t.keys("q")
    assert t.wait_exit() == 0


@pytest.mark.slow
@pytest.mark.needs("tmux")
def test_P_in_the_diff_browser(terminal: Callable[[str], Term], tmp_path: Path) -> None:
    t = terminal(f"{PERFTUI} diff --demo")
    t.wait_for("module sections", "samples", timeout=60)
    save_and_compare(t, tmp_path / "cwd", 0)
    t.keys("f")
    settled(t)
    save_and_compare(t, tmp_path / "cwd", 1)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(tmp_path_factory.mktemp("screensave") / "demo.data")


@sync
async def test_P_never_writes_through_what_is_there(demo: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """perftui.screen.0 exists and .1 is a link to a file elsewhere: .2 is written, the two
    are unchanged; then, in a directory that cannot be written, a toast says so."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "perftui.screen.0").write_text("mine\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("not yours\n")
    os.symlink(elsewhere, tmp_path / "perftui.screen.1")
    rec = open_recording(demo)
    try:
        app = PerftuiApp(rec, [str(MODULES_DIR)])
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_indexed(pilot)
            await pilot.press("P")
            for _ in range(100):
                if (tmp_path / "perftui.screen.2").exists():
                    break
                await pilot.pause(0.02)
            text = (tmp_path / "perftui.screen.2").read_text()
            assert "demo.data" in text.splitlines()[0]  # the header line
            assert len(text.splitlines()) == 24
            assert (tmp_path / "perftui.screen.0").read_text() == "mine\n"
            assert elsewhere.read_text() == "not yours\n"
            toasts = [str(n.message) for n in app._notifications]
            assert f"perftui.screen.2 written (in {tmp_path})" in toasts
            ro = tmp_path / "ro"
            ro.mkdir()
            ro.chmod(0o500)
            monkeypatch.chdir(ro)
            await pilot.press("P")
            await settle(pilot)
            await settle(pilot)
            if os.access(ro, os.W_OK):  # (as root the mode does not stop a write)
                assert (ro / "perftui.screen.0").exists()
            else:
                assert [n for n in app._notifications
                        if str(n.message).startswith("screen not saved: ")]
                assert not list(ro.iterdir())
            assert app.is_running
    finally:
        rec.close()
