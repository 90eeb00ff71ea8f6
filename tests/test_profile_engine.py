"""The vectorised hotspot table and call trees against a plain-Python reference that
applies perf's rules sample by sample (self: the sample's own row; children: every distinct
row of its stack once), on random blocks of samples."""

from __future__ import annotations

import random
from collections import Counter, defaultdict

import numpy as np
import pytest

from perftui.analysis.sortkeys import SortKeyError, parse_sort
from perftui.symbols.naming.locations import Locations
from perftui.symbols.naming.resolved import ResolvedSamples
from reference.calltree import build_tree
from reference.profile import build_profile


def make_locs() -> Locations:
    locs = Locations()
    k = locs.dso_id("[kernel.kallsyms]", kernel=True)
    m = locs.dso_id("[demo_nic]", kernel=True, module="demo_nic")
    u = locs.dso_id("/usr/bin/prog")
    lib = locs.dso_id("/lib/libc.so.6")
    locs.add(k, "schedule", 0x100, 0x200)
    locs.add(k, "do_syscall_64", 0x300, 0x400)
    locs.add(m, "nic_poll", 0x10, 0x40, ".text")
    locs.add(m, "nic_cold", 0x0, 0x20, ".text.unlikely")
    locs.add(u, "main", 0x1000, 0x1100)
    locs.add(u, "hot", 0x1200, 0x1300)
    locs.add(lib, "memcpy", 0x5000, 0x5100)
    locs.add(u, None, 0x1f00, 0x1f01)  # unresolved
    return locs


def random_block(rng: random.Random, n: int, nlocs: int) -> ResolvedSamples:
    chains: list[list[int]] = []
    for _ in range(n):
        depth = rng.choice([0, 1, 2, 3, 5, 8])
        chains.append([rng.randrange(nlocs) for _ in range(depth)])
    starts = np.zeros(n + 1, np.int64)
    np.cumsum([len(c) for c in chains], out=starts[1:])
    flat = np.array([x for c in chains for x in c], dtype=np.int32)
    leaf = np.array([c[0] if c else rng.randrange(nlocs) for c in chains], dtype=np.int32)
    return ResolvedSamples(
        rows=np.arange(n, dtype=np.int64),
        period=np.array([rng.choice([1, 250000, 10**9]) for _ in range(n)], np.uint64),
        comm=np.array([rng.randrange(3) for _ in range(n)], np.int32),
        pid=np.zeros(n, np.int32),
        tid=np.array([rng.choice([10, 11, 12]) for _ in range(n)], np.int32),
        cpu=np.array([rng.randrange(4) for _ in range(n)], np.int32),
        attr=np.zeros(n, np.int16), time=np.arange(n, dtype=np.uint64),
        leaf=leaf, leaf_off=np.zeros(n, np.uint64),
        chain_starts=starts, chain_locs=flat, chain_ips=np.zeros(len(flat), np.uint64),
        chain_offs=np.zeros(len(flat), np.uint64))


def key_of(locs: Locations, s: ResolvedSamples, k: int, loc: int, keys: tuple[str, ...]):
    out = []
    for key in keys:
        d = locs.dsos[locs.dso[loc]]
        out.append({"comm": int(s.comm[k]), "pid": int(s.tid[k]), "tid": int(s.tid[k]),
                    "cpu": int(s.cpu[k]), "dso": d.short_name,
                    "sym": ((d.short_name, locs.start[loc], locs.end[loc])
                            if locs.name[loc] is not None else ("", locs.start[loc], -1)),
                    "module": d.module or d.short_name,
                    "section": locs.section[loc] or "-"}[key])
    return tuple(out)


def reference(locs, blocks, keys):
    self_p: Counter = Counter()
    child_p: Counter = Counter()
    count: Counter = Counter()
    through: Counter = Counter()  # samples whose stack passes the row (its own included)
    for s in blocks:
        for k in range(len(s)):
            p = int(s.period[k])
            own = key_of(locs, s, k, int(s.leaf[k]), keys)
            self_p[own] += p
            count[own] += 1
            child_p[own] += p  # the sample's own row, once
            through[own] += 1
            stack = s.chain(k).tolist() or [int(s.leaf[k])]
            for r in {key_of(locs, s, k, loc, keys) for loc in stack} - {own}:
                child_p[r] += p
                through[r] += 1
    return self_p, child_p, count, through


