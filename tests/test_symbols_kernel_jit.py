"""Kernel symbols (kallsyms) and JIT perf maps against perf 6.1 on fresh recordings, plus
parser rules checked on hand-written text (the expected values are perf's rules, written
out by hand)."""

from __future__ import annotations

import glob
import os
from pathlib import Path

import numpy as np
import pytest
from perfprograms import Built, perf_script_samples
from testapi import name_at

from conftest import skip_or_fail
from perftui.perfdata import Feature, RecordType, open_recording
from perftui.symbols.files.safefile import SymbolFileError
from perftui.symbols.naming.resolver import Resolver, SymbolOptions
from perftui.symbols.tables.kallsyms import (
    cached_kallsyms_path,
    load_kallsyms,
    parse_kallsyms,
    running_kernel_build_id,
    running_kernel_matches,
)
from perftui.symbols.tables.perfmap import load_perf_map, parse_perf_map, perf_map_path

KALLSYMS_TEXT = """\
ffffffff81000000 T _text
ffffffff81000000 T _stext
ffffffff81000010 t local_func
ffffffff81000020 W weak_func
ffffffff81000030 r rodata_thing
ffffffff81000040 D data_thing
ffffffff81000050 A absolute_thing
ffffffff81000060 T $x
ffffffff81000070 T last_core
not a line at all
ffffffffc0001000 t mod_init\t[mymod]
ffffffffc0001020 T mod_work\t[mymod]
ffffffffc0002000 t other_fn\t[othermod]
"""


def test_kallsyms_rules() -> None:
    k = parse_kallsyms(KALLSYMS_TEXT, "test")
    t = k.kernel
    # types T t W D kept, r A dropped, "$" names dropped; one name per address: _text and
    # _stext tie on everything but length, and perf keeps the longer name
    assert t.names == ["_stext", "local_func", "weak_func", "data_thing", "last_core"]
    assert k.skipped == 1 and k.filtered == 2
    # ends: the next symbol's start; the last core symbol before the modules ends at
    # roundup(start + 4096, 4096)
    assert int(t.ends[0]) == 0xFFFFFFFF81000010
    assert int(t.ends[-1]) == 0xFFFFFFFF81002000
    assert name_at(t, 0xFFFFFFFF81000015) == ("local_func", 5)
    assert set(k.modules) == {"mymod", "othermod"}
    assert k.modules["mymod"].names == ["mod_init", "mod_work"]
    assert name_at(k.modules["mymod"], 0xFFFFFFFFC0001024) == ("mod_work", 4)
    assert int(k.modules["othermod"].ends[0]) == 0xFFFFFFFFC0003000  # last: page past
    # _text lost the tie, but perf finds the relocation symbol in the raw text
    assert k.address_of("_text") == 0xFFFFFFFF81000000
    assert k.relocation(0xFFFFFFFF80000000) == 0x1000000


def test_kallsyms_restricted_is_a_clear_error() -> None:
    text = "0000000000000000 T _text\n0000000000000000 t foo\n"
    with pytest.raises(SymbolFileError, match="kptr_restrict"):
        parse_kallsyms(text, "/proc/kallsyms")


def test_running_kernel_build_id_matches_proc() -> None:
    bid = running_kernel_build_id()
    if bid is None:
        skip_or_fail("no /sys/kernel/notes: the running kernel's build id is unknown")
    assert running_kernel_matches(bid)
    assert not running_kernel_matches("00" * 20)
    assert running_kernel_matches(None, os.uname().release)
    assert cached_kallsyms_path("../../etc") is None  # only hex makes a cache path


def test_parse_proc_kallsyms() -> None:
    k = load_kallsyms("/proc/kallsyms")
    assert len(k.kernel) > 1000
    assert k.address_of("_stext") is not None or k.address_of("_text") is not None


