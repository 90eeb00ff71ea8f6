"""One compilation unit's line table, kept and searched as binutils 2.40 keeps it.

perf 6.1 (built without libbfd) asks ``addr2line -i -f`` for an address's source line, so the
rules are binutils' ``bfd/dwarf2.c`` (``add_line_info``, ``sort_line_sequences``,
``lookup_address_in_line_info_table``), copied rather than improved:

* every row the line program emits is kept (``is_stmt`` is ignored); a row at the same
  address, op index and end flag as the row just before it replaces that row; rows that
  come out of address order are inserted where binutils' ``lcl_head`` heuristic puts
  them (an earlier row at an equal address can then win);
* sequences are sorted by start (the longer first on a tie), nested ones dropped and
  overlapping ones trimmed to start where the one before ends;
* an address takes the last row at or below it in its sequence, unless that row ends the
  sequence.

A row's file is the path addr2line prints (``concat_filename``: the name joined to its
directory and, when that is relative, to the compilation directory; ``<unknown>`` for a
bad index).  The rows come from :mod:`.lineprog`; linking and sorting them is compiled
(a unit can hold 10^5 rows).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

import numpy as np
from numba import njit

from .lineprog import LineHeader, decode_rows, read_header
from .sections import DwarfSections

__all__ = ["UnitLines", "concat_filename", "unit_lines"]


@dataclass
class UnitLines:
    """The sorted, trimmed sequences of one unit: ``lookup(addr) -> (file, line)``."""

    seq_lo: np.ndarray  # uint64, ascending, disjoint after trimming
    seq_hi: np.ndarray  # uint64: the address of each sequence's last row
    rows: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]  # addr, file, line, end
    files: list[str | None]

    def lookup(self, addr: int) -> tuple[str | None, int] | None:
        """The row that holds ``addr``: (file, line), file None when the row has none;
        None when no row does.  binutils' two binary searches, step for step (a row
        list out of order answers as binutils' does)."""
        lo, hi = 0, len(self.seq_lo)
        k = -1
        while lo < hi:
            mid = (lo + hi) // 2
            k = mid
            if addr < int(self.seq_lo[mid]):
                hi = mid
            elif addr >= int(self.seq_hi[mid]):
                lo = mid + 1
            else:
                break
        if k < 0 or not int(self.seq_lo[k]) <= addr < int(self.seq_hi[k]):
            return None
        a, f, ln, end = self.rows[k]
        lo, hi = 0, len(a)
        i = -1
        while lo < hi:
            mid = (lo + hi) // 2
            i = mid
            if addr < int(a[mid]):
                hi = mid
            elif mid + 1 < len(a) and addr >= int(a[mid + 1]):
                lo = mid + 1
            else:
                break
        if i < 0 or i + 1 >= len(a) or not int(a[i]) <= addr < int(a[i + 1]) or end[i]:
            return None
        fid = int(f[i])
        return (self.files[fid] if fid >= 0 else None), int(ln[i])


def concat_filename(files: list[tuple[str | None, int]], dirs: list[str],
                    comp_dir: str | None, file: int, v5: bool) -> str:
    """The path binutils makes of a file index (``concat_filename``)."""
    if not v5:
        if file == 0:
            return "<unknown>"
        file -= 1
    if file < 0 or file >= len(files):
        return "<unknown>"
    name, d = files[file]
    if name is None:
        return "<unknown>"
    if posixpath.isabs(name):
        return name
    if not v5:
        d -= 1  # (0 wraps to "no directory", as binutils' unsigned does)
    subdir = dirs[d] if 0 <= d < len(dirs) else None
    dir_name = comp_dir if subdir is None or not posixpath.isabs(subdir) else None
    if dir_name is None:
        dir_name, subdir = subdir, None
    if dir_name is None:
        return name
    return f"{dir_name}/{subdir}/{name}" if subdir is not None else f"{dir_name}/{name}"


@njit(cache=True, nogil=True, inline="always")
def _after(addr: np.ndarray, op: np.ndarray, i: int, j: int) -> bool:  # new_line_sorts_after
    return bool(addr[i] > addr[j] or (addr[i] == addr[j] and op[i] > op[j]))


