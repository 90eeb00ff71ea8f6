"""``perftui diff`` from two indexed recordings to words: perf diff's table, or JSON."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TextIO

from ..analysis.diff import (
    DEFAULT_COMPUTE,
    DEFAULT_DIFF_SORT,
    compare_recordings,
    mismatches,
)
from ..analysis.filters import Filter, FilterError, parse_int_list, parse_time_range
from ..analysis.summary import time_span
from ..perfdata import Recording
from ..symbols.resolver import Resolver, SymbolOptions
from ..textsafe import safe
from .diff import diffs_json, print_diff, print_preamble
from .records import jsonable

#: perf diff's files when none are named (builtin-diff.c data_init).
DEFAULT_FILES = ("perf.data.old", "perf.data")


def diff_files(named: list[str]) -> tuple[str, str]:
    """OLD and NEW from the command line, as perf diff takes them: none -> perf.data.old
    and perf.data; one -> perf.data.old and that file; two -> those."""
    if len(named) > 2:
        raise ValueError("give at most two recordings: OLD NEW")
    if not named:
        return DEFAULT_FILES
    if len(named) == 1:
        return DEFAULT_FILES[0], named[0]
    return named[0], named[1]


@dataclass
class DiffRequest:
    """What ``perftui diff`` was asked for."""

    keys: tuple[str, ...] = DEFAULT_DIFF_SORT
    compute: str = DEFAULT_COMPUTE
    json: bool = False
    time: str | None = None  # START,END for both, or OLD:NEW ranges (perf's form)
    cpu: str | None = None
    symbols: SymbolOptions = field(default_factory=SymbolOptions)


def side_filters(old: Recording, new: Recording, time: str | None, cpu: str | None
                 ) -> tuple[Filter, Filter]:
    """Each side's filter: ``time`` is ``START,END`` (seconds from each recording's first
    sample) for both, or ``OLD_RANGE:NEW_RANGE``; raises FilterError."""
    cpus = parse_int_list(cpu, "cpu list") if cpu else None
    out = []
    parts = time.split(":") if time else []
    if len(parts) > 2:
        raise FilterError(f"bad time {time!r}: expected START,END or OLD_RANGE:NEW_RANGE")
    for k, rec in enumerate((old, new)):
        text = parts[min(k, len(parts) - 1)] if parts else ""
        rng = parse_time_range(text, time_span(rec)[0]) if text.strip() else None
        out.append(Filter(time=rng, cpus=cpus))
    return out[0], out[1]


def run_diff(old: Recording, new: Recording, req: DiffRequest, out: TextIO,
             err: TextIO) -> None:
    """Write the diff of two indexed recordings to ``out`` (notes to ``err``)."""
    fo, fn = side_filters(old, new, req.time, req.cpu)
    ro, rn = Resolver(old, req.symbols), Resolver(new, req.symbols)
    eds = compare_recordings(ro, rn, req.keys, req.compute, fo, fn)
    warnings = mismatches(old, new)
    old_file, new_file = str(old.path or "-"), str(new.path or "-")
    if req.json:
        doc = diffs_json(eds, old_file, new_file, warnings, req.keys, req.compute)
        out.write(json.dumps(jsonable(doc)) + "\n")
    else:
        print_preamble(old_file, new_file, warnings, out)
        for i, ed in enumerate(eds):
            print_diff(ed, out, first=i == 0)
    for side, res in (("OLD", ro), ("NEW", rn)):
        for n in dict.fromkeys(res.notes):
            err.write(safe(f"perftui diff: {side}: {n}") + "\n")
