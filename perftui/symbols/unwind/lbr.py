"""LBR call stacks (``perf record --call-graph lbr``): a sample's user frames from its branch
stack, joined to the record's kernel chain as perf 6.1 joins them.

``--call-graph lbr`` samples ``PERF_SAMPLE_BRANCH_STACK`` with ``PERF_SAMPLE_BRANCH_CALL_STACK``
beside the callchain: the CPU's LBR then holds the calls not yet returned, newest first
(entry 0: the call into the function the sample is in).  perf 6.1's
``resolve_lbr_callchain_sample`` (tools/perf/util/machine.c), for an event whose
``branch_sample_type`` has ``CALL_STACK``, in its default callee order:

- finds the first ``PERF_CONTEXT_USER`` among the chain's first max-stack (127) entries; a
  chain without one (a kernel thread's) is the record's own;
- keeps the chain up to that marker, the marker included (``lbr_callchain_add_kernel_ip``);
- then entry 0's ``to`` (the leaf function's entry) and each entry's ``from`` (the call sites,
  innermost first), all user addresses (``lbr_callchain_add_lbr_ip``).  The record's own user
  frames after the marker are dropped.

A context value among those words (>= ``PERF_CONTEXT_MAX``): a known one switches the mode as
in any chain (left in the joined chain, :func:`~..tasks.callchain.chain_cpumodes` reads it so);
any other makes perf reset the chain and fall back to the record's own chain, and so does
perftui (the sample keeps its own).  Where perftui differs from perf 6.1: an empty branch stack
(nr 0) gives the kernel part alone, said in a note (perf reads an entry 0 that is not there:
the bytes after the branch stack).  ``--stitch-lbr`` (off by default, as in perf) continues a
chain with the calls its thread's earlier samples saw (:mod:`.lbrstitch`).
"""

from __future__ import annotations

import numpy as np

from ...perfdata import Recording, RecordType, Sample
from ...perfdata.constants import BRANCH_CALL_STACK, CONTEXT_KERNEL, CONTEXT_USER, PERF_CONTEXT_MAX
from ...perfdata.index import distinct, gather
from ...perfdata.userstack import UserStacks, user_stacks
from ..tasks.callchain import CONTEXT_HV, chain_words, record_chain_spans, source_bytes
from .overlay import ChainOverlay, join_ragged, unwinds

MAX_STACK = 127  # perf's default --max-stack (kernel.perf_event_max_stack)
_ENTRY = 24  # from, to, flags


def lbr_attrs(rec: Recording) -> list[int]:
    """The attrs whose samples perf joins from their LBR call stack (those that also carry a
    stack copy are DWARF's: perf record takes one ``--call-graph`` mode)."""
    want = Sample.BRANCH_STACK | Sample.CALLCHAIN
    dwarf = set(unwinds(rec))
    return [a for a, attr in enumerate(rec.attrs)
            if attr.sample_type & want == want and attr.branch_sample_type & BRANCH_CALL_STACK
            and a not in dwarf]


def lbr_overlay(rec: Recording, stitch_lbr: bool = False) -> ChainOverlay:
    """The joined chains of every LBR call-stack sample (``lbr`` set on each), and a note;
    with ``stitch_lbr`` each continued by its thread's earlier samples (perf's
    ``--stitch-lbr``)."""
    attrs = lbr_attrs(rec)
    if not attrs:
        return ChainOverlay.empty()
    rows = np.asarray(rec.rows_of_type(RecordType.SAMPLE), dtype=np.int64)
    rows = rows[np.isin(rec.columns["attr"][rows], np.asarray(attrs))]
    if not len(rows):
        return ChainOverlay.empty()
    dt = np.dtype(rec.order + "u8")
    src, at, cnt = record_chain_spans(rec, rows)
    chain, cstart = chain_words(rec, src, at, cnt)
    # the first PERF_CONTEXT_USER among each chain's first MAX_STACK entries
    within = np.arange(len(chain), dtype=np.int64) - np.repeat(cstart, cnt)
    hit = np.flatnonzero((chain == np.uint64(CONTEXT_USER)) & (within < MAX_STACK))
    owner = np.repeat(np.arange(len(rows)), cnt)[hit]
    first, idx = np.unique(owner, return_index=True)
    user_at = np.full(len(rows), -1, np.int64)
    user_at[first] = within[hit[idx]]
    us = user_stacks(rec, rows)
    nr = us.branch_nr
    joins = (user_at >= 0) & (nr >= 0)
    # the branch words: entry 0's to, then every entry's from
    j = np.flatnonzero(joins)
    nb = np.where(nr[j] > 0, nr[j] + 1, 0)
    bwords = np.zeros(int(nb.sum()), np.uint64)
    bstart = np.cumsum(nb) - nb
    for s in distinct(us.src[j[nb > 0]]):
        sel = np.flatnonzero((us.src[j] == s) & (nb > 0))
        k = nb[sel]
        pos = np.arange(int(k.sum()), dtype=np.int64) - np.repeat(np.cumsum(k) - k, k)
        base = np.repeat(us.branch_at[j[sel]], k)
        # word 0: entry 0's to (8 bytes in); word p >= 1: entry p-1's from
        addr = np.where(pos == 0, base + 8, base + _ENTRY * (pos - 1))
        bwords[np.repeat(bstart[sel], k) + pos] = gather(source_bytes(rec, s), addr, dt)
    # a context value perf does not know in the branch words: perf keeps the record's chain
    marker = bwords >= np.uint64(PERF_CONTEXT_MAX)
    known = ((bwords == np.uint64(CONTEXT_KERNEL)) | (bwords == np.uint64(CONTEXT_USER))
             | (bwords == np.uint64(CONTEXT_HV)))
    bad_word = marker & ~known
    bad = np.zeros(len(j), bool)
    if bad_word.any():
        bad[np.repeat(np.arange(len(j)), nb)[bad_word]] = True
    keep = ~bad
    kernel_n = user_at[j] + 1
    parts = [(_take(chain, cstart[j], kernel_n, keep), kernel_n[keep]),
             (_take(bwords, bstart, nb, keep), nb[keep])]
    stitched = _stitched(rec, rows[j], us, j, nb, bstart, bad_word, keep) if stitch_lbr \
        else None
    if stitched is not None:
        parts.append(stitched[:2])
    counts, words = join_ragged(parts)
    ov = ChainOverlay.of(rows[j[keep]], counts, words.astype(dt).view(np.uint8))
    ov.lbr = np.ones(len(ov.rows), bool)
    ov.notes.append(_note(len(rows), int(np.sum(nr[j[keep]] > 0)), int(np.sum(user_at < 0)),
                          int(np.sum((user_at >= 0) & (nr < 0))),
                          int(np.sum(nr[j[keep]] == 0)), int(bad.sum()),
                          stitched[2] if stitched is not None else None))
    return ov


