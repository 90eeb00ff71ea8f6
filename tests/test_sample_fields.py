"""``Recording.sample_fields``: several fixed-position SAMPLE fields of index rows at once,
with whether each row's event samples the field at all; the names pass reads ip and period
through it, a block at a time.  The oracle is the plan the test writes (the values given to
the writer), for two events of which only one samples the period."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from perftui.perfdata import EventAttr, RecordType, Sample, open_recording
from perftui.perfdata.constants import Misc
from perftui.perfdata.index import distinct
from perftui.perfdata.writer import Writer

FLAGS = 1 << 8 | 1 << 9 | 1 << 18 | 1 << 23  # sample_id_all, exclude_guest, ...
BASE = Sample.IP | Sample.TID | Sample.TIME | Sample.ID


@pytest.mark.parametrize("order", ["<", ">"])
def test_ip_and_period_of_two_events(tmp_path: Path, order: str) -> None:
    with_period = EventAttr(type=1, size=128, config=0, sample_period=1000,
                            sample_type=int(BASE | Sample.PERIOD), flags=FLAGS, ids=[7],
                            name="cpu-clock")
    without = EventAttr(type=1, size=128, config=1, sample_period=1000,  # (fixed: -c 1000)
                        sample_type=int(BASE), flags=FLAGS, ids=[8], name="task-clock")
    rng = np.random.default_rng(5)
    plan = []  # (event index, ip, period written or None)
    for _ in range(300):
        ev = int(rng.integers(0, 2))
        ip = int(rng.integers(0, 2**64, dtype=np.uint64))
        plan.append((ev, ip, int(rng.integers(1, 10**6)) if ev == 0 else None))
    path = tmp_path / "two.data"
    with open(path, "wb") as f:
        w = Writer(f, [with_period, without], {}, order=order)
        for k, (ev, ip, period) in enumerate(plan):
            fields = {"ip": ip, "pid": 5, "tid": 5, "time": 1000 + k, "id": 7 + ev}
            if period is not None:
                fields["period"] = period
            w.write(w.b.sample(fields, misc=Misc.USER, attr_idx=ev))
        w.close()
    rec = open_recording(str(path))
    try:
        rec.build_index()
        rows = np.asarray(rec.rows_of_type(RecordType.SAMPLE), dtype=np.int64)
        assert len(rows) == len(plan)
        (ip, ip_has), (period, per_has) = rec.sample_fields(rows, ("ip", "period"))
        assert ip.tolist() == [p[1] for p in plan] and ip_has.all()
        assert per_has.tolist() == [p[2] is not None for p in plan]
        # an event without PERF_SAMPLE_PERIOD: its attr's sample_period (perf's
        # evsel__parse_sample starts every sample's period from it)
        assert period.tolist() == [p[2] or 1000 for p in plan]
        # one field at a time, as before: the same values
        assert rec.sample_values(rows, "ip").tolist() == ip.tolist()
        assert rec.sample_values(rows, "period").tolist() == period.tolist()
        # any subset of rows, in any order, and none
        pick = rows[::-7]
        (sub, _), = rec.sample_fields(pick, ("ip",))
        assert sub.tolist() == [plan[int(np.searchsorted(rows, r))][1] for r in pick]
        (empty, empty_has), = rec.sample_fields(rows[:0], ("period",))
        assert len(empty) == len(empty_has) == 0
    finally:
        rec.close()


@pytest.mark.parametrize("values", [[], [7], [3, 3, 3], [5, -1, 5, 2], [0, 65535, 0],
                                    list(range(100, 0, -3))])
def test_distinct_is_numpys_unique(values: list[int]) -> None:
    """``index.distinct`` (a block's sources or events, two reductions when there is one)
    gives what ``np.unique`` gives, as ints, for every dtype the index columns use."""
    for dt in (np.int16, np.uint16, np.int32, np.int64):
        info = np.iinfo(dt)
        if any(not info.min <= v <= info.max for v in values):
            continue
        a = np.array(values, dtype=dt)
        got = distinct(a)
        assert got == [int(x) for x in np.unique(a)]
        assert all(type(x) is int for x in got)
