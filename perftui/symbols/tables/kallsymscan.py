"""The fields of kallsyms text (``ADDR TYPE REST`` per line) as arrays, one pass of numpy.

What a line is, as :mod:`.kallsyms` has always read it: the regular expression
``([0-9a-fA-F]+) (\\S) ([^\\n]*)`` at its start; ``REST`` cut at ``KSYM_NAME_LEN``
characters; the name is ``REST`` up to its first tab, and the module is ``X`` when what
follows that tab starts with ``[`` and holds a ``]`` (``[X]...``).  A non-blank line that does
not match, or whose address has more than 16 digits, is skipped (counted).

:func:`scan_kallsyms` reads ASCII text whose lines end at ``\\n`` only (every real kallsyms
file) with numpy over the whole text: no Python work per line.  Other text (non-ASCII
names, other line breaks that ``str.splitlines`` splits at) goes through
:func:`scan_kallsyms_lines`, the same rules one line at a time, which is also the fast
path's reference in the tests.

Public API: :func:`scan_kallsyms` ``(text: str | bytes) -> KallsymsLines``;
:func:`scan_kallsyms_lines` ``(text: str) -> KallsymsLines``; :class:`KallsymsLines`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from perftui.symbols.tables.byteslices import SliceNames, slices_text

__all__ = ["KSYM_NAME_LEN", "KallsymsLines", "scan_kallsyms", "scan_kallsyms_lines"]

#: perf's KSYM_NAME_LEN (6.1): longer names are cut there.
KSYM_NAME_LEN = 512
_LINE = re.compile(r"([0-9a-fA-F]+) (\S) ([^\n]*)")
#: _LINE at every line start, where lines end at "\n" only
_LINES = re.compile(r"^([0-9a-fA-F]+) (\S) ([^\n]*)", re.M)
#: the line boundaries of str.splitlines besides "\n"
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_ASCII_BREAKS = [bytes([c]) for c in range(128)
                 if c != 10 and len(f"a{chr(c)}b".splitlines()) > 1]
#: ASCII whitespace as str.strip and the regular expression's \S see it
_WS = np.array([chr(c).isspace() for c in range(256)], dtype=bool)
_WS[128:] = False
_HEX_VALUE = np.full(256, -1, dtype=np.int64)
for _c in b"0123456789abcdef":
    _HEX_VALUE[_c] = _HEX_VALUE[ord(chr(_c).upper())] = int(chr(_c), 16)
_NIBBLE = np.maximum(_HEX_VALUE, 0).astype(np.uint8)
_IS_HEX = _HEX_VALUE >= 0


@dataclass
class KallsymsLines:
    """The lines that parse, in text order (per line: arrays, or list items)."""

    addrs: np.ndarray  # uint64
    types: np.ndarray  # uint8: the type character, 0 when it is not ASCII
    names: Sequence[str]  # a list, or lazy (SliceNames of the text)
    name_len: np.ndarray  # int64: len() of each name
    first: np.ndarray  # uint8: the name's first character (0 when empty or not ASCII)
    tabbed: np.ndarray  # bool: a tab followed the name
    module: np.ndarray  # int32: index into ``modules``, -1 for none
    modules: list[str]
    #: non-blank lines that did not parse
    skipped: int


def scan_kallsyms(text: str | bytes) -> KallsymsLines:
    """The fields of every line of ``text`` (see the module docstring).  ``bytes`` that
    are not ASCII are decoded as UTF-8, undecodable bytes replaced."""
    if isinstance(text, str):
        data = text.encode("ascii") if text.isascii() else None
    else:
        data = text if text.isascii() else None
        if data is None:
            text = text.decode("utf-8", "replace")
    if data is None or any(b in data for b in _ASCII_BREAKS):
        return scan_kallsyms_lines(text if isinstance(text, str) else text.decode("ascii"))
    return _scan_ascii(data)


def _first_at_or_after(positions: np.ndarray, at: np.ndarray, none: int) -> np.ndarray:
    """The first of sorted ``positions`` at or after each ``at`` (``none`` past the last)."""
    ext = np.append(positions, none).astype(np.int64)
    return ext[np.searchsorted(positions, at)]


_HEAD = 17  # bytes read at each line start: up to 16 address digits and the one after
_COLS = np.arange(_HEAD - 1, dtype=np.int64)


#: Bytes of text scanned at once (cut at a line end): the scan's temporaries are a few
#: times this.  Over a whole 5.4 MB /proc/kallsyms at once they made ~28 MB of the C heap,
#: the peak of a first ``perftui report`` on a small recording.
_PIECE = 1 << 20


def _scan_ascii(data: bytes) -> KallsymsLines:
    """:func:`scan_kallsyms` of ASCII text whose lines end at ``\\n`` only: in pieces of
    whole lines (every rule is per line)."""
    n = len(data)
    parts: list[tuple[np.ndarray, ...]] = []
    mod_names: list[str] = []
    skipped = lo = rows = 0
    while True:
        hi = n if n - lo <= _PIECE else data.find(b"\n", lo + _PIECE) + 1 or n
        *fields, found, piece_skipped = _scan_piece(data, lo, hi)
        fields[6] = fields[6] + rows  # the piece's rows with a module, counted from the first
        rows += len(fields[0])
        parts.append(tuple(fields))
        mod_names += found
        skipped += piece_skipped
        lo = hi
        if lo >= n:
            break
    addrs, types, rs, ne, first, tabbed, mod_rows = (
        np.concatenate([p[i] for p in parts]) for i in range(7))
    module = np.full(len(addrs), -1, dtype=np.int32)
    code: dict[str, int] = {}
    module[mod_rows] = [code.setdefault(m, len(code)) for m in mod_names]
    return KallsymsLines(addrs, types, SliceNames(data, rs, ne), ne - rs, first, tabbed,
                         module, list(code), skipped)


def _scan_piece(data: bytes, lo: int, hi: int) -> tuple[Any, ...]:
    """The lines of ``data[lo:hi]`` (whole lines): (addrs, types, name starts and ends in
    ``data``, first name bytes, tabbed, the rows with a module, their module names, how
    many lines were skipped)."""
    arr = np.frombuffer(data, dtype=np.uint8, count=hi - lo, offset=lo)
    n = hi - lo
    pad = np.concatenate([arr, np.zeros(_HEAD + 3, dtype=np.uint8)])  # reads past the end
    nl = np.flatnonzero(arr == 10)
    ls = np.concatenate([[0], nl + 1]).astype(np.int64)  # line starts
    le = np.append(nl, n).astype(np.int64)  # line ends (exclusive)
    # the first bytes of every line: the length of the hex run (17: too long to be one)
    head = np.lib.stride_tricks.sliding_window_view(pad, _HEAD)[ls]
    hexy = _IS_HEX[head]
    hlen = np.where(hexy.all(axis=1), _HEAD, np.argmin(hexy, axis=1)).astype(np.int64)
    h_end = ls + hlen
    tchar = pad[h_end + 1]
    matched = ((hlen > 0) & (hlen < _HEAD) & (pad[h_end] == 32) & (h_end + 2 < le)
               & ~_WS[tchar] & (pad[h_end + 2] == 32))
    # skipped: lines starting with a hex digit that do not match, or whose address is too
    # long (whether or not the rest matches), and the other non-blank lines
    skipped = int(np.count_nonzero(~matched & (hlen > 0))) + _unmatched_nonblank(
        arr, ls, le, np.flatnonzero((hlen == 0) & (ls < le)))
    rows = np.flatnonzero(matched)
    he, hl = h_end[rows], hlen[rows]
    addrs = _hex_values(head[rows, :_HEAD - 1], hl)
    types = tchar[rows]
    rs = he + 3  # REST starts
    eff = np.minimum(le[rows], rs + KSYM_NAME_LEN)
    tpos = _first_at_or_after(np.flatnonzero(arr == 9), rs, n)
    tabbed = tpos < eff
    ne = np.where(tabbed, tpos, eff)  # name ends
    first = np.where(ne > rs, pad[rs], 0).astype(np.uint8)
    mod_rows = np.zeros(0, np.int64)
    mod_names: list[str] = []
    if tabbed.any():
        mstart = tpos + 1
        closing = _first_at_or_after(np.flatnonzero(arr == 93), mstart, n)
        is_mod = tabbed & (mstart < eff) & (pad[np.minimum(mstart, n)] == 91) & (
            closing < eff)
        mod_rows = np.flatnonzero(is_mod)
        mod_names = slices_text(arr, mstart[mod_rows] + 1, closing[mod_rows], sep=10,
                                errors="strict")
    return addrs, types, rs + lo, ne + lo, first, tabbed, mod_rows, mod_names, skipped


def _hex_values(digits: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The values of hex numbers: row ``i`` of ``digits`` (16 columns of ASCII) holds one
    of ``lengths[i]`` (1-16) digits, left-aligned.  Pairs of digits make the bytes of a
    big-endian u64, shifted right by the digits missing."""
    nib = _NIBBLE[digits]
    nib[lengths[:, None] <= _COLS] = 0
    packed = np.ascontiguousarray((nib[:, 0::2] << 4) | nib[:, 1::2])
    left = packed.view(">u8").reshape(-1).astype(np.uint64)
    return left >> ((16 - lengths) * 4).astype(np.uint64)


