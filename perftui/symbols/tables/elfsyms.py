"""Function symbols of an ELF file, named and placed exactly as perf 6.1 does.

User space (executables ET_EXEC, PIE and shared libraries ET_DYN, prelinked files): perf
6.1 (``dso__load_sym`` in ``tools/perf/util/symbol-elf.c``) reads ``.symtab`` *and then*
``.dynsym`` of the same file; keeps STT_FUNC/STT_GNU_IFUNC and STT_OBJECT symbols that
have a name and a section, and untyped "labels" in a section whose name contains ``text``
or ``data`` (not hidden); drops symbols of SHN_ABS and of sections that are not SHF_ALLOC;
demangles the names; and moves every symbol into **file-offset space**:
``value - (p_vaddr - p_offset)`` of the PT_LOAD segment containing it (the section's
``sh_addr - sh_offset`` when none does).  After each table, zero-size symbols get the next
symbol's start as end and one symbol is kept per address (``symbols__fixup_end``,
``symbols__fixup_duplicate``).  Then ``name@plt`` symbols are made for the ``.rela.plt``
(or ``.rel.plt``) entries: entry ``i`` at ``.plt``'s file offset + ``(i + 1) * sh_entsize``
(perf 6.1 knows nothing of ``.plt.sec``: with IBT PLTs the names land on the ``.plt``
stubs, as perf shows them).

So a user-space ip is looked up as ``ip - map.start + map.pgoff`` (perf's ``map__map_ip``);
:meth:`ElfSymbols.offset_to_vaddr` and :meth:`ElfSymbols.vaddr_to_offset` convert between
that space and the ELF virtual addresses (objdump's) through the PT_LOAD segments.

Kernel images (``kernel=True``, a vmlinux): only ``.symtab`` (a stripped vmlinux gives
nothing, as in perf), no demangling, addresses kept as ELF virtual addresses; symbols of
``.text`` get perf's end fix-up and duplicate choice, those of other sections (perf puts
them in separate ``[kernel.kallsyms].<section>`` maps) keep their sizes.
:attr:`ElfSymbols.ref_reloc` is the value of ``_text`` (perf's relocation reference).

Public API: :func:`load_elf_symbols` ``(path, runtime_path=None, *, kernel=False,
expect_build_id=None, max_size=...) -> ElfSymbols``; :class:`ElfSymbols` (``table``,
``build_id``, ``elf_type``, ``loads``, ``sources``, ``offset_to_vaddr``,
``vaddr_to_offset``); errors are :class:`~perftui.symbols.files.safefile.SymbolFileError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from perftui.symbols.files.elfheaders import (
    DEFAULT_MAX_FILE,
    SHF_ALLOC,
    SHT_DYNSYM,
    SHT_NOBITS,
    SHT_REL,
    SHT_RELA,
    SHT_SYMTAB,
    ElfHeaders,
    SectionHeader,
    Segment,
    cstr,
    open_elf_headers,
)
from perftui.symbols.files.safefile import SymbolFileError
from perftui.symbols.modules.modlocate import same_build_id
from perftui.symbols.tables.demangle import MANGLED_PREFIXES, demangle
from perftui.symbols.tables.dsotable import (
    KIND_FUNC,
    KIND_LABEL,
    KIND_OBJECT,
    KIND_PLT,
    STB_GLOBAL,
    DsoSymbolTable,
)
from perftui.symbols.tables.symbuilder import PerfSymbolBuilder
from perftui.symbols.tables.symnames import LazyNames, StrtabNames

__all__ = ["ElfSymbols", "load_elf_symbols"]

_STT_NOTYPE, _STT_OBJECT, _STT_FUNC, _STT_GNU_IFUNC = 0, 1, 2, 10
_SHN_UNDEF, _SHN_ABS = 0, 0xFFF1
_STV_INTERNAL, _STV_HIDDEN = 1, 2
_EM_SPARC, _EM_ARM, _EM_SPARCV9, _EM_AARCH64 = 2, 40, 43, 183
_U64 = np.uint64
_MASK64 = (1 << 64) - 1


@dataclass
class ElfSymbols:
    """The symbols of one ELF file as perf 6.1 has them; see the module docstring."""

    path: str
    table: DsoSymbolTable
    build_id: str | None
    elf_type: str
    loads: list[Segment]
    #: where the symbols came from: some of "symtab", "dynsym", "plt"
    sources: list[str] = field(default_factory=list)
    runtime_path: str | None = None
    #: vmlinux only: the value of ``_text`` (perf's relocation reference symbol)
    ref_reloc: int | None = None

    def offset_to_vaddr(self, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """ELF virtual addresses of file offsets, and a mask of those inside a PT_LOAD."""
        off = np.asarray(offsets, dtype=_U64)
        out = np.zeros(off.shape, dtype=_U64)
        ok = np.zeros(off.shape, dtype=bool)
        for seg in self.loads:
            size = seg.filesz
            if not size:
                continue
            inside = ~ok & (off >= _U64(seg.offset)) & (off - _U64(seg.offset) < _U64(size))
            with np.errstate(over="ignore"):
                out[inside] = off[inside] - _U64(seg.offset) + _U64(seg.vaddr)
            ok |= inside
        return out, ok

    def vaddr_to_offset(self, vaddrs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """File offsets of ELF virtual addresses (perf's adjustment), and a found mask."""
        va = np.asarray(vaddrs, dtype=_U64)
        out = np.zeros(va.shape, dtype=_U64)
        ok = np.zeros(va.shape, dtype=bool)
        for seg in self.loads:
            size = max(seg.memsz, seg.filesz)
            if not size:
                continue
            inside = ~ok & (va >= _U64(seg.vaddr)) & (va - _U64(seg.vaddr) < _U64(size))
            with np.errstate(over="ignore"):
                out[inside] = va[inside] - _U64(seg.vaddr) + _U64(seg.offset)
            ok |= inside
        return out, ok


def _sym_dtype(elfclass: int, e: str) -> np.dtype:
    if elfclass == 64:
        return np.dtype([("name", e + "u4"), ("info", "u1"), ("other", "u1"),
                         ("shndx", e + "u2"), ("value", e + "u8"), ("size", e + "u8")])
    return np.dtype([("name", e + "u4"), ("value", e + "u4"), ("size", e + "u4"),
                     ("info", "u1"), ("other", "u1"), ("shndx", e + "u2")])


def _symbols_of(img: ElfHeaders, sec: SectionHeader, what: str) -> tuple[np.ndarray, bytes]:
    """The raw symbol array of a symbol table section and its string table."""
    dt = _sym_dtype(img.elfclass, img.endian)
    if sec.entsize != dt.itemsize:
        raise SymbolFileError(img.path, f"{what}: bad symbol entry size {sec.entsize}")
    if not 0 <= sec.link < len(img.sections):
        raise SymbolFileError(img.path, f"{what} links to string table {sec.link}, "
                              "which does not exist")
    raw = img.read(sec, what)
    n = len(raw) // dt.itemsize
    syms = np.frombuffer(raw, dtype=dt, count=n)
    strtab = img.read(img.sections[sec.link], f"string table of {what}")
    return syms, strtab


def _arm_mapping_symbol(name: str) -> bool:
    return len(name) >= 2 and name[0] == "$" and name[1] in "adtx" and (
        len(name) == 2 or name[2] == ".")


def _adjust(runtime: ElfHeaders, values: np.ndarray, sec_delta: np.ndarray) -> np.ndarray:
    """perf's user-space adjustment: into file-offset space through the PT_LOAD segments."""
    out = values.copy()
    done = np.zeros(len(values), dtype=bool)
    with np.errstate(over="ignore"):
        for seg in runtime.loads:
            size = max(seg.memsz, seg.filesz)
            if not size:
                continue
            inside = ~done & (values >= _U64(seg.vaddr)) & (
                values - _U64(seg.vaddr) < _U64(size))
            out[inside] = values[inside] - _U64((seg.vaddr - seg.offset) & _MASK64)
            done |= inside
        out[~done] = values[~done] - sec_delta[~done]
    return out


class _Builder(PerfSymbolBuilder):
    def __init__(self) -> None:
        super().__init__()
        # kernel symbols outside .text: (values, sizes, kinds, names), kept as they are
        self.other: list[tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]] = []


