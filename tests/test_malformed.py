"""Malformed and hostile recordings: one clear error with its offset, nothing lost before it."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest
from inproc import run_cli

from builders import kitchen_sink
from perftui.analysis.summary import record_counts
from perftui.perfdata import EventAttr, NotPerfData, Sample, open_recording
from perftui.perfdata.constants import CONTEXT_KERNEL, Misc
from perftui.perfdata.writer import Writer

ATTR = EventAttr(type=1, size=128, sample_type=int(Sample.IP | Sample.TID | Sample.TIME
                 | Sample.PERIOD | Sample.CALLCHAIN), flags=1 << 18, ids=[5])


def simple(path: Path, n: int = 10, mode: str = "file", compress: str | None = None,
           extra: list[bytes] | None = None) -> tuple[list[int], int]:
    """``n`` samples then ``extra`` raw records; returns (sample offsets, offset of extra)."""
    with open(path, "wb") as f:
        w = Writer(f, [ATTR], {3: "host"}, mode=mode, compress=compress)
        w.write(w.b.kernel("COMM", {"pid": 1, "tid": 1, "comm": "init"}))
        w.write(w.b.user("FINISHED_INIT"))
        w.start_compression()
        offs = []
        for i in range(n):
            offs.append(f.tell())
            w.write(w.b.sample({"ip": 0x1000 + i, "pid": 1, "tid": 1, "time": 100 + i,
                                "period": 1, "callchain": [CONTEXT_KERNEL, 0x1000 + i]},
                               misc=Misc.KERNEL))
        end = f.tell()
        for r in extra or []:
            w.write(r)
        w.close()
    return offs, end


def index(path: Path):
    rec = open_recording(path, spill=False)
    rec.build_index()
    return rec


def test_record_of_size_zero_stops_with_its_offset(tmp_path: Path) -> None:
    p = tmp_path / "zero.data"
    _offs, end = simple(p, 10, extra=[struct.pack("<IHH", 9, 1, 0) + b"\0" * 24])
    rec = index(p)
    assert [e.offset for e in rec.errors] == [end]
    assert "smaller than its 8-byte header" in rec.errors[0].message
    assert record_counts(rec)["SAMPLE"] == 10
    r = run_cli("info", str(p))
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and f"{end:#x}" in r.stderr
    assert "SAMPLE" in r.stdout  # what was decoded before the fault is still printed


def test_record_smaller_than_header(tmp_path: Path) -> None:
    p = tmp_path / "four.data"
    _offs, end = simple(p, 3, extra=[struct.pack("<IHH", 9, 1, 4)])
    rec = index(p)
    assert [e.offset for e in rec.errors] == [end]


def test_record_past_end_of_data(tmp_path: Path) -> None:
    p = tmp_path / "past.data"
    _offs, end = simple(p, 5, extra=[struct.pack("<IHH", 9, 1, 4000) + b"\0" * 8])
    rec = index(p)
    assert [e.offset for e in rec.errors] == [end]
    assert "runs past the end" in rec.errors[0].message
    assert record_counts(rec)["SAMPLE"] == 5


def test_truncated_file_keeps_records_before_the_cut(tmp_path: Path) -> None:
    p = tmp_path / "cut.data"
    offs, _end = simple(p, 20)
    data = p.read_bytes()
    cut = offs[12] + 10
    # an interrupted perf record: data.size 0 and the file cut in the middle of a record
    raw = bytearray(data[:cut])
    raw[48:56] = b"\0" * 8
    p.write_bytes(bytes(raw))
    rec = index(p)
    assert record_counts(rec)["SAMPLE"] == 12
    assert [e.offset for e in rec.errors] == [offs[12]]
    assert any("did not finish cleanly" in w for w in rec.warnings)


def test_garbage_zstd_is_an_error_at_the_compressed_record(tmp_path: Path) -> None:
    p = tmp_path / "z.data"
    simple(p, 10, compress="COMPRESSED")
    raw = bytearray(p.read_bytes())
    rec0 = index(p)
    assert rec0.errors == []
    comp = [int(rec0.columns["pos"][i]) for i in range(len(rec0))
            if rec0.columns["type"][i] == 81 and rec0.columns["src"][i] != 255]
    at = comp[0]
    raw[at + 8:at + 24] = b"\xff" * 16  # destroy the zstd magic and frame header
    p.write_bytes(bytes(raw))
    rec = index(p)
    assert [e.offset for e in rec.errors] == [at]
    assert "zstd" in rec.errors[0].message
    assert record_counts(rec)["COMM"] == 1  # the uncompressed records before it are kept


@pytest.mark.parametrize("field,value,where", [
    (40, 10**12, 40),  # data.offset past the end
    (24, 10**12, 24),  # attrs.offset past the end
    (16, 8, 16),  # attr_size too small
])
def test_header_fields_out_of_range(tmp_path: Path, field: int, value: int, where: int) -> None:
    p = tmp_path / "h.data"
    simple(p, 3)
    raw = bytearray(p.read_bytes())
    raw[field:field + 8] = struct.pack("<Q", value)
    p.write_bytes(bytes(raw))
    with pytest.raises(NotPerfData) as ei:
        open_recording(p)
    assert ei.value.offset == where
    r = run_cli("info", str(p))
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def test_huge_id_count_does_not_allocate(tmp_path: Path) -> None:
    p = tmp_path / "ids.data"
    simple(p, 3)
    raw = bytearray(p.read_bytes())
    attrs_off = struct.unpack_from("<Q", raw, 24)[0]
    raw[attrs_off + 128 + 8:attrs_off + 128 + 16] = struct.pack("<Q", 8 * 2**60)
    p.write_bytes(bytes(raw))
    rec = index(p)
    assert rec.errors and "ids section" in rec.errors[0].message
    assert record_counts(rec)["SAMPLE"] == 3


def test_callchain_count_of_2_60_is_a_decode_error(tmp_path: Path) -> None:
    p = tmp_path / "cc.data"
    with open(p, "wb") as f:
        w = Writer(f, [ATTR], {})
        body = struct.pack("<QiiQQQ", 0x1000, 1, 1, 5, 1, 2**60) + b"\0" * 16
        w.write(w.b.raw(9, Misc.KERNEL, body))
        w.close()
    rec = open_recording(p, spill=False)
    out = list(rec.records())
    assert out[0]["type"] == "SAMPLE" and "callchain" in out[0]["error"]
    assert rec.errors and rec.errors[0].offset == 104 + 8 + 128 + 16


def test_feature_table_out_of_range_is_reported(tmp_path: Path) -> None:
    p = tmp_path / "f.data"
    simple(p, 3)
    raw = bytearray(p.read_bytes())
    data_off, data_size = struct.unpack_from("<QQ", raw, 40)
    table = data_off + data_size
    raw[table:table + 8] = struct.pack("<Q", 10**9)
    p.write_bytes(bytes(raw))
    rec = index(p)
    assert [e.offset for e in rec.errors] == [table]
    assert record_counts(rec)["SAMPLE"] == 3


def test_unknown_types_are_skipped_and_counted(tmp_path: Path) -> None:
    p = tmp_path / "u.data"
    simple(p, 4, extra=[struct.pack("<IHH", 30, 0, 16) + b"\1" * 8,
                        struct.pack("<IHH", 200, 0, 24) + b"\2" * 16])
    rec = index(p)
    assert rec.errors == []
    c = record_counts(rec)
    assert c["UNKNOWN(30)"] == 1 and c["UNKNOWN(200)"] == 1 and c["SAMPLE"] == 4


def test_auxtrace_payload_past_end(tmp_path: Path) -> None:
    p = tmp_path / "aux.data"
    aux = struct.pack("<IHHQQQIIII", 71, 0, 48, 10**9, 0, 0, 0, 0, 0, 0)
    _offs, end = simple(p, 2, extra=[aux])
    rec = index(p)
    assert [e.offset for e in rec.errors] == [end]
    assert "AUXTRACE" in rec.errors[0].message


@pytest.mark.parametrize("content", [b"", b"PERF", b"\0" * 200, b"PERFILE2" + b"\xff" * 8,
                                     b"not a perf file at all, just text\n" * 10])
def test_not_perf_data(tmp_path: Path, content: bytes) -> None:
    p = tmp_path / "x.data"
    p.write_bytes(content)
    r = run_cli("info", str(p))
    assert r.returncode == 1 and r.stderr.count("\n") == 1
    assert "offset 0x" in r.stderr and "Traceback" not in r.stderr


def test_missing_file_and_usage(tmp_path: Path) -> None:
    r = run_cli("info", str(tmp_path / "nope.data"))
    assert r.returncode == 1 and "No such file or directory" in r.stderr
    r = run_cli("dump", "--limit", "x", "f")
    assert r.returncode == 2
    r = run_cli("dump", "--type", "NOSUCH", str(tmp_path / "nope.data"))
    assert r.returncode == 2


def test_pipe_stream_cut_in_a_record(tmp_path: Path) -> None:
    p = tmp_path / "pipe.data"
    kitchen_sink(p, "<", "pipe", None)
    raw = p.read_bytes()
    p.write_bytes(raw[:-5])
    r = subprocess.run([sys.executable, "-m", "perftui", "dump", "-"], input=raw[:-5],
                       capture_output=True, timeout=60)
    assert r.returncode == 1
    assert b"truncated" in r.stderr and r.stderr.count(b"\n") == 1
    assert r.stdout.count(b"\n") > 20
