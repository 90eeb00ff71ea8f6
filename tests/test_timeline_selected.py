"""The timeline's row of a selection (a profile row, a call tree line, a section): the
selected samples counted into the very columns of the timeline's bins.

The oracle for the counts is perf: ``perf script -F pid,time --ns`` gives each sample's
process and time; the test bins the times of one process's samples itself, by the edges the
timeline's columns say they have, and perftui counts the index rows of that process.
"""

from __future__ import annotations

import bisect
import subprocess

import numpy as np
import pytest

from conftest import DATA, PERF
from perftui.analysis.timeline import (
    FINE,
    full_window,
    rows_counts,
    timeline_bins,
)
from perftui.perfdata import RecordType, open_recording

FILE = DATA / "perf61" / "perf-normal-g.data"


def perf_sample_times() -> dict[int, list[int]]:
    """Per pid, the times (ns) of its samples, as perf prints them."""
    assert PERF is not None
    out = subprocess.run([PERF, "script", "-F", "pid,time", "--ns", "-i", str(FILE)],
                         capture_output=True, text=True, check=True).stdout
    times: dict[int, list[int]] = {}
    for line in out.splitlines():
        pid, t = line.split()
        sec, ns = t.rstrip(":").split(".")
        times.setdefault(int(pid), []).append(int(sec) * 10**9 + int(ns))
    return times


def expected(times: list[int], edges: list[int]) -> list[int]:
    """How many of ``times`` fall in each column [edges[c], edges[c + 1])."""
    out = [0] * (len(edges) - 1)
    for t in times:
        c = bisect.bisect_right(edges, t) - 1
        if 0 <= c < len(out):
            out[c] += 1
    return out


@pytest.mark.perf
@pytest.mark.parametrize("width", [7, 60, 203, FINE + 123])
@pytest.mark.parametrize("zoom", [False, True])
def test_a_process_samples_fall_in_the_columns_perf_times_give(width: int,
                                                                zoom: bool) -> None:
    by_pid = perf_sample_times()
    assert sorted(len(v) for v in by_pid.values()) == [53, 214]  # (what the file holds)
    rec = open_recording(FILE)
    try:
        rec.build_index()
        t0, t1 = full_window(rec)
        if zoom:  # a window inside the recording (as the timeline's + gives)
            t0, t1 = t0 + (t1 - t0) // 3, t1 - (t1 - t0) // 4
        bins = timeline_bins(rec, t0, t1, width)
        if bins.edges is not None:
            edges = list(bins.edges)
        else:  # (wider than the fine bins: even columns)
            edges = [bins.col_time(c) for c in range(bins.width)] + [bins.t1]
        c = rec.columns
        inside = 0
        for pid, times in by_pid.items():
            rows = np.flatnonzero((c["type"] == RecordType.SAMPLE) & (c["pid"] == pid))
            got = rows_counts(rec, [rows[:5], rows[5:]], bins)
            want = expected(times, edges)
            assert got.tolist() == want
            assert zoom or sum(want) == len(times)  # the whole window holds every sample
            inside += sum(want)
        if zoom:  # (the zoomed window leaves some out: the columns' ends are tested)
            assert 0 < inside < sum(len(v) for v in by_pid.values())
    finally:
        rec.close()
