"""The table counted from every sample's resolved locations (``analysis.sampleprofile``,
``symbols.samplelocs``) against the plain-Python reference of test_profile_engine (perf's
rules applied sample by sample), and the numpy helpers it rests on against numpy's own
slow paths and Python's sort."""

from __future__ import annotations

import random

import numpy as np
import pytest
from test_profile_engine import key_of_row, make_locs, random_block, reference

from perftui.analysis import sampleprofile, tablerows
from perftui.analysis.keycodes import KeyCodes
from perftui.analysis.profile import Profile, ProfileRow, order_rows
from perftui.analysis.sampleprofile import profile_of
from perftui.perfdata import grouping
from perftui.perfdata.grouping import (
    DenseGrouper,
    dense_unique,
    group_ids,
    stable_order,
    unique_inverse,
)
from perftui.symbols.naming import plainnames as reference_names
from perftui.symbols.naming.locations import Locations
from perftui.symbols.naming.plainnames import ChainTable, with_leaf
from perftui.symbols.naming.resolved import ResolvedSamples
from perftui.symbols.naming.samplelocs import SampleLocs


def sample_locs_of(locs: Locations, blocks: list[ResolvedSamples]) -> SampleLocs:
    """What ``resolve_all`` keeps, made from resolved blocks by the steps of the plain pass
    (perftui/symbols/naming/plainnames.py)."""
    table = ChainTable()
    stack = [table.ids(*with_leaf(s.chain_starts, s.chain_locs, s.leaf)) for s in blocks]
    n = sum(len(s) for s in blocks)
    return SampleLocs(
        rows=np.arange(n, dtype=np.int64),
        comm=np.concatenate([s.comm for s in blocks]),
        leaf=np.concatenate([s.leaf for s in blocks]),
        period=np.concatenate([s.period for s in blocks]),
        stack=np.concatenate(stack), stack_starts=table.starts.copy(),
        stack_locs=table.locs.copy(), locs=locs, comm_names=["a", "b", "c"],
        off_stack=np.ones(n, np.int32), off_starts=np.array([0, 0, 1], np.int64),
        off_vals=np.zeros(1, np.uint32))  # (offsets: not what a profile counts)


def index_of(blocks: list[ResolvedSamples]) -> dict[str, np.ndarray]:
    return {"tid": np.concatenate([s.tid for s in blocks]),
            "cpu": np.concatenate([s.cpu for s in blocks])}


@pytest.mark.parametrize("keys", [("comm", "dso", "sym"), ("sym",), ("dso",), ("comm",),
                                  ("pid",), ("cpu",), ("module", "section", "sym"),
                                  ("section",), ("cpu", "comm", "sym")])
@pytest.mark.parametrize("children", [False, True])
@pytest.mark.parametrize(("chunk", "merge_at", "entries"),  # one chunk and one block of
                         [(1 << 20, 1 << 20, 1 << 20), (97, 1 << 20, 50),  # callchains;
                          (97, 1, 1), (31, 1, 7)])  # many, merged at the end or as they come
def test_equals_reference(keys: tuple[str, ...], children: bool, chunk: int, merge_at: int,
                          entries: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sampleprofile, "CHUNK", chunk)
    monkeypatch.setattr(sampleprofile, "MERGE_AT", merge_at)
    monkeypatch.setattr(tablerows, "CHILD_ENTRIES", entries)
    rng = random.Random(hash((keys, children)) & 0xFFFF)
    locs = make_locs()
    blocks = [random_block(rng, 300, len(locs)) for _ in range(3)]
    sl = sample_locs_of(locs, blocks)
    prof = profile_of(sl, slice(0, len(sl)), index_of(blocks), keys, children, sl.comm_names)
    self_p, child_p, count, through = reference(locs, blocks, keys)
    got_self, got_child, got_count, got_through = {}, {}, {}, {}
    for r in prof.rows:
        k = key_of_row(prof, locs, r, blocks)
        assert k not in got_self, "a row twice"
        got_self[k], got_child[k], got_count[k] = r.self_period, r.children_period, r.samples
        got_through[k] = r.children_samples
    assert {k: v for k, v in got_self.items() if v} == {k: v for k, v in self_p.items() if v}
    assert {k: v for k, v in got_count.items() if v} == dict(count)
    if children:
        assert got_child == dict(child_p)
        assert got_through == dict(through)  # the samples through each row
    else:
        assert set(got_self) == set(self_p)
        assert not any(got_child.values())
        assert got_through == got_count  # (no callchains: through is own)
    assert prof.total_period == sum(int(s.period.sum()) for s in blocks)
    assert prof.total_samples == 900


