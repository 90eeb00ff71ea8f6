"""``perftui report`` from an indexed recording to words: the hotspot table (text in perf
report --stdio's shape, or JSON), folded stacks, a speedscope file or a pprof file."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from ..analysis.callgraph import (
    CallGraphOptions,
    RowGraphs,
    for_rows,
    order_callers_first,
    row_graphs,
)
from ..analysis.eventgroup import event_groups, group_table
from ..analysis.filters import Filter, FilterContext
from ..analysis.offcpu import OFFCPU_EVENT, StateColumn, charged, off_cpu
from ..analysis.report import (
    EventProfile,
    has_callchains,
    located_keep,
    located_profiles,
    sample_rows,
)
from ..analysis.sampleprofile import taker
from ..analysis.srclinelocs import SOURCE_KEYS
from ..analysis.summary import lost_samples
from ..analysis.transformlocs import transform_samples
from ..heap import trim
from ..perfdata import Recording, Sample
from ..symbols.modules.sectionmap import build_section_map
from ..symbols.naming.resolver import SymbolOptions
from ..symbols.naming.samplelocs import SampleLocs
from ..textsafe import safe
from .atomicfile import atomic_file

if TYPE_CHECKING:
    from ..analysis.stackcounts import ThreadRuns
from .callgraph import GraphPrinter
from .records import jsonable
from .report import (
    Names,
    RowGraph,
    TableOptions,
    frame_name,
    lost_samples_header,
    print_group_report,
    print_report,
    report_json,
)
from .session import by_source_line, named_samples
from .transformnames import TransformSpec, resolve_specs


@dataclass
class ReportRequest:
    """What ``perftui report`` was asked for."""

    keys: tuple[str, ...]
    children: bool | None = None  # None: perf's default (children when there are chains)
    json: bool = False
    folded: bool = False
    speedscope: str | None = None
    pprof: str | None = None  # a gzipped profile.proto written there
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
    #: the call graph under each row (-g); printed when the recording has callchains
    call_graph: CallGraphOptions = field(default_factory=CallGraphOptions)
    #: -n and --percent-limit
    table: TableOptions = field(default_factory=TableOptions)
    #: the sort order as given (perf leaves a graph's first frame out when it begins
    #: with "sym"); None: the default
    sort_given: str | None = None
    #: --event offcpu-time made from sched_switch (``flt.attr`` is the sched_switch event)
    offcpu: bool = False
    #: --focus-function and the other transforms, in the order given
    transforms: tuple[TransformSpec, ...] = ()

    def thread_or_dso_filtered(self) -> bool:
        """Whether a filter perf applies to its table's entries (not to the samples) is
        given: the ones its "absolute" percentages see through."""
        return bool(self.dsos or self.comms or self.flt.pids or self.flt.tids)


def run_report(rec: Recording, req: ReportRequest, out: TextIO, err: TextIO) -> None:
    """Write the report of an indexed recording to ``out`` (notes to ``err``)."""
    children = has_callchains(rec) if req.children is None else req.children
    if req.folded or req.speedscope or req.pprof:
        stacks_out(rec, req, out, err)
    else:
        table(rec, req, children, out, err)


def stacks_out(rec: Recording, req: ReportRequest, out: TextIO, err: TextIO) -> None:
    """Folded stacks, a speedscope file and/or a pprof file, from every sample's names
    (the cache's when they have them, as the table's)."""
    # (imported here: a table's report does without them, protobuf's ~0.1 s among them)
    from ..analysis.stackcounts import stack_counts
    from .export import folded_stacks, speedscope
    from .pprof import write_pprof

    sl = named_samples(rec, req.symbols, True)
    notes = list(sl.notes)
    keep = None
    if req.offcpu:  # the sched_switch samples, each weighing its time off the CPU
        oc = off_cpu(rec)
        sl, keep = charged(sl, sl.rows, oc)
        notes += oc.notes
    sl, kept = _transformed(req, sl, notes)
    pos = _positions(rec, req, sl, keep)
    if kept is not None:
        pos = _kept_positions(pos, kept, len(sl))
    if not taker(pos, len(sl))[0]:  # (the file is still written: an empty profile)
        notes.append(f"{rec.path}: no samples{_kept(req)}")
    timed = req.offcpu or _timed_event(rec, req)
    names = Names(sl.locs, lambda c: sl.comm_names[c], sl.thread_comm)

    def loc_name(loc: int) -> str:
        return frame_name(names.locs, loc, as_script=True)

    def comm_name(c: int) -> str:
        return sl.comm_names[c]

    if req.pprof:
        write_pprof(rec, sl, pos, req.pprof, loc_name)
    chains = bool(rec.attrs) and all(a.sample_type & Sample.CALLCHAIN for a in rec.attrs)
    counts = stack_counts(sl, pos, chains) if req.folded or req.speedscope else None
    if req.folded and counts is not None:
        for line, count in folded_stacks(counts.paths(timed), loc_name, comm_name):
            out.write(f"{line} {count}\n")
    if req.speedscope and counts is not None:
        doc = speedscope(counts.paths(timed), loc_name, comm_name,
                         lambda loc: names.locs.dso_name(loc, short=False),
                         os.path.basename(rec.path), "nanoseconds" if timed else "none",
                         _thread_paths(rec, sl, pos, timed, chains))
        write_atomically(req.speedscope, json.dumps(doc))
    _write_notes(notes, err)


def _thread_paths(rec: Recording, sl: SampleLocs, pos: np.ndarray | slice, timed: bool,
                  bare: bool) -> Iterator[tuple[str, Iterator[tuple[int, list[int], int]]]]:
    """Each thread's paths in time order (perf script's ``comm pid/tid`` its name, the
    heaviest thread first): what speedscope draws as the thread's flame chart."""
    from ..analysis.stackcounts import stack_frames, thread_runs

    c = rec.columns
    rows = sl.rows[np.arange(len(sl), dtype=np.int64)[pos]]
    memo: dict[tuple[int, int], list[int]] = {}

    def paths(r: ThreadRuns) -> Iterator[tuple[int, list[int], int]]:
        for comm, s, leaf, w in zip(r.comm.tolist(), r.stack.tolist(), r.leaf.tolist(),
                                    r.weight.tolist(), strict=True):
            key = (s, leaf if s < 0 else 0)
            if key not in memo:
                memo[key] = stack_frames(sl, s, leaf, bare)
            yield comm, memo[key], w

    for r in thread_runs(sl, pos, c["tid"][rows], c["pid"][rows], c["time"][rows], timed):
        yield f"{sl.comm_names[int(r.comm[0])]} {r.pid}/{r.tid}", paths(r)


