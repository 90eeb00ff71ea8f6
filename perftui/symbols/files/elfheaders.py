"""The headers of one ELF file: sections, PT_LOAD segments, build id (read-only, lazy).

An :class:`ElfHeaders` holds an open file descriptor and the parsed ELF header, section
headers and program headers; section contents are read on demand, size-capped.  The ELF
header goes through pyelftools (imported on first use); the section and program header
tables are decoded with numpy.  The headers of a file are read once per file identity
(device, inode, size, mtime, ctime): finding a DSO's files and loading its symbols open it
several times.  Any problem is a
:class:`~perftui.symbols.files.safefile.SymbolFileError`: one line naming the file, never a
library's traceback.

Public API: :func:`open_elf_headers` ``(path, max_size=...) -> ElfHeaders`` (a context manager);
``ElfHeaders.section(name) -> SectionHeader | None`` (the first section of that name, as perf's
``elf_section_by_name``), ``ElfHeaders.read(section, what, cap) -> bytes``,
``ElfHeaders.build_id`` (hex or None), ``ElfHeaders.loads`` (the PT_LOAD segments),
``ElfHeaders.elf_type`` (``"ET_EXEC"``, ``"ET_DYN"``, ...), ``ElfHeaders.machine`` (e_machine).
"""

from __future__ import annotations

import functools
import os
import struct
from dataclasses import dataclass
from types import SimpleNamespace, TracebackType
from typing import Any

import numpy as np

from perftui.lru import LRU
from perftui.symbols.files.decompress import mib
from perftui.symbols.files.safefile import SymbolFileError, open_regular, read_at

__all__ = ["DEFAULT_MAX_FILE", "ElfHeaders", "SectionHeader", "Segment", "open_elf_headers"]

#: Largest ELF file opened (a vmlinux with debug information is a few hundred MiB).
DEFAULT_MAX_FILE = 4 << 30
#: Most section headers accepted (the ELF format allows 2**32 with extended numbering).
MAX_SECTIONS = 1 << 16
#: Most program headers accepted.
MAX_SEGMENTS = 1 << 12
#: Largest single section read (symbol and string tables, notes, relocations).
MAX_SECTION_READ = 512 << 20

SHT_NULL, SHT_SYMTAB, SHT_STRTAB, SHT_RELA = 0, 2, 3, 4
SHT_NOBITS, SHT_REL, SHT_DYNSYM = 8, 9, 11
SHF_ALLOC = 0x2
PT_LOAD = 1
_ET_NAMES = {0: "ET_NONE", 1: "ET_REL", 2: "ET_EXEC", 3: "ET_DYN", 4: "ET_CORE"}


@dataclass(frozen=True, slots=True)
class SectionHeader:
    """One section header."""

    index: int
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    info: int
    entsize: int


@dataclass(frozen=True, slots=True)
class Segment:
    """One PT_LOAD program header."""

    offset: int
    vaddr: int
    filesz: int
    memsz: int
    flags: int


def _shdr_dtype(elfclass: int, e: str) -> np.dtype:
    w = "u8" if elfclass == 64 else "u4"
    return np.dtype([
        ("name", e + "u4"), ("type", e + "u4"), ("flags", e + w), ("addr", e + w),
        ("offset", e + w), ("size", e + w), ("link", e + "u4"), ("info", e + "u4"),
        ("addralign", e + w), ("entsize", e + w),
    ])


def _phdr_dtype(elfclass: int, e: str) -> np.dtype:
    if elfclass == 64:
        return np.dtype([
            ("type", e + "u4"), ("flags", e + "u4"), ("offset", e + "u8"), ("vaddr", e + "u8"),
            ("paddr", e + "u8"), ("filesz", e + "u8"), ("memsz", e + "u8"), ("align", e + "u8"),
        ])
    return np.dtype([
        ("type", e + "u4"), ("offset", e + "u4"), ("vaddr", e + "u4"), ("paddr", e + "u4"),
        ("filesz", e + "u4"), ("memsz", e + "u4"), ("flags", e + "u4"), ("align", e + "u4"),
    ])


def cstr(table: bytes, off: int) -> str:
    """The NUL-terminated string at ``off`` of a string table ("" when out of range)."""
    if off < 0 or off >= len(table):
        return ""
    end = table.find(b"\0", off)
    raw = table[off:] if end < 0 else table[off:end]
    return raw.decode("utf-8", "surrogateescape")


