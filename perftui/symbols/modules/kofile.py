"""Read kernel module files (``.ko``, ``.ko.xz``, ``.ko.gz``, ``.ko.zst``): sections and symbols.

A ``.ko`` is a relocatable ELF object (ET_REL): every section starts at address 0 and a
symbol's ``st_value`` is an offset into its own section (``st_shndx``).  A sample in a
module section therefore resolves by ``offset = ip - section load address``, looked up in
the symbols of that one section (see :class:`SectionSymbolTable`).

Everything read from the file is untrusted: only regular files are opened, the file and the
decompressed image are size-capped, the ELF headers are checked before use, and every
problem becomes one :class:`ModuleFileError` naming the file.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pyelftools is imported when a module file is first read (start-up time)
    from elftools.elf.elffile import ELFFile

from ..errors import FileError, ModuleFileError
from ..files.decompress import ELF_MAGIC, MemStream, decompress, one_line, read_capped
from ..tables.lookup import cstr
from .modnames import module_name
from .sectiontable import SectionSymbolTable, empty_section_table

__all__ = [
    "ModuleFile",
    "ModuleFileError",
    "SectionInfo",
    "iter_module_sections",
    "load_module",
]

_ET_REL = 1
_SHT_SYMTAB = 2
_SHT_NOBITS = 8
_SHT_SYMTAB_SHNDX = 18
_SHF_ALLOC = 0x2
_SHN_LORESERVE = 0xFF00
_SHN_XINDEX = 0xFFFF

_STT_NOTYPE, _STT_OBJECT, _STT_FUNC, _STT_GNU_IFUNC = 0, 1, 2, 10
_STB_LOCAL, _STB_GLOBAL, _STB_WEAK = 0, 1, 2

# Aliases the module loader needs; the real function at the same address is named better.
_LOADER_ALIASES = frozenset({"init_module", "cleanup_module"})


@dataclass(frozen=True, slots=True)
class SectionInfo:
    """One ELF section header of a module file."""

    index: int
    name: str
    size: int  # sh_size
    offset: int  # sh_offset: byte offset of the section in the (decompressed) .ko
    flags: int  # sh_flags
    alloc: bool  # SHF_ALLOC: loaded into memory, so samples can land in it
    nobits: bool = False  # SHT_NOBITS (.bss): occupies no bytes in the file


# --------------------------------------------------------------------------- symbols


def _alias_rank(name: str, typ: int, bind: int, size: int) -> tuple[int, int, int, int, int, int]:
    """Sort key choosing the one name shown for an address (smaller is better).

    1. not the loader alias ``init_module``/``cleanup_module`` (the real ``foo_init`` wins);
    2. function over object over untyped; 3. sized over zero-size;
    4. GLOBAL over LOCAL over WEAK; 5. fewer leading underscores; 6. longer name
    (rules 3-6 are perf's own ``choose_best_symbol``).  Ties go to the smaller name.
    """
    type_rank = 0 if typ in (_STT_FUNC, _STT_GNU_IFUNC) else 1 if typ == _STT_OBJECT else 2
    bind_rank = {_STB_GLOBAL: 0, _STB_LOCAL: 1, _STB_WEAK: 2}.get(bind, 3)
    underscores = len(name) - len(name.lstrip("_"))
    return (
        int(name in _LOADER_ALIASES),
        type_rank,
        int(size == 0),
        bind_rank,
        underscores,
        -len(name),
    )


# --------------------------------------------------------------------------- module file


class ModuleFile:
    """A parsed kernel module: its sections, build id and per-section symbol tables.

    Use :func:`load_module` to make one.  Holds no reference to the file's bytes beyond the
    symbol and string tables.
    """

    def __init__(
        self,
        path: str,
        sections: dict[str, SectionInfo],
        build_id: str | None,
        symtab: np.ndarray | None,
        strtab: bytes,
        compression: str | None = None,
        file_size: int = 0,
        modinfo: dict[str, str] | None = None,
    ) -> None:
        self.path = path
        self.name = module_name(path)
        self.sections = sections
        self.build_id = build_id
        self.compression = compression  # "xz", "gzip", "zstd" or None
        self.file_size = file_size  # size of the ELF image (after decompression)
        self.modinfo: dict[str, str] = modinfo or {}
        self._symtab = symtab  # structured array: value, size, info, shndx, name
        self._strtab = strtab
        self._tables: dict[str, SectionSymbolTable] = {}

    def __repr__(self) -> str:
        return f"ModuleFile({self.path!r}, name={self.name!r}, build_id={self.build_id!r})"

    def symbols(self, section: str) -> SectionSymbolTable:
        """The symbol table of ``section`` (cached); empty for a section the file lacks."""
        table = self._tables.get(section)
        if table is None:
            info = self.sections.get(section)
            table = self._build_table(info) if info is not None else empty_section_table()
            self._tables[section] = table
        return table

    def resolve(self, section: str, offset: int) -> tuple[str, int] | None:
        """``(symbol, offset into it)`` for an offset into ``section``, or None."""
        if section not in self.sections:
            return None
        return self.symbols(section).resolve(offset)

    def _build_table(self, info: SectionInfo) -> SectionSymbolTable:
        sym = self._symtab
        if sym is None or not len(sym):
            return empty_section_table(info.size)
        typ = sym["info"] & 0xF
        keep = (sym["shndx"] == info.index) & (
            (typ == _STT_FUNC)
            | (typ == _STT_GNU_IFUNC)
            | (typ == _STT_OBJECT)
            | ((typ == _STT_NOTYPE) & (sym["size"] > 0))
        )
        # address -> (rank, name, size, [names])
        best: dict[int, tuple[tuple[int, ...], str, int, list[str]]] = {}
        for row in sym[keep]:
            name = cstr(self._strtab, int(row["name"]))
            if not name or name.startswith("$"):  # ARM/RISC-V mapping symbols: $x, $d, ...
                continue
            value, size = int(row["value"]), int(row["size"])
            rank = _alias_rank(name, int(row["info"]) & 0xF, int(row["info"]) >> 4, size)
            cur = best.get(value)
            if cur is None:
                best[value] = (rank, name, size, [name])
                continue
            cur[3].append(name)
            if (rank, name) < (cur[0], cur[1]):
                best[value] = (rank, name, size, cur[3])
        values = sorted(best)
        names = [best[v][1] for v in values]
        aliases = [tuple(sorted(set(best[v][3]) - {best[v][1]})) for v in values]
        return SectionSymbolTable(
            np.array(values, dtype=np.uint64),
            np.array([best[v][2] for v in values], dtype=np.uint64),
            names,
            section_size=info.size,
            aliases=aliases,
        )


def _symtab_dtype(elfclass: int, little: bool) -> np.dtype:
    e = "<" if little else ">"
    if elfclass == 64:
        fields = [
            ("name", e + "u4"),
            ("info", "u1"),
            ("other", "u1"),
            ("shndx", e + "u2"),
            ("value", e + "u8"),
            ("size", e + "u8"),
        ]
    else:
        fields = [
            ("name", e + "u4"),
            ("value", e + "u4"),
            ("size", e + "u4"),
            ("info", "u1"),
            ("other", "u1"),
            ("shndx", e + "u2"),
        ]
    return np.dtype(fields)


def _check_range(path: str, what: str, off: int, size: int, total: int) -> None:
    if off < 0 or size < 0 or off > total or size > total - off:
        raise ModuleFileError(
            path,
            f"{what} (offset {off:#x}, size {size:#x}) extends past the end of the file "
            f"({total:#x} bytes)",
        )


def _parse(
    path: str, image: bytes | bytearray
) -> tuple[dict[str, SectionInfo], str | None, np.ndarray | None, bytes, dict[str, str]]:
    """Sections, build id, raw symbols, string table and .modinfo of an ELF image."""
    total = len(image)
    if total < 52:
        raise ModuleFileError(path, f"too short for an ELF file ({total} bytes)")
    if image[4] not in (1, 2) or image[5] not in (1, 2):
        raise ModuleFileError(path, "bad ELF identification (class or byte order)")
    from elftools.common.utils import struct_parse
    from elftools.elf.elffile import ELFFile

    elf = ELFFile(MemStream(image))  # type: ignore[arg-type]
    hdr = elf.header
    if hdr["e_type"] != "ET_REL":
        raise ModuleFileError(
            path, f"not a kernel module: ELF type {hdr['e_type']}, a .ko is ET_REL"
        )
    shentsize = 64 if elf.elfclass == 64 else 40
    shoff = int(hdr["e_shoff"])
    if shoff == 0:
        raise ModuleFileError(path, "ELF file has no section headers")
    if int(hdr["e_shentsize"]) != shentsize:
        raise ModuleFileError(path, f"bad section header size {hdr['e_shentsize']}")
    _check_range(path, "section header table", shoff, shentsize, total)
    count = int(elf.num_sections())  # handles e_shnum == 0 (count in section 0)
    _check_range(path, f"section header table ({count} entries)", shoff, count * shentsize, total)
    shstrndx = int(elf.get_shstrndx())
    if not 0 < shstrndx < count:
        raise ModuleFileError(path, f"section name table index {shstrndx} out of range")
    stream = elf.stream
    headers = [
        struct_parse(elf.structs.Elf_Shdr, stream, stream_pos=shoff + i * shentsize)
        for i in range(count)
    ]
    shstr = headers[shstrndx]
    _check_range(path, "section name table", int(shstr["sh_offset"]), int(shstr["sh_size"]), total)
    names = bytes(image[shstr["sh_offset"] : shstr["sh_offset"] + shstr["sh_size"]])

    sections: dict[str, SectionInfo] = {}
    notes = []
    for index, h in enumerate(headers):
        name = cstr(names, int(h["sh_name"]))
        nobits = h["sh_type"] == "SHT_NOBITS"
        off, size = int(h["sh_offset"]), int(h["sh_size"])
        if index and not nobits and h["sh_type"] != "SHT_NULL":
            _check_range(path, f"section {index} ({name})", off, size, total)
        if h["sh_type"] == "SHT_NOTE":
            notes.append(h)
        if index == 0 or not name:
            continue
        flags = int(h["sh_flags"])
        info = SectionInfo(index, name, size, off, flags, bool(flags & _SHF_ALLOC), nobits)
        sections.setdefault(name, info)  # duplicate names: the first one counts

    build_id = _build_id(elf, notes)
    symtab, strtab = _symbols(path, elf, image, headers)
    modinfo = _modinfo(image, sections.get(".modinfo"))
    return sections, build_id, symtab, strtab, modinfo



def _build_id(elf: ELFFile, notes: list[Any]) -> str | None:
    """Hex of the first GNU build-id note (NT_GNU_BUILD_ID), None if absent or unreadable."""
    from elftools.elf.notes import iter_notes

    for h in notes:
        try:
            for note in iter_notes(elf, int(h["sh_offset"]), int(h["sh_size"])):
                if note["n_type"] == "NT_GNU_BUILD_ID" and note["n_name"] == "GNU":
                    return str(note["n_desc"]) or None
        except Exception:  # a malformed note section: no build id from it
            continue
    return None


def _symbols(
    path: str, elf: ELFFile, image: bytes | bytearray, headers: list[Any]
) -> tuple[np.ndarray | None, bytes]:
    """All symbols of the first SHT_SYMTAB as a structured array, and its string table."""
    for index, h in enumerate(headers):
        if h["sh_type"] != "SHT_SYMTAB":
            continue
        dtype = _symtab_dtype(elf.elfclass, elf.little_endian)
        if int(h["sh_entsize"]) != dtype.itemsize:
            raise ModuleFileError(path, f"bad symbol table entry size {h['sh_entsize']}")
        link = int(h["sh_link"])
        if not 0 < link < len(headers) or headers[link]["sh_type"] != "SHT_STRTAB":
            raise ModuleFileError(path, f"symbol table links to bad string table {link}")
        n = int(h["sh_size"]) // dtype.itemsize
        raw = np.frombuffer(image, dtype=dtype, count=n, offset=int(h["sh_offset"]))
        sym = np.zeros(
            n,
            dtype=[
                ("name", "u8"),
                ("info", "u1"),
                ("shndx", "u8"),
                ("value", "u8"),
                ("size", "u8"),
            ],
        )
        for field in ("name", "info", "shndx", "value", "size"):
            sym[field] = raw[field]
        # Symbols in reserved indexes (ABS, COMMON, ...) belong to no section.
        shndx = sym["shndx"]
        shndx[(shndx >= _SHN_LORESERVE) & (shndx != _SHN_XINDEX)] = 0
        _apply_xindex(sym, index, headers, image, elf.little_endian)
        so, ss = int(headers[link]["sh_offset"]), int(headers[link]["sh_size"])
        return sym, bytes(image[so : so + ss])
    return None, b""


def _apply_xindex(
    sym: np.ndarray, symtab_index: int, headers: list[Any], image: bytes | bytearray, little: bool
) -> None:
    """Replace SHN_XINDEX section indexes with the values of SHT_SYMTAB_SHNDX."""
    ext = sym["shndx"] == _SHN_XINDEX
    if not ext.any():
        return
    for h in headers:
        if h["sh_type"] == "SHT_SYMTAB_SHNDX" and int(h["sh_link"]) == symtab_index:
            n = min(len(sym), int(h["sh_size"]) // 4)
            table = np.frombuffer(
                image, dtype=("<u4" if little else ">u4"), count=n, offset=int(h["sh_offset"])
            ).astype(np.uint64)
            full = np.zeros(len(sym), dtype=np.uint64)
            full[:n] = table
            sym["shndx"][ext] = full[ext]
            return
    sym["shndx"][ext] = 0


def _modinfo(image: bytes | bytearray, info: SectionInfo | None) -> dict[str, str]:
    """``key=value`` strings of ``.modinfo`` (first value of a repeated key)."""
    if info is None or info.nobits or info.size > 1 << 20:
        return {}
    out: dict[str, str] = {}
    for item in bytes(image[info.offset : info.offset + info.size]).split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep and key:
            out.setdefault(key.decode("ascii", "replace"), value.decode("utf-8", "replace"))
    return out


def load_module(path: str, max_size: int = 256 << 20) -> ModuleFile:
    """Read and parse a kernel module file; raise :class:`ModuleFileError` on any problem.

    Only a regular file (a symlink to one is fine) is read, without blocking, and at most
    ``max_size`` bytes of it.  xz, gzip and zstd files are recognised by their magic bytes
    (whatever the name says) and decompressed in memory, again to at most ``max_size``
    bytes.  The result must be an ELF relocatable object (ET_REL) with sane headers.
    """
    try:
        data = read_capped(path, max_size)
        image, fmt = decompress(path, data, max_size, expect=ELF_MAGIC)
    except FileError as e:
        raise ModuleFileError(e.path, e.problem) from None
    if image is not data:
        del data
    if image[:4] != ELF_MAGIC:
        what = f"{fmt} data does not hold" if fmt else "not"
        raise ModuleFileError(path, f"{what} an ELF file (bad magic)")
    try:
        sections, build_id, symtab, strtab, modinfo = _parse(path, image)
    except ModuleFileError:
        raise
    except MemoryError:
        raise ModuleFileError(path, "out of memory reading the ELF file") from None
    except Exception as e:  # pyelftools/construct errors, bad values in the headers
        raise ModuleFileError(path, f"bad ELF file: {one_line(e)}") from None
    return ModuleFile(path, sections, build_id, symtab, strtab, fmt, len(image), modinfo)


def iter_module_sections(mod: ModuleFile, alloc_only: bool = True) -> Iterator[SectionInfo]:
    """The sections of ``mod`` in file index order (only SHF_ALLOC ones by default)."""
    for info in sorted(mod.sections.values(), key=lambda s: s.index):
        if info.alloc or not alloc_only:
            yield info
