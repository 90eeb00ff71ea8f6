"""Kernel symbols from kallsyms text (``ADDR TYPE NAME [MODULE]`` per line), as perf 6.1.

perf's rules (``kallsyms__parse``, ``map__process_kallsym_symbol``, ``__dso__load_kallsyms``
in ``tools/perf/util/symbol.c``): lines that do not parse are skipped; only types T, W, D,
B (either case) are kept; names starting with ``$`` are dropped; symbols have no size, so
each ends where the next one starts (``symbols__fixup_end``: the last core-kernel symbol
before the modules, and the last symbol, end on the next page boundary past their start);
one symbol is kept per address (``choose_best_symbol``); x86's
``__entry_SYSCALL_64_trampoline`` is dropped (``maps__split_kallsyms``).  Module symbols
(``\\t[name]`` after the name) are kept apart, per module, with absolute addresses.

The lines are split into fields by :mod:`.kallsymscan` (numpy over the whole text); the
tables' names stay slices of the text until one is shown (10^5 names, a few hundred shown).

Where the text comes from is the caller's choice: :func:`load_kallsyms` reads a file
(``--kallsyms FILE``, the build-id cache copy :func:`cached_kallsyms_path`, or
``/proc/kallsyms`` when :func:`running_kernel_matches` says the recording was made on the
running kernel).  A file whose addresses are all zero (``kptr_restrict``) is an error with
a clear message.

Public API: :func:`parse_kallsyms` ``(text: str | bytes, source) -> Kallsyms``;
:func:`load_kallsyms` ``(path, max_size) -> Kallsyms``; :class:`Kallsyms` (``kernel``: a
:class:`~perftui.symbols.tables.dsotable.DsoSymbolTable` in address space; ``modules``: name ->
DsoSymbolTable; ``address_of(name)``; ``relocation(text_address)``; ``skipped`` lines);
:func:`cached_kallsyms_path` ``(build_id, debug_dir=None) -> str | None``;
:func:`running_kernel_build_id` ``() -> str | None``; :func:`running_kernel_matches`
``(build_id=None, os_release=None) -> bool``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import itemgetter

import numpy as np

from perftui.heap import trim
from perftui.symbols.files.elfheaders import note_build_id
from perftui.symbols.files.safefile import SymbolFileError, read_bytes
from perftui.symbols.modules.modlocate import default_debug_dir, same_build_id
from perftui.symbols.tables.byteslices import SliceNames
from perftui.symbols.tables.dsotable import (
    KIND_FUNC,
    KIND_OBJECT,
    STB_GLOBAL,
    STB_LOCAL,
    STB_WEAK,
    DsoSymbolTable,
)
from perftui.symbols.tables.kallsymscan import KallsymsLines, scan_kallsyms
from perftui.symbols.tables.symbuilder import PerfSymbolBuilder

__all__ = [
    "DEFAULT_MAX_KALLSYMS",
    "Kallsyms",
    "cached_kallsyms_path",
    "load_kallsyms",
    "parse_kallsyms",
    "running_kernel_build_id",
    "running_kernel_matches",
]

#: Largest kallsyms text read (a distribution kernel with modules is 10-20 MiB).
DEFAULT_MAX_KALLSYMS = 128 << 20
_ENTRY_TRAMPOLINE = "__entry_SYSCALL_64_trampoline"
_HEX = re.compile(r"[0-9a-f]{2,128}")


@dataclass
class Kallsyms:
    """Parsed kallsyms: core-kernel table, per-module tables, and what was skipped."""

    source: str
    kernel: DsoSymbolTable
    modules: dict[str, DsoSymbolTable] = field(default_factory=dict)
    #: lines that did not parse
    skipped: int = 0
    #: symbols of other types (perf keeps only T, W, D, B)
    filtered: int = 0
    #: the first function-type (T, t, W, w) address of ``_text`` and ``_stext`` in the text,
    #: before one name per address is chosen (perf's ``kallsyms__get_function_start``)
    raw: dict[str, int] = field(default_factory=dict)

    def address_of(self, name: str) -> int | None:
        """Address of ``name`` (``_text``, ``_stext``, or a core-kernel symbol kept)."""
        if name in self.raw:
            return self.raw[name]
        try:
            i = self.kernel.names.index(name)
        except ValueError:
            return None
        return int(self.kernel.starts[i])

    def relocation(self, text_address: int) -> int:
        """perf's ``kallsyms__delta``: this file's ``_text`` minus the recording's
        (the kernel MMAP's pgoff); subtract it from this file's addresses (0 when the
        file has no ``_text``)."""
        here = self.address_of("_text")
        return 0 if here is None else here - text_address


_TYPES_KEPT = np.zeros(256, dtype=bool)
_TYPES_KEPT[list(b"TWDBtwdb")] = True
_FUNC_TYPES = np.zeros(256, dtype=bool)
_FUNC_TYPES[list(b"TtWw")] = True
_GLOBAL_TYPES = np.zeros(256, dtype=bool)
_GLOBAL_TYPES[list(b"TDB")] = True


class _FullNames(Sequence[str]):
    """``name\\t[module]`` per symbol, made on access: perf keeps the module suffix in the
    name until the maps are split, and the tie-breaks of ``choose_best_symbol`` (name
    length) see it; only symbols sharing an address are asked for."""

    def __init__(self, names: Sequence[str], module: np.ndarray, modules: list[str]) -> None:
        self._names, self._module, self._modules = names, module, modules

    def __len__(self) -> int:
        return len(self._names)

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        m = int(self._module[i])
        return self._names[i] if m < 0 else f"{self._names[i]}\t[{self._modules[m]}]"


def _raw_symbols(lines: KallsymsLines, kept: np.ndarray) -> dict[str, int]:
    """The first function-type address of ``_text`` and ``_stext`` without a module."""
    raw: dict[str, int] = {}
    cand = np.flatnonzero(kept & _FUNC_TYPES[lines.types] & ~lines.tabbed
                          & ((lines.name_len == 5) | (lines.name_len == 6)))
    for i in cand.tolist():
        name = lines.names[i]
        if name in ("_text", "_stext") and name not in raw:
            raw[name] = int(lines.addrs[i])
    return raw


def parse_kallsyms(text: str | bytes, source: str = "kallsyms") -> Kallsyms:
    """Parse kallsyms text with perf 6.1's rules (see the module docstring); ``bytes``
    are decoded as UTF-8, undecodable bytes replaced."""
    lines = scan_kallsyms(text)
    kept = _TYPES_KEPT[lines.types]
    filtered = int(np.count_nonzero(~kept))
    raw = _raw_symbols(lines, kept)
    use = np.flatnonzero(kept & (lines.first != ord("$")))
    if len(use) and not lines.addrs.any():
        raise SymbolFileError(source, "every address is 0: the kernel hid them "
                              "(kptr_restrict); read it as root or with "
                              "/proc/sys/kernel/kptr_restrict set to 0")
    if not len(use):
        raise SymbolFileError(source, "no kernel symbols in it (not kallsyms text?)")
    names = _pick(lines.names, use)
    module = lines.module[use]
    types = lines.types[use]
    in_module = module >= 0
    b = PerfSymbolBuilder()
    kinds = np.where(_FUNC_TYPES[types], KIND_FUNC, KIND_OBJECT).astype(np.uint8)
    bind = np.where(types == ord("W"), STB_WEAK,
                    np.where(_GLOBAL_TYPES[types], STB_GLOBAL, STB_LOCAL)).astype(np.uint8)
    b.add(lines.addrs[use], np.zeros(len(use), dtype=np.uint64), bind, kinds,
          _FullNames(names, module, lines.modules), in_module)
    b.fixup_end(is_kallsyms=True)
    b.fixup_duplicate()
    order, starts, ends, kinds = b.live_arrays()
    # the table's rows are the builder's live symbols in its order
    mod_of = module[order]
    core = np.flatnonzero(mod_of < 0)
    core = core[~_equal_to(names, _ENTRY_TRAMPOLINE)[order[core]]]

    def sub(rows: np.ndarray) -> DsoSymbolTable:
        picked = _pick(names, order[rows])
        if isinstance(picked, SliceNames):  # the text is not kept for them
            picked = picked.compacted()
        return DsoSymbolTable(starts[rows], ends[rows], picked, kinds[rows], "address")

    per_mod: dict[str, DsoSymbolTable] = {}
    mod_rows = np.flatnonzero(mod_of >= 0)
    if len(mod_rows):
        codes = mod_of[mod_rows]
        by_code = mod_rows[np.argsort(codes, kind="stable")]
        uniq, first_row, counts = np.unique(codes, return_index=True, return_counts=True)
        bounds = np.concatenate([[0], np.cumsum(counts)])
        # in the order each module is first met in the table, as before
        for j in np.argsort(first_row, kind="stable").tolist():
            per_mod[lines.modules[int(uniq[j])]] = sub(by_code[bounds[j]:bounds[j + 1]])
    return Kallsyms(source, sub(core), per_mod, lines.skipped, filtered, raw)


def _equal_to(names: Sequence[str], value: str) -> np.ndarray:
    """Which of ``names`` are ``value`` (a bool per name)."""
    if isinstance(names, SliceNames):
        return names.equal_to(value)
    return np.array([n == value for n in names], dtype=bool)


def _pick(names: Sequence[str], rows: np.ndarray) -> Sequence[str]:
    """``[names[i] for i in rows]`` (lazy names stay lazy)."""
    if isinstance(names, SliceNames):
        return names.take(rows)
    if len(rows) == 0:
        return []
    if len(rows) == 1:
        return [names[int(rows[0])]]
    return list(itemgetter(*rows.tolist())(names))


def load_kallsyms(path: str, max_size: int = DEFAULT_MAX_KALLSYMS) -> Kallsyms:
    """Read and parse a kallsyms file (a regular file, or ``/proc/kallsyms``)."""
    return parse_and_trim(read_kallsyms(path, max_size), path)


def parse_and_trim(text: bytes, path: str) -> Kallsyms:
    """:func:`parse_kallsyms`, its freed temporaries (~18 MB for a 5 MB text) given back
    (not kept by the heap)."""
    try:
        return parse_kallsyms(text, path)
    finally:
        trim()


def read_kallsyms(path: str, max_size: int = DEFAULT_MAX_KALLSYMS) -> bytes:
    """The text of a kallsyms file (a regular file, or ``/proc/kallsyms``)."""
    if os.path.realpath(path) == "/proc/kallsyms":
        return _read_proc(path, max_size)
    return read_bytes(path, max_size)


def _read_proc(path: str, max_size: int) -> bytes:
    """/proc files report size 0: read them in chunks up to the cap."""
    try:
        with open(path, "rb") as f:
            data = f.read(max_size + 1)
    except OSError as e:
        raise SymbolFileError(path, f"cannot read: {e.strerror or e}") from None
    if len(data) > max_size:
        raise SymbolFileError(path, f"over the {max_size >> 20} MiB cap")
    return data


def cached_kallsyms_path(build_id: str, debug_dir: str | None = None) -> str | None:
    """perf's build-id cache copy: ``<debug_dir>/[kernel.kallsyms]/<build-id>/kallsyms``
    (or the older ``.../[kernel.kallsyms]/<build-id>`` file); None when absent or when
    ``build_id`` is not hex."""
    bid = build_id.strip().lower()
    if not _HEX.fullmatch(bid):
        return None
    base = debug_dir if debug_dir is not None else default_debug_dir()
    for path in (os.path.join(base, "[kernel.kallsyms]", bid, "kallsyms"),
                 os.path.join(base, "[kernel.kallsyms]", bid)):
        try:
            if os.path.isfile(path):
                return path
        except (OSError, ValueError):
            continue
    return None


def running_kernel_build_id(notes_path: str = "/sys/kernel/notes") -> str | None:
    """The running kernel's build id, from its notes (perf's ``sysfs__read_build_id``)."""
    try:
        with open(notes_path, "rb") as f:
            data = f.read(1 << 16)
    except OSError:
        return None
    return note_build_id(data)


def running_kernel_matches(build_id: str | None = None, os_release: str | None = None,
                           notes_path: str = "/sys/kernel/notes") -> bool:
    """Whether a recording was made on the running kernel, so ``/proc/kallsyms`` fits it.

    With the recording's kernel build id, the running kernel's (``/sys/kernel/notes``)
    must equal it (perf's rule).  Without one, the recording's os release must equal
    ``uname -r``.  With neither, False.
    """
    if build_id:
        running = running_kernel_build_id(notes_path)
        return running is not None and same_build_id(running, build_id)
    if os_release:
        return os.uname().release == os_release
    return False