class ElfHeaders:
    """Parsed headers of one ELF file; use :func:`open_elf_headers`."""

    def __init__(self, path: str, fd: int, size: int) -> None:
        self.path = path
        self._fd = fd
        self.file_size = size
        self.sections: list[SectionHeader] = []
        self.loads: list[Segment] = []
        self.elf_type = "ET_NONE"
        self.machine = 0
        self.elfclass = 64
        self.little = True
        self._build_id: str | bool | None = False  # False: not read yet

    # -- context manager
    def __enter__(self) -> ElfHeaders:
        return self

    def __exit__(self, t: type[BaseException] | None, v: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    @property
    def endian(self) -> str:
        return "<" if self.little else ">"

    def section(self, name: str) -> SectionHeader | None:
        """The first section called ``name`` (perf's ``elf_section_by_name``), or None."""
        for s in self.sections:
            if s.name == name:
                return s
        return None

    def read(self, sec: SectionHeader, what: str, cap: int = MAX_SECTION_READ) -> bytes:
        """The bytes of a section (empty for SHT_NOBITS); over ``cap`` is an error."""
        if sec.type == SHT_NOBITS or sec.size == 0:
            return b""
        if sec.size > cap:
            raise SymbolFileError(self.path, f"{what} is {sec.size} bytes, over the {mib(cap)} cap")
        return read_at(self._fd, self.path, sec.offset, sec.size, what)

    @property
    def build_id(self) -> str | None:
        """Hex of the GNU build-id note, looked for as perf does (None when absent).

        perf reads the first of ``.note.gnu.build-id``, ``.notes``, ``.note`` that exists
        and takes the first note of type NT_GNU_BUILD_ID named "GNU".
        """
        if self._build_id is False:
            self._build_id = self._read_build_id()
        return self._build_id  # type: ignore[return-value]

    def _read_build_id(self) -> str | None:
        for name in (".note.gnu.build-id", ".notes", ".note"):
            sec = self.section(name)
            if sec is not None:
                break
        else:
            return None
        try:
            data = self.read(sec, f"note section {name}", 1 << 20)
        except SymbolFileError:
            return None
        return note_build_id(data, self.endian)

    # -- parsing
    def _parse(self) -> None:
        head = read_at(self._fd, self.path, 0, min(self.file_size, 64), "ELF header")
        if head[:4] != b"\x7fELF":
            raise SymbolFileError(self.path, "not an ELF file (bad magic)")
        if len(head) < 52 or head[4] not in (1, 2) or head[5] not in (1, 2):
            raise SymbolFileError(self.path, "bad ELF identification (class or byte order)")
        self.elfclass = 64 if head[4] == 2 else 32
        self.little = head[5] == 1
        hdr = _ehdr_struct(self.little, self.elfclass).parse(head)
        self.elf_type = _ET_NAMES.get(_raw_e_type(head, self.little), str(hdr["e_type"]))
        self.machine = _raw_e_machine(head, self.little)
        e = self.endian
        shdt = _shdr_dtype(self.elfclass, e)
        phdt = _phdr_dtype(self.elfclass, e)
        shoff, shnum = int(hdr["e_shoff"]), int(hdr["e_shnum"])
        shstrndx, phoff, phnum = int(hdr["e_shstrndx"]), int(hdr["e_phoff"]), int(hdr["e_phnum"])
        if shoff:
            if int(hdr["e_shentsize"]) != shdt.itemsize:
                raise SymbolFileError(self.path, f"bad section header size {hdr['e_shentsize']}")
            first = np.frombuffer(read_at(self._fd, self.path, shoff, shdt.itemsize,
                                          "section header 0"), dtype=shdt)[0]
            if shnum == 0:  # extended numbering: the count is in section 0
                shnum = int(first["size"])
            if shstrndx == 0xFFFF:
                shstrndx = int(first["link"])
            if shnum > MAX_SECTIONS:
                raise SymbolFileError(self.path, f"{shnum} sections, over the limit of "
                                      f"{MAX_SECTIONS}")
            if shnum * shdt.itemsize > self.file_size:
                raise SymbolFileError(self.path, f"section header table ({shnum} entries) is "
                                      "larger than the file")
            table = np.frombuffer(read_at(self._fd, self.path, shoff, shnum * shdt.itemsize,
                                          "section header table"), dtype=shdt)
            names = b""
            if 0 < shstrndx < shnum:
                s = table[shstrndx]
                if int(s["type"]) != SHT_NOBITS and int(s["size"]) <= 16 << 20:
                    try:
                        names = read_at(self._fd, self.path, int(s["offset"]), int(s["size"]),
                                        "section name table")
                    except SymbolFileError:
                        names = b""
            self.sections = [
                SectionHeader(i, cstr(names, name), typ, flags, addr, offset, size, link, info,
                        entsize)
                for i, (name, typ, flags, addr, offset, size, link, info, _align, entsize)
                in enumerate(table.tolist())
            ]
        if phoff and phnum:
            if phnum == 0xFFFF and self.sections:  # PN_XNUM: the count is in section 0
                phnum = self.sections[0].info
            if int(hdr["e_phentsize"]) != phdt.itemsize:
                raise SymbolFileError(self.path, f"bad program header size {hdr['e_phentsize']}")
            if phnum > MAX_SEGMENTS:
                raise SymbolFileError(self.path, f"{phnum} program headers, over the limit of "
                                      f"{MAX_SEGMENTS}")
            ph = np.frombuffer(read_at(self._fd, self.path, phoff, phnum * phdt.itemsize,
                                       "program header table"), dtype=phdt)
            self.loads = [
                Segment(int(r["offset"]), int(r["vaddr"]), int(r["filesz"]), int(r["memsz"]),
                        int(r["flags"]))
                for r in ph[ph["type"] == PT_LOAD]
            ]


@functools.cache
def _ehdr_struct(little: bool, elfclass: int) -> Any:
    """pyelftools' ELF header struct for a byte order and class (built once: building
    them all costs more than parsing a header)."""
    from elftools.elf.structs import ELFStructs

    structs = ELFStructs(little_endian=little, elfclass=elfclass)
    structs.create_basic_structs()
    return structs.Elf_Ehdr


def _raw_e_type(head: bytes, little: bool) -> int:
    return int(struct.unpack_from("<H" if little else ">H", head, 16)[0])


def _raw_e_machine(head: bytes, little: bool) -> int:
    return int(struct.unpack_from("<H" if little else ">H", head, 18)[0])


def note_build_id(data: bytes, endian: str = "<") -> str | None:
    """The first GNU build-id in a run of ELF notes, as hex (None when there is none, or
    the notes are malformed).

    The notes are read by pyelftools' note iteration; as perf's ``read_build_id``, only a
    note of type NT_GNU_BUILD_ID whose name is exactly "GNU" (``n_namesz`` 4) counts, and a
    build id cut short by the end of the data is none.
    """
    from io import BytesIO

    from elftools.elf.notes import iter_notes

    view = SimpleNamespace(structs=_note_structs(endian == "<"), stream=BytesIO(data),
                           elfclass=64)
    try:
        for note in iter_notes(view, 0, len(data)):  # type: ignore[arg-type]
            if (note["n_type"] == "NT_GNU_BUILD_ID" and note["n_namesz"] == 4
                    and note["n_name"] == "GNU"):
                desc = bytes(note["n_descdata"])
                return desc.hex() if desc and len(desc) == note["n_descsz"] else None
    except Exception:  # construct's errors on a malformed note: no build id from it
        return None
    return None


@functools.cache
def _note_structs(little: bool) -> Any:
    """pyelftools' structs for reading notes of one byte order (a note header is three
    32-bit words in both ELF classes); built once."""
    from elftools.elf.structs import ELFStructs

    structs = ELFStructs(little_endian=little, elfclass=64)
    structs.create_basic_structs()
    structs.create_advanced_structs()
    return structs


#: parsed headers by file identity (st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns):
#: finding a DSO's files and loading its symbols open the same file two or three times
_HEADERS: LRU[tuple[int, ...], tuple[Any, ...]] = LRU(1024)


def _identity(fd: int) -> tuple[int, ...] | None:
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def open_elf_headers(path: str, max_size: int = DEFAULT_MAX_FILE) -> ElfHeaders:
    """Open and parse the headers of the ELF file at ``path`` (close it, or use ``with``).
    The headers of a file opened before, unchanged since, are not read again."""
    fd, size = open_regular(path, max_size)
    img = ElfHeaders(path, fd, size)
    key = _identity(fd)
    known = _HEADERS.get(key) if key is not None else None
    if known is not None:
        (img.elfclass, img.little, img.elf_type, img.machine, sections, loads) = known
        img.sections, img.loads = list(sections), list(loads)
        return img
    try:
        img._parse()
    except SymbolFileError:
        img.close()
        raise
    except MemoryError:
        img.close()
        raise SymbolFileError(path, "out of memory reading the ELF headers") from None
    except Exception as e:  # pyelftools/construct errors, numpy on short buffers
        img.close()
        text = " ".join(str(e).split())[:200] or type(e).__name__
        raise SymbolFileError(path, f"bad ELF file: {text}") from None
    if key is not None:
        _HEADERS.put(key, (img.elfclass, img.little, img.elf_type, img.machine,
                           tuple(img.sections), tuple(img.loads)))
    return img
