"""Differential tests: perftui's decoder against the real perf 6.1 on the recording corpus.

perf is the oracle where it can read a recording: ``perf report --stats`` (record counts),
``perf report -D`` (every record's offset, size and type, and raw callchains), ``perf script``
(sample fields) and ``perf evlist -v`` (attrs).  Pipe-mode recordings are fed to perf through a
real pipe (``-i -``): perf 6.1 reading the pipe-mode *file* ``perf.data.piped.intel_pt-4.14``
stops after the first AUXTRACE with "bad event header size" (consistent with skipping its
0x12a70-byte payload twice: the next record is at 0x1aa00, and 0x1aa00 + 0x12a70 holds a header
of size 0); through a pipe it reads all 667 records.

Recordings perf 6.1 cannot read at all carry counts established without perftui (see
``BEYOND_PERF``): by perf 6.1 on a minimally patched copy, by ``perf report -D``, and by the
independent record walk below (``independent_walk``), which never imports perftui.
Each counts figure of the corpus README is also checked without perf.
"""

from __future__ import annotations

import io
import json
import re
import struct
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
import zstandard
from inproc import run_cli

from perftui.analysis.summary import info_dict, record_counts
from perftui.perfdata import NotPerfData, Recording, open_recording, type_code, type_name
from perftui.present.stats import print_stats

Corpus = Callable[[str], Path]
_SCRIPT = Path(sys.executable).with_name("perftui")  # the console script of the venv
PERFTUI = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "perftui"]

# -- the corpus --------------------------------------------------------------------------------
#: perf 6.1's ``TOTAL events`` / ``SAMPLE events`` for each recording it reads (corpus README).
README_COUNTS: dict[str, tuple[int, int]] = {
    "perf61/perf-normal-g.data": (289, 267),
    "perf61/perf-pipe.data": (417, 370),
    "perf61/perf-zstd.data": (201, 177),
    "perfparser/contentsize.data": (219, 69),
    "perfparser/fork_static_gcc__perf.data.zstd": (229, 106),
    "perfparser/probe.data.file": (126, 1),
    "quipper/perf.data.armv7-3.4": (5554, 3893),
    "quipper/perf.data.branch-4.14": (50, 13),
    "quipper/perf.data.branch_stack_spec": (132, 8),
    "quipper/perf.data.callgraph-3.8": (3798, 1768),
    "quipper/perf.data.ctx_switch_namespaces-4.14": (42, 2),
    "quipper/perf.data.group_desc-4.14": (50, 13),
    "quipper/perf.data.hybrid_topology": (124, 7),
    "quipper/perf.data.i686-3.4": (2499, 703),
    "quipper/perf.data.intel_pt-4.14": (257, 15),
    "quipper/perf.data.lost_samples-4.4": (243, 191),
    "quipper/perf.data.piped.header_features-4.16": (57, 2),
    "quipper/perf.data.piped.header_features_aligned-6.12": (45, 9),
    "quipper/perf.data.piped.header_feautres_group_desc-6.8": (59, 21),
    "quipper/perf.data.piped.lost_samples-4.4": (246, 191),
    "quipper/perf.data.piped.no_attr_ids-4.14": (57, 7),
    "quipper/perf.data.raw-3.4": (2317, 441),
    "quipper/perf.data.remmap-3.2": (343, 198),
    "quipper/perf.data.singleprocess-3.4": (132, 77),
    "quipper/perf.data.throttle-3.8": (17001, 14980),
    "quipper/perf.data.weight_struct": (12964, 14),
}

_COMMON = {"COMM": 2, "EXIT": 1, "MMAP2": 4, "FINISHED_ROUND": 1, "THREAD_MAP": 1, "CPU_MAP": 1,
           "FINISHED_INIT": 1}
_SLEEP_Z = {"MMAP": 45, "SAMPLE": 8, "KSYMBOL": 15, "BPF_EVENT": 14, "ID_INDEX": 1,
            "TIME_CONV": 1, "COMPRESSED": 1, **_COMMON}
