"""The function DIEs of a unit, read in one compiled pass over ``.debug_info``.

Why compiled: pyelftools parses a DIE in ~200 us (construct); glibc's units hold 10^3-10^4
DIEs, so naming 3000 sampled libc addresses took ~70 s through pyelftools, where binutils'
addr2line takes 0.9 s.  This pass reads only what :mod:`.functable` needs and skips every
other attribute by its form.

Of each ``DW_TAG_subprogram``, ``DW_TAG_entry_point`` and ``DW_TAG_inlined_subroutine`` it
keeps: its offset and tag, the nearest enclosing such DIE (its caller when inlined), its
naming attributes in attribute order (``DW_AT_name``, ``DW_AT_linkage_name`` /
``DW_AT_MIPS_linkage_name``, ``DW_AT_abstract_origin``, ``DW_AT_specification``: up to
:data:`EVENTS`), ``DW_AT_low_pc``, ``DW_AT_high_pc`` (and whether it is an offset),
``DW_AT_ranges``, ``DW_AT_call_file`` and ``DW_AT_call_line``.  Of the unit's own DIE:
its language, compilation directory, ranges, line table and the bases DWARF 5 indexes
are relative to.  :func:`read_one` reads one DIE's naming attributes at any offset (a
reference into a DIE that is not a function, or into another unit).

The pass stops, with a status, at a read past the unit, an abbreviation code the table
lacks, nesting deeper than :data:`MAX_DEPTH`, or more than :data:`MAX_FUNCS` function DIEs;
what was read before stays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .abbrev import Abbrevs
from .forms import (
    ADDR,
    AT_ABSTRACT_ORIGIN,
    AT_ADDR_BASE,
    AT_CALL_FILE,
    AT_CALL_LINE,
    AT_COMP_DIR,
    AT_HIGH_PC,
    AT_LANGUAGE,
    AT_LINKAGE_NAME,
    AT_LOW_PC,
    AT_MIPS_LINKAGE_NAME,
    AT_NAME,
    AT_RANGES,
    AT_RNGLISTS_BASE,
    AT_SPECIFICATION,
    AT_STMT_LIST,
    AT_STR_OFFSETS_BASE,
    TAG_ENTRY_POINT,
    TAG_INLINED,
    TAG_SUBPROGRAM,
    form_value,
    i64,
    uleb,
)

__all__ = ["EVENTS", "EV_LINKAGE", "EV_NAME", "EV_ORIGIN", "EV_SPEC", "MAX_DEPTH", "MAX_FUNCS",
           "OK", "STATUS_TEXT", "Scan", "read_one", "scan_top", "scan_unit"]

EVENTS = 6  # naming attributes kept per DIE
MAX_DEPTH = 4096
MAX_FUNCS = 1 << 22
#: what a naming event is
EV_NAME, EV_LINKAGE, EV_ORIGIN, EV_SPEC = 1, 2, 3, 4
#: statuses
OK, FULL, BAD_READ, BAD_CODE, TOO_DEEP, TOO_MANY = 0, 1, 2, 3, 4, 5
STATUS_TEXT = {BAD_READ: "a DIE runs past its unit", BAD_CODE: "an unknown abbreviation code",
               TOO_DEEP: f"DIEs nested over {MAX_DEPTH} deep",
               TOO_MANY: f"more than {MAX_FUNCS} function DIEs"}
#: the unit DIE's values kept (rows of ``Scan.top``: kind, value)
TOP_LANG, TOP_COMP_DIR, TOP_LOW, TOP_HIGH, TOP_RANGES, TOP_STMT, TOP_STR_BASE, \
    TOP_ADDR_BASE, TOP_RNG_BASE, TOP_HIGH_REL = range(10)
#: the row of ``Scan.top`` each attribute of the unit DIE goes in (-1: not kept)
_TOP_SLOT = np.full(0x80, -1, np.int64)
for _at, _slot in ((AT_LANGUAGE, TOP_LANG), (AT_COMP_DIR, TOP_COMP_DIR), (AT_LOW_PC, TOP_LOW),
                   (AT_HIGH_PC, TOP_HIGH), (AT_RANGES, TOP_RANGES), (AT_STMT_LIST, TOP_STMT),
                   (AT_STR_OFFSETS_BASE, TOP_STR_BASE), (AT_ADDR_BASE, TOP_ADDR_BASE),
                   (AT_RNGLISTS_BASE, TOP_RNG_BASE)):
    _TOP_SLOT[_at] = _slot


@dataclass
class Scan:
    """The function DIEs of one unit (parallel arrays) and its own DIE's values."""

    off: np.ndarray  # int64
    tag: np.ndarray  # int64
    caller: np.ndarray  # int64: index of the enclosing function DIE, -1 none
    ev: np.ndarray  # int64 (n, EVENTS, 3): (event, value kind, value) in attribute order
    pc: np.ndarray  # uint64 (n, 3): low_pc, high_pc, ranges
    pc_kind: np.ndarray  # int64 (n, 4): their value kinds, and 1 when high_pc is an offset
    call: np.ndarray  # int64 (n, 2): call_file (-1 none), call_line
    top: np.ndarray  # uint64 (10, 2): the unit DIE's (kind, value) per TOP_*
    status: int
    stopped_at: int  # where a bad status stopped the pass


