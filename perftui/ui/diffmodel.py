"""The diff browser's data: two recordings, each side's tables under its own time range,
and the level of the drill-down shown.  No widgets here; the slow parts (indexing,
resolving, grouping, comparing) are called from the app's thread workers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from ..analysis.diff import (
    DEFAULT_COMPUTE,
    Diff,
    DiffRow,
    Mismatch,
    Setup,
    SideTable,
    diff_tables,
    empty_table,
    event_pairs,
    mismatches,
    recording_tables,
    side_tables,
)
from ..analysis.diffflame import DiffFlame, NamedStack, diff_flame
from ..analysis.filters import Filter, FilterContext
from ..analysis.offcpu import OFFCPU_EVENT, charged, off_cpu, offcpu_attr
from ..analysis.report import sample_rows
from ..analysis.sortkeys import NO_VALUE
from ..perfdata import Recording
from ..present.diffrun import OFFCPU_IDENT, side_filter
from ..present.diffstacks import event_stacks
from ..present.session import named_samples
from ..symbols.naming.resolver import SymbolOptions
from ..symbols.naming.samplelocs import SampleLocs
from ..symbols.tables.cache import SymbolCache
from .model import Model

#: Every table is grouped once by all the keys a view needs, then rolled up.
FULL_KEYS = ("module", "section", "dso", "sym")
COMPUTE_CYCLE = ("delta-abs", "delta", "ratio")

Tables = dict[tuple[int, int], tuple[str, SideTable]]
#: the keys of every table the levels show (offcpu-time's children tables are made for
#: each: a table of children's periods cannot be rolled up)
VIEW_KEYS: tuple[tuple[str, ...], ...] = (
    ("module", "section"), ("module",), ("module", "section", "sym"), ("dso", "sym"))


def offcpu_tables(rec: Recording, sl: SampleLocs, flt: Filter) -> dict[tuple[str, ...],
                                                                       SideTable]:
    """offcpu-time made from sched_switch (none without it): for each of
    :data:`VIEW_KEYS`, every row weighing the ns off the CPU of the stacks through it
    (``sl``: with its stacks)."""
    made = offcpu_attr(rec)
    if made is None:
        return {}
    rows = sample_rows(rec, replace(flt, attr=made), FilterContext())
    sl, rows = charged(sl, rows, off_cpu(rec))
    out: dict[tuple[str, ...], SideTable] = {}
    for keys in VIEW_KEYS:
        got = next(iter(side_tables(rec, sl, rows, keys, children=True).values()), None)
        out[keys] = got[1] if got is not None else empty_table(keys)
    return out


@dataclass(frozen=True)
class ViewOptions:
    """What ``perftui diff`` was asked for that the browser applies: ``--time`` (this
    side's range of it, perftui's --time syntax), ``--cpu``, ``--children`` and
    ``--event`` (the event shown first)."""

    time: str = ""
    cpu: str | None = None
    children: bool = False
    event: str | None = None

    def words(self) -> str:
        """How the head line says them ("" when none is given)."""
        out = ["children"] if self.children else []
        if self.cpu is not None:
            out.append(f"cpu {self.cpu}")
        return "  ".join(out)


@dataclass(frozen=True)
class Level:
    """Where the table is: the module sections (each module's total, then its sections,
    as the one-recording browser lists them), one section's symbols, or perf diff's flat
    ``dso,sym`` table."""

    view: str = "sections"
    module: str | None = None
    section: str | None = None

    @property
    def keys(self) -> tuple[str, ...]:
        if self.view == "symbols":
            return ("dso", "sym")
        if self.section is None:
            return ("module", "section")
        return ("module", "section", "sym")

    @property
    def where(self) -> dict[str, str]:
        if self.view == "sections" and self.module is not None and self.section is not None:
            return {"module": self.module, "section": self.section}
        return {}

    @property
    def shown(self) -> tuple[str, ...]:
        """The key columns the table shows (a section's symbols: only the symbol)."""
        return self.keys[-1:] if self.section is not None else self.keys

    @property
    def deepest(self) -> bool:
        return self.view == "symbols" or self.section is not None

    @property
    def by_module(self) -> bool:
        """The top of the drill-down: each module's total, then its sections."""
        return self.view == "sections" and self.section is None

    def title(self) -> str:
        if self.view == "symbols":
            return "symbols · perf diff's dso,sym"
        if self.section is None:
            return "module sections"
        sec = "" if self.section == NO_VALUE else f" {self.section}"
        return f"{self.module}{sec} ▸ symbols"


@dataclass(frozen=True)
class Line:
    """One row of the table: a compared row of ``of`` (a module's total when ``module``)."""

    row: DiffRow
    of: Diff
    module: bool = False


@dataclass
class Shown:
    """What the table shows of a level: its compared rows (``diff``), and the lines in
    order (at the top, each module's total followed by its sections)."""

    diff: Diff
    lines: list[Line]
    modules: Diff | None = None  # the modules' totals (the top level only)


def module_lines(modules: Diff, sections: Diff) -> list[Line]:
    """Each module's total, then its sections, as the one-recording browser's sections
    pane lists them: the modules in ``modules``' order (perf diff's order of ``--sort
    module``), a module's sections in ``sections``' order (of ``--sort module,section``).
    A module without sections (a user-space dso, the kernel image: its one section is
    ``-``) is its total alone."""
    of_module: dict[object, list[DiffRow]] = {}
    for r in sections.rows:
        of_module.setdefault(r.key[0], []).append(r)
    out = []
    for m in modules.rows:
        out.append(Line(m, modules, module=True))
        secs = of_module.get(m.key[0], [])
        if [r.key[1] for r in secs] != [NO_VALUE]:
            out += [Line(r, sections) for r in secs]
    return out


def first_section(sections: Diff, module: object) -> str | None:
    """The section Enter on a module's line opens: the first of the module's sections
    listed (as the one-recording browser opens a module's first section)."""
    return next((r.key[1] for r in sections.rows if r.key[0] == module), None)


class DiffSide:
    """One recording: its index, its samples' names (named once: the index cache's when it
    keeps them) and tables under its time range."""

    def __init__(self, name: str, rec: Recording, modules_dirs: list[str],
                 symbols: SymbolOptions, cache: SymbolCache, options: ViewOptions | None = None
                 ) -> None:
        self.name = name  # OLD or NEW
        self.rec = rec
        self.options = options or ViewOptions()
        #: the samples ``--time`` (this side's range of it) and ``--cpu`` keep: set once
        #: indexed; the timeline's range narrows it
        self.base = Filter()
        #: with ``--children``: each of :data:`VIEW_KEYS`' tables of children's periods
        self.children: dict[tuple[str, ...], Tables] = {}
        self.model = Model(rec, modules_dirs)  # what the timeline reads
        self.symbols = symbols
        self.cache = cache
        self.sl: SampleLocs | None = None  # with their stacks: the tables and the graph
        self.tables: Tables = {}
        self.offcpu: dict[tuple[str, ...], SideTable] = {}  # offcpu-time's, by keys
        self.time_range: tuple[int, int] | None = None
        self.ready = False
        self.error: str | None = None
        self.lock = threading.Lock()  # one computation at a time

    def load(self, progress: Callable[[int, int], None] | None = None) -> None:
        """Index the recording, name its samples, then group them (in a worker)."""
        self.rec.build_index(progress=progress, budget=0.25)
        self.model.update_stats()
        self.base = side_filter(self.rec, self.options.time, self.options.cpu)
        # with their stacks, as report and the browser keep them: the flame graph (and
        # offcpu-time's tables, weighing the stacks through each row) name nothing again
        self.sl = named_samples(self.rec, self.symbols, True, self.cache)
        self.compute()
        self.ready = True

    def compute(self) -> Tables:
        """Group the samples in the current time range (in a worker)."""
        with self.lock:
            rng = self.time_range
            assert self.sl is not None
            flt = self.base.within(rng)
            tables = recording_tables(self.rec, self.sl, FULL_KEYS, flt)
            children = {keys: recording_tables(self.rec, self.sl, keys, flt, children=True)
                        for keys in VIEW_KEYS} if self.options.children else {}
            offcpu = offcpu_tables(self.rec, self.sl, flt)
            if rng == self.time_range:
                self.tables, self.offcpu, self.children = tables, offcpu, children
            return tables

    def stacks(self, event: tuple[int, int]) -> list[NamedStack]:
        """The named stacks of ``event`` in the current time range (in a worker; from the
        names :meth:`load` made)."""
        with self.lock:
            sl, rng = self.sl, self.time_range
        assert sl is not None
        made = offcpu_attr(self.rec) if event == OFFCPU_IDENT else None
        if made is not None:  # each switch-out's stack weighs its ns off the CPU
            oc = off_cpu(self.rec)
            sl, _ = charged(sl, sl.rows[:0], oc)
            sl.period[~np.isin(sl.rows, oc.rows)] = 0  # (charged's own copy)
            a = self.rec.attrs[made]
            event = (a.type, a.config)
        return event_stacks(self.rec, sl, self.base.within(rng), event)

    @property
    def notes(self) -> list[str]:
        return list(dict.fromkeys(self.sl.notes)) if self.sl is not None else []


@dataclass
class DiffModel:
    """Two sides, the computation, the event and the level shown."""

    old: DiffSide
    new: DiffSide
    compute: str = DEFAULT_COMPUTE
    event: int = 0  # index into events()
    levels: list[Level] = field(default_factory=lambda: [Level()])

    @classmethod
    def of(cls, old: Recording, new: Recording, modules_dirs: list[str] | None = None,
           symbols: SymbolOptions | None = None,
           options: tuple[ViewOptions, ViewOptions] | None = None) -> DiffModel:
        """``options``: OLD's and NEW's (their ``--time`` ranges may differ)."""
        dirs = list(modules_dirs or [])
        opts = symbols or SymbolOptions(modules_dirs=dirs)
        cache = SymbolCache()
        o, n = options or (ViewOptions(), ViewOptions())
        return cls(DiffSide("OLD", old, dirs, opts, cache, o),
                   DiffSide("NEW", new, dirs, opts, cache, n))

    @property
    def children(self) -> bool:
        """Whether each row weighs the samples through it (``--children``)."""
        return self.old.options.children

    def choose_event(self, name: str) -> bool:
        """Show event ``name`` (``--event``); False when neither side has samples of it."""
        names = [n for _i, n in self.events()]
        if name not in names:
            return False
        self.event = names.index(name)
        return True

    @property
    def ready(self) -> bool:
        return self.old.ready and self.new.ready

    @property
    def level(self) -> Level:
        return self.levels[-1]

    def events(self) -> list[tuple[tuple[int, int], str]]:
        """OLD's events that have samples on either side, in OLD's order."""
        out: dict[tuple[int, int], str] = {}
        pairs = self.pairs()
        for a in self.old.rec.attrs:
            ident = (a.type, a.config)
            if ident in self.old.tables or pairs.get(ident, ident) in self.new.tables:
                out.setdefault(ident, a.display_name)
        if any(t.total_samples for side in (self.old, self.new)
               for t in side.offcpu.values()):
            out[OFFCPU_IDENT] = OFFCPU_EVENT
        return list(out.items())

    @property
    def timed(self) -> bool:
        """Whether the event shown is offcpu-time (periods in ns: shown as times)."""
        return self.event_name() == OFFCPU_EVENT

    def pairs(self) -> dict[tuple[int, int], tuple[int, int]]:
        """NEW's event compared with each of OLD's (:func:`event_pairs`)."""
        return event_pairs(self.old.tables, self.new.tables)

    def event_name(self) -> str:
        ev = self.events()
        return ev[self.event % len(ev)][1] if ev else "no samples"

    def warnings(self) -> list[Mismatch]:
        return mismatches(Setup.of(self.old.rec), Setup.of(self.new.rec))

    def side_tables(self) -> tuple[SideTable, SideTable]:
        """The current event's full tables of both sides."""
        ev = self.events()
        if not ev:
            return empty_table(FULL_KEYS), empty_table(FULL_KEYS)
        ident = ev[self.event % len(ev)][0]
        o, n = self.old.tables.get(ident), self.new.tables.get(self.pairs().get(ident, ident))
        return (o[1] if o else empty_table(FULL_KEYS), n[1] if n else empty_table(FULL_KEYS))

    def flame(self) -> DiffFlame | None:
        """The differential flame graph of the current event (in a worker; None: no
        event has samples)."""
        ev = self.events()
        if not ev:
            return None
        ident = ev[self.event % len(ev)][0]
        old = self.old.stacks(ident)
        return diff_flame(old, self.new.stacks(self.pairs().get(ident, ident)))

    def diff(self, level: Level, compute: str | None = None) -> Diff:
        """The compared table of ``level`` (in a worker: rolls up every row)."""
        return self.compare(level.keys, level.where, compute)

    def compare(self, keys: tuple[str, ...], where: dict[str, str] | None = None,
                compute: str | None = None) -> Diff:
        """Both sides' tables rolled up by ``keys``, their rows under ``where``, compared."""
        ev = self.events()
        if ev and ev[self.event % len(ev)][0] == OFFCPU_IDENT:
            o, n = (side.offcpu.get(keys) or empty_table(keys) for side in (self.old, self.new))
        elif ev and self.children and keys in VIEW_KEYS:  # (children's cannot be rolled up)
            ident = ev[self.event % len(ev)][0]
            got = (self.old.children[keys].get(ident),
                   self.new.children[keys].get(self.pairs().get(ident, ident)))
            o, n = (g[1] if g is not None else empty_table(keys) for g in got)
        else:
            o, n = (t.rollup(keys) for t in self.side_tables())
        return diff_tables(o.only(where or {}), n.only(where or {}), compute or self.compute)

    def shown(self, level: Level, compute: str | None = None) -> Shown:
        """The lines of ``level`` (in a worker); at the top, each module's total (the
        table rolled up by module) then its sections."""
        d = self.diff(level, compute)
        if not level.by_module:
            return Shown(d, [Line(r, d) for r in d.rows])
        mods = self.compare(("module",), compute=compute)
        return Shown(d, module_lines(mods, d), mods)
