"""The ``[k]``/``[.]`` of a row whose samples disagree on it: perf's hist entry keeps the
level of the sample that made it, the first in perf's processing order (samples sorted by
time in its ordered-events queue, tools/perf/util/ordered-events.c), not the first in the
file (issue 29: perftui took the file's, 3 rows of 17 K differed on a system-wide
recording).

The recording is written by hand: two samples at each of two addresses in no map, one in
user mode and one in the kernel, each pair written in the file against its time order, and
a callchain whose outermost entry (in no map: the sample's own level, by
``fill_callchain_info``) is shared by a user and a kernel sample the same way.  The
expected marks come from the plan (the sample of lower time); perf 6.1 is held to the plan
and perftui's whole table to perf's.
"""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from perfprograms import require

from perftui.cli import main as perftui_main
from perftui.perfdata import EventAttr, Sample
from perftui.perfdata.constants import CONTEXT_KERNEL, CONTEXT_USER, Misc
from perftui.perfdata.writer import Writer

A = 0x00007F0000001000
B = 0x00007F0000002000
X = 0x0000000000C0FFEE  # the outermost caller of A's samples

#: (ip, kernel?, time, callchain after its context marker), in file order: each pair's
#: second sample is the earlier in time
PLAN = [
    (A, False, 2000, [A, X]),
    (A, True, 1000, [A, X]),
    (B, True, 3000, [B]),
    (B, False, 2500, [B]),
]


def _first_in_time(addr: int, chains: bool) -> str:
    """The plan's mark of ``addr``'s row: the level of the earliest sample reaching it
    (its own ip, or with ``chains`` any entry of its callchain)."""
    reach = [(t, k) for ip, k, t, chain in PLAN if ip == addr or (chains and addr in chain)]
    return "k" if min(reach)[1] else "."


def chain_attr() -> EventAttr:
    """A cpu-clock attr sampling ip, tid, time, callchain and period (sample_id_all, as
    perf record writes it), for hand-made samples in no map."""
    return EventAttr(type=1, size=128, config=0, sample_period=1000,
                     sample_type=int(Sample.IP | Sample.TID | Sample.TIME | Sample.CALLCHAIN
                                     | Sample.PERIOD),
                     flags=1 << 8 | 1 << 9 | 1 << 18 | 1 << 23, ids=[7], name="cpu-clock")


def _write(path: Path, rounds: bool) -> Path:
    with open(path, "wb") as f:
        w = Writer(f, [chain_attr()], {})
        for i, (ip, kernel, t, chain) in enumerate(PLAN):
            ctx = CONTEXT_KERNEL if kernel else CONTEXT_USER
            w.write(w.b.sample({"ip": ip, "pid": 5, "tid": 5, "time": t, "period": 1,
                                "callchain": [ctx, *chain]},
                               misc=Misc.KERNEL if kernel else Misc.USER))
            if rounds and i == 1:  # (the first round flushes nothing: the end sorts all)
                w.write(w.b.user("FINISHED_ROUND"))
        w.close()
    return path


def _marks(text: str) -> dict[int, set[str]]:
    """Each address row's marks, from a ``--stdio`` table."""
    got: dict[int, set[str]] = {}
    for ln in text.splitlines():
        m = re.search(r"\[([k.])\] 0x([0-9a-f]{16})\s*$", ln)
        if m and not ln.startswith("#"):
            got.setdefault(int(m.group(2), 16), set()).add(m.group(1))
    return got


def _ours(data: Path, *args: str) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        assert perftui_main(["report", str(data), "--no-cache", "-g", "none", *args]) == 0
    return buf.getvalue()


def _theirs(data: Path, *args: str) -> str:
    p = subprocess.run([require("perf"), "report", "-i", str(data), "--stdio", "-g", "none",
                        *args], capture_output=True, text=True, timeout=300, cwd=data.parent)
    assert p.returncode == 0, p.stderr[-400:]
    return p.stdout


def _planned(children: bool) -> dict[int, set[str]]:
    return {a: {_first_in_time(a, children)} for a in ((A, B, X) if children else (A, B))}


