"""Thread names over time, from COMM records (and THREAD_MAP), for the record views."""

from __future__ import annotations

import struct
from bisect import bisect_right

import numpy as np

from ..perfdata import Recording, RecordType
from ..perfdata.features import cstring


class CommTable:
    """``comm(tid, time)``: the name a thread had at ``time`` (its latest COMM before it)."""

    def __init__(self, rec: Recording) -> None:
        self.by_tid: dict[int, tuple[list[int], list[str]]] = {}
        self.rows_seen = 0
        self.update(rec)

    def update(self, rec: Recording) -> None:
        """Take in the COMM records indexed since the last update."""
        c = rec.columns
        n = len(c["type"])
        if n == self.rows_seen:
            return
        t = c["type"][self.rows_seen:n]
        rows = np.nonzero(t == RecordType.COMM)[0] + self.rows_seen
        self.rows_seen = n
        i32 = struct.Struct(rec.order + "ii")
        for i in rows:
            try:
                raw = rec.record_bytes(int(i))
            except ValueError:
                continue
            if len(raw) < 17:
                continue
            _pid, tid = i32.unpack_from(raw, 8)
            name = cstring(raw[16:])
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
