"""What ``addr2line -i -f -e FILE ADDR`` prints, computed from the DWARF (binutils 2.40).

perf 6.1 without libbfd runs that command for inline chains and source lines
(``tools/perf/util/srcline.c``).  :class:`Addr2Line` gives, for an address (objdump's), the
records addr2line prints: the innermost function with the line-table row, then for each
inlined call its caller with the call site; or None where addr2line prints ``??``/``??:0``.

The search is binutils' ``_bfd_dwarf2_find_nearest_line``: the address must lie in an
allocated section of the file; the units already read whose ranges (their own, their
line sequences', their functions') hold it are tried first, in the order they were read;
then the others (``.debug_aranges`` names the likeliest first; then the units' own
ranges, in section order).  A unit answers when its function table (:mod:`.functable`) or
its line table (:mod:`.linetable`) knows the address; a unit without a line table never
does.  (So the padding after a function is named by its unit once that unit was read.)  A
function without a linkage name (C++'s ``main``, a static or ``extern "C"`` function) is
named, on its first look-up only, by the ELF symbol before the address (:mod:`.elffunc`);
from then on by its DWARF name, or by that symbol's when the symbol starts the function.
So, as binutils, an :class:`Addr2Line` answers by the order it was asked in (perf asks
in the order it meets addresses).  Without a line row the file comes from that symbol's
``STT_FILE`` (``crtstuff.c:?``).

Hostile DWARF: a unit that cannot be read answers nothing, with a note; every read is
bounded by its section and the caps of the compiled passes; :data:`MAX_UNITS` bounds the
units read per file.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..code.elfcode import ElfCodeImage
from .abbrev import Abbrevs, read_abbrevs
from .diescan import (
    OK,
    STATUS_TEXT,
    TOP_ADDR_BASE,
    TOP_COMP_DIR,
    TOP_HIGH,
    TOP_HIGH_REL,
    TOP_LANG,
    TOP_LOW,
    TOP_RANGES,
    TOP_STMT,
    TOP_STR_BASE,
    Scan,
    read_one,
    scan_top,
    scan_unit,
)
from .elffunc import ElfFunctionFinder
from .forms import V_ADDR, V_INT, V_LINE_STRP, V_STR_INFO, V_STRP, V_STRX, word
from .functable import PLAIN_LANGS, FunctionTable, UnitContext
from .linetable import UnitLines, unit_lines
from .ranges import read_ranges
from .sections import DwarfSections, aranges, units

__all__ = ["MAX_INLINE", "MAX_UNITS", "Addr2Line", "Record"]

MAX_UNITS = 1 << 16  # units decoded per file at most
MAX_INLINE = 1024  # perf's MAX_INLINE_NEST


@dataclass(frozen=True, slots=True)
class Record:
    """One function/line pair addr2line prints: ``function`` None is ``??``, ``file``
    None is ``??``, ``line`` 0 is ``?`` (``??:0`` only for an address nothing knows)."""

    function: str | None
    file: str | None
    line: int

    def text(self) -> str:
        """The two lines addr2line prints for it."""
        file = self.file if self.file is not None else "??"
        return f"{self.function or '??'}\n{file}:{self.line or '?'}"


@dataclass
class _Unit:
    funcs: FunctionTable | None = None
    lines: UnitLines | None = None
    usable: bool = False


class Addr2Line:
    """``addr2line -i -f`` of one file: ``exe`` is the file addr2line is given, ``debug``
    the one holding its DWARF (the same, or its separate debug file)."""

    def __init__(self, exe: ElfCodeImage, debug: ElfCodeImage | None = None) -> None:
        self.exe = exe
        self.debug = debug or exe
        self.sec = DwarfSections.of(self.debug)
        self.notes: list[str] = list(self.sec.notes)
        self.big = self.sec.big
        self.info = self.sec["info"]
        self.units = units(self.info, self.big)
        if self.units.truncated:
            self.notes.append(f"{self.debug.path}: .debug_info has a unit header that "
                              "does not fit: the units after it not read")
        self._abbrevs: dict[int, Abbrevs] = {}
        self._done: dict[int, _Unit] = {}
        self._tops: dict[int, Scan] = {}
        self._ranges: tuple[np.ndarray, np.ndarray, np.ndarray, list[int]] | None = None
        self._read_order: list[int] = []  # usable units, in the order they were read
        self._known_ranges: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._aranges = self._read_aranges()
        self._exe_finder = ElfFunctionFinder(exe)
        self._dbg_finder = ElfFunctionFinder(self.debug) if self.debug is not exe \
            else self._exe_finder

    @property
    def has_dwarf(self) -> bool:
        return len(self.units.offset) > 0

    # -- units ------------------------------------------------------------------------------
    def _abbrev(self, k: int) -> Abbrevs:
        off = int(self.units.abbrev[k])
        got = self._abbrevs.get(off)
        if got is None:
            got = self._abbrevs[off] = read_abbrevs(self.sec["abbrev"], off)
        return got

    def _args(self, k: int) -> tuple[int, int, int, int, int, int]:
        u = self.units
        return (int(u.die[k]), int(u.end[k]), int(u.offset[k]), int(u.version[k]),
                int(u.addr_size[k]), int(u.offset_size[k]))

    def _top(self, k: int) -> Scan:
        got = self._tops.get(k)
        if got is None:
            die, end, off, ver, asz, osz = self._args(k)
            got = self._tops[k] = scan_top(self.info, die, end, off, ver, asz, osz,
                                           self.big, self._abbrev(k))
        return got

    def _string(self, k: int, kind: int, val: int) -> str | None:
        if kind == V_STR_INFO:
            return self.sec.cstr("info", val)
        if kind == V_STRP:
            return self.sec.cstr("str", val)
        if kind == V_LINE_STRP:
            return self.sec.cstr("line_str", val)
        if kind == V_STRX:
            top = self._top(k).top
            base = int(top[TOP_STR_BASE, 1]) if int(top[TOP_STR_BASE, 0]) else 8
            osz = int(self.units.offset_size[k])
            so = self.sec["str_offsets"]
            v, p = word(so, base + val * osz, len(so), osz, self.big)
            return self.sec.cstr("str", int(v)) if p >= 0 else None
        return None

    def _addr(self, k: int, index: int) -> int | None:
        top = self._top(k).top
        if not int(top[TOP_ADDR_BASE, 0]):
            return None
        asz = int(self.units.addr_size[k])
        da = self.sec["addr"]
        v, p = word(da, int(top[TOP_ADDR_BASE, 1]) + index * asz, len(da), asz, self.big)
        return int(v) if p >= 0 else None

    def _plain(self, k: int) -> bool:
        top = self._top(k).top
        return int(top[TOP_LANG, 0]) == V_INT and int(top[TOP_LANG, 1]) in PLAIN_LANGS

    def _die_at(self, off: int) -> tuple[Scan, int, bool] | None:
        k = self.units.containing(off)
        if k < 0:
            return None
        u = self._done.get(k)
        if u is not None and u.funcs is not None:
            s = u.funcs.scan
            i = int(np.searchsorted(s.off, off))
            if i < len(s.off) and int(s.off[i]) == off:
                return s, i, self._plain(k)
        _die, end, uoff, ver, asz, osz = self._args(k)
        one = read_one(self.info, off, end, uoff, ver, asz, osz, self.big, self._abbrev(k))
        if not len(one.off):
            return None
        return one, 0, self._plain(k)

    def _unit(self, k: int) -> _Unit:
        got = self._done.get(k)
        if got is not None:
            return got
        u = self._done[k] = _Unit()
        if len(self._done) > MAX_UNITS:
            if len(self._done) == MAX_UNITS + 1:
                self.notes.append(f"{self.debug.path}: more than {MAX_UNITS} units asked "
                                  "for: the rest not read")
            return u
        die, end, off, ver, asz, osz = self._args(k)
        if int(self.units.unit_type[k]) not in (1, 3):
            return u  # type, skeleton and split units name no code here
        ab = self._abbrev(k)
        scan = scan_unit(self.info, die, end, off, ver, asz, osz, self.big, ab)
        if scan.status != OK:
            self.notes.append(f"{self.debug.path}: unit at {off:#x}: "
                              f"{STATUS_TEXT.get(scan.status, 'unreadable')} (at "
                              f"{scan.stopped_at:#x}): the rest of the unit not read")
        top = scan.top
        comp_dir = self._string(k, int(top[TOP_COMP_DIR, 0]), int(top[TOP_COMP_DIR, 1]))
        if not int(top[TOP_STMT, 0]):
            return u  # binutils: a unit without a line table is unusable
        stmt = int(top[TOP_STMT, 1])
        lines = unit_lines(self.sec, stmt, comp_dir, asz)
        if lines is None:
            return u
        u.lines, h = lines
        ctx = UnitContext(lambda kind, val: self._string(k, kind, val), self._die_at,
                          self._plain(k), (h.files, h.dirs, h.version >= 5), comp_dir)
        base = int(top[TOP_LOW, 1]) if int(top[TOP_LOW, 0]) in (V_ADDR, V_INT) else 0
        v5 = ver >= 5
        u.funcs = FunctionTable.build(scan, ctx, self.sec["rnglists" if v5 else "ranges"],
                                      v5, asz, self.big, base, lambda i: self._addr(k, i))
        u.usable = True
        self._read_order.append(k)
        self._known_ranges = None
        return u

    # -- which units may hold an address ---------------------------------------------------
    def _read_aranges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(lo, hi, unit index) of ``.debug_aranges``, sorted by lo; None without it."""
        t = aranges(self.sec["aranges"], self.big)
        if not len(t) or not len(self.units.offset):
            return None
        offs = self.units.offset
        k = np.searchsorted(offs, t[:, 2].astype(np.int64), side="right") - 1
        ok = (k >= 0) & (t[:, 2].astype(np.int64) < self.units.end[np.maximum(k, 0)])
        lo = t[ok, 0]
        with np.errstate(over="ignore"):
            hi = lo + t[ok, 1]
        order = np.argsort(lo, kind="stable")
        return lo[order], hi[order], k[ok][order]

    def _unit_ranges(self, k: int) -> list[tuple[int, int]] | None:
        """A unit's own ranges (None: it has none, and only its tables tell)."""
        top = self._top(k).top
        out: list[tuple[int, int]] = []
        base = int(top[TOP_LOW, 1]) if int(top[TOP_LOW, 0]) in (V_ADDR, V_INT) else 0
        if int(top[TOP_RANGES, 0]) == V_INT:
            v5 = int(self.units.version[k]) >= 5
            lo, hi, _ = read_ranges(self.sec["rnglists" if v5 else "ranges"], v5,
                                    int(self.units.addr_size[k]), self.big,
                                    np.array([int(top[TOP_RANGES, 1])]),
                                    np.array([base], np.uint64))
            out += list(zip(lo.tolist(), hi.tolist(), strict=True))
        if int(top[TOP_HIGH, 0]) in (V_ADDR, V_INT) and int(top[TOP_LOW, 0]):
            high = int(top[TOP_HIGH, 1])
            if int(top[TOP_HIGH_REL, 1]):
                high += base
            if high:
                out.append((base, high))
        return out or None

    def _candidates(self, addr: int) -> list[int]:
        if self._aranges is None:
            return []
        lo, hi, who = self._aranges
        k = int(np.searchsorted(lo, np.uint64(addr), side="right"))
        out = []
        for j in range(k - 1, max(-1, k - 64), -1):
            if int(lo[j]) <= addr < int(hi[j]):
                out.append(int(who[j]))
        return sorted(set(out))

    def _range_index(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
        """Every unit's own ranges (lo, hi, unit), and the units without any."""
        if self._ranges is None:
            lo: list[int] = []
            hi: list[int] = []
            who: list[int] = []
            bare: list[int] = []
            for k in range(len(self.units.offset)):
                rng = self._unit_ranges(k)
                if rng is None:
                    bare.append(k)
                    continue
                for a, b in rng:
                    lo.append(a)
                    hi.append(b)
                    who.append(k)
            self._ranges = (np.array(lo, np.uint64), np.array(hi, np.uint64),
                            np.array(who, np.int64), bare)
        return self._ranges

    def _known(self, addr: int) -> list[int]:
        """Units read so far whose ranges hold ``addr``: their own, their line sequences'
        and their functions' (binutils keeps all three in the trie it searches first)."""
        if self._known_ranges is None:
            lo: list[np.ndarray] = [np.zeros(0, np.uint64)]
            hi: list[np.ndarray] = [np.zeros(0, np.uint64)]
            who: list[np.ndarray] = [np.zeros(0, np.int64)]
            for k in self._read_order:
                u = self._done[k]
                parts = [(u.funcs.lo, u.funcs.hi)] if u.funcs is not None else []
                if u.lines is not None:
                    parts.append((u.lines.seq_lo, u.lines.seq_hi))
                for a, b in parts:
                    lo.append(a)
                    hi.append(b)
                    who.append(np.full(len(a), k, np.int64))
            self._known_ranges = (np.concatenate(lo), np.concatenate(hi),
                                  np.concatenate(who))
        lo_a, hi_a, who_a = self._known_ranges
        at = np.uint64(addr)
        hit = set(who_a[(lo_a <= at) & (at < hi_a)].tolist())
        return [k for k in self._read_order if k in hit]

    def _in_units(self, addr: int) -> tuple[_Unit, int, tuple[str | None, int] | None] | None:
        tried: set[int] = set()
        for k in (*self._known(addr), *self._candidates(addr)):
            if k in tried:
                continue
            tried.add(k)
            got = self._in_unit(k, addr)
            if got is not None:
                return got
        lo, hi, who, bare = self._range_index()
        a = np.uint64(addr)
        holds = np.unique(who[(lo <= a) & (a < hi)]).tolist()
        for k in sorted(set(holds) | set(bare)):
            if k in tried:
                continue
            got = self._in_unit(k, addr)
            if got is not None:
                return got
        return None

    def _in_unit(self, k: int, addr: int
                 ) -> tuple[_Unit, int, tuple[str | None, int] | None] | None:
        u = self._unit(k)
        if not u.usable:
            return None
        fi = u.funcs.best(addr) if u.funcs is not None else -1
        line = u.lines.lookup(addr) if u.lines is not None else None
        if fi < 0 and line is None:
            return None
        return u, fi, line

    # -- one address ------------------------------------------------------------------------
    def _debug_section(self, sec: int) -> int:
        """The debug file's section for the exe's section ``sec`` (binutils pairs them by
        position and name)."""
        if self.debug is self.exe:
            return sec
        a, b = self.exe.sections, self.debug.sections
        return sec if sec < len(b) and a[sec].name == b[sec].name else -1

    def records(self, addr: int) -> list[Record] | None:
        """What ``addr2line -i -f`` prints for ``addr`` (None: ``??`` and ``??:0``)."""
        sec = self._exe_finder.section_at(addr)
        if sec < 0:
            return None
        found = self._in_units(addr) if self.has_dwarf else None
        dsec = self._debug_section(sec)
        fun = self._dbg_finder.find(addr, dsec) if dsec >= 0 else None
        if found is None:
            if fun is None:
                return None
            return [Record(fun[0], fun[1], 0)]  # binutils' "found = 2": the symbol only
        unit, fi, line = found
        table = unit.funcs
        file, lineno = line if line is not None else (None, 0)
        if table is not None and fi >= 0:
            fname, linkage = table.name(fi)
        else:
            fname, linkage = None, False
        if fi >= 0 and linkage:
            name = fname
        else:  # the ELF symbol's name (and file, without a line row)
            name = fun[0] if fun is not None else None
            if file is None and fun is not None:
                file = fun[1]
            if fi >= 0 and table is not None:
                if fun is None:
                    name = fname
                # binutils' first look-up: the DWARF name becomes the symbol's when the
                # symbol starts the function, and counts as a linkage name from now on
                table.settle(fi, name if fun is not None and fun[2] == int(table.low[fi])
                             else None)
        out = [Record(name, file, lineno)]
        if table is not None and fi >= 0 and table.is_inlined(fi):
            f = fi
            while table.caller(f) >= 0 and len(out) <= MAX_INLINE:
                caller = table.caller(f)
                cfile, cline = table.call_site(f)
                out.append(Record(table.name(caller)[0], cfile, cline))
                f = caller
        for p in table.problems if table is not None else ():
            if p not in self.notes:
                self.notes.append(f"{self.debug.path}: {p}")
        return out