def _unmatched_nonblank(arr: np.ndarray, ls: np.ndarray, le: np.ndarray,
                        lines: np.ndarray) -> int:
    """How many of ``lines`` (non-empty, not starting with a hex digit) hold a byte that is
    not whitespace."""
    if not len(lines):
        return 0
    first_ws = _WS[arr[ls[lines]]]
    count = int(np.count_nonzero(~first_ws))
    lines = lines[first_ws]
    if len(lines):  # lines starting with whitespace: where the first other byte is
        nonws = np.flatnonzero(~_WS[arr])
        count += int(np.count_nonzero(
            _first_at_or_after(nonws, ls[lines], len(arr)) < le[lines]))
    return count


def _fields(text: str) -> tuple[list[tuple[str, str, str]], int]:
    """``(address, type, rest)`` of each line of ``text`` that parses, in order, and how
    many non-blank lines do not."""
    if _OTHER_BREAKS.search(text) is None:  # lines end at "\n" only: one pass of the regex
        found: list[tuple[str, str, str]] = _LINES.findall(text)
        return found, sum(1 for line in text.split("\n") if line.strip()) - len(found)
    found, skipped = [], 0
    for line in text.splitlines():
        m = _LINE.match(line)
        if m is None:
            skipped += bool(line.strip())
        else:
            found.append((m.group(1), m.group(2), m.group(3)))
    return found, skipped