#: Record counts (perftui's type names) of recordings ``perf report --stats`` of perf 6.1 cannot
#: count, established without perftui's index.  Every one also agrees with ``independent_walk``.
BEYOND_PERF: dict[str, dict[str, int]] = {
    # perf 6.1 refuses attr.size 136 ("more recent and unsupported ABI (8 bytes extra)"): perf 6.1
    # --stats on perf61_compatible_copy() (attr.size -> 128, the extra config3 word is 0) printed
    # these, the COMPRESSED2 file after rewriting its one COMPRESSED2 as COMPRESSED (81).
    "linux-perf-data/sleep.data": {"SAMPLE": 7, "ID_INDEX": 1, "EVENT_UPDATE": 1, **_COMMON},
    "linux-perf-data/sleep.compressed.data": _SLEEP_Z,
    "linux-perf-data/sleep.compressed2.data": {"SAMPLE": 7, "ID_INDEX": 1, "EVENT_UPDATE": 1,
                                               "COMPRESSED2": 1, **_COMMON},
    "perfparser/cpp-inlining__cpp-inlining.perf.data": {
        "COMM": 2, "EXIT": 1, "SAMPLE": 539, "MMAP2": 13, "KSYMBOL": 2, "FINISHED_ROUND": 8,
        "ID_INDEX": 1, "THREAD_MAP": 1, "CPU_MAP": 1, "EVENT_UPDATE": 2, "TIME_CONV": 1,
        "COMPRESSED": 13, "FINISHED_INIT": 1},
    # perf --stats: "Couldn't decompress data / 0x3398 [0x182]: failed to process type: 81";
    # perf report -D decodes all of it: 118 records + the COMPRESSED at 0x3398@pipe (not dumped).
    # The same recording as sleep.compressed.data plus the pipe-mode ATTR/FEATURE/EVENT_UPDATE.
    "linux-perf-data/sleep.compressed.pipe.data": {**_SLEEP_Z, "HEADER_ATTR": 1,
                                                   "HEADER_FEATURE": 21, "EVENT_UPDATE": 1},
    # perf --stats stops after TRACING_DATA ("unexpected end of event stream", TOTAL 2);
    # perf report -D dumps all 128; = probe.data.file's 126 + HEADER_ATTR + TRACING_DATA.
    "perfparser/probe.data.stream": {"MMAP": 112, "COMM": 2, "EXIT": 1, "SAMPLE": 1, "MMAP2": 8,
                                     "HEADER_ATTR": 1, "HEADER_TRACING_DATA": 1,
                                     "FINISHED_ROUND": 1, "TIME_CONV": 1},
    # perf -i FILE fails after the first AUXTRACE ("bad event header size"); through a real
    # pipe (cat F | perf report --stats -i -) perf 6.1 prints exactly these, TOTAL 667.
    "quipper/perf.data.piped.intel_pt-4.14": {
        "MMAP": 56, "COMM": 3, "EXIT": 1, "SAMPLE": 11, "MMAP2": 10, "AUX": 8, "ITRACE_START": 2,
        "SWITCH_CPU_WIDE": 552, "HEADER_ATTR": 4, "FINISHED_ROUND": 4, "AUXTRACE_INFO": 1,
        "AUXTRACE": 2, "TIME_CONV": 1, "HEADER_FEATURE": 12},
}
CORRUPT = "quipper/perf.data.piped.corrupted.zero_size_sample-3.2"
CORRUPT_OFFSET = 49104  # 0xbfd0: type 9, misc 1, size 0
# perf report -D dumps 570 records (0@pipe .. 0xbf70@pipe [0x50], which ends at file offset
# 0xbfd0), then "bad event header size"; independent_walk stops at the same place.
CORRUPT_COUNTS = {"MMAP": 468, "COMM": 100, "HEADER_ATTR": 1, "HEADER_EVENT_TYPE": 1}
V1 = "hotspot/perf.data.true.v1"
PIPE_MODE = {"perf61/perf-pipe.data", "perfparser/contentsize.data", "perfparser/probe.data.stream",
             "linux-perf-data/sleep.compressed.pipe.data", CORRUPT,
             *(r for r in [*README_COUNTS, *BEYOND_PERF] if "/perf.data.piped." in r)}

#: Files with perf's TOTAL in the README, plus those perf -D reads in full (through a pipe).
DUMPABLE = [*README_COUNTS, "linux-perf-data/sleep.compressed.pipe.data",
            "perfparser/probe.data.stream", "quipper/perf.data.piped.intel_pt-4.14", CORRUPT]
CALLCHAIN_FILES = ["perf61/perf-normal-g.data", "perf61/perf-pipe.data", "perf61/perf-zstd.data",
                   "perfparser/contentsize.data", "perfparser/fork_static_gcc__perf.data.zstd",
                   "quipper/perf.data.callgraph-3.8"]
ATTR_FIXUP = ["linux-perf-data/sleep.data", "linux-perf-data/sleep.compressed.data",
              "linux-perf-data/sleep.compressed2.data",
              "perfparser/cpp-inlining__cpp-inlining.perf.data"]


def ids(rel: str) -> str:
    return rel.split("/", 1)[1]


