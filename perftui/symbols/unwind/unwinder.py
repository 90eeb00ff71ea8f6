"""Every DWARF sample of a recording unwound, and its chain joined as perf joins it.

:class:`Unwinder` takes the samples of the events that sample ``REGS_USER`` and
``STACK_USER`` a block at a time: their registers and stack copies are found with numpy
(:func:`~perftui.perfdata.userstack.user_stacks`), their threads' maps from the thread
model, and :func:`~.walk.walk_block` unwinds them, loading each DSO's CFI and each FDE the
first time a walk needs it and walking those samples again.  The joined chain of a sample
is perf's (``thread__resolve_callchain``: the record's callchain, then the unwound frames
behind ``PERF_CONTEXT_USER``); :meth:`Unwinder.overlay` gives them as a
:class:`~.overlay.ChainOverlay`.  What could not be unwound is counted, by why and by DSO,
for :meth:`Unwinder.notes`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ...perfdata import Recording
from ...perfdata.constants import CONTEXT_USER
from ...perfdata.index import distinct, gather, spans
from ...perfdata.userstack import OK, STATUS_WORDS, UserStacks, user_stacks
from ..naming.rawsamples import alone_maps
from ..tasks.callchain import chain_words, record_chain_spans, source_bytes
from ..tasks.threads import ThreadModel
from . import walk as W
from .arch import PC_SLOT, Arch
from .overlay import join_ragged, unwinds
from .tables import FileFinder, UnwindTables

#: perf's max_stack: kernel.perf_event_max_stack's default
MAX_FRAMES = 127
BLOCK = 1 << 14
_ROUNDS = 4096  # walks of one block at most (each loads at least one DSO or FDE)

_OUTCOME_WORDS = {
    W.STACK_END: "at the end of the copied stack",
    W.NO_MAP: "at an address in no map",
    W.NO_CFI: "in a DSO without CFI",
    W.NO_FDE: "at an address no CFI covers",
    W.BAD_CFI: "at CFI that cannot be used",
    W.LOOP: "where the stack did not move (a loop)",
    W.MAX_FRAMES: f"at {MAX_FRAMES} frames",
    W.NO_START: "without a sampled program counter and stack pointer",
    W.REGS: "at a register the sample does not hold",
}


@dataclass
class Unwound:
    """The unwound frames of a block of samples (CSR) and how each walk ended."""

    rows: np.ndarray
    starts: np.ndarray  # i8, len + 1
    ips: np.ndarray  # u8
    outcome: np.ndarray  # u1; 255: not unwound (see status)
    status: np.ndarray  # u1 user_stacks' status
    stop_dso: np.ndarray  # i8


@dataclass
class _Counts:
    outcome: Counter[int] = field(default_factory=Counter)
    status: Counter[int] = field(default_factory=Counter)
    no_cfi: Counter[int] = field(default_factory=Counter)  # dso -> samples
    bad: Counter[int] = field(default_factory=Counter)
    abi: Counter[int] = field(default_factory=Counter)  # abi (not 64-bit) -> samples
    samples: int = 0


class Unwinder:
    """See the module docstring."""

    def __init__(self, rec: Recording, model: ThreadModel, arch: Arch, finder: FileFinder,
                 max_frames: int = MAX_FRAMES) -> None:
        self.rec = rec
        self.model = model
        self.arch = arch
        self.max_frames = max_frames
        self.tables = UnwindTables(model.maps, arch, finder)
        mt = model.maps
        walk = mt.lookup_arrays()
        bounds, m_start, m_end, _reach, born, died, _order = walk
        self._maps = (*walk, alone_maps(bounds, m_start, m_end, born, died))
        self.counts = _Counts()

    # -- one block ---------------------------------------------------------------------------
    def unwind(self, rows: np.ndarray) -> Unwound:
        """The user frames of SAMPLE ``rows`` (ascending)."""
        rec = self.rec
        rows = np.asarray(rows, dtype=np.int64)
        n = len(rows)
        us = user_stacks(rec, rows)
        outcome = np.full(n, 255, np.uint8)
        stop = np.full(n, -1, np.int64)
        abi64 = (us.status == OK) & (us.abi == 2)
        self.counts.samples += n
        for ab, k in zip(*np.unique(us.abi[(us.status == OK) & (us.abi != 2)],
                                    return_counts=True), strict=True):
            self.counts.abi[int(ab)] += int(k)
        for st, k in zip(*np.unique(us.status[us.status != OK], return_counts=True),
                         strict=True):
            self.counts.status[int(st)] += int(k)
        # each walk's frames, flat, with the samples (of ``rows``) they are of
        parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        lens = np.zeros(n, np.int64)
        todo = np.flatnonzero(abi64)
        if len(todo):
            regs, have, pcs, has_pc = self._registers(us, todo)
            objs = self.model.thread_objects(rows[todo]).astype(np.int64)
            seq = self.model.seq[rows[todo]].astype(np.int64)
            for s in distinct(us.src[todo]):
                g = np.flatnonzero(us.src[todo] == s)
                stk = W.read_only(source_bytes(rec, s))
                at = todo[g]
                flat, cnt, outcome[at], stop[at] = self._walk(
                    regs[g], have[g], pcs[g], has_pc[g], stk, us.stack_at[todo][g],
                    us.dyn_size[todo][g], objs[g], seq[g])
                lens[at] = cnt
                parts.append((at, cnt, flat))
        starts = np.zeros(n + 1, np.int64)
        np.cumsum(lens, out=starts[1:])
        ips = np.zeros(int(starts[-1]), np.uint64)
        for at, cnt, flat in parts:
            ips[spans(starts[at], starts[at] + cnt)] = flat
        done = outcome != 255
        for o, k in zip(*np.unique(outcome[done], return_counts=True), strict=True):
            self.counts.outcome[int(o)] += int(k)
        for d, k in zip(*np.unique(stop[done & (outcome == W.NO_CFI)], return_counts=True),
                        strict=True):
            self.counts.no_cfi[int(d)] += int(k)
        for d, k in zip(*np.unique(stop[done & (outcome == W.BAD_CFI)], return_counts=True),
                        strict=True):
            self.counts.bad[int(d)] += int(k)
        return Unwound(rows, starts, ips.astype(np.uint64), outcome, us.status, stop)

    def _registers(self, us: UserStacks, todo: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per sample of ``todo``: its registers by DWARF column (and whether it has each),
        its program counter."""
        arch = self.arch
        n = len(todo)
        regs = np.zeros((n, arch.n_cols), np.uint64)
        have = np.zeros((n, arch.n_cols), np.bool_)
        pcs = np.zeros(n, np.uint64)
        has_pc = np.zeros(n, np.bool_)
        dt = np.dtype(self.rec.order + "u8")
        src, mask, at = us.src[todo], us.mask[todo], us.regs_at[todo]
        for s in distinct(src):
            u8 = source_bytes(self.rec, s)
            in_s = src == s
            for mk in np.unique(mask[in_s]).tolist():
                sel = np.flatnonzero(in_s & (mask == mk))
                for k, col in enumerate(arch.columns(int(mk)).tolist()):
                    if col == -1:
                        continue
                    vals = gather(u8, at[sel] + 8 * k, dt).astype(np.uint64)
                    if col == PC_SLOT:
                        pcs[sel], has_pc[sel] = vals, True
                        if arch.pc_col >= 0:
                            regs[sel, arch.pc_col], have[sel, arch.pc_col] = vals, True
                    else:
                        regs[sel, col], have[sel, col] = vals, True
        return regs, have, pcs, has_pc

    def _walk(self, regs: np.ndarray, have: np.ndarray, pcs: np.ndarray, has_pc: np.ndarray,
              stk: np.ndarray, st_at: np.ndarray, dyn: np.ndarray, objs: np.ndarray,
              seq: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Walk samples until none needs a DSO or FDE loaded first: (their frames one
        sample after another, the count, outcome and stop DSO of each).  Flat arrays, no
        Python per sample (150 K samples: 0.4 s of a 2.2 s report were such loops)."""
        n = len(pcs)
        r_cnt = np.zeros(n, np.int64)
        r_outcome = np.full(n, W.BAD_CFI, np.uint8)
        r_stop = np.full(n, -1, np.int64)
        walked: list[tuple[np.ndarray, np.ndarray]] = []  # (samples, their frames) a round
        pending = np.arange(n)
        t = self.tables
        a = self.arch
        arch = (a.n_cols, a.sp_col, a.fp_col, a.pc_col, a.name == "x86_64")
        big = self.rec.order == ">"
        maps = (*self._maps, t.m_dso, t.m_bias)
        for _ in range(_ROUNDS):
            p = pending
            m = len(p)
            out = np.zeros(max(m * 16, self.max_frames + 1), np.uint64)
            out_at = np.zeros(m, np.int64)
            out_cnt = np.zeros(m, np.int64)
            outcome = np.zeros(m, np.uint8)
            stop = np.full(m, -1, np.int64)
            miss_kind = np.zeros(max(m, 1), np.uint8)
            miss_id = np.zeros(max(m, 1), np.int64)
            row = out_n = n_miss = 0
            args = (regs[p], have[p], pcs[p], has_pc[p], stk,
                    np.ascontiguousarray(st_at[p]), np.ascontiguousarray(dyn[p]), big,
                    np.ascontiguousarray(objs[p]), np.ascontiguousarray(seq[p]), maps,
                    t.dsos(), t.cfi(), t.rows(), t.exprs(), arch, self.max_frames)
            while row < m:
                row, out_n, n_miss = W.walk_block(row, *args, out, out_n, out_at, out_cnt,
                                                  outcome, stop, miss_kind, miss_id, n_miss)
                if row < m:
                    if out_n + self.max_frames > len(out):
                        out = np.concatenate([out, np.zeros(len(out), np.uint64)])
                    else:
                        miss_kind = np.concatenate([miss_kind, np.zeros_like(miss_kind)])
                        miss_id = np.concatenate([miss_id, np.zeros_like(miss_id)])
            final = outcome != W.RETRY
            fp = p[final]
            r_outcome[fp], r_stop[fp] = outcome[final], stop[final]
            r_cnt[fp] = out_cnt[final]
            walked.append((fp, out[spans(out_at[final], out_at[final] + out_cnt[final])]))
            retry = np.flatnonzero(~final)
            if not len(retry):
                break
            loaded = self._load(miss_kind[:n_miss], miss_id[:n_miss])
            pending = p[retry]
            if not loaded:  # (never: a miss is always something not loaded yet)
                break
            maps = (*self._maps, t.m_dso, t.m_bias)
        starts = np.cumsum(r_cnt) - r_cnt
        flat = np.zeros(int(r_cnt.sum()), np.uint64)
        for fp, frames in walked:
            flat[spans(starts[fp], starts[fp] + r_cnt[fp])] = frames
        return flat, r_cnt, r_outcome, r_stop

    def _load(self, kinds: np.ndarray, ids: np.ndarray) -> int:
        """Load the DSOs and FDEs the walk asked for; how many were."""
        t = self.tables
        done = 0
        for d in np.unique(ids[kinds == W.MISS_DSO]).tolist():
            if t.dso_state[d] < 0:
                t.load_dso(int(d))
                done += 1
        for j in np.unique(ids[kinds == W.MISS_FDE]).tolist():
            if t.fde_state.a[j] == 0:
                t.decode_fde(int(j))
                done += 1
        return done

    # -- the joined chains -------------------------------------------------------------------
    def joined(self, u: Unwound) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows, word counts, words) of the samples with frames: each one's record chain,
        ``PERF_CONTEXT_USER``, its frames (perf's ``thread__resolve_callchain``)."""
        nfr = np.diff(u.starts)
        keep = np.flatnonzero(nfr > 0)
        rows = u.rows[keep]
        src, at, cnt = record_chain_spans(self.rec, rows)
        words, _ = chain_words(self.rec, src, at, cnt)
        f = nfr[keep]
        fr = u.ips  # (the frames of the samples with frames, in order: all of them)
        one = np.ones(len(rows), np.int64)
        total, out = join_ragged([(words, cnt), (np.full(len(rows), CONTEXT_USER, np.uint64), one),
                                  (fr, f)])
        return rows, total, out

    # -- what could not be unwound, in words --------------------------------------------------
    def notes(self) -> list[str]:
        c = self.counts
        if not c.samples:
            return []
        t = self.tables
        ended = c.outcome.get(W.DONE, 0)
        parts = []
        for o, k in sorted(c.outcome.items()):
            if o == W.STACK_END:
                sizes = sorted({self.rec.attrs[a].sample_stack_user for a in unwinds(self.rec)})
                copied = "/".join(str(z) for z in sizes)
                parts.append(f"{k} {_OUTCOME_WORDS[o]} ({copied} bytes a sample; perf record "
                             "--call-graph dwarf,SIZE copies more)")
            elif o in _OUTCOME_WORDS:
                parts.append(f"{k} {_OUTCOME_WORDS[o]}")
        for st, k in sorted(c.status.items()):
            parts.append(f"{k} not unwound ({STATUS_WORDS.get(st, 'unreadable')})")
        for ab, k in sorted(c.abi.items()):
            why = "32-bit user registers" if ab == 1 else f"user registers of abi {ab}"
            parts.append(f"{k} not unwound ({why})")
        head = (f"DWARF unwinding: {c.samples} samples with user stacks, {ended} unwound to "
                "the end of the stack")
        out = [head + ("; stopped: " + ", ".join(parts) if parts else "")]
        for d, k in c.no_cfi.most_common():
            info = t.dso_info.get(d)
            name = t.mt.dsos[d].name
            why = info.problem if info is not None and info.problem else "no CFI"
            why = why[len(name) + 2:] if why.startswith(name + ": ") else why
            out.append(f"DWARF unwinding: {k} samples stopped in {name}: {why}")
        for d, k in c.bad.most_common():
            name = t.mt.dsos[d].name
            nbad = t.bad_fdes.get(d, 0)
            why = f"{nbad} FDEs undecodable" if nbad else \
                "a CFA or register rule that cannot be evaluated"
            out.append(f"DWARF unwinding: {k} samples stopped in {name}: CFI that cannot be "
                       f"used ({why})")
        return out
