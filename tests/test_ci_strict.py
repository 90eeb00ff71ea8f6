"""With CI=true a missing oracle fails the run; without it, the test is skipped.

(A missing oracle fails a test in its setup: pytest counts it as an error.)

Each case runs pytest in a subprocess on a few real tests, with a PATH that lacks the oracle
(or holds a fake perf of another version), or with the GPL corpus moved out of reach.
``.ci/run`` is run with an apt-get that fails: it must stop with an error, not go on.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import skip_or_fail

ROOT = Path(__file__).parents[1]
pytestmark = pytest.mark.slow  # a pytest (or .ci/run) in a child process each


def run_pytest(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("CI", "PERFTUI_CORPUS")}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-o", "addopts=-ra", *args], cwd=ROOT, env={**base, **env},
                          capture_output=True, text=True, timeout=300)


def bin_dir(tmp_path: Path, **scripts: str) -> str:
    """A PATH directory holding only the given shell scripts (name -> body)."""
    d = tmp_path / "bin"
    d.mkdir(exist_ok=True)
    for name, body in scripts.items():
        p = d / name
        p.write_text("#!/bin/sh\n" + body + "\n")
        p.chmod(0o755)
    return str(d)


PERF_TEST = "tests/test_header_perf.py::test_header_fields_equal_perf"


def test_missing_perf_fails_under_ci(tmp_path: Path) -> None:
    r = run_pytest([PERF_TEST], {"CI": "true", "PATH": bin_dir(tmp_path)})
    assert r.returncode == 1, r.stdout
    assert "6 errors" in r.stdout and "CI=true: perf is not on the PATH" in r.stdout


def test_missing_perf_skips_outside_ci(tmp_path: Path) -> None:
    r = run_pytest([PERF_TEST], {"PATH": bin_dir(tmp_path)})
    assert r.returncode == 0, r.stdout
    assert "6 skipped" in r.stdout and "perf is not on the PATH" in r.stdout


def test_other_perf_version_fails_under_ci(tmp_path: Path) -> None:
    path = bin_dir(tmp_path, perf='echo "perf version 6.5.3"')
    r = run_pytest([PERF_TEST], {"CI": "true", "PATH": path})
    assert r.returncode == 1, r.stdout
    assert "6 errors" in r.stdout and "CI=true: perf 6.5.3 is not perf 6.1" in r.stdout


def test_missing_corpus_fails_under_ci(tmp_path: Path) -> None:
    target = "tests/test_features.py::test_every_corpus_feature_round_trips"
    r = run_pytest([f"{target}[perfparser/probe.data.file]", f"{target}[perf61/perf-pipe.data]"],
                   {"CI": "true", "PERFTUI_CORPUS": str(tmp_path / "nowhere")})
    assert r.returncode == 1, r.stdout
    # the GPL recording is missing; the one shipped in tests/data is still there
    assert "1 failed, 1 passed" in r.stdout
    assert "CI=true: perfparser/probe.data.file is not available" in r.stdout


def test_missing_tmux_fails_under_ci(tmp_path: Path) -> None:
    r = run_pytest(["tests/test_ui_tmux.py"], {"CI": "true", "PATH": bin_dir(tmp_path)})
    assert r.returncode == 1, r.stdout
    tests = len(re.findall(r"^def test_", (ROOT / "tests/test_ui_tmux.py").read_text(), re.M))
    assert f"{tests} errors" in r.stdout and "CI=true: tmux is not on the PATH" in r.stdout


def test_ci_script_stops_when_the_install_fails(tmp_path: Path) -> None:
    """No perf, an apt-get that fails: .ci/run exits 1 naming what it could not install,
    and never reaches `make test` (the install runs beside `make setup`, and make is not
    even on this PATH: the install's failure is what it says)."""
    if not Path("/bin/bash").exists():
        skip_or_fail("the CI script is a bash script: /bin/bash is needed")
    path = bin_dir(tmp_path, **{"apt-get": "exit 100", "dirname": 'exec /usr/bin/dirname "$@"',
                                "bash": 'exec /bin/bash "$@"'})
    r = subprocess.run(["/bin/bash", str(ROOT / ".ci" / "run")], capture_output=True,
                       text=True, timeout=60, env={"PATH": path, "HOME": str(tmp_path)})
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert re.search(r"ci: installing linux-perf tmux .*failed", r.stderr), r.stderr