OPTIONS = [("--children", "--sort", "sym"), ("--no-children", "--sort", "sym"),
           ("--children",), ("--no-children",)]


@pytest.mark.usefixtures("engine")
@pytest.mark.parametrize("rounds", [False, True])
@pytest.mark.parametrize("args", OPTIONS)
def test_mark_is_the_first_samples_in_processing_order(tmp_path: Path, rounds: bool,
                                                       args: tuple[str, ...]) -> None:
    data = _write(tmp_path / "levels.data", rounds)
    want = _planned("--children" in args)
    assert want == {A: {"k"}, B: {"."}, **({X: {"k"}} if "--children" in args else {})}
    assert _marks(_ours(data, *args)) == want


@pytest.mark.perf
@pytest.mark.parametrize("rounds", [False, True])
@pytest.mark.parametrize("args", OPTIONS)
def test_perf_marks_as_planned_and_perftui_as_perf(tmp_path: Path, rounds: bool,
                                                   args: tuple[str, ...]) -> None:
    data = _write(tmp_path / "levels.data", rounds)
    theirs = _theirs(data, *args)
    assert _marks(theirs) == _planned("--children" in args)

    def rows(text: str) -> list[str]:
        return [ln for ln in text.splitlines() if ln and not ln.startswith("#")]

    assert rows(_ours(data, *args)) == rows(theirs)


@pytest.mark.usefixtures("engine")
@pytest.mark.parametrize("children", [False, True])
def test_browser_groups_mark_as_report(tmp_path: Path, children: bool) -> None:
    """The browser's tables (the groups weighed under a selection) take each row's
    location from the same sample."""
    from perftui.analysis.samplegroups import GroupsBuilder, assemble, group_profile, select
    from perftui.perfdata import open_recording
    from perftui.symbols.naming.resolver import Resolver
    from perftui.symbols.naming.samplelocs import resolve_all
    from perftui.symbols.naming.samplestore import sample_rows_all
    from perftui.symbols.options import SymbolOptions

    rec = open_recording(_write(tmp_path / "levels.data", True))
    try:
        rec.build_index()
        sl = resolve_all(Resolver(rec, SymbolOptions()), sample_rows_all(rec), True)
        c = rec.columns
        b = GroupsBuilder(sl.locs, sl.comm_names, callchains=True)
        r = sl.rows
        group = b.add_named(sl, 0, len(sl), c["tid"][r], c["cpu"][r], c["attr"][r])
        st = assemble(b.tables(), r, group, sl.period.view(np.int64), sl.locs, sl.comm_names,
                      True)
        prof = group_profile(select(st), ("sym",), children).profile
        kern = sl.locs.is_kernel()
        got = {sl.locs.start[row.loc]: {"k" if kern[row.loc] else "."} for row in prof.rows}
        assert got == _planned(children)
    finally:
        rec.close()


def test_ranks_kept_with_the_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The names cache keeps each sample's rank: a second report, its names from the
    cache, marks the rows alike."""
    from perftui.perfdata import open_recording
    from perftui.perfdata.indexcache import IndexCache
    from perftui.symbols.naming.samplestore import kept_sample_locs
    from perftui.symbols.options import SymbolOptions

    monkeypatch.setenv("PERFTUI_CACHE_DIR", str(tmp_path / "cache"))
    data = _write(tmp_path / "levels.data", True)

    def report() -> str:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
            assert perftui_main(["report", str(data), "-g", "none", "--children",
                                 "--sort", "sym"]) == 0
        return buf.getvalue()

    first = report()
    rec = open_recording(data, cache=IndexCache(str(tmp_path / "cache")))
    try:
        rec.build_index()
        kept = kept_sample_locs(rec, SymbolOptions(), True)
        assert kept is not None and kept.origin == "cache" and kept.rank is not None
        # the plan's samples in processing order: by time (each pair's second first)
        assert np.argsort(kept.rank).tolist() == np.argsort(
            [t for _ip, _k, t, _c in PLAN]).tolist() == [1, 0, 3, 2]
    finally:
        rec.close()
    assert report() == first
    assert _marks(first) == _planned(True)