class _BrokenTable(Exception):
    """A symbol table perf stops reading part-way (a symbol in a section that does not
    exist); ``added`` symbols of it were taken before the bad one."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.added = 0


def _load_table(builder: _Builder, syms_img: ElfHeaders, runtime: ElfHeaders,
                sec: SectionHeader, what: str, kernel: bool) -> tuple[int, int | None]:
    """Add one symbol table's symbols (perf's ``dso__load_sym_internal``); return the count
    added and, for a kernel, the value of ``_text``."""
    syms, strtab = _symbols_of(syms_img, sec, what)
    if not len(syms):
        return 0, None
    typ = syms["info"] & 0xF
    bind = syms["info"] >> 4
    vis = syms["other"] & 0x3
    shndx = syms["shndx"].astype(np.int64)
    named = syms["name"] != 0
    is_func = ((typ == _STT_FUNC) | (typ == _STT_GNU_IFUNC)) & named & (shndx != _SHN_UNDEF)
    is_obj = (typ == _STT_OBJECT) & named & (shndx != _SHN_UNDEF)
    is_label = ((typ == _STT_NOTYPE) & named & (shndx != _SHN_UNDEF) & (shndx != _SHN_ABS)
                & (vis != _STV_HIDDEN) & (vis != _STV_INTERNAL))
    keep = (is_func | is_obj | is_label) & (shndx != _SHN_ABS)
    ref_reloc = None
    if kernel:
        for i in np.flatnonzero(named):
            if cstr(strtab, int(syms["name"][i])) == "_text":
                ref_reloc = int(syms["value"][i])
                break
    idx = np.flatnonzero(keep)
    if not len(idx):
        return 0, ref_reloc
    nsec = len(syms_img.sections)
    bad = shndx[idx] >= nsec
    broken: _BrokenTable | None = None
    if bad.any():
        # perf inserts symbols one by one and stops at this one ("goto out_elf_end"): the
        # symbols before it stay in the dso, without the end and duplicate fix-ups
        j = int(idx[np.argmax(bad)])
        broken = _BrokenTable(f"{what}: symbol {j} is in section {int(shndx[j])}, which "
                              "does not exist; symbols after it are not used (as in perf)")
        idx = idx[idx < j]
    # The section of each symbol; SHT_NOBITS ones are taken from the runtime file.
    sec_flags = np.array([s.flags for s in syms_img.sections], dtype=np.uint64)
    sec_type = np.array([s.type for s in syms_img.sections], dtype=np.uint32)
    alloc = (sec_flags[shndx[idx]] & _U64(SHF_ALLOC)) != 0
    idx = idx[alloc]
    use_runtime = sec_type[shndx[idx]] == SHT_NOBITS

    if use_runtime.any() and int(shndx[idx][use_runtime].max()) >= len(runtime.sections):
        bad_i = int(shndx[idx][use_runtime].max())
        raise SymbolFileError(runtime.path, f"{what}: no section {bad_i} in the runtime file")

    def per_section(img: ElfHeaders) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(addr - offset, name has text or data, name is .text) of every section."""
        secs = img.sections
        delta = np.array([(x.addr - x.offset) & _MASK64 for x in secs], dtype=_U64)
        textish = np.array(["text" in x.name or "data" in x.name for x in secs], dtype=bool)
        is_text = np.array([x.name == ".text" for x in secs], dtype=bool)
        return delta, textish, is_text

    here = per_section(syms_img)
    there = per_section(runtime) if use_runtime.any() else here
    sh = shndx[idx]
    rt_sh = np.where(use_runtime, sh, 0)
    delta = np.where(use_runtime, there[0][rt_sh], here[0][sh])
    textish = np.where(use_runtime, there[1][rt_sh], here[1][sh])
    in_text_a = np.where(use_runtime, there[2][rt_sh], here[2][sh])
    ok = ~is_label[idx] | textish
    if syms_img.machine in (_EM_ARM, _EM_AARCH64):
        ok &= np.array([not _arm_mapping_symbol(cstr(strtab, int(syms["name"][r])))
                        for r in idx.tolist()], dtype=bool)
    keep_rows = idx[ok]
    deltas = delta[ok]
    in_text = in_text_a[ok].tolist()
    if not len(keep_rows):
        if broken is not None:
            raise broken
        return 0, ref_reloc
    names: Sequence[str] = StrtabNames(strtab, syms["name"][keep_rows].astype(np.int64))
    rows = np.asarray(keep_rows, dtype=np.int64)
    values = syms["value"][rows].astype(_U64)
    if syms_img.machine == _EM_ARM:  # thumb functions have bit 0 set
        thumb = (typ[rows] == _STT_FUNC) & ((values & _U64(1)) != 0)
        values = np.where(thumb, values - _U64(1), values)
    if not kernel:
        values = _adjust(runtime, values, np.asarray(deltas, dtype=_U64))
        builder.demangle = demangle  # lazily, per name shown (see LazyNames)
        builder.mangled_prefixes = MANGLED_PREFIXES
    kinds = np.where(is_func[rows], KIND_FUNC,
                     np.where(is_obj[rows], KIND_OBJECT, KIND_LABEL)).astype(np.uint8)
    sizes = syms["size"][rows].astype(_U64)
    if kernel:
        text = np.array(in_text, dtype=bool)
        builder.add(values[text], sizes[text], bind[rows][text], kinds[text],
                    [n for n, t in zip(names, in_text, strict=True) if t])
        builder.other.append((values[~text], sizes[~text], kinds[~text],
                              [n for n, t in zip(names, in_text, strict=True) if not t]))
    else:
        builder.add(values, sizes, bind[rows], kinds, names)
    if broken is not None:
        broken.added = len(rows)
        raise broken
    return len(rows), ref_reloc


