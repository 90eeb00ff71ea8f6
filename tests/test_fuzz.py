"""Fuzzing: mutated real recordings never crash, hang or blow up any consumer (issue 6).

``tests/fuzzing.py`` holds the harness and the mutations; hypothesis draws the mutations
themselves here (bit flips, bytes, record sizes and fields, header fields, truncations,
splices, zeroed runs) from strategies, so a failure shrinks to the fewest, simplest edits of
the smallest seed.  A fixed number of examples, derandomized, keeps the CI run bounded and
repeatable.  Every crasher found so far is a regression test.
"""

from __future__ import annotations

import resource
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzing import HEADER_FIELDS, INTERESTING, KINDS, SEEDS, Mutation, apply_all, run_all

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


@pytest.mark.usefixtures("bounded_memory")
@pytest.mark.parametrize("path", REGRESSIONS, ids=lambda p: p.stem)
def test_fuzz_regressions(path: Path) -> None:
    run_all(str(path))


#: values that break sizes and counts, or anything (shrinks towards 0)
VALUES = st.one_of(st.sampled_from(INTERESTING), st.integers(0, 2**64 - 1))


@st.composite
def mutations(draw: st.DrawFn) -> Mutation:
    """One edit; positions are taken modulo the file's length when it is applied."""
    kind = draw(st.sampled_from(KINDS))
    return Mutation(kind, at=draw(st.integers(0, 1 << 20)), value=draw(VALUES),
                    rec=draw(st.integers(0, 1 << 12)),
                    field=draw(st.integers(0, max(7, len(HEADER_FIELDS) - 1))),
                    src=draw(st.integers(0, 1 << 20)))


#: the examples are drawn in this many tests, each of a share of the seeds (1500 examples in
#: all, as in one test: the workers run them side by side, not one worker for a minute)
SHARDS = 3


@pytest.mark.slow
@pytest.mark.usefixtures("bounded_memory")
@pytest.mark.parametrize("shard", range(SHARDS))
@settings(max_examples=1500 // SHARDS, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(seed=st.integers(0, len(SEEDS) - 1),
       muts=st.lists(mutations(), min_size=1, max_size=4))
def test_fuzz_mutated_recordings(tmp_path: Path, shard: int, seed: int,
                                 muts: list[Mutation]) -> None:
    mine = SEEDS[shard::SHARDS]
    case = tmp_path / "case.data"
    case.write_bytes(apply_all((HERE / mine[seed % len(mine)]).read_bytes(), muts))
    run_all(str(case))


def test_mutations_edit_what_they_name() -> None:
    """The mutations the strategies draw do what they say (a fuzzer that never changed a
    byte would pass every run)."""
    buf = (HERE / SEEDS[0]).read_bytes()
    assert apply_all(buf, [Mutation("flip", at=3, value=2)])[3] == buf[3] ^ 4
    assert len(apply_all(buf, [Mutation("truncate", at=100)])) == 100
    spliced = apply_all(buf, [Mutation("splice", at=10, src=0, value=8)])
    assert spliced == buf[:10] + buf[:8] + buf[10:]
    data_at = int.from_bytes(buf[40:48], "little")  # the first record of the data section
    sized = apply_all(buf, [Mutation("rec_size", rec=0, value=0)])
    assert sized[data_at + 6:data_at + 8] == b"\0\0" and sized[:data_at + 6] == buf[:data_at + 6]
    header = apply_all(buf, [Mutation("header", field=5, value=7)])  # HEADER_FIELDS[5]: 48
    assert header[48:56] == (7).to_bytes(8, "little")