@njit(cache=True, nogil=True, inline="always")
def _abbrev(code: int, codes: np.ndarray, order: np.ndarray, dense: bool) -> int:
    """The abbreviation index of ``code`` (-1: none); the last of equal codes."""
    n = len(codes)
    if dense:
        return code - 1 if 1 <= code <= n else -1
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if codes[order[mid]] <= code:
            lo = mid + 1
        else:
            hi = mid
    if lo > 0 and codes[order[lo - 1]] == code:
        return i64(order[lo - 1])
    return -1


@njit(cache=True, nogil=True)
def _scan(b: np.ndarray, pos: int, end: int, cu_off: int, version: int, addr_size: int,
          offset_size: int, big: bool, codes: np.ndarray, tags: np.ndarray,
          children: np.ndarray, first: np.ndarray, count: np.ndarray, an: np.ndarray,
          af: np.ndarray, ai: np.ndarray, order: np.ndarray, dense: bool, mode: int,
          off: np.ndarray, tag: np.ndarray, caller: np.ndarray, ev: np.ndarray,
          pc: np.ndarray, pck: np.ndarray, call: np.ndarray, top: np.ndarray,
          stack: np.ndarray) -> tuple[int, int, int]:
    """(function DIEs read, status, position).  ``mode`` 0: the unit whose DIE is at
    ``pos``; 1: only the DIE at ``pos``; 2: only the unit's own DIE."""
    n = 0
    depth = 0
    one = mode == 1
    is_top = not one
    stack[0] = -1
    while pos < end:
        here = pos
        code, pos = uleb(b, pos, end)
        if pos < 0:
            return n, BAD_READ, here
        if code == 0:
            if is_top or one:
                return n, OK, pos
            depth -= 1
            if depth <= 0:
                return n, OK, pos
            continue
        k = _abbrev(i64(code), codes, order, dense)
        if k < 0:
            return n, BAD_CODE, here
        t = tags[k]
        func = one or (not is_top and (t in (TAG_SUBPROGRAM, TAG_INLINED, TAG_ENTRY_POINT)))
        me = -1
        if func:
            if n >= len(off):
                return n, FULL, here
            me = n
            off[n] = here
            tag[n] = t
            caller[n] = -1
            if t == TAG_INLINED:
                for i in range(depth - 1, -1, -1):
                    if stack[i] >= 0:
                        caller[n] = stack[i]
                        break
            for j in range(ev.shape[1]):
                ev[n, j, 0] = 0
            for j in range(3):
                pc[n, j] = 0
            for j in range(4):
                pck[n, j] = 0
            call[n, 0] = -1
            call[n, 1] = 0
        nev = 0
        for j in range(first[k], first[k] + count[k]):
            name = an[j]
            vk, v, pos = form_value(b, pos, end, af[j], ai[j], addr_size, offset_size,
                                    version, cu_off, big)
            if pos < 0:
                return n, BAD_READ, here
            if is_top:
                slot = _TOP_SLOT[name] if name < len(_TOP_SLOT) else -1
                if slot == TOP_HIGH:
                    top[TOP_HIGH_REL, 0] = 1
                    top[TOP_HIGH_REL, 1] = 0 if af[j] == ADDR else 1
                if slot >= 0:
                    top[slot, 0] = vk
                    top[slot, 1] = v
            elif func:
                e = 0
                if name == AT_NAME:
                    e = 1
                elif name in (AT_LINKAGE_NAME, AT_MIPS_LINKAGE_NAME):
                    e = 2
                elif name == AT_ABSTRACT_ORIGIN:
                    e = 3
                elif name == AT_SPECIFICATION:
                    e = 4
                elif name == AT_LOW_PC:
                    pc[me, 0] = v
                    pck[me, 0] = vk
                elif name == AT_HIGH_PC:
                    pc[me, 1] = v
                    pck[me, 1] = vk
                    pck[me, 3] = 0 if af[j] == ADDR else 1
                elif name == AT_RANGES:
                    pc[me, 2] = v
                    pck[me, 2] = vk
                elif name == AT_CALL_FILE:
                    if vk == 1:
                        call[me, 0] = i64(v)
                elif name == AT_CALL_LINE and vk == 1:
                    call[me, 1] = i64(v)
                if e and nev < ev.shape[1]:
                    ev[me, nev, 0] = e
                    ev[me, nev, 1] = vk
                    ev[me, nev, 2] = i64(v)
                    nev += 1
        if func:
            n += 1
        if one:
            return n, OK, pos
        if is_top:
            is_top = False
            if mode == 2 or not children[k]:
                return n, OK, pos
            depth = 1
            stack[1] = -1
            continue
        stack[depth] = me
        if children[k]:
            depth += 1
            if depth >= len(stack) - 1:
                return n, TOO_DEEP, here
            stack[depth] = -1
    return n, OK, pos


