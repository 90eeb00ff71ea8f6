"""Read kernel module files (``.ko``, ``.ko.xz``, ``.ko.gz``, ``.ko.zst``): sections and symbols.

A ``.ko`` is a relocatable ELF object (ET_REL): every section starts at address 0 and a
symbol's ``st_value`` is an offset into its own section (``st_shndx``).  A sample in a
module section therefore resolves by ``offset = ip - section load address``, looked up in
the symbols of that one section (see :class:`SymbolTable`).

Everything read from the file is untrusted: only regular files are opened, the file and the
decompressed image are size-capped, the ELF headers are checked before use, and every
problem becomes one :class:`ModuleFileError` naming the file.
"""

from __future__ import annotations

import io
import lzma
import os
import stat
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pyelftools is imported when a module file is first read (start-up time)
    from elftools.elf.elffile import ELFFile

from perftui.kmod.names import module_name
from perftui.textsafe import safe

__all__ = [
    "NO_SYMBOL",
    "ModuleFile",
    "ModuleFileError",
    "SectionInfo",
    "SymbolTable",
    "load_module",
]

#: Name under which :meth:`SymbolTable.counts` puts offsets that no symbol covers.
NO_SYMBOL = "[no symbol]"

_ELF_MAGIC = b"\x7fELF"
_XZ_MAGIC = b"\xfd7zXZ\x00"
_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

_CHUNK = 1 << 20  # decompression output step
_XZ_MEMLIMIT = 128 << 20  # xz -9 needs about 65 MiB; the kernel uses a 1 MiB dictionary
_ZSTD_MAX_WINDOW_LOG = 27  # libzstd's own default limit (128 MiB)
_ZSTD_MAX_EXPANSION = 1 << 15  # an RLE block: 4 input bytes give up to 128 KiB of output

_ET_REL = 1
_SHT_SYMTAB = 2
_SHT_NOBITS = 8
_SHT_SYMTAB_SHNDX = 18
_SHF_ALLOC = 0x2
_SHN_LORESERVE = 0xFF00
_SHN_XINDEX = 0xFFFF

_STT_NOTYPE, _STT_OBJECT, _STT_FUNC, _STT_GNU_IFUNC = 0, 1, 2, 10
_STB_LOCAL, _STB_GLOBAL, _STB_WEAK = 0, 1, 2
_NT_GNU_BUILD_ID = 3

# Aliases the module loader needs; the real function at the same address is named better.
_LOADER_ALIASES = frozenset({"init_module", "cleanup_module"})


