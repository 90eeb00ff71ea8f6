"""The engine choice (perftui.engine): a small recording is processed plain and numba is
never imported for it; a big one, or ``PERFTUI_ENGINE=compiled``, takes the compiled passes.
The two give the same report (both are held to perf by the perf-equality tests, which run
on each engine: the ``engine`` fixture)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import corpus_path, skip_or_fail
from perftui import engine, warmcompile

#: a recording with callchains, kernel and user frames (perf 6.1 -g)
SMALL = "perf61/perf-normal-g.data"

_PROBE = """
import sys
from perftui.cli import main
rc = main(["report", sys.argv[1], "--no-cache", "--kallsyms", sys.argv[2]])
print("metadata loaded" if "importlib.metadata" in sys.modules else "metadata not loaded",
      file=sys.stderr)
print("numba loaded" if "numba" in sys.modules else "numba not loaded", file=sys.stderr)
sys.exit(rc)
"""


def _report(path: Path, kallsyms: Path, forced: str | None) -> tuple[str, str, str]:
    env = dict(os.environ)
    env.pop(engine.ENV, None)
    if forced is not None:
        env[engine.ENV] = forced
    p = subprocess.run([sys.executable, "-c", _PROBE, str(path), str(kallsyms)],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr[-500:]
    lines = p.stderr.splitlines()
    return p.stdout, lines[-1], lines[-2]


def test_a_small_report_loads_no_numba(tmp_path: Path) -> None:
    path = corpus_path(SMALL)
    if not path.is_file():
        skip_or_fail(f"{SMALL} is not in the corpus")
    kallsyms = tmp_path / "empty"
    kallsyms.write_bytes(b"")
    plain, plain_note, plain_meta = _report(path, kallsyms, None)
    compiled, compiled_note, _ = _report(path, kallsyms, "compiled")
    assert plain_note == "numba not loaded"
    # nor importlib.metadata (numba's version is read only where the engine is asked for)
    assert plain_meta == "metadata not loaded"
    assert compiled_note == "numba loaded"
    assert "[k]" in plain and "[.]" in plain and plain == compiled


def test_the_choice_by_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """By size once numba's loops are compiled; before that (no current stamp, as in a fresh
    clone whose warm-up has not run) a big recording is plain too (tests/test_warmcompile.py
    checks the background compile itself)."""
    monkeypatch.delenv(engine.ENV, raising=False)
    monkeypatch.setattr(engine, "_warm", True)
    assert engine.engine_for(0) == engine.engine_for(engine.SMALL_ROWS - 1) == "plain"
    assert engine.engine_for(engine.SMALL_ROWS) == "compiled"
    assert not engine.compiled(1000) and engine.compiled(10**8)
    monkeypatch.setattr(engine, "_warm", False)
    assert engine.engine_for(engine.SMALL_ROWS) == engine.engine_for(10**8) == "plain"
    for value, want in (("plain", "plain"), ("Compiled", "compiled"), (" auto ", None)):
        monkeypatch.setenv(engine.ENV, value)
        assert engine.forced() == want
    monkeypatch.setenv(engine.ENV, "compiled")
    assert engine.engine_for(3) == "compiled"
    monkeypatch.setenv(engine.ENV, "plain")
    assert engine.engine_for(10**9) == "plain"


def test_a_bad_engine_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    from perftui.cli import main

    monkeypatch.setenv(engine.ENV, "fast\x1b[31m")
    monkeypatch.setattr(engine, "NOTES", [])  # (a note another test's engine choice left)
    assert main(["report", "--demo"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "PERFTUI_ENGINE" in err and "\x1b" not in err


def test_the_stamp_makes_its_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With PYTHONDONTWRITEBYTECODE set the package has no __pycache__: the stamp is written
    all the same (else every run compiled again: CI took the plain engine throughout)."""
    stamp = tmp_path / "__pycache__" / "numba-warm.json"
    monkeypatch.setattr(warmcompile, "STAMP", stamp)
    assert warmcompile.write_stamp() and stamp.exists()
    assert warmcompile.ready()
