"""Tracepoint fields read by the recording's own format files (issue 30): sched_switch's
``prev_pid``, ``prev_state``, ``next_pid``, ... wherever a kernel put them.

Oracles: perf 6.1 ``script -F trace`` on a fresh ``-e sched:sched_switch`` recording (kernel
here) and on the corpus's uprobe recording (kernel 4.9); the plan of a hand-made recording
whose format is a 2.6-era sched_switch (``common_lock_depth`` moved every field by 4, no
``signed:``), in both byte orders.  Hostile: a cut tracing-data blob, an unreadable field
line, a RAW record too short for a field.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from perfprograms import require, shared

from conftest import corpus_path, skip_or_fail
from perftui.perfdata import EventAttr, RecordType, Sample, open_recording
from perftui.perfdata.constants import Feature
from perftui.perfdata.rawfields import raw_spans
from perftui.perfdata.recording import Recording
from perftui.perfdata.schemas import TRACING_DATA
from perftui.perfdata.tracefmt import flag_letters, parse_format
from perftui.perfdata.writer import Writer

OFFCPU_C = Path(__file__).parent / "programs" / "offcpu.c"

# sched_switch as 2.6.32 wrote it: common_lock_depth at 8, so prev_comm at 12, prev_state at 40
OLD_SWITCH = """name: sched_switch
ID: 57
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;
\tfield:int common_pid;\toffset:4;\tsize:4;
\tfield:int common_lock_depth;\toffset:8;\tsize:4;

\tfield:char prev_comm[TASK_COMM_LEN];\toffset:12;\tsize:16;
\tfield:pid_t prev_pid;\toffset:28;\tsize:4;
\tfield:int prev_prio;\toffset:32;\tsize:4;
\tfield:long prev_state;\toffset:40;\tsize:8;
\tfield:char next_comm[TASK_COMM_LEN];\toffset:48;\tsize:16;
\tfield:pid_t next_pid;\toffset:64;\tsize:4;
\tfield:int next_prio;\toffset:68;\tsize:4;

