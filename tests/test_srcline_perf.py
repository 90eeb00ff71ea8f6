"""The ``srcline`` and ``srcfile`` sort keys against perf 6.1's ``report --sort``, on fresh
recordings of dwchain (tests/dwarfprograms.py: ``-O2 -fomit-frame-pointer -g``) without
callchains, with frame-pointer callchains (``-g``: most of its frames have none) and with
``--call-graph dwarf`` (inline chains), and of dwcxx (C++ templates, inlined).

Row for row (tests/test_report_perf.py's ``compare``: samples, period and overheads),
the text of the table byte for byte, and the ``--children`` rows of a DWARF recording.
There perf 6.1 keys a callchain entry's row by the srcline of its *raw* ip passed as a
map-relative one (``fill_callchain_info``), giving e.g. ``dwlib_tiny@plt+94029954670592``;
perftui looks every frame up at its map-relative address (symbols/naming/srclines.py).
Those rows of perf's, and the row of ours their frames join, are left out of the
children comparison, which checks that they are few.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from dwarfprograms import DwarfBuilt
from perfprograms import require
from test_report_perf import compare, ours, perf_rows

from perftui.cli import main as perftui_main

PROGRAMS = Path(__file__).parent / "programs"


def line_of(source: Path, text: str) -> int:
    """The (1-based) number of the one line of ``source`` holding ``text``."""
    (n,) = [i for i, ln in enumerate(source.read_text().splitlines(), 1) if text in ln]
    return n

pytestmark = pytest.mark.perf

RAW_IP = re.compile(r"^(.*)\+(\d{10,})$")  # perf's srcline of a raw ip: sym+<huge>


@pytest.fixture(scope="module")
def flat(dwarf_built: DwarfBuilt, recorded) -> Path:
    return recorded("dwchain_flat", dwarf_built.dwchain, "20", callgraph=False)


@pytest.fixture(scope="module")
def fp(dwarf_built: DwarfBuilt, recorded) -> Path:
    return recorded("dwchain_fp", dwarf_built.dwchain, "20", callgraph=True)


@pytest.fixture(scope="module")
def dwchain(dwarf_built: DwarfBuilt, recorded) -> Path:
    return recorded("dwchain", dwarf_built.dwchain, "20", callgraph="dwarf")


@pytest.fixture(scope="module")
def dwcxx(dwarf_built: DwarfBuilt, recorded) -> Path:
    return recorded("dwcxx", dwarf_built.dwcxx, "150", callgraph="dwarf")


@pytest.mark.parametrize("keys", ["srcline", "srcfile", "sym,srcline", "srcline,sym",
                                  "dso,srcfile"])
def test_rows_equal_perf(flat: Path, fp: Path, dwchain: Path, dwcxx: Path, keys: str
                         ) -> None:
    """Self rows (``--no-children``; the flat recording's are its only ones)."""
    for data in (flat, fp, dwchain, dwcxx):
        compare(data, keys, children=False)


def _lines(cmd: list[str], cwd: Path) -> list[str]:
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=cwd)
    assert p.returncode == 0, p.stderr[-500:]
    return [ln for ln in p.stdout.splitlines() if ln != "#"]


@pytest.mark.parametrize("keys", ["srcline", "srcfile", "comm,srcline"])
def test_text_equals_perf(flat: Path, dwchain: Path, keys: str) -> None:
    """``perftui report --sort KEYS`` prints perf report --stdio's table (its lines but
    perf's hint and tip), the empty srcfile's separator and the padding included."""
    for data in (flat, dwchain):
        args = ["--no-children", "-g", "none", "--sort", keys]
        theirs = _lines([require("perf"), "report", "-i", str(data), "--stdio", *args],
                        data.parent)
        theirs = [ln for ln in theirs if not ln.startswith(("# To display", "# (Tip:"))]
        import contextlib
        import io

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert perftui_main(["report", str(data), *args]) == 0
        mine = [ln for ln in buf.getvalue().splitlines() if ln != "#"]
        assert mine == theirs
        assert sum(".c" in ln for ln in mine) >= 3  # (source files there to compare)


def test_children_rows_of_a_dwarf_recording(dwchain: Path) -> None:
    """``--children --sort srcline``: the unwound frames' rows (each inline chain's frame
    by its own record's line) equal perf's, but those of perf's raw-ip rows."""
    (want,) = perf_rows(dwchain, "srcline", True)["cpu-clock"]
    mine = {r["srcline"]: r for r in ours(dwchain, "srcline", True)["rows"]}
    raw = {m.group(1) for k in want if (m := RAW_IP.match(k[0]))}
    left = {f"{s}+{n}" for s in raw for n in range(4096)}  # ours for those frames
    compared = raw_rows = 0
    for (key,), rows in want.items():
        ((ov, ch, n, per),) = rows
        if RAW_IP.match(key):
            raw_rows += 1
            continue
        if key in left:
            continue
        r = mine[key]
        assert (r["samples"], r["period"]) == (n, per), key
        assert abs(r["overhead"] - ov) <= 0.01 and abs(r["children"] - ch) <= 0.01, key
        compared += 1
    assert set(mine) - left <= {k for (k,) in want}
    print(f"{compared} rows equal, {raw_rows} raw-ip rows of perf's left out")
    assert compared >= 40 and raw_rows <= 0.05 * len(want)
    # the inline chains' frames are there: mix inlined into leaf, the line of its call (found
    # in the source: the line moved when LEAF_LOOPS came, deec699)
    call = f"dwchain.c:{line_of(PROGRAMS / 'dwchain.c', 's += mix(x + i);')}"
    assert mine[call]["children"] > mine[call]["overhead"] > 0
