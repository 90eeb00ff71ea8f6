"""``perftui report``'s call graphs against ``perf report --stdio`` (perf 6.1), byte for
byte, with the same options, on fresh recordings (frame pointers, ``--call-graph dwarf``)
and on the corpus.

perf's ``#`` comment lines are left out on both sides (its header hint and its tip are
perftui's to leave out).  One known disagreement is masked: the ``[k]``/``[.]`` of a row
of an unresolved address with ``callee`` order (perf takes an address with no map's level
from the frame before it in the order it walks the chain, which ``callee`` reverses;
perftui's names take it in perf's default walk); those rows are compared unmarked.  And
perf's fractal ``[...]`` line (the branches under the threshold) sometimes reads ``[...]
(inlined)``: its symbol is malloc'ed without clearing its ``inlined`` flag (ui/stdio/hist.c
``init_rem_hits``), so the words after it are whatever that byte held; perftui never writes
them, and perf's are taken off.
"""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from perfprograms import Built, require

from perftui.cli import main as perftui_main

pytestmark = pytest.mark.perf

UNRESOLVED_ROW = re.compile(r"^(\s+[0-9.]+%.*)\[[k.]\] ((0x)?[0-9a-f]{16})$", re.M)


def perf_text(data: Path, args: list[str]) -> str:
    p = subprocess.run([require("perf"), "report", "-i", str(data), "--stdio", *args],
                       capture_output=True, text=True, timeout=300, cwd=data.parent)
    assert p.returncode == 0, p.stderr[-400:]
    return p.stdout


def ours_text(data: Path, args: list[str]) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert perftui_main(["report", str(data), *args]) == 0
    return buf.getvalue()


def body(text: str, callee: bool) -> str:
    """The text without perf's ``#`` lines (and, in callee order, the level of an
    unresolved address's row)."""
    out = "".join(ln for ln in text.splitlines(keepends=True) if not ln.startswith("#"))
    out = out.replace("--[...] (inlined)\n", "--[...]\n")
    return UNRESOLVED_ROW.sub(r"\1[?] \2", out) if callee else out


def same(data: Path, opts: str) -> None:
    args = opts.split()
    callee = "callee" in opts or ("--no-children" in args and "caller" not in opts)
    theirs, mine = body(perf_text(data, args), callee), body(ours_text(data, args), callee)
    if theirs != mine:  # the first lines that differ, for the report
        a, b = theirs.splitlines(), mine.splitlines()
        at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                  min(len(a), len(b)))
        raise AssertionError(f"{opts}: line {at}\nperf:    {a[at:at + 6]}\nperftui: "
                             f"{b[at:at + 6]}")


FRAME_POINTER_OPTIONS = [
    "", "--no-children", "-g caller", "-g callee", "-g caller --no-children",
    "-g fractal", "-g fractal,0.1", "-g fractal,0.5,callee --no-children",
    "-g graph,0.1,callee", "-g graph,0,caller", "-g flat", "-g flat,0,caller --no-children",
    "-g folded", "-g folded,0.05,callee", "-g period", "-g count,fractal,0",
    "-g graph,0.5,3", "-g fractal,0,2,callee", "--sort sym", "--sort sym,dso -g fractal",
    "--sort dso", "--sort comm --no-children", "--sort dso,sym --no-children",
    "--sort pid -g fractal,1", "--call-graph=graph,1", "-g f,0.2", "-g none",
    # -n and --percent-limit (which perf takes as the graphs' threshold too, the later of
    # it and -g's threshold winning)
    "-n", "-n --no-children", "--show-nr-samples -g none", "--percent-limit 5",
    "--percent-limit 1 -g fractal", "-g fractal,0.1 --percent-limit 2",
    "--percent-limit 2 -g fractal,0.1", "-n -g none --percent-limit 0.3",
    "--percent-limit 10 --no-children -n",
    # -G (perf's --inverted: caller order whatever -g says)
    "-G --no-children", "-g callee -G", "-G -g callee,fractal",
]


@pytest.mark.parametrize("opts", FRAME_POINTER_OPTIONS)
def test_frame_pointer_call_graphs_equal_perf(built: Built, recorded, opts: str) -> None:
    """hotprog recorded with ``-g``: its graphs under every row, in each print type, order
    and value, with thresholds, print limits and sort keys."""
    same(recorded("hotprog", built.hotprog, "3"), opts)


ROW = re.compile(r"^ +-?[0-9.]+%  ")
BRANCH = re.compile(r"^([ |]*)--([^ ]+?)--(.*)$")