def _transformed(req: ReportRequest, sl: SampleLocs, notes: list[str]
                 ) -> tuple[SampleLocs, np.ndarray | None]:
    """The names with the request's transforms applied to their stacks, and which samples
    are kept (None: no transforms)."""
    if not req.transforms:
        return sl, None
    locs, transforms, more = resolve_specs(req.transforms, sl.locs)
    notes += more
    return transform_samples(sl, transforms, locs)


def _kept_positions(pos: np.ndarray | slice, kept: np.ndarray, n: int) -> np.ndarray:
    at = np.arange(n, dtype=np.int64)[pos]
    out: np.ndarray = at[kept[at]]
    return out


def _timed_event(rec: Recording, req: ReportRequest) -> bool:
    """Whether the one event asked for counts time (perf's own ``offcpu-time``): its
    stacks are weighed by its period, in nanoseconds."""
    a = req.flt.attr
    return a is not None and 0 <= a < len(rec.attrs) and \
        rec.attrs[a].display_name == OFFCPU_EVENT


def _positions(rec: Recording, req: ReportRequest, sl: SampleLocs,
               keep: np.ndarray | None = None) -> np.ndarray | slice:
    """The positions in ``sl`` of the samples that the request's filters keep (and, given
    ``keep``, are among those rows)."""
    smap = build_section_map(rec) if req.flt.section else None
    rows = sl.rows if req.flt.empty else sample_rows(rec, req.flt,
                                                     FilterContext(comms=None, smap=smap))
    if keep is not None:
        rows = rows[np.isin(rows, keep)]
    pos = sl.positions(rows)
    if req.dsos or req.comms:
        pos = located_keep(sl, np.arange(len(sl))[pos], req.dsos, req.comms)
    return pos


