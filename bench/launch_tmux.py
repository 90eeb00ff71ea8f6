"""The browser from launch to its profile on screen, in a real terminal (issue 28, target 1:
the profile on screen <= 1.5x ``perf report --stdio``).

tmux (a private server, 120x40) runs ``perftui FILE``; ``p`` is typed at once, as a user
who knows the key would (the type-ahead keeps it until the app can take it); the pane is
read every 10 ms until the profile's first row (a line with a percentage and a symbol's
``[.]``/``[k]``) is on it.  The figure is the app process's CPU seconds (user + system,
from /proc/PID/stat) at that moment, start-up included, and the wall seconds beside it.
``python bench/launch_tmux.py FILE [REPEAT]`` prints one JSON line a run; ``launch(path)``
is what bench/small.py calls.  The index cache is the caller's (PERFTUI_CACHE_DIR).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid

ROW = re.compile(r"\d+\.\d\d%.*\[[.k]\] \S")
TICK = os.sysconf("SC_CLK_TCK")


def _tmux(sock: str, *args: str) -> str:
    return subprocess.run(["tmux", "-L", sock, *args], check=True, text=True,
                          capture_output=True, timeout=60).stdout


def _cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def _app_pid(shell: int) -> int | None:
    """The python process under the pane's shell (or the shell itself, exec'ed)."""
    try:
        with open(f"/proc/{shell}/task/{shell}/children") as f:
            kids = [int(p) for p in f.read().split()]
    except OSError:
        return None
    return kids[0] if kids else shell


def launch(path: str, timeout: float = 120.0) -> tuple[float, float]:
    """(CPU seconds, wall seconds) from launch to the profile's first row on screen."""
    if not shutil.which("tmux"):
        raise RuntimeError("bench/launch_tmux.py: needs tmux")
    sock = f"perftui-bench-{uuid.uuid4().hex[:8]}"
    cmd = f"exec {shlex.quote(sys.executable)} -m perftui {shlex.quote(path)}"
    env = [a for k, v in os.environ.items() if k not in ("TMUX", "COLUMNS", "LINES")
           for a in ("-e", f"{k}={v}")]
    t0 = time.perf_counter()
    _tmux(sock, "new-session", "-d", "-s", "b", "-x", "120", "-y", "40", *env, cmd)
    try:
        shell = int(_tmux(sock, "display-message", "-p", "-t", "b", "#{pane_pid}").strip())
        _tmux(sock, "send-keys", "-t", "b", "p")
        while time.perf_counter() - t0 < timeout:
            pid = _app_pid(shell)
            screen = _tmux(sock, "capture-pane", "-p", "-t", "b")
            if ROW.search(screen) and pid is not None:
                wall = time.perf_counter() - t0
                return _cpu(pid), wall
            time.sleep(0.01)
        raise RuntimeError(f"bench/launch_tmux.py: no profile row in {timeout:.0f} s")
    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True, timeout=60)


def main() -> int:
    path = sys.argv[1]
    for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 1):
        cpu, wall = launch(path)
        print(json.dumps({"cpu_s": round(cpu, 3), "wall_s": round(wall, 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
