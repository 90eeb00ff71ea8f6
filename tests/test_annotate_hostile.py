"""Hostile files through the annotate core: every problem is one ElfFileError line naming
the file (or a warning line on the disassembly), never a traceback or a library's text."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import numpy as np
import pytest
from testapi import functions

from perftui.analysis.annotate import annotate, source_lines
from perftui.symbols.code.disasm import disassemble_symbol
from perftui.symbols.code.elfcode import ElfFileError, open_elf
from perftui.symbols.code.relocs import section_relocations

KO = Path(__file__).parents[1] / "perftui" / "demo" / "modules" / "demo_nic.ko"


def _one_line(err: ElfFileError, path: Path) -> None:
    text = str(err)
    assert "\n" not in text and text.startswith(str(path) + ": ")
    assert "Traceback" not in text and len(text) < 700


def _whole_pipeline(path: Path) -> None:
    """Open, disassemble every function, read relocations and source lines, count."""
    img = open_elf(str(path))
    for sym in functions(img):
        d = disassemble_symbol(img, sym, section_bases={".text": 0xFFFFFFFFC0000000})
        lines = source_lines(img, d) if d.instructions else None
        annotate(d, d.addresses(), source=lines)
        for w in d.warnings:
            assert "\n" not in w and w.startswith(str(path))


def _write(tmp_path: Path, data: bytes | bytearray, name: str = "bad.ko") -> Path:
    p = tmp_path / name
    p.write_bytes(bytes(data))
    return p


@pytest.mark.parametrize("keep", [0, 10, 60, 1000, 0x9B41, 0x10C78, -100, -1])
def test_truncated_module(tmp_path: Path, keep: int) -> None:
    data = KO.read_bytes()
    p = _write(tmp_path, data[:keep] if keep >= 0 else data[: len(data) + keep])
    with pytest.raises(ElfFileError) as e:
        _whole_pipeline(p)
    _one_line(e.value, p)


def _section(data: bytes, name: str) -> tuple[int, int, int, int]:
    """(header offset, sh_offset, sh_size, sh_entsize) of a section of an ELF64 file."""
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shnum, shstrndx = struct.unpack_from("<HH", data, 0x3C)
    str_off = struct.unpack_from("<Q", data, shoff + shstrndx * 64 + 0x18)[0]
    for i in range(shnum):
        h = shoff + i * 64
        nm = struct.unpack_from("<I", data, h)[0]
        if data[str_off + nm :].split(b"\0", 1)[0].decode() == name:
            off, size = struct.unpack_from("<QQ", data, h + 0x18)
            return h, off, size, struct.unpack_from("<Q", data, h + 0x38)[0]
    raise KeyError(name)


def _symbol_entry(data: bytes, name: str) -> int:
    _, sym_off, sym_size, _ = _section(data, ".symtab")
    _, str_off, _, _ = _section(data, ".strtab")
    for k in range(sym_size // 24):
        e = sym_off + 24 * k
        nm = struct.unpack_from("<I", data, e)[0]
        if data[str_off + nm :].split(b"\0", 1)[0] == name.encode():
            return e
    raise KeyError(name)


def test_symbol_running_past_its_section(tmp_path: Path) -> None:
    data = bytearray(KO.read_bytes())
    e = _symbol_entry(data, "demo_nic_csum_fold")
    struct.pack_into("<Q", data, e + 16, 0x10_0000)  # st_size: 1 MiB in a 0x2c9-byte .text
    p = _write(tmp_path, data)
    img = open_elf(str(p))
    with pytest.raises(ElfFileError) as err:
        disassemble_symbol(img, functions(img, "demo_nic_csum_fold")[0])
    _one_line(err.value, p)
    assert "runs past the end of section .text" in str(err.value)


@pytest.mark.parametrize("field,value,words", [
    (0, 0xFFFF_FFFF_FFFF, "lies outside .text"),  # r_offset
    (0, 0x2C7, "lies outside .text"),  # a 4-byte field that starts 2 bytes before the end
    (8, (0xFFFF_FFF << 32) | 4, "names symbol"),  # r_info: symbol index past the table
])
def test_absurd_relocations(tmp_path: Path, field: int, value: int, words: str) -> None:
    data = bytearray(KO.read_bytes())
    _, off, _, _ = _section(data, ".rela.text")
    struct.pack_into("<Q", data, off + 24 * 3 + field, value)
    p = _write(tmp_path, data)
    img = open_elf(str(p))
    with pytest.raises(ElfFileError) as err:
        section_relocations(img, ".text")
    _one_line(err.value, p)
    assert words in str(err.value)
    # the disassembly goes on without relocation names, the problem as a warning line
    d = disassemble_symbol(img, functions(img, "demo_nic_csum_partial")[0])
    assert d.instructions and d.warnings == [str(err.value)]
    assert all(not i.relocations for i in d.instructions)


def test_relocation_table_past_the_end_of_the_file(tmp_path: Path) -> None:
    data = bytearray(KO.read_bytes())
    h, _, _, _ = _section(data, ".rela.text")
    struct.pack_into("<Q", data, h + 0x20, 1 << 40)  # sh_size
    p = _write(tmp_path, data)
    with pytest.raises(ElfFileError) as err:
        open_elf(str(p))
    _one_line(err.value, p)


def test_bad_line_table_is_one_line(tmp_path: Path) -> None:
    data = bytearray(KO.read_bytes())
    _, off, size, _ = _section(data, ".debug_line")
    data[off : off + size] = b"\xff" * size
    p = _write(tmp_path, data)
    img = open_elf(str(p))
    d = disassemble_symbol(img, functions(img, "demo_nic_csum_partial")[0])
    try:
        lines = source_lines(img, d)
    except ElfFileError as err:
        _one_line(err, p)
    else:
        assert lines is None or all(x is None for x in lines)


def test_not_a_regular_file(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "fifo.ko"
    os.mkfifo(fifo)
    with pytest.raises(ElfFileError) as err:
        open_elf(str(fifo))
    _one_line(err.value, fifo)
    assert "not a regular file" in str(err.value)


def test_random_corruption_never_escapes(tmp_path: Path) -> None:
    """Seeded byte corruption anywhere in the module: success or one ElfFileError line."""
    clean = KO.read_bytes()
    rng = random.Random(13)
    failures = 0
    for k in range(60):
        data = bytearray(clean)
        for _ in range(rng.choice([1, 4, 32])):
            at = rng.randrange(len(data))
            data[at] = rng.randrange(256)
        p = _write(tmp_path, data, f"m{k}.ko")
        try:
            _whole_pipeline(p)
        except ElfFileError as err:
            _one_line(err, p)
            failures += 1
    assert failures < 60


def test_random_section_headers_never_escape(tmp_path: Path) -> None:
    """Corrupt fields of the section headers (offsets, sizes, links, types)."""
    clean = KO.read_bytes()
    shoff = struct.unpack_from("<Q", clean, 0x28)[0]
    shnum = struct.unpack_from("<H", clean, 0x3C)[0]
    rng = np.random.default_rng(7)
    for k in range(60):
        data = bytearray(clean)
        i = int(rng.integers(1, shnum))
        field = int(rng.choice([0x4, 0x18, 0x20, 0x28, 0x2C, 0x38]))
        width = 4 if field in (0x4, 0x28, 0x2C) else 8
        value = int(rng.choice([0, 1, 3, 0xFFFF, 1 << 31, 1 << 63, 2**64 - 1]))
        value &= (1 << (8 * width)) - 1
        data[shoff + 64 * i + field : shoff + 64 * i + field + width] = value.to_bytes(
            width, "little")
        p = _write(tmp_path, data, f"h{k}.ko")
        try:
            _whole_pipeline(p)
        except ElfFileError as err:
            _one_line(err, p)
