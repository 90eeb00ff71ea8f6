"""perf's ``--stitch-lbr``, a sample's LBR call stack continued by its thread's earlier samples.

The CPU's LBR holds as many calls as it has registers (``max_branches``, 32 on recent Intel
cores): a deeper stack loses its outermost calls.  perf 6.1 can stitch them back
(tools/perf/util/machine.c ``has_stitched_lbr``): the registers are a ring, and ``hw_idx``
(``PERF_SAMPLE_BRANCH_HW_INDEX``) is the ring position of a sample's newest entry.  Per
thread, in processing order, for each sample with a user part:

- ``cur_base = max_lbr - nr + hw_idx + 1``, the ring position of this sample's oldest entry;
  ``distance = prev.hw_idx - cur_base`` when ``prev.hw_idx > cur_base``, else
  ``max_lbr + prev.hw_idx - cur_base`` (u64 arithmetic), where the previous sample's entry
  ``distance`` would be this one's oldest;
- when ``distance + 1 <= prev.nr`` and at least one entry matches going newer from there
  (the previous sample's ``distance``, ``distance - 1``, ... against this one's
  ``nr - 1``, ``nr - 2``, ...: ``from``, ``to`` and flags alike), the sample is stitched:
  the previous sample's call sites past ``distance`` (its entries ``distance + 1 ..
  prev.nr - 1``, each ``from``) go before the thread's stitched list, which is appended to
  the sample's chain after its own LBR frames;
- a sample not stitched empties the list.

The call sites kept are those the previous sample put in its chain (``prev_lbr_cursor``):
a ``from`` that is a context value was not (perf skips such an entry).  Plain Python, one
pass over the samples: stitching is an option, asked for where a recording is small enough
to be read this way.  Where perftui may differ from perf: the processing order within a
thread is taken as time order (then file order); perf saves the cursor node after each
call site, which for a call site with inlined frames is one of those frames."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...perfdata import Feature, Recording
from ...perfdata.constants import PERF_CONTEXT_MAX

_U64 = 1 << 64


def max_branches(rec: Recording) -> int:
    """The LBR's depth perf reads from the header (``CPU_PMU_CAPS``' ``branches``), 0 when
    the header has none (perf then stitches nothing)."""
    caps = rec.feature(Feature.CPU_PMU_CAPS)
    try:
        return max(0, int(caps.get("branches", 0))) if isinstance(caps, dict) else 0
    except (TypeError, ValueError):
        return 0


@dataclass
class _Thread:
    prev: np.ndarray | None = None  # the previous sample's entries
    prev_hw: int = 0
    #: prev_lbr_cursor, ``max_lbr + 1`` places: the call site each entry put in the chain
    #: (None: none); a dict, as a hostile header's depth allocates nothing
    slots: dict[int, int | None] = field(default_factory=dict)
    stitched: list[int] = field(default_factory=list)  # the list, callee order


def stitch(entries: list[np.ndarray], hw_idx: np.ndarray, tids: np.ndarray,
           order: np.ndarray, valid_upto: np.ndarray, max_lbr: int) -> list[list[int]]:
    """The stitched call sites each sample's chain gets (callee order: innermost first).

    ``entries[k]``: sample ``k``'s branch entries (``from``, ``to``, ``flags``), newest
    first; ``hw_idx``, ``tids``: its ring index and thread; ``order``: the samples in
    processing order; ``valid_upto[k]``: how many of its entries perf walks before an
    unknown context value stops it (``nr`` when none; -1: not even entry 0's ``to``)."""
    out: list[list[int]] = [[] for _ in entries]
    threads: dict[int, _Thread] = {}
    for k in order.tolist():
        ent = entries[k]
        st = threads.get(int(tids[k]))
        if st is None:
            st = threads[int(tids[k])] = _Thread()
        hw = int(hw_idx[k])
        add = _stitched_part(ent, hw, st, max_lbr) if st.prev is not None else None
        if add is not None:
            st.stitched = add + st.stitched
        elif st.stitched:
            st.stitched = []
        st.prev, st.prev_hw = ent, hw
        upto = int(valid_upto[k])
        froms = ent["from"].tolist()
        for i in range(min(max(upto, 0), len(froms), max_lbr + 1)):
            st.slots[i] = froms[i] if froms[i] < PERF_CONTEXT_MAX else None
        if add is not None and upto == len(froms):
            out[k] = list(st.stitched)
    return out


def _stitched_part(ent: np.ndarray, hw: int, st: _Thread, max_lbr: int) -> list[int] | None:
    """``has_stitched_lbr``: the previous sample's call sites this sample lost (None: not
    stitched)."""
    prev = st.prev
    assert prev is not None
    nr, pnr = len(ent), len(prev)
    cur_base = (max_lbr - nr + hw + 1) % _U64
    if st.prev_hw > cur_base:
        distance = st.prev_hw - cur_base
    else:
        distance = (max_lbr + st.prev_hw - cur_base) % _U64
    if distance >= pnr:  # (distance + 1 > nr, its u64 wrap included)
        return None
    same = 0
    i, j = distance, nr - 1
    while i >= 0 and j >= 0 and prev[i] == ent[j]:
        same += 1
        i, j = i - 1, j - 1
    if not same:
        return None
    found = (st.slots.get(i) for i in range(distance + 1, min(pnr, max_lbr + 1)))
    return [s for s in found if s is not None]
