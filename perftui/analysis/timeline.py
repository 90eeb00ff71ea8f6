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
        return self.counts.shape[1]

    def col_time(self, col: int) -> int:
        return self.t0 + (self.t1 - self.t0) * col // max(1, self.width)


def kind_of(types: np.ndarray) -> np.ndarray:
    """0 samples, 1 maps, 2 tasks, 3 other, for each type code."""
    out = np.full(len(types), 3, dtype=np.int8)
    out[np.isin(types, _TASKS)] = 2
    out[np.isin(types, _MAPS)] = 1
    out[types == RecordType.SAMPLE] = 0
    return out


def timeline_bins(rec: Recording, t0: int, t1: int, width: int, by: str = "kind",
                  max_rows: int = 8, rows: np.ndarray | None = None) -> Bins:
    """Bin the timed records (time > 0) of ``rows`` (default: all) between t0 and t1."""
    c = rec.columns
    n = len(c["time"])
    time = c["time"] if rows is None else c["time"][rows]
    width = max(1, width)
    t0 = min(max(t0, 0), 2**64 - 1)
    t1 = min(max(t1, t0 + 1), 2**64 - 1)
    span = max(1, t1 - t0)
    sel = (time > 0) & (time >= np.uint64(t0)) & (time < np.uint64(t1))
    idx = np.nonzero(sel)[0]
    col = ((time[idx] - np.uint64(t0)).astype(np.float64) * width / span).astype(np.int64)
    np.clip(col, 0, width - 1, out=col)
    src_rows = idx if rows is None else rows[idx]
    if by == "cpu":
        cpu = c["cpu"][src_rows] if n else np.empty(0, dtype=np.int32)
        cpus = np.unique(cpu)
        cpus = cpus[cpus >= 0]
        labels = [f"cpu {int(x)}" for x in cpus[:max_rows]]
        rowid = np.searchsorted(cpus[:max_rows], cpu) if len(cpus) else np.zeros(0, int)
        ok = np.isin(cpu, cpus[:max_rows])
        if len(cpus) > max_rows:
            labels[-1] = f"cpu {int(cpus[max_rows - 1])}+"
            rowid = np.where(ok, rowid, max_rows - 1)
            ok = cpu >= 0
        counts = np.zeros((len(labels), width), dtype=np.int64)
        if len(labels):
            flat = rowid[ok].astype(np.int64) * width + col[ok]
            counts += np.bincount(flat, minlength=len(labels) * width).reshape(len(labels),
                                                                                width)
        return Bins(labels, counts, t0, t1)
    kind = kind_of(c["type"][src_rows])
    counts = np.zeros((len(KINDS), width), dtype=np.int64)
    flat = kind.astype(np.int64) * width + col
    counts += np.bincount(flat, minlength=len(KINDS) * width).reshape(len(KINDS), width)
    return Bins(list(KINDS), counts, t0, t1)
