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
from ..symbols.modules.sectionmap import SectionMap
from ..symbols.naming.locations import LocationDso, Locations
from .tasks import CommModel, comm_mask
from .timespec import Ranges, TimeSpecError, parse_time_spec


class FilterError(ValueError):
    """A filter that cannot be parsed or applied."""


FILTER_HELP = ('type=SAMPLE,MMAP2 cpu=0-3 pid=123 tid=456 comm=bash comm="CPU 0/KVM" comm~py '
               "time=1.5s,2s section=.noinstr.text sym=schedule dso=libc.so.6 dso~libc")
FILTER_RULES = ("words are ANDed; a key given twice matches either value; quote values with "
                "spaces; comm= and dso= match a whole name (perf's --comms, --dsos), key~part "
                "any name containing part (any case); sym= and section= match parts; time= "
                "takes perf's --time syntax (757.81,758.2 10%/2) or seconds from the first "
                "sample with an s suffix")

#: the parts perf applies to its table's entries, not to the samples (``--comms``,
#: ``--dsos``, ``--symbols``, ``--pid``, ``--tid``; a section is a part of a dso): its
#: "absolute" percentages weigh what they keep against every sample the others keep
ENTRY_PARTS = ("comm", "dso", "sym", "section", "pids", "tids")
_LIST_KEYS = {"type": "types", "cpu": "cpus", "pid": "pids", "tid": "tids"}
_NAME_KEYS = ("comm", "section", "sym", "dso")
PART = "~"  # the substring operator: comm~py


@dataclass(frozen=True)
class NameMatch:
    """One name a filter wants: ``whole`` (``comm=bash``: the name itself, case-sensitive,
    as perf's --comms and --dsos compare) or a part of it (``comm~bash``, any case)."""

    value: str
    whole: bool = True

    def matches(self, name: str) -> bool:
        return name == self.value if self.whole else self.value.lower() in name.lower()


@dataclass(frozen=True)
class SampleNames:
    """Every sample's own location: SAMPLE index ``rows`` (ascending) and the location id
    of each (``leaf``) in ``locs`` (the resolver's :class:`~perftui.symbols.naming.locations.
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
    is in any); a single ``(start, end)`` pair is taken as one range.  ``comm``, ``dso``,
    ``sym`` and ``section`` are alternatives, each a :class:`NameMatch` (a plain string is
    a whole name for ``comm`` and ``dso``, a part for ``sym`` and ``section``): of the
    thread's name at the record's time, of the sample's dso, of its symbol, of
    ``[module]section`` labels.  ``attr`` is an event (attr index).  ``text`` is what the
    user typed, if anything.
    """

    types: frozenset[int] | None = None
    cpus: frozenset[int] | None = None
    pids: frozenset[int] | None = None
    tids: frozenset[int] | None = None
    comm: tuple[NameMatch, ...] | None = None
    time: Ranges | None = None
    section: tuple[NameMatch, ...] | None = None
    sym: tuple[NameMatch, ...] | None = None
    dso: tuple[NameMatch, ...] | None = None
    attr: int | None = None
    text: str = ""

    def __post_init__(self) -> None:
        t = self.time
        if t is not None and len(t) == 2 and all(isinstance(x, int) for x in t):
            object.__setattr__(self, "time", (t,))
        for name in _NAME_KEYS:
            v = getattr(self, name)
            if isinstance(v, str | NameMatch):
                v = (v,)
            if v is not None:
                whole = name in ("comm", "dso")
                object.__setattr__(self, name, tuple(
                    w if isinstance(w, NameMatch) else NameMatch(w, whole) for w in v))

    @property
    def empty(self) -> bool:
        """True when the filter keeps everything."""
        return all(v is None for v in (self.types, self.cpus, self.pids, self.tids,
                                       self.comm, self.time, self.section, self.sym,
                                       self.dso, self.attr))

    @property
    def entries_filtered(self) -> bool:
        """Whether a part perf applies to its table's entries is given (:data:`ENTRY_PARTS`)."""
        return any(getattr(self, k) is not None for k in ENTRY_PARTS)

    def of_every_entry(self) -> Filter:
        """This filter without its entry parts: the samples perf's "absolute" percentages
        are of (the time range, CPUs, types and event kept)."""
        return replace(self, **dict.fromkeys(ENTRY_PARTS), text="")

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
        """Samples whose own symbol (``sym=``) and dso (``dso=``) the words match."""
        names = ctx.names if ctx is not None else None
        if names is None:  # symbols not known yet: nothing matches
            return np.zeros(len(rows), dtype=bool)
        locs = names.locs
        n = len(locs)
        ok = np.ones(n, dtype=bool)
        if self.sym is not None:
            syms = self.sym
            ok &= np.array([any(w.matches(locs.label(i)) for w in syms)
                            for i in range(n)], dtype=bool)
        if self.dso is not None:
            wants = self.dso
            by_dso = np.array([any(_dso_matches(d, w) for w in wants) for d in locs.dsos],
                              dtype=bool)
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
        wants = self.comm or ()

        def match(name: str) -> bool:
            return any(w.matches(name) for w in wants)

        out: np.ndarray = comm_mask(ctx.comms, rows, match)
        return out

    def _section_mask(self, rec: Recording, rows: np.ndarray, m: np.ndarray,
                      ctx: FilterContext | None) -> np.ndarray:
        if ctx is None or ctx.smap is None:  # map not built yet: nothing matches
            return np.zeros(len(rows), dtype=bool)
        smap = ctx.smap
        wants = self.section or ()
        ents = [k for k, e in enumerate(smap.entries)
                if any(w.matches(e.label) or w.matches(e.module) if w.whole
                       else w.matches(f"{e.label} {e.module}") for w in wants)]
        sel = np.nonzero(m & (rec.columns["type"][rows] == RecordType.SAMPLE))[0]
        owner = smap.lookup(rec.sample_values(rows[sel], "ip"))
        keep = np.zeros(len(rows), dtype=bool)
        keep[sel[np.isin(owner, ents)]] = True
        return keep


