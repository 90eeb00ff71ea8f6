"""Sample filters (time range, CPUs, pids, tids, event) over the index columns."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..perfdata import Recording, RecordType


class FilterError(ValueError):
    """A filter argument that cannot be parsed."""


@dataclass
class SampleFilter:
    """Which samples to count.  ``time`` is an absolute [start, end] in ns, inclusive."""

    time: tuple[int, int] | None = None
    cpus: frozenset[int] | None = None
    pids: frozenset[int] | None = None
    tids: frozenset[int] | None = None
    attr: int | None = None

    def mask(self, rec: Recording, rows: np.ndarray) -> np.ndarray:
        c = rec.columns
        m = np.ones(len(rows), dtype=bool)
        if self.time is not None:
            t = c["time"][rows]
            m &= (t >= np.uint64(max(self.time[0], 0))) & (t <= np.uint64(max(self.time[1], 0)))
        if self.cpus is not None:
            m &= np.isin(c["cpu"][rows], list(self.cpus))
        if self.pids is not None:
            m &= np.isin(c["pid"][rows], list(self.pids))
        if self.tids is not None:
            m &= np.isin(c["tid"][rows], list(self.tids))
        if self.attr is not None:
            m &= c["attr"][rows] == self.attr
        return m


def sample_rows(rec: Recording, flt: SampleFilter | None = None) -> np.ndarray:
    """Index rows of the SAMPLE records that pass ``flt``."""
    rows = np.nonzero(rec.columns["type"] == RecordType.SAMPLE)[0]
    if flt is not None:
        rows = rows[flt.mask(rec, rows)]
    return rows


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
