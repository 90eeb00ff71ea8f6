"""``perftui annotate``: one function of an indexed recording, disassembled with its
samples per instruction, as text in perf annotate --stdio's shape or as JSON.

Exit status (:func:`run_annotate`'s return value): 0 the function is annotated (a data
symbol too: it says it is not code); 1 its code cannot be read (no file, an unreadable or
hostile file, kernel symbols from kallsyms only: the one-line reason on standard error,
and the JSON, with no instructions, still written); 2 no function of that name (perf 6.1
prints "The perf.data data has no samples!" and exits 0 there; perftui treats an unknown
name as a usage error, as ``report --event`` does an unknown event).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, TextIO

import numpy as np

from ..analysis.annotatefunction import (
    FunctionChoice,
    SampleLeaves,
    annotate_function,
    choose_function,
)
from ..analysis.eventgroup import event_groups
from ..analysis.filters import Filter
from ..analysis.offcpu import OFFCPU_EVENT, off_cpu
from ..analysis.offcpuannotate import waits
from ..analysis.report import sample_rows
from ..perfdata import Recording
from ..symbols.code.codeloc import CodeImages, FunctionRef
from ..symbols.naming.resolver import Resolver, SymbolOptions
from ..textsafe import safe
from .annotate import function_dict
from .annotatetext import print_annotation
from .records import jsonable
from .report import time_text

__all__ = ["AnnotateRequest", "run_annotate"]


@dataclass
class AnnotateRequest:
    """What ``perftui annotate`` was asked for."""

    symbol: str
    dso: str | None = None
    attr: int | None = None  # --event: only this event's samples
    json: bool = False
    source: bool = True
    percent_type: str = "local-period"
    show_nr_samples: bool = False
    group: bool = False  # --group: every event in one annotation
    symbols: SymbolOptions = field(default_factory=SymbolOptions)
    #: --event offcpu-time made from sched_switch (``attr`` is the sched_switch event):
    #: the time off the CPU of the stacks through the function, where they pass it
    offcpu: bool = False


def _where(res: Resolver, ref: FunctionRef) -> str:
    d = res.locs.dsos[ref.dso]
    return d.short_name + (f" {ref.section}" if ref.section else "")


def run_annotate(rec: Recording, req: AnnotateRequest, out: TextIO, err: TextIO) -> int:
    """Annotate ``req.symbol``; return the exit status (see the module docstring)."""
    res = Resolver(rec, req.symbols)
    rows = sample_rows(rec, Filter(attr=req.attr) if req.attr is not None else None)
    if req.offcpu:
        return _annotate_waits(rec, res, rows, req, out, err)
    leaves = SampleLeaves.of(res, rows)
    choice = choose_function(res, leaves, req.symbol, req.dso)
    if choice is None:
        where = f" in {req.dso}" if req.dso else " in the dsos that have samples"
        hint = "" if req.dso else " (--dso DSO looks in any dso of the recording)"
        err.write(safe(f"perftui annotate: no function {req.symbol!r}{where}{hint}") + "\n")
        _notes(res, err)
        return 2
    for ref, n in choice.others:
        err.write(safe(f"perftui annotate: {req.symbol} is also in {_where(res, ref)} "
                       f"({n} samples); --dso picks one") + "\n")
    dso = res.locs.dsos[choice.ref.dso].short_name
    images = CodeImages()
    problem: str | None = None
    warned: set[str] = set()
    for columns, event in _events(rec, leaves, choice, req, err):
        fas = [annotate_function(res, c, choice.ref, images, percent_type=req.percent_type,
                                 source=req.source) for c in columns]
        fa = fas[0]
        if req.json:
            others = [{"dso": res.locs.dsos[r.dso].short_name, "sym": r.name,
                       "section": r.section, "samples": n} for r, n in choice.others]
            doc: dict[str, Any] = function_dict(fa, dso, event, others)
            out.write(json.dumps(jsonable(doc)) + "\n")
        elif all(f.annotation is not None for f in fas):
            print_annotation([f.annotation for f in fas if f.annotation is not None], dso,
                             event, out, show_nr_samples=req.show_nr_samples,
                             source=req.source)
        for w in fa.warnings:
            if w not in warned:
                warned.add(w)
                err.write(safe(f"perftui annotate: {w}") + "\n")
        problem = fa.problem if fa.problem is not None else problem
    _notes(res, err)
    if problem is not None:
        err.write(safe(f"perftui annotate: cannot annotate {choice.ref.name}: {problem}")
                  + "\n")
        return 1
    return 0


def _annotate_waits(rec: Recording, res: Resolver, rows: np.ndarray, req: AnnotateRequest,
                    out: TextIO, err: TextIO) -> int:
    """``--event offcpu-time``: the function's instructions weighed by the nanoseconds of
    the switch-outs whose stacks pass through it (:mod:`~..analysis.offcpuannotate`)."""
    oc = off_cpu(rec)
    w = waits(res, rows, oc)
    choice = choose_function(res, w.leaves, req.symbol, req.dso)
    if choice is None:
        err.write(safe(f"perftui annotate: no function {req.symbol!r} on the stacks of "
                       f"{OFFCPU_EVENT}") + "\n")
        return 2
    for ref, n in choice.others:
        err.write(safe(f"perftui annotate: {req.symbol} is also in {_where(res, ref)} "
                       f"({n} samples); --dso picks one") + "\n")
    fa = annotate_function(res, w.leaves, choice.ref, CodeImages(),
                           percent_type=req.percent_type, source=req.source,
                           samples=w.of(choice.loc))
    dso = res.locs.dsos[choice.ref.dso].short_name
    if req.json:
        doc = function_dict(fa, dso, OFFCPU_EVENT)
        if fa.annotation is not None:  # (each instruction's time, in ns)
            for row, ns in zip(doc["instructions"], fa.annotation.counts.period.tolist(),
                               strict=True):
                row["period"] = int(ns)
        doc["period_unit"] = "ns"
        out.write(json.dumps(jsonable(doc)) + "\n")
    elif fa.annotation is not None:
        out.write(f"# Total time: {time_text(fa.annotation.counts.total_period)}\n")
        print_annotation([fa.annotation], dso, OFFCPU_EVENT, out,
                         show_nr_samples=req.show_nr_samples, source=req.source)
    for note in dict.fromkeys([*fa.warnings, *oc.notes, *res.notes]):
        err.write(safe(f"perftui annotate: {note}") + "\n")
    if fa.problem is not None:
        err.write(safe(f"perftui annotate: cannot annotate {choice.ref.name}: "
                       f"{fa.problem}") + "\n")
        return 1
    return 0


def _units(rec: Recording, force: bool) -> list[tuple[list[int], str]]:
    """What perf annotates apart, in the recording's order: each event group as one
    (its members, perf's group name), each event in no group alone (``force``: every
    event in one group, perf's ``--group``)."""
    names = [a.display_name for a in rec.attrs] or ["?"]
    groups = {g.leader: g for g in event_groups(rec, force)}
    members = {m for g in groups.values() for m in g.members}
    return [(list(groups[a].members), groups[a].name) if a in groups else ([a], names[a])
            for a in range(len(names)) if a in groups or a not in members]


def _events(rec: Recording, leaves: SampleLeaves, choice: FunctionChoice,
            req: AnnotateRequest, err: TextIO) -> list[tuple[list[SampleLeaves], str]]:
    """The annotations to print, each the samples of its columns and its title's event.
    ``--event``: that one.  Text: every event with samples of the chosen function, in the
    recording's order, as perf annotates each event apart (``__cmd_annotate`` walks the
    evlist); an event group as one annotation of a column per member, when its leader
    has samples of the function (perf walks the leader's entries); a function without
    samples: the event with the most samples (its group).  JSON (one object): the event
    with the most samples of the function, the others named on ``err``."""
    names = [a.display_name for a in rec.attrs] or ["?"]
    if req.attr is not None:
        return [([leaves], names[req.attr])]
    if len(names) <= 1:
        return [([leaves], names[0])]
    attrs = rec.columns["attr"][leaves.rows].astype(np.int64)

    def of(a: int) -> SampleLeaves:
        return SampleLeaves(leaves.rows[attrs == a], leaves.leaf[attrs == a])

    per = np.bincount(attrs[leaves.leaf == choice.loc], minlength=len(names))
    best = int(np.argmax(per if per.any() else np.bincount(attrs, minlength=len(names))))
    if not req.json:
        units = _units(rec, req.group)
        shown = [u for u in units if per[u[0][0]]] or [u for u in units if best in u[0]]
        return [([of(a) for a in m], name) for m, name in shown]
    for a in np.flatnonzero(per).tolist():
        if a != best:
            err.write(safe(f"perftui annotate: also {int(per[a])} samples of event "
                           f"{names[a]} (--event {names[a]})") + "\n")
    return [([of(best)], names[best])]


def _notes(res: Resolver, err: TextIO) -> None:
    for n in dict.fromkeys(res.notes):
        err.write(safe(f"perftui annotate: {n}") + "\n")