def _ascii_code(s: str) -> int:
    return ord(s[0]) if s and s[0] < "\x80" else 0


def scan_kallsyms_lines(text: str) -> KallsymsLines:
    """:func:`scan_kallsyms`, one line at a time (any text)."""
    found, skipped = _fields(text)
    addrs: list[int] = []
    types: list[int] = []
    names: list[str] = []
    tabbed: list[bool] = []
    module: list[int] = []
    code: dict[str, int] = {}
    for hexa, t, whole in found:
        if len(hexa) > 16:
            skipped += 1
            continue
        rest = whole[:KSYM_NAME_LEN]
        name, tab, mod = rest.partition("\t")
        m = -1
        if tab and mod.startswith("[") and "]" in mod:
            m = code.setdefault(mod[1:mod.index("]")], len(code))
        addrs.append(int(hexa, 16))
        types.append(_ascii_code(t))
        names.append(name)
        tabbed.append(bool(tab))
        module.append(m)
    return KallsymsLines(
        np.array(addrs, dtype=np.uint64), np.array(types, dtype=np.uint8), names,
        np.array([len(x) for x in names], dtype=np.int64),
        np.array([_ascii_code(x) for x in names], dtype=np.uint8),
        np.array(tabbed, dtype=bool), np.array(module, dtype=np.int32), list(code), skipped)
