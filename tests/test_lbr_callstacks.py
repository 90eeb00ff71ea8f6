"""LBR call stacks (``perf record --call-graph lbr``) of hand-made records.

This machine has no LBR (a VM without the PMU's branch records), so nothing here is recorded:
the recordings are written by tests/lbrrecords.py, into a shared object assembled from
tests/programs/cfihostile.S (its symbols by ``nm``).  The expected chains follow from each
sample's plan, by perf 6.1's rule (tools/perf/util/machine.c ``resolve_lbr_callchain_sample``):
the callchain up to its ``PERF_CONTEXT_USER``, then entry 0's ``to`` and every entry's
``from``.  perf 6.1's ``perf script`` is the oracle too, frame for frame; it differs on one
sample, the empty branch stack, where perf reads an entry 0 past the record's end.
"""

from __future__ import annotations

import contextlib
import io
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from lbrrecords import BASE, LbrSample, lbr_recording
from perfprograms import perf_script_samples
from test_resolver_perf import ours_by_key, resolved
from test_unwind_hostile import build

from perftui.cli import main as perftui_main
from perftui.perfdata.constants import CONTEXT_KERNEL, CONTEXT_USER, Misc
from perftui.symbols.options import SymbolOptions

K1, K2 = 0xFFFFFFFF81001000, 0xFFFFFFFF81002000  # kernel addresses no map names
GUEST = 2**64 - 2048  # PERF_CONTEXT_GUEST: a context perf 6.1 does not take in a chain


def plan(sym: dict[str, int]) -> list[tuple[LbrSample, list[tuple[str, int] | None]]]:
    """(sample, its expected frames: (symbol, offset), None for an unnamed kernel address)."""
    def a(name: str, off: int = 0) -> int:
        return BASE + sym[name] + off

    lbr = [(a("good_mid", 5), a("good_leaf")), (a("skip_loop", 1), a("good_mid")),
           (a("cfa_same", 1), a("skip_loop"))]
    own = [CONTEXT_USER, a("good_leaf", 2), a("plt_like", 1)]  # frame pointers' chain
    return [
        # user sample: entry 0's to, then each from; the frame pointers' frames dropped
        (LbrSample(a("good_leaf", 2), own, lbr),
         [("good_leaf", 0), ("good_mid", 5), ("skip_loop", 1), ("cfa_same", 1)]),
        # kernel sample: the kernel part, then the LBR's
        (LbrSample(K1, [CONTEXT_KERNEL, K1, K2, CONTEXT_USER, a("good_leaf", 2),
                        a("deref_far", 1)], lbr[:2], misc=Misc.KERNEL),
         [None, None, ("good_leaf", 0), ("good_mid", 5), ("skip_loop", 1)]),
        # no user part: the record's chain
        (LbrSample(K1, [CONTEXT_KERNEL, K1, K2], lbr, misc=Misc.KERNEL), [None, None]),
        # an unknown context among the branches: the record's own chain, as perf
        (LbrSample(a("good_leaf", 2), own, [(GUEST, a("good_leaf")), *lbr[1:]]),
         [("good_leaf", 2), ("plt_like", 1)]),
        # a known one switches the mode: K2 is then a kernel address
        (LbrSample(a("good_leaf", 2), own, [(a("good_mid", 5), a("good_leaf")),
                                             (CONTEXT_KERNEL, a("good_mid")), (K2, 0)]),
         [("good_leaf", 0), ("good_mid", 5), None]),
    ]


