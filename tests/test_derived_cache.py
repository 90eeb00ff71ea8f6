"""Results derived from a recording go into its cache entry one way (perftui/perfdata/
derived.py): each an attachment, read back checked; a damaged or truncated one is worked out
again and said once, never misread.

The oracle is perftui's own walk with no cache (the walk and its section counts are held to
perf 6.1 by test_sections_perf and test_differential; the names by test_report_perf): what
these tests prove is that a result read back from the cache, or worked out again after a bad
one, is exactly what that walk computes.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pytest
from test_index_cache import copy_demo, entry_dir, walked

from perftui.analysis.filters import parse_filter
from perftui.analysis.sectionreport import keep_first_screen, kept_section_report, section_report
from perftui.analysis.timeline import full_window, timeline_bins
from perftui.cli.entry import main as perftui_main
from perftui.demo import MODULES_DIR
from perftui.perfdata import Recording, open_recording
from perftui.perfdata.indexcache import IndexCache
from perftui.present.sections import sections_json
from perftui.symbols.modules.sectionmap import SectionMap

DIRS = [str(MODULES_DIR)]
INDEX_RESULTS = ("sections.counts", "sections.map", "sections.owner", "timeline.kind")
WHAT = {"sections.counts": "section counts", "sections.map": "section map",
        "sections.owner": "module sections", "timeline.kind": "timeline"}


def first_open(f: Path, cache: Path) -> None:
    """A walk with its first screen kept, as the browser and ``report`` leave it."""
    rec = open_recording(f, cache=IndexCache(str(cache)))
    rec.build_index()
    keep_first_screen(rec, modules_dirs=DIRS)
    assert rec.index.origin == "walk" and rec.save_index()
    rec.close()


def reopened(f: Path, cache: Path) -> tuple[Recording, IndexCache]:
    c = IndexCache(str(cache))
    rec = open_recording(f, cache=c)
    rec.build_index()
    assert rec.index.origin == "cache" and c.notes == []
    return rec, c


def cpu0(rec: Recording) -> dict[str, object]:
    first, last = rec.stats.span()
    return sections_json(section_report(rec, DIRS, flt=parse_filter("cpu=0", first, last)))


def bins(rec: Recording) -> list[np.ndarray]:
    t0, t1 = full_window(rec)
    return [timeline_bins(rec, t0, t1, w).counts for w in (1, 71, 300)]


def no_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_a: object) -> None:
        raise AssertionError("the sections of the rows were worked out again")

    monkeypatch.setattr(SectionMap, "lookup", boom)


def test_index_results_are_attachments_read_back(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    f = copy_demo(tmp_path)
    cache = tmp_path / "cache"
    ref = walked(f)
    first_open(f, cache)
    d = entry_dir(cache)
    assert sorted(p.name for p in d.glob("att-*")) == [f"att-{n}" for n in INDEX_RESULTS]
    assert not list(d.glob("d.*.col"))  # (version 1's other way: gone)
    again = open_recording(f, cache=IndexCache(str(cache)))
    assert again.open_cached()
    kept = kept_section_report(again, DIRS)  # before a single row is checked
    assert kept is not None and len(again.columns) == 0
    assert sections_json(kept) == sections_json(section_report(ref, DIRS))
    assert all(np.array_equal(a, b) for a, b in zip(bins(again), bins(ref), strict=True))
    want = cpu0(ref)
    again.build_index()
    no_lookup(monkeypatch)
    assert cpu0(again) == want


def damage(att: Path, how: str) -> None:
    if how == "manifest":
        p = att / "manifest"
        b = bytearray(p.read_bytes())
        b[len(b) // 2] ^= 0x01
        p.write_bytes(bytes(b))
        return
    (p,) = att.glob("*.col") if how != "per_entry" else [att / "per_entry.col"]
    if how == "truncated":
        b = p.read_bytes()
        p.write_bytes(b[:-8])
    else:
        b = bytearray(p.read_bytes())
        b[len(b) // 2] ^= 0x40
        p.write_bytes(bytes(b))


@pytest.mark.parametrize(("name", "how"), [
    ("timeline.kind", "flipped"), ("timeline.kind", "truncated"),
    ("sections.owner", "flipped"), ("sections.owner", "truncated"),
    ("sections.counts", "per_entry"), ("sections.counts", "manifest"),
    ("sections.map", "manifest")])
def test_damaged_result_is_made_again_said_once(tmp_path: Path, name: str, how: str) -> None:
    f = copy_demo(tmp_path)
    cache = tmp_path / "cache"
    ref = walked(f)
    first_open(f, cache)
    damage(entry_dir(cache) / f"att-{name}", how)
    rec, c = reopened(f, cache)
    want = sections_json(section_report(ref, DIRS))
    for again in (False, True):  # asked twice: worked out again or kept again, said once
        if name == "timeline.kind":
            assert all(np.array_equal(a, b) for a, b in zip(bins(rec), bins(ref), strict=True))
        elif name == "sections.owner":
            assert cpu0(rec) == cpu0(ref)
        else:
            kept = kept_section_report(rec, DIRS)
            if again and name == "sections.counts":  # counted again, and kept
                assert kept is not None and sections_json(kept) == want
            else:
                assert kept is None
            assert sections_json(section_report(rec, DIRS)) == want
    assert len(c.notes) == 1 and "not usable" in c.notes[0], c.notes
    assert c.notes[0].startswith(f"cached {WHAT[name]} not usable (")
    # the other results are still read back, untouched
    others = {p.name for p in entry_dir(cache).glob("att-*")}
    assert {f"att-{n}" for n in INDEX_RESULTS if n != name} <= others


def test_result_made_after_a_reopen_is_added_to_the_entry(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """An index restored from the cache keeps what it works out later (version 1 could
    keep derived arrays only with a walk's index)."""
    f = copy_demo(tmp_path)
    cache = tmp_path / "cache"
    first_open(f, cache)
    owner = entry_dir(cache) / "att-sections.owner"
    for p in owner.iterdir():
        p.unlink()
    owner.rmdir()
    want = cpu0(walked(f))
    rec, c = reopened(f, cache)
    assert cpu0(rec) == want  # worked out, and kept
    assert owner.is_dir() and c.notes == []
    rec.close()
    rec, c = reopened(f, cache)
    no_lookup(monkeypatch)
    assert cpu0(rec) == want


def report(f: Path, cache: Path) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert perftui_main(["report", "--json", "--sort", "sym", "--cache-dir", str(cache),
                             "--modules-dir", str(MODULES_DIR), str(f)]) == 0
    return out.getvalue(), err.getvalue()


def test_truncated_names_are_named_again_said_once(tmp_path: Path) -> None:
    f = copy_demo(tmp_path)
    cache = tmp_path / "cache"
    want, _ = report(f, tmp_path / "other-cache")
    assert report(f, cache)[0] == want
    (names,) = entry_dir(cache).glob("att-names-*")
    p = names / "stack_locs.col"
    p.write_bytes(p.read_bytes()[:-4])
    got, err = report(f, cache)
    assert got == want
    assert err.count("not usable") == 1 and "cached names" in err, err
    got, err = report(f, cache)  # named again and kept again
    assert got == want and "not usable" not in err


def test_entry_removed_while_names_are_written_keeps_the_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another perftui drops the entry (the recording was replaced under this one's feet)
    while the names are written into it: the names, the groups and the report are what a
    cache-less run gives; the entry is not kept, said once; nothing is lost (before: the
    names pass stopped on ENOENT and the browser showed no symbols)."""
    import shutil

    from perftui.perfdata import derived

    f = copy_demo(tmp_path)
    want, _ = report(f, tmp_path / "other-cache")
    cache = tmp_path / "cache"
    first_open(f, cache)
    begin = derived.begin
    made: list[object] = []

    def begin_then_lose_the_entry(rec: Recording) -> object:
        store = begin(rec)
        if store is not None and not made:
            made.append(store)
            shutil.rmtree(entry_dir(cache))  # as IndexCache.discard does, from outside
        return store

    monkeypatch.setattr(derived, "begin", begin_then_lose_the_entry)
    got, err = report(f, cache)
    assert made and got == want
    assert err.count("not cached") == 1 and "No such file or directory" in err, err
