"""Run ``python -m perftui`` in a child process; a child that outlives its timeout is made
to print where every thread of it stood (faulthandler on SIGABRT), so a hang seen once in
CI says where it hung instead of only that it did."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path


def run_perftui(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
                timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m perftui ARGS``, text output captured; on timeout, raises
    ``TimeoutExpired`` whose ``stderr`` holds the child's Python stacks.  (The timeout
    only guards against a hang: these commands take 1-8 s here, and a CI run whose
    machine ran ~4x slower for minutes saw one pass 120 s.)"""
    full_env = {**(env if env is not None else os.environ), "PYTHONFAULTHANDLER": "1"}
    with subprocess.Popen([sys.executable, "-m", "perftui", *args], cwd=cwd, env=full_env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as e:
            p.send_signal(signal.SIGABRT)  # faulthandler prints every thread's stack
            try:
                out, err = p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                out, err = p.communicate()
            raise subprocess.TimeoutExpired(e.cmd, timeout, output=out,
                                            stderr=f"stacks at the timeout:\n{err}") from None
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)