@pytest.mark.parametrize("keys", [("comm", "dso", "sym"), ("sym",), ("dso",), ("comm",),
                                  ("pid",), ("cpu",), ("module", "section", "sym"),
                                  ("section",)])
@pytest.mark.parametrize("seed", [1, 2])
def test_profile_equals_reference(keys: tuple[str, ...], seed: int) -> None:
    rng = random.Random(seed)
    locs = make_locs()
    blocks = [random_block(rng, 300, len(locs)) for _ in range(3)]
    prof = build_profile(blocks, locs, keys, children=True)
    self_p, child_p, count, through = reference(locs, blocks, keys)
    got_self, got_child, got_count, got_through = {}, {}, {}, {}
    for r in prof.rows:
        k = key_of_row(prof, locs, r, blocks)
        got_self[k], got_child[k], got_count[k] = r.self_period, r.children_period, r.samples
        got_through[k] = r.children_samples
    assert {k: v for k, v in got_self.items() if v} == {k: v for k, v in self_p.items() if v}
    assert got_child == dict(child_p)
    assert {k: v for k, v in got_count.items() if v} == dict(count)
    assert got_through == dict(through)
    assert prof.total_period == sum(int(s.period.sum()) for s in blocks)
    assert prof.total_samples == 900
    # rows by children, then self
    order = [(r.children_period, r.self_period) for r in prof.rows]
    assert order == sorted(order, reverse=True)


def key_of_row(prof, locs, r, blocks):
    out = []
    for key, code in zip(prof.keys, r.key, strict=True):
        if key in ("comm", "pid", "tid", "cpu"):
            out.append(code)
        elif key == "sym":
            d = locs.dsos[locs.dso[r.loc]]
            out.append((d.short_name, locs.start[r.loc], locs.end[r.loc])
                       if locs.name[r.loc] is not None else ("", locs.start[r.loc], -1))
        else:
            out.append(prof.codes.names[key][code])
    return tuple(out)


def test_no_children_is_self_only() -> None:
    rng = random.Random(5)
    locs = make_locs()
    blocks = [random_block(rng, 200, len(locs))]
    prof = build_profile(blocks, locs, ("sym",), children=False)
    assert all(r.children_period == 0 for r in prof.rows)
    assert sum(r.self_period for r in prof.rows) == prof.total_period


def test_sort_keys() -> None:
    assert parse_sort("comm,dso,symbol") == ("comm", "dso", "sym")
    with pytest.raises(SortKeyError):
        parse_sort("comm,bogus")


def test_reference_call_tree() -> None:
    """The reference call tree (tests/reference/calltree.py) against a direct count."""
    rng = random.Random(7)
    locs = make_locs()
    blocks = [random_block(rng, 400, len(locs)) for _ in range(2)]
    tree = build_tree(blocks, top_down=True)
    totals: dict[tuple, int] = defaultdict(int)
    for s in blocks:
        for k in range(len(s)):
            stack = s.chain(k).tolist() or [int(s.leaf[k])]
            path = (f"c{int(s.comm[k])}", *(f"l{x}" for x in reversed(stack)))
            for d in range(1, len(path) + 1):
                totals[path[:d]] += int(s.period[k])
    for n in range(len(tree)):
        path = tuple(f"c{-1 - f}" if f < 0 else f"l{f}" for f in tree.path(n))
        assert int(tree.total[n]) == totals[path]
    # callers/callees of one location from the tree equal a direct count
    loc = 5
    _callers, callees = tree.neighbours(loc)
    want_callees: Counter = Counter()
    for s in blocks:
        for k in range(len(s)):
            stack = list(reversed(s.chain(k).tolist() or [int(s.leaf[k])]))
            for i, f in enumerate(stack[:-1]):
                if f == loc:
                    want_callees[stack[i + 1]] += int(s.period[k])
    assert dict(callees) == dict(want_callees)
