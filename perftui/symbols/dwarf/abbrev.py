"""Abbreviation tables (``.debug_abbrev``), read once per table offset (compiled).

A table is kept as arrays: per abbreviation its code, tag, children flag and its
attributes' span in the attribute arrays (name, form, the implicit constant).  A code is
found directly when codes are 1..n in order (gcc's), else by a binary search over the
sorted codes.  A table that runs past its section, or is absurdly long, ends where it
went wrong (the DIEs that use a missing code then stop their unit's scan).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .forms import IMPLICIT_CONST, i64, sleb, uleb

__all__ = ["MAX_ABBREVS", "Abbrevs", "read_abbrevs"]

#: abbreviations per table, and attributes per abbreviation, at most
MAX_ABBREVS = 1 << 20
MAX_ATTRS = 1 << 10


@dataclass
class Abbrevs:
    code: np.ndarray  # int64, per abbreviation (in table order)
    tag: np.ndarray  # int64
    children: np.ndarray  # int64 (0/1)
    first: np.ndarray  # int64: its first attribute in the arrays below
    count: np.ndarray  # int64
    name: np.ndarray  # int64, per attribute
    form: np.ndarray  # int64
    implicit: np.ndarray  # int64
    order: np.ndarray  # int64: abbreviation indexes sorted by code
    dense: bool  # codes are 1..n in table order


@njit(cache=True, nogil=True)
def _read(b: np.ndarray, pos: int, heads: np.ndarray, attrs: np.ndarray
          ) -> tuple[int, int, bool]:
    """Fill ``heads`` (code, tag, children, first, count) and ``attrs`` (name, form,
    implicit); (abbreviations, attributes, full: the arrays ran out)."""
    end = len(b)
    n = 0
    na = 0
    while pos < end:
        code, pos = uleb(b, pos, end)
        if pos < 0 or code == 0:
            break
        if n >= heads.shape[0]:
            return n, na, True
        tag, pos = uleb(b, pos, end)
        if pos < 0 or pos >= end:
            break
        ch = i64(b[pos])
        pos += 1
        first = na
        ok = False
        while pos < end:
            name, pos = uleb(b, pos, end)
            if pos < 0:
                break
            form, pos = uleb(b, pos, end)
            if pos < 0:
                break
            if name == 0 and form == 0:
                ok = True
                break
            imp = 0
            if form == IMPLICIT_CONST:
                imp, pos = sleb(b, pos, end)
                if pos < 0:
                    break
            if na >= attrs.shape[0]:
                return n, na, True
            if na - first >= MAX_ATTRS:
                break
            attrs[na, 0] = i64(name)
            attrs[na, 1] = i64(form)
            attrs[na, 2] = imp
            na += 1
        if not ok:
            break
        heads[n, 0] = i64(code)
        heads[n, 1] = i64(tag)
        heads[n, 2] = 1 if ch else 0
        heads[n, 3] = first
        heads[n, 4] = na - first
        n += 1
    return n, na, False


def read_abbrevs(abbrev: np.ndarray, offset: int) -> Abbrevs:
    """The table at ``offset`` of ``.debug_abbrev`` (empty past the section)."""
    cap, acap = 1 << 10, 1 << 13
    while True:
        heads = np.zeros((cap, 5), np.int64)
        attrs = np.zeros((acap, 3), np.int64)
        if not 0 <= offset < len(abbrev):
            n, na, full = 0, 0, False
        else:
            n, na, full = _read(abbrev, offset, heads, attrs)
        if not full or cap >= MAX_ABBREVS:
            break
        cap, acap = cap * 4, acap * 4
    h = heads[:n]
    a = attrs[:na]
    code = h[:, 0].copy()
    order = np.argsort(code, kind="stable")
    dense = bool(n == 0 or np.array_equal(code, np.arange(1, n + 1)))
    return Abbrevs(code, h[:, 1].copy(), h[:, 2].copy(), h[:, 3].copy(), h[:, 4].copy(),
                   a[:, 0].copy(), a[:, 1].copy(), a[:, 2].copy(), order, dense)
