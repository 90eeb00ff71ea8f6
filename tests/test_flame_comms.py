"""The flame graph's first level says what each thread name merges (issue 29): two
processes running the same program are one frame (perf's ``--sort comm``, flamegraph's
stackcollapse-perf), labelled with its processes and threads.

The oracle is ``perf script -F comm,pid,tid`` on the same recording: per comm, the pids and
tids of its samples; then the same under the filter ``pid=`` of one of the two.
"""

from __future__ import annotations

import re
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from perfprograms import require
from uihelpers import settle, sync, wait_indexed, wait_views, workers_done

from perftui.analysis.commprocesses import CommMembers
from perftui.perfdata import open_recording
from perftui.ui.app import PerftuiApp
from perftui.ui.widgets.flame import FlameGraph

pytestmark = [pytest.mark.perf, pytest.mark.slow]  # a recording, a browser

_LINE = re.compile(r"^\s*(.*?)\s+(-?\d+)/(-?\d+)\s*$")


def perf_comms(data: Path, pid: int | None = None) -> dict[str, CommMembers]:
    """Per comm with samples: its pids and thread count, as perf script prints them."""
    out = subprocess.run([require("perf"), "script", "-i", str(data), "-F", "comm,pid,tid"],
                         capture_output=True, text=True, check=True, timeout=120).stdout
    pids: dict[str, set[int]] = defaultdict(set)
    tids: dict[str, set[int]] = defaultdict(set)
    for line in out.splitlines():
        m = _LINE.match(line)
        assert m, line
        if pid is not None and int(m.group(2)) != pid:
            continue
        pids[m.group(1)].add(int(m.group(2)))
        tids[m.group(1)].add(int(m.group(3)))
    return {c: CommMembers(tuple(sorted(p)), len(tids[c])) for c, p in pids.items()}


def first_level(graph: FlameGraph) -> dict[str, str]:
    """The labels of the graph's thread frames, by the thread name alone."""
    assert graph.gtree is not None
    tree = graph.gtree.tree
    out = {}
    for node in tree.children(-1).tolist():
        frame = int(tree.frame[node])
        assert frame < 0
        out[graph.comm_names[-1 - frame]] = graph.label(node)
    return out


@pytest.fixture(scope="module")
def two_processes(built: Any, recorded: Any) -> Path:
    prog = built.hotprog
    return recorded("two_hotprogs", Path("/bin/sh"), "-c", f"{prog} 1 & {prog} 1; wait")


@sync
async def test_the_thread_level_says_its_processes(two_processes: Path) -> None:
    want = perf_comms(two_processes)
    assert len(want["hotprog"].pids) == 2, want  # the recording's point
    rec = open_recording(two_processes)
    app = PerftuiApp(rec)
    try:
        async with app.run_test(size=(160, 40)) as pilot:
            await wait_indexed(pilot)
            await wait_views(pilot)
            await pilot.press("f")
            await settle(pilot)
            await workers_done(app)
            await settle(pilot)
            graph = app.query_one(FlameGraph)
            got = first_level(graph)
            assert got == {c: f"{c} ({m.words()})" for c, m in want.items()}
            assert got["hotprog"].startswith("hotprog (2 processes")
            # one of the two by the filter: its pid alone
            one = want["hotprog"].pids[0]
            app._apply_filter(f"pid={one}")
            await settle(pilot)
            await workers_done(app)
            await settle(pilot)
            got = first_level(graph)
            want_one = perf_comms(two_processes, pid=one)
            assert got == {c: f"{c} ({m.words()})" for c, m in want_one.items()}
            assert got["hotprog"] == f"hotprog (pid {one})" or \
                got["hotprog"].startswith(f"hotprog (pid {one}, ")
    finally:
        rec.close()
