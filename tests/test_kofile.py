"""perftui.symbols.modules.kofile on the real kernel-module fixtures and on hostile files."""

from __future__ import annotations

import gzip
import lzma
import os
import re
import shutil
import struct
import subprocess
import threading
import tracemalloc
import zlib
from pathlib import Path

import numpy as np
import pytest
import zstandard

from perftui.symbols.files import decompress
from perftui.symbols.modules import kofile
from perftui.symbols.modules.kofile import ModuleFileError, load_module
from perftui.symbols.modules.sectiontable import NO_SYMBOL, SectionSymbolTable

ROOT = Path(__file__).resolve().parents[1]
MODDIR = ROOT / "perftui" / "demo" / "modules"
README = ROOT / "scripts" / "kmod" / "README.md"
MODULES = ["demo_nic", "demo-kvm", "demo_crc"]
COMPRESSED = [".ko.xz", ".ko.gz", ".ko.zst"]
READELF = shutil.which("readelf")
needs_readelf = pytest.mark.needs("readelf")


# --------------------------------------------------------------------------- helpers


def ko(mod: str, suffix: str = ".ko") -> str:
    return str(MODDIR / f"{mod}{suffix}")


def readme_tables() -> tuple[dict[str, list[tuple]], dict[str, list[tuple]], dict[str, str]]:
    """Sections, functions and build ids per module file, from scripts/kmod/README.md."""
    sections: dict[str, list[tuple]] = {}
    funcs: dict[str, list[tuple]] = {}
    build_ids: dict[str, str] = {}
    current = None
    for line in README.read_text().splitlines():
        m = re.match(r"### (\S+\.ko) — build id `([0-9a-f]+)`", line)
        if m:
            current = m.group(1)
            build_ids[current] = m.group(2)
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].endswith(".ko") and cells[1].isdigit():
            name = cells[2].split()[0]
            sections.setdefault(cells[0], []).append(
                (int(cells[1]), name, int(cells[3], 16), int(cells[4], 16))
            )
        elif current and len(cells) == 5 and cells[2].startswith("0x"):
            sec = re.match(r"(\S+) \((\d+)\)", cells[1])
            assert sec, line
            funcs.setdefault(current, []).append(
                (
                    cells[0],
                    sec.group(1),
                    int(sec.group(2)),
                    int(cells[2], 16),
                    int(cells[3]),
                    cells[4],
                )
            )
    return sections, funcs, build_ids


SECTIONS, FUNCS, BUILD_IDS = readme_tables()


def readelf_sections(path: str) -> dict[int, tuple[str, str, int, int, str]]:
    """``index -> (name, type, offset, size, flags)`` from ``readelf -SW``."""
    out = subprocess.run([READELF, "-SW", path], capture_output=True, text=True, check=True).stdout
    rows = {}
    for line in out.splitlines():
        m = re.match(r"\s*\[\s*(\d+)\]\s+(.*)", line)
        if not m or m.group(1) == "0":
            continue
        tok = m.group(2).split()
        flags = tok[6] if len(tok) == 10 else ""
        rows[int(m.group(1))] = (tok[0], tok[1], int(tok[3], 16), int(tok[4], 16), flags)
    return rows


def preferred(mod: str, section: str, value: int) -> str:
    """The name expected at an address: the real function, not init_module/cleanup_module."""
    names = [f[0] for f in FUNCS[mod + ".ko"] if f[1] == section and f[3] == value]
    real = [n for n in names if n not in ("init_module", "cleanup_module")]
    return real[0] if real else names[0]


def patched(tmp_path: Path, edits: list[tuple[int, bytes]], name: str = "bad.ko") -> str:
    data = bytearray(Path(ko("demo_nic")).read_bytes())
    for off, raw in edits:
        data[off : off + len(raw)] = raw
    out = tmp_path / name
    out.write_bytes(bytes(data))
    return str(out)


def shdr_offset(index: int) -> int:
    data = Path(ko("demo_nic")).read_bytes()
    (e_shoff,) = struct.unpack_from("<Q", data, 0x28)
    return e_shoff + 64 * index


