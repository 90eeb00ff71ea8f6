"""Sample counts per module section (and the rows behind them), vectorised with numpy."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..perfdata import Recording, RecordType
from ..perfdata.constants import Misc
from ..symbols.sectionmap import SectionMap
from .filters import Filter, FilterContext


@dataclass
class SectionCounts:
    """Counts of the samples that passed a filter.

    ``per_entry[k]`` counts kernel-mode samples whose ip lies in entry *k* of the map;
    ``kernel_rows``/``kernel_owner`` keep, for every kernel sample, its index row and
    owning entry (-1: inside no module section), for drill-downs.
    """

    rec: Recording
    per_entry: np.ndarray
    kernel_rows: np.ndarray
    kernel_owner: np.ndarray
    user_samples: int
    other_samples: int

    @property
    def kernel_samples(self) -> int:
        return len(self.kernel_rows)

    @property
    def unattributed_kernel_samples(self) -> int:
        return int(np.count_nonzero(self.kernel_owner < 0))

    def by_event(self, entry: int) -> np.ndarray:
        """Samples of one entry per attr (event) index."""
        attrs = self.rec.columns["attr"][self.rows_of(entry)].astype(np.int64)
        n = len(self.rec.attrs)
        return np.bincount(attrs[(attrs >= 0) & (attrs < n)], minlength=n)

    def rows_of(self, entry: int) -> np.ndarray:
        rows: np.ndarray = self.kernel_rows[self.kernel_owner == entry].astype(np.int64)
        return rows

    def ips_of(self, entry: int) -> np.ndarray:
        """The ips of one entry's samples, read back from the recording."""
        return self.rec.sample_values(self.rows_of(entry), "ip")


BLOCK = 1 << 20  # samples per gather: bounds the temporary arrays


def count_sections(rec: Recording, smap: SectionMap,
                   flt: Filter | None = None,
                   ctx: FilterContext | None = None) -> SectionCounts:
    """Kernel samples per section entry; user and other cpumodes counted apart.

    Works through the index in blocks, so the temporaries stay small whatever its size.
    """
    c = rec.columns
    n = len(c)
    small = np.int32 if n < 2**31 else np.int64
    kernel_parts, owner_parts = [], []
    user = other = 0
    for lo in range(0, n, BLOCK):
        hi = min(n, lo + BLOCK)
        rows = np.nonzero(c["type"][lo:hi] == RecordType.SAMPLE)[0] + lo
        if flt is not None and not flt.empty:
            rows = rows[flt.mask(rec, rows, ctx)]
        mode = c["cpumode"][rows]
        kernel = rows[mode == Misc.KERNEL]
        u = int(np.count_nonzero(mode == Misc.USER))
        user += u
        other += len(rows) - len(kernel) - u
        kernel_parts.append(kernel.astype(small))
        owner_parts.append(smap.lookup(rec.sample_values(kernel, "ip")))
    kernel_rows = np.concatenate(kernel_parts) if kernel_parts else np.empty(0, small)
    owner = np.concatenate(owner_parts) if owner_parts else np.empty(0, np.int32)
    ne = len(smap.entries)
    per = np.bincount(owner[owner >= 0], minlength=ne) if ne else np.zeros(0, dtype=np.int64)
    return SectionCounts(rec, per.astype(np.int64), kernel_rows, owner, user, other)


def split_by(rec: Recording, rows: np.ndarray, column: str) -> list[tuple[int, int]]:
    """(value, count) of an index column (``cpu``, ``pid``, ``tid``) over rows, by count."""
    vals, counts = np.unique(rec.columns[column][rows], return_counts=True)
    order = np.lexsort((vals, -counts))
    return [(int(vals[i]), int(counts[i])) for i in order]
