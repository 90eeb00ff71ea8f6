"""Hostile and misplaced symbol files: one clear line, never a traceback; perf's places for
a DSO's files (symfs, build-id cache, debug files), build-id mismatch refused; the cache
reads a file once."""

from __future__ import annotations

import os
import shutil
import struct
from pathlib import Path

import pytest
from perfprograms import Built

from perftui.symbols.files.dsofiles import find_dso_files, find_vmlinux, load_dso_symbols
from perftui.symbols.files.elfheaders import open_elf_headers
from perftui.symbols.files.safefile import SymbolFileError
from perftui.symbols.tables.cache import SymbolCache
from perftui.symbols.tables.elfsyms import load_elf_symbols


def one_line_error(path: str) -> str:
    with pytest.raises(SymbolFileError) as e:
        load_elf_symbols(path)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(path[:40])
    return msg


def test_fifo_and_devices_are_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "FIFO" in one_line_error(str(fifo))  # and it did not block
    assert "character device" in one_line_error("/dev/zero")
    assert "directory" in one_line_error(str(tmp_path))
    assert "cannot stat" in one_line_error(str(tmp_path / "missing"))


def test_truncated_and_absurd_elfs(built: Built, tmp_path: Path) -> None:
    data = built.hotprog.read_bytes()
    for n in (3, 20, 64, 200, len(data) // 2):
        p = tmp_path / f"trunc{n}"
        p.write_bytes(data[:n])
        one_line_error(str(p))
    bad = bytearray(data)
    struct.pack_into("<H", bad, 0x3C, 0xFFFF)  # e_shnum: 65535 sections
    (tmp_path / "many").write_bytes(bad)
    assert "section" in one_line_error(str(tmp_path / "many"))
    bad = bytearray(data)
    struct.pack_into("<H", bad, 0x3C, 0)  # e_shnum 0: the count comes from section 0
    shoff = struct.unpack_from("<Q", bad, 0x28)[0]
    struct.pack_into("<Q", bad, shoff + 32, 1 << 40)  # sh_size of section 0
    (tmp_path / "huge").write_bytes(bad)
    assert "over the limit" in one_line_error(str(tmp_path / "huge"))
    (tmp_path / "text").write_bytes(b"hello world, not an ELF file")
    assert "not an ELF" in one_line_error(str(tmp_path / "text"))


def test_symtab_pointing_outside_the_file(built: Built, tmp_path: Path) -> None:
    data = bytearray(built.hotprog.read_bytes())
    with open_elf_headers(str(built.hotprog)) as img:
        sec = img.section(".symtab")
        assert sec is not None
        shoff = struct.unpack_from("<Q", data, 0x28)[0]
        struct.pack_into("<Q", data, shoff + sec.index * 64 + 24, len(data) + 4096)
    (tmp_path / "x").write_bytes(data)
    assert "past the end" in one_line_error(str(tmp_path / "x"))


def test_symfs_and_recorded_path(built: Built, tmp_path: Path) -> None:
    symfs = tmp_path / "symfs"
    target = symfs / "opt" / "app" / "hotprog"
    target.parent.mkdir(parents=True)
    shutil.copy(built.hotprog, target)
    files = find_dso_files("/opt/app/hotprog", symfs=str(symfs), debug_dir=str(tmp_path / "d"))
    assert files.syms == str(target) and files.runtime == str(target)
    assert "hot_alpha" in load_dso_symbols(files).table.names
    missing = find_dso_files("/opt/app/nothing", symfs=str(symfs),
                             debug_dir=str(tmp_path / "d"))
    assert not missing.found and "looked in:" in missing.message()


def test_build_id_cache_and_debug_file(built: Built, tmp_path: Path) -> None:
    with open_elf_headers(str(built.hotprog)) as img:
        bid = img.build_id
    assert bid
    cache = tmp_path / "debug"
    entry = cache / ".build-id" / bid[:2] / bid[2:]
    entry.mkdir(parents=True)
    shutil.copy(built.hotprog, entry / "elf")
    files = find_dso_files("/gone/hotprog", build_id=bid, debug_dir=str(cache))
    assert files.syms == str(entry / "elf")
    # a stripped runtime file and a separate debug file beside it
    symfs = tmp_path / "fs"
    (symfs / "app" / ".debug").mkdir(parents=True)
    shutil.copy(built.hotprog_stripped, symfs / "app" / "hotprog")
    dbg = symfs / "usr" / "lib" / "debug" / ".build-id" / bid[:2]
    dbg.mkdir(parents=True)
    os.system(f"objcopy --only-keep-debug {built.hotprog} {dbg / (bid[2:] + '.debug')}")
    files = find_dso_files("/app/hotprog", build_id=bid, symfs=str(symfs),
                           debug_dir=str(tmp_path / "none"))
    assert files.syms == str(dbg / (bid[2:] + ".debug"))
    assert files.runtime == str(symfs / "app" / "hotprog")
    syms = load_dso_symbols(files)
    full = load_elf_symbols(str(built.hotprog))
    i, j = syms.table.names.index("hot_alpha"), full.table.names.index("hot_alpha")
    assert syms.table.starts[i] == full.table.starts[j]
    assert "lib_tiny@plt" in syms.table.names  # PLT from the runtime file


def test_build_id_mismatch_is_refused(built: Built, tmp_path: Path) -> None:
    files = find_dso_files(str(built.hotprog), build_id="ab" * 20,
                           debug_dir=str(tmp_path))
    assert not files.found
    assert any("build id mismatch" in r for r in files.rejected)
    with pytest.raises(SymbolFileError, match="build id mismatch"):
        load_elf_symbols(str(built.hotprog), expect_build_id="ab" * 20)
    assert find_dso_files(str(built.hotprog), build_id="../../etc/passwd").build_id is None


def test_vmlinux_places() -> None:
    res = find_vmlinux("ab" * 20, "6.1.0-test", debug_dir="/nonexistent")
    assert not res.found
    assert "/usr/lib/debug/boot/vmlinux-6.1.0-test" in res.looked_in
    assert "/nonexistent/.build-id/ab/" + "ab" * 19 + "/elf" in res.looked_in
    assert all("../" not in p for p in find_vmlinux(None, "../../x").looked_in)


def test_cache_reads_once(built: Built, tmp_path: Path) -> None:
    cache = SymbolCache()
    a = cache.elf(str(built.hotprog))
    b = cache.elf(str(built.hotprog))
    assert a is b and len(cache) == 1
    with open_elf_headers(str(built.hotprog)) as img:
        by_id = cache.elf(str(built.hotprog), build_id=img.build_id)
    assert by_id is cache.elf("/elsewhere/same-file", build_id=img.build_id)
    (tmp_path / "bad").write_bytes(b"junk")
    for _ in range(2):
        with pytest.raises(SymbolFileError):
            cache.elf(str(tmp_path / "bad"))
