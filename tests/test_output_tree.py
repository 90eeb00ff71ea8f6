"""The order of rows that tie on children period under call graphs: perf's output
red-black tree (:mod:`perftui.analysis.outputtree`).

perf breaks such a tie by call-tree depth only between rows of one thread
(``__hpp__sort_acc``), which is not a total order: the order is the one its tree makes as
the rows are inserted.  The recordings are written by hand from seeded random plans:
threads whose samples (period 1: every row ties with many) have chains drawn from one pool
of addresses in no map, so rows are shared between threads and reached at many depths.
perf 6.1 is the oracle, byte for byte on every line of the report below its header.  On
these plans the rule perftui had before (reorder by depth within a thread, other rows in
place) was wrong on 30 of 100; the tree has been equal to perf on each of 400 (four option
sets).
"""

from __future__ import annotations

import contextlib
import io
import random
import subprocess
from pathlib import Path

import pytest
from perfprograms import require
from test_level_order import chain_attr

from perftui.analysis.outputtree import build_tree, tree_order
from perftui.cli import main as perftui_main
from perftui.perfdata.constants import CONTEXT_USER, Misc
from perftui.perfdata.writer import Writer

POOL = [0x00007F0000001000 + 0x100 * i for i in range(12)]
THREADS = (11, 12, 13, 14)


def _plan(seed: int) -> list[tuple[int, int, list[int]]]:
    """(tid, time, chain leaf first) per sample, in file and time order."""
    r = random.Random(seed)
    return [(r.choice(THREADS), 1000 + 10 * i, r.sample(POOL, r.randint(1, 6)))
            for i in range(r.randint(6, 14))]


def _write(path: Path, plan: list[tuple[int, int, list[int]]]) -> Path:
    with open(path, "wb") as f:
        w = Writer(f, [chain_attr()], {})
        for tid, t, chain in plan:
            w.write(w.b.sample({"ip": chain[0], "pid": tid, "tid": tid, "time": t,
                                "period": 1, "callchain": [CONTEXT_USER, *chain]},
                               misc=Misc.USER))
        w.close()
    return path


def _body(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


def _ours(data: Path, args: list[str]) -> list[str]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        assert perftui_main(["report", str(data), "--no-cache", *args]) == 0
    return _body(buf.getvalue())


def _theirs(data: Path, args: list[str]) -> list[str]:
    p = subprocess.run([require("perf"), "report", "-i", str(data), "--stdio", *args],
                       capture_output=True, text=True, timeout=120, cwd=data.parent)
    assert p.returncode == 0, p.stderr[-400:]
    return _body(p.stdout)


def _rows(body: list[str]) -> list[str]:
    return [ln for ln in body if ln.lstrip()[:1].isdigit() and "%" in ln.split()[0]]


@pytest.mark.perf
@pytest.mark.usefixtures("engine")
@pytest.mark.parametrize("args", [["--children", "--sort", "sym"], ["--children"],
                                  ["--children", "--sort", "sym", "-g", "callee"]])
def test_tied_rows_in_perfs_order(tmp_path: Path, args: list[str]) -> None:
    untotal = 0
    for seed in range(40):
        data = _write(tmp_path / f"plan{seed}.data", _plan(seed))
        theirs = _theirs(data, args)
        assert _ours(data, args) == theirs, (seed, args)
        # a plan the test needs: perf's rows not in one total order of what they print
        rows = _rows(theirs)
        key = [(-float(r.split()[0][:-1]), -float(r.split()[1][:-1]), r.split()[-1])
               for r in rows]
        untotal += key != sorted(key)
    assert untotal >= 10, untotal


def _black_height(left: list[int], right: list[int], red: list[bool], x: int) -> int:
    """The black height below ``x``, asserting the red-black rules on the way."""
    if x == -1:
        return 1
    assert not (red[x] and any(c != -1 and red[c] for c in (left[x], right[x]))), x
    a = _black_height(left, right, red, left[x])
    assert a == _black_height(left, right, red, right[x]), x
    return a + (0 if red[x] else 1)


def test_tree_keeps_the_red_black_rules_whatever_the_comparison() -> None:
    r = random.Random(9)
    for n in (1, 2, 3, 5, 50, 400):
        seq = r.sample(range(n), n)
        # a coin per pair: no order at all
        cmp = {(a, b): r.random() < 0.5 for a in range(n) for b in range(n)}.__getitem__
        left, right, red, root = build_tree(seq, lambda a, b, c=cmp: c((a, b)))
        assert not red[root]
        assert _black_height(left, right, red, root) <= 2 * (n.bit_length() + 1)
        assert sorted(tree_order(seq, lambda a, b, c=cmp: c((a, b)))) == list(range(n))


def test_tree_order_sorts_a_total_order_and_keeps_ties_in_insertion_order() -> None:
    r = random.Random(5)
    for n in (0, 1, 2, 3, 7, 100, 1000):
        value = [r.randint(0, n // 3 + 1) for _ in range(n)]
        seq = r.sample(range(n), n)
        got = tree_order(seq, lambda a, b, v=value: v[a] < v[b])
        # the stable sort of the insertion sequence: equal values go right, so in turn
        assert got == sorted(seq, key=value.__getitem__)


def test_tree_order_is_perfs_tree_for_a_comparison_that_is_not_an_order() -> None:
    """Rock-paper-scissors: the order is decided by which node each insertion meets.
    Hand-worked: 0 is the root; 1 goes right of 0; 2 is compared with 0 (2 beats 0: left),
    then the tree has 2, 0, 1 in order with no rotation (0 black, two red children)."""
    beats = {(2, 0), (0, 1), (1, 2)}
    assert tree_order([0, 1, 2], lambda a, b: (a, b) in beats) == [2, 0, 1]
    # 1 inserted first: 0 goes left of 1 (0 beats 1), 2 goes right of 1 (1 beats 2)
    assert tree_order([1, 0, 2], lambda a, b: (a, b) in beats) == [0, 1, 2]
