"""Where a resolved function's code is, and its disassembly.

The resolver names a function by a location (:class:`~.locations.Locations`): a dso and a
symbol range in the symbol table's space.  This module turns that into the file that
holds the bytes and the address ``objdump -d`` (and so ``perf annotate``) shows:

* user DSO (program, library, vDSO): the symbol file the resolver used, or its runtime
  file when the symbol file has no bytes (a separate debug file); the range is in
  file-offset space and is shown at its ELF virtual address
  (:meth:`~.elfsyms.ElfSymbols.offset_to_vaddr`), as objdump shows it;
* module section (KMOD_SEC_MAP): the ``.ko`` the resolver found, the function at its
  offset in the section, shown at the section's load address plus that offset (never
  the module base); a module ``.text`` from its MMAP (no section map) is shown at the
  MMAP start, perf's rule;
* kernel: the vmlinux the resolver read; with only kallsyms there are no bytes;
* JIT code (perf maps), BPF and other KSYMBOL code, kallsyms-only modules: no bytes.

API: :class:`FunctionRef` (:meth:`FunctionRef.of_location`), :func:`function_code(res,
ref) <function_code>` -> :class:`FunctionCode` (``problem`` says why there are no bytes),
:func:`find_functions(res, name, dsos) <find_functions>` (a name in the symbol tables, for
functions without samples), :func:`dso_matches`, and :class:`CodeImages`, which opens
files once and disassembles a :class:`FunctionCode`.  Every file problem is one line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from ...lru import LRU
from ..files.safefile import SymbolFileError
from ..modules.modnames import module_name
from ..modules.sectionmap import SOURCE_KMOD, SectionEntry
from ..naming.locations import LocationDso, Locations
from ..naming.resolver import Resolver
from ..tables.elfsyms import ElfSymbols
from ..tasks.dsonames import KERNEL_DSO, MapKind
from .disasm import Disassembly, disassemble_function
from .elfcode import SHF_ALLOC, ElfCodeImage, ElfFileError, SymbolLookup, open_elf

__all__ = [
    "CodeImages",
    "FunctionCode",
    "FunctionRef",
    "dso_matches",
    "find_functions",
    "function_code",
]

_MAX_FUNCTION = 16 << 20  # bytes disassembled at most (a symbol whose size is garbage)


@dataclass(frozen=True)
class FunctionRef:
    """A function as the resolver names it: dso index (``Locations.dsos``), symbol name,
    ``[start, end)`` in the symbol table's space, and the module section when known."""

    dso: int
    name: str
    start: int
    end: int
    section: str | None = None

    @classmethod
    def of_location(cls, locs: Locations, loc: int) -> FunctionRef | None:
        """The function of a location; None for an address no symbol covers."""
        name = locs.name[loc]
        if name is None:
            return None
        return cls(locs.dso[loc], name, locs.start[loc], locs.end[loc], locs.section[loc])

    def location(self, locs: Locations) -> int:
        """The location id of this function (added when new)."""
        return locs.add(self.dso, self.name, self.start, self.end, self.section)


@dataclass
class FunctionCode:
    """Where the bytes of a function are (``path``) and how to read them.

    ET_EXEC/ET_DYN/vmlinux: ``vaddr`` (objdump's address of the first byte).  A ``.ko``:
    ``section`` and ``offset``, shown at ``section_bases[section] + offset``.
    ``lines_path`` is the file with the DWARF line table (a debug file may hold it).
    ``problem`` (then ``path`` is None) says in one line why nothing can be disassembled.
    """

    ref: FunctionRef
    dso: str  # the dso's long name
    size: int
    path: str | None = None
    lines_path: str | None = None
    vaddr: int | None = None
    section: str | None = None
    offset: int | None = None
    section_bases: dict[str, int] = field(default_factory=dict)
    problem: str | None = None
    notes: list[str] = field(default_factory=list)
    #: names for branch targets and data (objdump's addresses) tried before the file's
    #: own symbols: a user DSO's symbols as perf has them, which include the ``name@plt``
    #: stubs perf (and objdump) name but the ELF's symbol table does not
    names: SymbolLookup | None = None


