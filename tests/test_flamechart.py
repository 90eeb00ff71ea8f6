"""The flame chart's columns (analysis/flamechart.py): stacks in time order.

Oracle: a program whose phases are planned (tests/programs/phases.c: phase_a, then
phase_b through phase_b_inner, then phase_c, 600 ms each on the CPU), recorded with
``perf record -e cpu-clock -F 4000 -g``; perf 6.1's ``perf script`` samples binned by time
here (plain Python: each column the stack most of its samples have, ties the first) equal
the chart's columns computed from perftui's own decoding of the samples, and the columns
follow the plan (the first third in phase_a, ...).  A hand-made case pins the rule.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from perfprograms import perf_script_samples, recorded_c

from perftui.analysis.flamechart import chart_columns
from perftui.perfdata import open_recording
from perftui.present.report import frame_name
from perftui.present.session import named_samples
from perftui.symbols.naming.resolver import SymbolOptions

WIDTH = 60


def phases_data(shared_dir: Path) -> Path:
    """phases.c built here and recorded ``perf record -e cpu-clock -F 4000 -g``."""
    return recorded_c(shared_dir, "phases", "600")


def binned(samples: list[tuple[int, str]], lo: int, hi: int, width: int) -> list[str | None]:
    """Each column's stack: the one most of its samples have, ties the first sampled."""
    cols: list[Counter[str]] = [Counter() for _ in range(width)]
    first: list[dict[str, int]] = [{} for _ in range(width)]
    for i, (t, stack) in enumerate(sorted(samples, key=lambda x: x[0])):
        if lo <= t < hi:
            c = (t - lo) * width // (hi - lo)
            cols[c][stack] += 1
            first[c].setdefault(stack, i)
    return [min(c, key=lambda s: (-c[s], first[k][s])) if c else None
            for k, c in enumerate(cols)]


@pytest.mark.perf
@pytest.mark.slow
def test_columns_equal_perf_script_binned_by_time(shared_dir: Path) -> None:
    data = phases_data(shared_dir)
    script = perf_script_samples(data, callchain=True)
    main_tid = Counter(s.tid for s in script).most_common(1)[0][0]

    def name(sym: str | None, dso: str) -> str:
        return sym if sym is not None else f"[{dso.rsplit('/', 1)[-1]}]"

    theirs = [(s.time_ns, ";".join(name(f[1], f[3]) for f in reversed(s.frames)))
              for s in script if s.tid == main_tid]
    lo, hi = min(t for t, _ in theirs), max(t for t, _ in theirs) + 1

    rec = open_recording(data)
    rec.build_index()
    sl = named_samples(rec, SymbolOptions(), True)
    assert sl.stack is not None
    tid = rec.columns["tid"][sl.rows]
    mine = np.nonzero(tid == main_tid)[0]
    times = rec.columns["time"][sl.rows][mine].astype(np.int64)
    cols = chart_columns(times, sl.stack[mine], lo, hi, WIDTH)

    def stack_text(s: int) -> str:
        a, b = int(sl.stack_starts[s]), int(sl.stack_starts[s + 1])
        locs = sl.stack_locs[a + 1:b] if b - a > 1 else sl.stack_locs[a:b]
        return ";".join(frame_name(sl.locs, int(x)) for x in locs[::-1])

    ours = [stack_text(int(s)) if s >= 0 else None for s in cols.stack]
    assert ours == binned(theirs, lo, hi, WIDTH)
    assert cols.samples.sum() == len(theirs)
    # the plan: each third of the chart in its phase (a column or two at each seam aside;
    # a column without samples is a time the thread was not on a CPU of a busy machine)
    third = WIDTH // 3
    for k, want in enumerate(("phase_a", "phase_b_inner", "phase_c")):
        inner = [o for o in ours[k * third + 2:(k + 1) * third - 2] if o is not None]
        assert len(inner) >= third // 2, (want, inner)
        assert all(want in o.split(";") for o in inner), (want, inner)


def test_the_rule_on_hand_made_samples() -> None:
    """Four columns over [0, 400): the most samples win, a tie goes to the first sampled,
    an empty column is -1, samples outside the range are left out."""
    time = np.array([10, 20, 30, 120, 130, 150, 260, 390, 400, -5])
    stack = np.array([1, 2, 2, 5, 4, 4, 7, 3, 9, 9])
    cols = chart_columns(time, stack, 0, 400, 4)
    assert cols.stack.tolist() == [2, 4, 7, 3]
    assert cols.samples.tolist() == [3, 3, 1, 1]
    tie = chart_columns(np.array([5, 1, 3]), np.array([8, 6, 8]), 0, 10, 1)
    assert tie.stack.tolist() == [8]  # 8 twice
    tie = chart_columns(np.array([5, 1]), np.array([8, 6]), 0, 10, 1)
    assert tie.stack.tolist() == [6]  # one each: 6 was sampled first (t=1)
    empty = chart_columns(np.array([50]), np.array([1]), 0, 100, 4)
    assert empty.stack.tolist() == [-1, -1, 1, -1]


def test_a_timed_column_shows_its_heaviest_stack() -> None:
    """One column holding three preemptions of stack 1 (1 ms each) and one 300 ms sleep of
    stack 2: by samples the preemptions' stack, by weight (offcpu-time's ns) the sleep's; a
    tie of weight goes to the more samples, then the first."""
    time = np.array([10, 20, 30, 40])
    stack = np.array([1, 1, 1, 2])
    ns = np.array([1_000_000, 1_000_000, 1_000_000, 300_000_000])
    assert chart_columns(time, stack, 0, 100, 1).stack.tolist() == [1]
    assert chart_columns(time, stack, 0, 100, 1, ns).stack.tolist() == [2]
    even = np.array([5, 5, 5, 15])
    assert chart_columns(time, stack, 0, 100, 1, even).stack.tolist() == [1]
    assert chart_columns(time, stack, 0, 100, 1, ns).samples.tolist() == [4]


def test_a_timed_sample_covers_its_interval() -> None:
    """With durations (a switch-out's ns off the CPU) a sample stands for ``[t, t + ns)``
    and weighs in each column the time it overlaps it. Ten columns of 10 ns over
    ``[0, 100)``, worked by hand: stack 4 from -20 for 30 ns covers column 0 whole (10 ns)
    where stack 1 from 5 for 30 ns has 5 ns, so column 0 is 4's; stack 1 holds columns 1
    and 2 alone, and column 3 by 5 ns against stack 2's 2 ns (33-35); stack 3 from 90 for
    50 ns is cut at the span's end; columns 4-8 are off every interval."""
    time = np.array([5, 33, 90, -20])
    stack = np.array([1, 2, 3, 4])
    ns = np.array([30, 2, 50, 30])
    got = chart_columns(time, stack, 0, 100, 10, duration=ns)
    assert got.stack.tolist() == [4, 1, 1, 1, -1, -1, -1, -1, -1, 3]
    assert got.samples.tolist() == [2, 1, 1, 2, 0, 0, 0, 0, 0, 1]
    # without durations each is a point: -20 is outside, 33 is column 3's only sample
    assert chart_columns(time, stack, 0, 100, 10, ns).stack.tolist() == \
        [1, -1, -1, 2, -1, -1, -1, -1, -1, 3]
