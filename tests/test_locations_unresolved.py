"""Unresolved addresses get location ids in blocks: the same ids a location table that adds
them one at a time (a dict per address, written here) gives, in a fresh table and in one
restored from its lists (a cached table a later resolver adds to)."""

from __future__ import annotations

import random

import numpy as np

from perftui.symbols.naming.locations import Locations


class OneAtATime:
    """Locations the obvious way: a dict of (dso, name, start, end) -> id."""

    def __init__(self) -> None:
        self.ids: dict[tuple, int] = {}
        self.rows: list[tuple] = []

    def add(self, dso: int, name: str | None, start: int, end: int,
            section: str | None) -> int:
        key = (dso, name, start, end)
        if key not in self.ids:
            self.ids[key] = len(self.rows)
            self.rows.append((dso, name, start, end, section))
        return self.ids[key]

    def unresolved(self, dso: int, addrs: list[int], section: str | None) -> list[int]:
        for a in sorted(set(addrs)):  # new ones in address order, as the resolver adds them
            self.add(dso, None, a, a + 1, section)
        return [self.ids[(dso, None, a, a + 1)] for a in addrs]


def rows_of(locs: Locations) -> list[tuple]:
    return list(zip(locs.dso, locs.name, locs.start, locs.end, locs.section, strict=True))


def test_unresolved_ids_match_one_at_a_time() -> None:
    top = 2**64 - 1
    for seed in range(60):
        rng = random.Random(seed)
        locs, ref = Locations(), OneAtATime()
        pool = [rng.randrange(1 << 48) for _ in range(40)] + [0, 1, top]
        first = locs.unresolved_ids(0, np.array([top, 5, top], dtype=np.uint64))
        assert first.tolist() == ref.unresolved(0, [top, 5, top], None) == [1, 0, 1]
        assert locs.end[1] == 2**64  # the last address's location ends past u64
        for step in range(30):
            dso = rng.randrange(3)
            section = rng.choice([None, ".text"])
            kind = rng.random()
            if kind < 0.6:
                addrs = [rng.choice(pool) for _ in range(rng.randrange(0, 50))]
                got = locs.unresolved_ids(dso, np.array(addrs, dtype=np.uint64), section)
                assert got.dtype == np.int32
                assert got.tolist() == ref.unresolved(dso, addrs, section), (seed, step)
            elif kind < 0.8:  # one unresolved address through add()
                a = rng.choice(pool)
                assert locs.add(dso, None, a, a + 1, section) == ref.add(dso, None, a, a + 1,
                                                                         section)
            else:  # a symbol
                s = rng.choice(pool) & ~0xF
                name = rng.choice(["f", "g", None])
                assert locs.add(dso, name, s, s + 16, section) == ref.add(dso, name, s, s + 16,
                                                                          section)
            if rng.random() < 0.1:  # restored from its lists, as the cache does
                again = Locations()
                again.dsos, again.dso_ids = locs.dsos, locs.dso_ids
                again.dso, again.name = list(locs.dso), list(locs.name)
                again.start, again.end = list(locs.start), list(locs.end)
                again.section = list(locs.section)
                again._ids = None
                locs = again
        assert rows_of(locs) == ref.rows