def test_selected_positions_equal_reference_of_those_samples() -> None:
    rng = random.Random(11)
    locs = make_locs()
    blocks = [random_block(rng, 400, len(locs))]
    sl = sample_locs_of(locs, blocks)
    pos = np.array(sorted(rng.sample(range(400), 150)), dtype=np.int64)
    prof = profile_of(sl, pos, index_of(blocks), ("comm", "sym"), True, sl.comm_names)
    s = blocks[0]
    sub = ResolvedSamples(
        rows=s.rows[pos], period=s.period[pos], comm=s.comm[pos], pid=s.pid[pos],
        tid=s.tid[pos], cpu=s.cpu[pos], attr=s.attr[pos], time=s.time[pos], leaf=s.leaf[pos],
        leaf_off=s.leaf_off[pos], chain_starts=np.concatenate(
            [[0], np.cumsum(np.diff(s.chain_starts)[pos])]).astype(np.int64),
        chain_locs=np.concatenate([s.chain(int(k)) for k in pos]).astype(np.int32),
        chain_ips=np.zeros(0, np.uint64), chain_offs=np.zeros(0, np.uint64))
    self_p, child_p, _count, through = reference(locs, [sub], ("comm", "sym"))
    got = {key_of_row(prof, locs, r, [sub]): (r.self_period, r.children_period,
                                              r.children_samples)
           for r in prof.rows}
    assert got == {k: (self_p.get(k, 0), child_p[k], through[k]) for k in child_p}


def test_row_location_is_the_first_samples() -> None:
    """A row's location is the first sample's (its own location, else the first callchain
    entry with the row's keys): rows keyed by comm take the first sample's leaf."""
    rng = random.Random(3)
    locs = make_locs()
    blocks = [random_block(rng, 200, len(locs))]
    sl = sample_locs_of(locs, blocks)
    prof = profile_of(sl, slice(0, 200), index_of(blocks), ("comm",), False, sl.comm_names)
    s = blocks[0]
    for r in prof.rows:
        first = int(np.flatnonzero(s.comm == r.key[0])[0])
        assert r.loc == int(s.leaf[first])