def params(rels: Iterable[str], xfail: dict[str, str] | None = None) -> list[Any]:
    xfail = xfail or {}
    return [pytest.param(r, id=ids(r), marks=[pytest.mark.xfail(strict=True, reason=xfail[r])]
                         if r in xfail else []) for r in rels]


# -- perf as the oracle ------------------------------------------------------------------------
def is_pipe(path: Path) -> bool:
    with open(path, "rb") as f:
        return struct.unpack("<Q", f.read(16)[8:16])[0] == 16


def run_perf(args: list[str], path: Path) -> subprocess.CompletedProcess[str]:
    """``perf ARGS -i path``; a pipe-mode recording goes through a real pipe (``-i -``)."""
    pipe = is_pipe(path)
    return subprocess.run(["perf", *args, "-f", "-i", "-" if pipe else str(path)],
                          input=path.read_bytes() if pipe else None, capture_output=True,
                          timeout=120)


def out(p: subprocess.CompletedProcess[Any]) -> str:
    return p.stdout.decode(errors="replace") if isinstance(p.stdout, bytes) else p.stdout


def perf_stats(path: Path, text: str | None = None) -> tuple[dict[str, int], list[int]]:
    """``perf report --stats`` (or its ``text``): ({type: count, "TOTAL": n}, per-event
    SAMPLE counts sorted)."""
    agg: dict[str, int] = {}
    events: list[dict[str, int]] = []
    section: dict[str, int] | None = None
    if text is None:
        text = out(run_perf(["report", "--stats"], path))
    for line in text.splitlines():
        if line.startswith("Aggregated stats:"):  # "(excludes AUX area ...)" with Intel PT
            section = agg
        elif line.endswith(" stats:") and not line.startswith(" "):
            section = {}
            events.append(section)
        elif (m := re.match(r"^\s*(\w+) events:\s+(\d+)", line)) and section is not None:
            section[m.group(1)] = int(m.group(2))
    return agg, sorted(e.get("SAMPLE", 0) for e in events)


def perf_name(perftui_name: str) -> str:
    """perf 6.1 prints the user types without HEADER_: ATTR, FEATURE, TRACING_DATA, ..."""
    return perftui_name.removeprefix("HEADER_")


_EVENT = re.compile(r"^(0x[0-9a-f]+|0)@\S* \[(0x[0-9a-f]+)\]: event: (\d+)$", re.M)
_SAMPLE = re.compile(r"^(?:-?\d+ )*(0x[0-9a-f]+) \[0x[0-9a-f]+\]: PERF_RECORD_SAMPLE")
_CHAIN = re.compile(r"^\.\.\. FP chain: nr:(\d+)$")
_ENTRY = re.compile(r"^\.{5}\s+\d+: ([0-9a-f]+)$")


def perf_dump(path: Path) -> tuple[Counter[tuple[int, int, int]], Counter[tuple[int, tuple]]]:
    """``perf report -D``: multisets of (file offset, size, type) of every record perf
    processed (it prints no line for a COMPRESSED record itself; a record inside one carries
    the COMPRESSED record's offset) and of (sample offset, raw callchain)."""
    text = out(run_perf(["report", "-D"], path))
    base = 16 if is_pipe(path) else 0  # pipe offsets are relative to byte 16 (docs/format.md)
    records = Counter((int(o, 16) + base, int(s, 16), int(t)) for o, s, t in _EVENT.findall(text))
    chains: Counter[tuple[int, tuple]] = Counter()
    lines = text.splitlines()
    offset = -1
    for i, line in enumerate(lines):
        if m := _SAMPLE.match(line):
            offset = int(m.group(1), 16) + base
        elif (m := _CHAIN.match(line)) and offset >= 0:
            n = int(m.group(1))
            entries = [_ENTRY.match(x) for x in lines[i + 1:i + 1 + n]]
            chains[(offset, tuple(int(e.group(1), 16) for e in entries if e))] += 1
            offset = -1
    return records, chains


_LINE = re.compile(r"^\s*(?P<pid>-?\d+)/(?P<tid>-?\d+)\s+(?:\[(?P<cpu>-?\d+)\]\s+)?"
                   r"(?:(?P<time>\d+\.\d+):\s+)?(?:(?P<period>\d+)\s+)?(?P<event>\S+):\s+"
                   r"(?P<ip>[0-9a-f]+)?\s*$")
_REFUSED = re.compile(r"Cannot print '(\w+)' field")
FIELDS = ("ip", "pid", "tid", "time", "cpu", "period")
#: sample_type bit that makes each compared field present (docs/format.md, "SAMPLE")
FIELD_BIT = {"ip": 1 << 0, "pid": 1 << 1, "tid": 1 << 1, "time": 1 << 2, "cpu": 1 << 7,
             "period": 1 << 8}


