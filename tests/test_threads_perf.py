"""The thread and map model against perf 6.1 on recordings made here and now.

A fork/exec-heavy workload (pipelines, ``xargs``, nested shells, CPU-bound loops before and
after the execs) is recorded system-wide and per task, in file mode and through a real pipe,
and system-wide in directory mode (``--threads``), with callchains.  For every sample, in
perf's own order, perftui's (tid, time, comm) must equal ``perf script``'s, and the dso of
the sample ip and of every callchain frame must equal what perf prints.

The dso check runs twice.  With ``--kallsyms`` an empty file perf keeps the recording's own
kernel maps, and the match must be exact.  With perf's defaults it loads this machine's
kallsyms (and /proc/kcore, the recording's kernel build id being the running kernel's) and
stretches its kernel map beyond the recorded ``[kernel.kallsyms]_text`` MMAP, which ends at
``_etext``: kernel addresses past it (the idle tasks' ``start_kernel`` frames in
``.init.text``) are ``[kernel.kallsyms]`` to perf and unmapped in the recording.  Every
difference must be of that kind (perftui keeps the recorded kernel map).
"""

from __future__ import annotations

import shlex
import subprocess
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from perfprograms import shared
from threadplan import ModelSample, PerfSample, model_view, need_perf, perf_view

from perftui.perfdata import RecordType, open_recording
from perftui.perfdata.constants import Misc
from perftui.symbols.tasks.dsonames import MapKind
from perftui.symbols.tasks.maps import MapTable
from perftui.symbols.tasks.threads import ThreadModel

pytestmark = [pytest.mark.perf, pytest.mark.slow]

WORKLOAD = (
    "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done; "
    "find /usr/share -maxdepth 2 | head -600 | xargs -n 20 cat 2>/dev/null | gzip > /dev/null; "
    "for i in 1 2 3; do sh -c 'ls /usr/bin | wc -l > /dev/null; j=0; "
    "while [ $j -lt 6000 ]; do j=$((j+1)); done'; done; "
    "i=0; while [ $i -lt 10000 ]; do i=$((i+1)); done"
)
KINDS = {  # name: (perf record options, pipe mode)
    "system-file": (["-a"], False), "system-pipe": (["-a"], True),
    "task-file": ([], False), "task-pipe": ([], True),
    "system-dir": (["-a", "--threads"], False),  # a directory: data, data.0, data.1, ...
}


@pytest.fixture(scope="module")
def empty_kallsyms(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("kallsyms") / "empty"
    p.write_bytes(b"")
    return p


@pytest.fixture(scope="module", params=list(KINDS))
def recording(request: pytest.FixtureRequest, shared_dir: Path) -> tuple[str, Path]:
    """Each kind recorded once per run (:func:`perfprograms.shared`: every xdist worker
    takes the same recording)."""
    need_perf()
    kind = request.param
    extra, pipe = KINDS[kind]

    def make(d: Path, env: dict[str, str]) -> Path:
        out = d / f"{kind}.data"
        opts = ["-q", "-e", "cpu-clock", "-F", "2000", "-g", *extra]
        cmd = shlex.join(["perf", "record", *opts, "-o", "-" if pipe else str(out), "--",
                          "sh", "-c", WORKLOAD])
        if pipe:  # through a real pipe
            cmd = f"{cmd} | cat > {shlex.quote(str(out))}"
        p = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=300,
                           env=env)
        assert p.returncode == 0, p.stderr
        return out

    return kind, shared(shared_dir, f"test_threads_perf.recording\0{kind}", make)


_VIEWS: dict[tuple[Path, bool, bool], list[PerfSample]] = {}


def perf_cached(path: Path, callchain: bool, empty: Path | None) -> list[PerfSample]:
    """perf script's view of a recording, run once per (file, callchain, kallsyms)."""
    key = (path, callchain, empty is not None)
    if key not in _VIEWS:
        _VIEWS[key] = perf_view(path, callchain=callchain, kallsyms=empty)
    return _VIEWS[key]


def same_samples(perf: list[PerfSample], ours: list[ModelSample]) -> None:
    assert len(ours) == len(perf)
    assert [(s.tid, s.time) for s in ours] == [(s.tid, s.time) for s in perf]


