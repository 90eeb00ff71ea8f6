"""The differential flame graph's numbers (analysis/diffflame.py) against perf 6.1's
``perf diff`` on two recordings of hotprog with shifted shares (test_diff_perf's pair).

perf diff's Delta of a symbol is its self share in NEW minus its share in OLD; the flame
graph's colour of a frame is that change along one path of names.  hotprog's functions are
sampled on one path each (main calls them), so per symbol the frames' self changes summed
are perf diff's Delta, and OLD's self shares summed its Baseline (both printed to 0.01).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from perfprograms import Built
from test_diff_perf import NEW_MIX, OLD_MIX, perf_diff

from perftui.analysis.diffflame import diff_flame
from perftui.analysis.stackcounts import stack_counts
from perftui.perfdata import open_recording
from perftui.present.export import named_stacks
from perftui.present.report import Names, frame_name
from perftui.present.session import named_samples
from perftui.symbols.naming.resolver import SymbolOptions

#: hotprog's own leaf functions (test_diff_perf's mixes leave plt_loop out of NEW and
#: hot_gamma's spin out of OLD)
OWN = {"hot_alpha", "hot_beta", "spin", "lib_spin", "lib_tiny", "lib_tiny@plt", "plt_loop"}


def stacks(path: Path) -> list[tuple[list[str], int]]:
    rec = open_recording(path, spill=True, mapped=True)
    rec.build_index()
    sl = named_samples(rec, SymbolOptions(), True)
    names = Names(sl.locs, lambda c: sl.comm_names[c], sl.thread_comm)
    counts = stack_counts(sl, slice(0, len(sl)))
    return list(named_stacks(counts, lambda loc: frame_name(names.locs, loc, as_script=True),
                             lambda c: sl.comm_names[c]))


@pytest.mark.perf
def test_self_changes_equal_perf_diff(built: Built, recorded) -> None:
    old = recorded("diff_old", built.hotprog, "2", OLD_MIX)
    new = recorded("diff_new", built.hotprog, "2", NEW_MIX)
    old_stacks, new_stacks = stacks(old), stacks(new)
    fl = diff_flame(old_stacks, new_stacks)
    # widths are NEW's: "all" is NEW's whole period, each frame its stacks' period
    assert fl.new_total[0] == fl.new_sum == sum(p for _s, p in new_stacks)
    assert fl.old_sum == sum(p for _s, p in old_stacks)
    delta = fl.self_delta()
    old_share = fl.share(fl.old_self, "old")
    # perf's rows of each name, summed (each printed to 0.01; perf can print one symbol as
    # two rows when its hists tree is split: test_report_callgraph's split_rows)
    rows: dict[str, list[tuple[str, str]]] = {}
    for (_dso, sym), _level, base, cell in perf_diff(old, new, None, None):
        if sym in OWN:
            rows.setdefault(sym, []).append((base, cell))
    # OLD's self share of each name on paths NEW has no frame for: the flame graph cannot
    # lay it anywhere (it is in old_elsewhere), perf diff subtracts it.  A sample taken as a
    # function is entered (before its frame pointer is pushed) has its caller left out of
    # the chain, a path the other recording may lack: one fresh-clone run had lib_spin's
    # frames at +5.34% where perf said +5.22%
    drawn = {tuple(f[:k]) for f, _p in new_stacks for k in range(len(f) + 1)}
    apart: dict[str, float] = {}
    for f, p in old_stacks:
        if f and tuple(f) not in drawn:
            apart[f[-1]] = apart.get(f[-1], 0.0) + 100.0 * p / fl.old_sum
    checked = only_old = 0
    for sym, got in rows.items():
        nodes = [i for i in range(1, len(fl)) if fl.name[i] == sym]
        if not nodes:  # only in OLD: not drawn (NEW has no frame there)
            assert not any(cell.startswith("+") for _b, cell in got), sym
            only_old += 1
            continue
        tol = 0.0051 * len(got)
        want = sum(float(cell.rstrip("%")) for _b, cell in got if cell)
        away = apart.get(sym, 0.0)
        assert abs(sum(delta[i] for i in nodes) - away - want) <= tol, (sym, got, away)
        want_base = sum(float(b) for b, _c in got if b)
        assert abs(sum(old_share[i] for i in nodes) + away - want_base) <= tol, (sym, got)
        checked += 1
    # hot_alpha, hot_beta, spin (only in NEW), lib_spin; plt_loop's part (lib_tiny and its
    # PLT stub) only in OLD
    assert checked == 4 and only_old >= 2
    # OLD's stacks NEW has no path for (plt_loop's) are counted apart, not drawn
    assert fl.old_elsewhere > 0
    assert int(fl.old_total[0]) == fl.old_sum
    assert all(fl.path(i)[0] == "hotprog" for i in range(1, len(fl)) if fl.name[i] in OWN)


def test_paths_matched_by_name() -> None:
    """A hand-made pair: OLD's period goes along NEW's paths where the names agree; a stack
    that leaves them is counted through its shared part and apart as a whole."""
    old = [(["p", "main", "a"], 30), (["p", "main", "b"], 10), (["p", "main", "gone"], 60)]
    new = [(["p", "main", "a"], 50), (["p", "main", "b"], 25), (["p", "main"], 25)]
    fl = diff_flame(old, new)
    at = {tuple(fl.path(i)): i for i in range(1, len(fl))}
    a, b, main = at[("p", "main", "a")], at[("p", "main", "b")], at[("p", "main")]
    assert fl.new_sum == 100 and fl.old_sum == 100 and fl.old_elsewhere == 60
    assert (fl.new_total[main], fl.old_total[main]) == (100, 100)
    assert (fl.new_self[main], fl.old_self[main]) == (25, 0)
    d = fl.self_delta()
    assert (d[a], d[b], d[main]) == (20.0, 15.0, 25.0)
    total = fl.share(fl.new_total, "new") - fl.share(fl.old_total, "old")  # through a node
    assert total[a] == 20.0 and total[main] == 0.0
    assert ("p", "main", "gone") not in at