def perf_script(path: Path) -> list[dict[str, Any]]:
    """Samples as ``perf script --ns -F event,ip,pid,tid,time,cpu,period`` prints them.

    perf refuses a field no event has ("Cannot print 'cpu' field"): it is dropped and perf
    rerun.  ``-G`` hides callchains, ``--itrace=`` keeps perf from synthesizing samples from
    Intel PT data.  A value perf prints for an event without the field (cpu ``[-01]``, the
    attr's period) is ignored by the comparison.
    """
    fields = ["event", *FIELDS]
    while True:
        p = run_perf(["script", "--ns", "-G", "--itrace=", "-F", ",".join(fields)], path)
        m = _REFUSED.search(p.stderr.decode(errors="replace"))
        if not (m and m.group(1) in fields):
            break
        fields.remove(m.group(1))
    samples = []
    for line in out(p).splitlines():
        m = _LINE.match(line)
        assert m, f"unexpected perf script line {line!r}"
        d: dict[str, Any] = {"event": m["event"]}
        for k in ("pid", "tid", "cpu", "period"):
            if m[k] is not None:
                d[k] = int(m[k])
        if m["ip"] is not None:
            d["ip"] = int(m["ip"], 16)
        if m["time"] is not None:
            sec, frac = m["time"].split(".")
            d["time"] = int(sec) * 10**9 + int(frac.ljust(9, "0"))
        samples.append(d)
    return samples


#: Event names perftui derives differently from perf (see test_event_names_match_perf);
#: only used to pair perf's samples with perftui's when perftui lacks perf's name.
PERF_NAME_ALIASES = {
    "perfparser/probe.data.stream": {"probe_untitled1:main": "tracepoint:0x531"},
    "quipper/perf.data.piped.lost_samples-4.4": {
        "cycles:ppH": "cycles", "instructions:ppH": "instructions",
        "branches:ppH": "branch-instructions"},
}


def compare_samples(path: Path, perf_samples: list[dict[str, Any]],
                    aliases: dict[str, str]) -> None:
    """perftui's samples (decoded dicts and index columns) equal perf's, event by event, on
    the fields the event's sample_type has.  (Two Recordings: one walk each.)"""
    decoded = [d for d in open_recording(str(path), spill=False).records()
               if d["type"] == "SAMPLE"]
    rec = indexed(path)
    names = [a.display_name for a in rec.attrs]
    printed = set().union(*(s.keys() for s in perf_samples)) if perf_samples else set()
    fields_of: dict[str, list[str]] = {}
    for a in rec.attrs:
        fields_of.setdefault(a.display_name, [f for f in FIELDS
                                              if a.sample_type & FIELD_BIT[f] and f in printed])

    def key(name: str, d: dict[str, Any], only: Iterable[str] = FIELDS) -> tuple[str, tuple]:
        return name, tuple((f, d[f]) for f in fields_of[name] if f in only)

    theirs = [(s["event"] if s["event"] in names else aliases.get(s["event"], "?"), s)
              for s in perf_samples]
    assert Counter(key(d["event"], d) for d in decoded) == Counter(key(n, s) for n, s in theirs)
    # the index columns of the same samples
    c = rec.columns
    in_index = ("pid", "tid", "time", "cpu")
    rows = (c["type"] == type_code("SAMPLE")).nonzero()[0]
    cols = Counter(key(names[int(c["attr"][i])], {f: int(c[f][i]) for f in in_index}, in_index)
                   for i in rows)
    assert cols == Counter(key(n, s, in_index) for n, s in theirs)


# -- perftui -----------------------------------------------------------------------------------
def indexed(path: Path, spill: bool = False) -> Recording:
    rec = open_recording(str(path), spill=spill)
    rec.build_index()
    return rec


def as_perf_counts(counts: dict[str, int]) -> dict[str, int]:
    d = {perf_name(k): v for k, v in counts.items()}
    d["TOTAL"] = sum(counts.values())
    return d


