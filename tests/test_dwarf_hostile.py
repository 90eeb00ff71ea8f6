"""Hostile DWARF: hand-made units that loop, run past their sections or nest absurdly are
read up to where they go wrong and said in a note, never a hang or a traceback; and the
compiled readers survive random damage to a real program's DWARF."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest
from dwarfbuild import abbrev, elf, line_program, uleb, unit
from perfprograms import PROGRAMS, require

from perftui.symbols.code.elfcode import ElfCodeImage, open_elf
from perftui.symbols.dwarf.addr2line import Addr2Line

# tags, attributes and forms the units below use
CU, SUB, INL, BLOCK = 0x11, 0x2E, 0x1D, 0x0B
NAME, LANG, LOW, HIGH, STMT, ORIGIN, SPEC, RANGES, CFILE, CLINE = (
    0x03, 0x13, 0x11, 0x12, 0x10, 0x31, 0x47, 0x55, 0x58, 0x59)
STRING, DATA1, ADDR, DATA8, SECOFF, REF4 = 0x08, 0x0B, 0x01, 0x07, 0x17, 0x13

ABBREVS = (abbrev(1, CU, True, [(NAME, STRING), (LANG, DATA1), (LOW, ADDR), (HIGH, DATA8),
                                (STMT, SECOFF)])
           + abbrev(2, SUB, True, [(NAME, STRING), (LOW, ADDR), (HIGH, DATA8)])
           + abbrev(3, INL, False, [(ORIGIN, REF4), (LOW, ADDR), (HIGH, DATA8),
                                    (CFILE, DATA1), (CLINE, DATA1)])
           + abbrev(4, SUB, False, [(NAME, STRING), (SPEC, REF4)])
           + abbrev(5, BLOCK, True, [])
           + abbrev(6, SUB, False, [(NAME, STRING), (RANGES, SECOFF)])
           + abbrev(7, SUB, False, [(NAME, STRING)])
           + b"\0")


def cu_die(lo: int = 0x1000, size: int = 0x100) -> bytes:
    return (uleb(1) + b"hostile.c\0" + bytes([0x0C]) + lo.to_bytes(8, "little")
            + size.to_bytes(8, "little") + (0).to_bytes(4, "little"))


def sub(name: bytes, lo: int, size: int) -> bytes:
    return uleb(2) + name + b"\0" + lo.to_bytes(8, "little") + size.to_bytes(8, "little")


def inlined(origin: int, lo: int, size: int, line: int) -> bytes:
    return (uleb(3) + origin.to_bytes(4, "little") + lo.to_bytes(8, "little")
            + size.to_bytes(8, "little") + bytes([1, line]))


def a2l_of(tmp_path: Path, info: bytes, lines: bytes | None = None,
           extra: dict[str, bytes] | None = None) -> tuple[Addr2Line, Path]:
    secs = {".debug_info": info, ".debug_abbrev": ABBREVS,
            ".debug_line": lines if lines is not None else
            line_program([(0x1000, 3), (0x1010, 20), (0x1020, 4)]), **(extra or {})}
    path = tmp_path / "hostile"
    path.write_bytes(elf(secs))
    return Addr2Line(open_elf(str(path))), path


def texts(a2l: Addr2Line, addr: int) -> list[str]:
    r = a2l.records(addr)
    return [] if r is None else [x.text() for x in r]


def abstract_at(dies_before: bytes) -> int:
    """The unit-relative offset of the next DIE after the header and ``dies_before``."""
    return 11 + len(dies_before)


def test_a_well_made_unit_is_read_as_addr2line_reads_it(tmp_path: Path) -> None:
    head = cu_die()
    outer = sub(b"outer", 0x1000, 0x100)
    call = inlined(0, 0x1010, 0x10, 7)
    origin = abstract_at(head + outer + call + b"\0")
    info = unit(head + outer + inlined(origin, 0x1010, 0x10, 7) + b"\0"
                + uleb(7) + b"inner\0" + b"\0")
    a2l, path = a2l_of(tmp_path, info)
    want = subprocess.run([require("addr2line"), "-e", str(path), "-i", "-f", "0x1015",
                           "0x1005"], capture_output=True, text=True).stdout.splitlines()
    got = texts(a2l, 0x1015) + texts(a2l, 0x1005)
    assert got == ["\n".join(want[i:i + 2]) for i in range(0, len(want), 2)]
    assert got[0].startswith("inner\n") and got[1].startswith("outer\n")
    assert not a2l.notes


def test_a_specification_loop_stops(tmp_path: Path) -> None:
    head = cu_die()
    me = abstract_at(head)
    loop = uleb(4) + b"self\0" + me.to_bytes(4, "little")  # DW_AT_specification -> itself
    outer = sub(b"outer", 0x1000, 0x100)
    info = unit(head + loop + outer + inlined(me, 0x1010, 0x10, 7) + b"\0\0")
    a2l, _ = a2l_of(tmp_path, info)
    got = texts(a2l, 0x1015)  # answers: the loop is cut at 100 references
    assert got and got[-1].startswith("outer\n")
    assert any("recursion" in n for n in a2l.notes)


def test_ranges_past_their_section(tmp_path: Path) -> None:
    head = cu_die()
    bad = uleb(6) + b"far\0" + (0x7FFFFFF0).to_bytes(4, "little")
    info = unit(head + bad + b"\0")
    a2l, _ = a2l_of(tmp_path, info, extra={".debug_ranges": b"\0" * 16})
    assert texts(a2l, 0x1015) == ["??\nhostile.c:20"]  # the line table still answers


def test_absurd_nesting_is_cut(tmp_path: Path) -> None:
    head = cu_die()
    depth = 6000
    body = sub(b"outer", 0x1000, 0x100) + uleb(5) * depth + b"\0" * depth + b"\0"
    a2l, _ = a2l_of(tmp_path, unit(head + body + b"\0"))
    texts(a2l, 0x1015)
    assert any("nested over 4096" in n for n in a2l.notes)


def test_a_unit_longer_than_its_section(tmp_path: Path) -> None:
    good = unit(cu_die() + sub(b"outer", 0x1000, 0x100) + b"\0\0")
    bad = (0x7FFFFF00).to_bytes(4, "little") + good[4:]
    a2l, _ = a2l_of(tmp_path, good + bad)
    assert texts(a2l, 0x1005) == ["outer\nhostile.c:3"]
    assert any("does not fit" in n for n in a2l.notes)


def test_a_die_past_its_unit(tmp_path: Path) -> None:
    cut = unit(cu_die() + uleb(2) + b"outer\0" + (0x1000).to_bytes(8, "little"))
    a2l, _ = a2l_of(tmp_path, cut)
    texts(a2l, 0x1005)
    assert any("runs past its unit" in n for n in a2l.notes)


def test_an_unknown_abbreviation(tmp_path: Path) -> None:
    a2l, _ = a2l_of(tmp_path, unit(cu_die() + uleb(99) + b"\0\0"))
    texts(a2l, 0x1005)
    assert any("unknown abbreviation" in n for n in a2l.notes)


def test_a_line_program_binutils_refuses(tmp_path: Path) -> None:
    lines = bytearray(line_program([(0x1000, 3)]))
    at = lines.index(b"\x00\x09\x02")  # the first DW_LNE_set_address: made unknown (0x70)
    lines[at + 2] = 0x70
    a2l, _ = a2l_of(tmp_path, unit(cu_die() + sub(b"outer", 0x1000, 0x100) + b"\0\0"),
                    bytes(lines))
    assert texts(a2l, 0x1005) == []  # binutils: no line table, no unit
    assert not a2l.notes


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    exe = tmp_path_factory.mktemp("hostile") / "inlined"
    p = subprocess.run([require("gcc"), "-O2", "-g", "-o", str(exe),
                        str(PROGRAMS / "inlined.c")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return exe


@pytest.mark.parametrize("section", [".debug_info", ".debug_abbrev", ".debug_line",
                                     ".debug_rnglists", ".debug_aranges"])
def test_random_damage(program: Path, section: str) -> None:
    img = open_elf(str(program))
    sec = next((s for s in img.sections if s.name == section), None)
    if sec is None:
        pytest.fail(f"gcc wrote no {section}")
    text = next(s for s in img.sections if s.name == ".text")
    rng = random.Random(section)
    addrs = [rng.randrange(text.addr, text.addr + text.size) for _ in range(60)]
    for _ in range(25):
        data = bytearray(img.data)
        for _ in range(rng.choice((1, 4, 32))):
            at = sec.offset + rng.randrange(sec.size)
            data[at] = rng.randrange(256)
        a2l = Addr2Line(ElfCodeImage(str(program), bytes(data)))
        for a in addrs:
            a2l.records(a)  # never raises, never hangs
