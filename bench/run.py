"""``make bench``: perftui next to perf 6.1 on the same large recording, one table.

The recording (``recording.py``) is a real ``perf record -g -a`` run with the demo
modules' KMOD_SEC_MAP records and samples planted in their sections, its data repeated to
>= 500 MB; perf's side runs on its stripped twin (perf 6.1 stops at type 83).  Every
command runs in its own process; peak anonymous memory (RssAnon: not the mmapped file's
pages) is sampled from /proc every 5 ms.  BENCH_DIR keeps the files between runs,
BENCH_BYTES sets the size (default 520 MB).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from bigfile import repeat_data  # noqa: E402
from recording import make  # noqa: E402

TARGET = int(float(os.environ.get("BENCH_BYTES", 520e6)))
PY = sys.executable
PERFTUI = [PY, "-m", "perftui"]


def measure(cmd: list[str], stdin: Path | None = None) -> tuple[float, int, int, bytes]:
    """Wall seconds, peak RssAnon (kB), exit status and stdout of ``cmd``."""
    t0 = time.perf_counter()
    fin = open(stdin, "rb") if stdin else subprocess.DEVNULL  # noqa: SIM115
    p = subprocess.Popen(cmd, stdin=fin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    peak = 0
    chunks: list[bytes] = []
    import threading

    reader = threading.Thread(target=lambda: chunks.append(p.stdout.read()))  # type: ignore
    reader.start()
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
    reader.join()
    if stdin:
        fin.close()  # type: ignore[union-attr]
    return time.perf_counter() - t0, peak, p.returncode, b"".join(chunks)


def records_of(path: Path) -> int:
    out = subprocess.run([*PERFTUI, "info", "--json", str(path)], capture_output=True,
                         check=True).stdout
    return int(json.loads(out)["total_records"])


def probe(path: Path) -> tuple[dict, int]:
    """The browser run headless on ``path``: its figures and its peak RssAnon (kB)."""
    os.environ["TEXTUAL_ANIMATIONS"] = "none"
    _t, anon, _rc, out = measure([PY, str(HERE / "browser_probe.py"), str(path),
                                  str(time.time())])
    return json.loads(out.decode().strip().splitlines()[-1]), anon


def main() -> int:
    if not shutil.which("perf"):
        print("bench: perf is not on the PATH; nothing to compare against")
        return 1
    base = Path(os.environ.get("BENCH_DIR") or tempfile.mkdtemp(prefix="perftui-bench-"))
    files = make(base, TARGET)
    big, stripped, pipe = files["big"], files["stripped"], files["pipe"]
    double = base / "big2.data"
    if not double.exists():
        repeat_data(str(base / "small-planted.data"), str(double), 2 * TARGET)
    n, n2 = records_of(big), records_of(double)
    size = big.stat().st_size

    rows: list[tuple[str, str, str, str, str]] = []

    def row(what: str, ours: float, theirs: float | None, target: str, unit: str) -> None:
        ratio = f"{ours / theirs:.2f}x" if theirs else ""
        rows.append((what, f"{ours:.2f} {unit}", f"{theirs:.2f} {unit}" if theirs else "",
                     ratio, target))

    t_info, a_info, rc1, _ = measure([*PERFTUI, "info", "--json", str(big)])
    t_stats, _a_stats, _, _ = measure(["perf", "report", "-f", "--stats", "-i", str(stripped)])
    row("info: records/s (M)", n / t_info / 1e6, n / t_stats / 1e6, ">= 2", "M/s")
    t_sec, a_sec, rc2, out = measure([*PERFTUI, "sections", "--json", str(big)])
    t_dso, a_dso, _, _ = measure(["perf", "report", "-f", "--stdio", "--sort", "dso", "-g",
                                  "none", "-i", str(stripped)])
    row("sections --json: time", t_sec, t_dso, "<= 0.5x perf", "s")
    sec = json.loads(out)
    planted = sum(m["samples"] for m in sec["modules"])
    row("sections --json: peak RssAnon", a_sec / 1024, a_dso / 1024, "<= 250 MB", "MB")
    _t_sec2, a_sec2, _, _ = measure([*PERFTUI, "sections", "--json", str(double)])
    row("RssAnon growth per record (2x file)", (a_sec2 - a_sec) * 1024 / max(1, n2 - n),
        None, "<= 40", "B")
    pr, a_browser = probe(big)
    row("browser: first screen", pr["first_screen_s"], None, "<= 1 s", "s")
    row("browser: peak RssAnon (indexed, paged)", a_browser / 1024, None, "", "MB")
    row("browser: all indexed", pr["indexed_s"], t_dso, "", "s")
    if pr["pagedown_during_ms"] is not None:
        row("browser: page-down while indexing (median)", pr["pagedown_during_ms"], None,
            "<= 50 ms", "ms")
    row("browser: page-down after (median)", pr["pagedown_after_ms"], None, "<= 50 ms", "ms")
    t_pipe, a_pipe, rc3, _ = measure([*PERFTUI, "info", "-"], stdin=pipe)
    row("pipe mode info: RssAnon (2nd column: file mode)", a_pipe / 1024, a_info / 1024,
        "same as file", "MB")
    row("pipe mode info: time (2nd column: file mode)", t_pipe, t_info, "", "s")

    print(f"\nrecording: {big} ({size / 1e6:.0f} MB, {n:,} records, {planted:,} samples in "
          f"the demo modules' sections; 2x file: {n2:,} records); {os.cpu_count()} cores; "
          f"exit codes {rc1} {rc2} {rc3}\n")
    widths = [max(len(r[i]) for r in [("figure", "perftui", "perf 6.1", "ratio", "target"),
                                       *rows]) for i in range(5)]
    head = ("figure", "perftui", "perf 6.1", "ratio", "target")
    for r in [head, tuple("-" * w for w in widths), *rows]:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(r, widths, strict=True))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