@pytest.fixture(scope="module")
def so(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    return build(tmp_path_factory.mktemp("lbr"), "cfihostile")


def recording(so: tuple[Path, dict[str, int]], tmp: Path, order: str = "<",
              extra: list[LbrSample] | None = None) -> tuple[Path, list[Any]]:
    path, sym = so
    cases = plan(sym)
    empty = LbrSample(BASE + sym["good_leaf"] + 2, [CONTEXT_USER, BASE + sym["good_leaf"]], [])
    samples = [s for s, _ in cases] + [empty] + (extra or [])
    want = [w for _, w in cases] + [[]] + [None] * len(extra or [])
    data = lbr_recording(tmp / f"lbr{order}.data", str(path), samples, order=order)
    return data, want


def frames_of(data: Path, stitch_lbr: bool = False
              ) -> tuple[list[list[tuple[Any, ...]]], list[str]]:
    r, s = resolved(data, SymbolOptions(stitch_lbr=stitch_lbr))
    by_time = sorted(ours_by_key(r, s).items())
    return [v[0][1] for _, v in by_time], list(r.notes)


def named(want: list[tuple[str, int] | None], so_path: Path) -> list[tuple[Any, ...]]:
    return [(None, None, "[unknown]") if w is None else (w[0], w[1], str(so_path))
            for w in want]


@pytest.mark.parametrize("order", ["<", ">"])
def test_chains_follow_the_plan(so: tuple[Path, dict[str, int]], tmp_path: Path,
                                order: str) -> None:
    data, want = recording(so, tmp_path, order)
    got, notes = frames_of(data)
    assert got == [named(w, so[0]) for w in want]
    assert any(n.startswith("LBR call stacks: 6 samples, 3 with their user frames from the "
                            "branch stack") and "1 with an empty branch stack" in n
               and "1 with a context value in the branch stack" in n for n in notes), notes


def test_a_cut_branch_stack_keeps_the_record_chain(so: tuple[Path, dict[str, int]],
                                                   tmp_path: Path) -> None:
    """A record ending inside its branch stack (perf 6.1 refuses to parse it): the sample
    keeps its own chain, and the note says so."""
    path, sym = so
    own = [CONTEXT_USER, BASE + sym["good_leaf"] + 2, BASE + sym["plt_like"] + 1]
    data = lbr_recording(tmp_path / "cut.data", str(path),
                         [LbrSample(BASE + sym["good_leaf"] + 2, own, None)])
    got, notes = frames_of(data)
    assert got == [named([("good_leaf", 2), ("plt_like", 1)], path)]
    assert any("1 with no readable branch stack (their own chain kept)" in n for n in notes)


def test_folded_on_both_engines(so: tuple[Path, dict[str, int]], tmp_path: Path,
                                engine: str) -> None:
    """The names pass (both engines) folds the joined chains: ``report --folded`` has each
    plan's frames, outermost first, and the CLI's stderr the note."""
    data, want = recording(so, tmp_path)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert perftui_main(["report", "--folded", "--no-cache", str(data)]) == 0
    got = Counter()
    for line in out.getvalue().splitlines():
        stack, n = line.rsplit(" ", 1)
        got[stack] += int(n)
    expect: Counter[str] = Counter()
    for w in want:
        expect[";".join(["lbrmade", *("[unknown]" if f is None else f[0]
                                      for f in reversed(w))])] += 1
    assert got == expect
    assert "LBR call stacks: 6 samples, 3 with their user frames" in err.getvalue()


@pytest.mark.perf
def test_frames_equal_perf_script(so: tuple[Path, dict[str, int]], tmp_path: Path) -> None:
    """perf 6.1's script frames equal perftui's on every sample but the empty branch stack,
    where perf's one frame is an address read past the record (the next record's ip: here
    good_leaf+2, the next sample's)."""
    data, want = recording(so, tmp_path)
    theirs = perf_script_samples(data, callchain=True)
    got, _ = frames_of(data)
    assert len(theirs) == len(got) == len(want)
    for k, (p, mine) in enumerate(zip(theirs, got, strict=True)):
        perf_frames = [(sym, off, dso) for _, sym, off, dso in p.frames]
        if want[k] == [] and k == len(plan(so[1])):
            assert mine == [] and len(perf_frames) == 1  # perf: one frame past the record
            continue
        assert mine == perf_frames, k
