"""The vDSO: where perf 6.1 finds it, and where perftui goes further.

A program spends its time in ``clock_gettime`` (the vDSO's ``__vdso_clock_gettime``),
recorded with ``perf record -N`` (no build-id cache).  perf reads a vDSO only from its
build-id cache, so with an empty cache it prints bare addresses; after any ``perf record``
without ``-N`` on this kernel has put the vDSO in the cache, perf names the same samples.
That second report is the oracle: perftui, with the empty cache, must give exactly its
rows (it reads the running kernel's vDSO when the build id is the recorded one).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from perfprograms import require, shared

from perftui.cli import main as perftui_main

pytestmark = pytest.mark.perf

PROGRAM = r"""
#include <time.h>
int main(void) {
    struct timespec t; long s = 0;
    for (long i = 0; i < 2000000; i++) { clock_gettime(CLOCK_MONOTONIC, &t); s += t.tv_nsec; }
    return s == 42;
}
"""


def perf_rows(data: Path, home: Path) -> dict[tuple[str, str], int]:
    """perf report's samples per (dso, symbol), perf's home (its cache) being ``home``."""
    p = subprocess.run([require("perf"), "report", "-i", str(data), "--stdio", "-g", "none",
                        "--no-children", "--sort", "dso,sym", "-t", ";", "-n"],
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "HOME": str(home)}, cwd=data.parent)
    assert p.returncode == 0, p.stderr[-500:]
    rows = {}
    for line in p.stdout.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        f = [x.strip() for x in line.split(";")]
        rows[f[2], re.sub(r"^\[[k.]\] ", "", f[3])] = int(f[1])
    return rows


@pytest.fixture(scope="module")
def recording(shared_dir: Path) -> tuple[Path, Path, Path]:
    """(the recording made with -N, an empty home, a home whose cache has the vDSO), made
    once per run (:func:`perfprograms.shared`: every xdist worker takes the same)."""
    gcc, perf = require("gcc"), require("perf")

    def make(d: Path, env: dict[str, str]) -> Path:
        src = d / "clock.c"
        src.write_text(PROGRAM)
        subprocess.run([gcc, "-O1", "-o", str(d / "clock"), str(src)], check=True)
        (d / "home-empty").mkdir()
        (d / "home-cached").mkdir()
        data = d / "clock.data"
        for home, out, extra in (("home-empty", data, ["-N"]),
                                 ("home-cached", d / "fill.data", [])):
            subprocess.run([perf, "record", "-q", *extra, "-e", "cpu-clock", "-F", "4000",
                            "-o", str(out), str(d / "clock")], check=True, capture_output=True,
                           env={**env, "HOME": str(d / home)}, cwd=d)
        return data

    data = shared(shared_dir, "test_vdso_perf.recording", make)
    return data, data.parent / "home-empty", data.parent / "home-cached"


def test_perf_needs_its_cache_perftui_does_not(recording: tuple[Path, Path, Path],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    data, empty, cached = recording
    bare = perf_rows(data, empty)
    named = perf_rows(data, cached)
    vdso_bare = {s: n for (dso, s), n in bare.items() if dso == "[vdso]"}
    vdso_named = {s: n for (dso, s), n in named.items() if dso == "[vdso]"}
    # the premise: perf without its cache leaves the vDSO's samples as addresses
    assert vdso_bare and all(s.startswith("0x") for s in vdso_bare), vdso_bare
    assert "__vdso_clock_gettime" in vdso_named, vdso_named
    assert sum(vdso_bare.values()) == sum(vdso_named.values())

    monkeypatch.setenv("PERF_BUILDID_DIR", str(empty / ".debug"))  # the empty cache
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert perftui_main(["report", str(data), "--json", "--no-children",
                             "--sort", "dso,sym"]) == 0
    ours = {(r["dso"], r["sym"]): r["samples"] for r in json.loads(buf.getvalue())["rows"]}
    assert ours == named


def test_vdso_copy_leaves_no_file(tmp_path: Path) -> None:
    """The running kernel's vDSO copy is readable as an ELF file, and nothing of it stays
    in the temporary directory (each run used to leave a perftui-vdso-* file there)."""
    import sys

    code = ("import os; from perftui.symbols.files.vdso import running_vdso_file as r; p = r(); "
            "print(p is not None and open(p, 'rb').read(4) == b'\\x7fELF'); "
            "print(sorted(os.listdir(os.environ['TMPDIR'])))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "TMPDIR": str(tmp_path)}, timeout=60)
    assert p.returncode == 0, p.stderr[-500:]
    assert p.stdout.split("\n")[:2] == ["True", "[]"]
    assert list(tmp_path.iterdir()) == []
