"""What a thread name merges: the processes and threads behind each ``comm`` of a selection.

The flame graph's first level is the thread name, as perf's ``--sort comm`` and flamegraph's
stackcollapse-perf make it: every process running ``python`` is one frame.  This says how
many processes (by pid) and threads (by tid) each such frame covers, so the label can say
what it merges.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .samplegroups import SampleGroups, Selection


@dataclass(frozen=True)
class CommMembers:
    """The processes (``pids``, ascending) and the number of threads of one thread name."""

    pids: tuple[int, ...]
    threads: int

    def words(self) -> str:
        """``pid 3150`` / ``3 processes`` and the threads: what the frame stands for."""
        procs = f"pid {self.pids[0]}" if len(self.pids) == 1 else f"{len(self.pids)} processes"
        return procs if self.threads <= len(self.pids) else f"{procs}, {self.threads} threads"


def group_pids(st: SampleGroups, sample_pid: np.ndarray) -> np.ndarray:
    """The process of each group: the pid of one of its samples (a group is one thread;
    ``sample_pid`` the index's pid column, by index row)."""
    one = np.zeros(st.groups, dtype=np.int64)
    one[st.group] = np.arange(len(st.group), dtype=np.int64)  # (any sample of the group)
    return np.asarray(sample_pid[st.rows[one]], dtype=np.int64) if len(st.group) else \
        np.zeros(0, dtype=np.int64)


def comm_members(sel: Selection, pids: np.ndarray) -> dict[int, CommMembers]:
    """Per thread name id (``comm_names``' index) with samples in ``sel``: its processes
    and threads (``pids``: :func:`group_pids`)."""
    st = sel.store
    keep = sel.count > 0
    comm = st.comm[keep].astype(np.int64)
    out: dict[int, CommMembers] = {}
    if not len(comm):
        return out
    by_pid = np.unique(np.stack([comm, pids[keep]]), axis=1)
    by_tid = np.unique(np.stack([comm, st.tid[keep].astype(np.int64)]), axis=1)
    threads = dict(zip(*np.unique(by_tid[0], return_counts=True), strict=True))
    starts = np.flatnonzero(np.r_[True, by_pid[0, 1:] != by_pid[0, :-1]])
    for lo, hi in zip(starts, [*starts[1:], by_pid.shape[1]], strict=True):
        c = int(by_pid[0, lo])
        out[c] = CommMembers(tuple(int(p) for p in by_pid[1, lo:hi]), int(threads[c]))
    return out
