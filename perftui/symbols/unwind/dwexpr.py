"""DWARF location expressions, evaluated for the unwinder (compiled with numba).

CFI rules name a location by an expression now and then: PLT entries' CFA
(``DW_CFA_def_cfa_expression``: the stack pointer plus 8 or 16 by where in the entry the
program counter is), a signal frame's saved registers.  :func:`eval_expr` evaluates one as
libunwind's ``eval_location_expr`` does: a first value pushed (the CFA for a register's rule,
0 for the CFA's own), registers read from their locations (the stack pointer reads as the
CFA), memory only from the copied stack, ``DW_OP_regN`` as a register location.  The ops
count and the stack depth are capped, so a crafted expression ends (failed) instead of
looping.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..dwarf.forms import sleb, uleb

# locations (libunwind's dwarf_loc_t)
L_NULL = 0
L_REG = 1  # the sampled register (value: its column)
L_MEM = 2  # in memory at value
L_VAL = 3  # value itself

MAX_EXPR_OPS = 256
_STACK = 64


@njit(cache=True, nogil=True, inline="always")
def _word(stk: np.ndarray, at: np.int64, big: bool) -> np.uint64:
    w = np.uint64(0)
    if big:
        for b in range(8):
            w = (w << np.uint64(8)) | np.uint64(stk[at + b])
    else:
        for b in range(7, -1, -1):
            w = (w << np.uint64(8)) | np.uint64(stk[at + b])
    return w


@njit(cache=True, nogil=True, inline="always")
def _uleb(code: np.ndarray, p: int, hi: int) -> tuple[np.uint64, int, bool]:
    """An unsigned LEB128 (:func:`~..dwarf.forms.uleb`): (value, next, read)."""
    v, q = uleb(code, p, hi)
    return v, q, q >= 0


@njit(cache=True, nogil=True, inline="always")
def _sleb(code: np.ndarray, p: int, hi: int) -> tuple[np.int64, int, bool]:
    """A signed LEB128 (:func:`~..dwarf.forms.sleb`): (value, next, read)."""
    v, q = sleb(code, p, hi)
    return np.int64(v), q, q >= 0


@njit(cache=True, nogil=True)
def _fixed(code: np.ndarray, p: int, hi: int, n: int, signed: bool, big: bool
           ) -> tuple[np.uint64, int, bool]:
    if p + n > hi:
        return np.uint64(0), p, False
    v = np.uint64(0)
    if big:
        for b in range(n):
            v = (v << np.uint64(8)) | np.uint64(code[p + b])
    else:
        for b in range(n - 1, -1, -1):
            v = (v << np.uint64(8)) | np.uint64(code[p + b])
    if signed and n < 8 and (v >> np.uint64(8 * n - 1)) & np.uint64(1):
        v |= ~np.uint64(0) << np.uint64(8 * n)
    return v, p + n, True


@njit(cache=True, nogil=True)
def _read_reg(col: int, lk: np.ndarray, lv: np.ndarray, regs: np.ndarray, have: np.ndarray,
              cfa: np.uint64, sp_col: int, stk: np.ndarray, st_at: np.int64, sp0: np.uint64,
              dyn: np.int64, big: bool) -> tuple[np.uint64, bool]:
    """``unw_get_reg``: the stack pointer reads as the CFA; another register's location is
    read (the sampled value, memory in the copy, a value)."""
    if col == sp_col:
        return cfa, True
    if col < 0 or col >= len(lk):
        return np.uint64(0), False
    k = lk[col]
    if k == L_REG:
        c = np.int64(lv[col])
        if have[c]:
            return regs[c], True
        return np.uint64(0), False
    if k == L_VAL:
        return lv[col], True
    if k == L_MEM:
        a = lv[col]
        if a >= sp0 and a - sp0 < np.uint64(dyn) and np.int64(a - sp0) + 8 < dyn:
            return _word(stk, st_at + np.int64(a - sp0), big), True
    return np.uint64(0), False


@njit(cache=True, nogil=True)
def eval_expr(code: np.ndarray, lo: int, hi: int, first: np.uint64, lk: np.ndarray,
              lv: np.ndarray, regs: np.ndarray, have: np.ndarray, cfa: np.uint64, sp_col: int,
              stk: np.ndarray, st_at: np.int64, sp0: np.uint64, dyn: np.int64, big: bool,
              code_big: bool) -> tuple[int, np.uint64]:
    """A DWARF location expression (libunwind's ``eval_location_expr``): ``first`` pushed,
    then the ops; (0: failed, 1: a memory location, 2: a register location, value).  At most
    :data:`MAX_EXPR_OPS` ops and :data:`_STACK` values: a crafted one ends, failed."""
    st = np.zeros(_STACK, np.uint64)
    st[0] = first
    n = 1
    p = lo
    steps = 0
    while p < hi:
        steps += 1
        if steps > MAX_EXPR_OPS:
            return 0, np.uint64(0)
        op = code[p]
        p += 1
        if 0x30 <= op <= 0x4F:  # DW_OP_lit0..31
            if n == _STACK:
                return 0, np.uint64(0)
            st[n] = np.uint64(op - 0x30)
            n += 1
            continue
        if 0x50 <= op <= 0x6F:  # DW_OP_reg0..31: a register location (libunwind ends here)
            return 2, np.uint64(op - 0x50)
        if op == 0x90:  # DW_OP_regx
            v, p, ok = _uleb(code, p, hi)
            if not ok or v > np.uint64(255):
                return 0, np.uint64(0)
            return 2, v
        if 0x70 <= op <= 0x8F or op == 0x92:  # DW_OP_breg0..31, DW_OP_bregx
            reg = np.int64(op) - 0x70
            if op == 0x92:
                rv, p, ok = _uleb(code, p, hi)
                if not ok or rv > np.uint64(255):
                    return 0, np.uint64(0)
                reg = np.int64(rv)
            off, p, ok = _sleb(code, p, hi)
            if not ok:
                return 0, np.uint64(0)
            val, ok = _read_reg(int(reg), lk, lv, regs, have, cfa, sp_col, stk, st_at, sp0,
                                dyn, big)
            if not ok or n == _STACK:
                return 0, np.uint64(0)
            st[n] = val + np.uint64(off)
            n += 1
            continue
        if op in (0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x03):
            # const1u, const1s, const2u, const2s, const4u, const4s, const8u, const8s,
            # constu, consts, addr
            if op == 0x10:
                v, p, ok = _uleb(code, p, hi)
            elif op == 0x11:
                sv, p, ok = _sleb(code, p, hi)
                v = np.uint64(sv)
            elif op == 0x03:
                v, p, ok = _fixed(code, p, hi, 8, False, code_big)
            else:
                size = 1 << ((op - 0x08) >> 1)
                v, p, ok = _fixed(code, p, hi, size, (op & 1) == 1, code_big)
            if not ok or n == _STACK:
                return 0, np.uint64(0)
            st[n] = v
            n += 1
            continue
        if op == 0x12:  # dup
            if n < 1 or n == _STACK:
                return 0, np.uint64(0)
            st[n] = st[n - 1]
            n += 1
            continue
        if op == 0x13:  # drop
            if n < 1:
                return 0, np.uint64(0)
            n -= 1
            continue
        if op == 0x14:  # over
            if n < 2 or n == _STACK:
                return 0, np.uint64(0)
            st[n] = st[n - 2]
            n += 1
            continue
        if op == 0x15:  # pick
            if p >= hi:
                return 0, np.uint64(0)
            k = int(code[p])
            p += 1
            if k >= n or n == _STACK:
                return 0, np.uint64(0)
            st[n] = st[n - 1 - k]
            n += 1
            continue
        if op == 0x16:  # swap
            if n < 2:
                return 0, np.uint64(0)
            t = st[n - 1]
            st[n - 1] = st[n - 2]
            st[n - 2] = t
            continue
        if op == 0x17:  # rot
            if n < 3:
                return 0, np.uint64(0)
            t = st[n - 1]
            st[n - 1] = st[n - 2]
            st[n - 2] = st[n - 3]
            st[n - 3] = t
            continue
        if op == 0x06 or op == 0x94:  # deref, deref_size
            if n < 1:
                return 0, np.uint64(0)
            size = 8
            if op == 0x94:
                if p >= hi:
                    return 0, np.uint64(0)
                size = int(code[p])
                p += 1
                if size not in (1, 2, 4, 8):
                    return 0, np.uint64(0)
            a = st[n - 1]
            if not (a >= sp0 and a - sp0 < np.uint64(dyn) and np.int64(a - sp0) + 8 < dyn):
                return 0, np.uint64(0)  # perf reads only the copy (or a DSO file)
            w = _word(stk, st_at + np.int64(a - sp0), big)
            if size < 8:
                if big:
                    w >>= np.uint64(64 - 8 * size)
                w &= (np.uint64(1) << np.uint64(8 * size)) - np.uint64(1)
            st[n - 1] = w
            continue
        if op == 0x23:  # plus_uconst
            v, p, ok = _uleb(code, p, hi)
            if not ok or n < 1:
                return 0, np.uint64(0)
            st[n - 1] += v
            continue
        if op in (0x19, 0x1F, 0x20):  # abs, neg, not
            if n < 1:
                return 0, np.uint64(0)
            x = st[n - 1]
            if op == 0x19:
                if np.int64(x) < 0:
                    x = np.uint64(0) - x
            elif op == 0x1F:
                x = np.uint64(0) - x
            else:
                x = ~x
            st[n - 1] = x
            continue
        if op in (0x1A, 0x1B, 0x1C, 0x1D, 0x1E, 0x21, 0x22, 0x24, 0x25, 0x26, 0x27,
                  0x29, 0x2A, 0x2B, 0x2C, 0x2D, 0x2E):
            # and div minus mod mul or plus shl shr shra xor eq ge gt le lt ne
            if n < 2:
                return 0, np.uint64(0)
            b = st[n - 1]
            a = st[n - 2]
            n -= 1
            r = np.uint64(0)
            if op == 0x1A:
                r = a & b
            elif op == 0x1B:
                if b == 0:
                    return 0, np.uint64(0)
                r = np.uint64(np.int64(a) // np.int64(b)) if np.int64(b) != -1 else \
                    np.uint64(0) - a
            elif op == 0x1C:
                r = a - b
            elif op == 0x1D:
                if b == 0:
                    return 0, np.uint64(0)
                r = a % b
            elif op == 0x1E:
                r = a * b
            elif op == 0x21:
                r = a | b
            elif op == 0x22:
                r = a + b
            elif op == 0x24:
                r = a << b if b < np.uint64(64) else np.uint64(0)
            elif op == 0x25:
                r = a >> b if b < np.uint64(64) else np.uint64(0)
            elif op == 0x26:
                s = b if b < np.uint64(63) else np.uint64(63)
                r = np.uint64(np.int64(a) >> np.int64(s))
            elif op == 0x27:
                r = a ^ b
            elif op == 0x29:
                r = np.uint64(1) if a == b else np.uint64(0)
            elif op == 0x2A:
                r = np.uint64(1) if np.int64(a) >= np.int64(b) else np.uint64(0)
            elif op == 0x2B:
                r = np.uint64(1) if np.int64(a) > np.int64(b) else np.uint64(0)
            elif op == 0x2C:
                r = np.uint64(1) if np.int64(a) <= np.int64(b) else np.uint64(0)
            elif op == 0x2D:
                r = np.uint64(1) if np.int64(a) < np.int64(b) else np.uint64(0)
            else:
                r = np.uint64(1) if a != b else np.uint64(0)
            st[n - 1] = r
            continue
        if op == 0x2F or op == 0x28:  # skip, bra
            if p + 2 > hi:
                return 0, np.uint64(0)
            b0, b1 = np.uint16(code[p]), np.uint16(code[p + 1])
            if code_big:
                b0, b1 = b1, b0
            d = np.int64(np.int16(b0 | (b1 << np.uint16(8))))
            p += 2
            take = True
            if op == 0x28:
                if n < 1:
                    return 0, np.uint64(0)
                n -= 1
                take = st[n] != 0
            if take:
                q = p + d
                if q < lo or q > hi:
                    return 0, np.uint64(0)
                p = int(q)
            continue
        if op == 0x96:  # nop
            continue
        return 0, np.uint64(0)  # anything else: not an unwinding expression
    if n < 1:
        return 0, np.uint64(0)
    return 1, st[n - 1]
