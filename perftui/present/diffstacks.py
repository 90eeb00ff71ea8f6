"""One side's stacks for the differential flame graph: the samples of one event that pass
a filter (the side's time range), each distinct stack named as the browser's flame graph
names its frames (thread name, then the frames outermost first) with its period.  The
stacks drawn come in here: a transform of the named samples applies before."""

from __future__ import annotations

import numpy as np

from ..analysis.diffflame import NamedStack
from ..analysis.filters import Filter, FilterContext
from ..analysis.report import sample_rows
from ..analysis.stackcounts import stack_counts
from ..perfdata import Recording
from ..symbols.naming.samplelocs import SampleLocs
from .export import named_stacks
from .report import frame_name


def event_stacks(rec: Recording, sl: SampleLocs, flt: Filter,
                 event: tuple[int, int]) -> list[NamedStack]:
    """The named stacks of the samples of ``event`` (attr type, config) among ``sl``'s
    that pass ``flt``."""
    rows = sl.rows if flt.empty else sample_rows(rec, flt, FilterContext())
    if len(rec.attrs) > 1:
        mine = [i for i, a in enumerate(rec.attrs) if (a.type, a.config) == event]
        rows = rows[np.isin(rec.columns["attr"][rows], mine)]
    elif rec.attrs and (rec.attrs[0].type, rec.attrs[0].config) != event:
        rows = rows[:0]
    counts = stack_counts(sl, sl.positions(rows))
    locs = sl.locs
    return list(named_stacks(counts, lambda loc: frame_name(locs, loc),
                             lambda c: sl.comm_names[c]))
