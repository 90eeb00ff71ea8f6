"""Kernel symbols from kallsyms text (``ADDR TYPE NAME [MODULE]`` per line), as perf 6.1.

perf's rules (``kallsyms__parse``, ``map__process_kallsym_symbol``, ``__dso__load_kallsyms``
in ``tools/perf/util/symbol.c``): lines that do not parse are skipped; only types T, W, D,
B (either case) are kept; names starting with ``$`` are dropped; symbols have no size, so
each ends where the next one starts (``symbols__fixup_end``: the last core-kernel symbol
before the modules, and the last symbol, end on the next page boundary past their start);
one symbol is kept per address (``choose_best_symbol``); x86's
``__entry_SYSCALL_64_trampoline`` is dropped (``maps__split_kallsyms``).  Module symbols
(``\\t[name]`` after the name) are kept apart, per module, with absolute addresses.

Where the text comes from is the caller's choice: :func:`load_kallsyms` reads a file
(``--kallsyms FILE``, the build-id cache copy :func:`cached_kallsyms_path`, or
``/proc/kallsyms`` when :func:`running_kernel_matches` says the recording was made on the
running kernel).  A file whose addresses are all zero (``kptr_restrict``) is an error with
a clear message.

Public API: :func:`parse_kallsyms` ``(text, source) -> Kallsyms``; :func:`load_kallsyms`
``(path, max_size) -> Kallsyms``; :class:`Kallsyms` (``kernel``: a
:class:`~perftui.symbols.table.SymbolTable` in address space; ``modules``: name ->
SymbolTable; ``address_of(name)``; ``relocation(text_address)``; ``skipped`` lines);
:func:`cached_kallsyms_path` ``(build_id, debug_dir=None) -> str | None``;
:func:`running_kernel_build_id` ``() -> str | None``; :func:`running_kernel_matches`
``(build_id=None, os_release=None) -> bool``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

import numpy as np

from perftui.symbols.elfimage import note_build_id
from perftui.symbols.modlocate import default_debug_dir, same_build_id
from perftui.symbols.safefile import SymbolFileError, read_text
from perftui.symbols.table import (
    KIND_FUNC,
    KIND_OBJECT,
    STB_GLOBAL,
    STB_LOCAL,
    STB_WEAK,
    PerfSymbolBuilder,
    SymbolTable,
)

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
#: perf's KSYM_NAME_LEN (6.1): longer names are cut there.
KSYM_NAME_LEN = 512
_ENTRY_TRAMPOLINE = "__entry_SYSCALL_64_trampoline"
_LINE = re.compile(r"([0-9a-fA-F]+) (\S) ([^\n]*)")
_HEX = re.compile(r"[0-9a-f]{2,128}")
#: _LINE at every line start, where lines end at "\n" only
_LINES = re.compile(r"^([0-9a-fA-F]+) (\S) ([^\n]*)", re.M)
#: the line boundaries of str.splitlines besides "\n"
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


@dataclass
class Kallsyms:
    """Parsed kallsyms: core-kernel table, per-module tables, and what was skipped."""

    source: str
    kernel: SymbolTable
    modules: dict[str, SymbolTable] = field(default_factory=dict)
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


def _binding(t: str) -> int:
    if t == "W":
        return STB_WEAK
    return STB_GLOBAL if t.isupper() else STB_LOCAL


def _fields(text: str) -> tuple[list[tuple[str, str, str]], int]:
    """``(address, type, rest)`` of each line of ``text`` that parses, in order, and how
    many non-blank lines do not."""
    if _OTHER_BREAKS.search(text) is None:  # lines end at "\n" only: one pass of the regex
        found: list[tuple[str, str, str]] = _LINES.findall(text)
        return found, sum(1 for line in text.split("\n") if line.strip()) - len(found)
    found, skipped = [], 0
    for line in text.splitlines():
        m = _LINE.match(line)
        if m is None:
            skipped += bool(line.strip())
        else:
            found.append((m.group(1), m.group(2), m.group(3)))
    return found, skipped


def parse_kallsyms(text: str, source: str = "kallsyms") -> Kallsyms:
    """Parse kallsyms text with perf 6.1's rules (see the module docstring)."""
    starts: list[int] = []
    types: list[str] = []
    names: list[str] = []
    mods: list[str | None] = []
    skipped = filtered = 0
    any_nonzero = False
    raw: dict[str, int] = {}
    found, skipped = _fields(text)
    for hexa, t, whole in found:
        if len(hexa) > 16:
            skipped += 1
            continue
        addr = int(hexa, 16)
        any_nonzero |= addr != 0
        if t.upper() not in "TWDB":
            filtered += 1
            continue
        rest = whole[:KSYM_NAME_LEN]
        name, tab, mod = rest.partition("\t")
        if name in ("_text", "_stext") and t in "TtWw" and not tab:
            raw.setdefault(name, addr)
        if name.startswith("$"):
            continue
        module = None
        if tab and mod.startswith("[") and "]" in mod:
            module = mod[1:mod.index("]")]
        starts.append(addr)
        types.append(t)
        names.append(name)
        mods.append(module)
    if names and not any_nonzero:
        raise SymbolFileError(source, "every address is 0: the kernel hid them "
                              "(kptr_restrict); read it as root or with "
                              "/proc/sys/kernel/kptr_restrict set to 0")
    if not names:
        raise SymbolFileError(source, "no kernel symbols in it (not kallsyms text?)")
    b = PerfSymbolBuilder()
    arr = np.array(starts, dtype=np.uint64)
    in_module = np.array([m is not None for m in mods], dtype=bool)
    kinds = np.array([KIND_FUNC if t in "tTwW" else KIND_OBJECT for t in types], dtype=np.uint8)
    bind = np.array([_binding(t) for t in types], dtype=np.uint8)
    # perf keeps "name\t[module]" as the name until the maps are split: the tie-breaks of
    # choose_best_symbol (name length) see the module suffix.
    full = [n if m is None else f"{n}\t[{m}]" for n, m in zip(names, mods, strict=True)]
    b.add(arr, np.zeros(len(arr), dtype=np.uint64), bind, kinds, full, in_module)
    b.fixup_end(is_kallsyms=True)
    b.fixup_duplicate()
    table = b.table("address")
    # the table's rows are the builder's live symbols in its order: their names read from
    # the lists here, not through the table's lazy name layers (a second per symbol)
    order = b.live_order().tolist()
    core_rows: list[int] = []
    core_names: list[str] = []
    per_mod: dict[str, tuple[list[int], list[str]]] = {}
    for i, k in enumerate(order):
        m = mods[k]
        if m is not None:
            rows_names = per_mod.get(m)
            if rows_names is None:
                rows_names = per_mod[m] = ([], [])
            rows_names[0].append(i)
            rows_names[1].append(names[k])
        elif names[k] != _ENTRY_TRAMPOLINE:
            core_rows.append(i)
            core_names.append(names[k])

    def sub(rows_names: tuple[list[int], list[str]]) -> SymbolTable:
        r = np.array(rows_names[0], dtype=np.int64)
        return SymbolTable(table.starts[r], table.ends[r], rows_names[1], table.kinds[r],
                           "address")

    return Kallsyms(source, sub((core_rows, core_names)),
                    {m: sub(rn) for m, rn in per_mod.items()}, skipped, filtered, raw)


def load_kallsyms(path: str, max_size: int = DEFAULT_MAX_KALLSYMS) -> Kallsyms:
    """Read and parse a kallsyms file (a regular file, or ``/proc/kallsyms``)."""
    if os.path.realpath(path) == "/proc/kallsyms":
        text = _read_proc(path, max_size)
    else:
        text = read_text(path, max_size)
    return parse_kallsyms(text, path)


def _read_proc(path: str, max_size: int) -> str:
    """/proc files report size 0: read them in chunks up to the cap."""
    try:
        with open(path, "rb") as f:
            data = f.read(max_size + 1)
    except OSError as e:
        raise SymbolFileError(path, f"cannot read: {e.strerror or e}") from None
    if len(data) > max_size:
        raise SymbolFileError(path, f"over the {max_size >> 20} MiB cap")
    return data.decode("utf-8", "replace")


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