def _kind_of(res: Resolver, dso: LocationDso) -> tuple[MapKind | None, str, str]:
    """The map kind, path and build id of a dso of the locations (by its name)."""
    maps = res.model.maps
    for d in maps.dsos:
        if d.name == dso.name:
            return d.kind, d.path, d.build_id
    return None, dso.name, ""


def function_code(res: Resolver, ref: FunctionRef) -> FunctionCode:
    """Where ``ref``'s code is (see the module docstring)."""
    dso = res.locs.dsos[ref.dso]
    size = max(0, ref.end - ref.start)
    code = FunctionCode(ref, dso.name, size)
    if size > _MAX_FUNCTION:
        code.problem = f"{ref.name} is {size} bytes long: not disassembled (over 16 MiB)"
        return code
    if dso.module is not None:
        _module_code(res, dso, code)
    elif dso.kernel:
        _kernel_code(res, dso, code)
    else:
        _user_code(res, dso, code)
    return code


def _module_code(res: Resolver, dso: LocationDso, code: FunctionCode) -> None:
    ref = code.ref
    module = dso.module
    assert module is not None
    if ref.section is None:
        why = res.modfiles.notes.get(module, "no module file")
        code.problem = (f"[{module}]: symbols from kallsyms, no module file to read code "
                        f"from ({why})")
        return
    entries = [e for e in res.smap.entries if e.module == module]
    entry = _entry_for(entries, ref)
    if entry is None:
        code.problem = f"[{module}]{ref.section}: no load address in this recording"
        return
    record_path = entry.path or (dso.name if "/" in dso.name else None)
    mf = res.modfiles.get(module, record_path)
    if mf is None:
        why = res.modfiles.notes.get(module, "module file not found")
        code.problem = f"[{module}]: {why}"
        return
    if entry.section is None:
        code.notes.append(f"[{module}]: assumed .text: no section map in this recording")
    code.path = code.lines_path = mf.path
    code.section = ref.section
    code.offset = ref.start - entry.start
    code.section_bases = {e.section: e.start for e in entries
                          if e.section and e.source == SOURCE_KMOD}
    code.section_bases[ref.section] = entry.start


def _entry_for(entries: list[SectionEntry], ref: FunctionRef) -> SectionEntry | None:
    """The section-map entry the resolver placed ``ref`` by: a KMOD_SEC_MAP entry of its
    section, else the module's MMAP (``.text``, perf's rule)."""
    inside = [e for e in entries if e.start <= ref.start < max(e.end, e.start + 1)]
    for want in (lambda e: e.source == SOURCE_KMOD and e.section == ref.section,
                 lambda e: e.section == ref.section,
                 lambda e: e.section is None and ref.section == ".text"):
        found = [e for e in inside if want(e)]
        if found:
            return min(found, key=lambda e: e.size)
    return None


def _kernel_code(res: Resolver, dso: LocationDso, code: FunctionCode) -> None:
    if dso.name != KERNEL_DSO:
        code.problem = f"{dso.name}: no file holds this code (BPF or other kernel-made code)"
        return
    res.kernel_table()  # loads the kernel symbols (and says where from)
    if res.kernel_file is None:
        code.problem = "[kernel.kallsyms]: no kernel symbols (give --vmlinux FILE)"
        return
    kind, path = res.kernel_file
    if kind != "vmlinux":
        code.problem = (f"[kernel.kallsyms]: symbols from kallsyms ({path}), which holds no "
                        "code bytes: give --vmlinux FILE to disassemble kernel functions")
        return
    code.path = code.lines_path = path
    code.vaddr = code.ref.start


