"""The compiled names pass (``symbols.rawsamples``) against the plain numpy one (``plainnames``).

``resolve_all`` names each distinct address key once and keeps each stack once, in
hash tables (the compiled engine); the plain engine names every address of every sample
with the resolver, block by block (both engines are held to perf too).  Both must
give every sample the same names: its thread, period, own location, and, frame by frame,
each callchain location and offset (location ids may be numbered differently: they are
compared by what they name), and stack ids that group the samples alike.  The corpus covers
file and pipe mode, compressed data, callchains with every context marker, 32-bit hosts;
the big-endian golden recording (assembled byte by byte in test_big_endian_golden) adds the
other byte order.  The distinct-sequence table is checked against a Python dict, and the
pass's own map walk (written out in ``_probe``) against ``MapTable.lookup`` and a plain loop.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_big_endian_golden import SAMPLE, golden_file

from conftest import RECORDINGS, corpus_path, skip_or_fail
from perftui.perfdata import open_recording
from perftui.perfdata.constants import CONTEXT_USER, PERF_CONTEXT_MAX, Misc
from perftui.symbols.naming.resolver import Resolver, SymbolOptions
from perftui.symbols.naming.samplelocs import SampleLocs, resolve_all
from perftui.symbols.naming.samplestore import sample_rows_all
from perftui.symbols.naming.seqtable import SeqTable, seq_ids


def named_by(engine: str, path: Path, callchains: bool, block: int,
             opts: SymbolOptions | None = None) -> SampleLocs:
    """``path``'s samples named by ``engine`` (its thread model too)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PERFTUI_ENGINE", engine)
        rec = open_recording(path)
        rec.build_index()
        res = Resolver(rec, opts) if opts is not None else Resolver(rec)
        return resolve_all(res, sample_rows_all(rec), callchains=callchains, block=block)


FUZZ = sorted((Path(__file__).parent / "data" / "fuzz").glob("*.data"))
Label = tuple[str, bool, str | None, int, int, str | None]


def _labels(sl: SampleLocs) -> list[Label]:
    locs = sl.locs
    return [(locs.dsos[locs.dso[i]].name, locs.dsos[locs.dso[i]].kernel, locs.name[i],
             locs.start[i], locs.end[i], locs.section[i]) for i in range(len(locs))]


