"""Where the variable fields after a sample's callchain are, for many samples at once.

DWARF unwinding needs each sample's ``PERF_SAMPLE_REGS_USER`` registers and
``PERF_SAMPLE_STACK_USER`` copy, LBR call stacks its ``PERF_SAMPLE_BRANCH_STACK``.  They
follow the callchain, RAW and branch stack, whose sizes vary per sample, so their positions
are found here with numpy, one attr at a time, each step checked against the record's end
(a crafted size never points outside its record).  Nothing is copied: the positions point
into the record's source.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .constants import BRANCH_COUNTERS, BRANCH_HW_INDEX, Sample
from .index import NO_SOURCE, distinct, gather
from .sample import (
    BranchStack,
    Callchain,
    FixedRun,
    ReadBlock,
    Regs,
    SampleLayout,
    SizedBytes,
    StackUser,
)

if TYPE_CHECKING:
    from .recording import Recording

_MAX_ENTRIES = 1 << 24  # more callchain or branch entries than any record can hold

#: why a sample's user stack cannot be read (``UserStacks.status``)
OK = 0
NO_FIELDS = 1  # its event samples no REGS_USER and STACK_USER
TRUNCATED = 2  # a field runs past the end of the record
NO_REGS = 3  # abi 0: no user registers (a kernel thread)
NO_STACK = 4  # a stack copy of size 0, or dyn_size 0
BAD_DYN_SIZE = 5  # dyn_size larger than the copy (perf: "user stack dump failure")
NO_SOURCE_BYTES = 6  # the record's bytes cannot be read back

STATUS_WORDS = {
    NO_FIELDS: "no user registers or stack sampled",
    TRUNCATED: "user registers or stack past the end of the record",
    NO_REGS: "no user registers (abi 0)",
    NO_STACK: "no user stack copied",
    BAD_DYN_SIZE: "user stack dyn_size larger than the copy",
    NO_SOURCE_BYTES: "record bytes not available",
}


@dataclass
class UserStacks:
    """Per SAMPLE row: the user registers and the stack copy (byte positions in the row's
    source), and the branch stack.  Positions are 0 where there is nothing."""

    src: np.ndarray  # u2 source of each row
    status: np.ndarray  # u1, OK or why not
    abi: np.ndarray  # u8 the REGS_USER abi (0 none, 1 32-bit, 2 64-bit)
    regs_at: np.ndarray  # i8 first register's byte position
    n_regs: np.ndarray  # i8 registers present (popcount of sample_regs_user)
    mask: np.ndarray  # u8 the attr's sample_regs_user
    stack_at: np.ndarray  # i8 first byte of the stack copy
    dyn_size: np.ndarray  # i8 valid bytes of the copy
    branch_nr: np.ndarray  # i8 branch entries (-1: the event samples none)
    branch_at: np.ndarray  # i8 first entry's byte position
    branch_hw_idx: np.ndarray  # i8 hw_idx (-1: none recorded)


def _u64(u8: np.ndarray, at: np.ndarray, dt: np.dtype) -> np.ndarray:
    return gather(u8, at, dt).astype(np.uint64) if len(at) else np.zeros(0, np.uint64)


def user_stacks(rec: Recording, rows: np.ndarray) -> UserStacks:
    """:class:`UserStacks` of SAMPLE index ``rows``."""
    c = rec.columns
    rows = np.asarray(rows, dtype=np.int64)
    n = len(rows)
    out = UserStacks(
        src=c["src"][rows].astype(np.uint16), status=np.full(n, NO_FIELDS, np.uint8),
        abi=np.zeros(n, np.uint64), regs_at=np.zeros(n, np.int64),
        n_regs=np.zeros(n, np.int64), mask=np.zeros(n, np.uint64),
        stack_at=np.zeros(n, np.int64), dyn_size=np.zeros(n, np.int64),
        branch_nr=np.full(n, -1, np.int64), branch_at=np.zeros(n, np.int64),
        branch_hw_idx=np.full(n, -1, np.int64))
    attr = c["attr"][rows]
    pos = c["pos"][rows]
    end = pos + c["size"][rows].astype(np.int64)
    dt = np.dtype(rec.order + "u8")
    dt4 = np.dtype(rec.order + "u4")
    for s in distinct(out.src):
        in_src = out.src == s
        if s == NO_SOURCE or not 0 <= s < len(rec.sources):
            out.status[in_src] = NO_SOURCE_BYTES
            continue
        u8 = np.frombuffer(rec.sources[s].buf, dtype=np.uint8)  # type: ignore[attr-defined]
        for a in distinct(attr[in_src]):
            if not 0 <= a < len(rec.attrs):
                continue
            lay = rec.decoder.sample_layouts[a]
            st = lay.sample_type
            want = st & (Sample.REGS_USER | Sample.STACK_USER | Sample.BRANCH_STACK)
            if not want:
                continue
            sel = np.flatnonzero(in_src & (attr == a) & (end <= len(u8)))
            _walk(lay, u8, dt, dt4, sel, pos[sel] + 8, end[sel], out)
    return out


def _walk(lay: SampleLayout, u8: np.ndarray, dt: np.dtype, dt4: np.dtype, sel: np.ndarray,
          p: np.ndarray, e: np.ndarray, out: UserStacks) -> None:
    """Step over one attr's fields up to STACK_USER, filling ``out`` at ``sel`` (``p``: each
    row's position, moved along; ``e``: its record's end)."""
    attr = lay.attr
    st = lay.sample_type
    ok = np.ones(len(sel), dtype=bool)
    has_stack = bool(st & Sample.REGS_USER and st & Sample.STACK_USER)
    if has_stack:
        out.status[sel] = OK
        out.mask[sel] = np.uint64(attr.sample_regs_user)

    def room(k: np.ndarray, need: int | np.ndarray) -> np.ndarray:
        """Rows (positions in sel) ``k`` whose next ``need`` bytes fit their record."""
        fits: np.ndarray = p[k] + need <= e[k]
        return fits

    def fail(k: np.ndarray) -> None:
        ok[k] = False
        if has_stack:
            out.status[sel[k]] = TRUNCATED

    for step in lay.steps:
        live = np.flatnonzero(ok)
        if not len(live):
            return
        if isinstance(step, FixedRun):
            p[live] += step.st.size
            fail(live[~room(live, 0)])
            continue
        if isinstance(step, ReadBlock):
            times = 8 * (lay.read_enabled + lay.read_running)
            per = 8 * (lay.read_id + lay.read_lost)
            if not lay.read_group:
                block = 8 + times + per
                fail(live[~room(live, block)])
                p[live] += block
                continue
            good = live[room(live, 8 + times)]
            fail(np.setdiff1d(live, good))
            nr = _u64(u8, p[good], dt)
            fits = nr <= np.uint64(_MAX_ENTRIES)
            count = np.where(fits, nr, 0).astype(np.int64)
            fits &= p[good] + 8 + times + count * (8 + per) <= e[good]
            fail(good[~fits])
            good = good[fits]
            p[good] += 8 + times + count[fits] * (8 + per)
            continue
        if isinstance(step, Callchain | BranchStack):
            good = live[room(live, 8)]
            fail(np.setdiff1d(live, good))
            nr = _u64(u8, p[good], dt)
            head = 8
            per = 8
            if isinstance(step, BranchStack):
                bst = attr.branch_sample_type
                head += 8 if bst & BRANCH_HW_INDEX else 0
                per = 24 + (8 if bst & BRANCH_COUNTERS else 0)
            fits = nr <= np.uint64(_MAX_ENTRIES)
            count = np.where(fits, nr, 0).astype(np.int64)
            fits &= p[good] + head + count * per <= e[good]
            fail(good[~fits])
            good, nr = good[fits], count[fits]
            if isinstance(step, BranchStack):
                out.branch_nr[sel[good]] = nr
                if attr.branch_sample_type & BRANCH_HW_INDEX:
                    out.branch_hw_idx[sel[good]] = _u64(u8, p[good] + 8, dt).astype(np.int64)
                out.branch_at[sel[good]] = p[good] + head
            p[good] += head + nr * per
            continue
        if isinstance(step, SizedBytes):
            if step.name != "raw":
                return  # AUX comes after the stack: nothing further is needed
            good = live[room(live, 4)]
            fail(np.setdiff1d(live, good))
            raw = (gather(u8, p[good], dt4).astype(np.int64) if len(good)
                   else np.zeros(0, np.int64))
            fits = p[good] + 4 + raw <= e[good]
            fail(good[~fits])
            p[good[fits]] += 4 + raw[fits]
            continue
        if isinstance(step, Regs):
            if step.name != "regs_user":
                return
            good = live[room(live, 8)]
            fail(np.setdiff1d(live, good))
            abi = _u64(u8, p[good], dt)
            n_regs = int(attr.sample_regs_user).bit_count()
            regs_size = np.where(abi != 0, 8 * n_regs, 0)
            fits = p[good] + 8 + regs_size <= e[good]
            fail(good[~fits])
            good, abi, regs_size = good[fits], abi[fits], regs_size[fits]
            out.abi[sel[good]] = abi
            out.regs_at[sel[good]] = p[good] + 8
            out.n_regs[sel[good]] = np.where(abi != 0, n_regs, 0)
            if has_stack:
                none = good[abi == 0]
                out.status[sel[none]] = NO_REGS
            p[good] += 8 + regs_size
            continue
        if isinstance(step, StackUser):
            good = live[room(live, 8)]
            fail(np.setdiff1d(live, good))
            copied = _u64(u8, p[good], dt)
            left = e[good] - p[good] - 8  # >= 0 here
            # size bytes, then dyn_size (only when size != 0)
            small = np.where(copied <= np.uint64(1 << 32), copied, 1 << 40).astype(np.int64)
            fits = (small == 0) | (small + 8 <= left)
            fail(good[~fits])
            good, stack_size = good[fits], small[fits]
            some = stack_size > 0
            g = good[some]
            dyn = _u64(u8, p[g] + 8 + stack_size[some], dt)
            bad = dyn > stack_size[some].astype(np.uint64)
            stack_rows = sel[g]
            if has_stack:
                keep = out.status[stack_rows] == OK
                out.status[stack_rows[keep & bad]] = BAD_DYN_SIZE
                out.status[stack_rows[keep & (dyn == 0)]] = NO_STACK
                zero = sel[good[~some]]
                out.status[zero[out.status[zero] == OK]] = NO_STACK
            fine = ~bad
            out.stack_at[stack_rows[fine]] = p[g][fine] + 8
            out.dyn_size[stack_rows[fine]] = dyn[fine].astype(np.int64)
            return
        # WEIGHT and later come after the stack: done
        return
