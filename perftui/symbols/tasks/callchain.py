"""The cpumode of each callchain entry, as perf 6.1 walks a sample's callchain.

machine.c ``thread__resolve_callchain_sample`` starts in user mode and lets each context
marker switch the mode of the entries after it: ``PERF_CONTEXT_KERNEL`` to kernel,
``PERF_CONTEXT_USER`` to user, ``PERF_CONTEXT_HV`` to hypervisor (no map).  Any other marker
(the guest ones, the 2025 ``PERF_CONTEXT_USER_DEFERRED``) is "invalid callchain context" to
perf 6.1: it drops the whole chain (``perf script`` prints no frames for that sample).
Markers themselves are not frames.  ``perf script`` also stops after ``--max-stack`` frames
(default ``kernel.perf_event_max_stack``, 127): that limit is the caller's to apply.
"""

from __future__ import annotations

import numpy as np

from ...perfdata import Recording, Sample
from ...perfdata.constants import CONTEXT_KERNEL, CONTEXT_USER, PERF_CONTEXT_MAX, Misc
from ...perfdata.index import NO_SOURCE, distinct, gather
from ...perfdata.sample import SampleLayout
from ..unwind.overlay import UNWOUND_SOURCE, overlay_of

CONTEXT_HV = 2**64 - 32
MARKER = 255  # cpumode given to the marker entries themselves


