"""One filter language for every view and command: ``key=value`` words over the index.

The browser's ``/`` prompt, the timeline range and the ``--time``/``--cpu``/``--pid``/...
options of the commands all become one :class:`Filter`, applied to index rows with
:meth:`Filter.mask` (numpy, no Python object per record).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from ..perfdata import Recording, RecordType, type_code
from ..symbols.locations import Locations
from ..symbols.sectionmap import SectionMap
from .tasks import CommModel, comm_mask
from .timespec import Ranges, TimeSpecError, parse_time_spec


class FilterError(ValueError):
    """A filter that cannot be parsed or applied."""


FILTER_HELP = ('type=SAMPLE,MMAP2 cpu=0-3 pid=123 tid=456 comm=bash comm="CPU 0/KVM" '
               "time=1.5s,2s section=.noinstr.text sym=schedule dso=libc")
FILTER_RULES = ("words are ANDed; a key given twice matches either value; quote values with "
                "spaces; time= takes perf's --time syntax (757.81,758.2 10%/2) or seconds "
                "from the first sample with an s suffix")

_LIST_KEYS = {"type": "types", "cpu": "cpus", "pid": "pids", "tid": "tids"}


@dataclass(frozen=True)
class SampleNames:
    """Every sample's own location: SAMPLE index ``rows`` (ascending) and the location id
    of each (``leaf``) in ``locs`` (the resolver's :class:`~perftui.symbols.locations.
    Locations`)."""

    rows: np.ndarray
    leaf: np.ndarray
    locs: Locations


@dataclass(frozen=True)
class FilterContext:
    """What filters on names need besides the index: thread names, the section map, and
    the samples' symbols."""

    comms: CommModel | None = None
    smap: SectionMap | None = None
    names: SampleNames | None = None


@dataclass(frozen=True)
class Filter:
    """Which records (or samples) to keep; every part optional, parts combined with AND.

    ``time`` is a tuple of absolute [start, end] ns ranges, inclusive (a record passes if it
    is in any); a single ``(start, end)`` pair is taken as one range.  ``comm`` and
    ``section`` are alternatives, each a case-insensitive substring (of the thread's name
    at the record's time; of ``[module]section`` labels).  ``attr`` is an event (attr
    index).  ``text`` is what the user typed, if anything.
    """

    types: frozenset[int] | None = None
    cpus: frozenset[int] | None = None
    pids: frozenset[int] | None = None
    tids: frozenset[int] | None = None
    comm: tuple[str, ...] | None = None
    time: Ranges | None = None
    section: tuple[str, ...] | None = None
    sym: tuple[str, ...] | None = None
    dso: tuple[str, ...] | None = None
    attr: int | None = None
    text: str = ""

    def __post_init__(self) -> None:
        t = self.time
        if t is not None and len(t) == 2 and all(isinstance(x, int) for x in t):
            object.__setattr__(self, "time", (t,))
        for name in ("comm", "section", "sym", "dso"):
            v = getattr(self, name)
            if isinstance(v, str):
                object.__setattr__(self, name, (v,))

    @property
    def empty(self) -> bool:
        """True when the filter keeps everything."""
        return all(v is None for v in (self.types, self.cpus, self.pids, self.tids,
                                       self.comm, self.time, self.section, self.sym,
                                       self.dso, self.attr))

    def within(self, time_range: tuple[int, int] | None) -> Filter:
        """This filter also limited to ``time_range`` (the timeline selection)."""
        if time_range is None:
            return self
        if self.time is None:
            return replace(self, time=(time_range,))
        lo, hi = time_range
        cut = tuple((max(a, lo), min(b, hi)) for a, b in self.time)
        cut = tuple(r for r in cut if r[0] <= r[1]) or ((1, 0),)  # (1, 0): nothing
        return replace(self, time=cut)

    def mask(self, rec: Recording, rows: np.ndarray, ctx: FilterContext | None = None,
             cols: Mapping[str, np.ndarray] | None = None) -> np.ndarray:
        """Boolean mask over index ``rows``: True where the record passes.

        ``cols``: other columns than the index's (a walk's chunk, read without an index;
        ``comm`` and ``section`` then match nothing: names and sections need the index).
        """
        c = rec.columns if cols is None else cols
        m = np.ones(len(rows), dtype=bool)
        if self.time is not None:
            t = c["time"][rows]
            inside = np.zeros(len(rows), dtype=bool)
            for lo, hi in self.time:
                lo_u, hi_u = np.uint64(max(lo, 0)), np.uint64(min(max(hi, 0), 2**64 - 1))
                inside |= (t >= lo_u) & (t <= hi_u)
            m &= inside
        for name, values in (("cpu", self.cpus), ("pid", self.pids), ("tid", self.tids),
                             ("type", self.types)):
            if values is not None:
                m &= np.isin(c[name][rows], list(values))
        if self.attr is not None:
            m &= c["attr"][rows] == self.attr
        if cols is not None and (self.comm is not None or self.section is not None):
            m[:] = False
        elif self.comm is not None:
            m &= self._comm_mask(rec, rows, ctx)
        if self.section is not None and cols is None:
            m &= self._section_mask(rec, rows, m, ctx)
        if self.sym is not None or self.dso is not None:
            m &= self._symbol_mask(rows, ctx) if cols is None else False
        return m

    def _symbol_mask(self, rows: np.ndarray, ctx: FilterContext | None) -> np.ndarray:
        """Samples whose own symbol (``sym=``) and dso (``dso=``) contain the words."""
        names = ctx.names if ctx is not None else None
        if names is None:  # symbols not known yet: nothing matches
            return np.zeros(len(rows), dtype=bool)
        locs = names.locs
        n = len(locs)
        ok = np.ones(n, dtype=bool)
        if self.sym is not None:
            wants = [w.lower() for w in self.sym]
            ok &= np.array([any(w in locs.label(i).lower() for w in wants)
                            for i in range(n)], dtype=bool)
        if self.dso is not None:
            wants = [w.lower() for w in self.dso]
            by_dso = np.array([any(w in d.name.lower() or w in d.short_name.lower()
                                   for w in wants) for d in locs.dsos], dtype=bool)
            ok &= by_dso[locs.dso_of()] if n else ok
        k = np.searchsorted(names.rows, rows)
        k_in = np.minimum(k, max(len(names.rows) - 1, 0))
        hit = (k < len(names.rows)) & (names.rows[k_in] == rows) if len(names.rows) else \
            np.zeros(len(rows), dtype=bool)
        out = np.zeros(len(rows), dtype=bool)
        leaf = np.asarray(names.leaf)[k_in[hit]]
        out[hit] = ok[np.minimum(leaf, n - 1)] & (leaf < n) if n else False
        return out

    def _comm_mask(self, rec: Recording, rows: np.ndarray,
                   ctx: FilterContext | None) -> np.ndarray:
        if ctx is None or ctx.comms is None:  # names not known yet: nothing matches
            return np.zeros(len(rows), dtype=bool)
        wants = [w.lower() for w in self.comm or ()]

        def match(name: str) -> bool:
            low = name.lower()
            return any(w in low for w in wants)

        out: np.ndarray = comm_mask(ctx.comms, rows, match)
        return out

    def _section_mask(self, rec: Recording, rows: np.ndarray, m: np.ndarray,
                      ctx: FilterContext | None) -> np.ndarray:
        if ctx is None or ctx.smap is None:  # map not built yet: nothing matches
            return np.zeros(len(rows), dtype=bool)
        smap = ctx.smap
        wants = [w.lower() for w in self.section or ()]
        ents = [k for k, e in enumerate(smap.entries)
                if any(w in f"{e.label} {e.module}".lower() for w in wants)]
        sel = np.nonzero(m & (rec.columns["type"][rows] == RecordType.SAMPLE))[0]
        owner = smap.lookup(rec.sample_values(rows[sel], "ip"))
        keep = np.zeros(len(rows), dtype=bool)
        keep[sel[np.isin(owner, ents)]] = True
        return keep


def split_words(text: str) -> list[str]:
    """The words of a filter, with shell quoting (``comm="CPU 0/KVM"``)."""
    try:
        return shlex.split(text)
    except ValueError as e:
        raise FilterError(f"{text!r}: {e} (quote values with spaces: comm=\"CPU 0/KVM\")"
                          ) from None


def parse_filter(text: str, first_time: int, last_time: int | None = None) -> Filter:
    """Parse ``key=value`` words (see FILTER_HELP); raises FilterError.

    A key given twice means either value (``cpu=0 cpu=1`` is ``cpu=0,1``); ``time``
    ranges given twice are both kept (in order, not overlapping, as perf wants them).
    ``first_time``/``last_time`` are the first and last sample times (relative seconds
    count from the first; perf's percentages are of the span).
    """
    sets: dict[str, set[int]] = {}
    strings: dict[str, list[str]] = {}
    times: list[str] = []
    for word in split_words(text):
        if "=" not in word:
            raise FilterError(f"{word!r}: expected key=value ({FILTER_HELP})")
        key, val = word.split("=", 1)
        key = key.lower()
        if key == "type":
            try:
                codes = {type_code(v.strip()) for v in val.split(",") if v.strip()}
            except KeyError as e:
                raise FilterError(f"unknown record type {e}") from None
            if not codes:
                raise FilterError("type= needs a value")
            sets.setdefault("types", set()).update(codes)
        elif key in ("cpu", "pid", "tid"):
            sets.setdefault(_LIST_KEYS[key], set()).update(parse_int_list(val, f"{key} list"))
        elif key in ("comm", "section", "sym", "dso"):
            if not val:
                raise FilterError(f"{key}= needs a value")
            strings.setdefault(key, []).append(val)
        elif key == "time":
            times.append(val)
        else:
            raise FilterError(f"unknown filter key {key!r} ({FILTER_HELP})")
    parts: dict[str, object] = {k: frozenset(v) for k, v in sets.items()}
    parts.update({k: tuple(v) for k, v in strings.items()})
    if times:
        sep = "," if any("%" in t for t in times) else " "  # perf's separators
        parts["time"] = parse_time_range(sep.join(times), first_time,
                                         first_time if last_time is None else last_time)
    return Filter(text=text, **parts)  # type: ignore[arg-type]


def parse_int_list(text: str, what: str = "list") -> frozenset[int]:
    """``"0-3,7"`` -> {0, 1, 2, 3, 7}."""
    out: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        m = re.fullmatch(r"(\d+)-(\d+)", part)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            if hi < lo or hi - lo > 1 << 20:
                raise FilterError(f"bad range {part!r} in {what}")
            out.update(range(lo, hi + 1))
            continue
        try:
            out.add(int(part))
        except ValueError:
            raise FilterError(f"bad {what} {text!r}: expected numbers like 0-3,7") from None
    if not out:  # would match nothing, silently
        raise FilterError(f"empty {what} {text!r}: expected numbers like 0-3,7")
    return frozenset(out)


def parse_time_range(text: str, first_time: int, last_time: int | None = None,
                     origin: int | None = None) -> Ranges:
    """``--time``/``time=`` text -> absolute inclusive ns ranges (see analysis.timespec)."""
    last = first_time if last_time is None else last_time
    try:
        return parse_time_spec(text, first_time, last, origin)
    except TimeSpecError as e:
        raise FilterError(str(e)) from None
