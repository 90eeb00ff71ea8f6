"""The callchains of a recording's samples as perf joins them, where they are not the
record's own: the record's (kernel) part followed by the unwound user frames.

An :class:`ChainOverlay` is a byte source of its own: u64 words in the recording's byte
order, each replaced sample's chain at ``at`` (``count`` words, context markers included,
exactly as a CALLCHAIN field would hold them).  :func:`~..tasks.callchain.callchain_spans`
points those samples at it (source :data:`UNWOUND_SOURCE`), so everything that reads
callchains (the names pass, the resolver, ``dump``) reads the joined chains unchanged.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np

from ...perfdata import Recording, RecordType, Sample
from ...perfdata.index import NO_SOURCE

#: the source id of the joined chains in callchain spans
UNWOUND_SOURCE = NO_SOURCE - 1


@dataclass
class ChainOverlay:
    """Joined chains of some SAMPLE rows (``rows`` ascending)."""

    rows: np.ndarray  # i8
    at: np.ndarray  # i8 byte offset of each chain in ``buf``
    count: np.ndarray  # i8 words
    buf: np.ndarray  # u8, the words in the recording's byte order
    notes: list[str] = field(default_factory=list)
    #: per sample row replaced: how its unwinding ended (walk.py's outcomes)
    outcome: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))

    def spans(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(replaced?, at, count) of ``rows``."""
        if not len(self.rows):
            z = np.zeros(len(rows), np.int64)
            return np.zeros(len(rows), bool), z, z
        pos = np.minimum(np.searchsorted(self.rows, rows), len(self.rows) - 1)
        hit = self.rows[pos] == rows
        return hit, self.at[pos], self.count[pos]


_overlays: weakref.WeakKeyDictionary[Recording, ChainOverlay] = weakref.WeakKeyDictionary()


def set_overlay(rec: Recording, ov: ChainOverlay) -> None:
    _overlays[rec] = ov


def overlay_of(rec: object) -> ChainOverlay | None:
    """The joined chains of recording ``rec`` once unwound (None: not, or nothing to
    unwind)."""
    return _overlays.get(rec) if isinstance(rec, Recording) else None


def unwound_rows(rec: object) -> np.ndarray:
    """The SAMPLE rows whose user stack was unwound from the DWARF (their user frames are
    the ones perf gives inline chains)."""
    ov = overlay_of(rec)
    return np.zeros(0, np.int64) if ov is None else np.asarray(ov.rows, np.int64)


def unwinds(rec: Recording) -> list[int]:
    """The attrs whose samples carry user registers and a stack copy."""
    want = Sample.REGS_USER | Sample.STACK_USER
    return [a for a, attr in enumerate(rec.attrs) if attr.sample_type & want == want]


def dwarf_rows(rec: Recording) -> np.ndarray:
    """The SAMPLE rows of those attrs, ascending."""
    attrs = unwinds(rec)
    if not attrs:
        return np.zeros(0, np.int64)
    rows = np.asarray(rec.rows_of_type(RecordType.SAMPLE), dtype=np.int64)
    return rows[np.isin(rec.columns["attr"][rows], np.asarray(attrs))]
