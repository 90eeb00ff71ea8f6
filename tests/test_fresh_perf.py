"""Differential tests on recordings made here and now with ``perf record`` (needs perf).

Each recording runs a short shell loop (well under a second) and is made once per session.
perftui must count, place and decode every record as perf itself does (helpers and oracles
from ``test_differential``).
"""

from __future__ import annotations

import shlex
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from perfprograms import shared
from test_differential import (
    as_perf_counts,
    compare_samples,
    independent_walk,
    indexed,
    named,
    perf_dump,
    perf_script,
    perf_stats,
)

from conftest import skip_or_fail
from perftui.analysis.summary import info_dict, record_counts
from perftui.perfdata import open_recording, type_code, type_name

pytestmark = pytest.mark.perf

WORKLOAD = "i=0; while [ $i -lt 60000 ]; do i=$((i+1)); done"
# --no-bpf-event saves perf record ~1 s of side-band thread shutdown; "plain" keeps perf's
# defaults: perf record -e cpu-clock -F 2000 -g -- sh -c LOOP
KINDS: dict[str, tuple[list[str], bool]] = {  # name: (perf record options, pipe mode)
    "plain": (["-e", "cpu-clock", "-F", "2000", "-g"], False),
    "pipe": (["--no-bpf-event", "-e", "cpu-clock", "-F", "2000", "-g"], True),
    "zstd": (["--no-bpf-event", "-z", "-e", "cpu-clock", "-F", "2000", "-g"], False),
    "two-events": (["--no-bpf-event", "-e", "cpu-clock,task-clock", "-F", "2000",
                    "--sample-cpu"], False),
    "pipe-zstd": (["--no-bpf-event", "-z", "-e", "cpu-clock", "-F", "2000", "-g"], True),
}
# perf 6.1's `report --stats` tool has no feature handler, so in pipe mode it never learns the
# COMPRESSED feature's mmap_len and stops: "Couldn't decompress data ... failed to process type:
# 81".  perf report -D and perf script read the same file in full; they are the oracles there.
STATS_CANNOT = {"pipe-zstd"}


@pytest.fixture(scope="session", params=list(KINDS))
def fresh(request: pytest.FixtureRequest, shared_dir: Path) -> tuple[str, Path]:
    """Each kind recorded once per run (:func:`perfprograms.shared`: every xdist worker
    takes the same recording)."""
    kind = request.param
    opts, pipe = KINDS[kind]
    workload = ["--", "sh", "-c", WORKLOAD]

    def make(d: Path, env: dict[str, str]) -> Path:
        out = d / f"{kind}.data"
        if pipe:  # through a real pipe, as perf users do (docs/format.md, "Pipe mode")
            cmd = shlex.join(["perf", "record", "-q", *opts, "-o", "-", *workload])
            p = subprocess.run(f"{cmd} | cat > {shlex.quote(str(out))}", shell=True,
                               capture_output=True, text=True, timeout=60, env=env)
        else:
            p = subprocess.run(["perf", "record", "-q", *opts, "-o", str(out), *workload],
                               capture_output=True, text=True, timeout=60, env=env)
        if p.returncode != 0 or not out.exists() or out.stat().st_size < 200:
            skip_or_fail(f"perf record {kind} failed (rc {p.returncode}): "
                         f"{p.stderr.strip()[-300:]}")
        return out

    return kind, shared(shared_dir, f"test_fresh_perf.fresh\0{kind}", make)


def test_fresh_counts_match_perf_stats(fresh: tuple[str, Path]) -> None:
    kind, path = fresh
    rec = indexed(path)
    assert rec.errors == []
    counts = record_counts(rec)
    assert counts["SAMPLE"] > 0
    if kind in STATS_CANNOT:  # perf -D's records + the COMPRESSED ones it does not dump
        dumped, _ = perf_dump(path)
        expected: Counter[str] = Counter()
        for (_o, _s, t), n in dumped.items():
            expected[type_name(t)] += n
        expected["COMPRESSED"] = independent_walk(path.read_bytes())[0][type_code("COMPRESSED")]
        assert counts == expected
        return
    agg, per_event = perf_stats(path)
    assert as_perf_counts(counts) == agg
    assert sorted(e["samples"] for e in info_dict(rec)["events"] if e["samples"]) == \
        [n for n in per_event if n]
    assert ("COMPRESSED" in counts) == ("zstd" in kind)


def test_fresh_records_match_perf_dump(fresh: tuple[str, Path]) -> None:
    """Every record's (offset, size, type) as perf report -D prints it (no line for the
    COMPRESSED records themselves: their contents carry their offset)."""
    _kind, path = fresh
    rec = indexed(path, spill=True)
    assert rec.errors == []
    c = rec.columns
    compressed = type_code("COMPRESSED")
    ours = Counter((rec.outer_offset(i), int(c["size"][i]), int(c["type"][i]))
                   for i in range(len(rec)) if int(c["type"][i]) != compressed)
    theirs, _ = perf_dump(path)
    assert ours == theirs
    counts, _stop = independent_walk(path.read_bytes())
    assert named(counts) == record_counts(rec)


def test_fresh_samples_match_perf_script(fresh: tuple[str, Path]) -> None:
    kind, path = fresh
    samples = perf_script(path)
    assert samples
    if kind == "two-events":
        assert {s["event"] for s in samples} == {"cpu-clock", "task-clock"}
        assert all("cpu" in s for s in samples)
    compare_samples(path, samples, {})


def test_fresh_callchains_match_perf_dump(fresh: tuple[str, Path]) -> None:
    kind, path = fresh
    _, theirs = perf_dump(path)
    decoded = open_recording(str(path), spill=False).records()
    ours = Counter((d["offset"], tuple(d["callchain"])) for d in decoded
                   if d["type"] == "SAMPLE" and "callchain" in d)
    if "-g" in KINDS[kind][0]:
        assert sum(theirs.values()) > 0
    else:  # recorded without -g: neither perf nor perftui finds a callchain
        assert sum(theirs.values()) == 0
    assert ours == theirs

