"""Record density over time: the bins behind the timeline (one row per kind or per CPU)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..perfdata import KMOD_SEC_MAP, Recording, RecordType, derived
from ..perfdata.cacheentry import CachedIndex, CacheError, in_range, one_per

KINDS = ("samples", "maps", "tasks", "other")
_MAPS = (RecordType.MMAP, RecordType.MMAP2, KMOD_SEC_MAP, RecordType.KSYMBOL,
         RecordType.BPF_EVENT, RecordType.TEXT_POKE, RecordType.CGROUP)
_TASKS = (RecordType.COMM, RecordType.FORK, RecordType.EXIT, RecordType.NAMESPACES,
          RecordType.SWITCH, RecordType.SWITCH_CPU_WIDE, RecordType.ITRACE_START)


@dataclass
class Bins:
    """``counts[row, col]``: records of ``labels[row]`` in column ``col`` of [t0, t1).

    Column ``col`` holds the records with ``col_time(col) <= time < col_time(col + 1)``
    exactly (``edges``, when given, are those times; else the even split of the span).
    """

    labels: list[str]
    counts: np.ndarray
    t0: int
    t1: int
    edges: list[int] | None = None

    @property
    def width(self) -> int:
        return int(self.counts.shape[1])

    def col_time(self, col: int) -> int:
        if self.edges is not None:
            return self.edges[min(max(col, 0), len(self.edges) - 1)]
        span, w = self.t1 - self.t0, max(1, self.width)
        return self.t0 + -(-span * col // w)  # the first time that falls in column col


def columns_of(time: np.ndarray, t0: int, span: int, width: int) -> np.ndarray:
    """Column ``floor((time - t0) * width / span)`` of each time in [t0, t0 + span):
    exact integer arithmetic when ``span * width`` fits in 64 bits (spans under ~13 days
    at 16384 columns), else float."""
    d = time - np.uint64(t0)
    if span * width < 2**64:
        col = (d * np.uint64(width)) // np.uint64(span)
        return col.astype(np.int64)
    col = (d.astype(np.float64) * width / span).astype(np.int64)
    out: np.ndarray = np.clip(col, 0, width - 1)
    return out


def kind_of(types: np.ndarray) -> np.ndarray:
    """0 samples, 1 maps, 2 tasks, 3 other, for each type code."""
    out = np.full(len(types), 3, dtype=np.int8)
    out[np.isin(types, _TASKS)] = 2
    out[np.isin(types, _MAPS)] = 1
    out[types == RecordType.SAMPLE] = 0
    return out


BLOCK = 1 << 18  # rows binned at a time: the temporaries stay small whatever the size


def timeline_bins(rec: Recording, t0: int, t1: int, width: int, by: str = "kind",
                  max_rows: int = 8, rows: np.ndarray | None = None) -> Bins:
    """Bin the timed records (time > 0) of ``rows`` (default: all) between t0 and t1.

    Records are binned into FINE columns of [t0, t1), which are then grouped into
    ``width`` columns (column c takes fine columns ceil(c*F/W) .. ceil((c+1)*F/W) - 1, and
    its ``edges`` say exactly which times that is).  So the bins are the same whether they
    were counted now or kept with the index (:func:`keep_fine_bins`, used for the whole
    span by kind: then there is no pass over the rows at all).
    """
    width = max(1, width)
    t0 = min(max(t0, 0), 2**64 - 1)
    t1 = min(max(t1, t0 + 1), 2**64 - 1)
    if width > FINE:
        labels, counts = _bin(rec, t0, t1, width, by, max_rows, rows)
        return Bins(labels, counts, t0, t1)
    if by == "kind" and rows is None:
        kept = _kept_fine_bins(rec, t0, t1)
        if kept is not None:
            return _regroup(list(KINDS), kept, t0, t1, width)
    labels, counts = _bin(rec, t0, t1, FINE, by, max_rows, rows)
    return _regroup(labels, counts, t0, t1, width)


def bins_are_kept(rec: Recording, t0: int, t1: int, width: int, by: str = "kind") -> bool:
    """Whether :func:`timeline_bins` of this window reads the kept fine bins (no pass over
    the rows: immediate at any size)."""
    t0 = min(max(t0, 0), 2**64 - 1)
    t1 = min(max(t1, t0 + 1), 2**64 - 1)
    return by == "kind" and max(1, width) <= FINE and _kept_fine_bins(rec, t0, t1) is not None


def rows_counts(rec: Recording, blocks: Iterable[np.ndarray], bins: Bins) -> np.ndarray:
    """How many of the timed records of index rows ``blocks`` (arrays of rows, given a
    block at a time: any number of rows in the memory of one block) fall in each column of
    ``bins``, by the very times its columns hold (their ``edges``, else the even split):
    one more row for those bins, column for column."""
    c = rec.columns
    w = bins.width
    out = np.zeros(w, np.int64)
    edges = np.asarray(bins.edges, dtype=np.uint64) if bins.edges is not None else None
    span = max(1, bins.t1 - bins.t0)
    for rows in blocks:
        for lo in range(0, len(rows), BLOCK):
            time = c["time"][rows[lo:lo + BLOCK]]
            time = time[(time > 0) & (time >= np.uint64(bins.t0)) & (time < np.uint64(bins.t1))]
            if edges is not None:
                col = np.searchsorted(edges, time, side="right").astype(np.int64) - 1
            else:
                col = columns_of(time, bins.t0, span, w)
            out += np.bincount(np.clip(col, 0, w - 1), minlength=w)[:w]
    return out


def _regroup(labels: list[str], fine: np.ndarray, t0: int, t1: int, width: int) -> Bins:
    """FINE columns of [t0, t1) grouped into ``width`` columns, with their exact edges."""
    span = t1 - t0
    starts = [-(-c * FINE // width) for c in range(width + 1)]
    counts = (np.add.reduceat(fine, starts[:-1], axis=1) if len(labels)
              else np.zeros((0, width), np.int64))
    edges = [t0 + -(-j * span // FINE) for j in starts]
    return Bins(labels, counts.astype(np.int64), t0, t1, edges)


def _bin(rec: Recording, t0: int, t1: int, width: int, by: str, max_rows: int,
         rows: np.ndarray | None) -> tuple[list[str], np.ndarray]:
    """(row labels, counts[row, column]) over ``width`` even columns of [t0, t1)."""
    c = rec.columns
    span = max(1, t1 - t0)
    total = len(c["time"]) if rows is None else len(rows)
    if by == "cpu":
        seen: set[int] = set()
        for lo in range(0, total, BLOCK):
            part = c["cpu"][lo:lo + BLOCK] if rows is None else c["cpu"][rows[lo:lo + BLOCK]]
            seen.update(np.unique(part).tolist())
        cpus = np.array(sorted(x for x in seen if x >= 0), dtype=np.int64)
        keep = cpus[:max_rows]
        labels = [f"cpu {int(x)}" for x in keep]
        if len(cpus) > max_rows:
            labels[-1] = f"cpu {int(keep[-1])}+"
        nrows = len(labels)
    else:
        labels = list(KINDS)
        nrows = len(KINDS)
    counts = np.zeros(nrows * width, dtype=np.int64)
    if not nrows:
        return labels, counts.reshape(0, width)
    for lo in range(0, total, BLOCK):
        if rows is None:
            time = c["time"][lo:lo + BLOCK]
        else:
            time = c["time"][rows[lo:lo + BLOCK]]
        ok = np.nonzero((time > 0) & (time >= np.uint64(t0)) & (time < np.uint64(t1)))[0]
        col = columns_of(time[ok], t0, span, width)
        src = ok + lo if rows is None else rows[lo:lo + BLOCK][ok]
        if by == "cpu":
            cpu = c["cpu"][src]
            rowid = np.searchsorted(keep, cpu)
            if len(cpus) > max_rows:  # the last row gathers every CPU past the others
                rowid = np.minimum(rowid, nrows - 1)
                valid = cpu >= 0
            else:
                valid = np.isin(cpu, keep)
            flat = rowid[valid].astype(np.int64) * width + col[valid]
        else:
            flat = kind_of(c["type"][src]).astype(np.int64) * width + col
        counts += np.bincount(flat, minlength=nrows * width)[: nrows * width]
    return labels, counts.reshape(nrows, width)


FINE = 1 << 14  # columns of the fine bins kept with the index
FINE_NAME = "timeline.kind"


def full_window(rec: Recording) -> tuple[int, int]:
    """[t0, t1) of the whole recording, as the timeline shows it unzoomed."""
    first, last = rec.stats.span()
    return first, max(last + 1, first + 1)


def keep_fine_bins(rec: Recording) -> None:
    """Count a complete index's whole span by kind into FINE columns and keep them with the
    index (:mod:`~perftui.perfdata.derived`): the unzoomed timeline at any width is then
    read from them.  One pass over the rows, in blocks."""
    if not rec.indexed or not len(rec.columns):
        return
    t0, t1 = full_window(rec)
    _labels, counts = _bin(rec, t0, t1, FINE, "kind", len(KINDS), None)
    meta = {"t0": t0, "t1": t1, "fine": FINE, "kinds": len(KINDS)}
    derived.keep(rec, FINE_NAME, meta, {"counts": counts.ravel()}, value=(meta, counts))


def _kept_fine_bins(rec: Recording, t0: int, t1: int) -> np.ndarray | None:
    """The kept fine bins (kinds x FINE) when they are of [t0, t1)."""
    got = derived.kept(rec, FINE_NAME, _restore_fine, "timeline", "counting it again")
    if got is None or got[0]["t0"] != t0 or got[0]["t1"] != t1:
        return None
    return got[1]


def _restore_fine(att: CachedIndex) -> tuple[dict[str, Any], np.ndarray]:
    meta = att.meta
    if meta.get("fine") != FINE or meta.get("kinds") != len(KINDS):
        raise derived.Stale()  # (another perftui's bins: counted again)
    if not isinstance(meta.get("t0"), int) or not isinstance(meta.get("t1"), int):
        raise CacheError("no window")
    a = att.checked({"counts": "i8"})
    one_per(a, ("counts",), len(KINDS) * FINE, "fine bin")
    in_range(a["counts"], 0, 2**63 - 1, "counts")
    return meta, a["counts"].reshape(len(KINDS), FINE)
