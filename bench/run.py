"""``make bench``: perftui next to perf 6.1 on the same large recording.

Records a real ``perf record -g -a`` run, repeats its data section to >= 500 MB (not
committed: it lives in a temporary directory, or BENCH_DIR), then times each command
in a subprocess and samples its peak anonymous memory (RssAnon, not the mmapped file).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bigfile import repeat_data

TARGET = int(float(os.environ.get("BENCH_BYTES", 520e6)))
PERFTUI = [sys.executable, "-m", "perftui"]


def peak_anon_run(cmd: list[str]) -> tuple[float, int, int]:
    """Wall seconds, peak RssAnon (kB) and exit status of ``cmd``."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    status = f"/proc/{p.pid}/status"
    while p.poll() is None:
        try:
            with open(status) as f:
                for line in f:
                    if line.startswith("RssAnon:"):
                        peak = max(peak, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.005)
    return time.perf_counter() - t0, peak, p.returncode


def record(out: Path) -> None:
    work = ("i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done; "
            "head -c 50000000 /dev/urandom | gzip -1 > /dev/null")
    subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "4000", "-g", "-a",
                    "-o", str(out), "--", "sh", "-c", work], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def count_records(path: Path) -> int:
    out = subprocess.run([*PERFTUI, "info", "--json", str(path)], capture_output=True,
                         text=True, check=True).stdout
    import json

    return int(json.loads(out)["total_records"])


def main() -> int:
    if not shutil.which("perf"):
        print("bench: perf is not on the PATH; nothing to compare against")
        return 1
    base = Path(os.environ.get("BENCH_DIR") or tempfile.mkdtemp(prefix="perftui-bench-"))
    base.mkdir(parents=True, exist_ok=True)
    small = base / "small.data"
    big = base / "big.data"
    if not big.exists():
        record(small)
        reps, size = repeat_data(str(small), str(big), TARGET)
        print(f"recording: {big} ({size / 1e6:.0f} MB, data repeated {reps}x)")
    n = count_records(big)
    size = big.stat().st_size
    rows = []
    for label, cmd in [
        ("perftui info --json", [*PERFTUI, "info", "--json", str(big)]),
        ("perf report --stats", ["perf", "report", "-f", "--stats", "-i", str(big)]),
        ("perf report --sort dso", ["perf", "report", "-f", "--stdio", "--sort", "dso",
                                    "-g", "none", "-i", str(big)]),
    ]:
        secs, anon, rc = peak_anon_run(cmd)
        rows.append((label, secs, anon, rc))
    print(f"\n{size / 1e6:.0f} MB, {n:,} records, {os.cpu_count()} cores\n")
    print(f"{'command':<26}{'seconds':>9}{'records/s':>14}{'peak RssAnon':>15}{'exit':>6}")
    for label, secs, anon, rc in rows:
        print(f"{label:<26}{secs:>9.2f}{n / secs:>14,.0f}{anon / 1024:>12.0f} MB{rc:>6}")
    pt = rows[0][1]
    print(f"\nperftui info / perf --stats: {pt / rows[1][1]:.2f}x;"
          f"  / perf --sort dso: {pt / rows[2][1]:.2f}x   (target: >= 2,000,000 records/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
