"""One symbol cache shared by two resolvers (``diff`` names both recordings with one, so a
file both name is read once): the second resolver takes the first's loaded tables.  An
empty :class:`SymbolCache` is falsy (it has a length), and ``cache or SymbolCache()`` once
gave each resolver a cache of its own."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from perftui.demo import MODULES_DIR
from perftui.demo.generate import write_demo
from perftui.perfdata import RecordType, open_recording
from perftui.symbols.naming.resolver import Resolver, SymbolOptions
from perftui.symbols.naming.samplelocs import resolve_all
from perftui.symbols.tables.cache import SymbolCache


def test_two_resolvers_share_one_cache(tmp_path: Path) -> None:
    path = write_demo(tmp_path / "demo.data").path
    opts = SymbolOptions(modules_dirs=[str(MODULES_DIR)])
    shared = SymbolCache()
    first = open_recording(path)
    first.build_index()
    res = Resolver(first, opts, cache=shared)
    assert res.cache is shared
    rows = np.flatnonzero(first.columns["type"] == RecordType.SAMPLE)
    one = resolve_all(res, rows, callchains=True)
    loaded = len(shared)
    assert loaded > 0  # the demo's kernel and module tables

    second = open_recording(path)
    second.build_index()
    again = Resolver(second, opts, cache=shared)
    assert again.cache is shared
    two = resolve_all(again, rows, callchains=True)
    assert len(shared) == loaded  # nothing loaded twice
    assert [one.locs.label(int(i)) for i in one.leaf] == \
        [two.locs.label(int(i)) for i in two.leaf]
