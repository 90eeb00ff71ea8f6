"""Symbol tables kept on disk (perftui.symbols.tables.diskcache): a report that takes its
tables from the disk is still perf's report; a file's content decides its key; a damaged or
tampered entry is removed and the table built again, never used."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from perfprograms import Built
from test_report_perf import compare

from perftui.symbols.tables import diskcache
from perftui.symbols.tables.cache import SymbolCache
from perftui.symbols.tables.diskcache import TableStore, elf_key
from perftui.symbols.tables.elfsyms import load_elf_symbols

pytestmark = pytest.mark.perf


def _drop_index_entries(cache: Path) -> None:
    """Every recording's index and names gone; the symbol tables kept."""
    for p in cache.iterdir():
        if p.name != "symbols":
            shutil.rmtree(p) if p.is_dir() else p.unlink()


@pytest.mark.usefixtures("engine")
@pytest.mark.parametrize("program", ["hotprog", "hotcxx"])
def test_a_report_from_kept_tables_is_perfs(built: Built, recorded, program: str,
                                            tmp_path: Path) -> None:
    """The first report keeps the tables, the second (its names not cached) reads them
    from the disk: both equal perf report row for row (C++ names demangled from the kept
    raw names)."""
    data = recorded(program, getattr(built, program), "3")
    cache = tmp_path / "cache"
    args = ("--cache-dir", str(cache))
    compare(data, "comm,dso,sym", True, our_args=args)
    kept = list((cache / "symbols").glob("*.npz"))
    assert kept  # the program's, its libraries' (libc, libhotlib or libstdc++)
    _drop_index_entries(cache)
    before = {p: p.stat().st_mtime_ns for p in kept}
    compare(data, "comm,dso,sym", True, our_args=args)
    compare(data, "dso,sym", False, our_args=args)
    assert all(p.stat().st_mtime_ns >= t for p, t in before.items())  # read, not replaced
    assert sorted((cache / "symbols").glob("*.npz")) >= sorted(kept)


def _libc() -> str:
    for p in ("/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6"):
        if Path(p).is_file():
            return p
    pytest.fail("no libc.so.6 on this machine")


def test_kept_table_is_the_table(built: Built, tmp_path: Path) -> None:
    """Every row, name (demangled where shown demangled) and lookup of a kept table, the
    PLT's and the overlap zones' (perf's tree, replayed from the kept log, then kept)
    included, as the table built from the file."""
    for path in (_libc(), str(built.hotcxx), str(built.hotprog)):
        fresh = load_elf_symbols(path)
        cache = SymbolCache(TableStore(str(tmp_path / "symbols")))
        cache.elf(path)
        got = SymbolCache(TableStore(str(tmp_path / "symbols"))).elf(path)
        a, b = fresh.table, got.table
        assert np.array_equal(a.starts, b.starts) and np.array_equal(a.ends, b.ends)
        assert np.array_equal(a.kinds, b.kinds) and a.space == b.space
        assert [a.names[i] for i in range(len(a))] == [b.names[i] for i in range(len(b))]
        assert (got.build_id, got.elf_type, got.loads, got.sources) == \
            (fresh.build_id, fresh.elf_type, fresh.loads, fresh.sources)
        rng = np.random.default_rng(1)
        top = int(a.ends.max()) + 64
        probe = np.concatenate([a.starts, a.ends - np.uint64(1),
                                rng.integers(0, top, 20000).astype(np.uint64)])
        assert np.array_equal(a.lookup(probe), b.lookup(probe))
    trees = list((tmp_path / "symbols").glob("*.tree.npz"))
    assert trees  # libc's overlapping symbols: a lookup replayed and kept the tree
    again = SymbolCache(TableStore(str(tmp_path / "symbols"))).elf(_libc()).table
    fresh_libc = load_elf_symbols(_libc()).table
    assert np.array_equal(again.lookup(probe_libc := fresh_libc.starts + np.uint64(1)),
                          fresh_libc.lookup(probe_libc))


def test_the_key_is_the_content(built: Built, tmp_path: Path) -> None:
    lib = tmp_path / "libhotlib.so"
    shutil.copy(built.libhotlib, lib)
    k1 = elf_key(str(lib), None, None)
    assert k1 == elf_key(str(built.libhotlib), None, None)  # another path, same bytes
    assert k1 != elf_key(str(lib), None, "ab" * 20)  # another build id wanted
    with open(lib, "r+b") as f:
        f.seek(-1, 2)
        last = f.read(1)
        f.seek(-1, 2)
        f.write(bytes([last[0] ^ 1]))
    assert elf_key(str(lib), None, None) != k1
    assert elf_key(str(tmp_path / "missing.so"), None, None) is None


@pytest.mark.parametrize("damage", ["garbage", "truncated", "ends", "names", "kinds"])
def test_a_damaged_entry_is_built_again(built: Built, tmp_path: Path, damage: str) -> None:
    d = tmp_path / "symbols"
    path = str(built.hotcxx)
    SymbolCache(TableStore(str(d))).elf(path)
    (entry,) = [p for p in d.glob("*.npz") if not p.name.endswith(".tree.npz")]
    if damage == "garbage":
        entry.write_bytes(b"PK\x03\x04" + b"\x00" * 100)
    elif damage == "truncated":
        entry.write_bytes(entry.read_bytes()[:-200])
    else:
        with np.load(entry) as z:
            arrays = {k: z[k] for k in z.files}
        if damage == "ends":
            arrays["ends"] = arrays["ends"][:-1]
        elif damage == "names":
            arrays["name_ends"] = arrays["name_ends"] + np.int64(1 << 40)
        else:
            arrays["kinds"] = arrays["kinds"] + np.uint8(9)
        with open(entry, "wb") as f:
            np.savez(f, **arrays)
    store = TableStore(str(d))
    assert store.load(entry.name[:-4], path, None) is None
    assert not entry.exists()  # removed
    got = SymbolCache(TableStore(str(d))).elf(path)  # built again, and kept again
    assert len(got.table) == len(load_elf_symbols(path).table) and entry.exists()


def test_clear(built: Built, tmp_path: Path) -> None:
    SymbolCache(TableStore(diskcache.default_dir(str(tmp_path)))).elf(str(built.hotprog))
    assert diskcache.clear(str(tmp_path)) == 1
    assert not list((tmp_path / "symbols").glob("*.npz"))
