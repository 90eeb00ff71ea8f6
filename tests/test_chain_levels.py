"""Callchain entries perf names by rules of their own, against perf 6.1 on fresh recordings
of tests/programs/fakeframes.c (frame records planted by hand, walked by perf's
frame-pointer unwinder; most samples are in the kernel).

* ``middle``: an address in no map between two mapped user frames.  perf's ``--children``
  walks a chain outermost first and gives such an entry the level of the mapped frame
  outside it (``fill_callchain_info`` leaves the level as it was): ``[.]``, though the
  sample is in the kernel.  perftui marked it ``[k]``, the sample's level, before.
* ``root``: the outermost entry has no map: nothing outside it, so the sample's own level.
  Its samples disagree (kernel ones ``[k]``, user ones ``[.]``) and perf marks the row by
  the first in its processing order, perftui by the first in the file
  (docs/architecture.md): compared without the mark.
"""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
from pathlib import Path

import pytest
from perfprograms import Built, require

from perftui.cli import main as perftui_main

pytestmark = pytest.mark.perf

PLANTED = "0x00007fff12345678"


def tables(data: Path, *args: str) -> tuple[list[str], list[str]]:
    """perf report --stdio -g none's table rows and perftui report's, for ``args``."""
    p = subprocess.run([require("perf"), "report", "-i", str(data), "--stdio", "-g", "none",
                        *args], capture_output=True, text=True, timeout=300, cwd=data.parent)
    assert p.returncode == 0, p.stderr[-400:]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        assert perftui_main(["report", str(data), "--no-cache", "-g", "none", *args]) == 0

    def rows(text: str) -> list[str]:
        return [ln for ln in text.splitlines() if ln and not ln.startswith("#")]

    return rows(p.stdout), rows(buf.getvalue())


def test_unmapped_between_mapped_frames_has_the_outer_frames_level(built: Built,
                                                                   recorded) -> None:
    data = recorded("fakeframes-middle", built.fakeframes, "middle")
    theirs, mine = tables(data, "--children", "--sort", "sym")
    planted = [ln for ln in theirs if PLANTED in ln]
    assert len(planted) == 1 and f"[.] {PLANTED}" in planted[0]  # the program ran as planned
    assert mine == theirs
    theirs, mine = tables(data, "--children", "--sort", "dso,sym")
    assert mine == theirs


def test_unmapped_outermost_frame_has_the_samples_level(built: Built, recorded) -> None:
    data = recorded("fakeframes-root", built.fakeframes, "root")
    theirs, mine = tables(data, "--children", "--sort", "sym")
    assert any(PLANTED in ln for ln in theirs)

    def unmarked(lines: list[str]) -> list[str]:
        return [re.sub(rf"\[[k.]\] {PLANTED}", f"[?] {PLANTED}", ln) for ln in lines]

    assert unmarked(mine) == unmarked(theirs)


@pytest.mark.parametrize("how", ["middle", "root"])
def test_compiled_names_pass_gives_the_same_levels(built: Built, recorded, how: str) -> None:
    """The compiled names pass and the plain numpy one name the planted frame alike
    (:func:`~perftui.symbols.tasks.callchain.frame_levels` is the plain one's rule)."""
    from test_names_compiled import _both, _check

    data = recorded(f"fakeframes-{how}", built.fakeframes, how)
    fast, plain = _both(data, callchains=True, block=1 << 8)
    _check(fast, plain, callchains=True)
    kernel_planted = {bool(fast.locs.dsos[fast.locs.dso[i]].kernel)
                      for i in range(len(fast.locs)) if fast.locs.start[i] == 0x7FFF12345678}
    assert kernel_planted == ({False} if how == "middle" else {False, True})
