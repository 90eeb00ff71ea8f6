"""A kept column store (a cache entry being written) whose directory goes from under it: the
columns are made in memory, nothing already written is lost, and the store is never kept.

The oracle is the values written: the arrays read back equal what was put in them."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from perftui.perfdata.colstore import ColumnStore
from perftui.perfdata.indexcache import IndexCache


def test_a_store_whose_directory_went_keeps_its_columns_in_memory(tmp_path: Path) -> None:
    d = tmp_path / "entry"
    d.mkdir()
    store = ColumnStore(str(d), keep=True, fallback=True)
    a = store.array("a", "i8", 4)
    a[:] = [1, 2, 3, 4]
    assert store.broken is None
    shutil.rmtree(d)  # another process discarded the entry
    b = store.array("b", "u4", 3)  # a new column: its file cannot be made
    b[:] = [7, 8, 9]
    assert store.broken == "No such file or directory"
    grown = store.array("a", "i8", 6)  # the open file still grows; it stays in memory now
    assert grown[:4].tolist() == [1, 2, 3, 4] and len(grown) == 6
    grown[4:] = [5, 6]
    again = store.array("a", "i8", 8)
    assert again[:6].tolist() == [1, 2, 3, 4, 5, 6]
    assert b.tolist() == [7, 8, 9] and a.tolist() == [1, 2, 3, 4]


def test_a_broken_result_is_not_kept_and_said_once(tmp_path: Path) -> None:
    cache = IndexCache(str(tmp_path / "cache"))
    entry = tmp_path / "cache" / ("0" * 32)
    entry.mkdir(parents=True)
    store = cache.begin_attachment("0" * 32)
    assert store is not None and store.fallback
    store.array("a", "u8", 2)[:] = [5, 6]
    shutil.rmtree(entry)
    store.array("b", "i4", 2)
    assert not cache.commit_attachment(store, "0" * 32, "names-x", {"rows": 2},
                                       {"a": np.array([5, 6], np.uint64)})
    assert cache.notes == [f"results not cached in {cache.directory} "
                           "(No such file or directory)"]
    assert not entry.exists()
