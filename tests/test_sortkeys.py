"""The sort keys' table (analysis/sortkeys.py): every key goes through every view that
prints keys — the text report, its JSON, the diff's text and JSON, the browser's hotspot
table — from its one entry.  What each key prints is perf's (test_report_perf.py,
test_report_corpus.py and test_diff_perf.py compare whole tables with perf 6.1); here, that
a key of the table reaches each view with its header, width and text."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import numpy as np
import pytest

from perftui.analysis.keycodes import KeyCodes
from perftui.analysis.sortkeys import (
    DEFAULT_SORT,
    EVENT_KEYS,
    SORT_KEYS,
    SortKeyError,
    parse_sort,
)
from perftui.cli import main as perftui_main
from perftui.demo import MODULES_DIR, demo_kallsyms, demo_path
from perftui.symbols.naming.locations import Locations


def test_parse_sort_takes_perfs_names_and_aliases() -> None:
    assert parse_sort("comm,dso,sym") == DEFAULT_SORT
    assert parse_sort(" Symbol , shared_object,sym ") == ("sym", "dso")
    with pytest.raises(SortKeyError, match="keys: " + ", ".join(EVENT_KEYS) + r"\)"):
        parse_sort("comm,bogus")
    with pytest.raises(SortKeyError, match="only for --event offcpu-time"):
        parse_sort("sym,state")  # (the off-CPU event's: tests/test_offcpu_report.py)
    assert parse_sort("sym,state", offcpu=True) == ("sym", "state")
    assert set(SORT_KEYS) - set(EVENT_KEYS) == {"state"}
    with pytest.raises(SortKeyError):
        parse_sort(" , ")


def test_each_key_is_either_a_sample_column_or_of_the_location() -> None:
    for k in SORT_KEYS.values():
        assert k.header and k.label and k.wide_label and k.browser_width > 0
        assert (k.column is None) == k.per_location
        assert k.column in ((None, "comm", "tid", "cpu") if k.name in EVENT_KEYS else ("state",))
        assert k.rank_by in ("value", "code", "loc")


def _run(args: list[str]) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert perftui_main(args) == 0
    return out.getvalue()


@pytest.fixture(scope="module")
def demo_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("cache"))


@pytest.mark.parametrize("key", EVENT_KEYS)
def test_every_key_reaches_the_text_and_the_json(key: str, demo_cache: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``report --sort KEY`` (the demo: kernel, modules with sections, user space): the
    text's heading is the key's perf header, its JSON rows carry the key, one text line
    per JSON row, and the text lines print the JSON values as the key's text does."""
    monkeypatch.setenv("PERFTUI_CACHE_DIR", demo_cache)
    k = SORT_KEYS[key]
    doc = json.loads(_run(["report", "--demo", "--sort", key, "--no-children", "--json"]))
    text = _run(["report", "--demo", "-g", "none", "--sort", key, "--no-children"])
    lines = text.splitlines()
    head = next(ln for ln in lines if ln.startswith("# ") and "Overhead" in ln)
    assert k.stdio_header in head
    rows = [ln for ln in lines if ln and not ln.startswith("#")]
    assert len(rows) == len(doc["rows"]) > 0
    assert all(key in r for r in doc["rows"])
    for ln, r in zip(rows, doc["rows"], strict=True):
        value = r[key]
        if key == "sym":
            assert f"[{'k' if r['kernel'] else '.'}] {value}" in ln
        elif key == "pid":
            assert f"{value:>7}:" in ln
        elif key == "cpu":
            assert ln.rstrip().endswith(("-" if value < 0 else "") + str(abs(value)).zfill(3))
        else:
            assert str(value) in ln


@pytest.mark.parametrize("key", EVENT_KEYS)
def test_every_key_reaches_the_diff(key: str, demo_cache: str,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo against itself by each key: every row in both, a delta of 0, the rows'
    JSON values those of the report's table by the same key (its own recording)."""
    monkeypatch.setenv("PERFTUI_CACHE_DIR", demo_cache)
    demo = str(demo_path())
    same = ["--kallsyms", str(demo_kallsyms()), "--modules-dir", str(MODULES_DIR)]  # --demo's
    doc = json.loads(_run(["diff", demo, demo, "--sort", key, "--json", *same]))
    rep = json.loads(_run(["report", "--demo", "--sort", key, "--no-children", "--json"]))
    assert doc["rows"] and all(r["delta"] == 0 for r in doc["rows"])
    if key != "sym":  # (a symbol's unresolved addresses are one row in a diff: perf's)
        assert sorted(str(r[key]) for r in doc["rows"]) == \
            sorted(str(r[key]) for r in rep["rows"])
    text = _run(["diff", demo, demo, "--sort", key, *same])
    assert SORT_KEYS[key].stdio_header in text


def test_ranks_are_the_keys_order() -> None:
    """A key's ranks order codes as its ``order`` compares their values: names by strcmp,
    ``[unknown]`` after every dso, addresses after every symbol name."""
    locs = Locations()
    dsos = [locs.dso_id("[unknown]"), locs.dso_id("/lib/libc.so.6"),
            locs.dso_id("[kernel.kallsyms]", kernel=True), locs.dso_id("/usr/bin/Zed")]
    names = ["memcpy", "Memcpy", None, "_start", "é", None]
    for i, n in enumerate(names):
        if n is None:
            locs.unresolved_ids(dsos[i % 4], np.array([0x9000 - i], np.uint64))
        else:
            locs.add(dsos[i % 4], n, 16 * i, 16 * i + 8)
    codes = KeyCodes(locs, (), ["zsh", "Bash", "bash"])
    at = np.arange(len(locs))
    sym = codes.ranks("sym", codes.of("sym")[at], at)
    by_sym = [locs.label(int(i)) for i in np.argsort(sym, kind="stable")]
    assert by_sym == ["Memcpy", "_start", "memcpy", "é", "0x0000000000008ffb",
                      "0x0000000000008ffe"]
    dso = codes.ranks("dso", codes.of("dso")[at], at)
    by_dso = list(dict.fromkeys(locs.dso_name(int(i)) for i in np.argsort(dso, kind="stable")))
    assert by_dso == ["Zed", "[kernel.kallsyms]", "libc.so.6", "[unknown]"]
    comm = codes.ranks("comm", np.arange(3), np.zeros(3, np.int64))
    assert comm.tolist() == [2, 0, 1]


def test_a_diff_orders_tied_rows_as_the_report_does() -> None:
    """perf diff sorts its output with the sort keys' own compare (builtin-diff.c
    hists__output_resort -> hist_entry__sort -> sort__dso_cmp), the report's: on equal
    deltas and baselines, ``[unknown]`` (no map) comes after every dso (``cmp_null``).
    perftui's diff ordered it by strcmp (before ``libc.so.6``) until the keys were one
    table; the report's order is held against perf in test_sampleprofile.py."""
    from perftui.analysis.diff import SideEntry, SideTable, diff_tables

    locs = Locations()
    for name in ("[unknown]", "/lib/libc.so.6", "/usr/bin/Zed"):
        locs.add(locs.dso_id(name), "f", 0x10, 0x20)
    ents = {(name,): SideEntry(10, 1, i)
            for i, name in enumerate(("[unknown]", "libc.so.6", "Zed"))}
    side = SideTable(("dso",), 30, 3, ents, locs)
    d = diff_tables(side, side)
    assert [r.key[0] for r in d.rows] == ["Zed", "libc.so.6", "[unknown]"]