def _stitched(rec: Recording, rows: np.ndarray, us: UserStacks, j: np.ndarray,
              nb: np.ndarray, bstart: np.ndarray, bad_word: np.ndarray, keep: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, str]:
    """The stitched call sites of the kept samples (words, count each) and what the note
    says; ``rows``: the samples joined (``j`` into ``us``)."""
    from .lbrstitch import max_branches, stitch

    depth = max_branches(rec)
    hw = us.branch_hw_idx[j]
    if depth <= 0 or not len(j) or (hw < 0).all():
        why = ("the header gives no LBR depth (CPU_PMU_CAPS branches)" if depth <= 0
               else "the samples carry no hw_idx (record with PERF_SAMPLE_BRANCH_HW_INDEX)")
        return np.zeros(0, np.uint64), np.zeros(int(keep.sum()), np.int64), \
            f"--stitch-lbr: nothing stitched, as perf: {why}"
    nr = us.branch_nr[j]
    entry = np.dtype([(f, rec.order + "u8") for f in ("from", "to", "flags")])
    entries = []
    for k in range(len(j)):
        buf = rec.sources[int(us.src[j[k]])].buf  # type: ignore[attr-defined]
        entries.append(np.frombuffer(buf, dtype=entry, count=int(nr[k]),
                                     offset=int(us.branch_at[j[k]])))
    # how far perf walks each sample's entries: an unknown context value stops it
    upto = nr.copy()
    owner = np.repeat(np.arange(len(j)), nb)
    at = np.arange(len(owner), dtype=np.int64) - np.repeat(bstart, nb)
    for k, p in zip(owner[bad_word].tolist(), at[bad_word].tolist(), strict=True):
        upto[k] = min(upto[k], p - 1)
    c = rec.columns
    order = np.lexsort((rows, c["time"][rows]))  # a thread's samples by time, then file
    order = order[hw[order] >= 0]  # (perf stitches only an event's samples with hw_idx)
    tails = stitch(entries, hw, c["tid"][rows], order, upto, depth)
    kept = [tails[k] for k in np.flatnonzero(keep).tolist()]
    n = np.array([len(t) for t in kept], np.int64)
    words = np.array([w for t in kept for w in t], np.uint64)
    joined = int(np.sum(n > 0))
    return words, n, (f"--stitch-lbr: {joined} samples continued by their thread's earlier "
                      f"ones (LBR depth {depth})")


def _take(flat: np.ndarray, start: np.ndarray, n: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """The first ``n[k]`` words from ``start[k]`` of each kept ``k``, concatenated."""
    s, c = start[keep], n[keep]
    pos = np.arange(int(c.sum()), dtype=np.int64) - np.repeat(np.cumsum(c) - c, c)
    taken: np.ndarray = flat[np.repeat(s, c) + pos]
    return taken


def _note(total: int, joined: int, kernel: int, missing: int, empty: int, bad: int,
          stitched: str | None) -> str:
    deep = stitched or "as deep as the CPU's LBR; --stitch-lbr continues them"
    head = (f"LBR call stacks: {total} samples, {joined} with their user frames from the "
            f"branch stack ({deep})")
    parts = []
    if kernel:
        parts.append(f"{kernel} with no user part in the callchain (their own chain kept)")
    if missing:
        parts.append(f"{missing} with no readable branch stack (their own chain kept)")
    if empty:
        parts.append(f"{empty} with an empty branch stack (the kernel part alone)")
    if bad:
        parts.append(f"{bad} with a context value in the branch stack (their own chain kept, "
                     "as perf)")
    return head + ("; " + ", ".join(parts) if parts else "")
