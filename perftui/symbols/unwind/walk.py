"""The compiled walk: each sample's user stack unwound by CFI, perf 6.1's way (its libunwind).

Per sample (:func:`walk_block`), from the sampled registers and the copied stack:

- frame 0 is the sampled program counter; the walk starts with the CFA at the sampled stack
  pointer and every register where the sample has it (libunwind's ``unw_init_remote``); no
  program counter or stack pointer: no frame at all, as perf;
- a step finds the map of ``pc`` (``pc - 1`` after a call: a return address is looked up
  in the call, unless the frame before was a signal frame), its DSO's CFI, the FDE that
  covers it and that FDE's row for the address; computes the CFA (a register, the stack
  pointer reading as the CFA, plus an offset, or an expression); gives each register its
  caller's location (kept, undefined, at CFA+N, CFA+N itself, another register's, or an
  expression's); the caller's ``pc`` is the return address column's value;
- it stops at: an undefined return address or (x86-64) an undefined ``rbp``, the end of the
  ABI's chain; a read outside the copied stack; an address in no map, or in a map without
  CFI; unchanged ``pc`` and CFA; an FDE or expression that cannot be used; the frame limit
  (perf's ``max_stack``, ``kernel.perf_event_max_stack``: 127);
- an address no FDE covers, in a DSO that has CFI, gets libunwind's x86-64 frame-chain
  guess (``rbp`` at most 16 KiB above the CFA: ``[rbp]`` and ``[rbp+8]``);
- every frame after the first is given at ``pc - 1`` (perf's), except the one a signal
  interrupted (the frame before it was a signal frame: libunwind 1.6's
  ``unw_is_signal_frame``), at ``pc``; a zero is left out (perf's ``ips[j] ? entry() : 0``).

Reads are perf's ``access_mem``: a word at ``a`` comes from the copy when ``sp <= a`` and
``a + 8 < sp + dyn_size`` (so not the copy's last word, as perf); anything else fails (perf
would read a file-backed address from the DSO's file: see docs/architecture.md).

A sample whose walk meets a DSO or an FDE not loaded yet stops with :data:`RETRY` and the
need listed (``miss_kind``/``miss_id``); the caller loads them and walks it again.  Nothing
is allocated per sample; the expression evaluator is the one helper handed arrays (PLT
entries and signal frames: rare).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..compiledwords import bswap
from .dwexpr import L_MEM, L_NULL, L_REG, L_VAL, eval_expr

# per-sample outcome (why the walk ended)
DONE = 0  # the end of the chain (undefined return address, or rbp on x86-64)
STACK_END = 1  # a read outside the copied stack
NO_MAP = 2  # an address in no map
NO_CFI = 3  # a map whose DSO has no CFI (or no file)
NO_FDE = 4  # no FDE covers the address (and the frame-chain guess found nothing)
BAD_CFI = 5  # an FDE, row or expression that cannot be used
LOOP = 6  # pc and CFA unchanged
MAX_FRAMES = 7  # the frame limit
NO_START = 8  # no program counter or stack pointer sampled: no frame at all
RETRY = 9  # a DSO or FDE to load first
REGS = 10  # a register the rules read is not in the sample

MISS_DSO = 0
MISS_FDE = 1

# rule kinds and CFA kinds: as cfi.py
_SAME, _UNDEF, _OFFSET, _VAL_OFFSET, _REGISTER, _EXPR, _VAL_EXPR = 0, 1, 2, 3, 4, 5, 6
_CFA_REG, _CFA_EXPR = 0, 1
_GUESS_REACH = np.uint64(0x4000)  # libunwind: rbp at most this far above the CFA


@njit(cache=True, nogil=True, inline="always")
def _loc_value(kind: int, val: np.uint64, regs: np.ndarray, have: np.ndarray, i: int,
               u64: np.ndarray, stk: np.ndarray, at: np.int64, sp0: np.uint64,
               top: np.uint64, dl: np.int64, aligned: bool, big: bool
               ) -> tuple[np.uint64, bool]:
    """(value, readable) of a register's location in sample ``i``: a sampled register
    (L_REG: its column), the value itself (L_VAL), or a word of the stack copy (L_MEM: at
    address ``val``, within perf's ``access_mem`` bounds); L_NULL is not readable."""
    if kind == L_REG:
        c0 = np.int64(val)
        return regs[i, c0], have[i, c0]
    if kind == L_VAL:
        return val, True
    if kind != L_MEM or not (val >= sp0 and val - sp0 < top and np.int64(val - sp0) + 8 < dl):
        return np.uint64(0), False
    p = at + np.int64(val - sp0)
    if aligned and (p & 7) == 0:
        w = u64[p >> 3]
        return (bswap(w) if big else w), True
    w = np.uint64(0)
    for b in range(8):
        bb = 7 - b if not big else b
        w = (w << np.uint64(8)) | np.uint64(stk[p + bb])
    return w, True


@njit(cache=True, nogil=True)
def walk_block(row0: int, regs: np.ndarray, have: np.ndarray, pcs: np.ndarray,
               has_pc: np.ndarray, stk: np.ndarray, st_at: np.ndarray, dyn: np.ndarray,
               big: bool, uobj: np.ndarray, seq: np.ndarray,
               maps: tuple[np.ndarray, ...], dsos: tuple[np.ndarray, np.ndarray],
               cfi: tuple[np.ndarray, ...], rows: tuple[np.ndarray, ...],
               exprs: tuple[np.ndarray, np.ndarray, np.ndarray],
               arch: tuple[int, int, int, int, bool], max_frames: int,
               out: np.ndarray, out_n: int, out_at: np.ndarray, out_cnt: np.ndarray,
               outcome: np.ndarray, stop_dso: np.ndarray, miss_kind: np.ndarray,
               miss_id: np.ndarray, n_miss: int) -> tuple[int, int, int]:
    """Unwind samples ``row0..`` (see the module docstring): each one's frames at
    ``out[out_at[i]:out_at[i] + out_cnt[i]]``, its :data:`outcome` and the DSO it stopped
    in (``stop_dso``, -1: none).  Stops early, before a sample, when ``out`` or the miss
    lists could overflow: returns (next sample, frames used, misses)."""
    bounds, m_start, m_end, reach, born, died, order, alone, m_dso, m_bias = maps
    dso_state, dso_src = dsos
    src_lo, src_hi, fde_start, fde_end, fde_state, fde_lo, fde_hi, fde_signal, fde_ra = cfi
    row_pc, cfa_kind, cfa_reg, cfa_val, rule_kind, rule_val = rows
    code, e_lo, e_hi = exprs
    n_cols, sp_col, fp_col, pc_col, x86 = arch
    n = len(pcs)
    lk = np.zeros(n_cols, np.uint8)
    lv = np.zeros(n_cols, np.uint64)
    nk = np.zeros(n_cols, np.uint8)
    nv = np.zeros(n_cols, np.uint64)
    aligned = stk.ctypes.data % 8 == 0
    u64 = stk[:len(stk) // 8 * 8].view(np.uint64) if aligned else np.zeros(0, np.uint64)
    last = np.int64(-1)
    last_obj = np.int64(-1)
    for i in range(row0, n):
        if out_n + max_frames > len(out) or n_miss + 1 > len(miss_kind):
            return i, out_n, n_miss
        out_at[i] = out_n
        out_cnt[i] = 0
        stop_dso[i] = -1
        if not has_pc[i] or not have[i, sp_col]:
            outcome[i] = NO_START
            continue
        pc = pcs[i]
        sp0 = regs[i, sp_col]
        cfa = sp0
        at = st_at[i]
        dl = dyn[i]
        top = np.uint64(dl)
        for c in range(n_cols):
            lk[c] = L_REG
            lv[c] = np.uint64(c)
        cnt = 0
        if pc != 0:
            out[out_n] = pc
            cnt = 1
        steps = 1
        use_prev = 0
        result = MAX_FRAMES
        obj = uobj[i]
        sq = seq[i]
        while steps < max_frames:
            q = pc - np.uint64(use_prev)
            # -- the map of q (rawsamples' walk: the map found last, else the search)
            m = np.int64(-1)
            if (last >= 0 and obj == last_obj and alone[last] and m_start[last] <= q
                    and q < m_end[last] and born[last] <= sq and sq < died[last]):
                m = np.int64(order[last])
            elif 0 <= obj < len(bounds) - 1:
                lo, hi = bounds[obj], bounds[obj + 1]
                x, y = lo, hi
                while x < y:
                    mid = (x + y) >> 1
                    if m_start[mid] <= q:
                        x = mid + 1
                    else:
                        y = mid
                r = x - 1
                while r >= lo and reach[r] > q:
                    if m_end[r] > q and born[r] <= sq and sq < died[r]:
                        m = np.int64(order[r])
                        last, last_obj = r, obj
                        break
                    r -= 1
            if m < 0:
                result = NO_MAP
                break
            d = m_dso[m]
            if dso_state[d] < 0:
                miss_kind[n_miss] = MISS_DSO
                miss_id[n_miss] = d
                n_miss += 1
                result = RETRY
                break
            if dso_state[d] == 0:
                result = NO_CFI
                stop_dso[i] = d
                break
            va = q - m_bias[m]
            # -- the FDE: .eh_frame first, then .debug_frame (perf's find_proc_info)
            found = np.int64(-1)
            bad = False
            missed = False
            uncovered = False
            for k in range(2):
                s = dso_src[d, k]
                if s < 0:
                    continue
                x, y = src_lo[s], src_hi[s]
                lo0 = x
                while x < y:
                    mid = (x + y) >> 1
                    if fde_start[mid] <= va:
                        x = mid + 1
                    else:
                        y = mid
                j = x - 1
                if j < lo0:
                    uncovered = True
                    continue
                if fde_state[j] == 0:
                    miss_kind[n_miss] = MISS_FDE
                    miss_id[n_miss] = j
                    n_miss += 1
                    missed = True
                    break
                if fde_state[j] == 2:
                    bad = True
                    continue
                if va < fde_end[j]:
                    found = j
                    break
                uncovered = True
            if missed:
                result = RETRY
                break
            prev_pc = pc
            prev_cfa = cfa
            signal = False
            if found >= 0:
                # the row: the last at or before va
                x, y = fde_lo[found], fde_hi[found]
                while x < y:
                    mid = (x + y) >> 1
                    if row_pc[mid] <= va:
                        x = mid + 1
                    else:
                        y = mid
                rr = x - 1
                if rr < fde_lo[found]:
                    result = BAD_CFI
                    stop_dso[i] = d
                    break
                # -- the CFA
                ok = True
                if cfa_kind[rr] == _CFA_REG:
                    reg = cfa_reg[rr]
                    base = cfa
                    if reg != sp_col:
                        base, ok = _loc_value(lk[reg], lv[reg], regs, have, i, u64, stk, at,
                                              sp0, top, dl, aligned, big)
                    new_cfa = base + np.uint64(cfa_val[rr])
                    if not ok:
                        result = REGS if lk[reg] == L_REG else STACK_END
                        break
                elif cfa_kind[rr] == _CFA_EXPR:
                    xi = cfa_val[rr]
                    how, v = eval_expr(code, e_lo[xi], e_hi[xi], np.uint64(0), lk, lv, regs[i],
                                       have[i], cfa, sp_col, stk, at, sp0, dl, big, big)
                    if how != 1:
                        result = BAD_CFI
                        stop_dso[i] = d
                        break
                    new_cfa = v
                else:
                    result = BAD_CFI
                    stop_dso[i] = d
                    break
                # -- the caller's locations (in column order, as libunwind: a register
                # rule reads the column as already updated this step)
                for c in range(n_cols):
                    nk[c] = lk[c]
                    nv[c] = lv[c]
                failed = False
                for c in range(n_cols):
                    rk = rule_kind[rr, c]
                    if rk == _SAME:
                        continue
                    if rk == _UNDEF:
                        nk[c] = L_NULL
                    elif rk == _OFFSET:
                        nk[c] = L_MEM
                        nv[c] = new_cfa + np.uint64(rule_val[rr, c])
                    elif rk == _VAL_OFFSET:
                        nk[c] = L_VAL
                        nv[c] = new_cfa + np.uint64(rule_val[rr, c])
                    elif rk == _REGISTER:
                        src = rule_val[rr, c]
                        nk[c] = nk[src]
                        nv[c] = nv[src]
                    else:
                        xi = rule_val[rr, c]
                        how, v = eval_expr(code, e_lo[xi], e_hi[xi], new_cfa, lk, lv, regs[i],
                                           have[i], cfa, sp_col, stk, at, sp0, dl, big, big)
                        if how == 0 or (how == 2 and v >= np.uint64(n_cols)):
                            failed = True
                            break
                        if rk == _EXPR:
                            nk[c] = L_MEM if how == 1 else L_REG
                            nv[c] = v
                        else:
                            nk[c] = L_VAL
                            nv[c] = v
                if failed:
                    result = BAD_CFI
                    stop_dso[i] = d
                    break
                for c in range(n_cols):
                    lk[c] = nk[c]
                    lv[c] = nv[c]
                cfa = new_cfa
                ra = fde_ra[found]
                signal = fde_signal[found] != 0
            else:
                if bad:
                    result = BAD_CFI
                    stop_dso[i] = d
                    break
                if not uncovered or not x86:
                    result = NO_FDE
                    stop_dso[i] = d
                    break
                # -- libunwind's x86-64 frame-chain guess (Gstep.c)
                ra = pc_col
                if lk[fp_col] == L_NULL:
                    result = NO_FDE
                    stop_dso[i] = d
                    break
                rbp, ok = _loc_value(lk[fp_col], lv[fp_col], regs, have, i, u64, stk, at, sp0,
                                     top, dl, aligned, big)
                if not ok:
                    result = STACK_END
                    break
                readable = rbp >= sp0 and rbp - sp0 < top and np.int64(rbp - sp0) + 8 < dl
                if rbp == 0 or not readable or rbp < cfa or rbp - cfa > _GUESS_REACH:
                    result = NO_FDE
                    stop_dso[i] = d
                    break
                for c in range(n_cols):
                    lk[c] = L_NULL
                lk[fp_col] = L_MEM
                lv[fp_col] = rbp
                lk[ra] = L_MEM
                lv[ra] = rbp + np.uint64(8)
                cfa = cfa + np.uint64(16)
            # -- the caller's pc: the return address column's value
            if lk[ra] == L_NULL:
                result = DONE
                break
            kk = lk[ra]
            npc, ok = _loc_value(kk, lv[ra], regs, have, i, u64, stk, at, sp0, top, dl, aligned,
                                 big)
            if not ok:
                result = REGS if kk == L_REG else STACK_END
                break
            pc = npc
            if pc == prev_pc and cfa == prev_cfa:
                result = LOOP
                break
            if x86 and lk[fp_col] == L_NULL:
                result = DONE  # the psABI's end of the chain: rbp undefined
                break
            if not x86 and pc == 0:
                result = DONE  # libunwind aarch64: a zero pc ends the chain
                break
            # libunwind 1.6's unw_is_signal_frame: whether the frame just left was a signal
            # frame (its CIE's 'S'); the frame it interrupted is given, and looked up, at pc
            use_prev = 0 if signal else 1
            f = pc if signal else pc - np.uint64(1)
            if f != 0:
                out[out_n + cnt] = f
                cnt += 1
            steps += 1
        outcome[i] = result
        if result == RETRY:
            continue  # walked again once what it needs is loaded
        out_cnt[i] = cnt
        out_n += cnt
    return n, out_n, n_miss


def read_only(a: np.ndarray) -> np.ndarray:
    """A read-only view: the stack copies are always handed so (a record's mapped bytes are
    read-only, a spill's are not; numba compiles each kind apart)."""
    v = a.view()
    v.flags.writeable = False
    return v


def compile_now() -> None:
    """Compile :func:`walk_block` (and the expression evaluator) with the types the
    unwinder gives it, so numba keeps them (``make setup``; ~15 s of CPU once)."""
    i8, u8, u1 = np.int64, np.uint64, np.uint8
    one = np.zeros(1, i8)
    maps = (np.zeros(2, i8), np.zeros(0, u8), np.zeros(0, u8), np.zeros(0, u8),
            np.zeros(0, i8), np.zeros(0, i8), np.zeros(0, i8), np.zeros(0, np.bool_),
            np.zeros(0, i8), np.zeros(0, u8))
    cfi = (one, one, np.zeros(0, u8), np.zeros(0, u8), np.zeros(0, u1), np.zeros(0, i8),
           np.zeros(0, i8), np.zeros(0, u1), np.zeros(0, i8))
    rows = (np.zeros(0, u8), np.zeros(0, u1), np.zeros(0, i8), np.zeros(0, i8),
            np.zeros((0, 17), u1), np.zeros((0, 17), i8))
    walk_block(0, np.zeros((1, 17), u8), np.zeros((1, 17), np.bool_), np.zeros(1, u8),
               np.zeros(1, np.bool_), read_only(np.zeros(8, u1)), one, one, False, one, one, maps,
               (np.zeros(1, np.int8), np.zeros((1, 2), i8)), cfi, rows,
               (np.zeros(0, u1), np.zeros(0, i8), np.zeros(0, i8)), (17, 7, 6, 16, True), 127,
               np.zeros(256, u8), 0, one, one.copy(), np.zeros(1, u1), one.copy(),
               np.zeros(1, u1), one.copy(), 0)