def blocks(text: str) -> list[list[str]]:
    """Each row's line and the lines under it (perf's ``#`` lines and blank ends out)."""
    out: list[list[str]] = []
    for ln in text.splitlines():
        if ln.startswith("#"):
            continue
        if ROW.match(ln) and not ln.startswith(" " * 12):
            out.append([ln])
        elif out:
            out[-1].append(ln)
    for b in out:
        while len(b) > 1 and not b[-1]:
            b.pop()
    return out


def canonical_graph(lines: list[str]) -> str:
    """A graph's tree with its branches in a fixed order: (value, frames, branches) nested,
    siblings sorted.  perf orders siblings of equal period by comparing dso pointers and
    the raw addresses of the first chain that made each (``match_chain``), which a
    report from the named samples cannot know; everything else is kept."""
    margin = 0
    stack: list[tuple[int, list]] = [(-1, ["", [], []])]
    for ln in lines:
        if not ln.strip(" |"):
            continue
        if ln.startswith(" " * 12 + "---"):
            margin = 3
            node: list = ["", [ln[15:]], []]
            stack[-1][1][2].append(node)
            stack.append((0, node))
            continue
        m = BRANCH.match(ln)
        if m:
            depth = (len(m.group(1)) - 12 - margin) // 11 + 1
            while stack[-1][0] >= depth:
                stack.pop()
            node = [m.group(2), [m.group(3)], []]
            stack[-1][1][2].append(node)
            stack.append((depth, node))
            continue
        name = ln.lstrip(" |")
        depth = (len(ln) - len(name) - 12 - margin) // 11
        while stack[-1][0] > depth:
            stack.pop()
        stack[-1][1][1].append(name)

    def text(n: list) -> str:
        return f"({n[0]} {'/'.join(n[1])} [{' '.join(sorted(text(c) for c in n[2]))}])"
    return text(stack[0][1])


def canonical_block(block: list[str], mode: str, comm: bool) -> tuple[str, str]:
    """A row's fields and its call graph in a form where siblings of equal period compare
    equal whatever their order (flat and folded: their chains as a sorted list); with
    ``comm`` (the first key), the comm cut to the header's 7 characters: perf cuts a
    comm to its column's width when the width was set before that name was met."""
    under = block[1:]
    fields = block[0].split()
    if comm:
        at = next(i for i, f in enumerate(fields) if not f.endswith("%"))
        fields[at] = fields[at][:7]
    row = " ".join(fields)
    if mode in ("graph", "fractal"):
        return row, canonical_graph(under)
    if mode == "flat":
        chains, cur = [], []
        for ln in [*under, ""]:
            if ln:
                cur.append(ln)
            elif cur:
                chains.append("/".join(cur))
                cur = []
        return row, "\n".join(sorted(chains))
    return row, "\n".join(sorted(under))


def same_but_ties(data: Path, opts: str, mode: str, unmark: bool = False,
                  table_splits: bool = False, ordered: bool = False) -> None:
    """Every row (its fields: perf's system-wide column widths and comms have accidents,
    which test_report_perf names) with its graph as perf prints them, siblings of equal
    period in any order (:func:`canonical_graph`); with ``ordered`` the rows in perf's
    order, else in any.  perf orders rows of equal children period by their trees' depth
    only between rows first met in one thread (``__hpp__sort_acc``), a comparison that
    does not order a many-threaded table: its rb-tree orders it, which perftui replays
    (test_output_tree).  The tree replayed is perf's only where perf's comparisons of
    entries are sound: not where unresolved addresses overflow ``_sort__addr_cmp`` or
    inlined calls overlap (the corpus's and the DWARF recordings here), which leave rows
    of one key split and others elsewhere."""
    args = opts.split()
    callee = unmark or "callee" in opts or ("--no-children" in args and "caller" not in opts)
    comm = "--sort" not in args or args[args.index("--sort") + 1].startswith("comm")
    theirs = [canonical_block(b, mode, comm)
              for b in blocks(body(perf_text(data, args), callee))]
    mine = [canonical_block(b, mode, comm)
            for b in blocks(body(ours_text(data, args), callee))]
    if table_splits:
        # the rows perf files twice: left out of the comparison of graphs once each key's
        # rows are seen to sum alike on both sides
        split = split_rows([b[0] for b in theirs], [b[0] for b in mine], opts)
        assert {b[0] for b in theirs} ^ {b[0] for b in mine} <= split, opts
        theirs = [b for b in theirs if b[0] not in split]
        mine = [b for b in mine if b[0] not in split]
        if mode == "folded":  # a chain perf files twice under one row
            by_row = dict(mine)
            theirs = [(r, by_row[r]) if r in by_row and folded_alike(g, by_row[r]) else (r, g)
                      for r, g in theirs]
    if ordered and sound_tree(theirs):  # perf's output tree, replayed (outputtree)
        assert [b[0] for b in mine] == [b[0] for b in theirs], opts
    assert len(mine) == len(theirs) > 0
    missing = sorted(set(theirs) - set(mine))
    assert not missing, (opts, missing[:2], sorted(set(mine) - set(theirs))[:2])
    assert sorted(mine) == sorted(theirs), opts