def table(rec: Recording, req: ReportRequest, children: bool, out: TextIO,
          err: TextIO) -> None:
    """The hotspot table, from every sample's locations (resolved, or from the cache)."""
    graphs = (not req.json and req.call_graph.mode != "none" and has_callchains(rec))
    # with a cache the names are kept: with their stacks, so that every later output
    # (--children, a call graph, --folded, the browser) reuses them
    kept_whole = rec.cache is not None and has_callchains(rec)
    sl = named_samples(rec, req.symbols, children or graphs or kept_whole)
    notes = list(sl.notes)
    smap = build_section_map(rec) if req.flt.section else None
    rows = sl.rows if req.flt.empty else sample_rows(rec, req.flt,
                                                     FilterContext(comms=None, smap=smap))
    total_rows = None
    if req.percentage == "absolute" and req.thread_or_dso_filtered():
        every = replace(req.flt, pids=None, tids=None)
        total_rows = sl.rows if every.empty else sample_rows(
            rec, every, FilterContext(comms=None, smap=smap))
    columns = None
    if req.offcpu:  # the sched_switch samples, each weighing its time off the CPU
        oc = off_cpu(rec)
        sl, rows = charged(sl, rows, oc)
        if total_rows is not None:
            total_rows = total_rows[np.isin(total_rows, oc.rows)]
        columns = {"state": StateColumn(oc)}
        notes += oc.notes
    sl, kept = _transformed(req, sl, notes)
    if SOURCE_KEYS & set(req.keys):
        sl = by_source_line(rec, req.symbols, sl, notes)
    if kept is not None:  # (the samples a transform drops count nowhere, as the profiler's)
        rows = rows[kept[sl.positions(rows)]] if len(rows) else rows
        if total_rows is not None and len(total_rows):
            total_rows = total_rows[kept[sl.positions(total_rows)]]
    eps = located_profiles(rec, sl, rows, req.keys, children, req.dsos, req.comms,
                           total_rows, columns)
    if req.offcpu:
        eps = [replace(ep, event=OFFCPU_EVENT) for ep in eps]
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
        err.write(safe(f"perftui report: {rec.path}: no samples{_kept(req)}") + "\n")
    else:
        write_tables(rec, req, eps, names, sl.comm_names, out, sl if graphs else None,
                     columns)
    _write_notes(notes, err)


def write_tables(rec: Recording, req: ReportRequest, eps: list[EventProfile], names: Names,
                 comm_names: list[str], out: TextIO, sl: SampleLocs | None = None,
                 columns: dict[str, Any] | None = None) -> None:
    """The text: perf's lines above the tables, then each event's table in attr order, an
    event group's (as perf by default; none with --event) where its leader's would be;
    with ``sl`` (the names, callchains kept) each row's call graph under it (``columns``:
    per-sample key columns besides the index's, off-CPU's ``state``)."""
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
                table = group_table(g.name, members, comm_names)
                lead = by_attr.get(g.leader)
                graph = None
                if sl is not None and lead is not None:
                    rg = for_rows(_graphs(rec, sl, lead, req, columns), lead.profile,
                                  table.profile.rows)
                    order = order_callers_first(table.profile, rg, table.self_period)
                    table.self_period = [table.self_period[j] for j in order]
                    table.children_period = [table.children_period[j] for j in order]
                    table.samples = [table.samples[j] for j in order]
                    graph = _printer(rg, sl, req)
                print_group_report(table, names, out, frozenset(elided), req.time, graph,
                                   req.table)
        elif a not in in_group:
            ep = by_attr[a]
            graph = None
            if sl is not None:
                rg = _graphs(rec, sl, ep, req, columns)
                order_callers_first(ep.profile, rg)
                graph = _printer(rg, sl, req)
            print_report(ep.profile, names, ep.event, out, frozenset(elided), req.time,
                         graph, req.table)


def _graphs(rec: Recording, sl: SampleLocs, ep: EventProfile, req: ReportRequest,
            columns: dict[str, Any] | None = None) -> RowGraphs:
    c = rec.columns
    return row_graphs(sl, ep.positions, {"tid": c["tid"], "cpu": c["cpu"], **(columns or {})},
                      ep.profile, req.call_graph)


def _printer(rg: RowGraphs, sl: SampleLocs, req: ReportRequest) -> RowGraph:
    """What writes each row's graph (perf leaves the first frame of a single chain out
    when the sort order given begins with ``sym``)."""
    skip = req.sort_given is not None and req.sort_given.startswith("sym")
    return GraphPrinter(rg, sl.locs, skip, req.table.field_sep or ";").write


def _write_notes(notes: list[str], err: TextIO) -> None:
    for n in dict.fromkeys(notes):
        err.write(safe(f"perftui report: {n}") + "\n")


def _kept(req: ReportRequest) -> str:
    """How 'no samples' ends: whether filters left them out."""
    return "" if req.flt.empty and not (req.dsos or req.comms) else " that the filters keep"


def write_atomically(path: str, text: str) -> None:
    """Write ``path`` through a temporary file in its directory and a rename."""
    with atomic_file(path) as f:
        f.write(text)
