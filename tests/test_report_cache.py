"""``perftui report`` keeps every sample's names with the index cache entry and uses them
only while the symbol files are what they were: perf 6.1's report on the same files is the
oracle after every change (a symbol file stripped, moved away, put back), so a stale name
kept by perftui would show as a row perf does not have.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from perfprograms import Built, recorder, require
from test_report_perf import compare, fold_perf_script, ours

from perftui.cli import main as perftui_main
from perftui.perfdata.indexcache import IndexCache
from perftui.present import session
from perftui.symbols.naming.resolver import SymbolOptions
from perftui.symbols.naming.samplestore import attachment_name

pytestmark = pytest.mark.perf

KEYS = "comm,dso,sym"


class Counting:
    """Counts the resolvers ``perftui report`` makes (none: the names came from the
    cache)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.made = 0
        real = session.Resolver

        def make(*a: object, **k: object) -> object:
            self.made += 1
            return real(*a, **k)  # type: ignore[arg-type]

        monkeypatch.setattr(session, "Resolver", make)


@pytest.fixture
def own_program(built: Built, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                ) -> tuple[Path, Path]:
    """A recording of a private copy of hotprog (its file is changed by the tests), with a
    home of its own: no build-id cache holds a copy of the program for perf or perftui to
    read instead of the file (``perf record`` puts one there; other tests record hotprog)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    prog = tmp_path / "bin" / "hotprog"
    prog.parent.mkdir()
    shutil.copy2(built.hotprog, prog)
    (tmp_path / "rec").mkdir()
    data = recorder(tmp_path / "rec")("own", prog, "2", buildid_cache=False)
    return data, prog


def both(data: Path) -> None:
    compare(data, KEYS, children=False)
    compare(data, KEYS, children=True)


def syms(data: Path) -> set[str]:
    return {r["sym"] for r in ours(data, KEYS, True)["rows"]}


def attachments(data: Path) -> list[Path]:
    cache = Path(os.environ["PERFTUI_CACHE_DIR"])
    (entry,) = [e for e in IndexCache(str(cache)).entries() if e.path == str(data)]
    return sorted((cache / entry.key).glob("att-names-*"))


def test_second_report_resolves_nothing(own_program: tuple[Path, Path],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    data, _prog = own_program
    count = Counting(monkeypatch)
    both(data)  # --no-children names the stacks too (kept): --children reuses them
    assert count.made == 1 and len(attachments(data)) == 1
    both(data)
    assert count.made == 1, "the names were resolved again"


def test_folded_after_a_self_report_names_nothing(own_program: tuple[Path, Path],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``report --no-children --json`` (no stacks shown) keeps the names with their
    stacks, so a later ``--folded`` makes no resolver; its stacks equal perf 6.1 script's,
    folded."""
    data, _prog = own_program
    count = Counting(monkeypatch)
    compare(data, KEYS, children=False)
    assert count.made == 1
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert perftui_main(["report", str(data), "--folded"]) == 0
    assert count.made == 1, "--folded named the samples again"
    got: Counter[str] = Counter()
    for line in buf.getvalue().splitlines():
        stack, n = line.rsplit(" ", 1)
        got[stack] += int(n)
    assert got == fold_perf_script(data)


def test_changed_symbol_file_is_resolved_again(own_program: tuple[Path, Path],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    data, prog = own_program
    both(data)
    before = syms(data)
    subprocess.run([require("strip"), str(prog)], check=True)  # same build id, no .symtab
    count = Counting(monkeypatch)
    both(data)
    assert count.made >= 1
    assert syms(data) != before  # perf's names changed, and ours with them


def test_symbol_file_gone_and_back(own_program: tuple[Path, Path],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    data, prog = own_program
    both(data)
    with_file = syms(data)
    away = prog.with_name("elsewhere")
    prog.rename(away)
    count = Counting(monkeypatch)
    both(data)
    assert count.made >= 1 and syms(data) != with_file
    away.rename(prog)  # the very same file (inode, size, mtime) is there again
    both(data)
    assert syms(data) == with_file


def test_damaged_names_are_not_used(own_program: tuple[Path, Path]) -> None:
    data, _prog = own_program
    both(data)
    (att,) = attachments(data)
    leaf = att / "leaf.col"
    raw = bytearray(leaf.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    leaf.write_bytes(bytes(raw))
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        both(data)
    assert "not usable" in err.getvalue()
    both(data)  # and the names kept again are right


def test_tampered_manifest_is_not_used(own_program: tuple[Path, Path]) -> None:
    data, _prog = own_program
    both(data)
    (att,) = attachments(data)
    m = att / "manifest"
    head, _, body = m.read_bytes().partition(b"\n")
    doc = json.loads(body)
    doc["meta"]["names"] = ["tampered"] * len(doc["meta"]["names"])
    m.write_bytes(head + b"\n" + json.dumps(doc).encode())  # the checksum no longer fits
    both(data)


def test_options_name_their_own_attachment(own_program: tuple[Path, Path],
                                           tmp_path: Path) -> None:
    data, _prog = own_program
    a = attachment_name(SymbolOptions())
    assert a == attachment_name(SymbolOptions())
    assert a != attachment_name(SymbolOptions(kallsyms="/proc/kallsyms"))
    assert a != attachment_name(SymbolOptions(symfs=str(tmp_path)))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert perftui_main(["report", str(data), "--json", "--symfs", str(tmp_path)]) == 0
    assert len(attachments(data)) == 1
    compare(data, KEYS, children=False)
    assert len(attachments(data)) == 2