def run_with_timeout(func, timeout: float = 10.0):
    """Run ``func`` in a thread; fail the test if it does not finish (a hang)."""
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = func()
        except BaseException as e:  # re-raised in the test thread
            box["error"] = e

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "load_module hung"
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box.get("value")


# --------------------------------------------------------------------------- sections


def test_readme_tables_parsed() -> None:
    assert set(SECTIONS) == {f"{m}.ko" for m in MODULES}
    assert set(FUNCS) == set(SECTIONS) == set(BUILD_IDS)
    assert len(FUNCS["demo_nic.ko"]) == 14 and len(FUNCS["demo-kvm.ko"]) == 15


@needs_readelf
@pytest.mark.parametrize("mod", MODULES)
def test_sections_match_readelf(mod: str) -> None:
    m = load_module(ko(mod))
    rows = readelf_sections(ko(mod))
    assert len(m.sections) == len(rows)  # no duplicate section names in the fixtures
    for index, (name, typ, off, size, flags) in rows.items():
        info = m.sections[name]
        assert (info.index, info.offset, info.size) == (index, off, size), name
        assert info.alloc == ("A" in flags), name
        assert info.nobits == (typ == "NOBITS"), name


@pytest.mark.parametrize("mod", MODULES)
def test_sections_match_readme(mod: str) -> None:
    m = load_module(ko(mod))
    for index, name, off, size in SECTIONS[f"{mod}.ko"]:
        info = m.sections[name]
        assert (info.index, info.offset, info.size, info.alloc) == (index, off, size, True)


def test_known_values() -> None:
    nic = load_module(ko("demo_nic"))
    assert nic.name == "demo_nic" and nic.compression is None
    assert (nic.sections[".text"].offset, nic.sections[".text"].size) == (0xA0, 0x2C9)
    assert (nic.sections[".noinstr.text"].index, nic.sections[".noinstr.text"].size) == (9, 0x60)
    assert nic.sections[".bss"].nobits and nic.sections[".bss"].size == 0x6060
    assert not nic.sections[".debug_info"].alloc
    kvm = load_module(ko("demo-kvm"))
    assert kvm.name == "demo_kvm"
    assert kvm.sections[".noinstr.text"].offset == 0x310
    assert kvm.sections[".noinstr.text"].size == 0x152
    assert kvm.sections[".init.text"].index == 9
    assert kvm.build_id == "c7605c5bc05968f6d26054038b40a933dda99b8f"
    assert kvm.resolve(".noinstr.text", 0x60) == ("__demo_svm_vcpu_run", 0)
    assert kvm.modinfo["name"] == "demo_kvm"
    assert kvm.modinfo["vermagic"].startswith("6.1.0-57-amd64 ")
    crc = load_module(ko("demo_crc"))
    assert crc.resolve(".text", 0x70 + 318) == ("demo_crc32_le_slice4", 318)
    assert crc.sections[".data"].flags == 0x3  # SHF_WRITE | SHF_ALLOC


# --------------------------------------------------------------------------- symbols


