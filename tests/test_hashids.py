"""The compiled interner gives :class:`~perftui.analysis.stacktree.Interner`'s ids exactly
(the numpy interner is the oracle: dense from 0, by block in order of first use, new keys
of a block in ascending order), across table growth, and the browser's groups made with it
equal those made with the numpy one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from perftui.analysis.hashids import HashInterner
from perftui.analysis.samplegroups import GroupsBuilder
from perftui.analysis.stacktree import Interner
from perftui.demo.generate import write_demo
from perftui.perfdata import open_recording
from perftui.symbols.naming.resolver import Resolver
from perftui.symbols.naming.samplelocs import resolve_all
from perftui.symbols.naming.samplestore import sample_rows_all
from perftui.symbols.options import SymbolOptions

keys = st.integers(-2**63, 2**63 - 1) | st.integers(-5, 5)


@settings(max_examples=80, deadline=None, derandomize=True)
@given(st.lists(st.lists(keys, max_size=300), max_size=12))
def test_same_ids_as_the_numpy_interner(blocks: list[list[int]]) -> None:
    a, b = Interner(), HashInterner()
    for block in blocks:
        k = np.array(block, dtype=np.int64)
        assert a.ids(k).tolist() == b.ids(k).tolist()
        assert len(a) == len(b)
    assert a.keys().tolist() == b.keys().tolist()


def test_growth_past_many_keys() -> None:
    """Thousands of new keys a block (the tables grown several times): same ids."""
    rng = np.random.default_rng(7)
    a, b = Interner(), HashInterner()
    for _ in range(6):
        k = rng.integers(0, 40_000, 20_000) * 0x10001
        assert np.array_equal(a.ids(k), b.ids(k))
    assert np.array_equal(a.keys(), b.keys())


def test_groups_equal_with_either_interner(tmp_path: Path) -> None:
    write_demo(tmp_path / "demo.data")
    rec = open_recording(str(tmp_path / "demo.data"))
    rec.build_index()
    sl = resolve_all(Resolver(rec, SymbolOptions()), sample_rows_all(rec), True)
    c = rec.columns
    out = []
    for make in (Interner, HashInterner):
        g = GroupsBuilder(sl.locs, sl.comm_names, callchains=True, interner=make)
        ids = [g.add_named(sl, lo, min(len(sl), lo + 1000), c["tid"][sl.rows[lo:lo + 1000]],
                           c["cpu"][sl.rows[lo:lo + 1000]], c["attr"][sl.rows[lo:lo + 1000]])
               for lo in range(0, len(sl), 1000)]
        out.append((np.concatenate(ids), {k: v.tolist() for k, v in g.tables().items()}))
    assert np.array_equal(out[0][0], out[1][0])
    assert out[0][1] == out[1][1]
    assert len(np.unique(out[0][0])) > 10  # groups to tell apart
