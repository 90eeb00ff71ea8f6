"""``perftui report`` against perf 6.1's ``perf report`` on every corpus recording perf
reads: recordings of other machines, perf 3.2 to 6.12, x86-64, i686 and ARM, several events,
fixed periods, pipe mode, zstd, module maps without their ``.ko``.

Both get an empty ``--kallsyms``: these kernels are not this machine's, and perf 6.1 would
otherwise name a recording that carries no kernel build id (pipe mode, old perf) with this
machine's ``/proc/kallsyms`` (perftui does not: docs/architecture.md).  perf is asked for
one table per event (``--no-group``; perftui has no group view) and for samples rather than
branches (``--no-branch-stack``: perf's default on a ``-b`` recording is a branch table).
"""

from __future__ import annotations

import contextlib
import functools
import io
import re
import subprocess
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from perfprograms import require
from test_diff_perf import compare as compare_diff
from test_differential import CALLCHAIN_FILES, PIPE_MODE, README_COUNTS, ids
from test_report_perf import compare, fold_perf_script_once, table_lines

from perftui.cli import main as perftui_main

pytestmark = pytest.mark.perf

Corpus = Callable[[str], Path]

#: perf synthesizes its events from the Intel PT trace (--itrace); perftui does not decode it
NOT_COMPARED = {"quipper/perf.data.intel_pt-4.14"}

#: --call-graph dwarf: perf unwinds the user stack copies with the binaries' DWARF data
DWARF_UNWOUND = {"perfparser/contentsize.data", "perfparser/fork_static_gcc__perf.data.zstd"}

CASES = [(rel, keys, False) for rel in README_COUNTS if rel not in NOT_COMPARED
         for keys in ("comm,dso,sym", "pid", "cpu", "sym", "dso")]
# with children: perf 6.1 prints no Children column for pipe-mode input (its columns are
# set up before the stream's attrs say there are callchains)
CASES += [(rel, keys, True) for rel in CALLCHAIN_FILES
          if rel in README_COUNTS and rel not in DWARF_UNWOUND | PIPE_MODE | NOT_COMPARED
          for keys in ("comm,dso,sym", "sym", "pid")]


