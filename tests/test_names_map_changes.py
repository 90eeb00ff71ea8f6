"""The same ip and callchain named again after the maps they fall in have changed
(``resolve_all`` over blocks of 1, 2, 3 and 65 K samples: the resolver's per-map tables and
translations, kept from block to block, must follow the maps).

The recording is hand-built (:class:`threadplan.Plan`): a user MMAP over the old one, another
process with the same addresses, a KSYMBOL registered then unregistered over a kernel
address.  The dso of every sample and frame is the plan's, worked out from perf 6.1's rules,
and perf 6.1 is run on the same file to agree with the plan.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from threadplan import Expect, Plan, perf_view

from perftui.perfdata import RecordType, open_recording
from perftui.perfdata.constants import CONTEXT_KERNEL, CONTEXT_USER, Misc
from perftui.symbols.naming.resolver import Resolver, SymbolOptions
from perftui.symbols.naming.samplelocs import SampleLocs, resolve_all

KERNEL_TEXT = 0xFFFFFFFF81000000
BPF = 0xFFFFFFFFC0000000
APP, OTHER, LIBC, B = "/opt/rawstacks/app", "/opt/rawstacks/other", \
    "/opt/rawstacks/libc.so", "/opt/rawstacks/b"
PROG = "bpf_prog_0123456789abcdef_hot"
UNKNOWN = "[unknown]"


def repeats() -> Plan:
    """The same raw stacks before and after their maps change (times ascending, one round:
    perf's order is the file's)."""
    p = Plan(callchain=True)
    p.comm(100, 100, "app", 1)
    p.mmap(-1, KERNEL_TEXT, 0x1000000, "[kernel.kallsyms]_text", 2, pgoff=KERNEL_TEXT,
           tid=0, kernel=True, v1=True)
    p.mmap(100, 0x400000, 0x10000, APP, 3)
    p.mmap(100, 0x7F0000000000, 0x200000, LIBC, 4)
    chain = [CONTEXT_USER, 0x400100, 0x7F0000000100]
    for t in (10, 11, 12):
        p.sample(100, 0x400100, t, Expect("app", APP, [APP, LIBC]), callchain=chain)
    p.mmap(100, 0x400000, 0x8000, OTHER, 20)  # over the front of app's map
    for t in (21, 22):
        p.sample(100, 0x400100, t, Expect("app", OTHER, [OTHER, LIBC]), callchain=chain)
    p.sample(100, 0x408100, 23, Expect("app", APP, [APP]), callchain=[CONTEXT_USER, 0x408100])
    p.comm(200, 200, "b", 24)  # another process: the same addresses, its own maps
    p.mmap(200, 0x400000, 0x10000, B, 25)
    p.sample(200, 0x400100, 26, Expect("b", B, [B, UNKNOWN]), callchain=chain)
    kchain = [CONTEXT_KERNEL, BPF + 0x10, CONTEXT_USER, 0x7F0000000100]
    kern = Misc.KERNEL
    p.sample(100, BPF + 0x10, 27, Expect("app", UNKNOWN, [UNKNOWN, LIBC]), cpumode=kern,
             callchain=kchain)
    p.ksymbol(BPF, 0x100, PROG, 28)
    for t in (29, 30):
        p.sample(100, BPF + 0x10, t, Expect("app", PROG, [PROG, LIBC]), cpumode=kern,
                 callchain=kchain)
    p.ksymbol(BPF, 0x100, PROG, 31, unregister=True)
    p.sample(100, BPF + 0x10, 32, Expect("app", UNKNOWN, [UNKNOWN, LIBC]), cpumode=kern,
             callchain=kchain)
    for t in (33, 34):
        p.sample(100, 0x400100, t, Expect("app", OTHER, [OTHER, LIBC]), callchain=chain)
    p.round()
    return p


@pytest.fixture
def recording(tmp_path: Path) -> tuple[Plan, Path, Path]:
    plan = repeats()
    empty = tmp_path / "empty.kallsyms"
    empty.write_bytes(b"")
    return plan, plan.write(tmp_path / "repeats.data"), empty


def resolved(path: Path, empty: Path, block: int) -> SampleLocs:
    """Every sample resolved in blocks of ``block``."""
    rec = open_recording(path)
    rec.build_index()
    res = Resolver(rec, SymbolOptions(kallsyms=str(empty)))
    rows = np.flatnonzero(rec.columns["type"] == RecordType.SAMPLE)
    return resolve_all(res, rows, callchains=True, block=block)


def dsos(sl: SampleLocs) -> list[tuple[str, str, list[str]]]:
    """(comm, dso, frame dsos) of every sample, as perf script shows them."""
    assert sl.stack is not None
    out = []
    for k in range(len(sl)):
        sid = int(sl.stack[k])
        locs = sl.stack_locs[sl.stack_starts[sid]:sl.stack_starts[sid + 1]].tolist()
        assert locs[0] == sl.leaf[k]
        names = [sl.locs.dso_name(int(loc), short=False) for loc in locs]
        out.append((sl.comm_names[int(sl.comm[k])], names[0], names[1:]))
    return out


@pytest.mark.parametrize("block", [1, 2, 3, 1 << 16])
def test_names_are_the_plans(recording: tuple[Plan, Path, Path], block: int) -> None:
    plan, path, empty = recording
    sl = resolved(path, empty, block)
    assert dsos(sl) == [(e.comm, e.dso, e.frames) for _t, _tm, e in plan.expect]


@pytest.mark.perf
def test_perf_agrees_with_the_plan(recording: tuple[Plan, Path, Path]) -> None:
    plan, path, empty = recording
    got = perf_view(path, callchain=True, kallsyms=empty)
    assert [(s.comm, s.frames) for s in got] == [(e.comm, e.frames)
                                                 for _t, _tm, e in plan.expect]

