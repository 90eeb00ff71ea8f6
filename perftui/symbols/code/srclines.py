"""Source lines for instruction addresses, from DWARF line tables (pyelftools).

API:

* :func:`line_table(image) <line_table>` -> :class:`LineTable` or None when the file has
  no ``.debug_line`` (cached on the image).
* :meth:`LineTable.lookup(addrs, section=None) <LineTable.lookup>` -> for each address a
  :class:`SourceLine` ``(file, line)`` or None.  Addresses are objdump's: virtual addresses
  in a program or library, offsets into ``section`` in a ``.ko``.

The rule is ``addr2line``'s (binutils' ``dwarf2.c``): an address takes the last row at the
greatest row address ``<=`` it within the sequence that contains it (an end-of-sequence
row closes the sequence); of several rows at one address the last wins.  ``file`` is the
path as addr2line prints it: the file name joined to its directory and, when that is
relative, to the compilation directory.  DWARF 2-5 (gcc 12's default is 5).

Relocatable files (``.ko``): every code section starts at 0, so the line table's
addresses are relocated (in a private copy, vectorised, the absolute types DWARF uses on
x86-64, i386 and aarch64) with each allocated section placed at its own base; a row then
tells its section apart.  Only the compilation units that
``.debug_aranges`` names for the asked addresses are decoded (all of them when the file
has no aranges), so a large binary costs one unit per function.

A file whose DWARF cannot be read gives :class:`~perftui.symbols.code.elfcode.ElfFileError`
(one line naming the file); callers show the disassembly without source then.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from perftui.symbols.code.elfcode import (
    SHF_ALLOC,
    SHN_LORESERVE,
    SHT_REL,
    SHT_RELA,
    ElfCodeImage,
    ElfFileError,
    ImageSection,
)
from perftui.symbols.code.relocs import section_relocations
from perftui.symbols.files.decompress import MemStream, one_line

if TYPE_CHECKING:
    from elftools.dwarf.dwarfinfo import DWARFInfo

__all__ = ["LineTable", "SourceLine", "line_table"]

_SHIFT_64 = 40  # section k of a .ko is placed at (k + 1) << 40 (sections under 1 TiB)
_SHIFT_32 = 24  # ... at (k + 1) << 24 in a 32-bit .ko (255 sections of under 16 MiB)


@dataclass(frozen=True, slots=True)
class SourceLine:
    """A source position: ``file`` (path as addr2line prints it) and 1-based ``line``."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