def sound_tree(blocks: list[tuple[str, str]]) -> bool:
    """Whether perf's comparisons of these rows are an order: its unresolved addresses
    (``_sort__addr_cmp``'s int64 difference of two u64s) less than 2^63 apart.  A busy
    system's recording has garbage frames spread wider (bash's text read as return
    addresses), and then perf's tree misplaces entries, even prints one address as two
    rows, which no replay of a sound tree gives."""
    addrs = [int(m, 16) for row, _g in blocks for m in re.findall(r"0x([0-9a-f]{16})", row)]
    return not addrs or max(addrs) - min(addrs) < 1 << 63


def split_rows(theirs: list[str], mine: list[str], opts: str) -> set[str]:
    """The rows (as :func:`canonical_block` gives them) of each key perf prints more often
    than perftui, and ours of those keys, once ours are seen to sum to perf's.

    On a recording whose hists tree perf 6.1 breaks (unresolved addresses, whose
    ``_sort__addr_cmp`` overflows: test_report_perf's ``tree_broken``), perf files some
    rows twice, e.g. ``_dl_start_final (inlined)`` as 0.37% + 0.41% where perftui has
    one row of 0.78%, or ``__libc_start_main_impl (inlined)`` as 0.55% + 99.04% against
    99.60%.  Which rows depends on the order perf inserts its entries in, which follows the
    callchain's order in the children's walk: so ``-g folded,0,callee`` can split a row
    that ``-g none`` keeps whole, on one recording in a few.  Each key's percentages,
    column by column, must sum alike (within the rounding of each printed share)."""
    def key(row: str) -> str:
        return " ".join(f for f in row.split() if not f.endswith("%"))

    def shares(row: str) -> list[float]:
        return [float(f[:-1]) for f in row.split() if f.endswith("%")]

    twice = {k for k, n in Counter(key(r) for r in theirs).items() if n > 1}
    out: set[str] = set()
    for k in twice:
        t = [shares(r) for r in theirs if key(r) == k]
        m = [shares(r) for r in mine if key(r) == k]
        assert 1 <= len(m) <= len(t), (opts, k, t, m)
        if len(m) == len(t):  # two symbols of one name (static functions): not a split
            continue
        tol = 0.005 * (len(t) + len(m)) + 1e-9
        for col in range(len(t[0])):
            assert abs(sum(x[col] for x in t) - sum(x[col] for x in m)) <= tol, (opts, k, t, m)
        out |= {r for r in [*theirs, *mine] if key(r) == k}
    return out


def folded_alike(theirs: str, mine: str) -> bool:
    """A row's folded chains (:func:`canonical_block`'s, one a line), perf's with a chain
    it printed more than once (its callchain tree, broken as its hists tree is, keeps one
    chain as two nodes: 0.05% + 0.05% where perftui has 0.09%) taken as one: the same
    chains, each one's share the sum of perf's within the rounding of each printed
    share."""
    def chains(graph: str) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        for ln in graph.splitlines():
            share, _, chain = ln.partition("% ")
            out.setdefault(chain, []).append(float(share))
        return out

    t, m = chains(theirs), chains(mine)
    return t.keys() == m.keys() and all(
        len(m[k]) <= len(t[k]) and abs(sum(t[k]) - sum(m[k])) <= 0.005 * (len(t[k]) + len(m[k]))
        + 1e-9 for k in t)


@pytest.mark.parametrize(("opts", "mode"), [
    ("", "graph"), ("--no-children", "graph"), ("-g fractal,0.1,callee", "fractal"),
    ("-g folded,0", "folded"), ("--sort dso,sym -g caller,0.1", "graph"),
    ("-g flat --no-children", "flat"), ("--sort comm", "graph")])
def test_system_wide_call_graphs_equal_perf(built: Built, recorded, opts: str,
                                            mode: str) -> None:
    """A system-wide ``-a -g`` recording: many threads and processes, the kernel, JIT and
    unresolved frames (their rows unmarked in either order, as the corpus's: perf 6.1 gives
    an address of no map the level of the frame before it in its walk, issue 29)."""
    same_but_ties(recorded("hotprog_sys", built.hotprog, "1", system_wide=True), opts, mode,
                  ordered=True,
                  unmark=True)