def _plt_name(raw: str) -> str:
    return f"{demangle(raw)}@plt"


def _plt_sizes(img: ElfHeaders, plt: SectionHeader) -> tuple[int, int]:
    """perf 6.1's PLT header and entry sizes (``dso__synthesize_plt_symbols``)."""
    if img.machine == _EM_ARM:
        return 20, 12
    if img.machine == _EM_AARCH64:
        return 32, 16
    if img.machine == _EM_SPARC:
        return 48, 12
    if img.machine == _EM_SPARCV9:
        return 128, 32
    return plt.entsize, plt.entsize


def _synthesize_plt(builder: PerfSymbolBuilder, runtime: ElfHeaders) -> int:
    """perf 6.1's ``name@plt`` symbols; returns how many were added (0 when not possible)."""
    dynsym = runtime.section(".dynsym")
    if dynsym is None or dynsym.type != SHT_DYNSYM:
        return 0
    rel = runtime.section(".rela.plt") or runtime.section(".rel.plt")
    plt = runtime.section(".plt")
    if rel is None or plt is None or rel.link != dynsym.index or not rel.entsize:
        return 0
    if rel.type not in (SHT_RELA, SHT_REL):
        return 0
    try:
        syms, strtab = _symbols_of(runtime, dynsym, ".dynsym")
        data = runtime.read(rel, rel.name)
    except SymbolFileError:
        return 0  # perf: "problems reading PLT info", no PLT symbols
    if not strtab:
        return 0
    e = runtime.endian
    wide = runtime.elfclass == 64
    word = e + ("u8" if wide else "u4")
    ent = np.dtype([("offset", word), ("info", word)])

    def sym_index(info: np.ndarray) -> np.ndarray:
        """ELF64_R_SYM / ELF32_R_SYM of the r_info words."""
        shifted: np.ndarray = info >> (_U64(32) if wide else np.uint32(8))
        return shifted.astype(np.int64)
    n = rel.size // rel.entsize
    if n * rel.entsize > len(data):
        return 0
    stride = rel.entsize
    info = np.ndarray((n,), dtype=ent, buffer=data, offset=0, strides=(stride,))["info"]
    idx = sym_index(info)
    header, entry = _plt_sizes(runtime, plt)
    inside = (idx >= 0) & (idx < len(syms))
    offsets = np.where(inside, syms["name"][np.where(inside, idx, 0)].astype(np.int64), -1)
    # "name@plt", demangled when shown (a library has 10^3-10^4 of them)
    names = LazyNames(StrtabNames(strtab, offsets), _plt_name)
    starts = (np.uint64(plt.offset + header) + np.arange(n, dtype=_U64) * _U64(entry))
    builder.add(starts, np.full(n, entry, dtype=_U64), np.full(n, STB_GLOBAL, dtype=np.uint8),
                np.full(n, KIND_PLT, dtype=np.uint8), names)
    return n