@pytest.fixture(scope="module")
def empty_kallsyms(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("kallsyms") / "empty"
    p.write_bytes(b"")
    return p


@pytest.mark.usefixtures("engine")
@pytest.mark.parametrize(("rel", "keys", "children"),
                         [pytest.param(*c, id=f"{ids(c[0])}-{c[1]}{'-children' if c[2] else ''}")
                          for c in CASES])
def test_report_equals_perf(rel: str, keys: str, children: bool, corpus: Corpus,
                            empty_kallsyms: Path) -> None:
    """Row for row: the same keys, samples and period, overhead within 0.01 points.  Among
    them: events recorded without PERF_SAMPLE_PERIOD weigh their attr's sample_period
    (throttle-3.8, weight_struct), and a module address without its .ko is shown from the
    module map's start (callgraph-3.8's ``[ath9k]``)."""
    compare(corpus(rel), keys, children,
            perf_args=("--no-group", "--no-branch-stack", "--kallsyms", str(empty_kallsyms)),
            our_args=("--kallsyms", str(empty_kallsyms), "--no-cache"), once=True)


@pytest.mark.usefixtures("engine")
@pytest.mark.parametrize("rel", [pytest.param(r, id=ids(r)) for r in CALLCHAIN_FILES
                                 if r in README_COUNTS and r not in DWARF_UNWOUND])
def test_folded_equals_perf_script_folded(rel: str, corpus: Corpus,
                                          empty_kallsyms: Path) -> None:
    """``--folded`` equals a folding of ``perf script``'s frames done here, stack for stack
    (callgraph-3.8: module frames named by their file, ``[ath9k.ko]``, as stackcollapse-perf
    names them)."""
    data = corpus(rel)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        assert perftui_main(["report", str(data), "--folded", "--no-cache",
                             "--kallsyms", str(empty_kallsyms)]) == 0
    got: Counter[str] = Counter()
    for line in buf.getvalue().splitlines():
        stack, n = line.rsplit(" ", 1)
        got[stack] += int(n)
    want = fold_perf_script_once(data, ("--kallsyms", str(empty_kallsyms)))
    assert sum(got.values()) == sum(want.values()) == README_COUNTS[rel][1]
    assert got == want


#: pairs of one event each (by attr type and config) that perf diff reads: perf 6.1's own
#: two recordings, and perf 3.8 against perf 3.4 (modules without their .ko on both sides)
DIFF_PAIRS = [("perf61/perf-normal-g.data", "perf61/perf-zstd.data"),
              ("quipper/perf.data.callgraph-3.8", "quipper/perf.data.raw-3.4"),
              ("quipper/perf.data.branch-4.14", "quipper/perf.data.ctx_switch_namespaces-4.14")]


@pytest.mark.parametrize("keys", [None, "comm,dso,sym", "pid", "cpu"])
@pytest.mark.parametrize(("old", "new"), [pytest.param(a, b, id=f"{ids(a)}-{ids(b)}")
                                          for a, b in DIFF_PAIRS])
def test_diff_equals_perf(old: str, new: str, keys: str | None, corpus: Corpus,
                          empty_kallsyms: Path) -> None:
    """``perftui diff`` equals ``perf diff`` row for row, in perf's order."""
    extra = ("--kallsyms", str(empty_kallsyms))
    compare_diff(corpus(old), corpus(new), keys, None, extra)
    compare_diff(corpus(old), corpus(new), keys, "ratio", extra)


#: recordings of an event group (their GROUP_DESC): perf's default, and perftui's, is one
#: table with a column per member
GROUPED = {"quipper/perf.data.group_desc-4.14", "quipper/perf.data.lost_samples-4.4",
           "quipper/perf.data.piped.header_feautres_group_desc-6.8"}
#: perf cuts a comm to a column width set before the name was seen ("perf-ex" for
#: "perf-exec"); perftui prints the whole name (the row tests above cut ours to compare)
COMM_CUT = {"quipper/perf.data.branch_stack_spec", "quipper/perf.data.hybrid_topology"}
TEXT_CASES = [(rel, keys, ch) for rel in README_COUNTS if rel not in NOT_COMPARED
              for keys in ("comm,dso,sym", "pid,cpu", "dso")
              for ch in ((False, True) if rel in CALLCHAIN_FILES
                         and rel not in DWARF_UNWOUND | PIPE_MODE else (False,))
              if not (rel in COMM_CUT and "comm" in keys)]
HEADER = re.compile(r"# (Total Lost Samples|Samples|Event count|Overhead|Children|\.)")


@functools.cache
def _perf_text(data: Path, keys: str, mode: str, kallsyms: Path) -> str:
    """perf report --stdio -g none's text (once for both engines)."""
    p = subprocess.run([require("perf"), "report", "-i", str(data), "--stdio", "-g", "none",
                        "--sort", keys, mode, "--no-branch-stack", "--kallsyms", str(kallsyms)],
                       capture_output=True, text=True, timeout=300, cwd=data.parent)
    assert p.returncode == 0, p.stderr[-400:]
    return p.stdout


@pytest.mark.usefixtures("engine")
@pytest.mark.parametrize(("rel", "keys", "children"),
                         [pytest.param(*c, id=f"{ids(c[0])}-{c[1]}{'-children' if c[2] else ''}")
                          for c in TEXT_CASES])
def test_text_equals_perf(rel: str, keys: str, children: bool, corpus: Corpus,
                          empty_kallsyms: Path) -> None:
    """The text report as ``perf report --stdio -g none`` prints it (an event group as one
    table, a cell per member under Overhead): the lost samples line,
    each table's header (samples as perf's ``convert_unit`` writes them: ``9K``) and its
    rows byte for byte, padding included (pid:comm padded in the last column; cpu 3 wide,
    ``-001`` overflowing it; the dso column at least 16 wide when a row has no symbol).
    Rows of unresolved addresses that perf ranks among equals by its tree's accident are
    compared as a set (docs/architecture.md)."""
    data = corpus(rel)
    mode = "--children" if children else "--no-children"
    perf_text = _perf_text(data, keys, mode, empty_kallsyms)
    assert ("of events '" in perf_text) == (rel in GROUPED)  # a group's table
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        assert perftui_main(["report", str(data), "-g", "none", "--sort", keys, mode, "--no-cache",
                             "--kallsyms", str(empty_kallsyms)]) == 0
    mine = buf.getvalue()

    def heads(text: str) -> list[str]:
        return [ln for ln in text.splitlines() if HEADER.match(ln)]

    assert heads(mine) == heads(perf_text)
    address = re.compile(r"\[[k.]\] ((0x)?[0-9a-f]{16})")
    theirs, ours_ = table_lines(perf_text), table_lines(mine)
    assert sorted(address.sub(r"[?] \1", ln) for ln in ours_) == \
        sorted(address.sub(r"[?] \1", ln) for ln in theirs)
    assert [ln for ln in ours_ if not address.search(ln)] == \
        [ln for ln in theirs if not address.search(ln)]


#: the filters: perf's option and perftui's (same values); --comm, --dso, --pid and --tid
#: weigh what they keep against every sample (perf's "absolute" percentages), --cpu and
#: --time leave the other samples out.  Keys that hold comm and dso: perf filters its
#: table's entries, each marked by the sample that made it (a later sample of another
#: dso or process adds to an entry the filter keeps, or drops into one it hides); with
#: those keys an entry is one comm and dso, so perf's rows are each sample's own.
FILTERS = {
    "perf61/perf-normal-g.data": [("--comms", "sh,head"), ("--dsos", "libc.so.6,dash"),
                                  ("--pid", "6921"), ("--time", "10%/2"),
                                  ("--time", "0%-30%")],
    "perf61/perf-zstd.data": [("--comms", "head,sh"), ("--dsos", "[kernel.kallsyms],dash"),
                              ("--pid", "7317")],
    "quipper/perf.data.callgraph-3.8": [("--dsos", "chrome,libpthread-2.15.so"),
                                        ("--cpu", "1"), ("--tid", "0")],
    "quipper/perf.data.throttle-3.8": [("--comms", "shill,swapper"), ("--cpu", "2,3")],
}
FILTER_CASES = [(rel, opt, val, pct) for rel, fs in FILTERS.items() for opt, val in fs
                for pct in ("absolute", "relative")]


@pytest.mark.parametrize(("rel", "opt", "value", "percentage"),
                         [pytest.param(*c, id=f"{ids(c[0])}{c[1]}={c[2]}-{c[3]}")
                          for c in FILTER_CASES])
def test_filters_equal_perf(rel: str, opt: str, value: str, percentage: str,
                            corpus: Corpus, empty_kallsyms: Path) -> None:
    ours_opt = {"--comms": "--comm", "--dsos": "--dso"}.get(opt, opt)
    compare(corpus(rel), "comm,dso,sym", False,
            perf_args=("--kallsyms", str(empty_kallsyms), opt, value, "--percentage",
                       percentage),
            our_args=("--kallsyms", str(empty_kallsyms), "--no-cache", ours_opt, value,
                      "--percentage", percentage))


@pytest.mark.parametrize(("opt", "value"), [("--comms", "head"), ("--dsos", "libc.so.6")])
def test_one_name_filter_elides_its_column(opt: str, value: str, corpus: Corpus,
                                           empty_kallsyms: Path) -> None:
    """A --comms or --dsos of one name: perf says it above the tables ("# comm: head")
    and leaves its column out; the text is perf's, line for line."""
    data = corpus("perf61/perf-normal-g.data")
    args = ["--sort", "comm,dso,sym", "--no-children", "--kallsyms", str(empty_kallsyms)]
    p = subprocess.run([require("perf"), "report", "-i", str(data), "--stdio", "-g", "none",
                        opt, value, *args], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-400:]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        assert perftui_main(["report", str(data), "-g", "none", opt, value, "--no-cache",
                             *args]) == 0
    def trimmed(lines: list[str]) -> list[str]:  # (perf ends with a "# (Tip: ...)")
        while lines and (not lines[-1] or lines[-1].startswith("#")):
            lines = lines[:-1]
        return lines

    # perf's first line is its hint to use --header (perftui's is `perftui info`)
    assert trimmed(p.stdout.splitlines()[1:]) == trimmed(buf.getvalue().splitlines())
    assert "# " + opt[2:-1] + ": " + value in buf.getvalue().splitlines()


@pytest.mark.parametrize("keys", ["comm,dso", "pid,cpu"])
@pytest.mark.parametrize("rel", ["quipper/perf.data.throttle-3.8", "quipper/perf.data.i686-3.4"])
def test_forced_group_equals_perf(rel: str, keys: str, corpus: Corpus,
                                  empty_kallsyms: Path) -> None:
    """``--group`` on a recording of several events and no group: one table of them all,
    named as perf names a forced leader's group ("cycles, instructions", no braces)."""
    data = corpus(rel)
    args = ["--group", "--sort", keys, "--kallsyms", str(empty_kallsyms)]
    p = subprocess.run([require("perf"), "report", "-i", str(data), "--stdio", "-g", "none",
                        *args], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-400:]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        assert perftui_main(["report", str(data), "-g", "none", "--no-cache", *args]) == 0

    def lines(text: str) -> list[str]:
        return [ln for ln in text.splitlines() if ln and ln != "#" and "(Tip:" not in ln
                and not ln.startswith("# To display")]

    assert lines(buf.getvalue()) == lines(p.stdout)
    assert "of events '" in buf.getvalue()
