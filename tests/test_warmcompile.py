"""The one-time compile in the background (perftui.warmcompile, issue 28): with numba's
stamp gone, as after a pip install, a big recording's engine is the plain one, the line
saying so comes once, and a background process compiles; once it is done the stamp is
there and the next process takes the compiled engine.  The oracle is the processes
themselves: which engine a fresh interpreter picks, the lock's pid alive, the stamp."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from perftui import engine, warmcompile

pytestmark = pytest.mark.slow  # a compile in a child process (numba's cache current: ~30 s)

PICK = ("import sys; from perftui import engine; print(engine.engine_for(1 << 20)); "
        "print(len(engine.NOTES)); print(engine.NOTES[0] if engine.NOTES else '')")


def pick() -> tuple[str, int, str]:
    env = {k: v for k, v in os.environ.items() if k != engine.ENV}
    out = subprocess.run([sys.executable, "-c", PICK], capture_output=True, text=True,
                         env=env, timeout=120, check=True).stdout.splitlines()
    return out[0], int(out[1]), out[2] if len(out) > 2 else ""


def test_a_missing_stamp_compiles_in_the_background() -> None:
    kept = warmcompile.STAMP.read_bytes() if warmcompile.STAMP.exists() else None
    try:
        warmcompile.STAMP.unlink(missing_ok=True)
        assert not warmcompile.ready()
        got, notes, line = pick()
        assert (got, notes) == ("plain", 1)
        assert "background" in line
        pid = int(warmcompile.LOCK.read_text())
        os.kill(pid, 0)  # the compile runs
        again, notes, line = pick()  # a second run meanwhile: plain, said, no second compile
        assert (again, notes) == ("plain", 1) and "still" in line
        assert int(warmcompile.LOCK.read_text()) == pid
        deadline = time.monotonic() + 600
        while warmcompile.LOCK.exists():
            assert time.monotonic() < deadline, "the background compile never ended"
            time.sleep(0.5)
        assert warmcompile.ready()
        assert pick()[:2] == ("compiled", 0)
    finally:
        if kept is not None and not warmcompile.ready():
            warmcompile.STAMP.write_bytes(kept)

