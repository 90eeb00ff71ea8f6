"""The persistent index cache and the mapped index (issue 15).

The oracle for every index here is perftui's own walk into anonymous memory, with no
cache: the walk itself is held to perf 6.1 by test_differential, test_directory and
test_sections_perf.  What these tests prove is that a mapped index, and an index read back
from the cache, are exactly that walk's, and that a cache entry is used only when it is
right for the file.
"""

from __future__ import annotations

import errno
import hashlib
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from conftest import DATA, corpus_files, path_of
from perftui.demo import demo_path
from perftui.demo.generate import write_demo
from perftui.perfdata import Recording, open_recording
from perftui.perfdata import colstore as colstore_mod
from perftui.perfdata.index import COLUMNS
from perftui.perfdata.indexcache import (
    FORMAT_VERSION,
    IndexCache,
    read_manifest,
    write_manifest,
)

Corpus = Callable[[str], Path]


def walked(path: Path) -> Recording:
    """The oracle: a plain walk into anonymous memory, no cache."""
    rec = open_recording(path)
    rec.build_index()
    return rec


def same_index(a: Recording, b: Recording) -> None:
    """Everything a walk leaves behind, equal."""
    assert len(a.columns) == len(b.columns)
    for k in COLUMNS:
        assert a.columns[k].dtype == b.columns[k].dtype, k
        assert np.array_equal(a.columns[k], b.columns[k]), k
    assert a.stats.as_json() == b.stats.as_json()
    assert [(e.offset, e.message) for e in a.errors] == [(e.offset, e.message) for e in b.errors]
    assert a.index.stream_starts == b.index.stream_starts
    assert a.index.unknown_ids == b.index.unknown_ids
    assert [(x.display_name, x.ids) for x in a.attrs] == [(x.display_name, x.ids) for x in b.attrs]
    rows = np.arange(len(a.columns))
    assert np.array_equal(a.outer_offsets(rows), b.outer_offsets(rows))
    assert np.array_equal(a.rows_of_type(1, 3, 9), b.rows_of_type(1, 3, 9))
    for i in range(0, len(a.columns), max(1, len(a.columns) // 300)):
        try:
            want = a.record_bytes(i)
        except ValueError:
            continue
        assert b.record_bytes(i) == want, i


def cached(path: Path, cache_dir: Path, **kw: object) -> Recording:
    rec = open_recording(path, cache=IndexCache(str(cache_dir), **kw))  # type: ignore[arg-type]
    rec.build_index()
    return rec


# -- the mapped index and the cache give the walk's index -----------------------------------
@pytest.mark.parametrize("rel", ["demo", *corpus_files()])
def test_mapped_and_cached_index_equal_the_walk(rel: str, tmp_path: Path) -> None:
    path = demo_path() if rel == "demo" else path_of(rel)
    ref = walked(path)
    mapped = open_recording(path, mapped=True)
    mapped.build_index()
    assert mapped.index.store is not None and not mapped.index.store.keep
    same_index(ref, mapped)
    first = cached(path, tmp_path)
    assert first.index.origin == "walk"
    same_index(ref, first)
    assert first.save_index()
    again = cached(path, tmp_path)
    assert again.index.origin == "cache" and again.indexed
    same_index(ref, again)
    for r in (ref, mapped, first, again):
        r.close()


def test_demo_cached_sections_and_timeline(tmp_path: Path) -> None:
    """The browser's first screen from the cache is what a walk computes."""
    from perftui.analysis.sectionreport import kept_section_report, section_report
    from perftui.analysis.timeline import full_window, keep_fine_bins, timeline_bins
    from perftui.demo import MODULES_DIR
    from perftui.present.sections import sections_json

    dirs = [str(MODULES_DIR)]
    ref = walked(demo_path())
    want = sections_json(section_report(ref, dirs), symbols=True)
    first = cached(demo_path(), tmp_path)
    rep = section_report(first, dirs)
    from perftui.analysis.sections import keep_section_map

    keep_section_map(first, rep.smap, rep.files.build_ids)
    keep_fine_bins(first)
    assert first.save_index()
    again = open_recording(demo_path(), cache=IndexCache(str(tmp_path)))
    assert again.open_cached()
    kept = kept_section_report(again, dirs)  # before a single row is checked
    assert kept is not None and len(again.columns) == 0
    got = sections_json(kept)
    assert got == sections_json(section_report(ref, dirs))
    t0, t1 = full_window(ref)
    for width in (1, 7, 71, 111, 300):
        a, b = timeline_bins(ref, t0, t1, width), timeline_bins(again, t0, t1, width)
        assert np.array_equal(a.counts, b.counts) and a.edges == b.edges
    again.build_index()
    assert sections_json(section_report(again, dirs), symbols=True) == want


@pytest.mark.parametrize("width", [1, 3, 80, 111, 16384])
def test_timeline_columns_hold_exactly_their_edges(width: int) -> None:
    """Counts per column, against a count of the times between the column's edges."""
    from perftui.analysis.timeline import full_window, kind_of, timeline_bins

    rec = walked(demo_path())
    t0, t1 = full_window(rec)
    b = timeline_bins(rec, t0, t1, width)
    c = rec.columns
    t = c["time"].astype(np.int64)
    kinds = kind_of(c["type"])
    assert b.edges is not None and b.edges[0] == t0 and b.edges[-1] == t1
    for k in range(4):
        times = np.sort(t[(kinds == k) & (t > 0)])
        lo = np.searchsorted(times, np.array(b.edges[:-1]), side="left")
        hi = np.searchsorted(times, np.array(b.edges[1:]), side="left")
        assert np.array_equal(b.counts[k], hi - lo)


# -- hit, miss, stale ------------------------------------------------------------------------
def copy_demo(tmp_path: Path, name: str = "perf.data") -> Path:
    dst = tmp_path / name
    shutil.copyfile(demo_path(), dst)
    return dst


def saved(path: Path, cache_dir: Path) -> Recording:
    rec = cached(path, cache_dir)
    assert rec.index.origin == "walk" and rec.save_index()
    return rec


def entries(cache_dir: Path) -> list[str]:
    return sorted(e.key for e in IndexCache(str(cache_dir)).entries())


def test_hit_and_miss(tmp_path: Path) -> None:
    f = copy_demo(tmp_path)
    cache = tmp_path / "cache"
    first = cached(f, cache)
    assert first.index.origin == "walk"
    first.close()
    assert entries(cache) == []  # nothing is kept until the index is saved
    saved(f, cache)
    assert len(entries(cache)) == 1
    hit = cached(f, cache)
    assert hit.index.origin == "cache"
    assert not [n for n in os.listdir(cache) if n.startswith(".tmp")]


def test_link_shares_the_entry(tmp_path: Path) -> None:
    f = copy_demo(tmp_path)
    cache = tmp_path / "cache"
    saved(f, cache)
    link = tmp_path / "other-name.data"
    os.link(f, link)
    assert cached(link, cache).index.origin == "cache"


@pytest.mark.parametrize("change", ["rewritten same size", "mtime", "grown", "replaced"])
def test_stale_entry_is_not_used(tmp_path: Path, change: str) -> None:
    f = copy_demo(tmp_path)
    cache = tmp_path / "cache"
    saved(f, cache)
    data = bytearray(f.read_bytes())
    st = f.stat()
    if change == "rewritten same size":
        # the last record's bytes: same size, same ends hashed? no: only the mtime tells
        data[len(data) // 2] ^= 0xFF
        f.write_bytes(bytes(data))
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    elif change == "mtime":
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    elif change == "grown":
        with open(f, "ab") as out:
            out.write(b"\0" * 8)
    else:  # a new file renamed over the old name (a new inode)
        new = tmp_path / "new.data"
        shutil.copyfile(walked_copy_source(), new)
        os.rename(new, f)
    rec = cached(f, cache)
    assert rec.index.origin == "walk"
    same_index(walked(f), rec)
    assert rec.save_index()
    assert len(entries(cache)) == 1  # the entry of the old file under this name is gone


def walked_copy_source() -> Path:
    return DATA / "perf61" / "perf-normal-g.data"


def test_same_size_same_mtime_rewrite_in_the_middle_is_not_seen(tmp_path: Path) -> None:
    """The documented limit (as make's and ccache's): identity is stat + both ends."""
    f = copy_demo(tmp_path)
    cache = tmp_path / "cache"
    saved(f, cache)
    st = f.stat()
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0x01
    f.write_bytes(bytes(data))
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert cached(f, cache).index.origin == "cache"


# -- corrupt entries -------------------------------------------------------------------------
def entry_dir(cache: Path) -> Path:
    (key,) = entries(cache)
    return cache / key


def corrupt(cache: Path, how: str) -> None:
    d = entry_dir(cache)
    if how == "flipped byte in a column":
        p = d / "time.col"
        b = bytearray(p.read_bytes())
        b[len(b) // 3] ^= 0x40
        p.write_bytes(bytes(b))
    elif how == "flipped byte in the manifest":
        p = d / "manifest"
        b = bytearray(p.read_bytes())
        b[len(b) // 2] ^= 0x01
        p.write_bytes(bytes(b))
    elif how == "truncated column":
        p = d / "pos.col"
        os.truncate(p, p.stat().st_size - 8)
    elif how == "missing column":
        (d / "attr.col").unlink()
    elif how == "wrong version":
        m = read_manifest(str(d / "manifest"))
        body = json.dumps(m).encode()
        import xxhash

        (d / "manifest").write_bytes(
            f"perftui-index {FORMAT_VERSION + 1} {xxhash.xxh3_128_hexdigest(body)}\n".encode()
            + body)
    elif how == "consistent manifest of another file":
        m = read_manifest(str(d / "manifest"))
        m["files"][0]["size"] += 8
        write_manifest(str(d / "manifest"), m)
    elif how == "tampered column with a matching manifest":
        # a forged entry: src values no source has, checksums recomputed
        p = d / "src.col"
        a = np.frombuffer(p.read_bytes(), np.uint8).copy()
        a[5] = 7
        p.write_bytes(a.tobytes())
        m = read_manifest(str(d / "manifest"))
        import xxhash

        m["arrays"]["src"]["blocks"] = [xxhash.xxh3_128_hexdigest(a.tobytes())]
        write_manifest(str(d / "manifest"), m)
    else:
        raise AssertionError(how)


@pytest.mark.parametrize("how", [
    "flipped byte in a column", "flipped byte in the manifest", "truncated column",
    "missing column", "wrong version", "consistent manifest of another file",
    "tampered column with a matching manifest"])
def test_corrupt_entry_is_rebuilt(tmp_path: Path, how: str) -> None:
    f = copy_demo(tmp_path)
    cache = tmp_path / "cache"
    saved(f, cache)
    corrupt(cache, how)
    c = IndexCache(str(cache))
    rec = open_recording(f, cache=c)
    rec.build_index()
    assert rec.index.origin == "walk"  # not trusted: walked again
    same_index(walked(f), rec)
    assert entries(cache) == []  # the bad entry is gone
    assert len(c.notes) == 1 and "not usable" in c.notes[0]
    assert rec.save_index()
    assert cached(f, cache).index.origin == "cache"


def test_corrupt_entry_found_while_checking_blocks(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A bad block past the first: the rows shown so far go, the walk gives them all."""
    from perftui.perfdata import indexcache, indexpersist

    monkeypatch.setattr(indexcache, "BLOCK_ROWS", 1024)
    monkeypatch.setattr(indexpersist, "BLOCK_ROWS", 1024)
    f = copy_demo(tmp_path)
    cache = tmp_path / "cache"
    saved(f, cache)
    p = entry_dir(cache) / "tid.col"
    b = bytearray(p.read_bytes())
    b[-3] ^= 0x01  # the last block
    p.write_bytes(bytes(b))
    seen: list[int] = []
    rec = open_recording(f, cache=IndexCache(str(cache)))
    rec.build_index(progress=lambda n, _b: seen.append(n), budget=0.0)
    assert rec.index.origin == "walk" and seen[0] == 1024
    same_index(walked(f), rec)


# -- concurrent writers ----------------------------------------------------------------------
def _index_and_save(path: str, cache: str, barrier: object, out: object) -> None:
    rec = open_recording(path, cache=IndexCache(cache))
    rec.build_index()
    barrier.wait()  # type: ignore[attr-defined]  # both indexed: save at the same time
    kept = rec.save_index()
    digest = {k: hashlib.sha256(rec.columns[k].tobytes()).hexdigest() for k in COLUMNS}
    out.put((kept, rec.index.origin, digest))  # type: ignore[attr-defined]


def test_two_writers_at_once(tmp_path: Path) -> None:
    f = copy_demo(tmp_path)
    cache = tmp_path / "cache"
    ctx = multiprocessing.get_context("spawn")
    barrier, out = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_index_and_save, args=(str(f), str(cache), barrier, out))
             for _ in range(2)]
    for p in procs:
        p.start()
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    ref = walked(f)
    want = {k: hashlib.sha256(ref.columns[k].tobytes()).hexdigest() for k in COLUMNS}
    assert all(origin == "walk" and d == want for _kept, origin, d in results)
    assert sorted(k for k, _o, _d in results) == [False, True]  # one entry written
    assert len(entries(cache)) == 1
    assert not [n for n in os.listdir(cache) if n.startswith((".tmp", ".trash"))]
    again = cached(f, cache)
    assert again.index.origin == "cache"
    same_index(ref, again)


# -- a cache that cannot be written ----------------------------------------------------------
def test_unwritable_cache_dir(tmp_path: Path) -> None:
    """A cache directory that cannot be made (here: below a regular file)."""
    f = copy_demo(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    c = IndexCache(str(blocker / "cache"))
    rec = open_recording(f, cache=c)
    rec.build_index()
    same_index(walked(f), rec)
    assert not rec.save_index()
    assert len(c.notes) == 1 and "cannot write" in c.notes[0]


def test_read_only_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read-only file system: a hit still works; a miss indexes and says so once."""
    f = copy_demo(tmp_path)
    cache = tmp_path / "cache"
    saved(f, cache)

    def refuse(*_a: object, **_k: object) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(os, "mkdir", refuse)
    monkeypatch.setattr(os, "utime", refuse)
    assert cached(f, cache).index.origin == "cache"
    g = tmp_path / "other.data"
    shutil.copyfile(walked_copy_source(), g)
    c = IndexCache(str(cache))
    rec = open_recording(g, cache=c)
    rec.build_index()
    rec2 = open_recording(g, cache=c)
    rec2.build_index()
    same_index(walked(g), rec)
    assert c.notes == [f"index cache off: cannot write in {cache} (Read-only file system)"]


def test_cache_limit_too_small(tmp_path: Path) -> None:
    f = copy_demo(tmp_path)
    c = IndexCache(str(tmp_path / "cache"), limit=1000)
    rec = open_recording(f, cache=c)
    rec.build_index()
    assert not rec.save_index()
    assert len(c.notes) == 1 and "more than the cache limit" in c.notes[0]
    assert entries(tmp_path / "cache") == []
    assert not os.listdir(tmp_path / "cache")


def test_disk_full_while_indexing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No room for the column files: the index goes on in memory, complete and right."""
    f = copy_demo(tmp_path)
    calls = {"n": 0}
    real = os.posix_fallocate

    def full(fd: int, off: int, n: int) -> None:
        calls["n"] += 1
        if calls["n"] > 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd, off, n)

    monkeypatch.setattr(colstore_mod.os, "posix_fallocate", full)
    c = IndexCache(str(tmp_path / "cache"))
    rec = open_recording(f, cache=c)
    rec.build_index()
    same_index(walked(f), rec)
    assert not rec.save_index()
    assert c.notes == ["index kept in memory, not cached (No space left on device)"]
    assert not os.listdir(tmp_path / "cache")


# -- eviction --------------------------------------------------------------------------------
def test_least_recently_used_goes_first(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    files = []
    for k, name in enumerate(["a.data", "b.data", "c.data"]):
        f = copy_demo(tmp_path, name)
        with open(f, "r+b") as out:  # three different recordings (the last bytes differ)
            out.seek(-1, 2)
            out.write(bytes([k]))
        files.append(f)
    a, b, c = files
    saved(a, cache)
    size = IndexCache(str(cache)).entries()[0].nbytes
    saved(b, cache)
    os.utime(entry_of(cache, b) / "manifest", (1, 1))  # b: used long ago
    assert cached(a, cache).index.origin == "cache"  # a: used just now
    rec = open_recording(c, cache=IndexCache(str(cache), limit=2 * size + size // 2))
    rec.build_index()
    assert rec.save_index()
    left = {e.path for e in IndexCache(str(cache)).entries()}
    assert left == {str(a), str(c)}


def entry_of(cache: Path, f: Path) -> Path:
    (e,) = [e for e in IndexCache(str(cache)).entries() if e.path == str(f)]
    return cache / e.key


# -- kinds of recording ----------------------------------------------------------------------
def test_standard_input_is_never_cached(tmp_path: Path) -> None:
    with open(DATA / "perf61" / "perf-pipe.data", "rb") as f:
        rec = Recording(None, stream=f, cache=IndexCache(str(tmp_path / "cache")))
        rec.build_index()
    assert rec.identity() is None and not rec.save_index()
    assert not (tmp_path / "cache").exists()


def test_directory_recording(tmp_path: Path) -> None:
    """A perf.data/ directory: every data file is part of its identity."""
    d = tmp_path / "perf.data"
    d.mkdir()
    shutil.copyfile(DATA / "perf61" / "perf-normal-g.data", d / "data")
    cache = tmp_path / "cache"
    saved(d, cache)
    assert cached(d, cache).index.origin == "cache"
    shutil.copyfile(DATA / "perf61" / "perf-zstd.data", d / "data.1")
    rec = cached(d, cache)
    assert rec.index.origin == "walk"
    ref = walked(d)
    same_index(ref, rec)
    assert rec.save_index()
    again = cached(d, cache)
    assert again.index.origin == "cache" and len(again.index.stream_starts) == 2
    same_index(ref, again)
    assert np.array_equal(again.merged_order(), ref.merged_order())


# -- the command line ------------------------------------------------------------------------
def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "perftui", *args], capture_output=True,
                          text=True, timeout=300, env={**os.environ, **(env or {})})


def test_cli_cache_list_and_clear(tmp_path: Path) -> None:
    f = copy_demo(tmp_path)
    cache = tmp_path / "cache"
    saved(f, cache)
    p = cli("cache", "--list", "--cache-dir", str(cache))
    assert p.returncode == 0
    total = write_demo(tmp_path / "plan.data").total  # the generator's count (its seed)
    assert "1 cached index," in p.stdout and str(f) in p.stdout
    assert f"{total:,} records" in p.stdout
    p = cli("cache", "--clear", "--cache-dir", str(cache))
    assert p.returncode == 0 and "removed 1 cached index" in p.stdout
    assert entries(cache) == []
    p = cli("cache", "--help")
    words = " ".join(p.stdout.split())
    assert "--list" in words and "--clear" in words and "standard input" in words


def test_cli_info_and_sections_from_the_cache(tmp_path: Path) -> None:
    """The same output with a cache entry (read from it) as without any cache."""
    from perftui.demo import MODULES_DIR

    f = copy_demo(tmp_path)
    cache = tmp_path / "cache"
    mods = ["--modules-dir", str(MODULES_DIR)]
    info_plain = cli("info", "--json", "--no-cache", str(f))
    sec_plain = cli("sections", "--json", "--no-cache", *mods, str(f))
    sec_cpu = cli("sections", "--json", "--no-cache", "--cpu", "1", "--time", "0.5,",
                  "--symbols", *mods, str(f))
    assert info_plain.returncode == sec_plain.returncode == sec_cpu.returncode == 0
    assert entries(cache) == []
    # an entry as the browser leaves it
    from perftui.ui.model import Model

    m = Model(open_recording(f, cache=IndexCache(str(cache))), [str(MODULES_DIR)])
    m.rec.build_index()
    m.finish()
    assert m.save()
    args = ["--cache-dir", str(cache)]
    assert cli("info", "--json", *args, str(f)).stdout == info_plain.stdout
    assert cli("sections", "--json", *args, *mods, str(f)).stdout == sec_plain.stdout
    got = cli("sections", "--json", "--cpu", "1", "--time", "0.5,", "--symbols", *args, *mods,
              str(f))
    assert got.stdout == sec_cpu.stdout and got.stderr == ""


# -- the browser ----------------------------------------------------------------------------
async def _browse_once(path: Path, cache: IndexCache) -> tuple[str, list[str], str]:
    from uihelpers import screen_text, wait_indexed

    from perftui.demo import MODULES_DIR
    from perftui.ui.app import PerftuiApp

    rec = open_recording(path, cache=cache, mapped=True)
    app = PerftuiApp(rec, [str(MODULES_DIR)])
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await wait_indexed(pilot)
        await pilot.pause(0.1)
        text = screen_text(app)
        notes = [n.message for n in app._notifications]
        origin = rec.index.origin
    rec.close()
    return origin, notes, text


def test_browser_reopens_from_the_cache(tmp_path: Path) -> None:
    import asyncio

    f = copy_demo(tmp_path)
    cache = tmp_path / "cache"
    origin, notes, first = asyncio.run(_browse_once(f, IndexCache(str(cache))))
    assert origin == "walk" and notes == [] and len(entries(cache)) == 1
    origin, notes, again = asyncio.run(_browse_once(f, IndexCache(str(cache))))
    assert origin == "cache" and notes == []
    assert again == first


def test_browser_says_once_that_the_cache_is_off(tmp_path: Path) -> None:
    import asyncio

    f = copy_demo(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    origin, notes, text = asyncio.run(_browse_once(f, IndexCache(str(blocker / "cache"))))
    assert origin == "walk" and f"{write_demo(tmp_path / 'plan.data').total:,} records" in text
    assert len(notes) == 1 and "index cache off: cannot write" in notes[0]


def test_another_column_layout_is_another_entry(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """src widened (u2 -> u4): an entry of the old layout is not read as one."""
    from perftui.perfdata import index, indexpersist

    f = copy_demo(tmp_path)
    cache = tmp_path / "cache"
    saved(f, cache)
    wider = {**COLUMNS, "src": "u4"}
    monkeypatch.setattr(index, "COLUMNS", wider)
    monkeypatch.setattr(indexpersist, "COLUMNS", wider)
    rec = cached(f, cache)
    assert rec.index.origin == "walk" and rec.columns["src"].dtype == np.uint32


def test_cli_sections_with_a_corrupt_entry(tmp_path: Path) -> None:
    """A bad entry found while checking rows: the command counts while walking instead."""
    from perftui.demo import MODULES_DIR
    from perftui.ui.model import Model

    f = copy_demo(tmp_path)
    cache = tmp_path / "cache"
    mods = ["--modules-dir", str(MODULES_DIR)]
    want = cli("sections", "--json", "--no-cache", "--cpu", "0", *mods, str(f))
    m = Model(open_recording(f, cache=IndexCache(str(cache))), [str(MODULES_DIR)])
    m.rec.build_index()
    m.finish()
    assert m.save()
    corrupt(cache, "flipped byte in a column")
    got = cli("sections", "--json", "--cpu", "0", "--cache-dir", str(cache), *mods, str(f))
    assert got.returncode == 0 and got.stdout == want.stdout
    assert got.stderr.count("not usable") == 1 and entries(cache) == []
