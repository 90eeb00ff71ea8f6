"""``perftui diff`` from two recordings to words: perf diff's table, or JSON.

The recordings are read one after the other (index, name, group, then let go), so the
peak memory is about one recording's, not two.  Each side's names are those ``report``
keeps in the index cache (:func:`~perftui.symbols.naming.samplestore.sample_locs`): a
recording already reported is not named again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TextIO

from ..analysis.diff import (
    DEFAULT_COMPUTE,
    Setup,
    SideTable,
    diff_events,
    mismatches,
    recording_tables,
    side_tables,
)
from ..analysis.filters import (
    Filter,
    FilterContext,
    FilterError,
    cpu_list,
    parse_time_range,
)
from ..analysis.offcpu import OFFCPU_EVENT, charged, off_cpu, offcpu_attr
from ..analysis.report import sample_rows
from ..analysis.sortkeys import DEFAULT_DIFF_SORT
from ..analysis.srclinelocs import SOURCE_KEYS
from ..analysis.summary import sample_bounds, time_span
from ..perfdata import PerfDataError, Recording, open_recording
from ..perfdata.indexcache import IndexCache
from ..symbols.naming.resolver import SymbolOptions
from ..symbols.naming.samplelocs import SampleLocs
from ..symbols.tables.cache import SymbolCache
from ..textsafe import safe
from .diff import diffs_json, print_diff, print_preamble
from .records import jsonable
from .session import by_source_line, named_samples

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
    time: str | None = None  # START,END for both, or OLD_RANGE:NEW_RANGE (perf's form)
    cpu: str | None = None
    symbols: SymbolOptions = field(default_factory=SymbolOptions)
    cache: IndexCache | None = None  # the index cache (None: --no-cache)
    #: --event: only this event (``offcpu-time``: made from sched_switch where a recording
    #: has no event of that name)
    event: str | None = None
    #: --children: each row weighs the samples through it (their stacks), not its own
    children: bool = False
    #: -t: the text table's separator between columns (None: aligned by spaces)
    field_sep: str | None = None


def time_ranges(time: str | None) -> tuple[str, str]:
    """OLD's and NEW's ranges from ``--time``, as perf diff takes them: one for both
    (a percentage is of each recording's own span, ``1.5s`` from each one's first sample),
    or ``OLD:NEW``; raises FilterError."""
    if not time:
        return "", ""
    parts = time.split(":")
    if len(parts) > 2:
        raise FilterError(f"bad time {time!r}: expected one range or OLD_RANGE:NEW_RANGE")
    for p in parts:
        if p.strip():
            parse_time_range(p, 0, 10**18)  # the syntax, before any file is read
    return parts[0], parts[-1]


def side_filter(rec: Recording, time: str, cpu: str | None) -> Filter:
    """One side's filter (``time`` in perftui's --time syntax, against that recording)."""
    rng = None
    if time.strip():
        first, last = sample_bounds(rec)
        rng = parse_time_range(time, first, last, origin=time_span(rec)[0])
    return Filter(time=rng, cpus=cpu_list(rec, cpu) if cpu is not None else None)


@dataclass
class Side:
    """One recording, read and grouped: what the diff needs of it after it is closed."""

    path: str
    tables: dict[tuple[int, int], tuple[str, SideTable]]
    setup: Setup
    notes: list[str]
    errors: list[PerfDataError]


Opener = Callable[[str], Recording]


def read_side(path: str, req: DiffRequest, time: str, cache: SymbolCache,
              opener: Opener | None = None) -> Side:
    """Index one recording (restored from the index cache when it has it, else kept
    there), name its samples (the cache's names when it keeps them, as ``report``'s),
    group them, then close it."""
    rec = (opener(path) if opener is not None else
           open_recording(path, spill=True, cache=req.cache, mapped=True))
    try:
        rec.build_index()
        flt = side_filter(rec, time, req.cpu)
        sl = named_samples(rec, req.symbols, req.children, cache)
        notes = list(sl.notes) + (list(rec.cache.notes) if rec.cache is not None else [])
        if SOURCE_KEYS & set(req.keys):
            sl = by_source_line(rec, req.symbols, sl, notes)
        setup = Setup.of(rec)
        if req.event is None:
            tables = recording_tables(rec, sl, req.keys, flt, req.children)
        else:
            tables, setup = event_tables(rec, sl, req, flt, notes)
        return Side(path, tables, setup, notes, list(rec.errors))
    finally:
        rec.close()


#: the event identity of a made ``offcpu-time`` (a sched_switch's tracepoint id differs
#: from kernel to kernel: the made event is the same one on both sides)
OFFCPU_IDENT = (-2, 0)


def event_tables(rec: Recording, sl: SampleLocs, req: DiffRequest, flt: Filter,
                 notes: list[str]) -> tuple[dict[tuple[int, int], tuple[str, SideTable]],
                                            Setup]:
    """The table of ``req.event`` alone, and the recording's setup saying only that event
    (its other events are not compared); a made ``offcpu-time`` weighs each switch-out by
    its time off the CPU (what it could not charge goes to ``notes``)."""
    name = req.event or ""
    names = [a.display_name for a in rec.attrs]
    made = offcpu_attr(rec) if name == OFFCPU_EVENT else None
    if name not in names and made is None:
        raise FilterError(f"no event {name!r} in {rec.path} (events: {', '.join(names)})")
    attr = names.index(name) if made is None else made
    rows = sample_rows(rec, replace(flt, attr=attr), FilterContext())
    if made is not None:
        oc = off_cpu(rec)
        sl, rows = charged(sl, rows, oc)
        notes += oc.notes
    tables = side_tables(rec, sl, rows, req.keys, req.children)
    a = rec.attrs[attr]
    ident = OFFCPU_IDENT if made is not None else (a.type, a.config)
    got = next(iter(tables.values()), None)  # (the one event's table, if it has samples)
    out = {ident: (name, got[1])} if got is not None else {}
    return out, replace(Setup.of(rec), events=((ident, name),))


def run_diff(old_path: str, new_path: str, req: DiffRequest, out: TextIO,
             err: TextIO, opener: Opener | None = None) -> list[PerfDataError]:
    """Write the diff of two recordings to ``out`` (notes to ``err``); returns the decode
    errors of both (everything decoded before a fault is compared).  ``opener`` opens a
    recording (default: :func:`open_recording` with the request's index cache)."""
    t_old, t_new = time_ranges(req.time)
    cache = SymbolCache()  # a file both recordings name (a library, kallsyms) is read once
    old = read_side(old_path, req, t_old, cache, opener)
    new = read_side(new_path, req, t_new, cache, opener)
    eds = diff_events(old.tables, new.tables, old.setup.events, new.setup.events, req.keys,
                      req.compute)
    warnings = mismatches(old.setup, new.setup)
    if req.json:
        doc = diffs_json(eds, old.path, new.path, warnings, req.keys, req.compute)
        out.write(json.dumps(jsonable(doc)) + "\n")
    else:
        print_preamble(old.path, new.path, warnings, out)
        for i, ed in enumerate(eds):
            print_diff(ed, out, first=i == 0, sep=req.field_sep)
    for name, side in (("OLD", old), ("NEW", new)):
        for n in dict.fromkeys(side.notes):
            err.write(safe(f"perftui diff: {name}: {n}") + "\n")
    return old.errors + new.errors