class LineTable:
    """The line rows of the compilation units decoded so far (see :meth:`lookup`)."""

    def __init__(self, image: ElfCodeImage, dwarf: DWARFInfo, shift: int | None) -> None:
        self.image = image
        self._dwarf = dwarf
        self._shift = shift  # None: addresses are virtual addresses (ET_EXEC/ET_DYN)
        self._done: set[int] = set()  # CU offsets decoded
        self._all_done = False
        self._aranges: Any = None
        self._aranges_read = False
        self._files: list[str] = []
        self._file_ids: dict[str, int] = {}
        # rows of every decoded sequence, as parallel lists turned into arrays on demand
        self._addr: list[int] = []
        self._file: list[int] = []
        self._line: list[int] = []
        self._seq: list[int] = []
        self._seq_bounds: list[tuple[int, int]] = []
        self._arrays: tuple[np.ndarray, ...] | None = None

    # -- addresses ---------------------------------------------------------------------------
    def _to_dwarf(self, addrs: np.ndarray, section: ImageSection | None) -> np.ndarray:
        if self._shift is None:
            return addrs
        if section is None:
            raise ElfFileError(self.image.path, "a module's source lines need a section")
        return addrs + np.uint64((section.index + 1) << self._shift)

    def lookup(
        self, addrs: np.ndarray | list[int], section: ImageSection | str | int | None = None
    ) -> list[SourceLine | None]:
        """The source line of each address (None: no row covers it)."""
        a = np.asarray(addrs, dtype=np.uint64).reshape(-1)
        if not len(a):
            return []
        sec = None
        if self._shift is not None and section is not None:
            sec = section if isinstance(section, ImageSection) else self.image.section(section)
        want = self._to_dwarf(a, sec)
        self._load_for(want)
        if not self._addr:
            return [None] * len(a)
        addr, file_, line, seq, seq_lo, seq_hi = self._tables()
        out: list[SourceLine | None] = []
        for x in want.tolist():
            # the sequences that contain x: the first one (in decode order) wins
            inside = np.flatnonzero((seq_lo <= x) & (x < seq_hi))
            if not len(inside):
                out.append(None)
                continue
            s = int(inside[0])
            lo = int(np.searchsorted(seq, s, side="left"))
            hi = int(np.searchsorted(seq, s, side="right"))
            k = lo + int(np.searchsorted(addr[lo:hi], np.uint64(x), side="right")) - 1
            if k < lo:
                out.append(None)
                continue
            out.append(SourceLine(self._files[int(file_[k])], int(line[k])))
        return out

    def _tables(self) -> tuple[np.ndarray, ...]:
        if self._arrays is None:
            seq = np.array(self._seq, dtype=np.int64)
            order = np.lexsort((np.arange(len(seq)), np.array(self._addr, np.uint64), seq))
            bounds = np.array(self._seq_bounds, dtype=np.uint64).reshape(-1, 2)
            self._arrays = (
                np.array(self._addr, np.uint64)[order],
                np.array(self._file, np.int64)[order],
                np.array(self._line, np.int64)[order],
                seq[order],
                bounds[:, 0],
                bounds[:, 1],
            )
        return self._arrays

    # -- decoding ----------------------------------------------------------------------------
    def _load_for(self, addrs: np.ndarray) -> None:
        if self._all_done:
            return
        try:
            offsets = self._cu_offsets(addrs)
            if offsets is None:
                for cu in self._dwarf.iter_CUs():
                    self._decode(cu)
                self._all_done = True
            else:
                for off in offsets:
                    if off not in self._done:
                        self._decode(self._dwarf.get_CU_at(off))
        except ElfFileError:
            raise
        except Exception as e:  # pyelftools/construct errors on bad DWARF
            raise ElfFileError(
                self.image.path, f"bad DWARF line information: {one_line(e)}"
            ) from None

    def _cu_offsets(self, addrs: np.ndarray) -> list[int] | None:
        """CU offsets that .debug_aranges gives for the addresses; None: decode all."""
        if not self._aranges_read:
            self._aranges_read = True
            self._aranges = self._dwarf.get_aranges() if self._dwarf.has_debug_info else None
        if self._aranges is None:
            return None
        found = []
        for x in {int(v) for v in addrs.tolist()}:
            off = self._aranges.cu_offset_at_addr(x)
            if off is None:
                return None  # an address aranges does not know: look everywhere
            found.append(off)
        return sorted(set(found))

    def _decode(self, cu: Any) -> None:
        if cu.cu_offset in self._done:
            return
        self._done.add(cu.cu_offset)
        program = self._dwarf.line_program_for_CU(cu)
        if program is None:
            return
        version = int(program.header["version"])
        comp_dir = _comp_dir(cu)
        dirs = [_text(d) for d in program.header["include_directory"]]
        names = []
        for fe in program.header["file_entry"]:
            d = int(fe.dir_index)
            if version >= 5:
                base = dirs[d] if d < len(dirs) else ""
            else:
                base = comp_dir if d == 0 else (dirs[d - 1] if d - 1 < len(dirs) else "")
            path = posixpath.join(base, _text(fe.name))
            if not posixpath.isabs(path) and comp_dir:
                path = posixpath.join(comp_dir, path)
            names.append(posixpath.normpath(path) if "/./" in path else path)
        first = 0 if version >= 5 else 1
        seq_start: int | None = None
        seq_id = len(self._seq_bounds)
        for entry in program.get_entries():
            st = entry.state
            if st is None:
                continue
            if st.end_sequence:
                if seq_start is not None:
                    self._seq_bounds.append((seq_start, int(st.address)))
                    seq_id += 1
                seq_start = None
                continue
            if seq_start is None:
                seq_start = int(st.address)
            k = int(st.file) - first
            name = names[k] if 0 <= k < len(names) else f"<file {st.file}>"
            fid = self._file_ids.get(name)
            if fid is None:
                fid = self._file_ids[name] = len(self._files)
                self._files.append(name)
            self._addr.append(int(st.address))
            self._file.append(fid)
            self._line.append(int(st.line))
            self._seq.append(seq_id)
        if seq_start is not None:  # a sequence without its end row: drop its rows
            n = sum(1 for s in self._seq if s == seq_id)
            for lst in (self._addr, self._file, self._line, self._seq):
                del lst[len(lst) - n :]
        self._arrays = None


