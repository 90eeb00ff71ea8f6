"""A unit's line program (``.debug_line``), decoded as binutils 2.40's ``decode_line_info``.

The header (DWARF 2-5; the directory and file tables, DWARF 5's with their entry
formats) is read here in Python; the program itself by a compiled loop that emits one row
per ``DW_LNS_copy``, special opcode and ``DW_LNE_end_sequence``: address, op index, the
file register (binutils starts each sequence at file 0 in DWARF 5, 1 before), line
(binutils' ``unsigned int``), end flag.  ``is_stmt`` is not kept (binutils ignores it).
As binutils does, an unknown extended opcode or a zero ``line_range`` makes the whole
program unusable; :data:`MAX_ROWS` bounds the rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .forms import (
    DATA1,
    DATA2,
    DATA4,
    DATA8,
    DATA16,
    LINE_STRP,
    STRING,
    STRP,
    STRX,
    STRX1,
    STRX4,
    UDATA,
    form_value,
    i64,
    sleb,
    uleb,
    word,
)
from .sections import DwarfSections

__all__ = ["MAX_ROWS", "LineHeader", "decode_rows", "read_header"]

MAX_ROWS = 1 << 23
_LNCT_PATH, _LNCT_DIR = 1, 2
OK, BAD, FULL = 0, 1, 2


@dataclass
class LineHeader:
    version: int
    program: int  # the program's first byte
    end: int  # the unit's end
    min_inst: int
    max_ops: int
    line_base: int
    line_range: int
    opcode_base: int
    opcode_lengths: np.ndarray  # int64, index = opcode
    dirs: list[str]
    files: list[tuple[str | None, int]]  # (name, directory index)


def read_header(sections: DwarfSections, off: int, addr_size: int) -> LineHeader:
    """The header of the program at ``off``; ValueError when it does not fit."""
    line = sections["line"]
    raw = sections.raw.get("line", b"")
    big = sections.big
    end = len(line)

    def cstr(pos: int) -> tuple[str, int]:
        z = raw.find(b"\0", pos)
        if z < 0:
            raise ValueError("a string runs past .debug_line")
        return raw[pos:z].decode("utf-8", "backslashreplace"), z + 1

    length, p = word(line, off, end, 4, big)
    osize = 4
    if p >= 0 and length == np.uint64(0xFFFFFFFF):
        length, p = word(line, p, end, 8, big)
        osize = 8
    if p < 0 or int(length) > end - p:
        raise ValueError(f"line program at {off:#x} runs past .debug_line")
    uend = p + int(length)
    ver, p = word(line, p, uend, 2, big)
    if p < 0 or not 2 <= int(ver) <= 5:
        raise ValueError(f"line program at {off:#x}: version {int(ver)} not handled")
    version = int(ver)
    if version >= 5:
        _, p = word(line, p, uend, 1, big)  # address size
        seg, p = word(line, p, uend, 1, big)
        if p < 0 or int(seg) != 0:
            raise ValueError("line program with a segment selector")
    _, p = word(line, p, uend, osize, big)  # header length (binutils reads on instead)
    vals = []
    for size in (1, 1 if version >= 4 else 0, 1, 1, 1, 1):
        if size == 0:
            vals.append(1)
            continue
        v, p = word(line, p, uend, 1, big)
        if p < 0:
            raise ValueError("line program header runs past its unit")
        vals.append(int(v))
    min_inst, max_ops, _default_stmt, lbase, lrange, obase = vals
    if max_ops == 0:
        raise ValueError("line program with 0 operations per instruction")
    lbase = lbase - 256 if lbase >= 128 else lbase
    lengths = np.zeros(max(obase, 1), np.int64)
    lengths[0] = 1
    for i in range(1, obase):
        v, p = word(line, p, uend, 1, big)
        if p < 0:
            raise ValueError("line program header runs past its unit")
        lengths[i] = int(v)
    dirs: list[str] = []
    files: list[tuple[str | None, int]] = []
    if version >= 5:
        for want in ("dirs", "files"):
            nfmt, p = word(line, p, uend, 1, big)
            fmts = []
            for _ in range(int(nfmt)):
                ct_raw, p = uleb(line, p, uend)
                fm_raw, p = uleb(line, p, uend)
                fmts.append((int(ct_raw), int(fm_raw)))
            count, p = uleb(line, p, uend)
            if p < 0 or int(count) > uend - p:
                raise ValueError("line program entry table runs past its unit")
            for _ in range(int(count)):
                name: str | None = None
                d = 0
                for ct, fm in fmts:
                    if fm not in (STRING, LINE_STRP, STRP, UDATA, DATA1, DATA2, DATA4,
                                  DATA8, DATA16, STRX) and not STRX1 <= fm <= STRX4:
                        raise ValueError(f"line table entry form {fm:#x} not handled")
                    kind, v, q = form_value(line, p, uend, fm, 0, addr_size, osize, 5, 0,
                                            big)
                    if q < 0:
                        raise ValueError("line program entry runs past its unit")
                    if ct == _LNCT_PATH:
                        if fm == STRING:
                            name = cstr(p)[0]
                        elif fm == LINE_STRP:
                            name = sections.cstr("line_str", int(v))
                        elif fm == STRP:
                            name = sections.cstr("str", int(v))
                    elif ct == _LNCT_DIR and kind == 1:
                        d = int(v)
                    p = q
                if want == "dirs":
                    dirs.append(name or "")
                else:
                    files.append((name or None, d))
    else:
        while True:
            if p >= uend:
                raise ValueError("line program directory table runs past its unit")
            if not line[p]:
                p += 1
                break
            s, p = cstr(p)
            dirs.append(s)
        while True:
            if p >= uend:
                raise ValueError("line program file table runs past its unit")
            if not line[p]:
                p += 1
                break
            s, p = cstr(p)
            dir_raw, p = uleb(line, p, uend)
            _, p = uleb(line, p, uend)
            _, p = uleb(line, p, uend)
            if p < 0:
                raise ValueError("line program file table runs past its unit")
            files.append((s or None, int(dir_raw)))
    return LineHeader(version, p, uend, min_inst, max_ops, lbase, lrange, obase, lengths,
                      dirs, files)


@njit(cache=True, nogil=True)
def _decode(b: np.ndarray, pos: int, end: int, v5: bool, addr_size: int, big: bool,
            min_inst: int, max_ops: int, line_base: int, line_range: int, opcode_base: int,
            lengths: np.ndarray, addr: np.ndarray, op: np.ndarray, file: np.ndarray,
            line: np.ndarray, last: np.ndarray) -> tuple[int, int]:
    """Rows into the arrays; (rows, status)."""
    n = 0
    minst = np.uint64(min_inst)
    while pos < end:
        a = np.uint64(0)
        opi = 0
        f = 0 if v5 else 1
        ln = 1
        done = False
        while not done and pos < end:
            code = i64(b[pos])
            pos += 1
            emit = False
            if code >= opcode_base:
                adj = code - opcode_base
                if line_range == 0:
                    return n, BAD
                if max_ops == 1:
                    a += np.uint64(adj // line_range) * minst
                else:
                    step = opi + adj // line_range
                    a += np.uint64(step // max_ops) * minst
                    opi = step % max_ops
                ln = (ln + line_base + adj % line_range) & 0xFFFFFFFF
                emit = True
            elif code == 0:  # extended
                ln_ex, pos = uleb(b, pos, end)
                if pos < 0 or pos >= end:
                    return n, BAD
                ex = i64(b[pos])
                pos += 1
                if ex == 1:  # end_sequence
                    done = True
                    emit = True
                elif ex == 2:  # set_address: the unit's address size, whatever the length
                    a, pos = word(b, pos, end, addr_size, big)
                    opi = 0
                elif ex == 3:  # define_file: (files past the header's: "<unknown>")
                    while pos < end and b[pos]:
                        pos += 1
                    pos += 1
                    for _ in range(3):
                        _x, pos = uleb(b, pos, end)
                elif ex == 4:  # set_discriminator
                    _x, pos = uleb(b, pos, end)
                elif ex == 0x80:  # DW_LNE_HP_source_file_correlation
                    pos += i64(ln_ex) - 1
                else:
                    return n, BAD
            elif code == 1:  # copy
                emit = True
            elif code == 2:  # advance_pc
                adv, pos = uleb(b, pos, end)
                if max_ops == 1:
                    a += minst * adv
                else:
                    step = opi + i64(adv)
                    a = np.uint64(step // max_ops) * minst
                    opi = step % max_ops
            elif code == 3:  # advance_line
                d, pos = sleb(b, pos, end)
                ln = (ln + d) & 0xFFFFFFFF
            elif code == 4:  # set_file
                fv, pos = uleb(b, pos, end)
                f = i64(fv)
            elif code == 5:  # set_column
                _x, pos = uleb(b, pos, end)
            elif code == 6 or code == 7:  # negate_stmt, set_basic_block
                pass
            elif code == 8:  # const_add_pc
                if line_range == 0:
                    return n, BAD
                adj = (255 - opcode_base) // line_range
                if max_ops == 1:
                    a += minst * np.uint64(adj)
                else:
                    step = opi + adj
                    a += minst * np.uint64(step // max_ops)
                    opi = step % max_ops
            elif code == 9:  # fixed_advance_pc
                w, pos = word(b, pos, end, 2, big)
                a += w
                opi = 0
            else:  # an unknown standard opcode: its operands skipped
                for _ in range(lengths[code] if code < len(lengths) else 0):
                    _x, pos = uleb(b, pos, end)
            if pos < 0:
                return n, BAD
            if emit:
                if n >= len(addr):
                    return n, FULL
                addr[n] = a
                op[n] = opi
                file[n] = f
                line[n] = ln
                last[n] = done
                n += 1
    return n, OK


def decode_rows(line: np.ndarray, h: LineHeader, addr_size: int, big: bool
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The rows of the program (addr, op index, file register, line, end flag); None when
    binutils would give the unit up (a bad opcode, too many rows)."""
    cap = max(64, (h.end - h.program) // 2)
    cap = min(cap, MAX_ROWS)
    while True:
        addr = np.zeros(cap, np.uint64)
        op = np.zeros(cap, np.int64)
        file = np.zeros(cap, np.int64)
        ln = np.zeros(cap, np.int64)
        last = np.zeros(cap, np.bool_)
        n, status = _decode(line, h.program, h.end, h.version >= 5, addr_size, big,
                            h.min_inst, h.max_ops, h.line_base, h.line_range, h.opcode_base,
                            h.opcode_lengths, addr, op, file, ln, last)
        if status == OK:
            return addr[:n], op[:n], file[:n], ln[:n], last[:n]
        if status == BAD or cap >= MAX_ROWS:
            return None
        cap = min(MAX_ROWS, cap * 4)
