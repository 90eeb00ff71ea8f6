"""Two recordings compared as ``perf diff`` compares them (tools/perf/builtin-diff.c).

Each recording's samples are grouped by the sort keys into *self* profiles (perf diff drops
callchains), then every row is named by what is comparable across recordings: a symbol by its
NAME (not its address: two builds of a program compare), a dso by its short name, a comm by
its text, a pid (perf's thread) and a cpu by number, a module and a section by name.  All
unresolved addresses of a row collapse into one (perf's ``sort__sym_sort`` compares symbols
by name and treats two missing symbols as equal), shown by the lowest address.

A row's share is its period over its recording's total period.  Rows are paired by name;
a row only in OLD keeps its baseline and has no delta, a row only in NEW has no baseline and
a delta of its whole share (perf's "dummy" entries).  The order is perf's: the computation's
value (rows with a NEW side first, largest ``|delta|``, ``delta`` or ``ratio`` first; for
``ratio`` the NEW-only rows after the paired ones), then the baseline period, then the keys
ascending (names by strcmp, unresolved symbols last, numbers by value).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..perfdata import Feature, Recording
from ..symbols.naming.locations import Locations
from ..symbols.naming.samplelocs import SampleLocs
from .filters import Filter, FilterContext
from .profile import Profile
from .report import located_profiles, sample_rows
from .sortkeys import SORT_KEYS, Names

COMPUTES = ("delta-abs", "delta", "ratio")
DEFAULT_COMPUTE = "delta-abs"


#: A row's identity across recordings: one value per sort key (str, int, or None for an
#: unresolved symbol).
Ident = tuple[Any, ...]


class ComputeError(ValueError):
    """An unknown computation."""


def parse_compute(text: str) -> str:
    """``delta``, ``delta-abs`` or ``ratio`` (perf's ``-c``)."""
    c = text.strip().lower()
    if c not in COMPUTES:
        raise ComputeError(f"unknown computation {text!r} (use {', '.join(COMPUTES)})")
    return c


@dataclass
class SideEntry:
    """One row of one recording: its period, sample count and a location that names it."""

    period: int
    samples: int
    loc: int  # in the side's Locations: the symbol's name and [k]/[.]


@dataclass
class SideTable:
    """One recording's self profile with rows keyed by :data:`Ident`."""

    keys: tuple[str, ...]
    total_period: int
    total_samples: int
    entries: dict[Ident, SideEntry]
    locs: Locations
    thread_names: dict[int, str] = field(default_factory=dict)  # tid -> its last name (pid)

    def rollup(self, keys: Sequence[str]) -> SideTable:
        """The same samples grouped by ``keys`` (each one of this table's keys)."""
        keys = tuple(keys)
        idx = [self.keys.index(k) for k in keys]
        sym_at = keys.index("sym") if "sym" in keys else None
        out: dict[Ident, SideEntry] = {}
        for ident, e in self.entries.items():
            _merge(out, tuple(ident[i] for i in idx), e, self.locs, sym_at)
        return SideTable(keys, self.total_period, self.total_samples, out, self.locs,
                         self.thread_names)

    def only(self, where: dict[str, Any]) -> SideTable:
        """The rows whose key values equal ``where`` (a drill-down); the total stays the
        recording's, so shares stay shares of the whole recording."""
        idx = [(self.keys.index(k), v) for k, v in where.items()]
        ents = {ident: e for ident, e in self.entries.items()
                if all(ident[i] == v for i, v in idx)}
        return SideTable(self.keys, self.total_period, self.total_samples, ents, self.locs,
                         self.thread_names)


def _merge(out: dict[Ident, SideEntry], ident: Ident, e: SideEntry, locs: Locations,
           sym_at: int | None) -> None:
    have = out.get(ident)
    if have is None:
        out[ident] = SideEntry(e.period, e.samples, e.loc)
        return
    have.period += e.period
    have.samples += e.samples
    # unresolved addresses collapse into one row named by the lowest of them (the first
    # perf meets in its address-ordered input tree)
    if sym_at is not None and ident[sym_at] is None and locs.start[e.loc] < locs.start[have.loc]:
        have.loc = e.loc


def side_table(prof: Profile, comm_names: Sequence[str],
               thread_comm: Callable[[int], str] | None = None,
               children: bool = False) -> SideTable:
    """A profile's rows named by what compares across recordings (each key's
    :meth:`~.sortkeys.SortKey.ident`); ``thread_comm`` names the threads of a ``pid`` key
    (kept as a dict: the table does not hold on to the resolver); ``children``: each row
    weighs its children's period (the profile's), not its self."""
    locs = prof.codes.locs
    names = Names(locs, comm_names.__getitem__, thread_comm or (lambda t: ""))
    keys = [SORT_KEYS[k] for k in prof.keys]
    sym_at = prof.keys.index("sym") if "sym" in prof.keys else None
    out: dict[Ident, SideEntry] = {}
    for r in prof.rows:
        ident = tuple(k.ident(prof.codes, names, code, r.loc)
                      for k, code in zip(keys, r.key, strict=True))
        period, n = ((r.children_period, r.children_samples) if children
                     else (r.self_period, r.samples))
        _merge(out, ident, SideEntry(period, n, r.loc), locs, sym_at)
    threads: dict[int, str] = {}
    if "pid" in prof.keys and thread_comm is not None:
        at = prof.keys.index("pid")
        threads = {ident[at]: thread_comm(ident[at]) for ident in out}
    return SideTable(prof.keys, prof.total_period, prof.total_samples, out, locs, threads)


def empty_table(keys: tuple[str, ...]) -> SideTable:
    """A recording with no samples of an event."""
    return SideTable(keys, 0, 0, {}, Locations())


@dataclass
class DiffRow:
    """One compared row: shares in percent of each recording's total period."""

    key: Ident
    old: SideEntry | None
    new: SideEntry | None
    baseline: float | None  # OLD share, None when the row is only in NEW
    share: float | None  # NEW share, None when the row is only in OLD
    delta: float | None  # NEW share - OLD share; None when only in OLD (perf shows nothing)
    ratio: float | None  # NEW period / OLD period; None unless in both

    @property
    def loc(self) -> int:
        """The location naming the row (OLD's when both have it, as perf keeps the
        baseline's entry)."""
        e = self.old if self.old is not None else self.new
        assert e is not None
        return e.loc


@dataclass
class Diff:
    """The compared table of one event."""

    keys: tuple[str, ...]
    compute: str
    old: SideTable
    new: SideTable
    rows: list[DiffRow] = field(default_factory=list)

    def locs_of(self, row: DiffRow) -> Locations:
        """The location table that names ``row`` (OLD's when the row is in OLD)."""
        return self.old.locs if row.old is not None else self.new.locs

    def thread_name(self, row: DiffRow, tid: int) -> str:
        """A thread's name (``pid`` key) on the side that names the row."""
        side = self.old if row.old is not None else self.new
        return side.thread_names.get(tid, "")

    @property
    def matched(self) -> int:
        """Rows found in both recordings."""
        return sum(1 for r in self.rows if r.old is not None and r.new is not None)


def percent(period: int, total: int) -> float:
    """perf's ``period * 100.0 / total`` in doubles (the same rounding, so equal shares
    tie as in perf)."""
    return (float(period) * 100.0) / float(total) if total else 0.0


def diff_tables(old: SideTable, new: SideTable, compute: str = DEFAULT_COMPUTE) -> Diff:
    """Pair the rows of two tables by identity and order them as perf diff does."""
    if old.keys != new.keys:
        raise ValueError("both sides need the same keys")
    rows = []
    for ident in {**old.entries, **new.entries}:
        o, n = old.entries.get(ident), new.entries.get(ident)
        base = percent(o.period, old.total_period) if o is not None else None
        share = percent(n.period, new.total_period) if n is not None else None
        delta = share - (base or 0.0) if share is not None else None
        ratio = n.period / float(o.period or 1) if n is not None and o is not None else None
        rows.append(DiffRow(ident, o, n, base, share, delta, ratio))
    d = Diff(old.keys, compute, old, new, rows)
    order_diff(d)
    return d


def order_diff(d: Diff) -> None:
    """perf diff's output order (hist_entry__cmp_*_idx, then the baseline, then the keys)."""

    keys = [SORT_KEYS[k] for k in d.keys]

    def sort_key(r: DiffRow) -> tuple[Any, ...]:
        out: list[Any] = [0 if r.new is not None else 1]
        if r.new is not None:
            if d.compute == "ratio":
                # the ratio needs a baseline: NEW-only rows after the paired ones, among
                # themselves by NEW period (perf's ratio of a dummy is new / 1)
                out += [1 if r.old is None else 0,
                        -(r.ratio if r.ratio is not None else float(r.new.period))]
            elif d.compute == "delta":
                out.append(-(r.delta or 0.0))
            else:
                out.append(-abs(r.delta or 0.0))
        else:
            out += [0, 0.0] if d.compute == "ratio" else [0.0]
        out.append(-(r.old.period if r.old is not None else 0))
        locs = d.locs_of(r)
        out += [k.order(v, locs, r.loc) for k, v in zip(keys, r.key, strict=True)]
        return tuple(out)

    d.rows.sort(key=sort_key)


# -- recordings and events ------------------------------------------------------------------
@dataclass
class EventDiff:
    """The diff of one event: OLD's event and its match in NEW (perf's evsel__match2: the
    same attr type and config)."""

    event: str
    diff: Diff
    in_new: bool = True  # False: NEW has no such event (every row is OLD's alone)


@dataclass(frozen=True)
class Mismatch:
    """Something that makes two recordings less comparable (said at the top)."""

    what: str  # "events", "hosts", "architectures"
    old: str
    new: str


def side_tables(rec: Recording, sl: SampleLocs, rows: np.ndarray, keys: tuple[str, ...],
                children: bool = False) -> dict[tuple[int, int], tuple[str, SideTable]]:
    """One self table (``children``: children's, ``sl`` with its stacks) per event among
    ``rows`` (SAMPLE rows of ``sl``, the recording's named samples), by (attr type,
    config)."""
    out: dict[tuple[int, int], tuple[str, SideTable]] = {}
    for ep in located_profiles(rec, sl, rows, keys, children=children):
        a = rec.attrs[ep.attr] if rec.attrs else None
        ident = (a.type, a.config) if a is not None else (-1, -1)
        out.setdefault(ident, (ep.event, side_table(ep.profile, sl.comm_names,
                                                    sl.thread_comm, children)))
    return out


def event_ident(rec: Recording) -> list[tuple[tuple[int, int], str]]:
    """The events of a recording: ((type, config), name), in attr order."""
    return [((a.type, a.config), a.display_name) for a in rec.attrs]


def event_pairs(old: Iterable[tuple[int, int]], new: Iterable[tuple[int, int]]
                ) -> dict[tuple[int, int], tuple[int, int]]:
    """NEW's event compared with each of OLD's events (by (attr type, config)).

    As perf pairs them (evsel__match2): the same type and config.  When neither
    recording's events match any of the other's and each has samples of one event only
    (cpu-clock against task-clock, cycles against cpu-clock), those two are compared:
    perf diff would show OLD's rows alone, but mismatched recordings are said so at the
    top and still compared.  ``old``/``new``: the events that have samples.
    """
    o, n = list(dict.fromkeys(old)), list(dict.fromkeys(new))
    pairs = {i: i for i in o if i in n}
    if not pairs and len(o) == 1 and len(n) == 1:
        pairs[o[0]] = n[0]
    return pairs


def diff_events(old: dict[tuple[int, int], tuple[str, SideTable]],
                new: dict[tuple[int, int], tuple[str, SideTable]],
                old_events: Iterable[tuple[tuple[int, int], str]],
                new_events: Iterable[tuple[tuple[int, int], str]],
                keys: tuple[str, ...], compute: str = DEFAULT_COMPUTE) -> list[EventDiff]:
    """One diff per OLD event, in OLD's order (perf iterates the baseline's events, those
    without samples too; NEW's events without a match are not compared, as in perf, but
    for :func:`event_pairs`' one event against one other)."""
    out = []
    seen = set()
    in_new = {i for i, _n in new_events} | set(new)
    pairs = event_pairs(old, new)
    for ident, name in old_events:
        if ident in seen:
            continue
        seen.add(ident)
        o = old.get(ident)
        match = pairs.get(ident, ident)
        n = new.get(match)
        d = diff_tables(o[1] if o else empty_table(keys), n[1] if n else empty_table(keys),
                        compute)
        out.append(EventDiff(o[0] if o else name, d, in_new=match in in_new))
    return out


@dataclass(frozen=True)
class Setup:
    """What a recording says about where and how it was made (to compare two)."""

    events: tuple[tuple[tuple[int, int], str], ...]
    hostname: str | None
    arch: str | None

    @staticmethod
    def of(rec: Recording) -> Setup:
        host, arch = rec.feature(Feature.HOSTNAME), rec.feature(Feature.ARCH)
        return Setup(tuple(event_ident(rec)), None if host is None else str(host),
                     None if arch is None else str(arch))


def mismatches(old: Setup, new: Setup) -> list[Mismatch]:
    """What differs between the recordings' setups: their events, hosts, architectures."""
    out = []
    if {i for i, _n in old.events} != {i for i, _n in new.events}:
        out.append(Mismatch("events", ", ".join(n for _i, n in old.events) or "none",
                            ", ".join(n for _i, n in new.events) or "none"))
    for what, a, b in (("hosts", old.hostname, new.hostname),
                       ("architectures", old.arch, new.arch)):
        if a is not None and b is not None and a != b:
            out.append(Mismatch(what, a, b))
    return out


def recording_tables(rec: Recording, sl: SampleLocs, keys: tuple[str, ...],
                     flt: Filter | None = None, children: bool = False
                     ) -> dict[tuple[int, int], tuple[str, SideTable]]:
    """:func:`side_tables` of one recording's named samples that pass ``flt``."""
    rows = sl.rows if flt is None or flt.empty else sample_rows(rec, flt, FilterContext())
    return side_tables(rec, sl, rows, keys, children)
