"""Folded stacks and speedscope files from the named samples (``analysis.stackcounts``)
against a sample-by-sample count of random blocks (each sample's callchain, else its own
location, outermost first under its thread name)."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from test_profile_engine import make_locs, random_block
from test_sampleprofile import sample_locs_of

from perftui.analysis.stackcounts import stack_counts, stack_frames, thread_runs
from perftui.present.export import folded_stacks, speedscope


def loc_name(loc: int) -> str:
    return f"l{loc}"


def comm_name(c: int) -> str:
    return f"c{c}"


@pytest.mark.parametrize("seed", [7, 8])
@pytest.mark.parametrize("subset", [False, True])
def test_folded_and_speedscope_equal_a_direct_count(seed: int, subset: bool) -> None:
    rng = random.Random(seed)
    locs = make_locs()
    blocks = [random_block(rng, 400, len(locs)) for _ in range(2)]
    sl = sample_locs_of(locs, blocks)
    keep = np.array([rng.random() < 0.6 for _ in range(len(sl))]) if subset else None
    ref: Counter[str] = Counter()
    paths: Counter[tuple[str, ...]] = Counter()
    period: Counter[tuple[str, ...]] = Counter()
    k_all = 0
    for s in blocks:
        for k in range(len(s)):
            if keep is None or keep[k_all]:
                stack = s.chain(k).tolist() or [int(s.leaf[k])]
                path = (f"c{int(s.comm[k])}", *(f"l{x}" for x in reversed(stack)))
                ref[";".join(path)] += 1
                paths[path] += 1
                period[path] += int(s.period[k])
            k_all += 1
    pos = np.flatnonzero(keep) if keep is not None else slice(0, len(sl))
    counts = stack_counts(sl, pos)
    assert dict(folded_stacks(counts.paths(), loc_name, comm_name)) == dict(ref)
    got_period: Counter[tuple[str, ...]] = Counter()
    for i, (c, frames, _n) in enumerate(counts.paths()):
        got_period[(comm_name(c), *map(loc_name, frames))] += int(counts.period[i])
    assert got_period == period
    doc = speedscope(counts.paths(), loc_name, comm_name, lambda loc: "x", "t")
    prof = doc["profiles"][0]
    names = [f["name"] for f in doc["shared"]["frames"]]
    got = Counter({tuple(names[f] for f in smp): w
                   for smp, w in zip(prof["samples"], prof["weights"], strict=True)})
    assert got == paths
    assert len(prof["samples"]) == len(paths)  # one sample per distinct path
    assert prof["endValue"] == sum(paths.values())


def test_no_samples() -> None:
    locs = make_locs()
    sl = sample_locs_of(locs, [random_block(random.Random(1), 5, len(locs))])
    counts = stack_counts(sl, np.zeros(0, np.int64))
    assert len(counts) == 0 and folded_stacks(counts.paths(), loc_name, comm_name) == []


@pytest.mark.parametrize("seed", [3, 4])
def test_thread_profiles_equal_a_walk_in_time_order(seed: int) -> None:
    """speedscope's per-thread profiles (:func:`thread_runs` named as ``--speedscope``
    names them): each thread's samples ordered by time here (ties: by position),
    neighbours with one thread name and frames (the callchain, else the own location)
    merged into one sample counted by samples or summed by period; threads heaviest
    first, then by tid."""
    rng = random.Random(seed)
    locs = make_locs()
    block = random_block(rng, 300, 2)  # (two locations: neighbours alike, merged)
    sl = sample_locs_of(locs, [block])
    n = len(sl)
    tid = np.array([rng.choice([5, 6, 9]) for _ in range(n)])
    pid = tid // 2
    time = np.array([rng.randrange(40) for _ in range(n)])  # (ties, so position decides)
    keep = np.array([rng.random() < 0.7 for _ in range(n)])
    pos = np.flatnonzero(keep)
    for by_period in (False, True):
        want: dict[int, list[list]] = {}
        for p in sorted(pos.tolist(), key=lambda p: (tid[p], time[p], p)):
            stack = block.chain(p).tolist() or [int(block.leaf[p])]
            key = (comm_name(int(block.comm[p])), *(loc_name(x) for x in reversed(stack)))
            w = int(block.period[p]) if by_period else 1
            runs = want.setdefault(int(tid[p]), [])
            if runs and runs[-1][0] == key:
                runs[-1][1] += w
            else:
                runs.append([key, w])
        if not by_period:
            assert any(w > 1 for runs in want.values() for _k, w in runs)  # (some merged)
        got = thread_runs(sl, pos, tid[pos], pid[pos], time[pos], by_period)
        order = sorted(want, key=lambda t: (-sum(w for _k, w in want[t]), t))
        assert [r.tid for r in got] == order
        assert all(r.pid == r.tid // 2 for r in got)
        threads = [(f"t{r.tid}", [(int(c), stack_frames(sl, int(s), int(lf), False), int(w))
                                  for c, s, lf, w in zip(r.comm, r.stack, r.leaf, r.weight,
                                                         strict=True)]) for r in got]
        doc = speedscope([], loc_name, comm_name, lambda loc: "x", "t", threads=threads)
        names = [f["name"] for f in doc["shared"]["frames"]]
        for prof, t in zip(doc["profiles"][1:], order, strict=True):
            assert prof["name"] == f"t{t}"
            assert [[tuple(names[f] for f in smp), w] for smp, w in
                    zip(prof["samples"], prof["weights"], strict=True)] == want[t]