# -- an independent walk (no perftui): record headers, payloads outside records, zstd ------------
def independent_walk(data: bytes) -> tuple[Counter[int], int]:
    """Count records per raw type, the perf --stats way (a COMPRESSED/COMPRESSED2 counts, and
    so does each record inside it).  Little-endian files only.  Returns (counts, offset where
    the walk stopped: the end, or a record of size < 8)."""
    assert data[:8] == b"PERFILE2"
    if struct.unpack_from("<Q", data, 8)[0] == 16:  # pipe mode
        pos, end = 16, len(data)
    else:
        pos, size = struct.unpack_from("<QQ", data, 40)
        end = pos + size if size else len(data)
    counts: Counter[int] = Counter()
    zstd = zstandard.ZstdDecompressor().decompressobj()
    inner = b""
    while pos + 8 <= end:
        t, _misc, size = struct.unpack_from("<IHH", data, pos)
        if size < 8:
            break
        counts[t] += 1
        extra = 0
        if t == 66:  # HEADER_TRACING_DATA: u32 size bytes follow the record
            extra = struct.unpack_from("<I", data, pos + 8)[0]
        elif t == 71:  # AUXTRACE: u64 size bytes follow the record
            extra = struct.unpack_from("<Q", data, pos + 8)[0]
        elif t in (81, 83):  # COMPRESSED: zstd to the end; COMPRESSED2: u64 data_size, zstd
            if t == 81:
                payload = data[pos + 8:pos + size]
            else:
                n = struct.unpack_from("<Q", data, pos + 8)[0]
                payload = data[pos + 16:pos + 16 + n]
            inner += zstd.decompress(payload)
            p = 0
            while p + 8 <= len(inner):
                it, _m, isize = struct.unpack_from("<IHH", inner, p)
                if isize < 8 or p + isize > len(inner):
                    break
                counts[it] += 1
                p += isize
            inner = inner[p:]
        pos += size + extra
    assert not inner, "a record was left inside the compressed data"
    return counts, pos


