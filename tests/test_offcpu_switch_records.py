"""Off-CPU time from ``--switch-events`` alone (issue 30): no sched_switch, so the SWITCH
records' switch-outs have no stack of their own, and each is charged to the stack of its
thread's last sample before it (as samply, the Firefox Profiler's importer, does).

Oracle: that rule worked out here from perf 6.1's own view of the recording (``perf script
--ns`` with the switch, task and mmap records shown): each switch-out's time until its
thread's next event (not a switch-out), summed on the thread's last cpu-clock sample at or
before it, with the state perf prints (``preempt``: R, else S/D) of the longest. Known
answer: tests/programs/offcpu.c built with -DWORK_INSIDE, its 20 ms of work inside each
sleeping function before the nap, so the stack lent to a sleep is the sleeping function's:
what goes under sleep_long and sleep_short lies within the program's own measure of its
sleeps (test_offcpu's rule)."""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from pathlib import Path

import pytest
from perfprograms import shared
from test_offcpu import FUNCS, script_events, within_the_measured_sleeps
from test_tracefmt import record_offcpu
from test_ui_pilot import browse
from test_ui_profile import idle, keys
from uihelpers import screen_text, sync

from perftui import cli
from perftui.analysis.offcpu import STATES, off_cpu, offcpu_attr, offcpu_borrowed
from perftui.perfdata import open_recording

pytestmark = pytest.mark.perf


def switch_events_alone(shared_dir: Path) -> Path:
    return shared(shared_dir, "offcpu se inside", lambda d, env: record_offcpu(
        d, env, "-e", "cpu-clock", "-g", "--switch-events", cflags=("-DWORK_INSIDE",)))


def sleeper(frames: list[str]) -> str:
    """The sleeping function on a stack (the work it did is under it), else the first of
    FUNCS on it, else ''."""
    return next((f for f in ("sleep_long", "sleep_short", *FUNCS) if f in frames), "")


def perf_lent(data: Path) -> tuple[dict[tuple[int, int], tuple[int, str, str]], int,
                                   dict[str, int]]:
    """(time, tid) of each sample lending its stack -> (the ns of the switch-outs after
    it, the state of the longest, :func:`sleeper` of its stack); how many switch-outs had
    no end or no sample before them; and the ns of the switch-outs not preempted (each
    one's own state), by the :func:`sleeper` of the stack lent to them."""
    events = script_events(data, "tid,time,event,ip,sym")
    ends: dict[int, list[int]] = defaultdict(list)
    samples: dict[int, list[tuple[int, list[str]]]] = defaultdict(list)
    for tid, t, text, stack in events:
        if t and "PERF_RECORD_SWITCH OUT" not in text:
            ends[tid].append(t)
        if text.startswith("cpu-clock:"):
            samples[tid].append((t, stack))
    for v in ends.values():
        v.sort()
    for s in samples.values():
        s.sort(key=lambda x: x[0])
    lent: dict[tuple[int, int], list] = {}  # -> [ns, longest ns, its state, func]
    asleep: dict[str, int] = defaultdict(int)
    missed = 0
    for tid, t, text, _ in events:
        if "PERF_RECORD_SWITCH OUT" not in text or tid <= 0:
            continue
        later = ends[tid]
        k = bisect.bisect_right(later, t)
        before = bisect.bisect_right([x[0] for x in samples[tid]], t) - 1
        if k == len(later) or before < 0:
            missed += 1
            continue
        ns = later[k] - t
        st, stack = samples[tid][before]
        state = "R" if "preempt" in text.split("OUT", 1)[1] else "S/D"
        v = lent.setdefault((st, tid), [0, -1, "", sleeper(stack)])
        v[0] += ns
        if state == "S/D":
            asleep[v[3]] += ns
        if ns > v[1]:
            v[1], v[2] = ns, state
    return {k: (v[0], v[2], v[3]) for k, v in lent.items()}, missed, asleep


def test_switch_outs_charged_to_the_samples_before_them(shared_dir: Path) -> None:
    data = switch_events_alone(shared_dir)
    rec = open_recording(str(data))
    rec.build_index()
    assert offcpu_borrowed(rec) and offcpu_attr(rec) == 0  # (cpu-clock's samples)
    oc = off_cpu(rec)
    want, missed, asleep = perf_lent(data)
    c = rec.columns
    keys_ = [(int(c["time"][r]), int(c["tid"][r])) for r in oc.rows.tolist()]
    got = dict(zip(keys_, zip(oc.ns.tolist(), [STATES[s] for s in oc.state.tolist()],
                              strict=True), strict=True))
    assert got == {k: (ns, state) for k, (ns, state, _f) in want.items()}
    assert missed == sum(int(n.split()[0]) for n in oc.notes
                         if "not charged" in n)
    assert any("SWITCH records carry no stack" in n for n in oc.notes)
    # the known answer: the work before each nap is in the sleeping function, so the
    # switch-outs asleep (S/D) under it are its naps; a preemption of that work (R, a
    # loaded machine's) goes under it too, and is not in what the program measured (nor
    # here: each switch-out by its own state, not the longest's of its sample)
    within_the_measured_sleeps(data, {f: (ns, 0) for f, ns in asleep.items()})


def test_report_and_folded_say_the_borrowed_stacks(
        shared_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--folded --event offcpu-time``: each stack's count is the ns perf's events give
    the samples with that stack (summed by stack), and stderr says where the stacks come
    from."""
    data = switch_events_alone(shared_dir)
    want, _missed, _asleep = perf_lent(data)
    assert cli.main(["report", str(data), "--event", "offcpu-time", "--folded",
                     "--no-cache"]) == 0
    out, err = capsys.readouterr()
    assert "SWITCH records carry no stack" in err
    folded: dict[str, int] = {}
    for line in out.splitlines():
        stack, n = line.rsplit(" ", 1)
        folded[stack] = int(n)
    by_func: dict[str, int] = defaultdict(int)
    for stack, n in folded.items():
        by_func[sleeper(stack.split(";"))] += n
    perf_by_func: dict[str, int] = defaultdict(int)
    for ns, _state, func in want.values():
        perf_by_func[func] += ns
    assert dict(by_func) == dict(perf_by_func)
    assert sum(folded.values()) == sum(ns for ns, _s, _f in want.values())


@pytest.mark.slow
@sync
async def test_browser_says_the_stacks_are_borrowed(shared_dir: Path) -> None:
    """The profile's title says ``offcpu-time (stacks borrowed)`` and the info screen why."""
    data = switch_events_alone(shared_dir)
    async with browse(data) as (app, pilot):
        await keys(pilot, "p")
        await idle(pilot)
        await keys(pilot, "2")
        await idle(pilot)
        title = str(app.query_one("#profile-title").render())
        assert "offcpu-time (stacks borrowed) (2/2)" in title, title
        await keys(pilot, "i")
        await idle(pilot)
        text = re.sub(r"\s+", " ", screen_text(app))
        assert "SWITCH records carry no stack" in text, text
