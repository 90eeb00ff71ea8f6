"""Small recordings, perftui next to perf 6.1 in CPU seconds (issue 28, target 1).

Three recordings made here: a system-wide ``perf record -a -g -e cpu-clock -- sleep 3``
(~3 MB, ~24 K samples on 2 cores), a small C program built ``-O2`` recorded without
callchains, and the same program recorded ``--call-graph dwarf`` (~25 MB).  On each:
``perf report --stdio`` against a first ``perftui report`` (an empty index cache: walked,
named, kept), one with only the symbol tables kept (as for another recording of the same
programs: perftui.symbols.tables.diskcache) and one with the names cached; then the browser
from launch to the profile's first row in tmux (bench/launch_tmux.py, the app's CPU
seconds), nothing cached and reopened.  Figures are
user + system CPU seconds of the whole process (``wait4``'s rusage), start-up included,
the median of SMALL_REPEAT runs (default 5) taken in turns with perf's: CPU time, not wall
time, because the machines this runs on are shared.  ``python bench/small.py [DIR]`` runs
it alone; ``make bench`` runs it first.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PY = sys.executable
PERFTUI = [PY, "-m", "perftui"]
REPEAT = max(1, int(os.environ.get("SMALL_REPEAT", 5)))

PROGRAM = r"""
#include <stdio.h>
volatile int N1 = 2000000, N2 = 1000000;
static double __attribute__((noinline)) work(int n)
{ double s = 0; for (int i = 1; i < n; i++) s += 1.0 / i * (i % 7); return s; }
static double __attribute__((noinline)) other(int n)
{ double s = 1; for (int i = 1; i < n; i++) s = s * 1.0000001 + (i & 3); return s; }
int main(void)
{ double t = 0; for (int k = 0; k < 150; k++) { t += work(N1); t += other(N2); }
  printf("%f\n", t); return 0; }
"""


def cpu(cmd: list[str], env: dict[str, str] | None = None) -> float:
    """User + system CPU seconds of ``cmd`` (output discarded)."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _pid, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed")
    return ru.ru_utime + ru.ru_stime


def median(xs: list[float]) -> float:
    s = sorted(xs)
    return s[len(s) // 2] if len(s) % 2 else (s[len(s) // 2 - 1] + s[len(s) // 2]) / 2


def record(base: Path) -> dict[str, Path]:
    """The three recordings (made once per BENCH_DIR)."""
    base.mkdir(parents=True, exist_ok=True)
    out = {"system-wide -a -g, 3 s": base / "sys.data",
           "-O2 program, no callchains": base / "spin.data",
           "-O2 program, --call-graph dwarf": base / "dwarf.data"}
    prog = base / "spin"
    if not prog.exists():
        (base / "spin.c").write_text(PROGRAM)
        subprocess.run(["gcc", "-O2", "-o", str(prog), str(base / "spin.c")], check=True)
    runs = [(out["system-wide -a -g, 3 s"], ["-a", "-g", "--", "sleep", "3"]),
            (out["-O2 program, no callchains"], [str(prog)]),
            (out["-O2 program, --call-graph dwarf"], ["--call-graph", "dwarf", str(prog)])]
    for path, args in runs:
        if not path.exists():
            subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-o", str(path), *args],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


def rows(base: Path) -> list[tuple[str, float, float, str]]:
    """(figure, perftui CPU s, perf CPU s, target) of every small recording."""
    cache = base / "cache"
    env = dict(os.environ, PERFTUI_CACHE_DIR=str(cache))
    out = []
    for what, path in record(base).items():
        first, kept, cached, perf = [], [], [], []
        for _ in range(REPEAT):
            shutil.rmtree(cache, ignore_errors=True)
            perf.append(cpu(["perf", "report", "--stdio", "-i", str(path)]))
            first.append(cpu([*PERFTUI, "report", str(path)], env))
            for p in cache.iterdir():  # as for another recording of the same programs
                if p.name != "symbols":
                    shutil.rmtree(p) if p.is_dir() else p.unlink()
            kept.append(cpu([*PERFTUI, "report", str(path)], env))
            cached.append(cpu([*PERFTUI, "report", str(path)], env))
        size = f"{path.stat().st_size / 1e6:.1f} MB"
        out.append((f"{what} ({size}): first report, nothing cached", median(first),
                    median(perf), "<= 1.0x"))
        out.append((f"{what} ({size}): first report, symbol tables kept", median(kept),
                    median(perf), "<= 1.0x"))
        out.append((f"{what} ({size}): names cached", median(cached), median(perf),
                    "<= 0.5x"))
        out += browser_rows(what, size, path, cache, median(perf))
    return out


def browser_rows(what: str, size: str, path: Path, cache: Path, perf: float
                 ) -> list[tuple[str, float, float, str]]:
    """The browser from launch to the profile's first row in tmux (bench/launch_tmux.py),
    nothing cached and reopened: the app's CPU seconds (none without tmux)."""
    if not shutil.which("tmux"):
        return []
    from launch_tmux import launch

    old = os.environ.get("PERFTUI_CACHE_DIR")
    os.environ["PERFTUI_CACHE_DIR"] = str(cache)
    first, reopened = [], []
    try:
        for _ in range(REPEAT):
            shutil.rmtree(cache, ignore_errors=True)
            first.append(launch(str(path))[0])
            reopened.append(launch(str(path))[0])
    finally:
        if old is None:
            os.environ.pop("PERFTUI_CACHE_DIR", None)
        else:
            os.environ["PERFTUI_CACHE_DIR"] = old
    return [(f"{what} ({size}): browser, launch to profile", median(first), perf, "<= 1.5x"),
            (f"{what} ({size}): browser reopened, launch to profile", median(reopened), perf,
             "<= 1.5x")]


def main() -> int:
    if not shutil.which("perf") or not shutil.which("gcc"):
        print("bench/small.py: needs perf and gcc on the PATH")
        return 1
    base = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(
        prefix="perftui-small-"))
    got = rows(base)
    head = (f"figure (CPU s, user + sys, median of {REPEAT})", "perftui", "perf 6.1",
            "ratio", "target")
    table = [head] + [(w, f"{a:.2f}", f"{b:.2f}", f"{a / b:.2f}x", t) for w, a, b, t in got]
    widths = [max(len(r[i]) for r in table) for i in range(5)]
    for r in table:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(r, widths, strict=True))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