print fmt: "task %s:%d [%d] (%s) ==> %s:%d [%d]", REC->prev_comm, REC->prev_pid, \
REC->prev_prio, REC->prev_state ? __print_flags(REC->prev_state, "|", { 1, "S"} , { 2, "D" }, \
{ 4, "T" }, { 8, "t" }, { 16, "Z" }, { 32, "X" }, { 64, "x" }, { 128, "W" }) : "R", \
REC->next_comm, REC->next_pid, REC->next_prio
"""
TRACE = re.compile(r"(\w+)=(\S*)")


def tracing_blob(formats: list[bytes], order: str = "<", system: bytes = b"sched") -> bytes:
    return bytes(TRACING_DATA.build({
        "version": b"0.6", "big_endian": int(order == ">"), "long_size": 8, "page_size": 4096,
        "header_page": b"", "header_event": b"", "ftrace_formats": [],
        "systems": [{"name": system, "formats": formats}]}))


def switch_attr(ident: int) -> EventAttr:
    st = Sample.IP | Sample.TID | Sample.TIME | Sample.CALLCHAIN | Sample.CPU | \
        Sample.PERIOD | Sample.RAW
    return EventAttr(type=2, size=128, config=ident, sample_period=1, sample_type=int(st),
                     flags=1 << 18, ids=[])


def indexed(path: Path) -> Recording:
    rec = open_recording(str(path))
    rec.build_index()
    return rec


def sample_rows(rec: Recording) -> np.ndarray:
    return np.flatnonzero(rec.columns["type"][:len(rec.columns)] == RecordType.SAMPLE)


def old_switch_raw(order: str, prev: int, state: int, nxt: int, prio: int) -> bytes:
    raw = bytearray(72)
    raw[0:8] = np.array([57], order + "u2").tobytes() + bytes(2) + \
        np.array([prev], order + "i4").tobytes()
    raw[12:20] = b"prevcomm"
    raw[28:36] = np.array([prev, prio], order + "i4").tobytes()
    raw[40:48] = np.array([state], order + "i8").tobytes()
    raw[48:52] = b"next"
    raw[64:72] = np.array([nxt, prio + 1], order + "i4").tobytes()
    return bytes(raw) + bytes(4)  # (the kernel pads RAW so the record stays 8-aligned)


@pytest.mark.parametrize("order", ["<", ">"])
def test_old_kernel_layout_read_by_its_format(tmp_path: Path, order: str) -> None:
    plan = [(100 + k, [0, 1, 2, 1, 0, 64][k % 6], 200 + k, 110 + k % 3) for k in range(40)]
    path = tmp_path / "old.data"
    with open(path, "wb") as f:
        w = Writer(f, [switch_attr(57)], {Feature.TRACING_DATA: tracing_blob(
            [OLD_SWITCH.encode()], order)}, order=order)
        for k, (prev, state, nxt, prio) in enumerate(plan):
            w.write(w.b.sample({"ip": 0xFFFFFFFF81000000 + k, "pid": prev, "tid": prev,
                                "time": 10**9 + k * 1000, "cpu": 0, "period": 1,
                                "callchain": [0xFFFFFFFFFFFFFF80, 0xFFFFFFFF81000000 + k][:k % 3],
                                "raw": old_switch_raw(order, prev, state, nxt, prio)}))
        w.close()
    rec = indexed(path)
    assert not rec.warnings
    fmt = rec.trace_formats[57]
    assert fmt.name == "sched:sched_switch" and not fmt.problems
    assert fmt.fields["prev_state"].offset == 40 and fmt.fields["prev_state"].signed
    assert fmt.fields["prev_comm"].array and not fmt.fields["common_type"].signed
    assert rec.attrs[0].display_name == "sched:sched_switch"
    spans = raw_spans(rec, sample_rows(rec))
    got = {n: spans.field(rec, fmt.fields[n]) for n in ("prev_pid", "prev_state", "next_pid",
                                                          "next_prio", "common_type")}
    for n, k in (("prev_pid", 0), ("prev_state", 1), ("next_pid", 2)):
        assert got[n][1].all() and got[n][0].tolist() == [p[k] for p in plan], n
    assert got["next_prio"][0].tolist() == [p[3] + 1 for p in plan]
    assert set(got["common_type"][0].tolist()) == {57}
    table = fmt.flags("prev_state")
    assert table[:3] == [(1, "S"), (2, "D"), (4, "T")] and len(table) == 8
    assert [flag_letters(s, table) for s in (0, 1, 2, 3, 64, 256)] == \
        ["R", "S", "D", "S|D", "x", "R+"]


def test_hostile_tracing_data_and_records(tmp_path: Path) -> None:
    bad_line = OLD_SWITCH.replace("offset:28;\tsize:4;", "offset:2x8;\tsize:4;")
    fmt = parse_format(bad_line, "sched")
    assert fmt is not None and "prev_pid" not in fmt.fields
    assert len(fmt.problems) == 1 and "prev_pid" in fmt.problems[0]
    assert fmt.fields["prev_state"].offset == 40  # the other lines still read
    assert parse_format("format:\n", "sched") is None
    path = tmp_path / "short.data"
    with open(path, "wb") as f:
        w = Writer(f, [switch_attr(57)], {Feature.TRACING_DATA: tracing_blob(
            [OLD_SWITCH.encode()])})
        for k, cut in enumerate((76, 40, 44, 0)):  # RAW of 76 bytes (whole), 40, 44, none
            w.write(w.b.sample({"ip": 1, "pid": 7, "tid": 7, "time": 10 + k, "cpu": 0,
                                "period": 1, "callchain": [],
                                "raw": old_switch_raw("<", 7, 1, 8, 120)[:cut]}))
        w.close()
    rec = indexed(path)
    spans = raw_spans(rec, sample_rows(rec))
    assert spans.size.tolist() == [76, 40, 44, 0]
    vals, ok = spans.field(rec, rec.trace_formats[57].fields["prev_state"])
    assert ok.tolist() == [True, False, False, False] and vals[0] == 1
    vals, ok = spans.field(rec, rec.trace_formats[57].fields["prev_pid"])
    assert ok.tolist() == [True, True, True, False] and vals[:3].tolist() == [7, 7, 7]
    cut = tmp_path / "cut.data"
    with open(cut, "wb") as f:
        w = Writer(f, [switch_attr(57)], {Feature.TRACING_DATA: tracing_blob(
            [OLD_SWITCH.encode()])[:-30]})
        w.write(w.b.sample({"ip": 1, "pid": 7, "tid": 7, "time": 10, "cpu": 0, "period": 1,
                            "callchain": [], "raw": b""}))
        w.close()
    rec = indexed(cut)
    assert not rec.trace_formats and len(rec.warnings) == 1
    assert re.fullmatch(r"offset \d+: tracing data: .+", rec.warnings[0])


def test_uprobe_of_kernel_4_9_as_perf_prints_it() -> None:
    path = corpus_path("perfparser/probe.data.file")
    if not path.is_file():
        skip_or_fail(f"{path} is not there")
    rec = indexed(path)
    fmt = next(iter(f for f in rec.trace_formats.values() if f.name == "probe_untitled1:main"))
    vals, ok = raw_spans(rec, sample_rows(rec)).field(rec, fmt.fields["__probe_ip"])
    out = subprocess.run([require("perf"), "script", "-f", "-i", str(path), "-F", "trace"],
                         capture_output=True, text=True, check=True).stdout
    perf_ips = [int(m, 16) for m in re.findall(r"\(([0-9a-f]+)\)", out)]
    assert ok.all() and vals.tolist() == perf_ips and len(perf_ips) == 1


def record_offcpu(d: Path, env: dict[str, str], *perf_args: str,
                  cflags: tuple[str, ...] = ()) -> Path:
    """The off-CPU program built here (with ``cflags`` too) and recorded with ``perf record
    PERF_ARGS``."""
    perf, cc = require("perf"), require("cc")
    prog = d / "offcpu"
    subprocess.run([cc, "-O1", "-g", "-fno-omit-frame-pointer", *cflags, "-o", str(prog),
                    str(OFFCPU_C)], check=True, capture_output=True)
    data = d / "offcpu.data"
    p = subprocess.run([perf, "record", "-q", *perf_args, "-o", str(data), "--", str(prog)],
                       cwd=d, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        skip_or_fail(f"perf record {' '.join(perf_args)}: {p.stderr.strip()[-300:]}")
    return data


def switch_recording(shared_dir: Path) -> Path:
    """cpu-clock and sched:sched_switch with callchains and --switch-events."""
    return shared(shared_dir, "offcpu sw", lambda d, env: record_offcpu(
        d, env, "-e", "cpu-clock", "-e", "sched:sched_switch", "-g", "--switch-events"))


@pytest.mark.perf
def test_sched_switch_fields_as_perf_script_prints_them(shared_dir: Path) -> None:
    data = switch_recording(shared_dir)
    out = subprocess.run([require("perf"), "script", "-i", str(data), "--ns", "-F",
                          "tid,time,event,trace"], capture_output=True, text=True,
                         check=True).stdout
    want = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\d+)\s+(\d+)\.(\d+): sched:sched_switch: (.*)", line)
        if m:
            f = dict(TRACE.findall(m[4]))
            want[(int(m[2]) * 10**9 + int(m[3]), int(m[1]))] = (
                int(f["prev_pid"]), int(f["prev_prio"]), f["prev_state"], int(f["next_pid"]),
                int(f["next_prio"]))
    rec = indexed(data)
    fmt = next(f for f in rec.trace_formats.values() if f.name == "sched:sched_switch")
    rows = sample_rows(rec)
    rows = rows[rec.columns["attr"][rows] == next(
        k for k, a in enumerate(rec.attrs) if a.display_name == "sched:sched_switch")]
    spans = raw_spans(rec, rows)
    cols = [spans.field(rec, fmt.fields[n]) for n in ("prev_pid", "prev_prio", "prev_state",
                                                      "next_pid", "next_prio")]
    assert all(ok.all() for _, ok in cols)
    table = fmt.flags("prev_state")
    got = {(int(rec.columns["time"][r]), int(rec.columns["tid"][r])): (
        int(cols[0][0][k]), int(cols[1][0][k]), flag_letters(int(cols[2][0][k]), table),
        int(cols[3][0][k]), int(cols[4][0][k])) for k, r in enumerate(rows.tolist())}
    # the program sleeps 10 times (its plan); on a quiet machine there is little else (12 in
    # one CI run), so the floor is the sleeps, not a count that needs a loaded machine
    assert len(want) >= 10 and got == want
    assert sum(v[2] == "S" for v in want.values()) >= 10  # the program's sleeps
