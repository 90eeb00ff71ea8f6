"""``perftui ARGS`` run in the test's own process (``perftui.cli.main``), for tests of what
a command prints and the status it returns: a child process would prove nothing more and
costs ~0.5-1 s to start (Python, numpy, perftui's imports).  Tests of the process itself
(the installed entry point's exit status, stdin pipes, terminals, signals, crashes) keep
a child: :mod:`subproc`.
"""

from __future__ import annotations

import io
import os
import subprocess
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from perftui import cli


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    """What ``python -m perftui ARGS`` would give (status, standard output and error as
    text), run by ``perftui.cli.main`` here; ``env`` replaces the environment meanwhile,
    ``cwd`` the working directory."""
    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = cli.main(list(args))
            except SystemExit as e:  # argparse's usage errors and --help
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(["perftui", *args], code, out.getvalue(),
                                       err.getvalue())
