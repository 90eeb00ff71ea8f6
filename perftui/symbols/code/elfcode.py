"""An ELF file opened for annotation: its bytes, machine, sections and symbols.

:func:`open_elf` reads an executable, a shared object or a kernel module (``.ko``, also
xz/gzip/zstd-compressed) into an :class:`ElfCodeImage`.  The image keeps the file's bytes, so
that a function's code (:meth:`ElfCodeImage.code_range`), its relocations
(:mod:`perftui.symbols.code.relocs`) and its line table (:mod:`perftui.symbols.code.srclines`) are
read from one copy.

Addresses.  In an executable or shared object (ET_EXEC/ET_DYN) a function is named by its
virtual address, as ``objdump -d`` shows it; its bytes come from the section that holds
that address.  In a relocatable module (ET_REL) every section starts at 0: a function is
named by ``(section, offset)``, and the address shown for it is the section's *load*
address (from KMOD_SEC_MAP; 0 when unknown, which is what ``objdump -d`` shows) plus the
offset, never the module base.

Everything read is untrusted: only regular files, the size capped, every table range
checked against the file, ``SHN_XINDEX`` followed.  Any problem is one
:class:`ElfFileError` whose message is one line naming the file.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from perftui.symbols.errors import FileError
from perftui.symbols.files.decompress import ELF_MAGIC, decompress, one_line, read_capped
from perftui.symbols.modules.sectiontable import SectionSymbolTable
from perftui.symbols.tables.lookup import cstr

__all__ = [
    "MACHINES",
    "CodeRange",
    "ElfCodeImage",
    "ElfFileError",
    "FunctionSymbol",
    "ImageSection",
    "SymbolLookup",
    "open_elf",
]

#: ``address -> (symbol name, offset into it)`` or None: how a caller names addresses.
SymbolLookup = Callable[[int], "tuple[str, int] | None"]

#: e_machine values perftui disassembles, and the name used for them.
MACHINES = {62: "x86_64", 3: "i386", 183: "aarch64"}

_ET_NAMES = {1: "rel", 2: "exec", 3: "dyn"}
SHT_NULL, SHT_SYMTAB, SHT_STRTAB, SHT_RELA = 0, 2, 3, 4
SHT_NOBITS, SHT_REL, SHT_DYNSYM, SHT_SYMTAB_SHNDX = 8, 9, 11, 18
SHF_ALLOC, SHF_EXECINSTR = 0x2, 0x4
SHN_UNDEF, SHN_LORESERVE, SHN_ABS, SHN_XINDEX = 0, 0xFF00, 0xFFF1, 0xFFFF
STT_NOTYPE, STT_OBJECT, STT_FUNC, STT_SECTION, STT_GNU_IFUNC = 0, 1, 2, 3, 10
STB_LOCAL, STB_GLOBAL, STB_WEAK = 0, 1, 2
_MAX_SYMBOLS = 20_000_000  # 480 MB of Elf64_Sym: beyond any real file


class ElfFileError(FileError):
    """An ELF file that cannot be used; ``str()`` is one line naming the file and problem."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(path, " ".join(problem.split()))


@dataclass(frozen=True, slots=True)
class ImageSection:
    """One section header of an :class:`ElfCodeImage`."""

    index: int
    name: str
    type: int  # sh_type
    flags: int  # sh_flags
    addr: int  # sh_addr (0 in a .ko)
    offset: int  # sh_offset
    size: int  # sh_size
    link: int  # sh_link
    info: int  # sh_info
    entsize: int  # sh_entsize

    @property
    def executable(self) -> bool:
        """SHF_EXECINSTR: the section holds instructions."""
        return bool(self.flags & SHF_EXECINSTR)

    @property
    def nobits(self) -> bool:
        """SHT_NOBITS (``.bss``): no bytes in the file."""
        return self.type == SHT_NOBITS


