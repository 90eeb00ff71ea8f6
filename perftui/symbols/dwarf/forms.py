"""DWARF 2-5 encodings and the compiled readers every DWARF pass shares.

The readers take the section as a ``uint8`` array and a position and return the value
and the position after it; a read past ``end`` returns position ``-1``, which every caller
checks (a hostile file never makes them read outside the array).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
from numba import njit

#: np.int64 as mypy should see it in the compiled loops (numba resolves it to np.int64;
#: mypy cannot follow numba's mix of Python ints and numpy scalars)
i64 = cast(Callable[[Any], int], np.int64)

# DW_FORM_*
ADDR, BLOCK2, BLOCK4, DATA2, DATA4, DATA8, STRING, BLOCK, BLOCK1, DATA1 = (
    0x01, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B)
FLAG, SDATA, STRP, UDATA, REF_ADDR, REF1, REF2, REF4, REF8, REF_UDATA = (
    0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15)
INDIRECT, SEC_OFFSET, EXPRLOC, FLAG_PRESENT, STRX, ADDRX, REF_SUP4, STRP_SUP = (
    0x16, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1C, 0x1D)
DATA16, LINE_STRP, REF_SIG8, IMPLICIT_CONST, LOCLISTX, RNGLISTX, REF_SUP8 = (
    0x1E, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x24)
STRX1, STRX2, STRX3, STRX4, ADDRX1, ADDRX2, ADDRX3, ADDRX4 = (
    0x25, 0x26, 0x27, 0x28, 0x29, 0x2A, 0x2B, 0x2C)
GNU_ADDR_INDEX, GNU_STR_INDEX, GNU_REF_ALT, GNU_STRP_ALT = 0x1F01, 0x1F02, 0x1F20, 0x1F21

# DW_AT_*
AT_NAME, AT_STMT_LIST, AT_LOW_PC, AT_HIGH_PC, AT_LANGUAGE, AT_COMP_DIR = (
    0x03, 0x10, 0x11, 0x12, 0x13, 0x1B)
AT_ABSTRACT_ORIGIN, AT_SPECIFICATION, AT_RANGES, AT_CALL_FILE, AT_CALL_LINE = (
    0x31, 0x47, 0x55, 0x58, 0x59)
AT_LINKAGE_NAME, AT_STR_OFFSETS_BASE, AT_ADDR_BASE, AT_RNGLISTS_BASE = 0x6E, 0x72, 0x73, 0x74
AT_MIPS_LINKAGE_NAME = 0x2007

# DW_TAG_*
TAG_ENTRY_POINT, TAG_INLINED, TAG_SUBPROGRAM = 0x03, 0x1D, 0x2E

# A value's kind, as the scans keep it (what binutils' is_int_form / is_str_form say)
V_NONE, V_INT, V_ADDR, V_ADDRX, V_STR_INFO, V_STRP, V_LINE_STRP, V_STRX, V_REF, V_OTHER = (
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9)

ERR = -1  # a read that would pass the end


_U0 = np.uint64(0)
_U7F = np.uint64(0x7F)
_U80 = np.uint64(0x80)
_U8 = np.uint64(8)


@njit(cache=True, nogil=True, inline="always")
def uleb(b: np.ndarray, pos: int, end: int) -> tuple[np.uint64, int]:
    """An unsigned LEB128 (bits past 64 dropped)."""
    v = _U0
    shift = 0
    while pos < end:
        c = np.uint64(b[pos])
        pos += 1
        if shift < 64:
            v |= (c & _U7F) << np.uint64(shift)
        shift += 7
        if c < _U80:
            return v, pos
    return _U0, ERR


@njit(cache=True, nogil=True, inline="always")
def sleb(b: np.ndarray, pos: int, end: int) -> tuple[int, int]:
    """A signed LEB128 (as int64, wrapping past 64 bits)."""
    v = _U0
    shift = 0
    while pos < end:
        c = np.uint64(b[pos])
        pos += 1
        if shift < 64:
            v |= (c & _U7F) << np.uint64(shift)
        shift += 7
        if c < _U80:
            if shift < 64 and (c & np.uint64(0x40)) != _U0:
                v |= ~_U0 << np.uint64(shift)
            return i64(v), pos
    return 0, ERR


@njit(cache=True, nogil=True, inline="always")
def word(b: np.ndarray, pos: int, end: int, size: int, big: bool) -> tuple[np.uint64, int]:
    """An unsigned integer of ``size`` bytes (1-8)."""
    if pos < 0 or pos + size > end:
        return _U0, ERR
    v = _U0
    if big:
        for i in range(size):
            v = (v << _U8) | np.uint64(b[pos + i])
    else:
        for i in range(size - 1, -1, -1):
            v = (v << _U8) | np.uint64(b[pos + i])
    return v, pos + size


@njit(cache=True, nogil=True, inline="always")
def cstring_end(b: np.ndarray, pos: int, end: int) -> int:
    """The position after the NUL that ends a string at ``pos`` (ERR: none before end)."""
    while pos < end:
        if b[pos] == 0:
            return pos + 1
        pos += 1
    return ERR


@njit(cache=True, nogil=True)
def form_value(b: np.ndarray, pos: int, end: int, form: int, implicit: int,
               addr_size: int, offset_size: int, version: int, cu_off: int,
               big: bool) -> tuple[int, np.uint64, int]:
    """One attribute value: (kind ``V_*``, value, position after).  A reference is made
    absolute (an offset into .debug_info); a string is where it is (``V_STR_INFO``: at
    that position of .debug_info); an index stays an index.  An unknown form: ERR."""
    base = np.uint64(cu_off)
    depth = 0
    while form == INDIRECT:  # the form is in the data
        f, pos = uleb(b, pos, end)
        form = i64(f)
        depth += 1
        if pos < 0 or depth > 4:
            return V_NONE, _U0, ERR
    if form == ADDR:
        v, pos = word(b, pos, end, addr_size, big)
        return V_ADDR, v, pos
    if form in (DATA1, REF1, FLAG):
        v, pos = word(b, pos, end, 1, big)
        return (V_REF, v + base, pos) if form == REF1 else (V_INT, v, pos)
    if form in (DATA2, REF2):
        v, pos = word(b, pos, end, 2, big)
        return (V_REF, v + base, pos) if form == REF2 else (V_INT, v, pos)
    if form in (DATA4, REF4, REF_SUP4):
        v, pos = word(b, pos, end, 4, big)
        if form == REF4:
            return V_REF, v + base, pos
        return (V_OTHER, v, pos) if form == REF_SUP4 else (V_INT, v, pos)
    if form in (DATA8, REF8, REF_SIG8, REF_SUP8):
        v, pos = word(b, pos, end, 8, big)
        if form == REF8:
            return V_REF, v + base, pos
        return (V_INT, v, pos) if form == DATA8 else (V_OTHER, v, pos)
    if form == DATA16:
        return V_OTHER, _U0, (pos + 16 if pos + 16 <= end else ERR)
    if form == SDATA:
        sv, pos = sleb(b, pos, end)
        return V_INT, np.uint64(sv), pos
    if form in (UDATA, REF_UDATA):
        v, pos = uleb(b, pos, end)
        return (V_REF, v + base, pos) if form == REF_UDATA else (V_INT, v, pos)
    if form == STRING:
        e = cstring_end(b, pos, end)
        return V_STR_INFO, np.uint64(pos), e
    if form in (STRP, LINE_STRP, SEC_OFFSET, STRP_SUP, GNU_STRP_ALT, GNU_REF_ALT):
        v, pos = word(b, pos, end, offset_size, big)
        if form == STRP:
            return V_STRP, v, pos
        if form == LINE_STRP:
            return V_LINE_STRP, v, pos
        return (V_INT, v, pos) if form == SEC_OFFSET else (V_OTHER, v, pos)
    if form == REF_ADDR:
        v, pos = word(b, pos, end, addr_size if version <= 2 else offset_size, big)
        return V_REF, v, pos
    if form == FLAG_PRESENT:
        return V_INT, np.uint64(1), pos
    if form == IMPLICIT_CONST:
        return V_INT, np.uint64(implicit), pos
    if form in (EXPRLOC, BLOCK):
        n, pos = uleb(b, pos, end)
        if pos < 0 or n > np.uint64(end - pos):
            return V_NONE, _U0, ERR
        return V_OTHER, _U0, pos + i64(n)
    if form in (BLOCK1, BLOCK2, BLOCK4):
        size = 1 if form == BLOCK1 else (2 if form == BLOCK2 else 4)
        n, pos = word(b, pos, end, size, big)
        if pos < 0 or n > np.uint64(end - pos):
            return V_NONE, _U0, ERR
        return V_OTHER, _U0, pos + i64(n)
    if form in (STRX, GNU_STR_INDEX):
        v, pos = uleb(b, pos, end)
        return V_STRX, v, pos
    if form in (ADDRX, GNU_ADDR_INDEX):
        v, pos = uleb(b, pos, end)
        return V_ADDRX, v, pos
    if form in (LOCLISTX, RNGLISTX):
        v, pos = uleb(b, pos, end)
        return V_OTHER, v, pos
    if STRX1 <= form <= STRX4:
        v, pos = word(b, pos, end, form - STRX1 + 1, big)
        return V_STRX, v, pos
    if ADDRX1 <= form <= ADDRX4:
        v, pos = word(b, pos, end, form - ADDRX1 + 1, big)
        return V_ADDRX, v, pos
    return V_NONE, _U0, ERR
