"""``perftui report`` from an indexed recording to words: the hotspot table (text in perf
report --stdio's shape, or JSON), folded stacks, or a speedscope file."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass, field, replace
from typing import Any, TextIO

from ..analysis.calltree import build_tree
from ..analysis.eventgroup import event_groups, group_table
from ..analysis.filters import Filter, FilterContext
from ..analysis.report import (
    EventProfile,
    has_callchains,
    located_profiles,
    resolved_blocks,
    sample_rows,
)
from ..analysis.sectionreport import keep_first_screen
from ..analysis.summary import lost_samples
from ..heap import trim
from ..perfdata import Recording
from ..symbols.modfiles import ModuleFiles
from ..symbols.resolver import Resolver, SymbolOptions
from ..symbols.samplestore import sample_locs
from ..symbols.sectionmap import build_section_map
from ..textsafe import safe
from .export import folded_stacks, speedscope
from .records import jsonable
from .report import (
    Names,
    frame_name,
    lost_samples_header,
    print_group_report,
    print_report,
    report_json,
)


@dataclass
class ReportRequest:
    """What ``perftui report`` was asked for."""

    keys: tuple[str, ...]
    children: bool | None = None  # None: perf's default (children when there are chains)
    json: bool = False
    folded: bool = False
    speedscope: str | None = None
    flt: Filter = field(default_factory=Filter)
    dsos: frozenset[str] | None = None
    comms: frozenset[str] | None = None
    symbols: SymbolOptions = field(default_factory=SymbolOptions)
    #: perf's --percentage: "absolute" (its default) weighs the rows that --comm, --dso,
    #: --pid and --tid keep against every sample of the event (--time and --cpu drop
    #: samples outright); "relative" against those kept
    percentage: str = "absolute"
    time: str | None = None  # --time as given (perf's header repeats it)
    #: event groups in one table each: None, the recording's (perf's default); True, every
    #: event in one (--group); False, none (--no-group)
    group: bool | None = None

    def thread_or_dso_filtered(self) -> bool:
        """Whether a filter perf applies to its table's entries (not to the samples) is
        given: the ones its "absolute" percentages see through."""
        return bool(self.dsos or self.comms or self.flt.pids or self.flt.tids)


def names_of(res: Resolver) -> Names:
    """The names the words need, from a resolver."""
    return Names(res.locs, lambda c: res.comm_names[c], res.thread_comm)


class IndexSaver:
    """A walked index kept in the cache for the next open, with what a reopened browser
    draws its first screen from (:func:`keep_first_screen`: ~0.5 s at 4.85 M records),
    before the names are kept with it (their attachment needs the entry).  Counted
    before the resolver is made: beside its thread model the counting's temporaries
    took a first report's peak from ~90 to ~125 MB of RssAnon."""

    def __init__(self, rec: Recording, opts: SymbolOptions) -> None:
        self.rec = rec
        self.smap = build_section_map(rec)
        self.files = ModuleFiles.of(rec, opts.modules_dirs)  # (the resolver's too)
        keep_first_screen(rec, self.smap, self.files)
        trim()  # the counting's temporaries
        self._saved = False

    def save(self) -> None:
        """Keep the index (once)."""
        if not self._saved:
            self._saved = True
            self.rec.save_index()


def run_report(rec: Recording, req: ReportRequest, out: TextIO, err: TextIO) -> None:
    """Write the report of an indexed recording to ``out`` (notes to ``err``)."""
    children = has_callchains(rec) if req.children is None else req.children
    saver = IndexSaver(rec, req.symbols) if rec.index_origin == "walk" else None
    try:
        if req.folded or req.speedscope:
            stacks_out(rec, req, out, err, saver)
        else:
            table(rec, req, children, out, err, saver)
    finally:
        if saver is not None:
            saver.save()


def _resolver(rec: Recording, req: ReportRequest, saver: IndexSaver | None) -> Resolver:
    """The resolver that names every sample; the index saved once it is made."""
    res = Resolver(rec, req.symbols, smap=saver.smap if saver else None,
                   modfiles=saver.files if saver else None, kernel_first=True)
    if saver is not None:
        saver.save()
    return res


