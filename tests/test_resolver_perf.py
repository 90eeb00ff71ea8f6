"""The one resolver (thread/map model + symbol sources) against ``perf script`` (perf 6.1).

For every SAMPLE ip and every callchain entry perf prints, perftui's (sym, symoff, dso)
must equal perf's: on the C program (PIE, its own shared library, frame pointers), the C++
program (demangling), a recording without -g, and a fresh system-wide ``-a -g`` run of a
fork/exec-heavy workload.  Match rates are printed; the expectations are exact.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from perfprograms import Built, perf_script_samples, require, shared

from perftui.perfdata import RecordType, open_recording
from perftui.symbols.naming.resolved import ResolvedSamples
from perftui.symbols.naming.resolver import Resolver, SymbolOptions

pytestmark = pytest.mark.perf

Frame = tuple[str | None, int | None, str]


def resolved(data: Path, opts: SymbolOptions | None = None
             ) -> tuple[Resolver, ResolvedSamples]:
    rec = open_recording(data)
    rec.build_index()
    r = Resolver(rec, opts or SymbolOptions())
    rows = np.nonzero(rec.columns["type"] == RecordType.SAMPLE)[0]
    return r, r.samples(rows)


def frame_of(r: Resolver, loc: int, off: int) -> Frame:
    name = r.locs.name[loc]
    dso = r.locs.dsos[r.locs.dso[loc]].name
    return (name, off if name is not None else None, dso)


def ours_by_key(r: Resolver, s: ResolvedSamples
                ) -> dict[tuple[int, int], list[tuple[Frame, list[Frame]]]]:
    """(tid, time) -> [(leaf, frames)] (several samples can share a key)."""
    out: dict[tuple[int, int], list[tuple[Frame, list[Frame]]]] = {}
    starts = np.asarray(s.chain_starts)
    for k in range(len(s)):
        leaf = frame_of(r, int(s.leaf[k]), int(s.leaf_off[k]))
        frames = [frame_of(r, int(s.chain_locs[j]), int(s.chain_offs[j]))
                  for j in range(int(starts[k]), int(starts[k + 1]))]
        out.setdefault((int(s.tid[k]), int(s.time[k])), []).append((leaf, frames))
    return out


def compare(data: Path, callchain: bool) -> tuple[int, int, int, int, list[str]]:
    """(leaf total, leaf same, frame total, frame same, differences)."""
    r, s = resolved(data)
    ours = ours_by_key(r, s)
    theirs = perf_script_samples(data, callchain=callchain)
    lt = ls = ft = fs = 0
    diffs: list[str] = []
    seen: dict[tuple[int, int], int] = {}
    for p in theirs:
        key = (p.tid, p.time_ns)
        k = seen.get(key, 0)
        seen[key] = k + 1
        got = ours.get(key, [])
        if k >= len(got):
            diffs.append(f"{key}: perftui has no such sample")
            continue
        leaf, frames = got[k]
        if not callchain:
            lt += 1
            want = (p.sym, p.symoff, p.dso)
            if leaf == want:
                ls += 1
            else:
                diffs.append(f"{key} leaf: perftui {leaf}, perf {want}")
            continue
        if len(frames) != len(p.frames):
            diffs.append(f"{key}: {len(frames)} frames, perf {len(p.frames)}")
        for mine, (ip, sym, off, dso) in zip(frames, p.frames, strict=False):
            ft += 1
            if mine == (sym, off, dso):
                fs += 1
            else:
                diffs.append(f"{key} frame {ip:#x}: perftui {mine}, perf {(sym, off, dso)}")
    return lt, ls, ft, fs, diffs


@pytest.mark.parametrize("which", ["hotprog", "hotcxx"])
def test_program_samples_and_frames(built: Built, recorded, which: str) -> None:
    prog = getattr(built, which)
    data = recorded(which, prog, "5")
    lt, ls, _, _, diffs = compare(data, callchain=False)
    print(f"{which}: sample ips {ls}/{lt}")
    assert lt > 300 and ls == lt, diffs[:10]
    _, _, ft, fs, diffs = compare(data, callchain=True)
    print(f"{which}: callchain entries {fs}/{ft}")
    assert ft > lt and fs == ft and not diffs, diffs[:10]


def test_without_callchains(built: Built, recorded) -> None:
    data = recorded("hotprog_nog", built.hotprog, "3", callgraph=False)
    lt, ls, _, _, diffs = compare(data, callchain=False)
    print(f"hotprog without -g: sample ips {ls}/{lt}")
    assert lt > 300 and ls == lt, diffs[:10]


WORKLOAD = ("find /usr/share/doc -maxdepth 2 2>/dev/null | xargs -n 40 cat 2>/dev/null "
            "| gzip > /dev/null; for i in 1 2 3; do sh -c 'ls /usr/bin | wc -l' >/dev/null; "
            "done; {prog} 1")


@pytest.fixture(scope="module")
def system_wide(built: Built, shared_dir: Path) -> Path:
    """A system-wide -a -g recording of WORKLOAD, made once per run."""
    perf = require("perf")
    work = WORKLOAD.format(prog=built.hotprog)

    def make(d: Path, env: dict[str, str]) -> Path:
        out = d / "sys.data"
        cmd = [perf, "record", "-q", "-a", "-g", "-e", "cpu-clock", "-F", "2000", "-o",
               str(out), "--", "sh", "-c", work]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=d, env=env)
        if p.returncode != 0 or not out.exists():
            pytest.fail(f"perf record -a failed: {p.stderr[-400:]}")
        return out

    return shared(shared_dir, f"test_resolver_perf.system_wide\0{work}", make)


def test_system_wide(system_wide: Path) -> None:
    """Every frame perf prints for a system-wide -a -g run: the same symbol and dso."""
    _, _, ft, fs, diffs = compare(system_wide, callchain=True)
    print(f"system-wide: callchain entries {fs}/{ft} ({100 * fs / max(ft, 1):.3f}%)")
    for d in diffs[:20]:
        print("  ", d)
    assert ft > 1000
    assert fs == ft and not diffs


def test_dump_json_names_equal_perf_script(built: Built, recorded) -> None:
    """``perftui dump --json``: every SAMPLE's comm, dso, sym, symoff and frames (leaf first,
    markers left out) as perf script prints them."""
    import contextlib
    import io
    import json

    from perftui.cli import main as perftui_main

    data = recorded("hotprog", built.hotprog, "3")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert perftui_main(["dump", str(data), "--json", "--type", "SAMPLE"]) == 0
    mine = {}
    for line in buf.getvalue().splitlines():
        d = json.loads(line)
        mine.setdefault((d["tid"], d["time"]), []).append(d)
    theirs = perf_script_samples(data, callchain=True)
    assert len(theirs) == sum(map(len, mine.values())) > 300
    seen: dict[tuple[int, int], int] = {}
    for p in theirs:
        k = seen.get((p.tid, p.time_ns), 0)
        seen[(p.tid, p.time_ns)] = k + 1
        d = mine[(p.tid, p.time_ns)][k]
        assert [(f["sym"], f["symoff"], f["dso"]) for f in d["frames"]] == \
            [(sym, off, dso) for _ip, sym, off, dso in p.frames]
        assert (d["sym"], d["symoff"], d["dso"]) == \
            (d["frames"][0]["sym"], d["frames"][0]["symoff"], d["frames"][0]["dso"])
        assert d["comm"] == "hotprog"
