"""Relocations of a relocatable file's code section: the names a ``.ko`` leaves as zeros.

A kernel module's ``call printk`` is stored as ``e8 00 00 00 00``: the loader patches the
four bytes from the ``.rela.text`` entry ``R_X86_64_PLT32 printk-0x4``.  A disassembler
alone shows ``call <next instruction>``; :func:`section_relocations` reads the table so that
the annotate view can show ``call printk``.

API:

* :func:`section_relocations(image, section) <section_relocations>` -> :class:`RelocationTable`:
  every ``SHT_RELA``/``SHT_REL`` entry that patches ``section`` (by ``sh_info``), as numpy
  arrays sorted by offset (an ET_EXEC/ET_DYN file gives an empty table: its code is
  already linked).
* :meth:`RelocationTable.spans(starts, ends) <RelocationTable.spans>`: for instructions at
  section offsets ``[starts[i], ends[i])``, the ``[lo, hi)`` rows of the relocations
  whose patched field starts inside each (vectorised).
* :meth:`RelocationTable.relocation(row) <RelocationTable.relocation>` -> :class:`Relocation`
  (symbol name, addend, objdump's ``printk-0x4`` text) and :meth:`RelocationTable.target`:
  what the instruction refers to once loaded, ``(section index | None, offset, name)``.

Machines: x86-64 (RELA; ``R_X86_64_PLT32``/``PC32``/``32S``/``64``/...), i386 (REL: the
addend is the patched field's contents) and aarch64 (RELA; ``CALL26``/``JUMP26``/
``ADR_PREL_PG_HI21``/``ADD_ABS_LO12_NC``/``LDST*_ABS_LO12_NC``/...).  Type names are
pyelftools'.  Symbol indexes follow ``SHN_XINDEX``.  A table that does not fit the file,
an entry whose offset is outside the section or whose symbol index is outside the symbol
table raises :class:`~perftui.symbols.code.elfcode.ElfFileError` (one line naming the file).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from perftui.symbols.code.elfcode import (
    SHN_ABS,
    SHN_LORESERVE,
    SHN_UNDEF,
    SHT_REL,
    SHT_RELA,
    STT_SECTION,
    ElfCodeImage,
    ElfFileError,
    ImageSection,
)

__all__ = ["Relocation", "RelocationTable", "section_relocations"]

_EM_386, _EM_X86_64, _EM_AARCH64 = 3, 62, 183

# x86: PC-relative types (the CPU adds the address of the *next instruction*, the
# relocation the address of the field: the difference shifts the target) and field sizes.
_X64_PCREL = frozenset({2, 4, 9, 13, 15, 24, 26, 28, 29, 41, 42})
_X64_SIZE = {1: 8, 24: 8, 25: 8, 27: 8, 28: 8, 29: 8, 30: 8, 31: 8, 12: 2, 13: 2, 14: 1, 15: 1}
_I386_PCREL = frozenset({2, 4, 10})
_I386_SIZE = {20: 2, 21: 2, 22: 1, 23: 1}
_EXTRA_NAMES = {_EM_X86_64: {41: "R_X86_64_GOTPCRELX"}}


@cache
def _type_names(machine: int) -> dict[int, str]:
    from elftools.elf import enums

    table = {
        _EM_X86_64: enums.ENUM_RELOC_TYPE_x64,
        _EM_386: enums.ENUM_RELOC_TYPE_i386,
        _EM_AARCH64: enums.ENUM_RELOC_TYPE_AARCH64,
    }.get(machine, {})
    names = {int(v): str(k) for k, v in table.items() if isinstance(v, int) and k != "_default_"}
    names.update(_EXTRA_NAMES.get(machine, {}))
    return names


@dataclass(frozen=True, slots=True)
class Relocation:
    """One relocation entry, with its symbol named.

    ``symbol`` is the symbol's name; for a section symbol (STT_SECTION) it is the section's
    name, and for symbol 0 ``*ABS*``, as ``objdump -r`` shows them.  ``symbol_section``
    is the index of the section that defines the symbol, None for an undefined
    (external) symbol or an absolute one.
    """

    offset: int  # r_offset: byte offset of the patched field in its section
    type: int
    type_name: str  # "R_X86_64_PLT32"
    symbol: str
    addend: int  # r_addend (REL: the field's contents)
    symbol_section: int | None
    symbol_value: int
    explicit_addend: bool = True  # RELA (False: REL, objdump prints no addend)

    @property
    def text(self) -> str:
        """``printk-0x4``, ``.bss+0x4060``, ``__fentry__``: as ``objdump -dr`` prints it."""
        if not self.explicit_addend or self.addend == 0:
            return self.symbol
        sign = "-" if self.addend < 0 else "+"
        return f"{self.symbol}{sign}{abs(self.addend):#x}"


class RelocationTable:
    """The relocations of one section, sorted by offset (numpy arrays, one row each)."""

    def __init__(
        self,
        image: ElfCodeImage,
        section: ImageSection,
        offsets: np.ndarray,
        types: np.ndarray,
        symbols: np.ndarray,
        addends: np.ndarray,
        explicit: np.ndarray,
    ) -> None:
        order = np.argsort(offsets, kind="stable")
        self.image = image
        self.section = section
        self.offsets: np.ndarray = offsets[order]
        self.types: np.ndarray = types[order]
        self.symbols: np.ndarray = symbols[order]
        self.addends: np.ndarray = addends[order]
        self.explicit: np.ndarray = explicit[order]

    def __len__(self) -> int:
        return len(self.offsets)

    def spans(self, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(lo, hi)``: rows ``lo[i]:hi[i]`` patch a field that starts in
        ``[starts[i], ends[i])`` (section offsets of instruction ``i``)."""
        s = np.asarray(starts, dtype=np.uint64)
        e = np.asarray(ends, dtype=np.uint64)
        return (
            np.searchsorted(self.offsets, s, side="left"),
            np.searchsorted(self.offsets, e, side="left"),
        )

    def relocation(self, row: int) -> Relocation:
        """Row ``row`` with its symbol and type named."""
        img = self.image
        sym, _, _ = img.raw_symbols()
        i = int(self.symbols[row])
        typ = int(self.types[row])
        name = _type_names(img.e_machine).get(typ, f"<type {typ}>")
        if i == 0:
            return Relocation(
                int(self.offsets[row]), typ, name, "*ABS*", int(self.addends[row]), None, 0,
                bool(self.explicit[row]),
            )
        r = sym[i]
        shndx = int(r["shndx"])
        where: int | None = shndx if SHN_UNDEF < shndx < SHN_LORESERVE else None
        if where is not None and where >= len(img.sections):
            where = None
        if int(r["info"]) & 0xF == STT_SECTION and where is not None:
            label = img.sections[where].name
        else:
            label = img.symbol_name(i)
        return Relocation(
            int(self.offsets[row]), typ, name, label, int(self.addends[row]), where,
            int(r["value"]), bool(self.explicit[row]),
        )

    def target(self, row: int, insn_end: int) -> tuple[int | None, int, str]:
        """What the instruction refers to through row ``row``, once loaded.

        ``insn_end`` is the section offset just past the instruction.  Returns
        ``(section index, offset in it, name)`` for a symbol this file defines
        (``name``: the function or object there, ``sym+0x10``; the section's name when
        no symbol covers it) and ``(None, value, name)`` for an external one
        (``printk``, ``memcpy+0x8``).  x86 PC-relative entries are corrected for the
        bytes between the field and the end of the instruction, so ``call printk``
        (``printk-0x4``) names ``printk`` and a RIP-relative load names the datum.
        """
        rel = self.relocation(row)
        delta = rel.addend
        machine = self.image.e_machine
        if (machine == _EM_X86_64 and rel.type in _X64_PCREL) or (
            machine == _EM_386 and rel.type in _I386_PCREL
        ):
            delta += insn_end - rel.offset
        if rel.symbol_section is not None:
            off = rel.symbol_value + delta
            sec = self.image.sections[rel.symbol_section]
            hit = self.image.section_symbols(sec.index).resolve(off) if off >= 0 else None
            if hit is not None:
                return sec.index, off, _plus(hit[0], hit[1])
            return sec.index, off, _plus(sec.name, off)
        sym, _, _ = self.image.raw_symbols()
        if rel.symbol == "*ABS*" or int(sym["shndx"][int(self.symbols[row])]) == SHN_ABS:
            value = rel.symbol_value + delta
            return None, value, f"{value:#x}"
        return None, delta, _plus(rel.symbol, delta)


