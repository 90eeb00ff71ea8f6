"""The unwound chains kept with the index cache (symbols/unwind/store.py): a reopened DWARF
recording is never unwound again, and its chains are still perf's.

The oracle is perf 6.1's ``perf script`` (frame for frame, as tests/test_unwind_perf.py):
the chains a reopen takes from the cache must give perf's frames with the unwinder made to
raise.  A binary changed since (its mtime) or a damaged attachment is unwound again.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import test_unwind_perf
from dwarfprograms import DwarfBuilt
from perfprograms import recorder
from test_report_perf import compare

from perftui.perfdata import RecordType, open_recording
from perftui.perfdata.indexcache import IndexCache
from perftui.symbols.naming.resolver import Resolver, SymbolOptions
from perftui.symbols.unwind import overlay, session, unwinder

pytestmark = pytest.mark.perf


class Counted:
    """The unwinder, counting the blocks it unwinds (``fail``: raising instead)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, fail: bool = False) -> None:
        self.blocks = 0
        real = unwinder.Unwinder.unwind

        def unwind(u: unwinder.Unwinder, rows: np.ndarray) -> object:
            if fail:
                raise AssertionError("unwound again")
            self.blocks += 1
            return real(u, rows)

        monkeypatch.setattr(unwinder.Unwinder, "unwind", unwind)


def chains(data: Path, cache: IndexCache) -> tuple[overlay.ChainOverlay, Resolver]:
    """A fresh open of ``data`` with ``cache``, its user stacks unwound (or restored)."""
    rec = open_recording(data, cache=cache)
    rec.build_index()
    if rec.index.origin == "walk":
        assert rec.save_index()  # (as present/session.py does: the chains need the entry)
    res = Resolver(rec, SymbolOptions())
    ov = session.ensure_unwound(res)
    assert ov is not None
    return ov, res


def same(a: overlay.ChainOverlay, b: overlay.ChainOverlay) -> None:
    assert np.array_equal(a.rows, b.rows)
    for k in range(len(a.rows)):
        wa = a.buf[int(a.at[k]):int(a.at[k]) + 8 * int(a.count[k])]
        wb = b.buf[int(b.at[k]):int(b.at[k]) + 8 * int(b.count[k])]
        assert bytes(wa) == bytes(wb), int(a.rows[k])
    assert np.array_equal(a.outcome, b.outcome)
    assert a.notes == b.notes


@pytest.fixture
def own(dwarf_built: DwarfBuilt, tmp_path: Path) -> tuple[Path, Path, IndexCache]:
    """A recording of a private copy of dwchain (changed by the tests; its library is the
    fixture's), and a cache of its own."""
    prog = tmp_path / "bin" / "dwchain"
    prog.parent.mkdir()
    shutil.copy2(dwarf_built.dwchain, prog)
    (tmp_path / "rec").mkdir()
    data = recorder(tmp_path / "rec")("own", prog, "4", callgraph="dwarf",
                                      buildid_cache=False)
    return data, prog, IndexCache(str(tmp_path / "cache"))


@pytest.mark.slow
def test_a_reopen_unwinds_nothing(own: tuple[Path, Path, IndexCache],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    data, _prog, cache = own
    counted = Counted(monkeypatch)
    first, _ = chains(data, cache)
    assert counted.blocks >= 1 and len(first.rows) > 100
    Counted(monkeypatch, fail=True)
    again, res = chains(data, cache)
    same(first, again)
    # the kept chains are still perf's, frame for frame
    rows = np.nonzero(res.rec.columns["type"] == RecordType.SAMPLE)[0]
    monkeypatch.setattr(test_unwind_perf, "resolved",
                        lambda _d, _opts=None: (res, res.samples(rows)))
    total, equal, diffs = test_unwind_perf.frame_rate(data)
    assert equal >= 0.995 * total and total >= 300, diffs[:20]


def test_a_changed_binary_is_unwound_again(own: tuple[Path, Path, IndexCache],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    data, prog, cache = own
    first, _ = chains(data, cache)
    st = prog.stat()
    os.utime(prog, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # the same bytes, touched
    counted = Counted(monkeypatch)
    again, _ = chains(data, cache)
    assert counted.blocks >= 1, "a changed binary's CFI was taken from the cache"
    same(first, again)
    Counted(monkeypatch, fail=True)
    same(first, chains(data, cache)[0])  # ...and kept again


def test_damaged_chains_are_not_used(own: tuple[Path, Path, IndexCache],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    data, _prog, cache = own
    first, _ = chains(data, cache)
    (col,) = Path(cache.directory).glob("*/att-chains-*/buf.col")
    raw = bytearray(col.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    col.write_bytes(bytes(raw))
    counted = Counted(monkeypatch)
    again, _ = chains(data, cache)
    assert counted.blocks >= 1
    assert any("cached call chains not usable" in n for n in cache.notes), cache.notes
    same(first, again)


@pytest.mark.slow
def test_report_with_other_names_takes_the_kept_chains(own: tuple[Path, Path, IndexCache],
                                                       monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    """Another engine names the samples again (another names attachment) but the chains
    do not depend on it: the second report unwinds nothing, and its rows are perf's.
    (``tree_broken``: perf 6.1 files some inlined rows twice, e.g. ``_dl_start_final
    (inlined)`` as 0.78% + 0.52% where perftui has one row of 1.30%, as in
    test_unwind_perf's report test: each of ours must be an exact sum of perf's.)"""
    data, _prog, cache = own
    monkeypatch.setenv("PERFTUI_CACHE_DIR", cache.directory)
    monkeypatch.setenv("PERFTUI_ENGINE", "plain")
    compare(data, "dso,sym", children=True, tree_broken=True, once=True)
    Counted(monkeypatch, fail=True)
    monkeypatch.setenv("PERFTUI_ENGINE", "compiled")
    compare(data, "dso,sym", children=True, tree_broken=True, once=True)


def test_a_reopen_imports_no_numba(own: tuple[Path, Path, IndexCache]) -> None:
    """A report whose names and chains are kept checks the DWARF files they came from
    (symbols/dwarf/dwarffile.py) without the compiled DWARF readers: numba's import and
    cached code are ~0.9 s of CPU, four times perf's whole report of such a file."""
    data, _prog, cache = own
    env = dict(os.environ, PERFTUI_CACHE_DIR=cache.directory, PERFTUI_ENGINE="")
    code = ("import sys, contextlib, io\nfrom perftui.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    assert main(['report', {str(data)!r}, '--children']) == 0\n"
            "print('numba' in sys.modules)")
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, timeout=300)
    assert first.stdout.split() == ["True"], first.stderr[-2000:]  # unwound: compiled
    again = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, timeout=300)
    assert again.stdout.split() == ["False"], again.stderr[-2000:]
    assert "DWARF unwinding: " in again.stderr  # the notes are kept with the chains
