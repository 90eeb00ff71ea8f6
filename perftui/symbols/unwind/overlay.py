"""The callchains of a recording's samples as perf joins them, where they are not the
record's own: the record's (kernel) part followed by the user frames unwound from the DWARF
(:mod:`.unwinder`) or taken from an LBR call stack (:mod:`.lbr`).

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
    #: per row: its user frames are an LBR call stack's (not unwound, no inlined frames)
    lbr: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))

    @classmethod
    def empty(cls) -> ChainOverlay:
        z = np.zeros(0, np.int64)
        return cls(z, z, z, np.zeros(0, np.uint8))

    @classmethod
    def of(cls, rows: np.ndarray, count: np.ndarray, buf: np.ndarray) -> ChainOverlay:
        """The chains of ``rows`` (ascending), ``count`` words each, one after another in
        ``buf``."""
        at = (np.cumsum(count) - count) * 8
        return cls(np.asarray(rows, np.int64), at.astype(np.int64),
                   np.asarray(count, np.int64), buf)

    def is_lbr(self, rows: np.ndarray) -> np.ndarray:
        """Whether each of ``rows`` (all replaced) has an LBR call stack's frames."""
        if not self.lbr.any():
            return np.zeros(len(rows), bool)
        is_lbr: np.ndarray = self.lbr[np.searchsorted(self.rows, rows)]
        return is_lbr

    def spans(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(replaced?, at, count) of ``rows``."""
        if not len(self.rows):
            z = np.zeros(len(rows), np.int64)
            return np.zeros(len(rows), bool), z, z
        pos = np.minimum(np.searchsorted(self.rows, rows), len(self.rows) - 1)
        hit = self.rows[pos] == rows
        return hit, self.at[pos], self.count[pos]


def merged(a: ChainOverlay, b: ChainOverlay) -> ChainOverlay:
    """The chains of ``a`` and ``b`` (rows of each in no other) as one overlay."""
    if not len(b.rows):
        a.notes = a.notes + b.notes
        return a
    n_a = len(a.rows)
    rows = np.concatenate([a.rows, b.rows])
    order = np.argsort(rows, kind="stable")
    at = np.concatenate([a.at, b.at + len(a.buf)])
    outcome = np.concatenate([a.outcome if len(a.outcome) == n_a else np.zeros(n_a, np.uint8),
                              np.zeros(len(b.rows), np.uint8)])
    lbr = np.concatenate([np.zeros(n_a, bool) if len(a.lbr) != n_a else a.lbr,
                          np.ones(len(b.rows), bool) if len(b.lbr) != len(b.rows) else b.lbr])
    return ChainOverlay(rows[order], at[order], np.concatenate([a.count, b.count])[order],
                        np.concatenate([a.buf, b.buf]), a.notes + b.notes, outcome[order],
                        lbr[order])


def join_ragged(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """(count per row, words): row ``k``'s words of each part in turn; a part is (its words
    concatenated, how many of them each row has)."""
    counts = [np.asarray(c, np.int64) for _, c in parts]
    total = np.sum(counts, axis=0) if counts else np.zeros(0, np.int64)
    out_start = np.cumsum(total) - total
    out = np.zeros(int(total.sum()), np.uint64)
    before = np.zeros(len(total), np.int64)
    for (words, _), c in zip(parts, counts, strict=True):
        within = np.arange(int(c.sum()), dtype=np.int64) - np.repeat(np.cumsum(c) - c, c)
        out[np.repeat(out_start + before, c) + within] = words
        before += c
    return np.asarray(total, np.int64), out


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
    if ov is None:
        return np.zeros(0, np.int64)
    rows = np.asarray(ov.rows, np.int64)
    return rows[~ov.lbr] if len(ov.lbr) == len(rows) else rows


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
