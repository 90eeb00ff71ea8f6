"""One compilation unit's functions and inlined calls, as binutils 2.40 tables them.

What ``addr2line -i -f`` (and so perf 6.1) says of an address comes from this table
(``scan_unit_for_symbols``, ``find_abstract_instance``, ``arange_add`` and
``lookup_address_in_function_table`` in ``bfd/dwarf2.c``):

* every ``DW_TAG_subprogram``, ``DW_TAG_entry_point`` and ``DW_TAG_inlined_subroutine`` is a
  function (:mod:`.diescan`); its ranges: ``DW_AT_ranges`` first, then
  ``DW_AT_low_pc``/``DW_AT_high_pc`` (``high_pc`` an offset unless its form is
  ``DW_FORM_addr``), a range that touches one already there extending it;
* its name, in attribute order: ``DW_AT_linkage_name`` (always, and then it is a *linkage*
  name), else the first ``DW_AT_name``, following ``DW_AT_abstract_origin`` and
  ``DW_AT_specification`` (in the DIE referred to, only ``DW_AT_specification``, at most
  100 deep); a ``DW_AT_name`` of a unit whose language does not mangle (C, assembly...)
  counts as a linkage name;
* an inlined call's caller is the nearest enclosing function DIE, its call site its
  ``DW_AT_call_file``/``DW_AT_call_line``;
* an address belongs to the function whose single range holding it is the shortest, the
  later DIE on a tie.

Ranges are made for every function of the unit at once (a range list per DIE that has
one, compiled); names only for the functions asked about.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .diescan import EV_LINKAGE, EV_NAME, EV_ORIGIN, EV_SPEC, Scan
from .forms import V_ADDR, V_ADDRX, V_INT, V_LINE_STRP, V_REF, V_STR_INFO, V_STRP, V_STRX
from .linetable import concat_filename
from .ranges import read_ranges

__all__ = ["PLAIN_LANGS", "FunctionTable", "UnitContext"]

#: languages whose DW_AT_name is the linkage name (binutils' mangle_style() == 0)
PLAIN_LANGS = frozenset((0x1, 0x2, 0x5, 0x6, 0x7, 0x8, 0xA, 0xC, 0x12, 0x1D, 0x8001,
                         0x8101, 0x8102, 0x8103, 0x8104))
_ORIGIN_DEPTH = 100  # binutils' recursion limit in find_abstract_instance
_STRINGS = (V_STR_INFO, V_STRP, V_LINE_STRP, V_STRX)
_MASK = (1 << 64) - 1
TAG_INLINED = 0x1D


@dataclass
class UnitContext:
    """What naming a unit's DIEs needs from the rest of the file."""

    string: Callable[[int, int], str | None]  # (value kind, value) -> text
    #: a DIE at a .debug_info offset: (its scan, its index there, its unit is plain)
    die_at: Callable[[int], tuple[Scan, int, bool] | None]
    plain: bool  # this unit's language does not mangle
    file_table: tuple[list[tuple[str | None, int]], list[str], bool] | None
    comp_dir: str | None


def arange_add(ranges: list[list[int]], lo: int, hi: int) -> None:
    """binutils' ``arange_add``: a range that touches one already there extends it."""
    if lo == hi:
        return
    if not ranges or ranges[0][1] == 0:
        if ranges:
            ranges[0] = [lo, hi]
        else:
            ranges.append([lo, hi])
        return
    for r in ranges:  # the first, then the others newest first (binutils' list order)
        if lo == r[1]:
            r[1] = hi
            return
        if hi == r[0]:
            r[0] = lo
            return
    ranges.insert(1, [lo, hi])