@njit(cache=True, nogil=True)
def _link(addr: np.ndarray, op: np.ndarray, end: np.ndarray, prev: np.ndarray,
          seq_low: np.ndarray, seq_last: np.ndarray) -> int:
    """binutils' ``add_line_info`` over every row: ``prev`` links each sequence's rows
    newest to oldest; (sequences).  A row that replaces the one before it is unlinked."""
    ns = 0
    lcl = -1
    for info in range(len(addr)):
        prev[info] = -1
        last = seq_last[ns - 1] if ns else -1
        if last >= 0 and addr[last] == addr[info] and op[last] == op[info] \
                and end[last] == end[info]:
            if lcl == last:
                lcl = info
            prev[info] = prev[last]
            seq_last[ns - 1] = info
        elif last < 0 or end[last]:
            seq_low[ns] = addr[info]
            seq_last[ns] = info
            ns += 1
            lcl = info
        elif end[info] or _after(addr, op, info, last):
            prev[info] = last
            seq_last[ns - 1] = info
            if lcl < 0:
                lcl = info
        elif not _after(addr, op, info, lcl) and (
                prev[lcl] < 0 or _after(addr, op, info, prev[lcl])):
            prev[info] = prev[lcl]
            prev[lcl] = info
        else:
            li2 = last
            li1 = prev[li2]
            while li1 >= 0:
                if not _after(addr, op, info, li2) and _after(addr, op, info, li1):
                    break
                li2 = li1
                li1 = prev[li1]
            lcl = li2
            prev[info] = prev[li2]
            prev[li2] = info
            if addr[info] < seq_low[ns - 1]:
                seq_low[ns - 1] = addr[info]
    return ns


@njit(cache=True, nogil=True)
def _chains(prev: np.ndarray, keep_last: np.ndarray, out: np.ndarray,
            starts: np.ndarray) -> int:
    """Each kept sequence's rows, oldest first, into ``out`` (CSR ``starts``)."""
    n = 0
    for s in range(len(keep_last)):
        starts[s] = n
        i = keep_last[s]
        while i >= 0:
            out[n] = i
            n += 1
            i = prev[i]
        # reverse this sequence's part
        lo, hi = starts[s], n - 1
        while lo < hi:
            out[lo], out[hi] = out[hi], out[lo]
            lo += 1
            hi -= 1
    starts[len(keep_last)] = n
    return n


def _sequences(seq_low: np.ndarray, last_addr: np.ndarray, last_op: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``sort_line_sequences``: the kept sequences (their numbers), low and high."""
    n = len(seq_low)
    # binutils lists sequences newest first and numbers them so; the sort is (low
    # ascending, last row's address descending, op index descending, that number)
    number = np.arange(n - 1, -1, -1)
    desc_addr = np.uint64(np.iinfo(np.uint64).max) - last_addr.astype(np.uint64)
    order = np.lexsort((number, -last_op, desc_addr, seq_low))
    keep: list[int] = []
    lo: list[int] = []
    hi: list[int] = []
    last_high = 0
    for s in order.tolist():
        low, high = int(seq_low[s]), int(last_addr[s])
        if keep and low < last_high:
            if high <= last_high:
                continue  # nested: dropped
            low = last_high  # overlapping: trimmed
        last_high = high
        keep.append(s)
        lo.append(low)
        hi.append(high)
    return np.array(keep, np.int64), np.array(lo, np.uint64), np.array(hi, np.uint64)


def unit_lines(sections: DwarfSections, line_offset: int, comp_dir: str | None,
               addr_size: int) -> tuple[UnitLines, LineHeader] | None:
    """The line table at ``line_offset`` of ``.debug_line`` as binutils keeps it, and its
    header; None when binutils would have none (a header or program it cannot read)."""
    line = sections["line"]
    try:
        h = read_header(sections, line_offset, addr_size)
    except ValueError:
        return None
    rows = decode_rows(line, h, addr_size, sections.big)
    if rows is None:
        return None
    addr, op, file, ln, end = rows
    n = len(addr)
    prev = np.zeros(n, np.int64)
    seq_low = np.zeros(n + 1, np.uint64)
    seq_last = np.zeros(n + 1, np.int64)
    ns = _link(addr, op, end, prev, seq_low, seq_last)
    seq_low, seq_last = seq_low[:ns], seq_last[:ns]
    keep, lo, hi = _sequences(seq_low, addr[seq_last], op[seq_last])
    idx = np.zeros(n, np.int64)
    starts = np.zeros(len(keep) + 1, np.int64)
    _chains(prev, seq_last[keep], idx, starts)
    v5 = h.version >= 5
    names: list[str | None] = []
    ids: dict[int, int] = {}
    fid = np.zeros(n, np.int32)
    uf, inv = np.unique(file, return_inverse=True)
    for k, f in enumerate(uf.tolist()):
        path = concat_filename(h.files, h.dirs, comp_dir, int(f), v5)
        ids[k] = len(names)
        names.append(path or None)
    fid[:] = inv
    out = []
    for s in range(len(keep)):
        r = idx[starts[s]:starts[s + 1]]
        out.append((addr[r], fid[r], ln[r], end[r]))
    return UnitLines(lo, hi, out, names), h