@pytest.mark.parametrize(("chunk", "merge_at"), [(1 << 20, 1 << 20), (37, 1 << 20), (37, 1)])
@pytest.mark.parametrize("children", [False, True])
def test_row_location_is_the_first_in_processing_order(
        chunk: int, merge_at: int, children: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """With each sample's processing rank (``SampleLocs.rank``, not file order), a row's
    location is the one the sample of lowest rank adding to it gives: its own location
    when that is in the row, else its first callchain entry in the row (innermost first),
    as perf's hist entry is made by the first sample it processes (issue 29: the level
    mark).  Rows keyed by dso: many locations each."""
    monkeypatch.setattr(sampleprofile, "CHUNK", chunk)
    monkeypatch.setattr(sampleprofile, "MERGE_AT", merge_at)
    rng = random.Random(17)
    locs = make_locs()
    blocks = [random_block(rng, 300, len(locs)) for _ in range(2)]
    sl = sample_locs_of(locs, blocks)
    n = len(sl)
    order = list(range(n))
    rng.shuffle(order)
    sl.rank = np.array(order, dtype=np.int32)  # sample k is the order[k]-th processed
    prof = profile_of(sl, slice(0, n), index_of(blocks), ("dso",), children, sl.comm_names)
    dso = locs.dso

    def first_locs(samples: list[int]) -> dict[int, int]:
        out: dict[int, int] = {}
        for k in samples:
            stack = sl.frames(k)[0]
            for loc in stack if children else stack[:1]:  # own, then innermost first
                out.setdefault(dso[loc], loc)
        return out

    want = first_locs(sorted(range(n), key=lambda k: order[k]))  # as perf processes them
    assert {dso[r.loc]: r.loc for r in prof.rows} == want
    assert first_locs(list(range(n))) != want  # (file order would not do)


@pytest.mark.parametrize("keys", [("comm",), ("dso",), ("comm", "sym")])  # rows of many
@pytest.mark.parametrize("entries", [1, 5, 64])  # locations, and of one
def test_children_rows_in_blocks_keep_each_rows_location(
        keys: tuple[str, ...], entries: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Callchains expanded a block of groups at a time give every row the location the
    whole expansion at once gives it (the first sample's, own row before callchain)."""
    rng = random.Random(11)
    locs = make_locs()
    blocks = [random_block(rng, 300, len(locs)) for _ in range(2)]
    sl = sample_locs_of(locs, blocks)
    index = index_of(blocks)

    def table() -> dict[tuple[int, ...], tuple[int, int, int, int]]:
        prof = profile_of(sl, slice(0, len(sl)), index, keys, True, sl.comm_names)
        return {r.key: (r.loc, r.self_period, r.children_period, r.samples) for r in prof.rows}

    whole = table()
    monkeypatch.setattr(tablerows, "CHILD_ENTRIES", entries)
    assert table() == whole and len(whole) >= 3


def test_a_big_children_table_trims_the_heap_once_and_counts_alike(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """At TRIM_AT samples the freed temporaries go back (malloc_trim): after the grouping
    and after the children's expansion, twice per table, and the table is the same."""
    rng = random.Random(5)
    locs = make_locs()
    blocks = [random_block(rng, 300, len(locs)) for _ in range(2)]
    sl = sample_locs_of(locs, blocks)
    index = index_of(blocks)
    trims: list[int] = []
    monkeypatch.setattr(sampleprofile.heap, "trim", lambda: trims.append(1))

    def table() -> dict[tuple[int, ...], tuple[int, int, int, int]]:
        prof = profile_of(sl, slice(0, len(sl)), index, ("comm", "sym"), True, sl.comm_names)
        return {r.key: (r.loc, r.self_period, r.children_period, r.samples) for r in prof.rows}

    small = table()
    assert trims == []  # 600 samples: under the default TRIM_AT
    monkeypatch.setattr(sampleprofile, "TRIM_AT", len(sl))
    assert table() == small and trims == [1, 1]


# -- the distinct stacks ---------------------------------------------------------------------
def csr(chains: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    starts = np.zeros(len(chains) + 1, np.int64)
    np.cumsum([len(c) for c in chains], out=starts[1:])
    flat = np.array([x for c in chains for x in c], dtype=np.int32)
    return starts, flat


@pytest.mark.parametrize("collide", [False, True])
def test_chain_ids_equal_iff_chains_equal(collide: bool,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Equal ids for equal chains, different ids for different ones, across blocks; with
    every hash made equal (all collide), still never one id for two chains."""
    if collide:
        monkeypatch.setattr(reference_names, "chain_hashes",
                            lambda starts, locs: np.zeros(len(starts) - 1, np.uint64))
    rng = random.Random(7)
    pool = [[rng.randrange(6) for _ in range(rng.choice([0, 1, 2, 3]))] for _ in range(25)]
    table = ChainTable()
    seen: dict[int, tuple[int, ...]] = {}
    by_chain: dict[tuple[int, ...], set[int]] = {}
    for _ in range(4):
        chains = [rng.choice(pool) for _ in range(60)]
        ids = table.ids(*csr(chains))
        for c, i in zip(chains, ids.tolist(), strict=True):
            assert seen.setdefault(i, tuple(c)) == tuple(c)  # one id: one chain
            got = table.locs[table.starts[i]:table.starts[i + 1]].tolist()
            assert got == c  # the table holds the chain under its id
            by_chain.setdefault(tuple(c), set()).add(i)
    if not collide:
        assert all(len(v) == 1 for v in by_chain.values())  # one chain: one id


def test_with_leaf_puts_each_leaf_first() -> None:
    starts, flat = csr([[5, 6], [], [7], []])
    s2, f2 = with_leaf(starts, flat, np.array([1, 2, 3, 4], np.int32))
    assert [f2[s2[k]:s2[k + 1]].tolist() for k in range(4)] == [[1, 5, 6], [2], [3, 7], [4]]


# -- grouping helpers --------------------------------------------------------------------------
@pytest.mark.parametrize("space", [1, 50, 5000, 1 << 40])
def test_group_ids_equal_numpy_unique(space: int) -> None:
    rng = np.random.default_rng(space % 1000)
    flat = rng.integers(0, space, 20000)
    want_u, want_first, want_inv = np.unique(flat, return_index=True, return_inverse=True)
    u, inv, first = group_ids(flat, space if space < 1 << 30 else None)
    assert np.array_equal(u, want_u)
    assert np.array_equal(inv, want_inv.reshape(-1))
    assert np.array_equal(first, want_first)
    if space < 1 << 20:
        u2, inv2, first2 = dense_unique(flat, space)
        assert np.array_equal(u2, want_u) and np.array_equal(inv2, want_inv.reshape(-1))
        assert np.array_equal(first2, want_first)


def test_dense_grouper_equals_numpy_unique_call_after_call() -> None:
    """One grouper over many arrays (its tables cleared between them) gives what
    np.unique gives each array alone, the inverse as int32."""
    rng = np.random.default_rng(8)
    grouper = DenseGrouper(3000, 5000)
    for n in (5000, 17, 0, 4999, 1):
        flat = rng.integers(0, 3000 if n != 17 else 4, n)
        want_u, want_first, want_inv = np.unique(flat, return_index=True,
                                                 return_inverse=True)
        u, inv, first = grouper(flat)
        assert inv.dtype == np.int32
        assert np.array_equal(u, want_u) and np.array_equal(inv, want_inv.reshape(-1))
        assert np.array_equal(first, want_first)


def test_unique_inverse_and_stable_order() -> None:
    rng = np.random.default_rng(4)
    for values in (rng.integers(-3, 40, 5000), rng.integers(0, 1 << 50, 5000),
                   np.zeros(0, np.int64)):
        u, inv = unique_inverse(values)
        want_u, want_inv = np.unique(values, return_inverse=True)
        assert np.array_equal(u, want_u) and np.array_equal(inv, want_inv.reshape(-1))
    small = rng.integers(-2, 90, 5000)
    assert np.array_equal(stable_order(small), np.argsort(small, kind="stable"))
    wide = rng.integers(0, 1 << 40, 5000)
    assert np.array_equal(stable_order(wide), np.argsort(wide, kind="stable"))


def test_dense_limit_bounds_the_table() -> None:
    assert grouping.dense_limit(10) == 1 << 16
    assert grouping.dense_limit(1 << 30) == grouping.DENSE_MAX


# -- perf's output order, by numpy -------------------------------------------------------------
def test_order_rows_by_numpy_equals_python_sort() -> None:
    """Over 1000 rows order_rows sorts with numpy: the same order as the key of
    perf's rules sorted by Python (ties kept in their order)."""
    rng = random.Random(9)
    locs = Locations()
    d1 = locs.dso_id("/usr/lib/libc.so.6")
    d2 = locs.dso_id("[kernel.kallsyms]", kernel=True)
    d3 = locs.dso_id("[unknown]")
    names = ["memcpy", "Memcpy", "main", "é", "zz", "_start"]
    for k in range(400):
        if k % 3:
            locs.add(rng.choice([d1, d2]), rng.choice(names), 16 * k, 16 * k + 8)
        else:
            locs.unresolved_ids(rng.choice([d1, d2, d3]),
                                np.array([rng.randrange(1 << 40)], np.uint64))
    keys = ("comm", "dso", "sym", "cpu")
    codes = KeyCodes(locs, keys)
    comms = ["bash", "Bash", "zsh", "b"]
    rows = []
    for _ in range(3000):
        loc = rng.randrange(len(locs))
        rows.append(ProfileRow((rng.randrange(4), int(codes.of("dso")[loc]),
                                int(codes.of("sym")[loc]), rng.randrange(3)), loc,
                               rng.choice([0, 5, 10]), rng.choice([10, 20]), 1, 1))
    for children in (False, True):
        fast = Profile(keys, children, 100, 3000, list(rows), codes)
        order_rows(fast, comms)
        ref = sorted(rows, key=_python_key(fast, comms))
        assert [id(r) for r in fast.rows] == [id(r) for r in ref]


def _python_key(prof: Profile, comm_names: list[str]):
    locs = prof.codes.locs
    names = prof.codes.names

    def b(s: str) -> bytes:
        return s.encode("utf-8", "surrogateescape")

    def key(r: ProfileRow):
        out: list = [-(r.children_period if prof.children else r.self_period)]
        if prof.children:
            out.append(-r.self_period)
        for k, code in zip(prof.keys, r.key, strict=True):
            if k == "comm":
                out.append(b(comm_names[code]))
            elif k in ("pid", "tid", "cpu"):
                out.append(code)
            elif k == "sym":
                n = locs.name[r.loc]
                out.append((0, b(n), 0) if n is not None else (1, b"", locs.start[r.loc]))
            elif k == "dso" and names[k][code] == "[unknown]":
                out.append((1, b""))  # perf's cmp_null: no dso after every dso
            else:
                out.append((0, b(names[k][code])))
        return tuple(out)

    return key


@pytest.mark.parametrize("n_rows", [6, 1500])  # the Python sort and the numpy one
def test_rows_without_a_dso_come_after_every_dso_on_a_tie(n_rows: int) -> None:
    """perf 6.1 sort.c: ``sort__dso_cmp`` compares ``_sort__dso_cmp(right, left)`` and a
    missing dso (``cmp_null``) ranks after any dso, so on equal overhead perf prints the
    ``[unknown]`` rows last (seen on a fresh recording: after ``libc.so.6`` and
    ``ld-linux-x86-64.so.2``, where strcmp would put ``[unknown]`` before them)."""
    locs = Locations()
    dsos = [locs.dso_id("[unknown]"), locs.dso_id("/lib/ld-linux-x86-64.so.2"),
            locs.dso_id("[kernel.kallsyms]", kernel=True), locs.dso_id("/lib/libc.so.6")]
    for k, d in enumerate(dsos):
        locs.add(d, f"f{k}", 16 * k, 16 * k + 8)
    codes = KeyCodes(locs, ("dso",))
    rows = [ProfileRow((int(codes.of("dso")[k % 4]),), k % 4, 10, 10, 1, 1)
            for k in range(n_rows)]
    prof = Profile(("dso",), False, 100, n_rows, rows, codes)
    order_rows(prof)
    shown = [codes.names["dso"][r.key[0]] for r in prof.rows]
    first = list(dict.fromkeys(shown))
    assert first == ["[kernel.kallsyms]", "ld-linux-x86-64.so.2", "libc.so.6", "[unknown]"]
