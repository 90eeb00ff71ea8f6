"""The symbols of samples chosen by index row, from the one names pass and the one
aggregation.

The section drill-down lists a module section's samples (those the section counts found
under the filter) by symbol.  Its table is :func:`~.samplegroups.group_profile` by ``sym``
over exactly those samples of the grouped store, so it names and counts them as the
profile and ``perftui report --sort sym`` do; the addresses no symbol covers (each a row
of perf's) are one row, :data:`NO_SYMBOL`, as ``perftui sections --symbols`` lists them.
The samples behind a row are the store's (:meth:`RowSymbols.rows_named`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..symbols.modules.sectiontable import NO_SYMBOL
from .samplegroups import GroupCodes, GroupProfile, SampleGroups, group_profile, select


def samples_at(st: SampleGroups, rows: np.ndarray) -> np.ndarray:
    """Bool per store sample: its index row is one of ``rows`` (ascending)."""
    out = np.zeros(len(st.rows), dtype=bool)
    if not len(rows) or not len(st.rows):
        return out
    pos = np.searchsorted(st.rows, rows)
    inside = pos < len(st.rows)
    pos = pos[inside]
    out[pos[st.rows[pos] == rows[inside]]] = True
    return out


@dataclass
class RowSymbols:
    """The ``sym`` table of some samples as shown, busiest first (by samples, then by
    label): shown row ``i`` is ``labels[i]``, ``counts[i]`` samples, the table's rows
    ``parts[i]`` (every address no symbol covers: :data:`NO_SYMBOL`, ``named`` False; a
    name two symbols of the section have: one row, as the samples of a name are listed)."""

    table: GroupProfile
    parts: list[list[int]]
    labels: list[str]
    counts: list[int]
    named: list[bool]

    def rows_named(self, label: str) -> np.ndarray:
        """The index rows (ascending) of the samples in the rows labelled ``label`` (two
        symbols of one name: both)."""
        t = self.table
        groups = np.zeros(t.selection.store.groups, dtype=bool)
        for i, shown in enumerate(self.labels):
            if shown == label:
                for r in self.parts[i]:
                    groups |= t.groups_of_row(r, through=False)
        return t.selection.rows_of(groups)


def row_symbols(st: SampleGroups, rows: np.ndarray, gc: GroupCodes | None = None
                ) -> RowSymbols:
    """The symbols of the samples at index ``rows`` (ascending), every event together,
    each sample counted once (``gc``: the store's codes, made here if not given)."""
    gp = group_profile(select(st, samples_at(st, rows)), ("sym",), False, gc)
    locs = st.locs
    shown: dict[str, list[int]] = {}
    unnamed: list[int] = []
    for r, loc in enumerate(gp.loc.tolist()):
        if locs.name[loc] is None:
            unnamed.append(r)
        else:
            shown.setdefault(locs.label(loc), []).append(r)
    made = [(name, parts, True) for name, parts in shown.items()]
    if unnamed:
        made.append((NO_SYMBOL, unnamed, False))
    count = [int(gp.samples[parts].sum()) for _n, parts, _k in made]
    order = sorted(range(len(made)), key=lambda i: (-count[i], made[i][0]))
    return RowSymbols(gp, [made[i][1] for i in order], [made[i][0] for i in order],
                      [count[i] for i in order], [made[i][2] for i in order])

