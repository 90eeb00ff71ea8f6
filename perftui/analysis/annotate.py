"""Per-instruction sample counts of one function, as ``perf annotate`` computes them.

API:

* :func:`count_samples(starts, end, ips, periods=None) <count_samples>` ->
  :class:`InstructionCounts`: samples and period per instruction (vectorised).
* :func:`annotate(disasm, ips, periods=None, *, percent_type="local-period", source=None)
  <annotate>` -> :class:`Annotation`: a :class:`~perftui.symbols.code.disasm.Disassembly` with
  its counts, percentages, hottest instruction and next/previous hot helpers.
* :func:`source_lines(image, disasm) <source_lines>`: the source line of every
  instruction (or None when the file has no line table), for ``source=``.

Rules (perf 6.1 ``util/annotate.c``: ``__symbol__inc_addr_samples``,
``annotation__calc_percent``, ``calc_percent``):

* A sample counts for the function when ``start <= ip < start + size``; its offset's
  hits go to the instruction that *contains* it (from its start up to the next
  instruction's start), so an ip that is not an instruction boundary counts for the
  instruction around it.
* Percentages are shares of the function's own samples.  perf's default
  ``--percent-type`` is ``local-period`` (``annotation__default_options``): the period
  of the instruction over the period of the function; ``local-hits`` uses sample counts.
  With cpu-clock the periods differ from sample to sample, so the two differ.

``ips`` are in the disassembly's address space: load addresses for a module (section
load address + offset), ``vaddr + bias`` for a program (``Disassembly.start`` is the
first byte).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from perftui.symbols.code.disasm import Disassembly
from perftui.symbols.code.elfcode import ElfCodeImage
from perftui.symbols.code.srclines import SourceLine, line_table

__all__ = [
    "PERCENT_TYPES",
    "Annotation",
    "InstructionCounts",
    "annotate",
    "count_samples",
    "source_lines",
]

#: The percent types perftui computes (perf's local ones: the function is the whole).
PERCENT_TYPES = ("local-period", "local-hits")


@dataclass(frozen=True)
class InstructionCounts:
    """Per-instruction ``hits`` (samples) and ``period``, and the function's totals."""

    hits: np.ndarray  # int64, one per instruction
    period: np.ndarray  # uint64, one per instruction
    total_hits: int
    total_period: int

    def percent(self, percent_type: str = "local-period") -> np.ndarray:
        """Share of the function (0-100) of each instruction, perf's float64 arithmetic."""
        if percent_type == "local-hits":
            num, den = self.hits, self.total_hits
        elif percent_type == "local-period":
            num, den = self.period, self.total_period
        else:
            raise ValueError(f"percent type must be one of {', '.join(PERCENT_TYPES)}")
        if not den:
            return np.zeros(len(num), dtype=np.float64)
        return 100.0 * num.astype(np.float64) / float(den)


def count_samples(
    starts: np.ndarray, end: int, ips: np.ndarray, periods: np.ndarray | None = None
) -> InstructionCounts:
    """Count samples per instruction.

    ``starts``: sorted start addresses of the instructions; ``end``: the address one past
    the function.  Samples outside ``[starts[0], end)`` are not the function's.
    ``periods`` (same length as ``ips``) defaults to 1 per sample.
    """
    starts = np.asarray(starts, dtype=np.uint64)
    ips = np.asarray(ips, dtype=np.uint64).reshape(-1)
    n = len(starts)
    if periods is None:
        per = np.ones(len(ips), dtype=np.uint64)
    else:
        per = np.asarray(periods, dtype=np.uint64).reshape(-1)
        if len(per) != len(ips):
            raise ValueError("ips and periods must have the same length")
    if not n:
        return InstructionCounts(np.zeros(0, np.int64), np.zeros(0, np.uint64), 0, 0)
    inside = (ips >= starts[0]) & (ips < np.uint64(end))
    idx = np.searchsorted(starts, ips[inside], side="right").astype(np.int64) - 1
    hits = np.bincount(idx, minlength=n).astype(np.int64)
    # period sums in uint64 (bincount's float64 weights would round big sums)
    period = np.zeros(n, dtype=np.uint64)
    np.add.at(period, idx, per[inside])
    return InstructionCounts(hits, period, int(hits.sum()), int(period.sum(dtype=np.uint64)))


@dataclass
class Annotation:
    """A disassembled function with its samples.

    ``percent[i]`` is instruction ``i``'s share (0-100) by ``percent_type``; ``source[i]``
    its source line (None where unknown; the list is None when the file has no line
    table or source was not asked for).
    """

    disasm: Disassembly
    counts: InstructionCounts
    percent: np.ndarray
    percent_type: str
    source: list[SourceLine | None] | None = None

    @property
    def samples(self) -> int:
        """The function's samples."""
        return self.counts.total_hits

    @property
    def hottest(self) -> int | None:
        """Index of the instruction with the largest share (the first of equals), None
        when the function has no samples."""
        if not self.counts.total_hits:
            return None
        key = self.counts.period if self.percent_type == "local-period" else self.counts.hits
        return int(np.argmax(key))

    def hot(self) -> np.ndarray:
        """Indexes of the instructions that have samples, in address order."""
        return np.flatnonzero(self.counts.hits > 0)

    def next_hot(self, i: int, wrap: bool = True) -> int | None:
        """The first instruction after ``i`` with samples (wrapping to the first)."""
        h = self.hot()
        if not len(h):
            return None
        k = int(np.searchsorted(h, i, side="right"))
        if k < len(h):
            return int(h[k])
        return int(h[0]) if wrap else None

    def prev_hot(self, i: int, wrap: bool = True) -> int | None:
        """The last instruction before ``i`` with samples (wrapping to the last)."""
        h = self.hot()
        if not len(h):
            return None
        k = int(np.searchsorted(h, i, side="left")) - 1
        if k >= 0:
            return int(h[k])
        return int(h[-1]) if wrap else None


def source_lines(image: ElfCodeImage, disasm: Disassembly) -> list[SourceLine | None] | None:
    """The source line of each instruction; None when the file has no line table.

    A line table that cannot be read raises
    :class:`~perftui.symbols.code.elfcode.ElfFileError` (one line).
    """
    table = line_table(image)
    if table is None or not disasm.instructions:
        return None
    shown = np.array([i.addr for i in disasm.instructions], dtype=np.uint64)
    addrs = shown - np.uint64(disasm.start) + np.uint64(disasm.objdump_start)
    sec = image.section(disasm.section) if image.kind == "rel" else None
    return table.lookup(addrs, sec)


def annotate(
    disasm: Disassembly,
    ips: np.ndarray,
    periods: np.ndarray | None = None,
    *,
    percent_type: str = "local-period",
    source: list[SourceLine | None] | None = None,
) -> Annotation:
    """Count ``ips`` (and ``periods``) over ``disasm``'s instructions.

    A data section's disassembly (``is_code`` False) and a function without samples
    annotate too: all counts 0, ``hottest`` None.
    """
    if percent_type not in PERCENT_TYPES:
        raise ValueError(f"percent type must be one of {', '.join(PERCENT_TYPES)}")
    counts = count_samples(disasm.addresses(), disasm.end, ips, periods)
    return Annotation(disasm, counts, counts.percent(percent_type), percent_type, source)

