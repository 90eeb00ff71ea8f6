"""The ELF symbol binutils names an address by when DWARF gives no linkage name.

binutils' ``_bfd_elf_find_function`` (``bfd/dwarf2.c``) with its
``_bfd_elf_maybe_function_sym`` (``bfd/elf.c``): of the symbols in the address's section
that may be functions (not a section, file, object or thread-local symbol, not a hidden
local untyped symbol of size 0), the one that starts last at or before the address (of
several at one start, the largest); its file is the ``STT_FILE`` symbol before it in the
table, for a local symbol or when no file symbol came after the first symbol.  The
symbol need not cover the address: ``addr2line`` names the space after a function by it.
"""

from __future__ import annotations

import numpy as np

from ..code.elfcode import SHF_ALLOC, SHN_LORESERVE, ElfCodeImage
from ..tables.lookup import cstr

__all__ = ["ElfFunctionFinder"]

_STT_OBJECT, _STT_SECTION, _STT_FILE, _STT_TLS, _STT_NOTYPE = 1, 3, 4, 6, 0
_STB_LOCAL = 0
_STV_HIDDEN = 2


class ElfFunctionFinder:
    """``find(addr) -> (name, file or None) | None`` over one file's symbol table."""

    def __init__(self, image: ElfCodeImage) -> None:
        self.image = image
        sym, strtab, _ = image.raw_symbols()
        self._strtab = strtab
        typ = sym["info"] & 0xF
        bind = sym["info"] >> 4
        vis = sym["other"] & 0x3
        size = sym["size"]
        # (binutils' table leaves out entry 0; a file symbol there would not count)
        idx = np.arange(len(sym))
        self._file_name = np.full(len(sym), -1, np.int64)  # name offset of its file symbol
        is_file = (typ == _STT_FILE) & (idx > 0)
        # the file before each symbol, and whether one came after the first other symbol
        last_file = np.where(is_file, idx, -1)
        np.maximum.accumulate(last_file, out=last_file)
        other = (~is_file) & (idx > 0)
        first_other = int(np.argmax(other)) if other.any() else len(sym)
        file_after = np.zeros(len(sym), bool)
        after = is_file & (idx > first_other)
        if after.any():
            file_after = np.maximum.accumulate(after)
        keep_file = (last_file >= 0) & ((bind == _STB_LOCAL) | ~file_after)
        self._file_name[keep_file] = sym["name"][last_file[keep_file]]
        maybe = other & (sym["shndx"] > 0) & (sym["shndx"] < SHN_LORESERVE)
        maybe &= ~np.isin(typ, (_STT_OBJECT, _STT_SECTION, _STT_FILE, _STT_TLS))
        maybe &= ~((size == 0) & (bind == _STB_LOCAL) & (typ == _STT_NOTYPE)
                   & (vis == _STV_HIDDEN))
        self._idx = np.flatnonzero(maybe)
        self._sec = sym["shndx"][self._idx].astype(np.int64)
        self._value = sym["value"][self._idx].astype(np.uint64)
        self._size = np.maximum(size[self._idx], 1).astype(np.uint64)
        self._names = sym["name"]

    def section_at(self, addr: int) -> int:
        """The index of the allocated section holding ``addr`` (-1: none), the first in
        table order, as ``bfd_map_over_sections`` finds it."""
        for s in self.image.sections:
            if s.flags & SHF_ALLOC and s.addr <= addr < s.addr + s.size:
                return s.index
        return -1

    def find(self, addr: int, section: int) -> tuple[str, str | None, int] | None:
        """The symbol binutils names ``addr`` of ``section`` by: (name, its file, its
        start)."""
        pick = (self._sec == section) & (self._value <= np.uint64(addr))
        if not pick.any():
            return None
        cand = np.flatnonzero(pick)
        v = self._value[cand]
        best = cand[v == v.max()]
        # the first of the largest (binutils replaces only on a strictly larger size)
        sizes = self._size[best]
        k = int(best[int(np.argmax(sizes))])
        i = int(self._idx[k])
        name = cstr(self._strtab, int(self._names[i]))
        f = int(self._file_name[i])
        return name, (cstr(self._strtab, f) if f >= 0 else None), int(self._value[k])