def load_elf_symbols(
    path: str,
    runtime_path: str | None = None,
    *,
    kernel: bool = False,
    expect_build_id: str | None = None,
    max_size: int = DEFAULT_MAX_FILE,
) -> ElfSymbols:
    """Read the symbols of ``path`` with perf 6.1's rules (see the module docstring).

    ``runtime_path``: the file that is mapped at run time when ``path`` is a separate
    debug file (perf's ``runtime_ss``: program headers and PLT come from it).
    ``expect_build_id``: the recording's build id; a file whose build id differs, or that
    has none, is refused (perf's ``symsrc__init``) with a :class:`SymbolFileError`.
    """
    with open_elf_headers(path, max_size) as img:
        if runtime_path is None or runtime_path == path:
            return _load(img, img, kernel, expect_build_id)
        with open_elf_headers(runtime_path, max_size) as run:
            return _load(img, run, kernel, expect_build_id)


def _check_build_id(img: ElfHeaders, want: str | None) -> None:
    if want is None:
        return
    have = img.build_id
    if have is None:
        raise SymbolFileError(img.path, f"has no build id; the recording wants {want}")
    if not same_build_id(have, want):
        raise SymbolFileError(img.path, f"build id mismatch: the file has {have}, "
                              f"the recording has {want}")


