"""Tiny ELF files with hand-made DWARF, for the hostile-DWARF tests: an executable whose
``.text`` is at 0x1000 and whose ``.debug_*`` sections are the bytes given (DWARF 4,
64-bit little-endian).  The DIE helpers write the forms the tests need."""

from __future__ import annotations

import struct


def uleb(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def abbrev(code: int, tag: int, children: bool, attrs: list[tuple[int, int]]) -> bytes:
    body = uleb(code) + uleb(tag) + bytes([1 if children else 0])
    for name, form in attrs:
        body += uleb(name) + uleb(form)
    return body + b"\0\0"


def unit(dies: bytes, abbrev_offset: int = 0, version: int = 4) -> bytes:
    """A DWARF 4 compile unit header around ``dies``."""
    body = struct.pack("<HIB", version, abbrev_offset, 8) + dies
    return struct.pack("<I", len(body)) + body


def line_program(rows: list[tuple[int, int]], file: str = "hostile.c") -> bytes:
    """A DWARF 4 line program: one sequence with a row per (address, line), ended at the
    last address + 1."""
    std = bytes([0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1])  # standard_opcode_lengths (13 - 1)
    header = bytes([1, 1, 1]) + struct.pack("<b", -5) + bytes([14, 13]) + std
    header += b"\0"  # no include directories
    header += file.encode() + b"\0" + uleb(0) + uleb(0) + uleb(0) + b"\0"
    prog = bytearray()
    line = 1
    for addr, ln in rows:
        prog += b"\0" + uleb(9) + b"\x02" + struct.pack("<Q", addr)  # set_address
        prog += b"\x03" + _sleb(ln - line)  # advance_line
        line = ln
        prog += b"\x01"  # copy
    last = rows[-1][0] + 1 if rows else 0x1000
    prog += b"\0" + uleb(9) + b"\x02" + struct.pack("<Q", last) + b"\0\x01\x01"
    body = struct.pack("<H", 4) + struct.pack("<I", len(header)) + header + bytes(prog)
    return struct.pack("<I", len(body)) + body


def _sleb(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        done = (v == 0 and not b & 0x40) or (v == -1 and b & 0x40)
        out.append(b | (0 if done else 0x80))
        if done:
            return bytes(out)


def elf(sections: dict[str, bytes], text_size: int = 0x100) -> bytes:
    """An ELF64 executable: ``.text`` (NOBITS-free zeros) at 0x1000, then ``sections``."""
    names = [".text", *sections, ".shstrtab"]
    shstr = b"\0" + b"".join(n.encode() + b"\0" for n in names)
    name_off = {}
    at = 1
    for n in names:
        name_off[n] = at
        at += len(n) + 1
    blobs = [b"\x90" * text_size, *sections.values(), shstr]
    data = bytearray(64)
    offs = []
    for b in blobs:
        while len(data) % 8:
            data.append(0)
        offs.append(len(data))
        data += b
    while len(data) % 8:
        data.append(0)
    shoff = len(data)
    shdrs = bytearray(64)  # the null section
    for i, (n, b) in enumerate(zip(names, blobs, strict=True)):
        typ, flags, addr = (1, 0x6, 0x1000) if n == ".text" else ((3, 0, 0) if n == ".shstrtab"
                                                                  else (1, 0, 0))
        shdrs += struct.pack("<IIQQQQIIQQ", name_off[n], typ, flags, addr, offs[i], len(b),
                             0, 0, 1, 0)
    data += shdrs
    ident = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    hdr = ident + struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, 0x1000, 0, shoff, 0, 64, 56, 0, 64,
                              len(names) + 1, len(names))
    data[:64] = hdr
    return bytes(data)
