"""Quiet where perf is quiet (issue 29): a memfd map and an anonymous executable map without
/tmp/perf-PID.map are expected to have no file; perf 6.1's report prints nothing about them,
and neither does perftui's.  The dso rows still equal perf's.  They are said on the browser's
``i`` screen, apart from the notes a user can act on (the program planned both: a memfd it
maps and runs, no perf map written)."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import pytest
from inproc import run_cli
from perfprograms import PROGRAMS, require, shared
from test_ui_unwind_notes import _until
from uihelpers import screen_text, settle, sync, wait_indexed

from conftest import skip_or_fail
from perftui.perfdata import open_recording
from perftui.ui.app import PerftuiApp
from perftui.ui.screens import InfoScreen

pytestmark = [pytest.mark.perf, pytest.mark.slow]


def _record(d: Path, env: dict[str, str]) -> Path:
    data = d / "memfdjit.data"
    subprocess.run([require("perf"), "record", "-q", "-e", "cpu-clock", "-o", str(data), "--",
                    sys.executable, str(PROGRAMS / "memfdjit.py")],
                   cwd=d, env=env, check=True, capture_output=True)
    return data


def _rows(text: str) -> list[str]:
    return [ln.rstrip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


def test_expected_missing_maps_are_not_on_stderr(shared_dir: Path) -> None:
    if platform.machine() != "x86_64":
        skip_or_fail("memfdjit.py runs x86-64 code")
    data = shared(shared_dir, "memfdjit", _record)
    perf = subprocess.run([require("perf"), "report", "-i", str(data), "--stdio", "-g", "none",
                           "--sort", "dso"], capture_output=True, text=True, check=True)
    assert "memfd:sealed-jit (deleted)" in perf.stdout and "[JIT] tid" in perf.stdout
    got = run_cli("report", str(data), "-g", "none", "--sort", "dso", "--no-cache")
    assert got.returncode == 0
    assert got.stderr == perf.stderr == ""
    assert _rows(got.stdout) == _rows(perf.stdout)


@sync
async def test_expected_missing_maps_are_on_the_info_screen(shared_dir: Path) -> None:
    if platform.machine() != "x86_64":
        skip_or_fail("memfdjit.py runs x86-64 code")
    data = shared(shared_dir, "memfdjit", _record)
    rec = open_recording(data)
    app = PerftuiApp(rec, [], auto_index=True)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_indexed(pilot)
            await _until(pilot, lambda: app.model.names is not None, "the names")
            await pilot.press("i")
            await settle(pilot)
            assert isinstance(app.screen, InfoScreen)
            app.screen.query_one("VerticalScroll").scroll_end(animate=False)
            await settle(pilot)
            flat = " ".join(ln.strip("│ ").strip() for ln in screen_text(app).splitlines())
            flat = " ".join(flat.split())
    finally:
        rec.close()
    quiet = flat.split("expected to have no file (perf is silent about them):", 1)
    assert len(quiet) == 2, flat
    assert "/memfd:sealed-jit (deleted): not found" in quiet[1]
    assert "/tmp/perf-" in quiet[1] and ".map: cannot stat" in quiet[1]
    assert "nothing to say" not in flat