def _load(img: ElfHeaders, runtime: ElfHeaders, kernel: bool, want: str | None) -> ElfSymbols:
    try:
        _check_build_id(img, want)
        if runtime is not img:
            _check_build_id(runtime, want)
        if img.elf_type not in ("ET_EXEC", "ET_DYN", "ET_REL") and not kernel:
            raise SymbolFileError(img.path, f"ELF type {img.elf_type} has no symbols to use")
        builder = _Builder()
        sources: list[str] = []
        symtab = img.section(".symtab")
        if symtab is not None and symtab.type != SHT_SYMTAB:
            symtab = None
        dynsym = img.section(".dynsym")
        if dynsym is not None and dynsym.type != SHT_DYNSYM:
            dynsym = None
        ref_reloc = None
        total = 0
        if kernel:
            if symtab is None:
                raise SymbolFileError(img.path, "no .symtab (a stripped vmlinux: perf uses "
                                      "kallsyms instead)")
            tables = [(symtab, ".symtab")]
        else:
            tables = [(t, w) for t, w in ((symtab, ".symtab"), (dynsym, ".dynsym")) if t]
        broken: _BrokenTable | None = None
        for sec, what in tables:
            try:
                nr, rr = _load_table(builder, img, runtime, sec, what, kernel)
            except _BrokenTable as e:
                broken = e
                if e.added:
                    sources.append(what.lstrip(".") + " (partly)")
                break
            ref_reloc = ref_reloc if rr is None else rr
            if nr > 0:
                builder.fixup_end()
                builder.fixup_duplicate()
                sources.append(what.lstrip("."))
                total += nr
        if broken is not None and not len(builder):
            raise SymbolFileError(img.path, str(broken))
        if kernel:
            table = _kernel_table(builder, img)
        else:
            if broken is None and total > 0 and _synthesize_plt(builder, runtime) > 0:
                sources.append("plt")
            table = builder.table("file offset")
    except SymbolFileError:
        raise
    except MemoryError:
        raise SymbolFileError(img.path, "out of memory reading the symbols") from None
    except Exception as e:  # malformed tables that numpy or the checks above stumble on
        text = " ".join(str(e).split())[:200] or type(e).__name__
        raise SymbolFileError(img.path, f"bad symbol table: {text}") from None
    return ElfSymbols(img.path, table, img.build_id, img.elf_type, list(runtime.loads), sources,
                      runtime.path if runtime is not img else None, ref_reloc)


def _kernel_table(builder: _Builder, img: ElfHeaders) -> DsoSymbolTable:
    """vmlinux: .text symbols (fixed up, clipped to .text) plus other sections' as they are."""
    text = img.section(".text")
    main = builder.table("address")
    ends = main.ends
    if text is not None and len(ends):
        limit = _U64((text.addr + text.size) & _MASK64)
        ends = np.where((main.starts < limit) & (ends > limit), limit, ends)
    starts_l, ends_l, kinds_l, names = [main.starts], [ends], [main.kinds], list(main.names)
    for values, sizes, kinds, other_names in builder.other:
        with np.errstate(over="ignore"):
            starts_l.append(values)
            ends_l.append(values + sizes)
        kinds_l.append(kinds)
        names.extend(other_names)
    return DsoSymbolTable(np.concatenate(starts_l), np.concatenate(ends_l), names,
                       np.concatenate(kinds_l), "address")
