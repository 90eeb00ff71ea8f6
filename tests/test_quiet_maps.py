"""Quiet where perf is quiet (issue 29): a memfd map and an anonymous executable map without
/tmp/perf-PID.map are expected to have no file; perf 6.1's report prints nothing about them,
and neither does perftui's (they are kept as quiet notes).  The dso rows still equal perf's."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import pytest
from inproc import run_cli
from perfprograms import PROGRAMS, require, shared

from conftest import skip_or_fail

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