def perf61_compatible_copy(data: bytes) -> bytes:
    """A copy perf 6.1 can read: attrs larger than its 128 bytes cut to 128 (the extra bytes
    must be 0) and repacked with stride 144, COMPRESSED2 records rewritten as COMPRESSED (the
    rest of the data section shifted, the feature table's offsets moved with it)."""
    b = bytearray(data)
    attr_size, a_off, a_size, d_off, d_size = struct.unpack_from("<5Q", b, 16)
    entries = []
    for i in range(a_size // attr_size):
        p = a_off + i * attr_size
        size = struct.unpack_from("<I", b, p + 4)[0]
        keep = min(size, 128)
        assert not any(b[p + keep:p + size]), "attr bytes beyond 128 are not zero"
        attr = bytearray(b[p:p + keep])
        struct.pack_into("<I", attr, 4, keep)
        entries.append(bytes(attr) + bytes(b[p + size:p + size + 16]))
    b[a_off:a_off + sum(map(len, entries))] = b"".join(entries)
    struct.pack_into("<QQQ", b, 16, len(entries[0]), a_off, len(entries[0]) * len(entries))
    stream = bytearray()
    pos, end = d_off, d_off + d_size
    while pos < end:
        t, misc, size = struct.unpack_from("<IHH", b, pos)
        if t == 83:
            n = struct.unpack_from("<Q", b, pos + 8)[0]
            stream += struct.pack("<IHH", 81, misc, 8 + n) + b[pos + 16:pos + 16 + n]
        else:
            stream += b[pos:pos + size]
        pos += size
    shift = d_size - len(stream)
    b = b[:d_off] + stream + b[end:]
    struct.pack_into("<Q", b, 48, len(stream))
    table = d_off + len(stream)
    n_features = sum(bin(w).count("1") for w in struct.unpack_from("<4Q", b, 72))
    for k in range(n_features):
        off = struct.unpack_from("<Q", b, table + 16 * k)[0]
        if off:
            struct.pack_into("<Q", b, table + 16 * k, off - shift)
    return bytes(b)


def named(counts: Counter[int]) -> dict[str, int]:
    return {type_name(t): n for t, n in counts.items()}


# == 1. record counts against perf report --stats ==============================================
@pytest.mark.perf
@pytest.mark.parametrize("rel", params(README_COUNTS))
def test_record_counts_match_perf_stats(rel: str, corpus: Corpus) -> None:
    """The counts by type and by event, and ``perftui report --stats``'s whole text."""
    path = corpus(rel)
    rec = indexed(path)
    assert rec.errors == []
    theirs = out(run_perf(["report", "--stats"], path))
    agg, per_event = perf_stats(path, theirs)
    assert agg["TOTAL"] == README_COUNTS[rel][0]  # the README's figure
    assert as_perf_counts(record_counts(rec)) == agg
    samples = info_dict(rec)["events"]
    assert sorted(e["samples"] for e in samples if e["samples"]) == [n for n in per_event if n]
    mine = io.StringIO()
    print_stats(rec, mine)
    assert mine.getvalue() == theirs


@pytest.mark.parametrize("rel", params(README_COUNTS))
def test_record_counts_match_readme(rel: str, corpus: Corpus) -> None:
    rec = indexed(corpus(rel))
    counts = record_counts(rec)
    assert (sum(counts.values()), counts.get("SAMPLE", 0)) == README_COUNTS[rel]
    assert info_dict(rec)["total_records"] == README_COUNTS[rel][0]


# == every record: offset, size, type against perf report -D ===================================
@pytest.mark.perf
@pytest.mark.parametrize("rel", params(DUMPABLE))
def test_records_match_perf_dump(rel: str, corpus: Corpus) -> None:
    path = corpus(rel)
    rec = indexed(path, spill=True)  # spill: records inside COMPRESSED know their outer offset
    c = rec.columns
    compressed = {type_code("COMPRESSED"), type_code("COMPRESSED2")}
    ours = Counter((rec.outer_offset(i), int(c["size"][i]), int(c["type"][i]))
                   for i in range(len(rec)) if int(c["type"][i]) not in compressed)
    theirs, _ = perf_dump(path)
    assert ours == theirs


@pytest.mark.parametrize("rel", params(
    [*README_COUNTS, *BEYOND_PERF, CORRUPT]))
def test_dump_agrees_with_index(rel: str, corpus: Corpus) -> None:
    """``perftui dump`` (Recording.records) names the same type, size and offset as the index,
    record by record, and adds no error of its own."""
    path = corpus(rel)
    rec = indexed(path, spill=True)
    c = rec.columns
    index = [(rec.outer_offset(i), type_name(int(c["type"][i])), int(c["size"][i]))
             for i in range(len(rec))]
    dumped_rec = open_recording(str(path), spill=False)
    dumped = [(d["offset"], d["type"], d["size"]) for d in dumped_rec.records()]
    assert dumped == index
    assert [str(e) for e in dumped_rec.errors] == [str(e) for e in rec.errors]


# == sample fields against perf script ==========================================================
@pytest.mark.perf
@pytest.mark.parametrize("rel", params([*README_COUNTS, *sorted(set(BEYOND_PERF) & PIPE_MODE)]))
def test_samples_match_perf_script(rel: str, corpus: Corpus) -> None:
    path = corpus(rel)
    samples = perf_script(path)
    expected = BEYOND_PERF[rel]["SAMPLE"] if rel in BEYOND_PERF else README_COUNTS[rel][1]
    assert len(samples) == expected
    compare_samples(path, samples, PERF_NAME_ALIASES.get(rel, {}))


@pytest.mark.perf
@pytest.mark.parametrize("rel", params(CALLCHAIN_FILES))
def test_callchains_match_perf_dump(rel: str, corpus: Corpus) -> None:
    path = corpus(rel)
    _, theirs = perf_dump(path)
    ours = Counter((d["offset"], tuple(d["callchain"]))
                   for d in open_recording(str(path), spill=False).records()
                   if d["type"] == "SAMPLE")
    assert sum(theirs.values()) > 0
    assert ours == theirs


# == attrs against perf evlist -v ===============================================================
_ST_BITS = ["IP", "TID", "TIME", "ADDR", "READ", "CALLCHAIN", "ID", "CPU", "PERIOD", "STREAM_ID",
            "RAW", "BRANCH_STACK", "REGS_USER", "STACK_USER", "WEIGHT", "DATA_SRC", "IDENTIFIER",
            "TRANSACTION", "REGS_INTR", "PHYS_ADDR", "AUX", "CGROUP", "DATA_PAGE_SIZE",
            "CODE_PAGE_SIZE", "WEIGHT_STRUCT"]


def perf_evlist(path: Path) -> list[tuple[str, int, int, int]]:
    """(name, type, config, sample_type) per attr, in file order, from ``perf evlist -v``."""
    rows = []
    for line in out(run_perf(["evlist", "-v"], path)).splitlines():
        if line.startswith("#") or ": " not in line:
            continue
        name, rest = line.split(": ", 1)
        rest = " " + rest

        def num(key: str, text: str = rest) -> int:
            m = re.search(rf"[ ,]{key}: (0x[0-9a-f]+|\d+)", text)
            return int(m.group(1), 0) if m else 0

        m = re.search(r"sample_type: ([A-Z_|]+)", rest)
        st = sum(1 << _ST_BITS.index(b) for b in m.group(1).split("|")) if m else 0
        rows.append((name, num("type"), num("config"), st))
    return rows


@pytest.mark.perf
@pytest.mark.parametrize("rel", params([r for r in README_COUNTS if r not in PIPE_MODE]))
def test_attrs_match_perf_evlist(rel: str, corpus: Corpus) -> None:
    path = corpus(rel)
    rec = open_recording(str(path), spill=False)
    ours = [(a.display_name, a.type, a.config, a.sample_type) for a in rec.attrs]
    assert ours == perf_evlist(path)


@pytest.mark.perf
@pytest.mark.parametrize("rel", params(
    sorted(PIPE_MODE - {CORRUPT})))
def test_event_names_match_perf(rel: str, corpus: Corpus) -> None:
    """Pipe mode: the names perf script prints for the events that have samples."""
    path = corpus(rel)
    rec = open_recording(str(path), spill=False)
    decoded = {d["event"] for d in rec.records() if d["type"] == "SAMPLE"}
    assert decoded == {s["event"] for s in perf_script(path)}


# == 4. recordings perf 6.1 cannot read =========================================================
@pytest.mark.parametrize("rel", params(BEYOND_PERF))
def test_beyond_perf_counts(rel: str, corpus: Corpus) -> None:
    rec = indexed(corpus(rel))
    assert rec.errors == []
    assert record_counts(rec) == BEYOND_PERF[rel]


@pytest.mark.parametrize("rel", params([*BEYOND_PERF, *README_COUNTS]))
def test_independent_walk_agrees(rel: str, corpus: Corpus) -> None:
    """The expected counts above, and the README's TOTALs, again from independent_walk."""
    data = corpus(rel).read_bytes()
    counts, stop = independent_walk(data)
    assert stop == (len(data) if is_pipe(corpus(rel)) else sum(struct.unpack_from("<QQ", data, 40)))
    if rel in BEYOND_PERF:
        assert named(counts) == BEYOND_PERF[rel]
    else:
        assert (sum(counts.values()), counts[9]) == README_COUNTS[rel]


@pytest.mark.perf
@pytest.mark.parametrize("rel", params(ATTR_FIXUP))
def test_beyond_perf_counts_from_compatible_copy(rel: str, corpus: Corpus,
                                                 tmp_path: Path) -> None:
    """perf 6.1 refuses these files ("file uses a more recent and unsupported ABI (8 bytes
    extra)": attr.size 136).  On a copy with 128-byte attrs (and COMPRESSED2 -> COMPRESSED) it
    counts what perftui counts on the original, and prints the same sample fields."""
    path = corpus(rel)
    copy = tmp_path / path.name
    copy.write_bytes(perf61_compatible_copy(path.read_bytes()))
    agg, _ = perf_stats(copy)
    expected = dict(BEYOND_PERF[rel])
    if "COMPRESSED2" in expected:
        expected["COMPRESSED"] = expected.pop("COMPRESSED2")
    assert agg == as_perf_counts(expected)
    compare_samples(path, perf_script(copy), {})


@pytest.mark.perf
@pytest.mark.parametrize("rel", params(sorted(set(BEYOND_PERF) & PIPE_MODE)))
def test_beyond_perf_counts_from_perf_dump(rel: str, corpus: Corpus) -> None:
    """perf report -D (through a pipe) decodes every record of these pipe-mode files, though
    perf 6.1's --stats stops early on two of them: its stats tool has no feature or
    tracing-data handler (builtin-report.c stats_setup), so it never learns the COMPRESSED
    mmap_len ("Couldn't decompress data") and never skips the tracing data ("unexpected end
    of event stream").  -D prints no line for a COMPRESSED record itself."""
    path = corpus(rel)
    records, _ = perf_dump(path)
    dumped: Counter[str] = Counter()
    for (_o, _s, t), n in records.items():
        dumped[type_name(t)] += n
    expected = BEYOND_PERF[rel]
    assert dumped == {k: v for k, v in expected.items() if k != "COMPRESSED"}


def test_corrupt_zero_size_record(corpus: Corpus) -> None:
    path = corpus(CORRUPT)
    rec = indexed(path)
    assert [e.offset for e in rec.errors] == [CORRUPT_OFFSET]
    assert record_counts(rec) == CORRUPT_COUNTS
    c = rec.columns
    assert int(c["pos"][-1]) + int(c["size"][-1]) == CORRUPT_OFFSET
    data = path.read_bytes()
    assert struct.unpack_from("<IHH", data, CORRUPT_OFFSET) == (9, 1, 0)
    counts, stop = independent_walk(data)
    assert (named(counts), stop) == (CORRUPT_COUNTS, CORRUPT_OFFSET)


@pytest.mark.perf
def test_corrupt_zero_size_record_perf(corpus: Corpus) -> None:
    path = corpus(CORRUPT)
    records, _ = perf_dump(path)
    assert sum(records.values()) == sum(CORRUPT_COUNTS.values())
    assert max(o + s for o, s, _t in records) == CORRUPT_OFFSET


@pytest.mark.parametrize("rel", params(
    ["perf61/perf-normal-g.data", "perf61/perf-zstd.data", "perf61/perf-pipe.data"]))
def test_walk_after_dump(rel: str, corpus: Corpus) -> None:
    """Recording.records(), then build_index on the same Recording: still perf's counts."""
    rec = open_recording(str(corpus(rel)), spill=False)
    total = README_COUNTS[rel][0]
    assert sum(1 for _ in rec.records()) == total
    n_attrs = len(rec.attrs)
    rec.build_index()
    assert (len(rec), len(rec.attrs), rec.errors) == (total, n_attrs, [])


# == 5. the legacy v1 file ======================================================================
def test_v1_is_not_perf_data(corpus: Corpus) -> None:
    path = corpus(V1)
    with pytest.raises(NotPerfData, match="v1"):
        open_recording(str(path), spill=False)


@pytest.mark.parametrize("cmd", ["info", "dump"])
def test_v1_cli(cmd: str, corpus: Corpus) -> None:
    p = subprocess.run([*PERFTUI, cmd, str(corpus(V1)), "--json"], capture_output=True, text=True)
    assert p.returncode == 1
    assert p.stdout == ""
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and "v1" in lines[0] and "offset 0x0" in lines[0]


# == the command line ===========================================================================
def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The command's output and status, in-process (test_v1_cli runs the installed entry
    point)."""
    return run_cli(*args)


@pytest.mark.parametrize("rel", params(["perf61/perf-normal-g.data", "perf61/perf-zstd.data",
                                        "perf61/perf-pipe.data",
                                        "linux-perf-data/sleep.compressed2.data"]))
def test_cli_info_json(rel: str, corpus: Corpus) -> None:
    p = cli("info", str(corpus(rel)), "--json")
    assert (p.returncode, p.stderr) == (0, "")
    d = json.loads(p.stdout)
    expected = BEYOND_PERF.get(rel)
    if expected is None:
        total, samples = README_COUNTS[rel]
        assert (d["total_records"], d["records"]["SAMPLE"]) == (total, samples)
        assert sum(e["samples"] for e in d["events"]) == samples
    else:
        assert d["records"] == expected
    assert d["errors"] == []


@pytest.mark.parametrize("rel", params(["perf61/perf-pipe.data", "perf61/perf-zstd.data"]))
def test_cli_dump_json(rel: str, corpus: Corpus) -> None:
    path = corpus(rel)
    p = cli("dump", str(path), "--json")
    assert (p.returncode, p.stderr) == (0, "")
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    assert len(rows) == README_COUNTS[rel][0]
    assert Counter(r["type"] for r in rows) == record_counts(indexed(path))
    samples = [r for r in rows if r["type"] == "SAMPLE"]
    assert all({"ip", "pid", "tid", "time", "period", "callchain", "event"} <= r.keys()
               for r in samples)
    p = cli("dump", str(path), "--json", "--type", "SAMPLE", "--limit", "5")
    assert p.returncode == 0
    assert [json.loads(line) for line in p.stdout.splitlines()] == samples[:5]


@pytest.mark.parametrize("cmd", ["info", "dump"])
def test_cli_corrupt_exit_1_one_line(cmd: str, corpus: Corpus) -> None:
    p = cli(cmd, str(corpus(CORRUPT)), "--json")
    assert p.returncode == 1
    lines = p.stderr.splitlines()
    assert len(lines) == 1
    assert "0xbfd0" in lines[0] and str(CORRUPT_OFFSET) in lines[0]
    if cmd == "info":
        d = json.loads(p.stdout)
        assert d["total_records"] == sum(CORRUPT_COUNTS.values())
        assert [e["offset"] for e in d["errors"]] == [CORRUPT_OFFSET]
    else:
        assert len(p.stdout.splitlines()) == sum(CORRUPT_COUNTS.values())


@pytest.mark.parametrize("args", [["info", "x", "y"], ["dump", "x", "-i", "y"],
                                  ["info", "--json", "--no-such-option"],
                                  ["dump", "x", "--type", "NO_SUCH_TYPE"], ["--no-such-option"],
                                  ["dump", "x", "--limit", "many"]], ids=" ".join)
def test_cli_usage_exit_2(args: list[str], corpus: Corpus) -> None:
    args = [str(corpus("perf61/perf-normal-g.data")) if a == "x" else a for a in args]
    p = cli(*args)
    assert p.returncode == 2
    assert p.stdout == "" and p.stderr


def test_cli_missing_file_exit_1(tmp_path: Path) -> None:
    p = cli("info", str(tmp_path / "nope.data"))
    assert p.returncode == 1
    assert p.stderr == f"perftui: {tmp_path / 'nope.data'}: No such file or directory\n"