def _plus(name: str, off: int) -> str:
    if off == 0:
        return name
    return f"{name}+{off:#x}" if off > 0 else f"{name}-{-off:#x}"


def _entry_dtype(image: ElfCodeImage, rela: bool) -> np.dtype:
    o = "<" if image.little_endian else ">"
    w = o + ("u8" if image.elfclass == 64 else "u4")
    fields = [("offset", w), ("info", w)]
    if rela:
        fields.append(("addend", o + ("i8" if image.elfclass == 64 else "i4")))
    return np.dtype(fields)


def section_relocations(
    image: ElfCodeImage, section: str | int | ImageSection, only: ImageSection | None = None
) -> RelocationTable:
    """All relocations that patch ``section`` of a relocatable file (empty otherwise);
    with ``only``, those of that one relocation section."""
    sec = section if isinstance(section, ImageSection) else image.section(section)
    parts: list[tuple[np.ndarray, ...]] = []
    if image.kind == "rel":
        sym, _, symtab_index = image.raw_symbols()
        for rs in image.sections:
            if rs.type not in (SHT_RELA, SHT_REL) or rs.info != sec.index:
                continue
            if only is not None and rs.index != only.index:
                continue
            parts.append(_read_table(image, rs, sec, len(sym), symtab_index))
    if not parts:
        z = np.zeros(0, np.uint64)
        return RelocationTable(image, sec, z, z, z, np.zeros(0, np.int64), np.zeros(0, bool))
    cols = [np.concatenate([p[k] for p in parts]) for k in range(5)]
    return RelocationTable(image, sec, *cols)


