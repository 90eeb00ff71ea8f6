"""The bucketed stable sort behind perf's processing order equals numpy's stable argsort
(the oracle), whatever the buckets: ties keep their positions, runs of equal keys span
buckets, sorted and reversed inputs."""

from __future__ import annotations

import numpy as np
import pytest

from perftui.perfdata.colstore import scratch
from perftui.symbols.tasks.orderplain import stable_argsort


@pytest.mark.parametrize(("n", "high"), [(10, 5), (5000, 3), (300_000, 10**12),
                                         (300_000, 50), (200_000, 1)])
@pytest.mark.parametrize("bucket", [7, 1000, 1 << 16])
def test_stable_argsort_is_numpys(n: int, high: int, bucket: int) -> None:
    rng = np.random.default_rng(n + high + bucket)
    key = rng.integers(0, high, n).astype(np.int64)
    want = np.argsort(key, kind="stable")
    assert np.array_equal(stable_argsort(key, bucket=bucket), want)


def test_stable_argsort_sorted_and_reversed() -> None:
    key = np.repeat(np.arange(50_000, dtype=np.int64), 3)
    for k in (key, key[::-1].copy()):
        assert np.array_equal(stable_argsort(k, bucket=4096), np.argsort(k, kind="stable"))


def test_scratch_is_a_zeroed_writable_array() -> None:
    a = scratch(np.int32, 1000)
    assert a.dtype == np.int32 and len(a) == 1000 and not a.any()
    a[:] = 7
    assert int(a.sum()) == 7000
    assert len(scratch(np.uint64, 0)) == 0
