"""Parsed kallsyms kept on disk (perftui.symbols.tables.kallsymcache): a kept parse is the
parse of the same text; another text (a module loaded) is another entry; a damaged or
tampered entry is removed and the text parsed again, never used.  The parse itself is
held to perf's rules by tests/test_kallsyms_scan.py and the report tests against perf."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from perftui.symbols.tables import kallsymcache
from perftui.symbols.tables.diskcache import TableStore
from perftui.symbols.tables.kallsymcache import kallsyms_key, load_kept_kallsyms
from perftui.symbols.tables.kallsyms import Kallsyms, load_kallsyms

TEXT = """\
ffffffff81000000 T _text
ffffffff81000000 T _stext
ffffffff81001000 T do_one
ffffffff81001000 t do_one_alias
ffffffff81002000 W weak_thing
ffffffff81003000 D some_data
ffffffff81004000 r skipped_rodata
ffffffff81005000 B bss_thing
ffffffff81006000 t $x
garbage line
ffffffffc0001000 t mod_fn\t[ath9k]
ffffffffc0002000 T mod_other\t[ath9k]
ffffffffc0010000 t other_fn\t[ext4]
"""


def _same(a: Kallsyms, b: Kallsyms) -> None:
    for x, y in [(a.kernel, b.kernel),
                 *zip(a.modules.values(), b.modules.values(), strict=True)]:
        assert list(x.names) == list(y.names)
        assert np.array_equal(x.starts, y.starts) and np.array_equal(x.ends, y.ends)
        assert np.array_equal(x.kinds, y.kinds)
    assert list(a.modules) == list(b.modules)
    assert (a.raw, a.skipped, a.filtered) == (b.raw, b.skipped, b.filtered)


def _entries(d: Path) -> list[Path]:
    return sorted(d.glob("kallsyms-*.npz"))


def test_a_kept_parse_is_the_parse(tmp_path: Path, monkeypatch) -> None:
    """The second load reads the entry (the parser is not called) and gives the tables,
    module tables, raw addresses and counts of a parse of the text."""
    f = tmp_path / "kallsyms"
    f.write_text(TEXT)
    store = TableStore(str(tmp_path / "symbols"))
    first = load_kept_kallsyms(str(f), store)
    assert len(_entries(tmp_path / "symbols")) == 1
    expected = load_kallsyms(str(f))
    _same(first, expected)
    assert first.modules and first.skipped == 1 and first.filtered == 1

    def no_parse(*_a: object) -> Kallsyms:
        raise AssertionError("parsed again")

    monkeypatch.setattr(kallsymcache, "parse_and_trim", no_parse)
    again = load_kept_kallsyms(str(f), store)
    _same(again, expected)
    assert again.source == str(f)
    at = np.array([0xffffffff81001010, 0xffffffff81005004, 0xffffffff80000000], np.uint64)
    assert np.array_equal(again.kernel.lookup(at), expected.kernel.lookup(at))


def test_another_text_is_another_entry(tmp_path: Path) -> None:
    """A module loaded changes the text: its own entry, its own tables."""
    f = tmp_path / "kallsyms"
    f.write_text(TEXT)
    store = TableStore(str(tmp_path / "symbols"))
    load_kept_kallsyms(str(f), store)
    f.write_text(TEXT + "ffffffffc0020000 t new_fn\t[newmod]\n")
    got = load_kept_kallsyms(str(f), store)
    assert "newmod" in got.modules
    assert len(_entries(tmp_path / "symbols")) == 2
    assert kallsyms_key(TEXT.encode()) != kallsyms_key(f.read_bytes())


def test_a_damaged_entry_is_parsed_again(tmp_path: Path) -> None:
    """A truncated file, and one whose name offsets point past its names, are removed
    and the text parsed again."""
    f = tmp_path / "kallsyms"
    f.write_text(TEXT)
    d = tmp_path / "symbols"
    store = TableStore(str(d))
    load_kept_kallsyms(str(f), store)
    (entry,) = _entries(d)
    entry.write_bytes(entry.read_bytes()[:200])
    _same(load_kept_kallsyms(str(f), store), load_kallsyms(str(f)))
    (entry,) = _entries(d)  # written again, whole
    with np.load(entry) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["name_ends"] = arrays["name_ends"] + 10_000
    with open(entry, "wb") as out:
        np.savez(out, **arrays)
    _same(load_kept_kallsyms(str(f), store), load_kallsyms(str(f)))
    (entry,) = _entries(d)
    with np.load(entry) as z:
        assert z["name_ends"].max() <= len(z["names"])


def test_no_store_parses(tmp_path: Path) -> None:
    """``--no-cache`` (no store): parsed, nothing written."""
    f = tmp_path / "kallsyms"
    f.write_text(TEXT)
    _same(load_kept_kallsyms(str(f), None), load_kallsyms(str(f)))