def _text(v: Any) -> str:
    return v.decode("utf-8", "backslashreplace") if isinstance(v, bytes) else str(v)


def _comp_dir(cu: Any) -> str:
    try:
        attr = cu.get_top_DIE().attributes.get("DW_AT_comp_dir")
    except Exception:
        return ""
    return _text(attr.value) if attr is not None else ""


def line_table(image: ElfCodeImage) -> LineTable | None:
    """The line table of ``image``; None when it has no ``.debug_line``."""
    key = ("lines",)
    if key in image._tables:
        return image._tables[key]  # type: ignore[no-any-return]
    table = None
    if any(s.name in (".debug_line", ".zdebug_line") for s in image.sections):
        table = _open(image)
    image._tables[key] = table
    return table


def _open(image: ElfCodeImage) -> LineTable:
    from elftools.elf.elffile import ELFFile

    data: bytes | bytearray = image.data
    shift = None
    if image.kind == "rel":
        shift = _SHIFT_64 if image.elfclass == 64 else _SHIFT_32
        data = _placed(image, shift)
    try:
        elf = ELFFile(MemStream(data))  # type: ignore[arg-type]
        dwarf = elf.get_dwarf_info(relocate_dwarf_sections=False, follow_links=False)
    except Exception as e:
        raise ElfFileError(image.path, f"bad DWARF information: {one_line(e)}") from None
    return LineTable(image, dwarf, shift)


# Absolute relocation types found in DWARF sections (value S + A): type -> field bytes.
# (A REL table's addend is the field's contents: section_relocations reads it.)
_DEBUG_RELOCS = {
    62: {1: 8, 10: 4, 11: 4, 17: 8, 21: 4},  # R_X86_64_64/32/32S/DTPOFF64/DTPOFF32
    183: {257: 8, 258: 4},  # R_AARCH64_ABS64/ABS32
    3: {1: 4},  # R_386_32
}


def _placed(image: ElfCodeImage, shift: int) -> bytearray:
    """A copy of a .ko whose DWARF sections are relocated with every allocated section
    placed at its own base, ``(index + 1) << shift`` (vectorised; pyelftools' own
    relocation costs 0.3 ms an entry, minutes for a large module)."""
    limit = (1 << shift) - 1
    for s in image.sections:
        if s.flags & SHF_ALLOC and s.size > limit:
            raise ElfFileError(image.path, f"section {s.name} is too large to place")
    if image.elfclass == 32 and len(image.sections) > 255:
        raise ElfFileError(image.path, "too many sections to place for line information")
    copy = bytearray(image.data)
    sym, _, index = image.raw_symbols()
    kinds = _DEBUG_RELOCS.get(image.e_machine)
    if not index or not len(sym) or kinds is None:
        return copy
    shndx = sym["shndx"]
    nsec = len(image.sections)
    alloc = np.array([bool(s.flags & SHF_ALLOC) for s in image.sections] + [False])
    placed = (shndx > 0) & (shndx < min(SHN_LORESERVE, nsec))
    placed &= alloc[np.where(placed, shndx, nsec).astype(np.int64)]
    bases = np.where(placed, (shndx + np.uint64(1)) << np.uint64(shift), np.uint64(0))
    values = sym["value"] + bases  # S of every symbol
    o = "<" if image.little_endian else ">"
    buf = np.frombuffer(copy, np.uint8)
    for rs in image.sections:
        if rs.type not in (SHT_RELA, SHT_REL) or rs.link != index or not 0 < rs.info < nsec:
            continue
        target = image.sections[rs.info]
        if not target.name.startswith(".debug_") or target.nobits:
            continue
        table = section_relocations(image, target, only=rs)
        for typ, size in kinds.items():
            pick = table.types == typ
            if not pick.any():
                continue
            at = table.offsets[pick].astype(np.int64) + target.offset
            s_val = values[table.symbols[pick].astype(np.int64)]
            word = o + ("u8" if size == 8 else "u4")
            cells = at[:, None] + np.arange(size)
            with np.errstate(over="ignore"):
                v = s_val + table.addends[pick].astype(np.uint64)
            if size == 4:
                v &= np.uint64(0xFFFFFFFF)
            buf[cells] = v.astype(word).view(np.uint8).reshape(-1, size)
    return copy