def test_kernel_samples_match_perf(recorded) -> None:
    # system-wide while dd makes ~10^6 small read/write calls: kernel samples however busy
    # the machine is (with hotprog, a user-space spin, a CI run with both CPUs busy had 5)
    data = recorded("system-dd", Path("/bin/dd"), "if=/dev/zero", "of=/dev/null", "bs=64",
                    "count=1000000", system_wide=True)
    rec = open_recording(data)
    rec.build_index()
    bids = {b["filename"]: b["build_id"] for b in rec.feature(Feature.BUILD_ID) or []}
    if not running_kernel_matches(bids.get("[kernel.kallsyms]")):
        skip_or_fail("the recorded kernel is not the running one")
    k = load_kallsyms("/proc/kallsyms")
    text = None
    ours: dict[tuple[int, int], tuple[str | None, int | None]] = {}
    for i in range(len(rec)):
        d = rec.decode(i)
        if d["type"] == "MMAP" and d["filename"] == "[kernel.kallsyms]_text":
            text = d["pgoff"]
        elif d["type"] == "SAMPLE" and d["cpumode"] == 1:
            delta = k.relocation(text) if text is not None else 0
            r = name_at(k.kernel, d["ip"] + delta)
            ours[(d["time"], d["ip"])] = (None, None) if r is None else r
    rec.close()
    total = same = 0
    diffs = []
    for s in perf_script_samples(data):
        if s.dso != "[kernel.kallsyms]" or (s.time_ns, s.ip) not in ours:
            continue
        total += 1
        if ours[(s.time_ns, s.ip)] == (s.sym, s.symoff):
            same += 1
        else:
            diffs.append(f"{s.ip:#x}: perftui {ours[(s.time_ns, s.ip)]}, perf {s.sym}+{s.symoff}")
    print(f"kernel sample ips: {same}/{total} named as perf does")
    assert total > 5  # a short system-wide run: a few hundred at most
    assert same == total, diffs[:10]


def test_perf_map_rules() -> None:
    text = ("1000 10 alpha\n"
            "0x2000 0x20 beta with spaces\n"
            "garbage\n"  # strtoull: start 0 (no digits), size 0xa ("a"), name "bage"
            "3000 8 ab\n"  # a name of fewer than three characters: skipped
            "4000 0 zero\n"
            "ok\n"  # too short: skipped
            "5000 10 last")  # no final newline: perf drops the last character anyway
    m = parse_perf_map(text)
    assert m.table.names == ["bage", "alpha", "beta with spaces", "zero", "las"]
    assert m.skipped == 2
    assert name_at(m.table, 0x100F) == ("alpha", 0xF)
    assert name_at(m.table, 0x1010) is None
    assert name_at(m.table, 0x4000) == ("zero", 0)  # zero size: its start only
    assert name_at(m.table, 0x4001) is None
    assert perf_map_path(42, "/x") == "/x/perf-42.map"


def test_jit_samples_match_perf(built: Built, recorded) -> None:
    data = recorded("jit", built.jitprog, "1")
    rec = open_recording(data)
    rec.build_index()
    anon: list[tuple[int, int, int]] = []
    samples = []
    for i in range(len(rec)):
        d = rec.decode(i)
        if d["type"] == "MMAP2" and d["filename"] == "//anon" and d["prot"] & 4:
            anon.append((d["pid"], d["addr"], d["addr"] + d["len"]))
        elif d["type"] == "SAMPLE" and d["cpumode"] == 2:
            samples.append((d["pid"], d["time"], d["ip"]))
    rec.close()
    assert anon
    pid = anon[0][0]
    try:
        pm = load_perf_map(pid, "/tmp")
        ours = {}
        for p, t, ip in samples:
            if any(p == a and s <= ip < e for a, s, e in anon):
                r = name_at(pm.table, ip)
                ours[(t, ip)] = (None, None) if r is None else r
        theirs = [s for s in perf_script_samples(data) if s.dso == perf_map_path(pid)]
        # the one resolver (thread/map model + perf map) names them the same
        rec = open_recording(data)
        rec.build_index()
        res = Resolver(rec, SymbolOptions())
        rows = np.nonzero(rec.columns["type"] == RecordType.SAMPLE)[0]
        rs = res.samples(rows, callchains=False)
        by_key = {}
        for k in range(len(rs)):
            loc = int(rs.leaf[k])
            name = res.locs.name[loc]
            by_key[(int(rs.time[k]), int(rec.sample_values(rows[k:k + 1], "ip")[0]))] = (
                name, int(rs.leaf_off[k]) if name is not None else None,
                res.locs.dsos[res.locs.dso[loc]].name)
    finally:
        for f in glob.glob(perf_map_path(pid, "/tmp")):
            Path(f).unlink()
    assert len(theirs) > 100
    counts = {"jit_alpha": 0, "jit_beta [jitted]": 0}
    for s in theirs:
        assert ours[(s.time_ns, s.ip)] == (s.sym, s.symoff)
        assert by_key[(s.time_ns, s.ip)] == (s.sym, s.symoff, s.dso)
        counts[s.sym or ""] = counts.get(s.sym or "", 0) + 1
    assert counts["jit_alpha"] > counts["jit_beta [jitted]"] > 0
