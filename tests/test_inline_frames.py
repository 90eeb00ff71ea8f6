"""Inlined frames put into the names' stacks (symbols/naming/inlines.py), checked frame by
frame against an oracle that is not perftui: perf script's frames, each replaced as perf's
``append_inlines`` does by binutils' ``addr2line -i -f`` records at that frame's address
(a record named as the frame's symbol is that symbol, any other ``name (inlined)``).

perf 6.1 expands only DWARF-unwound frames; here a frame-pointer recording's samples are
declared unwound (``unwound_rows`` patched), so that the expansion, the cache and the
notes are checked on real stacks without the unwinder.  The end-to-end checks against
perf's own inlined frames of ``--call-graph dwarf`` recordings are in
tests/test_inline_perf.py."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from perfprograms import PROGRAMS, perf_script_samples, require, shared

from perftui.cli import main as perftui_main
from perftui.perfdata import open_recording
from perftui.present.session import named_samples
from perftui.symbols.dwarf import dsodwarf
from perftui.symbols.files.elfheaders import open_elf_headers
from perftui.symbols.naming.samplestore import sample_rows_all
from perftui.symbols.options import SymbolOptions
from perftui.symbols.unwind import overlay

pytestmark = pytest.mark.perf


@pytest.fixture(scope="module")
def recording(shared_dir: Path) -> Path:
    """tests/programs/inlined.c built -O2 and recorded with frame pointers, once per run
    (:func:`perfprograms.shared`: every xdist worker takes the same recording)."""
    gcc, perf = require("gcc"), require("perf")

    def make(d: Path, env: dict[str, str]) -> Path:
        exe = d / "inlined"
        p = subprocess.run([gcc, "-O2", "-fno-omit-frame-pointer", "-g", "-o", str(exe),
                            str(PROGRAMS / "inlined.c")], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        data = d / "fp.data"
        p = subprocess.run([perf, "record", "-q", "-e", "cpu-clock", "-F", "4000", "-g", "-o",
                            str(data), "--", str(exe), "600000"],
                           capture_output=True, text=True, timeout=120, cwd=d, env=env)
        assert p.returncode == 0, p.stderr
        return data

    return shared(shared_dir, "test_inline_frames.recording", make)


def _text_offset(path: str) -> int:
    with open_elf_headers(path) as h:
        s = h.section(".text")
        return s.addr - s.offset if s is not None else 0


def _addr2line(path: str, addrs: list[int]) -> dict[int, list[str] | None]:
    """The function names addr2line prints per address (None: ``??``/``??:0``)."""
    p = subprocess.run([require("addr2line"), "-e", path, "-i", "-f", "-a"],
                       input="".join(f"{a:x}\n" for a in addrs), capture_output=True,
                       text=True, timeout=300)
    out: dict[int, list[str]] = {}
    cur = -1
    for ln in p.stdout.splitlines():
        if re.fullmatch(r"0x[0-9a-f]{16}", ln):
            cur = int(ln, 16)
            out[cur] = []
        else:
            out[cur].append(ln)
    return {a: None if v == ["??", "??:0"] else v[0::2] for a, v in out.items()}


def expected(data: Path) -> Counter[tuple[str, ...]]:
    """perf script's callchains (leaf first), each user frame with a symbol replaced by
    its addr2line records, perf's way."""
    samples = perf_script_samples(data, callchain=True, extra=("--no-inline",))
    asks: dict[str, set[int]] = {}
    for s in samples:
        for ip, sym, _off, dso in s.frames:
            if sym is not None and dso.startswith("/"):
                asks.setdefault(dso, set()).add(ip + _text_offset(dso))
    answers = {dso: _addr2line(dso, sorted(a)) for dso, a in asks.items()}
    out: Counter[tuple[str, ...]] = Counter()
    for s in samples:
        frames: list[str] = []
        for ip, sym, _off, dso in s.frames:
            recs = (answers[dso].get(ip + _text_offset(dso)) if sym is not None
                    and dso.startswith("/") else None)
            if not recs:
                frames.append(sym if sym is not None else "[unknown]")
                continue
            frames += [n if n == sym else f"{n} (inlined)" for n in recs]
        out[tuple(frames)] += 1
    return out


def ours(data: Path, opts: SymbolOptions | None = None
         ) -> tuple[Counter[tuple[str, ...]], list[str]]:
    rec = open_recording(str(data))
    rec.build_index()
    opts = opts or SymbolOptions()
    sl = named_samples(rec, opts, True)
    out: Counter[tuple[str, ...]] = Counter()
    for k in range(len(sl)):
        locs, _offs = sl.frames(k)
        out[tuple(sl.locs.label(x) if sl.locs.name[x] is not None else "[unknown]"
                  for x in locs[1:])] += 1
    return out, sl.notes


def report(data: Path) -> dict:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert perftui_main(["report", str(data), "--json", "--children", "--sort",
                             "dso,sym"]) == 0
    return json.loads(buf.getvalue())


@pytest.fixture
def all_unwound(monkeypatch: pytest.MonkeyPatch) -> None:
    def every_sample(rec: object) -> np.ndarray:
        return sample_rows_all(rec)  # type: ignore[arg-type]

    monkeypatch.setattr(overlay, "unwound_rows", every_sample)


@pytest.mark.usefixtures("all_unwound")
def test_frames_equal_addr2lines_chains(recording: Path) -> None:
    got, notes = ours(recording)
    want = expected(recording)
    assert sum(got.values()) == sum(want.values())
    assert got == want
    frames = Counter(f for stack, n in got.items() for f in stack for _ in range(n))
    # the program's chain is there, inlined frames before the function they are in
    assert frames["mix (inlined)"] and frames["braid_step (inlined)"]
    assert any(s[i:i + 3] == ("mix (inlined)", "braid_step (inlined)", "leaf")
               for s in got for i in range(len(s)))
    assert not [n for n in notes if n.startswith("inlined frames")], notes


@pytest.mark.usefixtures("all_unwound")
def test_kept_in_the_cache(recording: Path, tmp_path: Path,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The report's inlined rows come back from the names cache (no DWARF read again)."""
    monkeypatch.setenv("PERFTUI_CACHE_DIR", str(tmp_path / "cache"))
    read: list[str] = []
    real = dsodwarf.DsoDwarf  # (inlines imports it where a DSO's DWARF is opened)

    def counted(*a: object, **k: object) -> object:
        read.append(str(a[0]))
        return real(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(dsodwarf, "DsoDwarf", counted)
    first = report(recording)
    assert read  # (the first report reads the DWARF: the count sees it)
    read.clear()
    again = report(recording)
    assert again == first and not read
    syms = {r["sym"] for r in first["rows"]}
    assert {"mix (inlined)", "braid_step (inlined)"} <= syms
    assert list((tmp_path / "cache").glob("*/att-names-*"))


@pytest.mark.usefixtures("all_unwound")
def test_no_inline(recording: Path) -> None:
    got, _ = ours(recording, SymbolOptions(inline=False))
    assert not any(f.endswith(" (inlined)") for s in got for f in s)


def test_frame_pointer_stacks_are_left_alone(recording: Path) -> None:
    """perf 6.1 gives no inline chains to a frame-pointer callchain (its 'Append inlines
    to non-DWARF callchains' was reverted): neither does perftui."""
    got, _ = ours(recording)
    assert not any(f.endswith(" (inlined)") for s in got for f in s)
