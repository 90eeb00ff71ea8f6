"""``perftui report``: which samples, from every sample's names, into one profile per
event (perf report shows each event apart, with its own total period)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..perfdata import Recording, RecordType
from ..perfdata.colstore import scratch
from ..symbols.naming.locations import UNKNOWN_DSO, LocationDso
from ..symbols.naming.samplelocs import SampleLocs
from .filters import Filter, FilterContext
from .profile import Profile
from .sampleprofile import profile_of


@dataclass
class EventProfile:
    """One event's table."""

    event: str
    attr: int
    profile: Profile
    #: the positions (in the names) of the samples counted (the call graphs' samples)
    positions: np.ndarray | slice = field(default_factory=lambda: slice(0, 0))


def sample_rows(rec: Recording, flt: Filter | None = None,
                ctx: FilterContext | None = None) -> np.ndarray:
    """SAMPLE index rows that pass ``flt``, in file order (found block by block)."""
    c = rec.columns
    parts = []
    for lo in range(0, len(c), 1 << 20):
        hi = min(len(c), lo + (1 << 20))
        rows = np.nonzero(c["type"][lo:hi] == RecordType.SAMPLE)[0] + lo
        if flt is not None and not flt.empty:
            rows = rows[flt.mask(rec, rows, ctx)]
        parts.append(rows)
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def wanted_dso(d: LocationDso, dsos: frozenset[str]) -> bool:
    """Whether perf's ``--dsos`` keeps a sample of dso ``d``: by its short or long name; a
    sample in no map (``[unknown]``) never (perf's machine__resolve filters it: no dso)."""
    return d.name != UNKNOWN_DSO and (d.short_name in dsos or d.name in dsos)


def located_keep(sl: SampleLocs, pos: np.ndarray, dsos: frozenset[str] | None,
                 comms: frozenset[str] | None) -> np.ndarray:
    """The positions ``pos`` of ``sl`` whose own location is in one of ``dsos`` (perf's
    ``--dsos``: by short or long name) and whose thread name is one of ``comms`` (perf's
    ``--comms``)."""
    ok = np.ones(len(pos), dtype=bool)
    locs = sl.locs
    if dsos is not None and len(pos):
        names = np.array([wanted_dso(d, dsos) for d in locs.dsos], dtype=bool)
        ok &= names[locs.dso_of()[sl.leaf[pos]]]
    if comms is not None and len(pos):
        ok &= np.array([n in comms for n in sl.comm_names], dtype=bool)[sl.comm[pos]]
    return pos[ok]


def located_profiles(rec: Recording, sl: SampleLocs, rows: np.ndarray,
                     keys: tuple[str, ...], children: bool,
                     dsos: frozenset[str] | None = None,
                     comms: frozenset[str] | None = None,
                     total_rows: np.ndarray | None = None,
                     columns: dict[str, Any] | None = None) -> list[EventProfile]:
    """One profile per event that has samples among ``rows`` (in attr order), from every
    sample's resolved locations.  ``total_rows`` (a superset of
    ``rows``): perf's "absolute" percentages of filtered rows, each event's share and
    totals taken over these (and the events those with samples among them).
    ``columns``: per-sample key columns besides the index's (off-CPU's ``state``)."""
    c = rec.columns
    several = len(rec.attrs) > 1  # (one event: every row is its, no pass over the events)
    counts = _attr_counts(c["attr"], rows, len(rec.attrs)) if several else None
    totals = (_attr_counts(c["attr"], total_rows, len(rec.attrs))
              if several and total_rows is not None else counts)
    events = np.flatnonzero(totals) if totals is not None else np.zeros(1, np.int64)
    out = []
    codes = None
    for a in events.tolist():
        mine = _of_event(c["attr"], rows, a, counts)
        pos = sl.positions(mine)
        if dsos or comms:
            pos = located_keep(sl, np.arange(len(sl))[pos], dsos, comms)
        prof = profile_of(sl, pos, {"tid": c["tid"], "cpu": c["cpu"], **(columns or {})},
                          keys, children,
                          sl.comm_names, codes)
        codes = prof.codes  # one location table: its codes are made once
        if total_rows is not None:
            every = _of_event(c["attr"], total_rows, a, totals)
            prof.total_samples = len(every)
            prof.total_period = int(sl.period[sl.positions(every)].sum(dtype=np.uint64))
        name = rec.attrs[a].display_name if rec.attrs else "?"
        out.append(EventProfile(name, a, prof, pos))
    return out


def _of_event(attr: np.ndarray, rows: np.ndarray, a: int, counts: np.ndarray | None
              ) -> np.ndarray:
    """The ``rows`` of event ``a`` (``counts``: each event's count among them; None when
    there is one event); ``rows`` themselves, not a copy, when they are all its."""
    if counts is None or int(counts[a]) == len(rows):
        return rows
    return _rows_of_attr(attr, rows, a, int(counts[a]))


_ROWS_AT_A_TIME = 1 << 18  # the per-row temporaries below: bounded at any size (~4 MB)


def _attr_counts(attr: np.ndarray, rows: np.ndarray, n_attrs: int) -> np.ndarray:
    """How many of ``rows`` each event (attr) has, a block of rows at a time (the event
    of 48 M rows at once took ~150 MB)."""
    out = np.zeros(max(n_attrs, 1), np.int64)
    for lo in range(0, len(rows), _ROWS_AT_A_TIME):
        a = attr[rows[lo:lo + _ROWS_AT_A_TIME]]
        a = a[(a >= 0) & (a < len(out))]
        out += np.bincount(a, minlength=len(out))
    return out


def _rows_of_attr(attr: np.ndarray, rows: np.ndarray, a: int, n: int) -> np.ndarray:
    """The ``n`` of ``rows`` whose event is ``a``, in a mapped scratch array."""
    out = scratch(np.int64, n)
    at = 0
    for lo in range(0, len(rows), _ROWS_AT_A_TIME):
        r = rows[lo:lo + _ROWS_AT_A_TIME]
        r = r[attr[r] == a]
        out[at:at + len(r)] = r
        at += len(r)
    return out


def has_callchains(rec: Recording) -> bool:
    """True when any event samples callchains (perf report then defaults to --children)."""
    from ..perfdata.constants import Sample

    return any(a.sample_type & Sample.CALLCHAIN for a in rec.attrs)
