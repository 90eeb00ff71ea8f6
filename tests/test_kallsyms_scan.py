"""The kallsyms reader against independent oracles: every line of the running kernel's
/proc/kallsyms split by a trivial reference written here (``ADDR TYPE NAME[\\t[MODULE]]``),
and hand-written and generated nasty text read by a per-line reference of the documented rule
(a regular expression per line); the tables built from /proc/kallsyms checked against the
reference's lines with perf's rules written out (types T W D B, no ``$`` names, one symbol
per address, each ending where the next one starts)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testapi import name_at

from conftest import skip_or_fail
from perftui.symbols.files.safefile import SymbolFileError
from perftui.symbols.tables.byteslices import SliceNames
from perftui.symbols.tables.kallsyms import load_kallsyms, parse_kallsyms
from perftui.symbols.tables.kallsymscan import (
    KallsymsLines,
    scan_kallsyms,
    scan_kallsyms_lines,
)

PROC = "/proc/kallsyms"


def proc_text() -> bytes:
    try:
        with open(PROC, "rb") as f:
            data = f.read()
    except OSError as e:
        skip_or_fail(f"cannot read {PROC}: {e}")
    if not data or not any(int(line.split(b" ", 1)[0], 16) for line in data.splitlines()[:50]):
        skip_or_fail(f"{PROC} is empty or hidden (kptr_restrict): run as root")
    return data


# -- the oracles ---------------------------------------------------------------------------------
def proc_lines(data: bytes) -> list[tuple[int, str, str, str | None]]:
    """/proc/kallsyms the obvious way: ``ADDR TYPE NAME`` and maybe ``\\t[MODULE]``."""
    out = []
    for line in data.decode("ascii").split("\n"):
        if not line:
            continue
        addr, typ, rest = line.split(" ", 2)
        name, _tab, module = rest.partition("\t")
        out.append((int(addr, 16), typ, name, module[1:-1] if module else None))
    return out


_RULE = re.compile(r"([0-9a-fA-F]+) (\S) ([^\n]*)")


def rule_lines(text: str) -> tuple[list[tuple[int, int, str, bool, str | None]], int]:
    """The documented line rule, one line at a time: ``(addr, type code, name, tabbed,
    module)`` of each line that parses, and how many non-blank lines do not (or have an
    address of more than 16 digits)."""
    rows, skipped = [], 0
    for line in text.splitlines():
        m = _RULE.match(line)
        if m is None:
            skipped += bool(line.strip())
            continue
        hexa, typ, rest = m.groups()
        if len(hexa) > 16:
            skipped += 1
            continue
        rest = rest[:512]
        name, tab, after = rest.partition("\t")
        module = after[1:after.index("]")] if tab and after[:1] == "[" and "]" in after \
            else None
        rows.append((int(hexa, 16), ord(typ) if typ.isascii() else 0, name, bool(tab), module))
    return rows, skipped


def as_rows(lines: KallsymsLines) -> tuple[list[tuple[int, int, str, bool, str | None]], int]:
    rows = [(a, t, n, b, lines.modules[m] if m >= 0 else None) for a, t, n, b, m in zip(
        lines.addrs.tolist(), lines.types.tolist(), list(lines.names), lines.tabbed.tolist(),
        lines.module.tolist(), strict=True)]
    assert lines.name_len.tolist() == [len(r[2]) for r in rows]
    assert lines.first.tolist() == [ord(r[2][0]) if r[2] and r[2][0].isascii() else 0
                                    for r in rows]
    return rows, lines.skipped


_BREAKS = re.compile(rb"[\r\x0b\x0c\x1c\x1d\x1e]")


def check_scan(data: bytes) -> None:
    """Every reader of ``data`` (bytes, text, one line at a time) against the rule."""
    text = data.decode("utf-8", "replace")
    want = rule_lines(text)
    got = scan_kallsyms(data)
    # ASCII text with lines ending at "\n" only is read with numpy (its names are lazy)
    assert isinstance(got.names, SliceNames) == (data.isascii() and not _BREAKS.search(data))
    assert as_rows(got) == want
    assert as_rows(scan_kallsyms(text)) == want
    assert as_rows(scan_kallsyms_lines(text)) == want


# -- /proc/kallsyms ------------------------------------------------------------------------------
def test_proc_kallsyms_lines_equal_the_obvious_split() -> None:
    data = proc_text()
    assert data.isascii()  # the numpy reader's case
    lines = scan_kallsyms(data)
    assert isinstance(lines.names, SliceNames)  # names made only when asked for
    want = proc_lines(data)
    got = as_rows(lines)[0]
    assert lines.skipped == 0
    assert [(a, chr(t), n, m) for a, t, n, _b, m in got] == want
    print(f"{PROC}: {len(want)} lines, {sum(m is not None for *_x, m in want)} of modules")


def test_proc_kallsyms_tables_keep_perfs_symbols() -> None:
    data = proc_text()
    k = parse_kallsyms(data, PROC)
    lines = proc_lines(data)
    kept = [(a, t, n, m) for a, t, n, m in lines if t in "TWDBtwdb" and not n.startswith("$")]
    assert k.filtered == sum(t not in "TWDBtwdb" for _a, t, _n, _m in lines)
    core: dict[int, set[str]] = {}
    for a, _t, n, m in kept:
        if m is None and n != "__entry_SYSCALL_64_trampoline":
            core.setdefault(a, set()).add(n)
    t = k.kernel
    starts = t.starts.tolist()
    # one symbol per address, each a name the text has there
    assert starts == sorted(core) and len(set(starts)) == len(starts)
    names = list(t.names)
    assert all(n in core[a] for a, n in zip(starts, names, strict=True))
    assert all(n == next(iter(core[a])) for a, n in zip(starts, names, strict=True)
               if len(core[a]) == 1)
    ends = t.ends.tolist()
    assert ends[:-1] == starts[1:]  # no sizes: each ends where the next one starts
    assert ends[-1] > starts[-1]
    first_text = next(a for a, ty, n, m in lines if n == "_text" and ty in "TtWw" and m is None)
    assert k.address_of("_text") == first_text
    for module, mt in k.modules.items():
        mine = {(a, n) for a, _t, n, m in kept if m == module}
        assert {(a, n) for a, n in zip(mt.starts.tolist(), list(mt.names), strict=True)} <= mine
        assert set(mt.starts.tolist()) == {a for a, _n in mine}
    assert set(k.modules) == {m for *_x, m in kept if m is not None}
    # the loader reads the same (the core kernel's symbols do not change while it runs)
    loaded = load_kallsyms(PROC)
    assert loaded.kernel.starts.tolist() == starts and list(loaded.kernel.names) == names


# -- nasty text ----------------------------------------------------------------------------------
NASTY = (
    b"ffffffff81000000 T _text\n"
    b"\n"  # blank
    b"   \t \x1f\n"  # whitespace only: blank too
    b"ffffffff81000010 t no_module\n"
    b"ffffffff81000020 T tab_no_bracket\tfoo\n"
    b"ffffffff81000030 T unclosed\t[mod\n"
    b"ffffffff81000040 T with_module\t[mod]\n"
    b"ffffffff81000048 t other\t[mod] trailing words\n"
    b"1ffffffff81000050 T seventeen_digits\n"  # skipped
    b"00000000000000001 T leading_zero_17\n"  # skipped too: perftui counts digits
    b"ffffffffffffffff T top_of_the_space\n"
    b"0000000000000001 T low\n"
    b"f W one_digit\n"
    b"ffffffff81000060 T caf\xc3\xa9\n"  # UTF-8
    b"ffffffff81000070 T bad\xff\xfename\n"  # not UTF-8
    b"ffffffff81000080  T two_spaces\n"  # skipped
    b"ffffffff81000090 T\n"  # skipped: no space after the type
    b"ffffffff810000a0 T \n"  # an empty name
    b"ffffffff810000b0 TT x\n"  # skipped
    b"ffffffff810000c0 \x1f x\n"  # skipped: the type is whitespace
    b"ffffffff810000d0 T " + b"x" * 600 + b"\t[cut]\n"  # cut at 512: the module is lost
    b"ffffffff810000d8 T " + b"y" * 506 + b"\t[mod]\n"  # "]" is the 512th character
    b"ffffffff810000dc T " + b"z" * 507 + b"\t[mod]\n"  # "]" is cut off
    b"ffffffff810000e0 t $x\n"
    b"ffffffff810000e8 T __entry_SYSCALL_64_trampoline\n"  # perf drops it from the kernel
    b"ffffffff810000f0 r rodata\n"
    b"not a line at all\n"
    b"ffffffff81000100 T trunc"  # the file ends mid-line
)


#: the nasty lines that are ASCII: read with numpy
NASTY_ASCII = b"\n".join(line for line in NASTY.split(b"\n") if line.isascii())


def test_nasty_lines_follow_the_rule() -> None:
    check_scan(NASTY_ASCII)
    check_scan(NASTY_ASCII + b"\n")
    check_scan(NASTY_ASCII[:-3])
    check_scan(NASTY)
    check_scan(NASTY + b"\n")
    check_scan(NASTY[:-3])  # truncated further: "ffffffff81000100 T tr"
    check_scan(NASTY.split(b"\n")[-1][:9])  # only part of an address
    check_scan(NASTY.replace(b"\n", b"\r\n"))  # other line breaks: one line at a time
    check_scan(NASTY.replace(b"\n", b"\x1e", 3))
    check_scan(b"")
    rows, skipped = as_rows(scan_kallsyms(NASTY_ASCII))
    by_name = {n: (a, t, b, m) for a, t, n, b, m in rows}
    assert skipped == 7 and "caf\u00e9" not in by_name
    rows, skipped = as_rows(scan_kallsyms(NASTY))
    by_name = {n: (a, t, b, m) for a, t, n, b, m in rows}
    # written out by hand: what each nasty line gives
    assert skipped == 7
    assert by_name["top_of_the_space"][0] == 2**64 - 1
    assert by_name["one_digit"][:2] == (0xF, ord("W"))
    assert by_name["caf\u00e9"][0] == 0xFFFFFFFF81000060
    assert by_name["bad\ufffd\ufffdname"][0] == 0xFFFFFFFF81000070
    assert by_name[""][0] == 0xFFFFFFFF810000A0
    assert by_name["x" * 512] == (0xFFFFFFFF810000D0, ord("T"), False, None)
    assert by_name["y" * 506][2:] == (True, "mod")
    assert by_name["z" * 507][2:] == (True, None)
    assert by_name["tab_no_bracket"][2:] == (True, None)
    assert by_name["unclosed"][2:] == (True, None)
    assert by_name["with_module"][2:] == (True, "mod")
    assert by_name["other"][2:] == (True, "mod")
    assert by_name["trunc"][0] == 0xFFFFFFFF81000100
    assert "seventeen_digits" not in by_name and "two_spaces" not in by_name


def test_nasty_text_makes_perfs_table() -> None:
    k = parse_kallsyms(NASTY, "nasty")
    assert k.skipped == 7 and k.filtered == 1  # r
    assert "$x" not in list(k.kernel.names)
    assert "__entry_SYSCALL_64_trampoline" not in list(k.kernel.names)
    assert 0xFFFFFFFF810000E8 not in k.kernel.starts.tolist()
    assert list(k.modules) == ["mod"]
    assert list(k.modules["mod"].names) == ["with_module", "other", "y" * 506]
    assert name_at(k.kernel, 0xFFFFFFFF81000065) == ("caf\u00e9", 5)
    assert k.address_of("_text") == 0xFFFFFFFF81000000
    assert k.kernel.names.index("x" * 512) >= 0
    with pytest.raises(SymbolFileError, match="no kernel symbols"):
        parse_kallsyms(b"garbage\n\n", "g")
    with pytest.raises(SymbolFileError, match="kptr_restrict"):
        parse_kallsyms(b"0000000000000000 T _text\n0000000000000000 t x\n", "z")


_PIECES = [b"ffffffff81000000", b"ffffffffc0001000", b"0", b"1f", b"ffffffffffffffffff", b"g",
           b" ", b"  ", b"\t", b"T", b"t", b"W", b"w", b"D", b"b", b"r", b"A", b"$", b"_text",
           b"_stext", b"name", b"[", b"]", b"[mod]", b"\t[mod]", b"\n", b"\n", b"\n", b"\r",
           b"\x0b", b"\x1c", b"\x1f", b"\x00", b"\xc3\xa9", b"\xff", b"\xe2\x80\xa8", b"x" * 520]


_ASCII_PIECES = [p for p in _PIECES if p.isascii() and p not in (b"\r", b"\x0b", b"\x1c")]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=60))
def test_generated_text_follows_the_rule(pieces: list[bytes]) -> None:
    check_scan(b"".join(pieces))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_ASCII_PIECES), max_size=60))
def test_generated_ascii_text_follows_the_rule(pieces: list[bytes]) -> None:
    check_scan(b"".join(pieces))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_ASCII_PIECES), max_size=80), st.integers(1, 40))
def test_text_scanned_in_small_pieces_follows_the_rule(pieces: list[bytes], piece: int
                                                        ) -> None:
    """The numpy reader takes the text in pieces cut at line ends (~1 MB each: a
    /proc/kallsyms of 5 MB is 5 of them); pieces of a few bytes put every kind of line at
    a piece's start and end, and modules met again in a later piece keep one code."""
    import perftui.symbols.tables.kallsymscan as scan

    data = (b"ffffffff81000000 T first\t[mod]\n" + b"".join(pieces)
            + b"\nffffffff81000000 t again\t[mod]\n")
    saved = scan._PIECE
    scan._PIECE = piece
    try:
        check_scan(data)
        got = scan_kallsyms(data)
    finally:
        scan._PIECE = saved
    assert got.modules.count("mod") == 1


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2**64 - 1), st.sampled_from("TtWwDdBbRrAU"),
                          st.text("_$abcSyS\u00e9", max_size=12),
                          st.sampled_from(["", "\t[m1]", "\t[m2]", "\t[m1"])), max_size=40))