def _read_table(
    image: ElfCodeImage, rs: ImageSection, target: ImageSection, nsyms: int, symtab_index: int
) -> tuple[np.ndarray, ...]:
    rela = rs.type == SHT_RELA
    dtype = _entry_dtype(image, rela)
    where = f"{rs.name or f'section {rs.index}'}"
    if rs.entsize != dtype.itemsize:
        raise ElfFileError(image.path, f"{where}: bad relocation entry size {rs.entsize}")
    if rs.link != symtab_index:
        raise ElfFileError(image.path, f"{where}: links to section {rs.link}, not the symbol "
                           "table")
    n = rs.size // dtype.itemsize
    raw = np.frombuffer(image.data, dtype, n, rs.offset)
    offsets = raw["offset"].astype(np.uint64)
    info = raw["info"].astype(np.uint64)
    if image.elfclass == 64:
        symbols, types = info >> np.uint64(32), info & np.uint64(0xFFFFFFFF)
    else:
        symbols, types = info >> np.uint64(8), info & np.uint64(0xFF)
    sizes = _field_sizes(image.e_machine, types)
    bad = (offsets > np.uint64(target.size)) | (offsets + sizes > np.uint64(target.size))
    if target.nobits:
        bad[:] = True
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ElfFileError(
            image.path,
            f"{where}: relocation {k} at offset {int(offsets[k]):#x} lies outside "
            f"{target.name} ({target.size:#x} bytes)",
        )
    over = symbols >= np.uint64(max(nsyms, 1))
    if over.any():
        k = int(np.flatnonzero(over)[0])
        raise ElfFileError(
            image.path, f"{where}: relocation {k} names symbol {int(symbols[k])} of {nsyms}"
        )
    if rela:
        addends = raw["addend"].astype(np.int64)
    else:  # REL: the addend is what the field holds (4 bytes for every type perftui names)
        data = np.frombuffer(image.data, np.uint8, target.size, target.offset)
        padded = np.concatenate([data, np.zeros(4, np.uint8)])
        at = offsets.astype(np.int64)[:, None] + np.arange(4)
        o = "<" if image.little_endian else ">"
        addends = padded[at].copy().view(o + "i4").reshape(-1).astype(np.int64)
    return offsets, types, symbols, addends, np.full(n, rela)


def _field_sizes(machine: int, types: np.ndarray) -> np.ndarray:
    """Bytes each relocation patches (4 unless the type says otherwise)."""
    sizes = np.full(len(types), 4, dtype=np.uint64)
    table = {_EM_X86_64: _X64_SIZE, _EM_386: _I386_SIZE, _EM_AARCH64: {257: 8, 260: 8}}
    for typ, size in table.get(machine, {}).items():
        sizes[types == typ] = size
    return sizes