def _user_code(res: Resolver, dso: LocationDso, code: FunctionCode) -> None:
    kind, path, build_id = _kind_of(res, dso)
    if kind == MapKind.JIT or dso.name.startswith("/tmp/perf-"):
        code.problem = f"{dso.name}: JIT code: a perf map names it but holds no bytes"
        return
    if kind not in (MapKind.USER, MapKind.VDSO):
        code.problem = f"{dso.name}: no file holds this code"
        return
    files = res.user_files(path, build_id, vdso=kind == MapKind.VDSO)
    if files is None:
        code.problem = res.notes[-1] if res.notes else f"{path}: not found"
        return
    syms_path, runtime = files
    try:
        syms = res.cache.elf(syms_path, runtime, build_id or None)
    except SymbolFileError as e:
        code.problem = str(e)
        return
    vaddr, ok = syms.offset_to_vaddr(np.array([code.ref.start], dtype=np.uint64))
    if not ok[0]:
        code.problem = (f"{syms_path}: {code.ref.name} at file offset {code.ref.start:#x} is "
                        "in no loadable segment")
        return
    code.vaddr = int(vaddr[0])
    code.names = _table_lookup(syms)
    # the bytes: the runtime file first (a separate debug file has .text as NOBITS)
    code.path = runtime or syms_path
    code.lines_path = syms_path
    if runtime and runtime != syms_path:
        code.notes.append(f"{code.ref.name}: code from {runtime}, lines from {syms_path}")


def _table_lookup(syms: ElfSymbols) -> SymbolLookup:
    """Names of the symbols of a user DSO's table (file-offset space) that *start* at an
    ELF virtual address: perf's ``name@plt`` stubs, which objdump names the same way
    (``call 1040 <lib_tiny@plt>``) and the ELF's symbol table does not."""
    table = syms.table
    starts = np.asarray(table.starts, dtype=np.uint64)

    def lookup(addr: int) -> tuple[str, int] | None:
        off, ok = syms.vaddr_to_offset(np.array([addr], dtype=np.uint64))
        if not ok[0] or not len(starts):
            return None
        i = int(np.searchsorted(starts, off[0]))
        if i < len(starts) and starts[i] == off[0]:
            return table.names[i], 0
        return None

    return lookup


def dso_matches(dso: LocationDso, wanted: str) -> bool:
    """Whether ``wanted`` (a user's ``--dso``) names ``dso``: its short or long name, or
    for a module its name with or without brackets or ``.ko``."""
    if wanted in (dso.name, dso.short_name):
        return True
    return dso.module is not None and module_name(wanted) == dso.module


def find_functions(res: Resolver, name: str, dsos: Iterable[int]) -> list[FunctionRef]:
    """Functions called ``name`` in the symbol tables of ``dsos`` (indexes into
    ``res.locs.dsos``): what annotates a function without samples."""
    out: list[FunctionRef] = []
    for k in dict.fromkeys(dsos):
        dso = res.locs.dsos[k]
        if dso.module is not None:
            out += _module_functions(res, dso, name)
        elif dso.name == KERNEL_DSO:
            table = res.kernel_table()
            if table is not None:
                out += [FunctionRef(k, n, s, e) for n, s, e in _named(table, name)]
        elif not dso.kernel:
            out += _user_functions(res, k, dso, name)
    return list(dict.fromkeys(out))


def _named(table: object, name: str) -> list[tuple[str, int, int]]:
    """``(name, start, end)`` of every symbol called ``name`` in a symbol table; a module
    table's aliases count too (``cleanup_module`` finds ``demo_nic_exit``, the name perf
    and the resolver give that address)."""
    names = getattr(table, "names", [])
    starts = getattr(table, "starts", None)
    ends = getattr(table, "ends", None)
    if starts is None or ends is None:
        return []
    aliases = getattr(table, "aliases", None) or [()] * len(names)
    return [(names[i], int(starts[i]), int(ends[i])) for i in range(len(names))
            if names[i] == name or name in aliases[i]]


def _user_functions(res: Resolver, k: int, dso: LocationDso, name: str) -> list[FunctionRef]:
    kind, path, build_id = _kind_of(res, dso)
    if kind not in (MapKind.USER, MapKind.VDSO):
        return []
    files = res.user_files(path, build_id, vdso=kind == MapKind.VDSO)
    if files is None:
        return []
    try:
        syms = res.cache.elf(files[0], files[1], build_id or None)
    except SymbolFileError:
        return []
    return [FunctionRef(k, n, s, e) for n, s, e in _named(syms.table, name)]