def _dso_matches(dso: LocationDso, want: NameMatch) -> bool:
    """perf's --dsos: the short or the long name; a module also by its bare name."""
    if want.whole:
        # (imported here: codeloc brings the disassembler and the ELF code reader)
        from ..symbols.code.codeloc import dso_matches

        return dso_matches(dso, want.value)
    return want.matches(dso.name) or want.matches(dso.short_name)


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
    strings: dict[str, list[NameMatch]] = {}
    times: list[str] = []
    for word in split_words(text):
        eq, part = word.find("="), word.find(PART)
        if part > 0 and (eq < 0 or part < eq):
            key, val = word.split(PART, 1)
            if key.lower() not in _NAME_KEYS:
                raise FilterError(f"{word!r}: {PART} is for names ({', '.join(_NAME_KEYS)}); "
                                  f"use {key}=")
            if not val:
                raise FilterError(f"{key}{PART} needs a value")
            strings.setdefault(key.lower(), []).append(NameMatch(val, whole=False))
            continue
        if eq < 0:
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
        elif key in _NAME_KEYS:
            if not val:
                raise FilterError(f"{key}= needs a value")
            strings.setdefault(key, []).append(NameMatch(val, whole=key in ("comm", "dso")))
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


def cpu_list(rec: Recording, text: str) -> frozenset[int]:
    """``--cpu``'s CPUs, for a recording whose samples say their CPU: as perf's
    ``perf_session__cpu_bitmap``, the first event of each type must sample it (``perf
    record`` of a command without ``-a`` does not); raises FilterError."""
    from ..perfdata.constants import Sample

    cpus = parse_int_list(text, "cpu list")
    first: dict[int, int] = {}
    for a in rec.attrs:
        first.setdefault(a.type, a.sample_type)
    if any(not st & Sample.CPU for st in first.values()):
        raise FilterError("the recording's samples have no CPU (recorded without -a or "
                          "--sample-cpu): remove --cpu")
    return cpus


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