def chain_cpumodes(flat: np.ndarray, starts: np.ndarray, tails: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(cpumode per entry, ok per chain) for callchains concatenated in ``flat`` (u64), chain
    ``k`` starting at ``starts[k]`` (ascending; it ends where the next starts).

    Entries get ``Misc.USER``/``Misc.KERNEL``/``Misc.HYPERVISOR``, markers :data:`MARKER`;
    ``ok`` is False for a chain perf 6.1 discards (an unknown context marker).  ``tails``:
    per chain, how many of its last entries are unwound user frames (:func:`chain_tails`),
    addresses whatever their value (perf's ``unwind_entry`` never reads a frame as a
    marker: a return address of -1 is a frame in no map)."""
    flat = np.asarray(flat, dtype=np.uint64)
    starts = np.asarray(starts, dtype=np.int64)
    n = len(flat)
    modes = np.full(n, Misc.USER, dtype=np.uint8)
    ok = np.ones(len(starts), dtype=bool)
    if not n:
        return modes, ok
    marker = flat >= np.uint64(PERF_CONTEXT_MAX)
    if tails is not None and np.any(tails):
        ends = np.r_[starts[1:], n]
        marker &= ~_in_tails(ends, np.asarray(tails, np.int64), n)
    mode_at = np.full(n, Misc.USER, dtype=np.uint8)
    mode_at[flat == np.uint64(CONTEXT_KERNEL)] = Misc.KERNEL
    mode_at[flat == np.uint64(CONTEXT_HV)] = Misc.HYPERVISOR
    known = ((flat == np.uint64(CONTEXT_KERNEL)) | (flat == np.uint64(CONTEXT_USER))
             | (flat == np.uint64(CONTEXT_HV)))
    anchor = np.full(n, -1, dtype=np.int64)
    first = starts[starts < n]
    anchor[first] = first
    anchor[marker] = np.nonzero(marker)[0]
    last = np.maximum.accumulate(anchor)
    modes = np.where(marker, MARKER, mode_at[np.maximum(last, 0)]).astype(np.uint8)
    bad = marker & ~known
    if bad.any():
        chain_of = np.searchsorted(starts, np.nonzero(bad)[0], side="right") - 1
        ok[chain_of] = False
    return modes, ok


def frame_levels(sample_kernel: np.ndarray, counts: np.ndarray, kernel: np.ndarray,
                 mapped: np.ndarray) -> np.ndarray:
    """The level (True: ``[k]``) perf's ``--children`` gives each frame of the samples'
    callchains (``counts`` frames each, concatenated, leaf first; ``kernel``: a kernel-mode
    frame, ``mapped``: a map covers it) where no map covers it.

    perf walks a chain outermost first (``--children`` sets ORDER_CALLER) and
    ``fill_callchain_info`` leaves the iterator's level as it was for an address in no
    map: the level of the nearest frame outside it that has one (a kernel frame's ``[k]``,
    a user frame's ``[.]``), else the sample's own.  A kernel frame counts as mapped
    (perf's kernel map covers everything kallsyms names)."""
    counts = np.asarray(counts, dtype=np.int64)
    n = len(kernel)
    if not n:
        return np.zeros(0, dtype=bool)
    chain = np.repeat(np.arange(len(counts)), counts)
    ends = np.cumsum(counts)[chain]
    pos = np.where(np.asarray(kernel, bool) | np.asarray(mapped, bool), np.arange(n), n)
    after = np.full(n, n, dtype=np.int64)  # the first setting frame outside each one
    after[:-1] = np.minimum.accumulate(pos[::-1])[::-1][1:]
    inside = after < ends
    return np.where(inside, np.asarray(kernel, bool)[np.minimum(after, n - 1)],
                    np.asarray(sample_kernel, bool)[chain])


def _read_block_size(layout: SampleLayout, u8: np.ndarray, at: np.ndarray, dt: np.dtype
                     ) -> np.ndarray:
    """Bytes of the READ block starting at each position (variable for group reads)."""
    if not layout.sample_type & Sample.READ:
        return np.zeros(len(at), dtype=np.int64)
    times = 8 * (layout.read_enabled + layout.read_running)
    if not layout.read_group:
        return np.full(len(at), 8 + times + 8 * (layout.read_id + layout.read_lost),
                       dtype=np.int64)
    nr = gather(u8, at, dt).astype(np.int64)
    per = 8 * (1 + layout.read_id + layout.read_lost)
    return 8 + times + np.minimum(nr, 1 << 16) * per


def record_chain_spans(rec: Recording, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                 np.ndarray]:
    """(source, byte position of the first entry, count) of SAMPLE rows' callchains in their
    sources' buffers.  Rows without a callchain (or whose chain runs past the record, which
    perf rejects) get count 0 (and position 0).  The chains as the records hold them
    (:func:`callchain_spans` gives perf's joined ones)."""
    c = rec.columns
    rows = np.asarray(rows, dtype=np.int64)
    counts = np.zeros(len(rows), dtype=np.int64)
    at_first = np.zeros(len(rows), dtype=np.int64)
    src = c["src"][rows]
    attr = c["attr"][rows]
    pos = c["pos"][rows]
    size = c["size"][rows].astype(np.int64)
    dt = np.dtype(rec.order + "u8")
    for s in distinct(src):
        if s == NO_SOURCE:
            continue
        u8 = source_bytes(rec, s)
        for a in distinct(attr[src == s]):
            if not 0 <= a < len(rec.attrs):
                continue
            lay = rec.decoder.sample_layouts[a]
            if not lay.sample_type & Sample.CALLCHAIN:
                continue
            sel = np.nonzero((src == s) & (attr == a) & (size >= 8 + lay.fixed_size + 8))[0]
            start = pos[sel] + 8 + lay.fixed_size
            start += _read_block_size(lay, u8, start, dt)
            fits = start + 8 <= pos[sel] + size[sel]
            sel, start = sel[fits], start[fits]
            nr = gather(u8, start, dt).astype(np.uint64)
            room = ((pos[sel] + size[sel] - start - 8) // 8).astype(np.uint64)
            ok = nr <= room
            counts[sel[ok]] = nr[ok].astype(np.int64)
            at_first[sel[ok]] = start[ok] + 8
    return src, at_first, counts


def _in_tails(ends: np.ndarray, tails: np.ndarray, n: int) -> np.ndarray:
    """Whether each of ``n`` concatenated entries is among the last ``tails[k]`` of its
    chain (chain ``k`` ending before ``ends[k]``)."""
    mark = np.zeros(n + 1, np.int64)
    np.add.at(mark, ends - tails, 1)
    np.add.at(mark, ends, -1)
    return np.cumsum(mark)[:n] > 0


def chain_tails(rec: Recording, rows: np.ndarray, src: np.ndarray, counts: np.ndarray
                ) -> np.ndarray:
    """Per SAMPLE row (``src``, ``counts``: its :func:`callchain_spans`), how many of its
    chain's last entries are unwound user frames (behind the joined chain's
    ``PERF_CONTEXT_USER``; 0 for a record's own chain and for an LBR one, whose context values
    perf reads as such)."""
    out = np.zeros(len(rows), np.int64)
    hit = np.flatnonzero(src == UNWOUND_SOURCE)
    ov = overlay_of(rec)
    if len(hit) and ov is not None:
        hit = hit[~ov.is_lbr(np.asarray(rows, np.int64)[hit])]
    if len(hit):
        own = record_chain_spans(rec, np.asarray(rows, np.int64)[hit])[2]
        out[hit] = np.maximum(counts[hit] - own - 1, 0)
    return out


def callchain_spans(rec: Recording, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                 np.ndarray]:
    """(source, byte position of the first entry, count) of SAMPLE rows' callchains in their
    sources' buffers (:func:`record_chain_spans`), except that a sample whose user stack was
    unwound (:mod:`..unwind.overlay`) is given its joined chain, perf's: the record's part,
    then the unwound frames."""
    src, at_first, counts = record_chain_spans(rec, rows)
    ov = overlay_of(rec)
    if ov is not None and len(ov.rows) and len(rows):  # unwound: the joined chains instead
        hit, at, count = ov.spans(rows)
        if hit.any():
            src = src.copy()
            src[hit] = UNWOUND_SOURCE
            at_first[hit] = at[hit]
            counts[hit] = count[hit]
    return src, at_first, counts


def source_bytes(rec: Recording, s: int) -> np.ndarray:
    """The bytes of source ``s`` of a recording, as a uint8 array (no copy); the joined
    chains of unwound samples for :data:`~..unwind.overlay.UNWOUND_SOURCE`."""
    if s == UNWOUND_SOURCE:
        ov = overlay_of(rec)
        if ov is None:
            raise ValueError("no unwound callchains")
        return ov.buf
    return np.frombuffer(rec.sources[s].buf, dtype=np.uint8)  # type: ignore[attr-defined]


def sample_callchains(rec: Recording, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                 np.ndarray]:
    """(flat u64 entries, start per row, count per row) of SAMPLE rows' callchains, gathered
    with numpy.  Rows without a callchain (or whose chain runs past the record, which perf
    rejects) get count 0."""
    src, at_first, counts = callchain_spans(rec, rows)
    flat, starts = chain_words(rec, src, at_first, counts)
    return flat, starts, counts


def chain_words(rec: Recording, src: np.ndarray, at_first: np.ndarray, counts: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """(flat u64 entries, start per row) of the callchains at spans ``src``, ``at_first``,
    ``counts`` (:func:`callchain_spans` or :func:`record_chain_spans`)."""
    starts = np.zeros(len(counts), dtype=np.int64)
    if len(counts):
        starts[1:] = np.cumsum(counts)[:-1]
    flat = np.zeros(int(counts.sum()), dtype=np.uint64)
    if not len(flat):
        return flat, starts
    dt = np.dtype(rec.order + "u8")
    # entry j of row k sits at at_first[k] + 8 * (j - starts[k])
    at = np.arange(len(flat), dtype=np.int64) * 8
    at += np.repeat(at_first - 8 * starts, counts)
    used = distinct(src[counts > 0])
    if len(used) == 1:
        flat[:] = gather(source_bytes(rec, used[0]), at, dt)
        return flat, starts
    row_src = np.repeat(src, counts)
    for s in used:
        m = row_src == s
        flat[m] = gather(source_bytes(rec, s), at[m], dt)
    return flat, starts