def test_generated_lines_make_the_same_tables_ascii_or_not(
        rows: list[tuple[int, str, str, str]]) -> None:
    """The numpy reader (ASCII text) and the per-line one (the same text with a non-ASCII
    line added at the end, which perf skips) build the same tables."""
    text = "".join(f"{a:016x} {t} {n}{m}\n" for a, t, n, m in rows)
    if text.isascii():
        try:
            a = parse_kallsyms(text, "a")
        except SymbolFileError as e:
            a = str(e)  # type: ignore[assignment]
        try:
            b = parse_kallsyms(text + "\u00e9 not a line\n", "a")
        except SymbolFileError as e:
            b = str(e)  # type: ignore[assignment]
        if isinstance(a, str) or isinstance(b, str):
            assert str(a) == str(b)
            return
        assert b.skipped == a.skipped + 1
        for ta, tb in [(a.kernel, b.kernel), *[(a.modules[m], b.modules[m]) for m in a.modules]]:
            assert np.array_equal(ta.starts, tb.starts) and np.array_equal(ta.ends, tb.ends)
            assert list(ta.names) == list(tb.names)
        assert list(a.modules) == list(b.modules) and a.raw == b.raw


def test_slice_names_behave_as_a_list() -> None:
    data = b"alpha\tbeta\tgamma\tbeta\t\xff\t"
    starts = np.array([0, 6, 11, 17, 22, 24])
    ends = np.array([5, 10, 16, 21, 23, 24])
    names = SliceNames(data, starts, ends)
    want = ["alpha", "beta", "gamma", "beta", "\udcff", ""]
    assert names == want and list(names) == want and len(names) == 6 and names[-1] == ""
    assert names.index("beta") == 1 and names.index("beta", 2) == 3
    assert names.index("\udcff") == 4 and names.index("") == 5
    assert names.equal_to("beta").tolist() == [False, True, False, True, False, False]
    with pytest.raises(ValueError):
        names.index("delta")
    assert names.take(np.array([2, 0])) == ["gamma", "alpha"]
    assert names != ["alpha"]


@pytest.mark.parametrize("rows", [[0, 1, 2, 3, 4, 5], [3, 0, 4, 5], [], [1] * 40000])
def test_compacted_slice_names_keep_only_their_bytes(rows: list[int]) -> None:
    """A compacted copy holds the same names (blocks of 2^14 included) in a buffer of their
    bytes alone, with int32 offsets; the buffer it came from is not referenced."""
    data = b"alpha\tbeta\tgamma\tbeta\t\xff\t"
    names = SliceNames(data, np.array([0, 6, 11, 17, 22, 24]),
                       np.array([5, 10, 16, 21, 23, 24])).take(np.array(rows, dtype=np.int64))
    got = names.compacted()
    assert list(got) == list(names) and got == names
    assert got._data == b"".join(data[s:e] for s, e in zip(names._starts, names._ends,
                                                                 strict=True))
    assert got._starts.dtype == np.int32 and got._ends.dtype == np.int32
    assert got.equal_to("beta").tolist() == names.equal_to("beta").tolist()