def kernel_extent(path: Path) -> list[tuple[int, int]]:
    """The recording's kernel maps (what it mapped; perf stretches them when it loads
    symbols)."""
    rec = open_recording(path)
    rec.build_index()
    m = ThreadModel.build(rec)
    t: MapTable = m.maps
    return [(int(t.start[i]), int(t.end[i])) for i in range(len(t)) if int(t.obj[i]) == 0]


def test_comms_match_perf_script(recording: tuple[str, Path], empty_kallsyms: Path) -> None:
    kind, path = recording
    perf = perf_cached(path, False, empty_kallsyms)
    t0 = time.perf_counter()
    ours = model_view(path)
    took = time.perf_counter() - t0
    same_samples(perf, ours)
    wrong = [(p, o) for p, o in zip(perf, ours, strict=True) if p.comm != o.comm]
    assert not wrong[:5]
    comms = Counter(s.comm for s in ours)
    assert {"sh", "xargs", "gzip"} <= set(comms), comms  # the workload's execs were seen
    print(f"\n{kind}: {len(ours)} samples, comm 100% equal ({len(comms)} names); "
          f"model and view built in {took:.2f}s")


def test_sample_dsos_match_perf_script(recording: tuple[str, Path], empty_kallsyms: Path
                                       ) -> None:
    kind, path = recording
    ours = model_view(path)
    exact = perf_cached(path, False, empty_kallsyms)
    same_samples(exact, ours)
    assert [s.dso for s in ours] == [s.dso for s in exact]
    default = perf_cached(path, False, None)
    same_samples(default, ours)
    diff = Counter((p.dso, o.dso) for p, o in zip(default, ours, strict=True) if p.dso != o.dso)
    assert set(diff) <= {("[kernel.kallsyms]", "[unknown]")}, diff
    print(f"\n{kind}: sample dso 100% equal with the recorded kernel maps; perf's own kernel "
          f"map (kallsyms/kcore) differs on {sum(diff.values())} of {len(ours)}")


def test_callchain_dsos_match_perf_script(recording: tuple[str, Path], empty_kallsyms: Path
                                          ) -> None:
    kind, path = recording
    ours = model_view(path)
    exact = perf_cached(path, True, empty_kallsyms)
    same_samples(exact, ours)
    frames = sum(len(s.frames) for s in ours)
    assert frames > len(ours)  # -g: real chains
    assert [s.frames for s in ours] == [s.frames for s in exact]
    default = perf_cached(path, True, None)
    same_samples(default, ours)
    diff: Counter[tuple[str, str]] = Counter()
    for p, o in zip(default, ours, strict=True):
        assert len(p.frames) == len(o.frames)
        diff.update((a, b) for a, b in zip(p.frames, o.frames, strict=True) if a != b)
    assert set(diff) <= {("[kernel.kallsyms]", "[unknown]")}, diff
    print(f"\n{kind}: {frames} callchain frames, dso 100% equal with the recorded kernel "
          f"maps; perf's own kernel map differs on {sum(diff.values())}")


def test_differences_are_past_the_recorded_kernel_map(recording: tuple[str, Path]) -> None:
    """Where perf's default kernel map and the recording's disagree, the address is a kernel
    one that no kernel map of the recording covers (checked on the addresses themselves)."""
    kind, path = recording
    rec = open_recording(path)
    rec.build_index()
    m = ThreadModel.build(rec)
    rows = m.order[rec.columns["type"][m.order] == RecordType.SAMPLE]
    cc = m.callchain_maps(rows)
    frames = cc.frames()
    lost = frames & (cc.maps < 0) & (cc.modes == Misc.KERNEL)
    spans = kernel_extent(path)
    for ip in np.unique(cc.ips[lost]).tolist():
        assert not any(a <= ip < b for a, b in spans), hex(ip)
    kernel = np.flatnonzero(m.maps.kind == MapKind.KERNEL)  # every kernel map version
    assert len(kernel) >= 1
    print(f"\n{kind}: {int(lost.sum())} kernel frames outside the recorded kernel map "
          f"({len(np.unique(cc.ips[lost]))} addresses)")