def stacks_out(rec: Recording, req: ReportRequest, out: TextIO, err: TextIO,
               saver: IndexSaver | None = None) -> None:
    """Folded stacks and/or a speedscope file."""
    res = _resolver(rec, req, saver)
    rows = sample_rows(rec, req.flt, FilterContext(comms=None, smap=res.smap))
    tree = build_tree(resolved_blocks(res, rows, True, req.dsos, req.comms), top_down=True)
    names = names_of(res)

    def loc_name(loc: int) -> str:
        return frame_name(names.locs, loc, as_script=True)

    def comm_name(c: int) -> str:
        return res.comm_names[c]

    if req.folded:
        for line, count in folded_stacks(tree, loc_name, comm_name):
            out.write(f"{line} {count}\n")
    if req.speedscope:
        doc = speedscope(tree, loc_name, comm_name,
                         lambda loc: names.locs.dso_name(loc, short=False),
                         os.path.basename(rec.path))
        write_atomically(req.speedscope, json.dumps(doc))
    _notes(res, err)


def table(rec: Recording, req: ReportRequest, children: bool, out: TextIO, err: TextIO,
          saver: IndexSaver | None = None) -> None:
    """The hotspot table, from every sample's locations (resolved, or from the cache)."""
    # (the resolver is not kept: its symbol tables go before the counting)
    sl = sample_locs(rec, req.symbols, children, lambda: _resolver(rec, req, saver))[0]
    trim()
    smap = build_section_map(rec) if req.flt.section else None
    rows = sl.rows if req.flt.empty else sample_rows(rec, req.flt,
                                                     FilterContext(comms=None, smap=smap))
    total_rows = None
    if req.percentage == "absolute" and req.thread_or_dso_filtered():
        every = replace(req.flt, pids=None, tids=None)
        total_rows = sl.rows if every.empty else sample_rows(
            rec, every, FilterContext(comms=None, smap=smap))
    eps = located_profiles(rec, sl, rows, req.keys, children, req.dsos, req.comms,
                           total_rows)
    trim()  # the counting's temporaries: freed, given back before the rows are written
    names = Names(sl.locs, lambda c: sl.comm_names[c], sl.thread_comm)
    if req.json:
        docs = [report_json(ep.profile, names, ep.event) for ep in eps]
        d: dict[str, Any] = dict(docs[0]) if docs else {
            "event": None, "total_period": 0, "total_samples": 0, "sort": list(req.keys),
            "children": children, "rows": []}
        if len(docs) > 1:
            d["events"] = docs
        out.write(json.dumps(jsonable(d)) + "\n")
    elif not eps:  # (perf: "The FILE data has no samples!", status 0)
        kept = "" if req.flt.empty and not (req.dsos or req.comms) else \
            " that the filters keep"
        err.write(safe(f"perftui report: {rec.path}: no samples{kept}") + "\n")
    else:
        write_tables(rec, req, eps, names, sl.comm_names, out)
    _write_notes(sl.notes, err)


def write_tables(rec: Recording, req: ReportRequest, eps: list[EventProfile], names: Names,
                 comm_names: list[str], out: TextIO) -> None:
    """The text: perf's lines above the tables, then each event's table in attr order, an
    event group's (as perf by default; none with --event) where its leader's would be."""
    elided = {k: next(iter(v)) for k, v in (("comm", req.comms), ("dso", req.dsos))
              if v is not None and len(v) == 1}
    out.write(lost_samples_header(lost_samples(rec), elided))
    groups = [] if req.group is False or req.flt.attr is not None else \
        event_groups(rec, force=bool(req.group))
    by_attr = {ep.attr: ep for ep in eps}
    leaders = {g.leader: g for g in groups}
    in_group = {a for g in groups for a in g.members}
    for a in sorted(by_attr.keys() | leaders.keys()):
        g = leaders.get(a)
        if g is not None:
            members = [by_attr[m].profile if m in by_attr else None for m in g.members]
            if any(p is not None for p in members):
                print_group_report(group_table(g.name, members, comm_names), names, out,
                                   frozenset(elided), req.time)
        elif a not in in_group:
            ep = by_attr[a]
            print_report(ep.profile, names, ep.event, out, frozenset(elided), req.time)


def _notes(res: Resolver, err: TextIO) -> None:
    _write_notes(res.notes, err)


def _write_notes(notes: list[str], err: TextIO) -> None:
    for n in dict.fromkeys(notes):
        err.write(safe(f"perftui report: {n}") + "\n")


def write_atomically(path: str, text: str) -> None:
    """Write ``path`` through a temporary file in its directory and a rename."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".perftui-", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