@pytest.mark.parametrize("mod", MODULES)
def test_every_function_resolves(mod: str) -> None:
    m = load_module(ko(mod))
    for name, section, index, value, size, _bind in FUNCS[f"{mod}.ko"]:
        assert m.sections[section].index == index
        want = preferred(mod, section, value)
        assert m.resolve(section, value) == (want, 0), name
        assert m.resolve(section, value + size - 1) == (want, size - 1), name
        assert m.resolve(section, value + size // 2) == (want, size // 2), name


@pytest.mark.parametrize("mod", MODULES)
def test_past_end_and_before_start(mod: str) -> None:
    m = load_module(ko(mod))
    starts = {(f[1], f[3]) for f in FUNCS[f"{mod}.ko"]}
    checked = 0
    for _name, section, _index, value, size, _bind in FUNCS[f"{mod}.ko"]:
        end = value + size
        table = m.symbols(section)
        if (section, end) in starts:  # the next function starts right there
            assert m.resolve(section, end) == (preferred(mod, section, end), 0)
        else:  # padding or the end of the section
            assert m.resolve(section, end) is None
            assert table.lookup(np.array([end], dtype=np.uint64))[0] == -1
            checked += 1
        assert table.lookup(np.array([-1, -(2**40)], dtype=np.int64)).tolist() == [-1, -1]
    assert checked
    for section in {f[1] for f in FUNCS[f"{mod}.ko"]}:
        size = m.sections[section].size
        assert m.resolve(section, size) is None
        assert m.resolve(section, 2**64 - 1) is None
        assert m.resolve(section, -1) is None
    assert m.resolve(".no.such.section", 0) is None
    assert len(m.symbols(".no.such.section")) == 0


def test_padding_between_functions() -> None:
    m = load_module(ko("demo_nic"))
    # demo_nic_csum_partial is [0, 0x63); demo_nic_csum_fold starts at 0x70.
    assert m.resolve(".text", 0x62) == ("demo_nic_csum_partial", 0x62)
    for off in range(0x63, 0x70):
        assert m.resolve(".text", off) is None
    assert m.resolve(".text", 0x70) == ("demo_nic_csum_fold", 0)


def test_aliases_and_cold_parts() -> None:
    m = load_module(ko("demo_nic"))
    init = m.symbols(".init.text")
    assert init.names == ["demo_nic_init"] and init.aliases == [("init_module",)]
    exit_ = m.symbols(".exit.text")
    assert exit_.names == ["demo_nic_exit"] and exit_.aliases == [("cleanup_module",)]
    unlikely = m.symbols(".text.unlikely")
    assert unlikely.names == ["demo_nic_handle_error", "demo_nic_rx_one.cold"]
    assert m.resolve(".text.unlikely", 0x6F + 17) == ("demo_nic_rx_one.cold", 17)
    kvm = load_module(ko("demo-kvm"))
    assert kvm.symbols(".text.unlikely").names == [
        "demo_kvm_report_emulation_failure",
        "demo_svm_handle_npf.cold",
        "demo_kvm_handle_exit.cold",
    ]


def test_section_filter_and_objects() -> None:
    m = load_module(ko("demo_nic"))
    # Only symbols of that section; no FILE/SECTION symbols, no zero-size NOTYPE ones.
    assert "demo_nic_rx_poll" not in m.symbols(".init.text").names
    assert m.symbols(".text").names == [
        "demo_nic_csum_partial",
        "demo_nic_csum_fold",
        "demo_nic_tx_xmit",
        "demo_nic_csum_ipv4_hdr",
        "demo_nic_rx_one",
        "demo_nic_refill_rx",
        "demo_nic_rx_poll",
    ]
    assert m.resolve(".bss", 0x5060 + 100) == ("demo_nic_rx_ring", 100)  # OBJECT
    assert m.resolve(".rodata", 0xA0) == ("demo_nic_ifname", 0)
    assert m.symbols("__ksymtab_gpl").names == []  # only zero-size NOTYPE __ksymtab_*
    assert m.symbols(".text") is m.symbols(".text")  # cached


@pytest.mark.parametrize("mod", MODULES)
def test_symbols_agree_with_pyelftools(mod: str) -> None:
    from elftools.elf.elffile import ELFFile

    m = load_module(ko(mod))
    with open(ko(mod), "rb") as f:
        elf = ELFFile(f)
        symtab = elf.get_section_by_name(".symtab")
        for sym in symtab.iter_symbols():
            if sym["st_info"]["type"] != "STT_FUNC":
                continue
            sec = elf.get_section(sym["st_shndx"]).name
            table = m.symbols(sec)
            i = int(np.searchsorted(table.starts, sym["st_value"]))
            assert table.starts[i] == sym["st_value"]
            assert sym.name == table.names[i] or sym.name in table.aliases[i]
            assert table.sizes[i] == sym["st_size"]


def test_counts_on_fixture() -> None:
    m = load_module(ko("demo_nic"))
    text = m.symbols(".text")
    offsets = np.array([0x240] * 5 + [0x160, 0x1DB, 0x161] + [0x65, 0x2C9], dtype=np.uint64)
    assert text.counts(offsets) == [
        ("demo_nic_rx_poll", 5),
        ("demo_nic_rx_one", 3),
        (NO_SYMBOL, 2),
    ]
    per, missed = text.hits(offsets)
    assert missed == 2 and int(per.sum()) == 8
    assert text.counts(np.zeros(0, dtype=np.uint64)) == []


# ------------------------------------------------------------------- SectionSymbolTable rules


def table(starts, sizes, names, section_size=None) -> SectionSymbolTable:
    return SectionSymbolTable(np.array(starts, np.uint64), np.array(sizes, np.uint64), names,
                              section_size)


def test_zero_size_rule_and_before_first() -> None:
    t = table([0x10, 0x20, 0x40, 0x50], [8, 0, 4, 0], ["a", "b", "c", "d"], section_size=0x60)
    offs = np.array([0, 0xF, 0x10, 0x17, 0x18, 0x20, 0x3F, 0x40, 0x43, 0x44, 0x50, 0x5F, 0x60])
    assert t.lookup(offs).tolist() == [-1, -1, 0, 0, -1, 1, 1, 2, 2, -1, 3, 3, -1]
    assert t.resolve(0x3F) == ("b", 0x1F)
    # Without a known section size, the last zero-size symbol runs on.
    open_end = table([0x10], [0], ["x"])
    assert open_end.resolve(0x10_0000) == ("x", 0x10_0000 - 0x10)
    assert open_end.resolve(0xF) is None


def test_lookup_input_forms() -> None:
    t = table([0x30, 0x10], [4, 4], ["late", "early"], section_size=0x40)  # unsorted input
    assert t.names == ["early", "late"]
    assert t.lookup(np.array([0x11, 0x31, -5], dtype=np.int32)).tolist() == [0, 1, -1]
    assert t.lookup(np.uint64(0x12)).tolist() == [0]
    assert t.lookup(np.array([], dtype=np.uint64)).tolist() == []
    assert table([], [], []).lookup(np.array([1, 2])).tolist() == [-1, -1]
    with pytest.raises(TypeError):
        t.lookup(np.array([1.5]))
    with pytest.raises(ValueError):
        SectionSymbolTable(np.array([1], np.uint64), np.array([1, 2], np.uint64), ["a"])


def test_counts_order_ties_and_same_names() -> None:
    t = table([0, 0x10, 0x20, 0x30], [4, 4, 4, 4], ["zeta", "alpha", "dup", "dup"], 0x40)
    offs = np.array([0, 1, 0x10, 0x11, 0x20, 0x30, 0x30, 0x38, 0x39, 0x3A], dtype=np.uint64)
    assert t.counts(offs) == [
        (NO_SYMBOL, 3),
        ("alpha", 2),
        ("dup", 2),
        ("zeta", 2),
        ("dup", 1),
    ]


def test_alias_rank_rule() -> None:
    rank = kofile._alias_rank
    assert rank("demo_init", 2, 0, 10) < rank("init_module", 2, 1, 10)  # loader alias loses
    assert rank("f", 2, 0, 10) < rank("f_obj", 1, 1, 10)  # function over object
    assert rank("g", 2, 1, 10) < rank("l", 2, 0, 10)  # GLOBAL over LOCAL
    assert rank("l", 2, 0, 10) < rank("w", 2, 2, 10)  # LOCAL over WEAK
    assert rank("foo", 2, 1, 10) < rank("__foo", 2, 1, 10)  # fewer underscores


# --------------------------------------------------------------------------- compressed copies


@pytest.mark.parametrize("mod", MODULES)
@pytest.mark.parametrize("suffix", COMPRESSED)
def test_compressed_copies_identical(mod: str, suffix: str) -> None:
    plain = load_module(ko(mod))
    packed = load_module(ko(mod, suffix))
    assert packed.compression == {".ko.xz": "xz", ".ko.gz": "gzip", ".ko.zst": "zstd"}[suffix]
    assert packed.name == plain.name
    assert packed.build_id == plain.build_id == BUILD_IDS[f"{mod}.ko"]
    assert packed.sections == plain.sections
    assert packed.file_size == plain.file_size == os.path.getsize(ko(mod))
    for name in plain.sections:
        a, b = plain.symbols(name), packed.symbols(name)
        assert a.names == b.names and a.aliases == b.aliases, name
        assert np.array_equal(a.starts, b.starts) and np.array_equal(a.sizes, b.sizes), name


def test_compression_detected_by_content(tmp_path: Path) -> None:
    fake = tmp_path / "looks_plain.ko"
    shutil.copy(ko("demo_crc", ".ko.zst"), fake)
    m = load_module(str(fake))
    assert m.compression == "zstd" and m.build_id == BUILD_IDS["demo_crc.ko"]
    fake2 = tmp_path / "demo_crc.ko.xz"  # really gzip
    shutil.copy(ko("demo_crc", ".ko.gz"), fake2)
    assert load_module(str(fake2)).compression == "gzip"
    fake3 = tmp_path / "demo_crc.ko.zst"  # really uncompressed
    shutil.copy(ko("demo_crc"), fake3)
    assert load_module(str(fake3)).compression is None


def test_concatenated_streams(tmp_path: Path) -> None:
    raw = Path(ko("demo_crc")).read_bytes()
    half = len(raw) // 2
    for name, comp in (
        ("x.ko.gz", lambda b: gzip.compress(b, mtime=0)),
        ("x.ko.xz", lambda b: lzma.compress(b, check=lzma.CHECK_CRC32)),
        ("x.ko.zst", lambda b: zstandard.ZstdCompressor().compress(b)),
    ):
        p = tmp_path / name
        p.write_bytes(comp(raw[:half]) + comp(raw[half:]))
        assert load_module(str(p)).build_id == BUILD_IDS["demo_crc.ko"], name


@needs_readelf
@pytest.mark.parametrize("mod", MODULES)
def test_build_id_matches_readelf_n(mod: str) -> None:
    out = subprocess.run(
        [READELF, "-n", ko(mod)], capture_output=True, text=True, check=True
    ).stdout
    want = re.search(r"Build ID: ([0-9a-f]+)", out).group(1)
    assert load_module(ko(mod)).build_id == want == BUILD_IDS[f"{mod}.ko"]


def test_symlink_to_file(tmp_path: Path) -> None:
    link = tmp_path / "link.ko"
    link.symlink_to(ko("demo_nic"))
    assert load_module(str(link)).build_id == BUILD_IDS["demo_nic.ko"]


# --------------------------------------------------------------------------- hostile files


def expect_error(path: str, pattern: str, **kw) -> ModuleFileError:
    with pytest.raises(ModuleFileError) as info:
        run_with_timeout(lambda: load_module(path, **kw))
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(path.replace("\n", "\\n")[:50]), msg
    assert re.search(pattern, msg), msg
    return info.value


def test_not_elf(tmp_path: Path) -> None:
    p = tmp_path / "text.ko"
    p.write_text("this is not a kernel module\n")
    expect_error(str(p), "not an ELF file")
    empty = tmp_path / "empty.ko"
    empty.write_bytes(b"")
    expect_error(str(empty), "not an ELF file")
    short = tmp_path / "short.ko"
    short.write_bytes(b"\x7fELF\x02\x01\x01")
    expect_error(str(short), "too short")


def test_not_et_rel(tmp_path: Path) -> None:
    expect_error(patched(tmp_path, [(0x10, struct.pack("<H", 3))]), "ET_DYN.*ET_REL")
    python = os.path.realpath("/proc/self/exe") if os.path.exists("/proc/self/exe") else None
    if python and os.path.isfile(python):
        expect_error(python, "not a kernel module")


def test_absurd_section_count(tmp_path: Path) -> None:
    expect_error(patched(tmp_path, [(0x3C, struct.pack("<H", 0xFEFF))]), "past the end")
    # e_shnum 0 means "count in section 0's sh_size": make that absurd too.
    p = patched(tmp_path, [(0x3C, b"\0\0"), (shdr_offset(0) + 32, struct.pack("<Q", 2**40))])
    expect_error(p, "past the end")
    expect_error(patched(tmp_path, [(0x28, struct.pack("<Q", 2**62))]), "past the end")
    expect_error(patched(tmp_path, [(0x3E, struct.pack("<H", 500))]), "out of range")
    expect_error(patched(tmp_path, [(0x3A, struct.pack("<H", 7))]), "section header size")


def test_section_offset_past_end(tmp_path: Path) -> None:
    text = shdr_offset(3)
    expect_error(
        patched(tmp_path, [(text + 24, struct.pack("<Q", 10**9))]), r"section 3 \(\.text\)"
    )
    expect_error(patched(tmp_path, [(text + 32, struct.pack("<Q", 2**63))]), "past the end")
    symtab = shdr_offset(55)
    expect_error(patched(tmp_path, [(symtab + 24, struct.pack("<Q", 2**64 - 8))]), "past the end")
    expect_error(patched(tmp_path, [(symtab + 56, struct.pack("<Q", 7))]), "entry size")
    expect_error(patched(tmp_path, [(symtab + 40, struct.pack("<I", 3))]), "STRTAB|string table")


def test_directory_fifo_and_devices(tmp_path: Path) -> None:
    expect_error(str(tmp_path), "a directory")
    fifo = tmp_path / "demo_nic.ko"
    os.mkfifo(fifo)
    expect_error(str(fifo), "a FIFO")
    if os.path.exists("/dev/zero"):
        expect_error("/dev/zero", "character device")
    expect_error(str(tmp_path / "missing.ko"), "cannot stat")
    (tmp_path / "dirlink.ko").symlink_to(tmp_path)
    expect_error(str(tmp_path / "dirlink.ko"), "a directory")


def test_fifo_swapped_in_after_stat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """stat() saw a file, open() meets a FIFO: opened non-blocking and refused, no hang."""
    fifo = tmp_path / "race.ko"
    os.mkfifo(fifo)
    real_stat = os.stat
    regular = real_stat(ko("demo_nic"))
    monkeypatch.setattr(
        decompress.os,
        "stat",
        lambda p, *a, **k: regular if str(p) == str(fifo) else real_stat(p, *a, **k),
    )
    expect_error(str(fifo), "a FIFO")


def test_size_cap_plain(tmp_path: Path) -> None:
    expect_error(ko("demo_nic"), "over the 1000 bytes cap", max_size=1000)


@pytest.mark.parametrize("suffix", COMPRESSED)
def test_truncated_compressed(tmp_path: Path, suffix: str) -> None:
    data = Path(ko("demo_nic", suffix)).read_bytes()
    for cut in (len(data) // 2, len(data) - 3, 20):
        p = tmp_path / f"cut{cut}{suffix}"
        p.write_bytes(data[:cut])
        expect_error(str(p), "truncated|bad (xz|gzip|zstd) data|past the end|too short")


@pytest.mark.parametrize("suffix", COMPRESSED)
def test_corrupt_and_trailing_garbage(tmp_path: Path, suffix: str) -> None:
    data = bytearray(Path(ko("demo_nic", suffix)).read_bytes())
    p = tmp_path / f"junk{suffix}"
    p.write_bytes(bytes(data) + b"GARBAGE!")
    expect_error(str(p), "garbage after")
    data[len(data) // 2] ^= 0xFF
    data[len(data) // 2 + 1] ^= 0x55
    p.write_bytes(bytes(data))
    with pytest.raises(ModuleFileError):  # any clear error (CRC, bad block, ELF)
        run_with_timeout(lambda: load_module(str(p)))


def test_compressed_non_elf(tmp_path: Path) -> None:
    p = tmp_path / "text.ko.xz"
    p.write_bytes(lzma.compress(b"hello, not ELF" * 100))
    expect_error(str(p), "xz data does not hold an ELF file")


def _zstd_bomb(path: Path, head: bytes, total: int) -> None:
    cctx = zstandard.ZstdCompressor(level=1)
    with open(path, "wb") as f, cctx.stream_writer(f, closefd=False) as w:
        w.write(head)
        zeros = bytes(1 << 20)
        left = total - len(head)
        while left > 0:
            w.write(zeros[: min(left, len(zeros))])
            left -= len(zeros)


@pytest.fixture(scope="module")
def bombs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("bombs")
    zeros, elfish = d / "zeros.ko.zst", d / "elfhead.ko.zst"
    _zstd_bomb(zeros, b"", 300 << 20)
    _zstd_bomb(elfish, Path(ko("demo_nic")).read_bytes(), 300 << 20)
    return {"zeros": zeros, "elfish": elfish}


def test_zstd_bomb_of_zeros_stops_at_once(bombs: dict[str, Path]) -> None:
    assert bombs["zeros"].stat().st_size < 1 << 20
    tracemalloc.start()
    try:
        expect_error(str(bombs["zeros"]), "zstd data does not hold an ELF file")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20


def test_zstd_bomb_stops_at_cap(bombs: dict[str, Path]) -> None:
    tracemalloc.start()
    try:
        expect_error(str(bombs["elfish"]), "over the 16 MiB cap", max_size=16 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 48 << 20


def test_zstd_bomb_default_cap(bombs: dict[str, Path]) -> None:
    expect_error(str(bombs["elfish"]), "over the 256 MiB cap")


@pytest.mark.parametrize("kind", ["gzip", "xz"])
def test_gzip_xz_bombs(tmp_path: Path, kind: str) -> None:
    head = Path(ko("demo_nic")).read_bytes()
    comp = zlib.compressobj(1, wbits=31) if kind == "gzip" else lzma.LZMACompressor(preset=0)
    parts = [comp.compress(head)]
    zeros = bytes(1 << 20)
    for _ in range(64):
        parts.append(comp.compress(zeros))
    parts.append(comp.flush())
    p = tmp_path / f"bomb.ko.{kind}"
    p.write_bytes(b"".join(parts))
    tracemalloc.start()
    try:
        expect_error(str(p), "over the 4 MiB cap", max_size=4 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20


def test_random_corruption_never_escapes(tmp_path: Path) -> None:
    """Flipped bytes in the headers: the file loads or fails with ModuleFileError only."""
    rng = np.random.default_rng(20230110)
    base = Path(ko("demo-kvm")).read_bytes()
    (e_shoff,) = struct.unpack_from("<Q", base, 0x28)
    symtab_off = load_module(ko("demo-kvm")).sections[".symtab"].offset
    regions = [(0, 64), (e_shoff, len(base)), (symtab_off, symtab_off + 0x400)]
    p = tmp_path / "fuzz.ko"
    outcomes = {"ok": 0, "error": 0}
    for _ in range(300):
        data = bytearray(base)
        for _ in range(int(rng.integers(1, 6))):
            lo, hi = regions[int(rng.integers(len(regions)))]
            data[int(rng.integers(lo, hi))] = int(rng.integers(256))
        p.write_bytes(bytes(data))
        try:
            m = load_module(str(p))
            for name in m.sections:
                m.symbols(name).counts(np.arange(0, 64, dtype=np.uint64))
            outcomes["ok"] += 1
        except ModuleFileError as e:
            assert "\n" not in str(e)
            outcomes["error"] += 1
    assert outcomes["error"] > 0


def test_truncated_plain_at_many_lengths(tmp_path: Path) -> None:
    base = Path(ko("demo_crc")).read_bytes()
    p = tmp_path / "cut.ko"
    for cut in (0, 3, 4, 16, 51, 52, 63, 64, 0x100, len(base) // 2, len(base) - 1):
        p.write_bytes(base[:cut])
        with pytest.raises(ModuleFileError):
            load_module(str(p))


def test_error_message_escapes_control_characters(tmp_path: Path) -> None:
    p = tmp_path / "evil\nname\x1b[31m.ko"
    p.write_text("nope")
    with pytest.raises(ModuleFileError) as info:
        load_module(str(p))
    assert "\n" not in str(info.value) and "\x1b" not in str(info.value)
    assert info.value.path == str(p)
