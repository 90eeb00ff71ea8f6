"""JIT symbol maps: ``/tmp/perf-<pid>.map``, one ``START SIZE NAME`` per line.

perf 6.1 reads such a file for an anonymous executable map of process ``pid``
(``map__new`` renames the map to ``/tmp/perf-<pid>.map``; ``dso__load_perf_map`` in
``tools/perf/util/symbol.c`` parses it).  Its rules, kept here: START and SIZE are read with
``strtoull(.., 16)`` (hex, ``0x`` allowed, no digits reads as 0), each followed by one
separator character; NAME is the rest of the line, and a line whose NAME has fewer than
three characters is skipped; the last character of every line is dropped as its newline
(so a last line without one loses a character, as in perf).  No end fix-up, no
duplicate removal: a zero-size symbol covers its start address only; of symbols with the
same start, the one written last wins here.  Addresses are the process's addresses
(perf's identity map for anonymous memory).

Public API: :func:`perf_map_path` ``(pid, directory="/tmp") -> str``;
:func:`parse_perf_map` ``(text, source) -> PerfMap``; :func:`load_perf_map`
``(pid, directory="/tmp", max_size=...) -> PerfMap``; :class:`PerfMap` (``table``, a
:class:`~perftui.symbols.tables.dsotable.DsoSymbolTable` in address space; ``skipped`` lines).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import numpy as np

from perftui.symbols.files.safefile import SymbolFileError, read_text
from perftui.symbols.tables.dsotable import KIND_FUNC, DsoSymbolTable

__all__ = ["DEFAULT_MAX_PERF_MAP", "PerfMap", "load_perf_map", "parse_perf_map",
           "perf_map_path"]

#: Largest perf map read.
DEFAULT_MAX_PERF_MAP = 256 << 20
_U64_MAX = (1 << 64) - 1
# strtoull(s, &end, 16): white space, a sign, an optional 0x before a hex digit, digits.
_STRTOULL = re.compile(r"[ \t\n\v\f\r]*([+-]?)(?:0[xX](?=[0-9a-fA-F]))?([0-9a-fA-F]+)")


@dataclass
class PerfMap:
    """A parsed perf map: its symbols and how many lines were skipped."""

    source: str
    table: DsoSymbolTable
    skipped: int = 0


def perf_map_path(pid: int, directory: str = "/tmp") -> str:
    """Where perf looks for the map of process ``pid``."""
    return os.path.join(directory, f"perf-{int(pid)}.map")


def _strtoull(s: str, pos: int) -> tuple[int, int]:
    """(value, characters consumed) as C's strtoull(s + pos, &end, 16)."""
    m = _STRTOULL.match(s, pos)
    if m is None:
        return 0, 0
    value = int(m.group(2), 16)
    value = _U64_MAX if value > _U64_MAX else value
    if m.group(1) == "-":
        value = (-value) & _U64_MAX
    return value, m.end() - pos


def parse_perf_map(text: str, source: str = "perf map") -> PerfMap:
    """Parse perf map text with perf 6.1's rules (see the module docstring)."""
    starts: list[int] = []
    sizes: list[int] = []
    names: list[str] = []
    skipped = 0
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for i, line in enumerate(lines):
        if i == len(lines) - 1 and not text.endswith("\n"):
            line = line[:-1]  # perf drops the last character of every line as "\n"
        n = len(line)
        start, used = _strtoull(line, 0)
        pos = used + 1
        if pos + 2 >= n:
            skipped += 1
            continue
        size, used = _strtoull(line, pos)
        pos += used + 1
        if pos + 2 >= n:
            skipped += 1
            continue
        starts.append(start)
        sizes.append(size)
        names.append(line[pos:])
    s = np.array(starts, dtype=np.uint64)
    with np.errstate(over="ignore"):
        e = s + np.array(sizes, dtype=np.uint64)
    table = DsoSymbolTable(s, e, names, np.full(len(names), KIND_FUNC, dtype=np.uint8), "address")
    return PerfMap(source, table, skipped)


def load_perf_map(pid: int, directory: str = "/tmp",
                  max_size: int = DEFAULT_MAX_PERF_MAP) -> PerfMap:
    """Read ``<directory>/perf-<pid>.map`` (a regular file, size-capped)."""
    path = perf_map_path(pid, directory)
    try:
        text = read_text(path, max_size)
    except SymbolFileError:
        raise
    return parse_perf_map(text, path)
