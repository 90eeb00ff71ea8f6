"""Address range lists (``DW_AT_ranges``), read as binutils 2.40's ``read_rangelist``.

Before DWARF 5 (``.debug_ranges``): pairs of addresses relative to the base (the unit's
``DW_AT_low_pc``) until a pair of zeros; a pair whose first is all ones sets the base.
DWARF 5 (``.debug_rnglists``): ``DW_RLE_base_address``, ``start_end``, ``start_length``
and ``offset_pair`` entries until ``end_of_list``; the ``x`` forms (split DWARF, an index
into ``.debug_addr``) end the list, as they do binutils'.  Compiled, many lists per call;
each list is read up to :data:`MAX_RANGES` entries and never past its section.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .forms import i64, uleb, word

__all__ = ["MAX_RANGES", "read_ranges"]

MAX_RANGES = 1 << 16
_RLE_END, _RLE_BASEX, _RLE_SXEX, _RLE_SXLEN, _RLE_OFFSET, _RLE_BASE, _RLE_SE, _RLE_SLEN = \
    range(8)


@njit(cache=True, nogil=True)
def _lists(b: np.ndarray, v5: bool, addr_size: int, big: bool, offsets: np.ndarray,
           bases: np.ndarray, lo: np.ndarray, hi: np.ndarray, starts: np.ndarray) -> int:
    """Fill ``lo``/``hi`` with the ranges of each list (CSR ``starts``); the count, or -1
    when the output ran out of room (call again with more)."""
    end = len(b)
    n = 0
    mask = np.uint64(0xFFFFFFFFFFFFFFFF) if addr_size == 8 else np.uint64(0xFFFFFFFF)
    for i in range(len(offsets)):
        starts[i] = n
        pos = i64(offsets[i])
        base = bases[i]
        got = 0
        if pos < 0 or pos >= end:
            continue
        while pos >= 0 and pos < end and got < MAX_RANGES:
            if not v5:
                a, pos = word(b, pos, end, addr_size, big)
                c, pos = word(b, pos, end, addr_size, big)
                if pos < 0 or (a == 0 and c == 0):
                    break
                if a == mask and c != mask:
                    base = c
                    continue
                x, y = (a + base) & mask, (c + base) & mask
            else:
                kind = i64(b[pos])
                pos += 1
                if kind == _RLE_END:
                    break
                if kind == _RLE_BASE:
                    base, pos = word(b, pos, end, addr_size, big)
                    continue
                if kind == _RLE_SE:
                    x, pos = word(b, pos, end, addr_size, big)
                    y, pos = word(b, pos, end, addr_size, big)
                elif kind == _RLE_SLEN:
                    x, pos = word(b, pos, end, addr_size, big)
                    ln, pos = uleb(b, pos, end)
                    y = (x + ln) & mask
                elif kind == _RLE_OFFSET:
                    p, pos = uleb(b, pos, end)
                    q, pos = uleb(b, pos, end)
                    x, y = (base + p) & mask, (base + q) & mask
                else:  # the x forms and anything unknown end the list (binutils too)
                    break
                if pos < 0:
                    break
            if n >= len(lo):
                return -1
            lo[n] = x
            hi[n] = y
            n += 1
            got += 1
    starts[len(offsets)] = n
    return n


def read_ranges(section: np.ndarray, v5: bool, addr_size: int, big: bool,
                offsets: np.ndarray, bases: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ranges of lists at ``offsets`` (each with its base): (lo, hi, starts)."""
    offsets = np.asarray(offsets, np.int64)
    bases = np.asarray(bases, np.uint64)
    cap = max(16, 4 * len(offsets))
    while True:
        lo = np.zeros(cap, np.uint64)
        hi = np.zeros(cap, np.uint64)
        starts = np.zeros(len(offsets) + 1, np.int64)
        n = _lists(section, v5, addr_size, big, offsets, bases, lo, hi, starts)
        if n >= 0:
            return lo[:n], hi[:n], starts
        cap *= 4
