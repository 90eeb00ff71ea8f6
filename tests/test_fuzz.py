"""Fuzzing: mutated real recordings never crash, hang or blow up any consumer (issue 6).

``tests/fuzzing.py`` holds the harness; this runs it for a bounded time with a fixed seed,
driven by hypothesis, plus every crasher it ever found as a regression test.
"""

from __future__ import annotations

import random
import resource
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzing import SEEDS, mutate, run_all

HERE = Path(__file__).parent
REGRESSIONS = sorted((HERE / "data" / "fuzz").glob("*.data"))


@pytest.fixture
def bounded_memory() -> Iterator[None]:
    """Address space capped at what the process has now plus 1.5 GiB: a count of 2**60
    that reached an allocation would fail the test with MemoryError."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as f:
        now = int(f.read().split()[0]) * resource.getpagesize()
    cap = now + (3 << 29)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@pytest.mark.parametrize("path", REGRESSIONS, ids=lambda p: p.stem)
def test_fuzz_regressions(path: Path, bounded_memory: None) -> None:
    run_all(str(path))


@settings(max_examples=1500, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), which=st.integers(0, len(SEEDS) - 1),
       n=st.integers(1, 4))
def test_fuzz_mutated_recordings(tmp_path: Path, bounded_memory: None, seed: int, which: int,
                                 n: int) -> None:
    buf = (HERE / SEEDS[which]).read_bytes()
    data, _muts = mutate(buf, random.Random(seed), n)
    case = tmp_path / "case.data"
    case.write_bytes(data)
    run_all(str(case))
