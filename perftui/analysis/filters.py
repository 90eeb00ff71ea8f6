"""One filter language for every view and command: ``key=value`` words over the index.

The browser's ``/`` prompt, the timeline range and the ``--time``/``--cpu``/``--pid``/...
options of the commands all become one :class:`Filter`, applied to index rows with
:meth:`Filter.mask` (numpy, no Python object per record).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from ..perfdata import Recording, RecordType, type_code
from ..symbols.sectionmap import SectionMap
from .tasks import CommTable


class FilterError(ValueError):
    """A filter that cannot be parsed or applied."""


FILTER_HELP = ("type=SAMPLE,MMAP2 cpu=0-3 pid=123 tid=456 comm=bash time=1.5,2.0 "
               "section=.noinstr.text")


@dataclass(frozen=True)
class FilterContext:
    """What filters on names need besides the index: thread names and the section map."""

    comms: CommTable | None = None
    smap: SectionMap | None = None


@dataclass(frozen=True)
class Filter:
    """Which records (or samples) to keep; every part optional, parts combined with AND.

    ``time`` is an absolute [start, end] in ns, inclusive.  ``comm`` and ``section`` are
    case-insensitive substrings (of a thread's names; of ``[module]section`` labels).
    ``attr`` is an event (attr index).  ``text`` is what the user typed, if anything.
    """

    types: frozenset[int] | None = None
    cpus: frozenset[int] | None = None
    pids: frozenset[int] | None = None
    tids: frozenset[int] | None = None
    comm: str | None = None
    time: tuple[int, int] | None = None
    section: str | None = None
    attr: int | None = None
    text: str = ""

    @property
    def empty(self) -> bool:
        """True when the filter keeps everything."""
        return all(v is None for v in (self.types, self.cpus, self.pids, self.tids,
                                       self.comm, self.time, self.section, self.attr))

    def within(self, time_range: tuple[int, int] | None) -> Filter:
        """This filter also limited to ``time_range`` (the timeline selection)."""
        if time_range is None:
            return self
        t = time_range if self.time is None else (max(time_range[0], self.time[0]),
                                                  min(time_range[1], self.time[1]))
        return replace(self, time=t)

    def mask(self, rec: Recording, rows: np.ndarray, ctx: FilterContext | None = None,
             cols: Mapping[str, np.ndarray] | None = None) -> np.ndarray:
        """Boolean mask over index ``rows``: True where the record passes.

        ``cols``: other columns than the index's (a walk's chunk, read without an index;
        ``section`` then matches nothing).
        """
        c = rec.columns if cols is None else cols
        m = np.ones(len(rows), dtype=bool)
        if self.time is not None:
            t = c["time"][rows]
            lo, hi = np.uint64(max(self.time[0], 0)), np.uint64(max(self.time[1], 0))
            m &= (t >= lo) & (t <= hi)
        for name, values in (("cpu", self.cpus), ("pid", self.pids), ("tid", self.tids),
                             ("type", self.types)):
            if values is not None:
                m &= np.isin(c[name][rows], list(values))
        if self.attr is not None:
            m &= c["attr"][rows] == self.attr
        if self.comm is not None:
            m &= self._comm_mask(c["tid"][rows], ctx)
        if self.section is not None and cols is not None:
            m[:] = False
        elif self.section is not None:
            m &= self._section_mask(rec, rows, m, ctx)
        return m

    def _comm_mask(self, tids_of_rows: np.ndarray, ctx: FilterContext | None) -> np.ndarray:
        if ctx is None or ctx.comms is None:  # names not known yet: nothing matches
            return np.zeros(len(tids_of_rows), dtype=bool)
        want = (self.comm or "").lower()
        tids = [tid for tid, (_t, names) in ctx.comms.by_tid.items()
                if any(want in nm.lower() for nm in names)]
        return np.isin(tids_of_rows, tids)

    def _section_mask(self, rec: Recording, rows: np.ndarray, m: np.ndarray,
                      ctx: FilterContext | None) -> np.ndarray:
        if ctx is None or ctx.smap is None:  # map not built yet: nothing matches
            return np.zeros(len(rows), dtype=bool)
        smap = ctx.smap
        want = (self.section or "").lower()
        ents = [k for k, e in enumerate(smap.entries)
                if want in f"{e.label} {e.module}".lower()]
        sel = np.nonzero(m & (rec.columns["type"][rows] == RecordType.SAMPLE))[0]
        owner = smap.lookup(rec.sample_values(rows[sel], "ip"))
        keep = np.zeros(len(rows), dtype=bool)
        keep[sel[np.isin(owner, ents)]] = True
        return keep


def parse_filter(text: str, first_time: int) -> Filter:
    """Parse ``key=value`` words (see FILTER_HELP); raises FilterError."""
    parts: dict[str, object] = {}
    for word in text.split():
        if "=" not in word:
            raise FilterError(f"{word!r}: expected key=value ({FILTER_HELP})")
        key, val = word.split("=", 1)
        key = key.lower()
        if key == "type":
            try:
                parts["types"] = frozenset(type_code(v) for v in val.split(",") if v)
            except KeyError as e:
                raise FilterError(f"unknown record type {e}") from None
        elif key in ("cpu", "pid", "tid"):
            parts[key + "s"] = parse_int_list(val, f"{key} list")
        elif key in ("comm", "section"):
            parts[key] = val
        elif key == "time":
            parts["time"] = parse_time_range(val, first_time)
        else:
            raise FilterError(f"unknown filter key {key!r} ({FILTER_HELP})")
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
    return frozenset(out)


def parse_time_range(text: str, first_time: int) -> tuple[int, int]:
    """``"START,END"`` in seconds relative to the first sample -> absolute ns, inclusive.

    Either side may be empty (``"1.5,"`` is from 1.5 s to the end).
    """
    if "," not in text:
        raise FilterError(f"bad time range {text!r}: expected START,END in seconds")
    a, b = text.split(",", 1)
    try:
        start = first_time + round(float(a) * 1e9) if a.strip() else 0
        end = first_time + round(float(b) * 1e9) if b.strip() else 2**63 - 1
    except ValueError:
        raise FilterError(f"bad time range {text!r}: expected START,END in seconds") from None
    if end < start:
        raise FilterError(f"bad time range {text!r}: END is before START")
    return start, end
