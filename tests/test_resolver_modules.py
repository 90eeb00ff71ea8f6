"""Modules without KMOD_SEC_MAP: the demo recording with its section map stripped, as every
upstream perf writes recordings.  perf names module addresses from the ``.ko``'s ``.text``
at the module MMAP start; perftui must name them the same (``perf report --sort dso,sym``
with the same module files, given to perf through ``--symfs``)."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from perfprograms import require

from perftui.cli import main as perftui_main
from perftui.demo import MODULES_DIR, demo_path
from perftui.perfdata import Feature, open_recording

pytestmark = pytest.mark.perf


@pytest.fixture(scope="module")
def stripped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("nokmod")
    out = d / "demo-stripped.data"
    with contextlib.redirect_stdout(io.StringIO()):
        assert perftui_main(["inject", "--strip", str(demo_path()), "-o", str(out)]) == 0
    release = open_recording(out).feature(Feature.OSRELEASE)
    mods = d / "symfs" / "lib" / "modules" / release / "updates" / "perftui-demo"
    mods.mkdir(parents=True)
    for ko in MODULES_DIR.glob("*.ko"):
        shutil.copy(ko, mods / ko.name)
    return out, d / "symfs"


def test_module_text_names_equal_perf(stripped: tuple[Path, Path]) -> None:
    data, symfs = stripped
    perf = require("perf")
    p = subprocess.run([perf, "report", "-i", str(data), "--symfs", str(symfs), "--stdio",
                        "--no-children", "-g", "none", "--sort", "dso,sym", "-t", ";", "-n",
                        "--show-total-period"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-400:]
    want = {}
    for line in p.stdout.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        f = [x.strip() for x in line.split(";")]
        dso, sym = f[3], re.sub(r"^\[[k.]\] ", "", f[4])
        if dso.startswith("[demo"):
            want[(dso, sym)] = (int(f[1]), int(f[2]))
    assert len(want) > 10, "perf named the demo modules' functions"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert perftui_main(["report", str(data), "--json", "--no-children", "--sort",
                             "dso,sym", "--modules-dir", str(MODULES_DIR)]) == 0
    got = {(r["dso"], r["sym"]): (r["samples"], r["period"])
           for r in json.loads(buf.getvalue())["rows"] if r["dso"].startswith("[demo")}
    print(f"module rows: {len(want)} from perf, {len(got)} from perftui")
    assert got == want


def test_demo_kernel_names_equal_perf_with_its_kallsyms(stripped: tuple[Path, Path]) -> None:
    """The demo kernel's samples, named from the demo's kallsyms (``--demo`` reads it), as
    perf names them from the same file with ``--kallsyms``."""
    from perftui.demo import demo_kallsyms

    data, symfs = stripped
    perf = require("perf")
    ks = str(demo_kallsyms())
    p = subprocess.run([perf, "report", "-i", str(data), "--symfs", str(symfs), "--kallsyms",
                        ks, "--stdio", "--no-children", "-g", "none", "--sort", "dso,sym",
                        "-t", ";", "-n", "--show-total-period"], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-400:]
    want = {}
    for line in p.stdout.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        f = [x.strip() for x in line.split(";")]
        if f[3] == "[kernel.kallsyms]":
            want[re.sub(r"^\[k\] ", "", f[4])] = (int(f[1]), int(f[2]))
    assert "native_safe_halt" in want and len(want) >= 6, want
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert perftui_main(["report", str(data), "--json", "--no-children", "--sort",
                             "dso,sym", "--kallsyms", ks, "--modules-dir",
                             str(MODULES_DIR)]) == 0
    got = {r["sym"]: (r["samples"], r["period"]) for r in json.loads(buf.getvalue())["rows"]
           if r["dso"] == "[kernel.kallsyms]"}
    assert got == want