@pytest.mark.parametrize("rel", ["perf61/perf-normal-g.data", "quipper/perf.data.callgraph-3.8"])
@pytest.mark.parametrize("opts", ["", "--no-children", "-g fractal,1,callee"])
def test_corpus_call_graphs_equal_perf(corpus, rel: str, opts: str) -> None:
    """The corpus's -g recordings of perf 6.1 and 3.8 (a system-wide one): every row and
    its graph; the level of unresolved rows unmarked in either order (perf 6.1's level for
    an address of no map, test_chain_levels and issue 29 say more)."""
    data = corpus(rel)
    mode = "fractal" if "fractal" in opts else "graph"
    same_but_ties(data, opts, mode, unmark=True)


@pytest.mark.parametrize(("program", "opts"), [
    *(("dwchain", o) for o in ("", "--no-children", "-g fractal,0.1", "-g folded,0.5",
                               "--sort dso,sym --no-children -g caller")),
    *(("dwcxx", o) for o in ("", "--no-children", "-g fractal,0.1", "-g folded,0,callee",
                             "--sort dso,sym --no-children -g caller"))])
def test_dwarf_call_graphs_equal_perf(dwarf_built, recorded, program: str, opts: str) -> None:
    """Programs built ``-O2 -fomit-frame-pointer`` recorded with ``--call-graph dwarf``:
    the unwound chains with their inlined frames (``(inlined)``), a library calling back,
    recursion, C++ templates.  (``--sort dso,sym`` with children is left out: perf 6.1 keeps
    ``__libc_start_call_main`` there as two rows, 81.83 % and 4.37 % on one dwchain
    recording, where perftui has one of 86.20 %; the table's, not the graphs', to settle.)
    dwchain with ``callee`` order and children is left out too: perf 6.1 then keeps its
    second thread's ``start_thread`` as two rows (8.52 % + 5.13 % on one recording, one
    row of 13.65 % in caller order and in perftui); and its chains at threshold 0 are
    left out, where the deep qsort recursion's inlined ``msort_with_tmp`` frames show the
    few samples on which perf's and perftui's unwinding of 8 KiB stack copies differ
    (test_unwind_perf counts those)."""
    args = {"dwchain": "20", "dwcxx": "150"}[program]
    data = recorded(program, getattr(dwarf_built, program), args, callgraph="dwarf")
    mode = next((m for m in ("fractal", "folded") if m in opts), "graph")
    same_but_ties(data, opts, mode, table_splits=True)


@pytest.mark.parametrize("opts", ["", "--no-children", "-g fractal,0.1,callee", "--group",
                                  "--no-group", "-n", "-n --no-children --percent-limit 5"])
@pytest.mark.parametrize("events", ["cpu-clock,task-clock", "{cpu-clock,task-clock}"])
def test_several_events_call_graphs_equal_perf(built: Built, recorded, events: str,
                                              opts: str) -> None:
    """Two events, apart or as a group (``{...}``, or forced with ``--group``): each event's
    table with its own graphs; a group's rows with its leader's graphs, byte for byte."""
    name = "group" if events.startswith("{") else "two_events"
    same(recorded(name, built.hotprog, "2", events=events), opts)


def test_g_before_the_file_takes_it_as_the_file(built: Built, recorded) -> None:
    """``perftui report -g FILE``: -g takes an optional word, and a recording is not one
    (perf has no file argument; its default -g is what this prints)."""
    data = recorded("hotprog", built.hotprog, "3")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert perftui_main(["report", "-g", str(data)]) == 0
    assert body(buf.getvalue(), False) == body(perf_text(data, []), False)


@pytest.mark.parametrize("opts", ["-g", "-g folded", "--call-graph=fractal,0.5"])
def test_g_on_a_recording_without_chains_says_so(built: Built, recorded, opts: str) -> None:
    """perf 6.1 answers ``-g`` on a recording made without callchains with "Selected -g
    ... But no callchain or branch data." and no table; perftui prints the table (perf's
    ``-g none``, byte for byte) and says once why it has no graphs."""
    from inproc import run_cli

    data = recorded("hotprog_flat", built.hotprog, "2", callgraph=False)
    p = subprocess.run([require("perf"), "report", "--stdio", "-i", str(data), *opts.split()],
                       capture_output=True, text=True, timeout=300, cwd=data.parent)
    assert "no callchain" in p.stdout + p.stderr
    r = run_cli("report", str(data), *opts.split())
    assert r.returncode == 0, r.stderr
    assert body(r.stdout, False) == body(perf_text(data, ["-g", "none"]), False)
    said = [ln for ln in r.stderr.splitlines() if "no call chains" in ln]
    assert len(said) == 1 and "recorded without -g" in said[0], r.stderr
    quiet = run_cli("report", str(data))
    assert "no call chains" not in quiet.stderr