def _run(b: np.ndarray, pos: int, end: int, cu_off: int, version: int, addr_size: int,
         offset_size: int, big: bool, ab: Abbrevs, mode: int) -> Scan:
    cap = 16 if mode else max(64, min(MAX_FUNCS, (end - pos) // 64))
    while True:
        off = np.zeros(cap, np.int64)
        tag = np.zeros(cap, np.int64)
        caller = np.zeros(cap, np.int64)
        ev = np.zeros((cap, EVENTS, 3), np.int64)
        pc = np.zeros((cap, 3), np.uint64)
        pck = np.zeros((cap, 4), np.int64)
        call = np.zeros((cap, 2), np.int64)
        top = np.zeros((10, 2), np.uint64)
        stack = np.zeros(MAX_DEPTH + 2, np.int64)
        n, status, at = _scan(b, pos, end, cu_off, version, addr_size, offset_size, big,
                              ab.code, ab.tag, ab.children, ab.first, ab.count, ab.name,
                              ab.form, ab.implicit, ab.order, ab.dense, mode, off, tag,
                              caller, ev, pc, pck, call, top, stack)
        if status != FULL:
            break
        if cap >= MAX_FUNCS:
            status = TOO_MANY
            break
        cap = min(MAX_FUNCS, cap * 4)
    return Scan(off[:n].copy(), tag[:n].copy(), caller[:n].copy(), ev[:n].copy(),
                pc[:n].copy(), pck[:n].copy(), call[:n].copy(), top, int(status), int(at))


def scan_unit(info: np.ndarray, die: int, end: int, cu_off: int, version: int,
              addr_size: int, offset_size: int, big: bool, ab: Abbrevs) -> Scan:
    """The function DIEs of the unit whose first DIE is at ``die``."""
    return _run(info, die, min(end, len(info)), cu_off, version, addr_size, offset_size,
                big, ab, 0)


def scan_top(info: np.ndarray, die: int, end: int, cu_off: int, version: int,
             addr_size: int, offset_size: int, big: bool, ab: Abbrevs) -> Scan:
    """Only the unit's own DIE (``Scan.top``): its language, ranges, bases."""
    return _run(info, die, min(end, len(info)), cu_off, version, addr_size, offset_size,
                big, ab, 2)


def read_one(info: np.ndarray, at: int, end: int, cu_off: int, version: int,
             addr_size: int, offset_size: int, big: bool, ab: Abbrevs) -> Scan:
    """The DIE at ``at`` (its naming attributes), whatever its tag."""
    if not 0 <= at < min(end, len(info)):
        return _run(info, 0, 0, cu_off, version, addr_size, offset_size, big, ab, 1)
    return _run(info, at, min(end, len(info)), cu_off, version, addr_size, offset_size,
                big, ab, 1)