class ModuleFileError(Exception):
    """A module file cannot be used; the message is one line naming the file and the problem."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{safe(path, 300)}: {safe(problem, 300)}")


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


class SymbolTable:
    """The symbols of one section, as sorted arrays.

    Coverage rule: a symbol with ``st_size > 0`` covers ``[st_value, st_value + st_size)``.
    A zero-size symbol covers up to the next symbol's start (the last one up to the end of
    the section).  An offset resolves to the symbol with the greatest start ``<=`` offset
    if that symbol covers it, else to nothing (-1): before the first symbol, in padding
    between functions, or past the end of the section.  One name is kept per address;
    the other names at that address are in :attr:`aliases`.
    """

    def __init__(
        self,
        starts: np.ndarray,
        sizes: np.ndarray,
        names: list[str],
        section_size: int | None = None,
        aliases: list[tuple[str, ...]] | None = None,
    ) -> None:
        starts = np.asarray(starts, dtype=np.uint64)
        sizes = np.asarray(sizes, dtype=np.uint64)
        if starts.shape != sizes.shape or starts.ndim != 1 or len(names) != len(starts):
            raise ValueError("starts, sizes and names must have the same length")
        order = np.argsort(starts, kind="stable")
        if not np.array_equal(order, np.arange(len(starts))):
            starts, sizes = starts[order], sizes[order]
            names = [names[i] for i in order]
            if aliases is not None:
                aliases = [aliases[i] for i in order]
        self.starts: np.ndarray = starts
        self.sizes: np.ndarray = sizes
        self.names: list[str] = list(names)
        self.aliases: list[tuple[str, ...]] = (
            list(aliases) if aliases is not None else [() for _ in names]
        )
        self.section_size = section_size
        # End (exclusive) of what each symbol covers.
        last = np.uint64(section_size) if section_size is not None else np.uint64(2**64 - 1)
        nxt = np.append(starts[1:], last) if len(starts) else starts
        nxt = np.maximum(nxt, starts)  # a zero-size last symbol past the section end
        with np.errstate(over="ignore"):
            sized_end = starts + sizes
        sized_end = np.where(sized_end < starts, np.uint64(2**64 - 1), sized_end)  # wrap
        self.ends: np.ndarray = np.where(sizes > 0, sized_end, nxt)

    def __len__(self) -> int:
        return len(self.names)

    def lookup(self, offsets: np.ndarray) -> np.ndarray:
        """Index into :attr:`names` for each offset (``ip - section start``), -1 for none.

        Negative offsets (signed input) give -1.
        """
        arr = np.asarray(offsets)
        if arr.ndim == 0:
            arr = arr.reshape(1)
        result = np.full(arr.shape, -1, dtype=np.int64)
        if not len(self.starts) or not arr.size:
            return result
        if arr.dtype.kind == "i":
            valid = arr >= 0
            u = np.where(valid, arr, 0).astype(np.uint64)
        elif arr.dtype.kind == "u":
            valid = np.ones(arr.shape, dtype=bool)
            u = arr.astype(np.uint64)
        else:
            raise TypeError(f"offsets must be integers, not {arr.dtype}")
        idx = np.searchsorted(self.starts, u, side="right").astype(np.int64) - 1
        hit = valid & (idx >= 0)
        safe_idx = np.where(hit, idx, 0)
        hit &= u < self.ends[safe_idx]
        result[hit] = idx[hit]
        return result

    def resolve(self, offset: int) -> tuple[str, int] | None:
        """``(symbol name, offset into the symbol)`` for one offset, or None."""
        if offset < 0 or offset >= 2**64:
            return None
        i = int(self.lookup(np.array([offset], dtype=np.uint64))[0])
        if i < 0:
            return None
        return self.names[i], offset - int(self.starts[i])

    def hits(self, offsets: np.ndarray) -> tuple[np.ndarray, int]:
        """Per-symbol sample counts (array parallel to :attr:`names`) and the no-symbol count."""
        idx = self.lookup(offsets)
        binned = np.bincount(idx + 1, minlength=len(self.names) + 1)
        return binned[1:], int(binned[0])

    def counts(self, offsets: np.ndarray) -> list[tuple[str, int]]:
        """``(name, samples)`` for every symbol hit, by count descending, then name.

        Offsets that no symbol covers are counted together under :data:`NO_SYMBOL`
        (``"[no symbol]"``).  Distinct symbols that share a name (two static functions of
        different objects) stay separate entries.
        """
        per_symbol, missed = self.hits(offsets)
        rows: list[tuple[str, int, int]] = [
            (self.names[i], int(per_symbol[i]), int(i)) for i in np.flatnonzero(per_symbol)
        ]
        if missed:
            rows.append((NO_SYMBOL, missed, len(self.names)))
        rows.sort(key=lambda r: (-r[1], r[0], r[2]))
        return [(name, n) for name, n, _ in rows]


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
        self._tables: dict[str, SymbolTable] = {}

    def __repr__(self) -> str:
        return f"ModuleFile({self.path!r}, name={self.name!r}, build_id={self.build_id!r})"

    @property
    def by_index(self) -> dict[int, SectionInfo]:
        """Sections keyed by section index."""
        return {s.index: s for s in self.sections.values()}

    def symbols(self, section: str) -> SymbolTable:
        """The symbol table of ``section`` (cached); empty for a section the file lacks."""
        table = self._tables.get(section)
        if table is None:
            info = self.sections.get(section)
            table = self._build_table(info) if info is not None else _empty_table()
            self._tables[section] = table
        return table

    def resolve(self, section: str, offset: int) -> tuple[str, int] | None:
        """``(symbol, offset into it)`` for an offset into ``section``, or None."""
        if section not in self.sections:
            return None
        return self.symbols(section).resolve(offset)

    def _build_table(self, info: SectionInfo) -> SymbolTable:
        sym = self._symtab
        if sym is None or not len(sym):
            return _empty_table(info.size)
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
            name = _cstr(self._strtab, int(row["name"]))
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
        return SymbolTable(
            np.array(values, dtype=np.uint64),
            np.array([best[v][2] for v in values], dtype=np.uint64),
            names,
            section_size=info.size,
            aliases=aliases,
        )


def _empty_table(section_size: int | None = None) -> SymbolTable:
    return SymbolTable(np.zeros(0, np.uint64), np.zeros(0, np.uint64), [], section_size)


# --------------------------------------------------------------------------- reading


class _MemStream:
    """A read-only seekable stream over a buffer, without copying it (for pyelftools)."""

    def __init__(self, buf: bytes | bytearray) -> None:
        self._view = memoryview(buf)
        self._pos = 0

    def seek(self, pos: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: len(self._view)}[whence]
        self._pos = max(0, base + pos)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def read(self, n: int = -1) -> bytes:
        end = len(self._view) if n is None or n < 0 else min(len(self._view), self._pos + n)
        data = bytes(self._view[self._pos : end]) if end > self._pos else b""
        self._pos = max(self._pos, end)
        return data


def _read_capped(path: str, max_size: int) -> bytes:
    """The bytes of a regular file, at most ``max_size`` of them."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise ModuleFileError(path, f"cannot stat: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ModuleFileError(path, f"not a regular file ({_kind(st.st_mode)})")
    if st.st_size > max_size:
        raise ModuleFileError(path, f"file is {st.st_size} bytes, over the {_mib(max_size)} cap")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    flags |= getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise ModuleFileError(path, f"cannot open: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)  # the file opened may not be the one stat()ed
        if not stat.S_ISREG(st.st_mode):
            raise ModuleFileError(path, f"not a regular file ({_kind(st.st_mode)})")
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(_CHUNK, max_size + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_size:
                raise ModuleFileError(path, f"file is over the {_mib(max_size)} cap")
    except OSError as e:
        raise ModuleFileError(path, f"cannot read: {e.strerror or e}") from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def _kind(mode: int) -> str:
    for test, word in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return word
    return "not a file"


def _mib(n: int) -> str:
    return f"{n / (1 << 20):g} MiB" if n >= 1 << 20 else f"{n} bytes"


class _Sink:
    """Collects decompressed output, failing once it passes the cap or is not ELF."""

    def __init__(self, path: str, fmt: str, limit: int) -> None:
        self.path, self.fmt, self.limit = path, fmt, limit
        self.buf = bytearray()

    @property
    def room(self) -> int:
        """How much more output to ask for: up to one byte past the cap, in steps."""
        return min(_CHUNK, self.limit + 1 - len(self.buf))

    def add(self, chunk: bytes) -> None:
        had = len(self.buf)
        self.buf += chunk
        if len(self.buf) > self.limit:
            raise ModuleFileError(
                self.path, f"{self.fmt} data decompresses to over the {_mib(self.limit)} cap"
            )
        if had < 4 <= len(self.buf) and self.buf[:4] != _ELF_MAGIC:
            raise ModuleFileError(self.path, f"{self.fmt} data does not hold an ELF file")


def _unxz(path: str, data: bytes, sink: _Sink) -> None:
    while True:
        d = lzma.LZMADecompressor(format=lzma.FORMAT_XZ, memlimit=_XZ_MEMLIMIT)
        pending = data
        while not d.eof:
            if d.needs_input and not pending:
                raise ModuleFileError(path, "xz data is truncated")
            sink.add(d.decompress(pending, max_length=sink.room))
            pending = b""
        rest = d.unused_data.lstrip(b"\0")  # stream padding between concatenated streams
        if not rest:
            return
        if not rest.startswith(_XZ_MAGIC):
            raise ModuleFileError(path, "garbage after the xz data")
        data = rest


def _ungzip(path: str, data: bytes, sink: _Sink) -> None:
    while True:
        d = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        pending = data
        while not d.eof:
            chunk = d.decompress(pending, sink.room)
            pending = d.unconsumed_tail
            if not chunk and not pending:
                raise ModuleFileError(path, "gzip data is truncated")
            sink.add(chunk)
        rest = d.unused_data.lstrip(b"\0")
        if not rest:
            return
        if not rest.startswith(_GZIP_MAGIC):
            raise ModuleFileError(path, "garbage after the gzip data")
        data = rest


def _unzstd(path: str, data: bytes, sink: _Sink) -> None:
    import zstandard  # optional at import time of the package

    wlog = max(10, min(_ZSTD_MAX_WINDOW_LOG, sink.limit.bit_length()))
    dctx = zstandard.ZstdDecompressor(max_window_size=1 << wlog)
    pos = 0
    while pos < len(data):
        if data[pos : pos + 4] != _ZSTD_MAGIC:
            if not data[pos:].strip(b"\0"):
                return
            raise ModuleFileError(path, "garbage after the zstd data")
        d = dctx.decompressobj()
        # Feed small slices so that one call cannot produce unbounded output.
        while not d.eof:
            if pos >= len(data):
                raise ModuleFileError(path, "zstd data is truncated")
            step = max(16, min(_CHUNK, sink.room) // _ZSTD_MAX_EXPANSION)
            piece = data[pos : pos + step]
            pos += len(piece)
            sink.add(d.decompress(piece))
        pos -= len(d.unused_data)


_DECOMPRESSORS: tuple[tuple[bytes, str, Callable[[str, bytes, _Sink], None]], ...] = (
    (_XZ_MAGIC, "xz", _unxz),
    (_GZIP_MAGIC, "gzip", _ungzip),
    (_ZSTD_MAGIC, "zstd", _unzstd),
)


def _decompress(path: str, data: bytes, max_size: int) -> tuple[bytes | bytearray, str | None]:
    """The ELF image in ``data``, decompressed by content magic; and the format name."""
    for magic, fmt, func in _DECOMPRESSORS:
        if data.startswith(magic):
            sink = _Sink(path, fmt, max_size)
            try:
                func(path, data, sink)
            except ModuleFileError:
                raise
            except MemoryError:
                raise ModuleFileError(path, f"out of memory decompressing {fmt} data") from None
            except Exception as e:  # lzma.LZMAError, zlib.error, zstandard.ZstdError, ...
                raise ModuleFileError(path, f"bad {fmt} data: {_one_line(e)}") from None
            return sink.buf, fmt
    return data, None


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text[:200]


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

    elf = ELFFile(_MemStream(image))  # type: ignore[arg-type]
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
        name = _cstr(names, int(h["sh_name"]))
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

    build_id = _build_id(image, notes, elf.little_endian)
    symtab, strtab = _symbols(path, elf, image, headers)
    modinfo = _modinfo(image, sections.get(".modinfo"))
    return sections, build_id, symtab, strtab, modinfo


def _cstr(table: bytes, off: int) -> str:
    """The NUL-terminated string at ``off`` of a string table ("" when out of range)."""
    if off >= len(table):
        return ""
    end = table.find(b"\0", off)
    raw = table[off:] if end < 0 else table[off:end]
    return raw.decode("utf-8", "backslashreplace")


def _build_id(image: bytes | bytearray, notes: list, little: bool) -> str | None:
    """Hex of the first GNU build-id note (NT_GNU_BUILD_ID), None if absent or unreadable."""
    order = "<" if little else ">"
    for h in notes:
        align = 8 if int(h["sh_addralign"]) == 8 else 4
        data = bytes(image[h["sh_offset"] : h["sh_offset"] + h["sh_size"]])
        pos = 0
        while pos + 12 <= len(data):
            namesz, descsz, ntype = struct.unpack_from(order + "III", data, pos)
            name_at = pos + 12
            desc_at = name_at + -(-namesz // align) * align
            nxt = desc_at + -(-descsz // align) * align
            if desc_at + descsz > len(data):
                break
            if ntype == _NT_GNU_BUILD_ID and data[name_at : name_at + namesz] == b"GNU\0":
                return data[desc_at : desc_at + descsz].hex() or None
            pos = nxt
    return None


def _symbols(
    path: str, elf: ELFFile, image: bytes | bytearray, headers: list
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
    sym: np.ndarray, symtab_index: int, headers: list, image: bytes | bytearray, little: bool
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
    data = _read_capped(path, max_size)
    image, fmt = _decompress(path, data, max_size)
    if image is not data:
        del data
    if image[:4] != _ELF_MAGIC:
        what = f"{fmt} data does not hold" if fmt else "not"
        raise ModuleFileError(path, f"{what} an ELF file (bad magic)")
    try:
        sections, build_id, symtab, strtab, modinfo = _parse(path, image)
    except ModuleFileError:
        raise
    except MemoryError:
        raise ModuleFileError(path, "out of memory reading the ELF file") from None
    except Exception as e:  # pyelftools/construct errors, bad values in the headers
        raise ModuleFileError(path, f"bad ELF file: {_one_line(e)}") from None
    return ModuleFile(path, sections, build_id, symtab, strtab, fmt, len(image), modinfo)


def iter_module_sections(mod: ModuleFile, alloc_only: bool = True) -> Iterator[SectionInfo]:
    """The sections of ``mod`` in file index order (only SHF_ALLOC ones by default)."""
    for info in sorted(mod.sections.values(), key=lambda s: s.index):
        if info.alloc or not alloc_only:
            yield info
