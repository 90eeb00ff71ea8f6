"""Record density over time: the bins behind the timeline (one row per kind or per CPU)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..perfdata import KMOD_SEC_MAP, Recording, RecordType

KINDS = ("samples", "maps", "tasks", "other")
_MAPS = (RecordType.MMAP, RecordType.MMAP2, KMOD_SEC_MAP, RecordType.KSYMBOL,
         RecordType.BPF_EVENT, RecordType.TEXT_POKE, RecordType.CGROUP)
_TASKS = (RecordType.COMM, RecordType.FORK, RecordType.EXIT, RecordType.NAMESPACES,
          RecordType.SWITCH, RecordType.SWITCH_CPU_WIDE, RecordType.ITRACE_START)


@dataclass
class Bins:
    """``counts[row, col]``: records of ``labels[row]`` in column ``col`` of [t0, t1)."""

    labels: list[str]
    counts: np.ndarray
    t0: int
    t1: int

    @property
    def width(self) -> int:
        return int(self.counts.shape[1])

    def col_time(self, col: int) -> int:
        return self.t0 + (self.t1 - self.t0) * col // max(1, self.width)


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
    """Bin the timed records (time > 0) of ``rows`` (default: all) between t0 and t1."""
    c = rec.columns
    width = max(1, width)
    t0 = min(max(t0, 0), 2**64 - 1)
    t1 = min(max(t1, t0 + 1), 2**64 - 1)
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
        return Bins(labels, counts.reshape(0, width), t0, t1)
    for lo in range(0, total, BLOCK):
        if rows is None:
            time = c["time"][lo:lo + BLOCK]
        else:
            time = c["time"][rows[lo:lo + BLOCK]]
        ok = np.nonzero((time > 0) & (time >= np.uint64(t0)) & (time < np.uint64(t1)))[0]
        col = ((time[ok] - np.uint64(t0)).astype(np.float64) * width / span).astype(np.int64)
        np.clip(col, 0, width - 1, out=col)
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
    return Bins(labels, counts.reshape(nrows, width), t0, t1)
