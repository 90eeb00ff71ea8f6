"""Issue 9 §6, §8: inputs seen in the wild and a pipe that must never block its writer.

Oracles: perf 6.1 (``perf report --stats`` on the same files), the writer's own plan
(what it was told to write), and the bytes a writer thread managed to push into a pipe.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from inproc import run_cli
from uihelpers import settle, sync

from builders import kitchen_sink
from conftest import skip_or_fail
from perftui.analysis.summary import record_counts
from perftui.perfdata import EventAttr, RecordType, Sample, open_recording
from perftui.perfdata.constants import Misc
from perftui.perfdata.recording import Recording
from perftui.perfdata.records import RecordDecoder
from perftui.perfdata.writer import Writer
from perftui.ui.app import PerftuiApp

PERF = shutil.which("perf")
ST = int(Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args)  # in-process: what is printed and returned is what is tested


def need_perf() -> str:
    if PERF is None:
        skip_or_fail("perf is not on the PATH")
    return PERF


def perf_stats(path: Path) -> dict[str, int]:
    out = subprocess.run([need_perf(), "report", "-f", "--stats", "-i", str(path)],
                         capture_output=True, text=True, timeout=300).stdout
    got = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "events:" and parts[0] != "TOTAL":
            got[parts[0]] = int(parts[2])
        if "stats:" in line and "Aggregated" not in line:
            break
    return got


def attr() -> EventAttr:
    return EventAttr(type=1, size=128, config=0, sample_type=ST, flags=1 << 18, ids=[7],
                     name="cpu-clock")


# -- more than 255 data.N files ------------------------------------------------------------
def test_300_data_files_from_the_writer(tmp_path: Path) -> None:
    """data + data.0 .. data.299, two samples each: every one indexed (the plan: 600)."""
    d = tmp_path / "many.data"
    d.mkdir()
    a = attr()
    with open(d / "data", "wb") as f:
        Writer(f, [a], {}).close()
    from perftui.perfdata.writer import RecordBuilder

    b = RecordBuilder("<", [a])
    for k in range(300):
        recs = [b.sample({"id": 7, "ip": 0x1000 + k, "pid": k, "tid": k,
                          "time": 1_000_000 + 10 * k + j, "cpu": k % 4, "period": 1})
                for j in range(2)]
        (d / f"data.{k}").write_bytes(b"".join(recs))
    rec = open_recording(d)
    rec.build_index()
    assert not rec.errors
    assert record_counts(rec).get("SAMPLE") == 600
    # every record reads back from its own file
    tids = sorted(int(rec.decode(i)["tid"]) for i in range(len(rec)))
    assert tids == sorted(k for k in range(300) for _ in range(2))
    r = cli("info", str(d), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["records"]["SAMPLE"] == 600


@pytest.mark.perf
def test_300_data_files_agree_with_perf(tmp_path: Path) -> None:
    perf = need_perf()
    out = tmp_path / "rec"
    r = subprocess.run([perf, "record", "-q", "--threads", "-e", "cpu-clock", "-F", "2000",
                        "-o", str(out), "--", "sh", "-c",
                        "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0 or not (out / "data").is_file():
        pytest.fail(f"perf record --threads failed: {r.stderr[-200:]}")
    src = max(out.glob("data.*"), key=lambda p: p.stat().st_size)
    assert src.stat().st_size > 0
    body = src.read_bytes()
    for p in out.glob("data.*"):
        p.unlink()
    for k in range(300):
        (out / f"data.{k}").write_bytes(body)
    rec = open_recording(out)
    rec.build_index()
    assert not rec.errors and len(rec.sources) >= 301
    assert record_counts(rec) == perf_stats(out)
    assert cli("info", str(out)).returncode == 0


# -- perf's own messages after the last record ------------------------------------------------
@pytest.mark.perf
def test_pipe_file_with_perf_messages_appended(tmp_path: Path) -> None:
    perf = need_perf()
    p = tmp_path / "pipe.data"
    with open(p, "wb") as f:
        subprocess.run(f"{perf} record -o - -e cpu-clock -F 999 -- sleep 0.2",
                       shell=True, stdout=f, stderr=subprocess.STDOUT, timeout=60, check=True)
    tail = p.read_bytes()[-200:]
    assert b"[ perf record: Woken up" in tail  # perf wrote its messages into the file
    r = cli("info", str(p), "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["errors"] == []
    perf_names = {"HEADER_ATTR": "ATTR", "HEADER_FEATURE": "FEATURE"}  # perf's stats names
    assert {perf_names.get(k, k): n for k, n in d["records"].items()} == perf_stats(p)
    warn = [w for w in d["warnings"] if "text after the last record" in w]
    assert len(warn) == 1 and "[ perf record: Woken up" in warn[0]
    assert "2>&1" in warn[0]
    r = cli("info", str(p))
    assert r.returncode == 0 and "warning: " in r.stdout
    # the same bytes as a stream on standard input
    r = subprocess.run([sys.executable, "-m", "perftui", "dump", "-"], input=p.read_bytes(),
                       capture_output=True, timeout=60)
    assert r.returncode == 0 and b"[ perf record: Woken up" in r.stderr


def test_text_tail_from_the_writer(tmp_path: Path) -> None:
    p = tmp_path / "pipe.data"
    kitchen_sink(p, "<", "pipe", None)
    clean = open_recording(p)
    clean.build_index()
    want = record_counts(clean)
    msg = b"[ perf record: Woken up 1 times to write data ]\n[ perf record: Captured ]\n"
    p.write_bytes(p.read_bytes() + msg)
    rec = open_recording(p)
    rec.build_index()
    assert rec.errors == [] and record_counts(rec) == want
    assert any("Woken up 1 times" in w for w in rec.warnings)
    # binary garbage is still an error
    p.write_bytes(p.read_bytes()[: -len(msg)] + b"\x01\x02\x03\x04\x00\xff\x10\x00junk")
    rec = open_recording(p)
    rec.build_index()
    assert rec.errors


# -- library error text never reaches users ------------------------------------------------------
LIBRARY_WORDS = re.compile(r"Error in path|stream read|\(parsing\)|Container|construct|"
                           r"expected \d+, found|unpack|struct\.|Traceback")


def test_every_record_type_fails_in_plain_words() -> None:
    """Each record type's body cut at every length and filled with random bytes: either it
    decodes or the error is one plain sentence."""
    a = attr()
    for order in "<>":
        dec = RecordDecoder(order, [a])
        for t in [*range(1, 23), *range(64, 85), 83]:
            for n in range(0, 96, 1 if t < 64 else 3):
                for seed in range(2):
                    body = random.Random(t * 1000 + n * 7 + seed).randbytes(n)
                    raw = struct.pack(order + "IHH", t, Misc.KERNEL, 8 + n) + body
                    try:
                        dec.decode(raw, 0, t)
                    except ValueError as e:
                        msg = str(e)
                        assert "\n" not in msg and not LIBRARY_WORDS.search(msg), (t, n, msg)


def test_malformed_comm_in_dump_is_one_plain_sentence(tmp_path: Path) -> None:
    a = EventAttr(type=1, size=128, config=0, sample_type=ST, flags=0, ids=[7],
                  name="cpu-clock")  # no sample_id trailer: the body is the whole record
    p = tmp_path / "badcomm.data"
    with open(p, "wb") as f:
        w = Writer(f, [a], {})
        # a COMM whose name fills the record with no NUL
        body = struct.pack("<ii", 5, 5) + b"abcdefgh"
        w.write(w.b.raw(RecordType.COMM, 0, body))
        w.close()
    r = cli("dump", str(p))
    line = next(ln for ln in r.stdout.splitlines() if "COMM" in ln)
    assert "COMM record: comm is not NUL-terminated within the record" in line
    assert not LIBRARY_WORDS.search(r.stdout + r.stderr)


# -- 6. a pipe is drained after a cancel ----------------------------------------------------------
def pipe_recording(n: int) -> bytes:
    """A pipe-mode recording of ``n`` samples, made by the writer."""
    import io

    buf = io.BytesIO()
    a = attr()
    w = Writer(buf, [a], {}, mode="pipe")
    for i in range(n):
        w.write(w.b.sample({"id": 7, "ip": 0xFFFFFFFF81000000 + i, "pid": 1, "tid": 1,
                            "time": 1_000_000 + i, "cpu": 0, "period": 1}, Misc.KERNEL))
    w.close()
    return buf.getvalue()


@pytest.mark.slow
@sync
async def test_stop_indexing_keeps_draining_the_pipe() -> None:
    data = pipe_recording(200_000)  # ~10 MB: far more than a pipe holds
    assert len(data) > 4 << 20
    r_fd, w_fd = os.pipe()
    first_part = threading.Event()
    go_on = threading.Event()
    written = [0]

    def writer() -> None:
        with os.fdopen(w_fd, "wb", buffering=0) as out:
            cut = 1 << 20
            out.write(data[:cut])
            written[0] = cut
            first_part.set()
            go_on.wait(30)
            view = memoryview(data)
            pos = cut
            while pos < len(data):
                pos += out.write(view[pos:pos + 65536]) or 0
                written[0] = pos

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    stream = os.fdopen(r_fd, "rb", buffering=0)
    rec = Recording(None, stream=stream, spill=True)
    app = PerftuiApp(rec, [], stream=stream)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            assert first_part.wait(10)
            for _ in range(200):
                if app.model.n:
                    break
                await pilot.pause(0.02)
            await pilot.press("escape")  # Esc is back: it stops nothing
            assert not rec.cancelled
            await pilot.press("x")
            assert rec.cancelled
            go_on.set()
            t.join(30)
            assert not t.is_alive(), f"the writer blocked after {written[0]} bytes"
            assert written[0] == len(data)
            for _ in range(200):
                if "read to its end" in str(app.query_one("#header").content):
                    break
                await pilot.pause(0.05)
            await settle(pilot)
            head = str(app.query_one("#header").content)
            assert "indexing cancelled" in head and "read to its end" in head
            assert app.model.n < 200_000 + 10
    finally:
        go_on.set()
        rec.close()
