"""The browser's grouped samples against the report engine (checked row for row against
perf report in test_report_perf.py) and against plain-Python references applied sample by
sample: hotspot tables under any mask and event, call trees top-down and bottom-up, the
callers and callees of a row, and the samples behind a row or a tree node."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from test_profile_engine import key_of_row, make_locs, random_block

from perftui.analysis import stacktree
from perftui.analysis.grouptrees import bottom_up, focus_trees, top_down
from perftui.analysis.packing import Packer
from perftui.analysis.report import sample_rows
from perftui.analysis.samplegroups import GroupCodes, GroupsBuilder, assemble, group_profile, select
from perftui.analysis.stacktree import Interner, PathInterner, TrieBuilder
from perftui.demo import MODULES_DIR
from perftui.demo.generate import write_demo
from perftui.perfdata import open_recording
from perftui.symbols.naming.resolved import ResolvedSamples
from perftui.symbols.naming.resolver import Resolver, SymbolOptions
from perftui.symbols.naming.samplelocs import resolve_all
from reference.calltree import build_tree
from reference.groups import BlockGroupsBuilder
from reference.profile import build_profile

KEY_SETS = [("comm", "dso", "sym"), ("sym",), ("dso",), ("comm",), ("pid",), ("cpu",),
            ("module", "section", "sym"), ("section",), ("dso", "sym"), ("tid", "sym")]


def subset(s: ResolvedSamples, keep: np.ndarray) -> ResolvedSamples:
    """The samples of a block where ``keep`` holds (a plain loop: the test's own)."""
    idx = np.nonzero(keep)[0]
    chains = [s.chain(int(k)) for k in idx]
    starts = np.zeros(len(idx) + 1, np.int64)
    np.cumsum([len(c) for c in chains], out=starts[1:])
    flat = np.concatenate(chains).astype(np.int32) if chains else np.zeros(0, np.int32)
    return ResolvedSamples(
        rows=s.rows[idx], period=s.period[idx], comm=s.comm[idx], pid=s.pid[idx],
        tid=s.tid[idx], cpu=s.cpu[idx], attr=s.attr[idx], time=s.time[idx], leaf=s.leaf[idx],
        leaf_off=s.leaf_off[idx], chain_starts=starts, chain_locs=flat,
        chain_ips=np.zeros(len(flat), np.uint64), chain_offs=np.zeros(len(flat), np.uint64))


def random_blocks(seed: int, n: int = 3, size: int = 300) -> list[ResolvedSamples]:
    rng = random.Random(seed)
    locs_n = len(make_locs())
    out = []
    for b in range(n):
        s = random_block(rng, size, locs_n)
        s.rows = np.arange(b * size, (b + 1) * size, dtype=np.int64)
        s.attr = np.array([rng.randrange(2) for _ in range(size)], np.int16)
        out.append(s)
    return out


def store_of(blocks, locs, comm_names=("a", "b", "c")):  # type: ignore[no-untyped-def]
    b = BlockGroupsBuilder(locs, list(comm_names), callchains=True)
    for s in blocks:
        b.add(s)
    return b.finish()


def rows_by_key(prof, locs, blocks):  # type: ignore[no-untyped-def]
    return [(key_of_row(prof, locs, r, blocks), r.self_period, r.children_period, r.samples,
             r.children_samples)
            for r in prof.rows]


def test_interner_and_trie() -> None:
    it = Interner()
    assert it.ids(np.array([5, 3, 5, 9])).tolist() == [1, 0, 1, 2]
    assert it.ids(np.array([9, 1, 4])).tolist() == [2, 3, 4]
    assert it.keys().tolist() == [3, 5, 9, 1, 4]
    tb = TrieBuilder()
    end = tb.add(np.array([0, 3, 5, 5, 7]), np.array([-1, 10, 11, -1, 10, -2, 10]))
    t = tb.trie()
    assert [t.path(int(e)) if e >= 0 else [] for e in end] == [
        [-1, 10, 11], [-1, 10], [], [-2, 10]]
    assert all(int(t.parent[i]) < i for i in range(len(t)))
    w = t.weigh(end, np.array([5, 7, 100, 11]), np.array([1, 1, 1, 1]))
    assert w.grand_total == 23 and w.grand_count == 3
    roots = w.children(-1).tolist()  # heaviest first: -1's paths weigh 12, -2's 11
    assert [t.path(r) for r in roots] == [[-1], [-2]]
    assert [int(w.total[r]) for r in roots] == [12, 11]
    (n10,) = w.children(roots[0]).tolist()
    assert int(w.total[n10]) == 12 and int(w.self_period[n10]) == 7
    assert t.lift(end, 1).tolist() == [n10, n10, -1, int(end[3])]
    assert t.lift(end, 0).tolist() == [roots[0], roots[0], -1, roots[1]]


def test_path_interner_survives_hash_collisions(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a hash that makes every path of a length collide, paths are still told apart
    (by their frames), block after block."""
    rng = random.Random(9)
    paths = [tuple(rng.randrange(-3, 6) for _ in range(rng.randrange(1, 5)))
             for _ in range(400)]
    for mul in (stacktree._HASH_MUL, np.uint64(0)):
        monkeypatch.setattr(stacktree, "_HASH_MUL", mul)
        it = PathInterner()
        ref: dict[tuple[int, ...], int] = {}
        for lo in range(0, 400, 100):
            block = paths[lo:lo + 100]
            starts = np.zeros(len(block) + 1, np.int64)
            np.cumsum([len(p) for p in block], out=starts[1:])
            got = it.ids(starts, np.array([x for p in block for x in p], np.int64))
            for p, g in zip(block, got.tolist(), strict=True):
                assert ref.setdefault(p, g) == g
        assert len(set(ref.values())) == len(ref)
        st, fr = it.paths()
        for p, g in ref.items():
            assert tuple(fr[st[g]:st[g + 1]].tolist()) == p


@pytest.mark.parametrize("keys", KEY_SETS)
@pytest.mark.parametrize("children", [True, False])
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("fold", [True, False])
def test_group_profile_equals_report_engine(keys, children, seed, fold, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    if not fold:  # the general path: key tuples too wide for one int64, grouped as rows
        monkeypatch.setattr(Packer, "space", property(lambda self: 2**62))
    locs = make_locs()
    blocks = random_blocks(seed)
    st = store_of(blocks, locs)
    rng = np.random.default_rng(seed)
    mask = rng.random(len(st)) < 0.6
    for attr in (None, 1):
        for m in (None, mask):
            gp = group_profile(select(st, m, attr), keys, children)
            keep_blocks = []
            lo = 0
            for s in blocks:
                k = np.ones(len(s), bool) if m is None else m[lo:lo + len(s)]
                if attr is not None:
                    k = k & (s.attr == attr)
                keep_blocks.append(subset(s, k))
                lo += len(s)
            want = build_profile(keep_blocks, locs, keys, children)
            got = rows_by_key(gp.profile, locs, blocks)
            assert got == rows_by_key(want, locs, blocks)
            assert gp.profile.total_period == want.total_period
            assert gp.profile.total_samples == want.total_samples


def reference_stacks(blocks, mask=None):  # type: ignore[no-untyped-def]
    """(row, comm, stack root first, leaf, period) of every sample (a plain loop)."""
    out = []
    lo = 0
    for s in blocks:
        for k in range(len(s)):
            if mask is None or mask[lo + k]:
                chain = s.chain(k).tolist() or [int(s.leaf[k])]
                out.append((int(s.rows[k]), int(s.comm[k]), chain[::-1], int(s.leaf[k]),
                            int(s.period[k])))
        lo += len(s)
    return out


def folded(tree) -> Counter:  # type: ignore[no-untyped-def]
    """path (frames) -> (self period, self count) of a GroupTree."""
    t = tree.tree
    out: Counter = Counter()
    for n in np.nonzero(t.self_count)[0].tolist():
        out[tuple(t.trie.path(n))] += int(t.self_period[n])
    return out


@pytest.mark.parametrize("seed", [3, 4])
def test_trees_equal_the_call_tree_engine(seed: int) -> None:
    locs = make_locs()
    blocks = random_blocks(seed)
    st = store_of(blocks, locs)
    mask = np.random.default_rng(seed).random(len(st)) < 0.5
    sel = select(st, mask)
    td = top_down(sel)
    ref = reference_stacks(blocks, mask)
    want: Counter = Counter()
    for _row, comm, stack, _leaf, p in ref:
        want[(-1 - comm, *stack)] += p
    assert folded(td) == want
    # and the report engine's CallTree agrees on the unmasked samples
    full = top_down(select(st))
    ct = build_tree(blocks, top_down=True)
    ct_fold: Counter = Counter()
    for n in np.nonzero(ct.self_period)[0].tolist():
        ct_fold[tuple(ct.path(n))] += int(ct.self_period[n])
    assert folded(full) == ct_fold
    bu = bottom_up(sel)
    want_bu: Counter = Counter()
    for _row, comm, stack, _leaf, p in ref:
        want_bu[(*stack[::-1], -1 - comm)] += p
    assert folded(bu) == want_bu
    # totals: every node's total is the period of the paths through it
    t = td.tree
    for n in range(len(t)):
        path = tuple(t.trie.path(n))
        through = sum(v for k, v in want.items() if k[:len(path)] == path)
        assert int(t.total[n]) == through


@pytest.mark.parametrize("keys", [("sym",), ("comm", "dso", "sym"), ("dso",), ("comm",)])
def test_focus_trees_and_samples_of_a_row(keys: tuple[str, ...]) -> None:
    locs = make_locs()
    blocks = random_blocks(7)
    st = store_of(blocks, locs)
    mask = np.random.default_rng(7).random(len(st)) < 0.7
    sel = select(st, mask)
    gp = group_profile(sel, keys, children=True)
    ref = reference_stacks(blocks, mask)
    codes = gp.profile.codes
    for r, row in enumerate(gp.profile.rows[:12]):
        def key(loc: int, comm: int, tid: int) -> tuple[int, ...]:
            out = []
            for k in keys:
                if k == "comm":
                    out.append(comm)
                elif k in ("pid", "tid"):
                    out.append(tid)
                else:
                    out.append(int(codes.of(k)[loc]))
            return tuple(out)

        tids = {}
        lo = 0
        for s in blocks:
            for k in range(len(s)):
                tids[int(s.rows[k])] = int(s.tid[k])
            lo += len(s)
        want_callees: Counter = Counter()
        want_callers: Counter = Counter()
        want_rows = set()
        want_self_rows = set()
        for rw, comm, stack, leaf, p in ref:
            tid = tids[rw]
            hits = [i for i, loc in enumerate(stack) if key(loc, comm, tid) == row.key]
            own = key(leaf, comm, tid) == row.key
            if own:
                want_self_rows.add(rw)
            if not hits and own:
                hits = [len(stack) - 1]
            if not hits:
                continue
            want_rows.add(rw)
            want_callees[tuple(stack[hits[0]:])] += p
            want_callers[(*stack[:hits[-1] + 1][::-1], -1 - comm)] += p
        callers, callees = focus_trees(gp, r)
        assert folded(callees) == want_callees
        assert folded(callers) == want_callers
        assert set(sel.rows_of(gp.groups_of_row(r)).tolist()) == want_rows
        assert set(sel.rows_of(gp.groups_of_row(r, through=False)).tolist()) == want_self_rows
        # the samples through a node of the callees tree: those whose path has its prefix
        for n in callees.tree.children(-1).tolist()[:3]:
            prefix = tuple(callees.tree.trie.path(n))
            got = set(sel.rows_of(callees.groups_through(n)).tolist())
            want = set()
            for rw, comm, stack, leaf, _p in ref:
                tid = tids[rw]
                hits = [i for i, loc in enumerate(stack) if key(loc, comm, tid) == row.key]
                if not hits and key(leaf, comm, tid) == row.key:
                    hits = [len(stack) - 1]
                if hits and tuple(stack[hits[0]:])[:len(prefix)] == prefix:
                    want.add(rw)
            assert got == want


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    plan = write_demo(tmp_path_factory.mktemp("groups") / "demo.data")
    path = plan.path
    rec = open_recording(path)
    rec.build_index()
    res = Resolver(rec, SymbolOptions(modules_dirs=[str(MODULES_DIR)]))
    rows = sample_rows(rec)
    blocks = list(res.blocks(rows, 4096, True))
    b = BlockGroupsBuilder(res.locs, res.comm_names, callchains=True)
    for s in blocks:
        b.add(s)
    yield rec, res, blocks, b.finish(), plan
    rec.close()


@pytest.mark.parametrize("keys", KEY_SETS)
def test_demo_profile_equals_report_engine(demo_store, keys) -> None:  # type: ignore[no-untyped-def]
    _rec, res, blocks, st, plan = demo_store
    assert len(st) == sum(len(s) for s in blocks) == plan.samples
    for children in (True, False):
        gp = group_profile(select(st), keys, children)
        want = build_profile(blocks, res.locs, keys, children, res.comm_names)
        assert rows_by_key(gp.profile, res.locs, blocks) == rows_by_key(want, res.locs,
                                                                         blocks)


def test_demo_store_keeps_every_sample(demo_store) -> None:  # type: ignore[no-untyped-def]
    _rec, _res, blocks, st, _plan = demo_store
    want = np.concatenate([s.rows for s in blocks])
    assert np.array_equal(st.rows, want)
    assert np.array_equal(st.period, np.concatenate([s.period for s in blocks]))
    # each sample's group has its thread, CPU and own location
    allb = {int(r): (int(s.tid[k]), int(s.cpu[k]), int(s.leaf[k]), int(s.comm[k]))
            for s in blocks for k, r in enumerate(s.rows)}
    g = st.group
    got = {int(r): (int(st.tid[g[i]]), int(st.cpu[g[i]]), int(st.leaf[g[i]]),
                    int(st.comm[g[i]])) for i, r in enumerate(st.rows)}
    assert got == allb


def test_dso_ranks_put_rows_without_a_dso_last() -> None:
    """The browser's tables order tied rows as perf does: by the dso's name (strcmp), a
    sample with no map (``[unknown]``) after every dso (perf 6.1 sort.c, ``cmp_null``),
    as the report engine does (test_sampleprofile.py)."""
    locs = make_locs()
    unknown = locs.dso_id("[unknown]")
    locs.unresolved_ids(unknown, np.array([0x7F0000001000], np.uint64))
    st = store_of(random_blocks(5), locs)
    gc = GroupCodes(st)
    names = gc.master.names["dso"]
    rank = gc.ranks("dso", np.arange(len(names)), np.zeros(len(names), np.int64))
    by_rank = [n for _r, n in sorted(zip(rank.tolist(), names, strict=True))]
    assert "[unknown]" in names and by_rank[-1] == "[unknown]"
    named = [n for n in by_rank if n != "[unknown]"]
    assert named == sorted(named, key=lambda n: n.encode())


def _described(st) -> list[tuple[object, ...]]:  # type: ignore[no-untyped-def]
    """Every sample of groups as names: row, period, thread, tid, cpu, event, own location
    and stack (outermost first), ids left out (two resolvers number locations apart)."""
    locs = st.locs

    def label(i: int) -> tuple[object, ...]:
        return (locs.dsos[locs.dso[i]].name, locs.name[i], locs.start[i], locs.end[i],
                locs.section[i])

    out = []
    for row, g, period in zip(st.rows.tolist(), st.group.tolist(), st.period.tolist(),
                              strict=True):
        path = st.path_loc[st.path_start[g]:st.path_start[g + 1]].tolist()
        out.append((row, period, st.comm_names[int(st.comm[g])], int(st.tid[g]),
                    int(st.cpu[g]), int(st.attr[g]), label(int(st.leaf[g])),
                    tuple(label(x) for x in path)))
    return out


def test_named_samples_group_as_the_resolver_blocks(demo_store) -> None:  # type: ignore[no-untyped-def]
    """The browser's grouping of named samples (``add_named``: the cached names, no
    resolver) against the reference grouping of the resolver's blocks: every sample in a
    group of the same thread, cpu, event, own location and stack, grouped alike."""
    rec, _res, _blocks, want, _plan = demo_store
    sl = resolve_all(Resolver(rec, SymbolOptions(modules_dirs=[str(MODULES_DIR)])),
                     sample_rows(rec), True)
    c = rec.columns
    b = GroupsBuilder(sl.locs, sl.comm_names, callchains=True)
    group = np.concatenate([np.zeros(0, np.int32)] + [
        b.add_named(sl, lo, min(len(sl), lo + 4096), c["tid"][sl.rows[lo:lo + 4096]],
                    c["cpu"][sl.rows[lo:lo + 4096]], c["attr"][sl.rows[lo:lo + 4096]])
        for lo in range(0, len(sl), 4096)])
    got = assemble(b.tables(), sl.rows, group, sl.period.view(np.int64), sl.locs,
                   sl.comm_names, True)
    assert _described(got) == _described(want)
    pairs = np.unique(got.group.astype(np.int64) << 32 | want.group.astype(np.int64))
    assert len(pairs) == got.groups == want.groups  # the same partition of the samples
    assert want.groups > 10