def _named(sl: SampleLocs) -> list[tuple[object, ...]]:
    """Every sample as names (not ids): thread, period, own location, frames, offsets."""
    lab = _labels(sl)
    out = []
    for k in range(len(sl)):
        locs, offs = sl.frames(k)
        out.append((sl.comm_names[int(sl.comm[k])], int(sl.period[k]),
                    lab[int(sl.leaf[k])], tuple(lab[x] for x in locs), tuple(offs)))
    return out


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Ids that group the same samples together (the ids themselves may differ)."""
    pairs = np.unique(a.astype(np.int64) << 32 | b.astype(np.int64))
    return len(pairs) == len(np.unique(a)) == len(np.unique(b))


def _both(path: Path, callchains: bool, block: int) -> tuple[SampleLocs, SampleLocs]:
    return (named_by("compiled", path, callchains, block),
            named_by("plain", path, callchains, block))


def _check(fast: SampleLocs, plain: SampleLocs, callchains: bool) -> None:
    assert len(fast) == len(plain)
    assert _named(fast) == _named(plain)
    # (the same notes; the two name a block's addresses in other orders, so the notes of
    # the files they look for can come in another order)
    assert sorted(fast.notes) == sorted(plain.notes)
    assert len(fast.stack_starts) == len(plain.stack_starts)
    assert len(fast.off_starts) == len(plain.off_starts)
    assert _same_partition(fast.off_stack, plain.off_stack)
    if callchains:
        assert fast.stack is not None and plain.stack is not None
        assert _same_partition(fast.stack, plain.stack)


@pytest.mark.slow
@pytest.mark.parametrize("callchains", [True, False], ids=["chains", "own-ip"])
@pytest.mark.parametrize("rel", [r for r in RECORDINGS if not r.startswith("hotspot/")])
def test_corpus_named_alike(rel: str, callchains: bool) -> None:
    path = corpus_path(rel)
    if not path.is_file():
        skip_or_fail(f"{rel}: not in the corpus")
    fast, plain = _both(path, callchains, block=777)  # blocks: keys met in earlier ones
    _check(fast, plain, callchains)


@pytest.mark.parametrize("path", FUZZ, ids=lambda p: p.stem)
def test_damaged_recordings_named_alike(path: Path) -> None:
    _check(*_both(path, True, block=3), callchains=True)


@pytest.mark.parametrize("bits", [64, 32])
def test_big_endian_frames(tmp_path: Path, bits: int) -> None:
    """The other byte order: the golden sample's frames are its callchain less the markers
    (no symbols: every frame unresolved, at its raw address), as written."""
    p = tmp_path / "golden.data"
    p.write_bytes(golden_file(bits))
    fast, plain = _both(p, True, block=1)
    _check(fast, plain, callchains=True)
    (k,) = range(len(fast))
    locs, _offs = fast.frames(k)
    frames = [fast.locs.start[x] for x in locs[1:]]
    assert frames == [a for a in SAMPLE["callchain"] if a < PERF_CONTEXT_MAX]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.lists(st.integers(-3, 3), max_size=5), max_size=400))
def test_sequence_ids_are_exact(seqs: list[list[int]]) -> None:
    """Equal sequences, equal ids; different ones, different ids (a dict as the oracle),
    with the table grown from its smallest size (slots shared, probes that pass by)."""
    t = SeqTable()
    t.room(len(seqs), sum(map(len, seqs)))
    oracle: dict[tuple[int, ...], int] = {(): 0}
    # each value is its own key's name (column 1; column 0 another sequence's)
    flat = [v for s in seqs for v in s]
    k_name = np.array([[-v, v] for v in flat] or [[0, 0]], dtype=np.int32)
    e_key = np.arange(len(flat), dtype=np.int64)
    e_starts = np.cumsum([0] + [len(s) for s in seqs]).astype(np.int64)
    ids = np.full(len(seqs), -1, np.int32)
    t.n = seq_ids(e_key, e_starts, k_name, 1, t.slots, t.hash, t.starts, t.vals, t.n, ids)
    for s, got in zip(seqs, ids.tolist(), strict=True):
        want = oracle.setdefault(tuple(s), len(oracle))
        assert got == want
    starts, vals = t.csr()
    assert len(starts) == len(oracle) + 1
    for s, i in oracle.items():
        assert vals[starts[i]:starts[i + 1]].tolist() == list(s)


def test_jit_maps_named_by_their_dso(tmp_path: Path) -> None:
    """A forked child shares its parent's JIT map (the same dso, ``/tmp/perf-<parent>.map``):
    its samples there are named from the parent's perf map, as perf 6.1 names them (the
    dso's file; checked against perf script when perf is here), however the address keys
    of the two processes meet in the compiled pass; the plain pass agrees."""
    from threadplan import Plan

    jit, parent, child = 0x7F1000000000, 47301, 47302
    p = Plan(callchain=True)
    p.comm(parent, parent, "vm", 1)
    p.mmap(parent, jit, 0x10000, "//anon", 2, prot=7, flags=0x22)  # anonymous, executable
    p.fork(child, parent, 3)
    for t, pid in ((4, parent), (5, child), (6, parent), (7, child)):
        p.sample(pid, jit + 0x110, t, callchain=[CONTEXT_USER, jit + 0x110, jit + 0x210])
    p.round()
    path = p.write(tmp_path / "jit.data")
    maps = {pid: f"{jit + 0x100:x} 80 {who}_hot\n{jit + 0x200:x} 80 {who}_caller\n"
            for pid, who in ((parent, "parent"), (child, "child"))}
    for pid, text in maps.items():
        (tmp_path / f"perf-{pid}.map").write_text(text)
    empty = tmp_path / "empty.kallsyms"
    empty.write_bytes(b"")
    opts = SymbolOptions(kallsyms=str(empty), perfmap_dir=str(tmp_path))
    got = [named_by(engine, path, True, 2, opts) for engine in ("compiled", "plain")]
    _check(got[0], got[1], callchains=True)
    names = [[got[0].locs.name[x] for x in got[0].frames(k)[0]] for k in range(4)]
    assert names == [["parent_hot", "parent_hot", "parent_caller"]] * 4
    perf = shutil.which("perf")
    if perf is None:
        skip_or_fail("perf is not on the PATH (the names above were checked; perf's were not)")
    for pid, text in maps.items():  # perf reads perf maps from /tmp only
        Path(f"/tmp/perf-{pid}.map").write_text(text)
    try:
        out = subprocess.run([perf, "script", "-f", "-i", str(path), "-F", "ip,sym"],
                             capture_output=True, text=True, timeout=60).stdout
    finally:
        for pid in maps:
            Path(f"/tmp/perf-{pid}.map").unlink()
    assert re.findall(r"[0-9a-f]+ (\w+)", out) == ["parent_hot", "parent_caller"] * 4


@pytest.mark.parametrize("seed", range(6))
def test_names_pass_map_walk_is_the_lookup(seed: int) -> None:
    """The map walk the names pass runs (written out in ``_probe``, trying the map found last
    first when no other map of its object ever overlaps it while both live), driven through
    ``NameTables.name``: on random tables with clones, overlapping inserts, re-maps of the
    same range and removals, each row a run of nearby addresses of one object at one step
    (its own ip, then its user callchain, as a stack's frames come; half of the runs where
    the run before looked, at another step, so the map found last may be gone), every
    address gets the map ``MapTable.lookup`` gives it, and a plain loop over the table."""
    from perftui.symbols.naming.rawsamples import NameTables, alone_maps
    from perftui.symbols.tasks.maps import KERNEL_MAPS, U64_MAX, MapsBuilder

    rng = np.random.default_rng(seed)
    b = MapsBuilder()
    objs = [b.new_object(k) for k in range(1, 5)]
    spots = [0x400000, 0x7F0000000000, 0x7FFF00000000]
    seq = 0
    for _ in range(300):
        seq += int(rng.integers(1, 4))
        o = int(rng.choice(objs))
        start = int(rng.choice(spots)) + int(rng.integers(0, 400)) * 0x1000
        end = min(start + int(rng.integers(1, 12)) * 0x1000, U64_MAX)
        if rng.random() < 0.1:
            b.insert(o, start, end, 0, 0, 0, 0, 0, -1, seq)  # overlaps allowed
        else:
            b.insert_fixup(o, start, end, 0, 0, 0, 0, 0, -1, seq)
        if rng.random() < 0.08:
            dst = int(rng.choice(objs))
            if dst != o:
                b.clone(dst, o, seq)
        if rng.random() < 0.08 and b.live(o):
            b.remove(o, int(rng.choice(b.live(o))), seq)
    t = b.table()
    walk = t.lookup_arrays()
    bounds, m_start, m_end, _reach, born, died, _order = walk
    alone = alone_maps(bounds, m_start, m_end, born, died, scan=int(rng.choice([2, 64])))
    assert alone.any() and not alone.all()
    n_maps = len(t)
    # every map names its addresses by a dso of its own, raw (no pgoff): an address key is
    # then (address, map), and the map each key was named with is the walk's answer
    maps = (*walk, np.arange(n_maps, dtype=np.int64), np.zeros(n_maps, np.bool_),
            np.zeros(n_maps, np.uint64), np.zeros(n_maps, np.uint64), alone)
    runs: list[tuple[int, int, list[int]]] = []  # (object, step, addresses)
    o = base = 0
    for _ in range(300):
        s = int(rng.integers(0, seq + 2))
        if not o or rng.random() < 0.5:
            o = int(rng.choice([*objs, KERNEL_MAPS, -1]))
            base = int(rng.choice(spots)) + int(rng.integers(0, 400)) * 0x1000
        runs.append((o, s, [base + int(x) for x in rng.integers(0, 0x3000, int(
            rng.integers(1, 8)))]))
    buf = bytearray()
    at, count = [], []
    for _o, _s, addrs in runs:  # the callchain: the user context, then the run's addresses
        at.append(len(buf))
        count.append(len(addrs) + 1)
        buf += np.array([CONTEXT_USER, *addrs], dtype="<u8").tobytes()
    u8 = np.frombuffer(bytes(buf), dtype=np.uint8)
    named: list[int] = []  # location id -> the map the pass named it with

    def namer(m: np.ndarray, *_rest: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        loc = np.arange(len(named), len(named) + len(m), dtype=np.int32)
        named.extend(int(x) for x in m)
        return loc, np.zeros(len(m), np.uint64)

    n = len(runs)
    tables = NameTables(True)
    leaf, stack, _offs = tables.name(
        u8, False, np.array(at, np.int64), np.array(count, np.int64),
        np.full(n, int(Misc.USER), np.uint8), np.array([r[2][0] for r in runs], np.uint64),
        np.array([r[0] for r in runs], np.int64), np.zeros(n, np.int64),
        np.array([r[1] for r in runs], np.int64), maps, namer)
    starts, vals = tables.stacks.csr()
    got, q_obj, q_seq, q_addr = [], [], [], []
    for i, (o, s, addrs) in enumerate(runs):
        frames = vals[starts[stack[i]]:starts[stack[i] + 1]].tolist()
        assert frames[0] == leaf[i] and len(frames) == len(addrs) + 1
        for a, loc in zip([addrs[0], *addrs], frames, strict=True):  # own ip, then frames
            got.append(named[loc])
            q_obj.append(o)
            q_seq.append(s)
            q_addr.append(a)
    lookup = t.lookup(np.array(q_obj, np.int64), np.array(q_seq, np.int64),
                      np.array(q_addr, np.uint64))
    assert got == lookup.tolist()
    # the plain loop (test_threads_model.brute_lookup), a query at a time over every map
    t_obj, t_born, t_died = (t.obj.astype(np.int64), t.born.astype(np.int64),
                             t.died.astype(np.int64))
    t_start, t_end = t.start.astype(np.uint64), t.end.astype(np.uint64)
    plain = []
    for o, s, a in zip(q_obj, q_seq, q_addr, strict=True):
        live = np.flatnonzero((t_obj == o) & (t_born <= s) & (s < t_died)
                              & (t_start <= np.uint64(a)) & (np.uint64(a) < t_end))
        # the greatest (start, id): ids ascend, so the last of the greatest start
        plain.append(int(live[t_start[live] == t_start[live].max()][-1]) if len(live) else -1)
    assert got == plain
    assert sum(g >= 0 for g in got) > 100 and -1 in got


def _chains_named(chains: list[list[int]], shift: int, big: bool
                  ) -> tuple[list[int], list[list[int]]]:
    """``NameTables.name`` over chains written at byte ``shift`` of a buffer (``big``:
    big-endian words), with no maps (every address named by itself): each row's own
    address and its stack, as the addresses the locations stand for."""
    from perftui.symbols.naming.rawsamples import NameTables

    order = ">" if big else "<"
    buf = bytearray(shift)
    at, count = [], []
    for c in chains:
        at.append(len(buf))
        count.append(len(c))
        buf += np.array(c, dtype=f"{order}u8").tobytes()
    u8 = np.frombuffer(bytes(buf) + bytes(8), dtype=np.uint8)
    n = len(chains)
    ip = np.array([next((a for a in c if a < PERF_CONTEXT_MAX), 1) for c in chains],
                  np.uint64)
    empty = np.zeros(0, np.int64)
    maps = (np.zeros(2, np.int64), empty.astype(np.uint64), empty.astype(np.uint64),
            empty.astype(np.uint64), empty, empty, empty, empty, np.zeros(0, np.bool_),
            empty.astype(np.uint64), empty.astype(np.uint64), np.zeros(0, np.bool_))
    named: dict[int, int] = {}

    def namer(_m: np.ndarray, ips: np.ndarray, *_rest: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
        loc = [named.setdefault(int(a), len(named)) for a in ips]
        return np.array(loc, np.int32), np.zeros(len(ips), np.uint64)

    t = NameTables(True)
    leaf, stack, _offs = t.name(u8, big, np.array(at, np.int64), np.array(count, np.int64),
                                np.full(n, 2, np.uint8), ip, np.zeros(n, np.int64),
                                np.zeros(n, np.int64), np.arange(n, dtype=np.int64), maps,
                                namer)
    addr = {v: k for k, v in named.items()}
    starts, vals = t.stacks.csr()
    return ([addr[int(x)] for x in leaf],
            [[addr[int(v)] for v in vals[starts[s]:starts[s + 1]]] for s in stack])


@pytest.mark.parametrize("big", [False, True])
@pytest.mark.parametrize("shift", [0, 3, 8])
def test_chain_words_at_any_byte(shift: int, big: bool) -> None:
    """Chains are read as 8-byte words when they all start on one, else a byte at a time;
    either way, in either byte order, a stack is the row's own address then its chain less
    the context markers, and a chain with a marker perf 6.1 does not know is dropped whole
    (the oracle: the chains as written)."""
    user, unknown = CONTEXT_USER, 2**64 - 1000
    chains = [[user, 0x1000, 0x2000, 0x3000], [user, 0x1000, 0x2000, 0x3000],
              [user, 0x1004, 0x2000], [0x5000, unknown, 0x6000], [], [user, 0x1000]]
    leaf, stacks = _chains_named(chains, shift, big)
    assert leaf == [0x1000, 0x1000, 0x1004, 0x5000, 1, 0x1000]
    assert stacks == [[0x1000, 0x1000, 0x2000, 0x3000], [0x1000, 0x1000, 0x2000, 0x3000],
                      [0x1004, 0x1004, 0x2000], [0x5000], [1], [0x1000, 0x1000]]
