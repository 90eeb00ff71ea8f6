"""Thread names over time, from COMM records (and THREAD_MAP), for the record views."""

from __future__ import annotations

from bisect import bisect_right

from ..perfdata import Recording, RecordType


class CommTable:
    """``comm(tid, time)``: the name a thread had at ``time`` (its latest COMM before it)."""

    def __init__(self, rec: Recording) -> None:
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
