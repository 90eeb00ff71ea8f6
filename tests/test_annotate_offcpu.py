"""``perftui annotate --event offcpu-time`` (issue 30): a function's instructions weighed by
the time off the CPU of the switch-outs whose stacks pass through it, at the instruction
each stack resumes at (its innermost callchain entry in the function).

Oracle: perf 6.1's own view of the known-answer recording (tests/programs/offcpu.c under
``-e sched:sched_switch -g --switch-events``): each switch-out's nanoseconds worked out from
``perf script`` by test_offcpu's ``perf_offcpu`` (hotspot's rule, from perf's events), and
its stack's ``sym+offset`` entries from ``perf script -F tid,time,ip,sym,symoff``; the
expected time of each instruction is the sum over the stacks whose innermost entry in the
function is at that offset.  perf annotate itself counts a sample at its ip alone (for
sched_switch: in ``__schedule``), so it cannot be the oracle here."""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from inproc import run_cli
from perfprograms import require
from test_diff_offcpu import recording
from test_offcpu import perf_offcpu

pytestmark = pytest.mark.perf

HEAD = re.compile(r"^\s*(\d+)\s+(\d+)\.(\d+):")
ENTRY = re.compile(r"^\s*[0-9a-f]+ (\S+)\+0x([0-9a-f]+)")


def perf_stacks(data: Path) -> dict[tuple[int, int], list[tuple[str, int]]]:
    """(time, tid) of each sched_switch sample -> its callchain as (symbol, offset),
    innermost first (perf script's own)."""
    out = subprocess.run([require("perf"), "script", "-i", str(data), "--ns", "-F",
                          "tid,time,ip,sym,symoff"], capture_output=True, text=True,
                         check=True).stdout
    stacks: dict[tuple[int, int], list[tuple[str, int]]] = {}
    cur: list[tuple[str, int]] = []
    for line in out.splitlines():
        m = HEAD.match(line)
        if m:
            cur = stacks.setdefault((int(m[2]) * 10**9 + int(m[3]), int(m[1])), [])
            continue
        e = ENTRY.match(line)
        if e:
            cur.append((e[1], int(e[2], 16)))
    return stacks


def expected(data: Path, func: str) -> Counter[int]:
    """Offset into ``func`` -> the ns of the switch-outs whose innermost entry in it is
    there."""
    times, _prog = perf_offcpu(data)
    stacks = perf_stacks(data)
    out: Counter[int] = Counter()
    for key, (ns, _state, _f) in times.items():
        if ns is None:
            continue
        at = next((off for sym, off in stacks[key] if sym == func), None)
        if at is not None:
            out[at] += ns
    return out


@pytest.mark.parametrize("func", ["main", "sleep_long"])
def test_annotate_offcpu_time_where_the_stacks_pass(shared_dir: Path, func: str) -> None:
    data = recording(shared_dir, "old")
    want = expected(data, func)
    assert want, func
    p = run_cli("annotate", "-i", str(data), "--event", "offcpu-time", "--json", func)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["event"] == "offcpu-time" and doc["period_unit"] == "ns"
    got = {r["offset"]: r["period"] for r in doc["instructions"] if r["period"]}
    assert got == dict(want)
    total = sum(want.values())
    for r in doc["instructions"]:
        assert r["percent"] == pytest.approx(100 * r["period"] / total, abs=1e-4)
    if func == "sleep_long":  # the known answer: ~1.5 s, all at the one syscall's return
        assert len(got) == 1 and abs(total - 1.5e9) < 0.15e9, got
    # the text: the total as a time, perf annotate's shape below it
    t = run_cli("annotate", "-i", str(data), "--event", "offcpu-time", "--stdio", func)
    assert t.returncode == 0, t.stderr
    first, title = t.stdout.splitlines()[:2]
    m = re.match(r"# Total time: (\d+\.\d+) s$", first)
    assert m and float(m[1]) == pytest.approx(total / 1e9, abs=5e-4), first
    assert "for offcpu-time" in title, title


def test_annotate_offcpu_time_of_a_function_on_no_stack(shared_dir: Path) -> None:
    data = recording(shared_dir, "old")
    p = run_cli("annotate", "-i", str(data), "--event", "offcpu-time", "no_such_function")
    assert p.returncode == 2 and "no function 'no_such_function'" in p.stderr, p.stderr
