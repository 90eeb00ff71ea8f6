"""A recording still being written (issue 29): copied while ``perf record`` runs, its
header says data size 0 and it has no features yet (no build id, release or hostname).
Made on this machine, its kernel map's ``_text`` is this boot's, so this machine's
``/proc/kallsyms`` names its kernel frames, as for a finished file; the info notes and the
main screen's header say so.

The oracle is perf 6.1 on the finished recording the copy is the start of (perf 6.1 on
the copy itself stops at once: "failed to process sample"): every kernel symbol perftui
names in the copy is one ``perf report --sort sym`` names in the whole, and none is a raw
address (as they were before: the kernel taken for another machine's).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from perfprograms import require
from uihelpers import sync, wait_indexed

from conftest import skip_or_fail
from perftui.perfdata import open_recording
from perftui.symbols.tables.livekernel import LIVE_KALLSYMS, recorded_text, running_text
from perftui.ui.app import PerftuiApp
from perftui.ui.widgets.panes import HeaderLine

pytestmark = [pytest.mark.perf, pytest.mark.slow]  # a system-wide recording


@pytest.fixture(scope="module")
def unfinished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the copy taken while perf record ran, the finished recording)."""
    perf = require("perf")
    if running_text("/proc/kallsyms") is None:
        skip_or_fail("/proc/kallsyms hides its addresses here (kptr_restrict)")
    d = tmp_path_factory.mktemp("live")
    live, copy = d / "live.data", d / "copy.data"
    p = subprocess.Popen([perf, "record", "-q", "-a", "-e", "cpu-clock", "-F", "1000",
                          "-o", str(live), "--", "sleep", "8"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while (not live.exists() or live.stat().st_size < 400_000) and \
                time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.2)
        shutil.copyfile(live, copy)
    finally:
        p.wait(timeout=60)
    assert int.from_bytes(copy.read_bytes()[48:56], "little") == 0  # data size 0
    return copy, live


def perf_kernel_symbols(data: Path) -> set[str]:
    out = subprocess.run([require("perf"), "report", "-i", str(data), "--stdio", "--sort",
                          "sym", "-q"], capture_output=True, text=True, timeout=300,
                         check=True).stdout
    return {ln.split("[k] ", 1)[1].strip() for ln in out.splitlines() if "[k] " in ln}


def test_report_names_kernel_frames_with_this_machines_kallsyms(
        unfinished: tuple[Path, Path]) -> None:
    copy, finished = unfinished
    want = perf_kernel_symbols(finished)
    assert want and not any(s.startswith("0x") for s in want), want
    rec = open_recording(copy)
    try:
        rec.build_index()
        assert recorded_text(rec) == running_text("/proc/kallsyms")
    finally:
        rec.close()
    r = subprocess.run([sys.executable, "-m", "perftui", "report", str(copy), "--sort", "sym",
                        "--no-cache"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    got = {ln.split("[k] ", 1)[1].strip() for ln in r.stdout.splitlines() if "[k] " in ln}
    assert got and got <= want, (got - want, r.stderr)


@sync
async def test_the_header_says_so(unfinished: tuple[Path, Path]) -> None:
    rec = open_recording(unfinished[0])
    app = PerftuiApp(rec)
    try:
        async with app.run_test(size=(160, 30)) as pilot:
            await wait_indexed(pilot)
            for _ in range(200):
                if app.model.names is not None:
                    break
                await pilot.pause(0.05)
            notes = app.model.names.notes
            assert any(n.startswith(LIVE_KALLSYMS) for n in notes), notes
            await pilot.pause(0.2)
            assert "unfinished: local kallsyms" in app.query_one(HeaderLine).render().plain
    finally:
        rec.close()