@dataclass(frozen=True, slots=True)
class FunctionSymbol:
    """A symbol as the file defines it: ``value`` is an offset into ``section`` in a .ko,
    a virtual address otherwise."""

    name: str
    section: int  # section index (after SHN_XINDEX); 0 for none
    value: int
    size: int
    type: int  # STT_*
    bind: int  # STB_*


@dataclass(frozen=True, slots=True)
class CodeRange:
    """The bytes of one function (or any range of one section) and where they are shown.

    ``address`` is the displayed address of ``data[0]``; ``offset`` is where the range
    starts in its section.  ``is_code`` is False for a section that holds no instructions
    (``.data``, ``.rodata``, ``.bss``); ``data`` is empty then.
    """

    section: ImageSection
    offset: int
    size: int
    address: int
    data: bytes

    @property
    def is_code(self) -> bool:
        return self.section.executable and not self.section.nobits

    @property
    def end(self) -> int:
        """Displayed address one past the range."""
        return self.address + self.size


class ElfCodeImage:
    """The bytes and tables of one ELF file.  Make one with :func:`open_elf`."""

    def __init__(self, path: str, data: bytes, compression: str | None = None) -> None:
        self.path = path
        self.data = data
        self.compression = compression
        if len(data) < 52 or data[:4] != ELF_MAGIC:
            raise ElfFileError(path, "not an ELF file (bad magic or too short)")
        if data[4] not in (1, 2) or data[5] not in (1, 2):
            raise ElfFileError(path, "bad ELF identification (class or byte order)")
        self.elfclass = 64 if data[4] == 2 else 32
        if len(data) < (64 if self.elfclass == 64 else 52):
            raise ElfFileError(path, f"too short for an ELF header ({len(data)} bytes)")
        self.little_endian = data[5] == 1
        self._order = "<" if self.little_endian else ">"
        e_type, e_machine = (int(x) for x in np.frombuffer(data, self._order + "u2", 2, 16))
        if e_type not in _ET_NAMES:
            raise ElfFileError(path, f"ELF type {e_type} is not a program, library or module")
        self.kind = _ET_NAMES[e_type]  # "rel" (.ko, .o), "exec" or "dyn"
        self.machine = MACHINES.get(e_machine)  # None: a machine perftui cannot disassemble
        self.e_machine = e_machine
        self.sections = self._read_sections()
        self._symbols: tuple[np.ndarray, bytes, int] | None = None
        self._tables: dict[tuple[Any, ...], Any] = {}

    def __repr__(self) -> str:
        return f"ElfCodeImage({self.path!r}, kind={self.kind!r}, machine={self.machine!r})"

    # -- sections ------------------------------------------------------------------------------
    def _read_sections(self) -> list[ImageSection]:
        o, is64 = self._order, self.elfclass == 64
        hdr = np.frombuffer(self.data, o + ("u8" if is64 else "u4"), 3, 24)
        shoff = int(hdr[2])
        shentsize, shnum, shstrndx = (
            int(x) for x in np.frombuffer(self.data, o + "u2", 3, 58 if is64 else 46)
        )
        if shoff == 0:
            return []
        want = 64 if is64 else 40
        if shentsize != want:
            raise ElfFileError(self.path, f"bad section header size {shentsize}")
        self._check(shoff, want, "section header table")
        u = o + ("u8" if is64 else "u4")
        fields = [
            ("name", o + "u4"), ("type", o + "u4"), ("flags", u), ("addr", u),
            ("offset", u), ("size", u), ("link", o + "u4"), ("info", o + "u4"),
            ("addralign", u), ("entsize", u),
        ]
        dtype = np.dtype(fields)
        first = np.frombuffer(self.data, dtype, 1, shoff)[0]
        if shnum == 0:  # the count is in section 0 (more than 0xff00 sections)
            shnum = int(first["size"])
        if shstrndx == SHN_XINDEX:
            shstrndx = int(first["link"])
        self._check(shoff, shnum * want, f"section header table ({shnum} entries)")
        table = np.frombuffer(self.data, dtype, shnum, shoff)
        names = b""
        if 0 < shstrndx < shnum:
            s = table[shstrndx]
            self._check(int(s["offset"]), int(s["size"]), "section name table")
            names = self.data[int(s["offset"]) : int(s["offset"]) + int(s["size"])]
        out = []
        for i, h in enumerate(table.tolist()):
            sec = ImageSection(i, cstr(names, h[0]), h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[9])
            if i and sec.type not in (SHT_NULL, SHT_NOBITS):
                self._check(sec.offset, sec.size, f"section {i} ({sec.name})")
            out.append(sec)
        return out

    def _check(self, off: int, size: int, what: str) -> None:
        total = len(self.data)
        if off < 0 or size < 0 or off > total or size > total - off:
            raise ElfFileError(
                self.path,
                f"{what} (offset {off:#x}, size {size:#x}) runs past the end of the file "
                f"({total:#x} bytes)",
            )

    def section(self, name_or_index: str | int) -> ImageSection:
        """The section with that index, or the first one with that name."""
        if isinstance(name_or_index, int):
            if 0 <= name_or_index < len(self.sections):
                return self.sections[name_or_index]
            raise ElfFileError(self.path, f"no section {name_or_index}")
        for s in self.sections:
            if s.name == name_or_index:
                return s
        raise ElfFileError(self.path, f"no section {name_or_index}")

    def section_bytes(self, sec: ImageSection) -> memoryview:
        """The file bytes of a section (empty for SHT_NOBITS)."""
        if sec.nobits or sec.type == SHT_NULL:
            return memoryview(b"")
        return memoryview(self.data)[sec.offset : sec.offset + sec.size]

    # -- symbols -------------------------------------------------------------------------------
    def raw_symbols(self) -> tuple[np.ndarray, bytes, int]:
        """``(symbols, string table, symbol table section index)`` of ``.symtab``, else
        ``.dynsym``: a structured array with fields name, info, other, shndx (SHN_XINDEX
        applied, other reserved indexes kept), value, size.  Empty when the file has neither."""
        if self._symbols is None:
            self._symbols = self._read_symbols()
        return self._symbols

    def _read_symbols(self) -> tuple[np.ndarray, bytes, int]:
        o = self._order
        empty = np.zeros(0, _SYM_DTYPE)
        tabs = [s for s in self.sections if s.type == SHT_SYMTAB] or [
            s for s in self.sections if s.type == SHT_DYNSYM
        ]
        if not tabs:
            return empty, b"", 0
        st = tabs[0]
        if self.elfclass == 64:
            fields = [("name", o + "u4"), ("info", "u1"), ("other", "u1"),
                      ("shndx", o + "u2"), ("value", o + "u8"), ("size", o + "u8")]
        else:
            fields = [("name", o + "u4"), ("value", o + "u4"), ("size", o + "u4"),
                      ("info", "u1"), ("other", "u1"), ("shndx", o + "u2")]
        dtype = np.dtype(fields)
        if st.entsize != dtype.itemsize:
            raise ElfFileError(self.path, f"bad symbol table entry size {st.entsize}")
        n = st.size // dtype.itemsize
        if n > _MAX_SYMBOLS:
            raise ElfFileError(self.path, f"symbol table of {n} entries is over the cap")
        if not 0 < st.link < len(self.sections) or self.sections[st.link].type != SHT_STRTAB:
            raise ElfFileError(self.path, f"symbol table links to bad string table {st.link}")
        raw = np.frombuffer(self.data, dtype, n, st.offset)
        sym = np.zeros(n, _SYM_DTYPE)
        for f in ("name", "info", "other", "shndx", "value", "size"):
            sym[f] = raw[f]
        ext = sym["shndx"] == SHN_XINDEX
        if ext.any():
            idx = np.zeros(n, np.uint64)
            for s in self.sections:
                if s.type == SHT_SYMTAB_SHNDX and s.link == st.index:
                    m = min(n, s.size // 4)
                    idx[:m] = np.frombuffer(self.data, o + "u4", m, s.offset)
                    break
            sym["shndx"][ext] = idx[ext]
        strtab = self.sections[st.link]
        return sym, bytes(self.section_bytes(strtab)), st.index

    def symbol_name(self, i: int) -> str:
        """Name of symbol ``i`` of :meth:`raw_symbols` ("" when it has none)."""
        sym, strtab, _ = self.raw_symbols()
        return cstr(strtab, int(sym["name"][i])) if 0 <= i < len(sym) else ""

    def section_symbols(self, section: int) -> SectionSymbolTable:
        """Named FUNC/OBJECT (and sized untyped) symbols of one section, by offset into
        the section (``st_value - sh_addr``), one name per address (perf's
        ``choose_best_symbol`` order); a zero-size symbol covers up to the next one or the
        section's end.  Cached."""
        key = ("symtab", section)
        table = self._tables.get(key)
        if table is None:
            table = self._build_table(section)
            self._tables[key] = table
        return table

    def _build_table(self, section: int) -> SectionSymbolTable:
        sym, strtab, _ = self.raw_symbols()
        sec = self.sections[section] if 0 <= section < len(self.sections) else None
        addr = sec.addr if sec is not None and self.kind != "rel" else 0
        typ = sym["info"] & 0xF
        keep = (sym["shndx"] == section) & (sym["value"] >= np.uint64(addr)) & (
            (typ == STT_FUNC) | (typ == STT_GNU_IFUNC) | (typ == STT_OBJECT)
            | ((typ == STT_NOTYPE) & (sym["size"] > 0))
        )
        rows = sym[keep]
        names = [cstr(strtab, int(n)) for n in rows["name"]]
        ok = [bool(n) and not n.startswith("$") for n in names]  # ARM mapping symbols
        rows = rows[np.array(ok, bool)] if len(rows) else rows
        names = [n for n, k in zip(names, ok, strict=True) if k]
        if not len(rows):
            empty = np.zeros(0, np.uint64)
            return SectionSymbolTable(empty, empty, [], sec.size if sec is not None else None)
        info = rows["info"]
        bind = info >> 4
        type_rank = np.where((info & 0xF) == STT_OBJECT, 1, 0)
        type_rank = np.where((info & 0xF) == STT_NOTYPE, 2, type_rank)
        bind_rank = np.select(
            [bind == STB_GLOBAL, bind == STB_LOCAL, bind == STB_WEAK], [0, 1, 2], 3
        )
        loader = np.array([n in ("init_module", "cleanup_module") for n in names], np.int64)
        under = np.array([len(n) - len(n.lstrip("_")) for n in names], np.int64)
        length = np.array([-len(n) for n in names], np.int64)
        order = np.lexsort(
            (length, under, bind_rank, rows["size"] == 0, type_rank, loader, rows["value"])
        )
        values = rows["value"][order]
        first = np.ones(len(order), bool)
        first[1:] = values[1:] != values[:-1]
        pick = order[first]
        base = np.uint64(sec.addr if sec is not None and self.kind != "rel" else 0)
        return SectionSymbolTable(
            rows["value"][pick] - base, rows["size"][pick], [names[int(i)] for i in pick],
            sec.size if sec is not None else None,
        )

    # -- code -------------------------------------------------------------------------------
    def code_range(
        self,
        *,
        size: int,
        vaddr: int | None = None,
        section: str | int | None = None,
        offset: int | None = None,
        load_address: int | None = None,
        bias: int = 0,
    ) -> CodeRange:
        """The bytes of ``size`` bytes of code and the address shown for them.

        ET_REL (a .ko): give ``section`` and ``offset``; the range is shown at
        ``load_address + offset`` (``load_address``: the section's KMOD_SEC_MAP start,
        default 0).  ET_EXEC/ET_DYN: give ``vaddr`` (objdump's address); the range is
        shown at ``vaddr + bias``.  ``section`` may also be given there, to pick it.
        A range that runs past its section raises :class:`ElfFileError`.
        """
        if size < 0:
            raise ElfFileError(self.path, f"negative size {size}")
        if self.kind == "rel" or vaddr is None:
            if section is None or offset is None:
                raise ElfFileError(self.path, "a relocatable file's code is named by section "
                                   "and offset")
            sec = self.section(section)
            base = load_address if load_address is not None else 0
            start, shown = offset, base + offset
        else:
            sec = self.section(section) if section is not None else self._section_at(vaddr)
            start, shown = vaddr - sec.addr, vaddr + bias
        if start < 0 or start > sec.size or size > sec.size - start:
            raise ElfFileError(
                self.path,
                f"range at offset {start:#x} of {size:#x} bytes runs past the end of section "
                f"{sec.name} ({sec.size:#x} bytes)",
            )
        data = b""
        if sec.executable and not sec.nobits:
            data = bytes(self.section_bytes(sec)[start : start + size])
        return CodeRange(sec, start, size, shown, data)

    def _section_at(self, vaddr: int) -> ImageSection:
        best = None
        for s in self.sections:
            if s.flags & SHF_ALLOC and s.addr <= vaddr < s.addr + s.size:
                if s.executable:
                    return s
                best = best or s
        if best is None:
            raise ElfFileError(self.path, f"no section holds address {vaddr:#x}")
        return best

    def lookup(self, section_bases: Mapping[str, int] | None = None, bias: int = 0) -> SymbolLookup:
        """A :data:`SymbolLookup` over this file's own symbols.

        ET_REL: addresses are section load addresses (``section_bases``: section name ->
        load address; sections not given are not named).  ET_EXEC/ET_DYN: addresses are
        ``vaddr + bias``.
        """
        if self.kind == "rel":
            spans: list[tuple[int, int, int]] = []
            for name, base in (section_bases or {}).items():
                for s in self.sections:
                    if s.name == name and s.flags & SHF_ALLOC:
                        spans.append((base, base + s.size, s.index))
                        break

            def rel_lookup(addr: int) -> tuple[str, int] | None:
                for lo, hi, index in spans:
                    if lo <= addr < hi:
                        return self.section_symbols(index).resolve(addr - lo)
                return None

            return rel_lookup

        spans_v = sorted(
            (s.addr, s.addr + s.size, s.index)
            for s in self.sections
            if s.flags & SHF_ALLOC and s.size and s.type != SHT_NULL
        )
        starts = [lo for lo, _, _ in spans_v]

        def lookup(addr: int) -> tuple[str, int] | None:
            v = addr - bias
            k = bisect.bisect_right(starts, v) - 1
            while k >= 0 and spans_v[k][0] <= v:  # overlapping sections (.tbss): look back
                lo, hi, index = spans_v[k]
                if v < hi:
                    return self.section_symbols(index).resolve(v - lo)
                k -= 1
            return None

        return lookup


_SYM_DTYPE = np.dtype(
    [("name", "u8"), ("info", "u1"), ("other", "u1"), ("shndx", "u8"), ("value", "u8"),
     ("size", "u8")]
)



def open_elf(path: str, max_size: int = 1 << 30) -> ElfCodeImage:
    """Read an ELF file (a regular file only, at most ``max_size`` bytes, decompressed
    when it is an xz/gzip/zstd ``.ko``); raise :class:`ElfFileError` on any problem."""
    try:
        raw = read_capped(path, max_size)
        data, fmt = decompress(path, raw, max_size, ELF_MAGIC)
    except FileError as e:
        raise ElfFileError(path, e.problem) from None
    try:
        return ElfCodeImage(path, bytes(data), fmt)
    except ElfFileError:
        raise
    except MemoryError:
        raise ElfFileError(path, "out of memory reading the ELF file") from None
    except Exception as e:  # a numpy read past the end, bad values in a header
        raise ElfFileError(path, f"bad ELF file: {one_line(e)}") from None
