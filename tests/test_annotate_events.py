"""``perftui annotate`` on a recording of several events (issue 29): perf annotate --stdio
annotates the function once per event that has samples of it, in the recording's order.

Oracle: ``perf annotate --stdio`` (percentages and ``-n``) on fresh recordings of
tests/programs/hotprog with ``-e cpu-clock,task-clock`` (both events sample every function)
and ``-e cpu-clock,page-faults`` (whichever events perf shows for a function, perftui must
show the same), a recorded group ``{cpu-clock,task-clock}`` (one annotation, a column per
member), a group beside other events, and perf's ``--group``.  Compared: each annotation's
title and dashes, and every instruction line (the value column, the address, objdump's
text).  Source lines are left out: perf prints
``objdump -S``'s context lines, perftui the line itself (present/annotatetext.py).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from perfprograms import Built, require

from perftui.cli import main as perftui_main

pytestmark = [pytest.mark.perf, pytest.mark.slow]

_SOURCE = re.compile(r"^ +:")


def _shown(text: str) -> list[str]:
    """The lines compared: titles, dashes and instructions (source lines out)."""
    return [ln.rstrip() for ln in text.splitlines() if ln.strip() and not _SOURCE.match(ln)]


def _perf(data: Path, *args: str) -> str:
    p = subprocess.run([require("perf"), "annotate", "-i", str(data), "--stdio", *args],
                       capture_output=True, text=True, timeout=300, cwd=data.parent)
    assert p.returncode == 0, p.stderr[-400:]
    return p.stdout


def _perftui(capsys: pytest.CaptureFixture[str], data: Path, sym: str, *args: str
             ) -> tuple[str, str]:
    capsys.readouterr()
    assert perftui_main(["annotate", str(data), sym, "--no-cache", *args]) == 0
    out, err = capsys.readouterr()
    return out, err


def _titles(lines: list[str]) -> list[str]:
    return [ln for ln in lines if "Source code & Disassembly of" in ln]


CASES = [
    ("cpu-clock,task-clock", []), ("cpu-clock,task-clock", ["-n"]),
    ("cpu-clock,page-faults", []), ("cpu-clock,page-faults", ["-n"]),
    # a recorded group: one annotation, a column per member (the title's samples the
    # leader's); perf's --group makes one group of every event
    ("{cpu-clock,task-clock}", []), ("{cpu-clock,task-clock}", ["-n"]),
    ("{cpu-clock,task-clock},page-faults,cpu-clock", []),
    ("cpu-clock,task-clock", ["--group"]), ("cpu-clock,task-clock", ["--group", "-n"]),
]


@pytest.mark.parametrize(("events", "opts"), CASES, ids=lambda v: v if isinstance(v, str)
                         else " ".join(v) or "percent")
def test_every_event_is_annotated_as_perf_does(capsys: pytest.CaptureFixture[str],
                                               built: Built, recorded, events: str,
                                               opts: list[str]) -> None:
    data = recorded("two_events", built.hotprog, "2", events=events)
    planned = {"cpu-clock,task-clock": 1 if "--group" in opts else 2,
               "{cpu-clock,task-clock}": 1}.get(events)
    for sym in ("hot_alpha", "hot_beta", "lib_spin"):
        theirs = _shown(_perf(data, *opts, sym))
        mine, err = _perftui(capsys, data, sym, *opts)
        assert _titles(theirs), sym  # perf annotated it at least once
        if planned is not None:  # the recording is as planned
            assert len(_titles(theirs)) == planned, sym
        if "{" in events or "--group" in opts:  # perf's two columns
            assert re.match(r" (Percent|Samples) {9}\|", _titles(theirs)[0]), sym
        assert _shown(mine) == theirs, sym
        assert "also" not in err  # nothing left out to say


def test_json_and_event_still_give_one(capsys: pytest.CaptureFixture[str], built: Built,
                                       recorded) -> None:
    """``--json`` stays one object (the event with most samples of the function, the
    other named on stderr); ``--event`` the one chosen, whose text is perf's section."""
    data = recorded("two_events", built.hotprog, "2", events="cpu-clock,task-clock")
    out, err = _perftui(capsys, data, "hot_alpha", "--json")
    assert len(out.splitlines()) == 1 and "also" in err and "--event" in err
    theirs = _shown(_perf(data, "hot_alpha"))
    second = theirs.index(_titles(theirs)[1])
    mine, _ = _perftui(capsys, data, "hot_alpha", "--event", "task-clock")
    assert _shown(mine) == theirs[second:]
