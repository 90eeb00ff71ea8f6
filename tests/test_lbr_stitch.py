"""``--stitch-lbr`` on hand-made LBR call stacks (tests/lbrrecords.py; this machine has no LBR).

A thread's stack grows deeper than its 4-entry LBR (``max_branches`` 4 in the header):
``plt_like`` (main) calls ``deref_far`` (a), then ``cfa_other`` (b), ``cfa_same`` (c),
``skip_loop`` (d), ``good_mid`` (e) and ``good_leaf`` (f), each call from its caller's
offset 1 (e also calls f from offset 3).  The registers are a ring; ``hw_idx`` is where each
sample's newest entry sits.  The plan below is worked by hand from perf 6.1's rule
(tools/perf/util/machine.c ``has_stitched_lbr``, :mod:`perftui.symbols.unwind.lbrstitch`);
perf 6.1's ``perf script --stitch-lbr`` is held to it, and perftui to both.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
from pathlib import Path
from typing import Any

import pytest
from lbrrecords import BASE, PID, LbrSample, lbr_recording
from perfprograms import perf_script_samples, require
from test_lbr_callstacks import frames_of
from test_unwind_hostile import build

from perftui.cli import main as perftui_main
from perftui.perfdata.constants import CONTEXT_USER

MAIN, A, B, C, D, E, F = ("plt_like", "deref_far", "cfa_other", "cfa_same", "skip_loop",
                          "good_mid", "good_leaf")
OTHER = PID + 1  # a second thread of the process


def plan(sym: dict[str, int]) -> list[tuple[LbrSample, list[tuple[str, int]],
                                            list[tuple[str, int]]]]:
    """(sample, its frames without stitching, its frames with), in time order."""
    def a(name: str, off: int = 0) -> int:
        return BASE + sym[name] + off

    def call(caller: str, callee: str, off: int = 1) -> tuple[int, int]:
        return (a(caller, off), a(callee))

    def sample(leaf: str, entries: list[tuple[int, int]], hw: int,
               tid: int = PID) -> LbrSample:
        return LbrSample(a(leaf, 2), [CONTEXT_USER, a(leaf, 2)], entries, hw_idx=hw,
                         tid=tid)

    s1 = sample(D, [call(C, D), call(B, C), call(A, B), call(MAIN, A)], 3)
    # another thread between: its own LBR, which must not break the first thread's
    t2 = sample(A, [call(MAIN, A, 5)], 2, OTHER)
    # two calls deeper: the ring overwrote main->a and a->b; the oldest entry (b->c at ring
    # position 2) is s1's entry 1: stitched, s1's entries 2 and 3 (a's and main's call
    # sites) follow
    s2 = sample(F, [call(E, F), call(D, E), call(C, D), call(B, C)], 1)
    # f returned, e called it again from another site: three entries alike, nothing new
    # to keep, the list kept (a's and main's sites)
    s3 = sample(F, [call(E, F, 3), call(D, E), call(C, D), call(B, C)], 1)
    # back in a: no entry alike, the list emptied
    s4 = sample(A, [call(MAIN, A)], 0)
    # deep again: s4's stack is too short to stitch to
    s5 = sample(F, [call(E, F), call(D, E), call(C, D), call(B, C)], 1)
    lbr = [(D, 0), (C, 1), (B, 1), (A, 1), (MAIN, 1)]
    deep = [(F, 0), (E, 1), (D, 1), (C, 1), (B, 1)]
    deep3 = [(F, 0), (E, 3), (D, 1), (C, 1), (B, 1)]
    lost = [(A, 1), (MAIN, 1)]
    return [(s1, lbr, lbr), (t2, [(A, 0), (MAIN, 5)], [(A, 0), (MAIN, 5)]),
            (s2, deep, deep + lost), (s3, deep3, deep3 + lost),
            (s4, [(A, 0), (MAIN, 1)], [(A, 0), (MAIN, 1)]), (s5, deep, deep)]


@pytest.fixture(scope="module")
def so(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    return build(tmp_path_factory.mktemp("stitch"), "cfihostile")


def _recording(so: tuple[Path, dict[str, int]], tmp: Path, order: str = "<",
               depth: int | None = 4) -> tuple[Path, list[Any]]:
    path, sym = so
    cases = plan(sym)
    data = lbr_recording(tmp / f"stitch{order}{depth}.data", str(path),
                         [s for s, _, _ in cases], order=order, max_branches=depth)
    return data, cases


def _named(frames: list[tuple[str, int]], so_path: Path) -> list[tuple[Any, ...]]:
    return [(name, off, str(so_path)) for name, off in frames]


def _by_thread(cases: list[Any]) -> list[Any]:
    """The cases in the order :func:`frames_of` gives samples: by thread, then time."""
    return [c for _, c in sorted(enumerate(cases), key=lambda kc: (kc[1][0].tid, kc[0]))]


@pytest.mark.parametrize("order", ["<", ">"])
def test_stitched_chains_follow_the_plan(so: tuple[Path, dict[str, int]], tmp_path: Path,
                                         order: str) -> None:
    data, cases = _recording(so, tmp_path, order)
    cases = _by_thread(cases)
    plain, notes = frames_of(data)
    assert plain == [_named(w, so[0]) for _, w, _ in cases]
    assert any("--stitch-lbr continues them" in n for n in notes), notes
    stitched, notes = frames_of(data, stitch_lbr=True)
    assert stitched == [_named(w, so[0]) for _, _, w in cases]
    assert any("--stitch-lbr: 2 samples continued by their thread's earlier ones "
               "(LBR depth 4)" in n for n in notes), notes


def test_no_depth_in_the_header_stitches_nothing(so: tuple[Path, dict[str, int]],
                                                 tmp_path: Path) -> None:
    data, cases = _recording(so, tmp_path, depth=None)
    cases = _by_thread(cases)
    got, notes = frames_of(data, stitch_lbr=True)
    assert got == [_named(w, so[0]) for _, w, _ in cases]
    assert any("--stitch-lbr: nothing stitched, as perf: the header gives no LBR depth"
               in n for n in notes), notes


def test_report_folded_takes_the_option(so: tuple[Path, dict[str, int]],
                                        tmp_path: Path) -> None:
    data, cases = _recording(so, tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert perftui_main(["report", "--folded", "--no-cache", "--stitch-lbr",
                             str(data)]) == 0
    stacks = {ln.rsplit(" ", 1)[0].split(";", 1)[1] for ln in out.getvalue().splitlines()}
    assert ";".join(n for n, _ in reversed(cases[2][2])) in stacks


@pytest.mark.perf
@pytest.mark.parametrize("depth", [4, None])
def test_perf_script_stitches_as_planned(so: tuple[Path, dict[str, int]], tmp_path: Path,
                                         depth: int | None) -> None:
    data, cases = _recording(so, tmp_path, depth=depth)
    theirs = perf_script_samples(data, callchain=True, extra=("--stitch-lbr",))
    assert len(theirs) == len(cases)
    want = [w if depth else p for _, p, w in cases]
    for k, p in enumerate(theirs):  # (perf script's order: time)
        assert [(sym, off, dso) for _, sym, off, dso in p.frames] == _named(want[k], so[0]), k
    got, _ = frames_of(data, stitch_lbr=True)
    assert got == [_named(w if depth else p, so[0]) for _, p, w in _by_thread(cases)]


@pytest.mark.perf
@pytest.mark.parametrize("opts", [[], ["--no-children"], ["-g", "folded,0,caller"]])
def test_report_equals_perf_with_stitch_lbr(so: tuple[Path, dict[str, int]], tmp_path: Path,
                                            opts: list[str]) -> None:
    """The text report's rows and call graphs, every line below the header as perf's."""
    data, _cases = _recording(so, tmp_path)
    p = subprocess.run([require("perf"), "report", "-i", str(data), "--stdio",
                        "--stitch-lbr", *opts], capture_output=True, text=True, timeout=120,
                       cwd=data.parent)
    assert p.returncode == 0, p.stderr[-400:]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert perftui_main(["report", "--no-cache", "--stitch-lbr", *opts, str(data)]) == 0

    def body(text: str) -> list[str]:
        return [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]

    theirs = body(p.stdout)
    assert any("deref_far" in ln for ln in theirs if "good_leaf" not in ln)
    assert body(out.getvalue()) == theirs


def test_hostile_ring_values_end_in_bounded_chains() -> None:
    """hw_idx and the header's depth come from the file: any u64 ends each sample's
    stitching in a list no longer than the call sites the thread's samples had."""
    import random

    import numpy as np

    from perftui.symbols.unwind.lbrstitch import stitch

    r = random.Random(3)
    dt = np.dtype([("from", "<u8"), ("to", "<u8"), ("flags", "<u8")])
    for depth in (1, 4, 32, 2**40):
        n = 200
        entries = [np.array([(r.choice([1, 2, 3, 2**64 - 1]), r.choice([1, 2]), 0)
                             for _ in range(r.randint(0, 6))], dtype=dt) for _ in range(n)]
        hw = np.array([r.choice([0, 1, 3, 2**63, 2**64 - 1]) for _ in range(n)], np.uint64)
        tids = np.array([r.choice([1, 2]) for _ in range(n)], np.int64)
        upto = np.array([len(e) for e in entries], np.int64)
        tails = stitch(entries, hw, tids, np.arange(n), upto, depth)
        assert len(tails) == n
        assert all(len(t) <= 6 * n for t in tails)
