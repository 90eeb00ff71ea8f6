"""The perf.data/ directory format (perf record --threads): data, then data.N by time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import skip_or_fail
from perftui.analysis.summary import record_counts
from perftui.perfdata import open_recording

WORK = "i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done"


def perf_stats(path: Path) -> dict[str, int]:
    out = subprocess.run(["perf", "report", "-f", "--stats", "-i", str(path)],
                         capture_output=True, text=True, timeout=120).stdout
    got = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "events:" and parts[0] != "TOTAL":
            got[parts[0]] = int(parts[2])
        if "stats:" in line and "Aggregated" not in line:
            break
    return got


@pytest.mark.perf
@pytest.mark.parametrize("compress", [False, True], ids=["plain", "zstd"])
def test_directory_recording_matches_perf(tmp_path: Path, compress: bool) -> None:
    out = tmp_path / "rec"
    cmd = ["perf", "record", "-q", "--threads", "-e", "cpu-clock", "-F", "2000", "-g",
           "-o", str(out)] + (["-z"] if compress else []) + ["--", "sh", "-c", WORK]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0 or not (out / "data").is_file():
        skip_or_fail(f"perf record --threads failed here: {r.stderr.strip()[:200]}")
    rec = open_recording(out)
    rec.build_index()
    assert rec.mode == "directory" and rec.errors == []
    assert record_counts(rec) == perf_stats(out)
    # dump: data first, then data.N merged by time
    p = subprocess.run([sys.executable, "-m", "perftui", "dump", "--json", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    files = [x["file"] for x in rows]
    assert files[0] == "data" and files.index("data") == 0
    first_other = next(i for i, f in enumerate(files) if f != "data")
    assert all(f == "data" for f in files[:first_other])
    assert all(f != "data" for f in files[first_other:])
    times = [x.get("time", x.get("sample_id", {}).get("time")) for x in rows[first_other:]]
    times = [t for t in times if t]
    assert times == sorted(times)
    assert np.all(np.diff(rec.columns["time"][rec.merged_order()][first_other:]
                          .astype(np.int64)) >= 0)