@dataclass
class FunctionTable:
    """The functions of one unit: ``lo``/``hi``/``func`` are every range (parallel)."""

    scan: Scan
    ctx: UnitContext
    lo: np.ndarray  # uint64
    hi: np.ndarray  # uint64
    func: np.ndarray  # int64 index of the function
    low: np.ndarray  # uint64 per function: its first range's start (binutils' arange.low)
    problems: list[str] = field(default_factory=list)
    _names: dict[int, tuple[str | None, bool]] = field(default_factory=dict)

    @classmethod
    def build(cls, scan: Scan, ctx: UnitContext, ranges_sec: np.ndarray, v5: bool,
              addr_size: int, big: bool, base: int,
              addr_of: Callable[[int], int | None]) -> FunctionTable:
        """The table of a unit's scan (``base``: the unit's ``DW_AT_low_pc``;
        ``addr_of``: an ``.debug_addr`` index's address)."""
        n = len(scan.off)
        pc, kind = scan.pc, scan.pc_kind
        low = np.zeros(n, np.uint64)
        low_pc = pc[:, 0].copy()
        high_pc = pc[:, 1].copy()
        for col, arr in ((0, low_pc), (1, high_pc)):
            for i in np.flatnonzero(kind[:, col] == V_ADDRX).tolist():
                got = addr_of(int(arr[i]))
                arr[i] = np.uint64(got or 0)
        ok_low = np.isin(kind[:, 0], (V_ADDR, V_INT, V_ADDRX))
        low_pc[~ok_low] = 0
        ok_high = np.isin(kind[:, 1], (V_ADDR, V_INT, V_ADDRX))
        with np.errstate(over="ignore"):
            high = np.where(kind[:, 3] == 1, high_pc + low_pc, high_pc)
        high[~ok_high] = 0
        has_ranges = kind[:, 2] == V_INT
        simple = ~has_ranges & (high != 0) & (high != low_pc)
        lo = [low_pc[simple]]
        hi = [high[simple]]
        fn = [np.flatnonzero(simple)]
        low[simple] = low_pc[simple]
        multi = np.flatnonzero(has_ranges)
        problems: list[str] = []
        if len(multi):
            rl, rh, starts = read_ranges(ranges_sec, v5, addr_size, big, pc[multi, 2],
                                         np.full(len(multi), base, np.uint64))
            rl_l, rh_l = rl.tolist(), rh.tolist()
            for j, i in enumerate(multi.tolist()):
                merged: list[list[int]] = []
                for k in range(int(starts[j]), int(starts[j + 1])):
                    arange_add(merged, rl_l[k], rh_l[k])
                if int(high[i]) != 0:
                    arange_add(merged, int(low_pc[i]), int(high[i]))
                if merged:
                    low[i] = merged[0][0]
                    lo.append(np.array([m[0] for m in merged], np.uint64))
                    hi.append(np.array([m[1] for m in merged], np.uint64))
                    fn.append(np.full(len(merged), i, np.int64))
        return cls(scan, ctx, np.concatenate(lo), np.concatenate(hi),
                   np.concatenate(fn).astype(np.int64), low, problems)

    # -- look-ups -----------------------------------------------------------------------------
    def best(self, addr: int) -> int:
        """The function an address belongs to (-1: none), by binutils' best fit."""
        if not len(self.lo):
            return -1
        a = np.uint64(addr)
        inside = np.flatnonzero((self.lo <= a) & (a < self.hi))
        if not len(inside):
            return -1
        length = self.hi[inside] - self.lo[inside]
        shortest = inside[length == length.min()]
        return int(self.func[shortest].max())

    def is_inlined(self, i: int) -> bool:
        return int(self.scan.tag[i]) == TAG_INLINED

    def caller(self, i: int) -> int:
        return int(self.scan.caller[i])

    def call_site(self, i: int) -> tuple[str | None, int]:
        """(call file as addr2line prints it, or None; call line) of inlined call ``i``."""
        f, line = int(self.scan.call[i, 0]), int(self.scan.call[i, 1])
        path = None
        if f >= 0 and self.ctx.file_table is not None:
            entries, dirs, v5 = self.ctx.file_table
            path = concat_filename(entries, dirs, self.ctx.comp_dir, f, v5)
        return path, line

    def settle(self, i: int, name: str | None) -> None:
        """binutils' first look-up of a function without a linkage name: from then on
        its name counts as one, ``name`` (the ELF symbol's) when given."""
        old = self.name(i)[0]
        self._names[i] = (old if name is None else name, True)

    def name(self, i: int) -> tuple[str | None, bool]:
        """(name, is a linkage name) of function ``i``, binutils' way (as it stands
        after the look-ups so far: see :meth:`settle`)."""
        got = self._names.get(i)
        if got is None:
            try:
                got = _resolve(self.scan, i, self.ctx, self.ctx.plain, None, False, -1)
            except ValueError as e:
                self.problems.append(f"DIE at {int(self.scan.off[i]):#x}: {e}")
                got = (None, False)
            self._names[i] = got
        return got


def _resolve(scan: Scan, i: int, ctx: UnitContext, plain: bool, name: str | None,
             linkage: bool, depth: int) -> tuple[str | None, bool]:
    """The naming events of DIE ``i`` of ``scan`` applied to (name, linkage); ``depth``
    -1 for the function itself (every event), else the depth of an abstract instance
    (binutils follows only DW_AT_specification there)."""
    if depth >= _ORIGIN_DEPTH:
        raise ValueError("abstract instance recursion (over 100 deep)")
    for j in range(scan.ev.shape[1]):
        ev, vk, val = (int(x) for x in scan.ev[i, j])
        if ev == 0:
            break
        if ev == EV_NAME:
            if name is None and vk in _STRINGS:
                name = ctx.string(vk, val)
                if plain:
                    linkage = True
        elif ev == EV_LINKAGE:
            if vk in _STRINGS:
                name, linkage = ctx.string(vk, val), True
        elif (ev == EV_SPEC or (ev == EV_ORIGIN and depth < 0)) and vk == V_REF and val:
            got = ctx.die_at(val)
            if got is None:
                raise ValueError(f"reference to {val:#x}: no DIE there")
            tscan, ti, tplain = got
            name, linkage = _resolve(tscan, ti, ctx, tplain, name, linkage,
                                     depth + 1)
    return name, linkage
