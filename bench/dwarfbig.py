"""A DWARF recording of >= 1 GB, perftui next to perf 6.1 (issue 27's speed targets).

An ``-O2`` program (two functions, no frame pointers needed: perf unwinds the copied
stacks) recorded ``--call-graph dwarf`` at 4 kHz until the file holds DWARF_BYTES (default
1.1 GB, ~150 K samples of 8 KiB stacks), made once per BENCH_DIR.  Rows: ``perf report
--stdio`` against perftui's first ``report`` (an empty index cache: walked, unwound,
named, kept) and a reopened one (the chains and names from the cache), in CPU seconds
(user + sys of the whole process, ``wait4``'s rusage: the machines are shared) and peak
RssAnon (sampled from /proc every 5 ms).  ``python bench/dwarfbig.py [DIR]`` runs it alone;
``make bench`` runs it after the small recordings (BENCH_DWARF=0 skips it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PY = sys.executable
PERFTUI = [PY, "-m", "perftui"]
TARGET = int(float(os.environ.get("DWARF_BYTES", 1.1e9)))

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
volatile int N1 = 2000000, N2 = 1000000;
static double __attribute__((noinline)) work(int n)
{ double s = 0; for (int i = 1; i < n; i++) s += 1.0 / i * (i % 7); return s; }
static double __attribute__((noinline)) other(int n)
{ double s = 1; for (int i = 1; i < n; i++) s = s * 1.0000001 + (i & 3); return s; }
int main(int argc, char **argv)
{ double t = 0; int n = argc > 1 ? atoi(argv[1]) : 150;
  for (int k = 0; k < n; k++) { t += work(N1); t += other(N2); }
  printf("%f\n", t); return 0; }
"""


def run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """CPU seconds (user + sys) and peak RssAnon (MB) of ``cmd`` (output discarded)."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    peak = 0
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        try:
            with open(f"/proc/{p.pid}/status") as f:
                for line in f:
                    if line.startswith("RssAnon:"):
                        peak = max(peak, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.005)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed")
    return ru.ru_utime + ru.ru_stime, peak / 1024


def record(base: Path) -> Path:
    """The >= TARGET-byte recording (made once per ``base``; recorded again, longer, until
    it is big enough)."""
    base.mkdir(parents=True, exist_ok=True)
    data, prog = base / "dwarf-big.data", base / "spinlong"
    if not prog.exists():
        (base / "spinlong.c").write_text(PROGRAM)
        subprocess.run(["gcc", "-O2", "-o", str(prog), str(base / "spinlong.c")], check=True)
    loops = 3600  # ~1.27 GB on a 2-core machine
    while not data.exists() or data.stat().st_size < TARGET:
        subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "4000",
                        "--call-graph", "dwarf", "-o", str(data), str(prog), str(loops)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        loops *= 2
    return data


def rows(base: Path) -> list[tuple[str, float, float, str, str]]:
    """(figure, perftui, perf, target, unit) of the big DWARF recording."""
    data = record(base)
    cache = base / "cache"
    env = dict(os.environ, PERFTUI_CACHE_DIR=str(cache))
    with open(data, "rb") as f:  # in the page cache, for perf as for perftui
        while f.read(1 << 24):
            pass
    perf_cpu, perf_rss = run(["perf", "report", "--stdio", "-i", str(data)])
    shutil.rmtree(cache, ignore_errors=True)
    first_cpu, first_rss = run([*PERFTUI, "report", str(data)], env)
    again_cpu, again_rss = run([*PERFTUI, "report", str(data)], env)
    what = f"--call-graph dwarf, {data.stat().st_size / 1e9:.2f} GB"
    return [(f"{what}: first report (CPU)", first_cpu, perf_cpu, "<= 0.5x", "s"),
            (f"{what}: reopened (CPU)", again_cpu, perf_cpu, "<= 0.1x", "s"),
            (f"{what}: first report, peak RssAnon", first_rss, perf_rss, "<= 150 MB", "MB"),
            (f"{what}: reopened, peak RssAnon", again_rss, perf_rss, "", "MB")]


def main() -> int:
    if not shutil.which("perf") or not shutil.which("gcc"):
        print("bench/dwarfbig.py: needs perf and gcc on the PATH")
        return 1
    base = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(
        prefix="perftui-dwarf-"))
    for what, ours, theirs, target, unit in rows(base):
        print(f"{what:55} {ours:8.2f} {theirs:8.2f} {ours / theirs:6.2f}x {target} {unit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