def _module_functions(res: Resolver, dso: LocationDso, name: str) -> list[FunctionRef]:
    module = dso.module
    assert module is not None
    entries = [e for e in res.smap.entries if e.module == module]
    mf = res.modfiles.get(module, next((e.path for e in entries if e.path), None))
    if mf is None:
        return []
    out = []
    for e in entries:
        section = e.section or ".text"
        if section not in mf.sections:
            continue
        # the dso the resolver names the section by: [module] for a KMOD_SEC_MAP
        # section, the module's MMAP dso for its .text
        shown = f"[{module}]" if e.source == SOURCE_KMOD else \
            _mmap_dso_name(res, module) or dso.name
        k = res.locs.dso_id(shown, kernel=True, module=module)
        out += [FunctionRef(k, n, e.start + s, e.start + t, section)
                for n, s, t in _named(mf.symbols(section), name)]
    return out


def _mmap_dso_name(res: Resolver, module: str) -> str | None:
    for d in res.model.maps.dsos:
        if d.kind == MapKind.MODULE and module_name(d.path or d.name) == module:
            return d.name
    return None


def _open_or_error(path: str) -> ElfCodeImage | ElfFileError:
    try:
        return open_elf(path)
    except ElfFileError as e:
        return e  # kept too: a file that cannot be used costs one attempt


class CodeImages:
    """Open ELF files (a few, least recently used dropped) and disassemble from them.

    Thread-safe: the browser disassembles in a worker.
    """

    def __init__(self, keep: int = 4) -> None:
        self._images: LRU[str, ElfCodeImage | ElfFileError] = LRU(keep)

    def image(self, path: str) -> ElfCodeImage:
        """The opened file (raises :class:`~.elfcode.ElfFileError`, cached too)."""
        got = self._images.get_or_make(path, lambda: _open_or_error(path))
        if isinstance(got, ElfFileError):
            raise got
        return got

    def disassemble(self, code: FunctionCode) -> tuple[Disassembly, ElfCodeImage]:
        """The function's instructions and the image they come from.  Raises
        :class:`~.elfcode.ElfFileError` (one line) when the file cannot be used or the
        function is not where its symbol says."""
        if code.path is None:
            raise ElfFileError(code.dso, code.problem or "no file holds this code")
        image = self.image(code.path)
        size = code.size
        if image.kind == "rel":
            if code.section is None or code.offset is None:
                raise ElfFileError(code.path, "a module function needs its section")
            sec = image.section(code.section)
            size = max(0, min(size, sec.size - code.offset))
            return disassemble_function(
                image, size=size, section=code.section, offset=code.offset,
                section_bases=code.section_bases, name=code.ref.name), image
        if code.vaddr is None:
            raise ElfFileError(code.path, "no address for this function")
        for s in image.sections:  # a symbol whose end was fixed up past its section
            if s.flags & SHF_ALLOC and s.addr <= code.vaddr < s.addr + s.size:
                size = max(0, min(size, s.addr + s.size - code.vaddr))
                break
        lookup = None
        if code.names is not None:
            own, names = image.lookup(), code.names

            def lookup(addr: int) -> tuple[str, int] | None:
                return names(addr) or own(addr)

        return disassemble_function(image, size=size, vaddr=code.vaddr, lookup=lookup,
                                    name=code.ref.name), image

    def lines_image(self, code: FunctionCode, image: ElfCodeImage) -> ElfCodeImage:
        """The file to read source lines from: the symbol file when it is another one
        (a separate debug file), else ``image``."""
        if code.lines_path and code.lines_path != code.path:
            try:
                other = self.image(code.lines_path)
            except ElfFileError:
                return image
            if any(s.name in (".debug_line", ".zdebug_line") for s in other.sections):
                return other
        return image
