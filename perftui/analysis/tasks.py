"""Thread names over time, from COMM records, for the record views and the ``comm=`` filter.

:class:`CommModel` is the one interface every view and filter uses to name a thread: the
record list, the detail pane, the drill-down tables and ``comm=`` all go through it.
:class:`CommTable` is today's model (the latest COMM record at or before a time, per tid);
a model with perf's fork/exec rules replaces it by implementing the same three methods.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from typing import Protocol

import numpy as np

from ..perfdata import Recording, RecordType


class CommModel(Protocol):
    """Names of threads over time."""

    def sample_comms(self, rows: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """(name id per index row, the names): the name of each row's thread at that row."""

    def comm(self, tid: int, time: int) -> str:
        """The name thread ``tid`` had at ``time`` (a process: its main thread's)."""


def comm_model(rec: Recording) -> CommModel:
    """The thread names of an indexed recording: the one place a model is chosen."""
    return CommTable(rec)


def comm_of_row(model: CommModel, row: int) -> str:
    """One row's thread name."""
    ids, names = model.sample_comms(np.array([row], dtype=np.int64))
    k = int(ids[0])
    return names[k] if k >= 0 else ""


def comm_mask(model: CommModel, rows: np.ndarray, match: Callable[[str], bool]) -> np.ndarray:
    """True for the rows whose thread name ``match``es (each name tested once)."""
    ids, names = model.sample_comms(rows)
    ok = np.array([match(n) for n in names] + [match("")], dtype=bool)  # -1: no name
    out: np.ndarray = ok[ids]
    return out


class CommTable:
    """``comm(tid, time)``: the name a thread had at ``time`` (its latest COMM before it)."""

    def __init__(self, rec: Recording) -> None:
        self.rec = rec
        self.by_tid: dict[int, tuple[list[int], list[str]]] = {}
        self.rows_seen = 0
        self.update(rec)

    def update(self, rec: Recording) -> None:
        """Take in the COMM records indexed since the last update."""
        c = rec.columns
        n = len(c)
        if n == self.rows_seen:
            return
        rows = rec.rows_of_type(RecordType.COMM)
        rows = rows[(rows >= self.rows_seen) & (rows < n)]
        self.rows_seen = n
        for i in rows:
            try:
                fields = rec.decode(int(i))  # the COMM layout of perfdata's schemas
            except ValueError:
                continue
            tid, name = fields["tid"], fields["comm"]
            times, names = self.by_tid.setdefault(tid, ([], []))
            at = int(c["time"][i])
            k = bisect_right(times, at)
            times.insert(k, at)
            names.insert(k, name)

    def comm(self, tid: int, time: int) -> str:
        ent = self.by_tid.get(tid)
        if not ent:
            return ""
        times, names = ent
        k = bisect_right(times, time) - 1
        return names[max(k, 0)]

    def sample_comms(self, rows: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """Vectorised :meth:`comm` of each row's (tid, time): rows grouped by tid, one
        searchsorted each; -1 for a thread without a COMM."""
        rows = np.asarray(rows, dtype=np.int64)
        c = self.rec.columns
        tids, times = c["tid"][rows], c["time"][rows]
        out = np.full(len(rows), -1, dtype=np.int32)
        names: list[str] = []
        if not len(rows):
            return out, names
        order = np.argsort(tids, kind="stable")
        uniq, starts = np.unique(tids[order], return_index=True)
        ends = np.append(starts[1:], len(order))
        for tid, lo, hi in zip(uniq.tolist(), starts.tolist(), ends.tolist(), strict=True):
            ent = self.by_tid.get(int(tid))
            if not ent:
                continue
            ttimes, tnames = ent
            base = len(names)
            names.extend(tnames)
            sel = order[lo:hi]
            k = np.searchsorted(np.asarray(ttimes, dtype=np.uint64), times[sel], side="right")
            out[sel] = base + np.maximum(k.astype(np.int64) - 1, 0)
        return out, names


class SampleComms:
    """perf's thread names of every record as the names pass kept them (``rows``/``comm``:
    the samples', ``other_rows``/``other_comm``: every other record's; comm ids into
    ``names``; from the cache on a reopen, so no thread model is replayed); rows it does
    not know and :meth:`comm` from the ``other`` model."""

    def __init__(self, rows: np.ndarray, comm: np.ndarray, other_rows: np.ndarray,
                 other_comm: np.ndarray, names: list[str], other: CommModel) -> None:
        self._known = ((rows, comm), (other_rows, other_comm))
        self.names, self.other = names, other

    def sample_comms(self, rows: np.ndarray) -> tuple[np.ndarray, list[str]]:
        rows = np.asarray(rows, dtype=np.int64)
        ids = np.full(len(rows), -1, np.int64)
        miss = np.ones(len(rows), dtype=bool)
        for have, comm in self._known:
            if not len(have) or not len(rows):
                continue
            at = np.minimum(np.searchsorted(have, rows), len(have) - 1)
            hit = miss & (have[at] == rows)
            ids[hit] = comm[at[hit]]
            miss &= ~hit
        if not miss.any():
            return ids, self.names
        oid, onames = self.other.sample_comms(rows[miss])
        ids[miss] = np.where(oid >= 0, oid + len(self.names), -1)
        return ids, [*self.names, *onames]

    def comm(self, tid: int, time: int) -> str:
        return self.other.comm(tid, time)
