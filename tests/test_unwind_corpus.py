"""DWARF unwinding on the corpus's DWARF recordings and on a layout the programs of
tests/dwarfprograms.py do not have, frame for frame against perf 6.1's ``perf script``.

- ``perfparser/fork_static_gcc__perf.data.zstd`` (perf 4.18, ``--call-graph dwarf``, a
  static binary the corpus does not hold): each sample's frames are its ip alone, and
  clone's child's unwinding ends at a return address of -1, which perf shows as a frame in
  no map.  perftui read that -1 as an unknown context marker and dropped the whole chain
  (61 of 106 samples had no frame: 42% of perf's frames).  The corpus holds no other
  recording with user stacks that perf 6.1 reads (perfparser's ``cpp-inlining`` is perf
  6.6's: perf 6.1 cannot read it).
- ``dwminus1`` (tests/programs): a stack whose outermost return address is -1, fresh:
  perftui's names pass read the -1 as a context marker too (before: 2.6% of perf's frames);
  checked on both engines, through the report's rows and its folded stacks.
- A program linked as lld links (``r--`` then ``r-x`` in the same file page, so the ``r-x``
  map's pgoff lies in both PT_LOADs; made here with GNU ld's own default script, the text
  segment's start changed as lld sets it): perftui took the first PT_LOAD and looked every
  address up 0x1000 too low (26% of perf's frames equal before).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from dwarfprograms import DWARF_CFLAGS
from perfprograms import PROGRAMS, perf_script_samples, require
from test_report_perf import compare, fold_perf_script
from test_unwind_perf import NO_INLINE, assert_frames

from perftui.cli import main as perftui_main

pytestmark = pytest.mark.perf

FORK = "perfparser/fork_static_gcc__perf.data.zstd"


def test_fork_static_gcc(corpus, tmp_path: Path) -> None:
    data = tmp_path / "fork.data"  # (perf wants its input owned by the user: a copy)
    data.write_bytes(corpus(FORK).read_bytes())
    theirs = perf_script_samples(data, callchain=True, extra=NO_INLINE)
    assert len(theirs) == 106 and all(p.frames for p in theirs)
    assert_frames(data, theirs, least=100)


def _lld_like_script(gcc: str, out: Path) -> Path:
    """GNU ld's default script with the text segment starting as lld starts it: on the next
    page, at the same offset into the page as the file offset it follows."""
    # (an empty program: the link fails, after ld has printed its script)
    p = subprocess.run([gcc, "-no-pie", "-Wl,--verbose", "-x", "c", "/dev/null", "-o",
                        str(out.parent / "null")], capture_output=True, text=True)
    text = p.stdout.split("=" * 50)[1].split("\n", 1)[1]
    before = "  . = ALIGN(CONSTANT (MAXPAGESIZE));\n  .init"
    assert before in text
    text = text.replace(before, "  . = ALIGN(CONSTANT (MAXPAGESIZE)) + (. & (CONSTANT "
                        "(MAXPAGESIZE) - 1));\n  .init", 1)
    out.write_text(text)
    return out


def test_code_segment_sharing_a_page(dwarf_built, recorded, tmp_path_factory) -> None:
    gcc = require("gcc")
    d = tmp_path_factory.mktemp("lldlayout")
    script = _lld_like_script(gcc, d / "lld.ld")
    prog = d / "dwlay"
    lib = dwarf_built.dir
    subprocess.run([gcc, *DWARF_CFLAGS, "-no-pie", "-T", str(script), "-o", str(prog),
                    str(PROGRAMS / "dwchain.c"), "-L", str(lib), "-ldwlib",
                    f"-Wl,-rpath,{lib}", "-lpthread"], check=True, capture_output=True)
    loads = [ln.split() for ln in subprocess.run(
        [require("readelf"), "-lW", str(prog)], capture_output=True, text=True,
        check=True).stdout.splitlines() if ln.strip().startswith("LOAD")]
    r, rx = loads[0], loads[1]
    assert rx[6] == "R" and rx[7] == "E"  # (the layout made: r-x starts in r--'s page)
    assert int(rx[1], 16) // 4096 == (int(r[1], 16) + int(r[4], 16)) // 4096
    data = recorded("dwlay", prog, "10", callgraph="dwarf")
    assert_frames(data)


@pytest.fixture(scope="module")
def minus1(recorded, tmp_path_factory) -> Path:
    prog = tmp_path_factory.mktemp("minus1") / "dwminus1"
    subprocess.run([require("gcc"), *DWARF_CFLAGS, "-o", str(prog),
                    str(PROGRAMS / "dwminus1.c")], check=True, capture_output=True)
    return recorded("dwminus1", prog, "150000000", callgraph="dwarf")


def test_a_return_address_of_minus_one(minus1: Path) -> None:
    theirs = perf_script_samples(minus1, callchain=True, extra=NO_INLINE)
    ends = [p for p in theirs if p.frames and p.frames[-1][0] >= 2**64 - 2]  # (-1, less 1)
    assert len(ends) > 0.9 * len(theirs)  # spin, then the -1 in no map
    assert_frames(minus1, theirs, least=500)


@pytest.mark.usefixtures("engine")
def test_minus_one_in_the_names(minus1: Path) -> None:
    import contextlib
    import io
    from collections import Counter

    # (tree_broken: perf files the loader's "_dl_start_final (inlined)" as two rows at
    # times, each of ours their sum: see test_unwind_perf)
    compare(minus1, "sym", children=True, tree_broken=True)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert perftui_main(["report", str(minus1), "--folded"]) == 0
    got: Counter[str] = Counter()
    for line in buf.getvalue().splitlines():
        stack, n = line.rsplit(" ", 1)
        got[stack] += int(n)
    assert got == fold_perf_script(minus1)
