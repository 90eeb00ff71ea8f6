"""The named samples with every frame's location split by its source line, for the
``srcline`` and ``srcfile`` sort keys.

Those keys are of a frame's address, not of its symbol: perf keys a row by the srcline
text of its entry's address (6.1's ``sort__srcline_cmp`` is a ``strcmp`` of them), so
two samples of one function on two lines are two rows.  Here each distinct frame
(location, offset, whether it is an unwound stack's inline-chain frame) gets its texts
once (:class:`~perftui.symbols.naming.srclines.SourceLines`), each distinct (location,
srcline, srcfile) becomes a location of a new table (names, dso and range copied, the
texts in :attr:`~perftui.symbols.naming.locations.Locations.srcline`/``srcfile``), and
the stacks are rewritten into it.  Every other key (``sym``, ``dso``) and the call
graphs' frames (by dso and start) see the same symbols as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from ..symbols.naming.locations import Locations
from ..symbols.naming.samplelocs import SampleLocs
from .packing import grouped
from .stacktree import spans

#: the keys that need the split table
SOURCE_KEYS = frozenset({"srcline", "srcfile"})
Texts = Callable[[int, int, int], tuple[str, str]]


def split_by_source(sl: SampleLocs, texts: Texts, unwound: np.ndarray) -> SampleLocs:
    """``sl`` with its locations split by source line (``texts(loc, off, chained)``: a
    frame's srcline and srcfile, ``chained`` -1 or, for a frame of an inline chain, which
    of the chain's frames like it this is; ``unwound``: the index rows whose user stacks
    were unwound from the DWARF, whose callchain frames carry their inline chain's
    lines)."""
    n = len(sl)
    chained = np.isin(sl.rows, np.asarray(unwound, np.int64)) if len(unwound) else \
        np.zeros(n, bool)
    stacked = sl.stack is not None
    s_of = (sl.stack if sl.stack is not None else sl.leaf).astype(np.int64)
    (p_s, p_o, p_c), inv, _first = grouped(
        [s_of, sl.off_stack.astype(np.int64), chained.astype(np.int64)], n)
    if stacked:
        st = np.asarray(sl.stack_starts, np.int64)
        lens = st[p_s + 1] - st[p_s]
        e_loc = np.asarray(sl.stack_locs, np.int64)[spans(st[p_s], st[p_s + 1])]
    else:
        lens = np.ones(len(p_s), np.int64)
        e_loc = p_s
    total = int(lens.sum())
    e_pair = np.repeat(np.arange(len(p_s), dtype=np.int64), lens)
    e_j = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
    ost = np.asarray(sl.off_starts, np.int64)
    o_len = (ost[p_o + 1] - ost[p_o])[e_pair]
    have = e_j < o_len
    e_off = np.zeros(total, np.int64)
    e_off[have] = np.asarray(sl.off_vals, np.int64)[(ost[p_o][e_pair] + e_j)[have]]
    e_chain = (p_c[e_pair] != 0) & (e_j > 0)
    # a chain repeats a frame where a function is inlined into itself (each repeat is its
    # own record): the k-th of a run of equal frames is the chain's k-th record of them
    idx = np.arange(total, dtype=np.int64)
    same = np.zeros(total, bool)
    if total > 1:
        same[1:] = (e_chain[1:] & e_chain[:-1] & (e_loc[1:] == e_loc[:-1])
                    & (e_off[1:] == e_off[:-1]) & (e_pair[1:] == e_pair[:-1]))
    e_rank = idx - np.maximum.accumulate(np.where(same, 0, idx))
    (f_loc, f_off, f_chain, f_rank), f_inv, _f = grouped(
        [e_loc, e_off, e_chain.astype(np.int64), e_rank], total)
    locs = sl.locs
    out = Locations(dsos=locs.dsos, dso_ids=locs.dso_ids, _ids=None, srcline=[], srcfile=[])
    ids: dict[tuple[int, str, str], int] = {}
    f_new = np.empty(len(f_loc), np.int32)
    for k, (lc, of, ch, rk) in enumerate(zip(f_loc.tolist(), f_off.tolist(),
                                             f_chain.tolist(), f_rank.tolist(), strict=True)):
        line, file = texts(lc, of, rk if ch else -1)
        i = ids.get((lc, line, file))
        if i is None:
            i = ids[(lc, line, file)] = len(out.dso)
            out.dso.append(locs.dso[lc])
            out.name.append(locs.name[lc])
            out.start.append(locs.start[lc])
            out.end.append(locs.end[lc])
            out.section.append(locs.section[lc])
            out.srcline.append(line)  # type: ignore[union-attr]
            out.srcfile.append(file)  # type: ignore[union-attr]
            if lc in locs.inlined:
                out.inlined.add(i)
        f_new[k] = i
    e_new = f_new[f_inv]
    starts = np.zeros(len(p_s) + 1, np.int64)
    np.cumsum(lens, out=starts[1:])
    leaf = e_new[starts[:-1]][inv].astype(np.int32)
    if not stacked:
        return replace(sl, leaf=leaf, locs=out)
    return replace(sl, leaf=leaf, stack=inv.astype(np.int32), stack_starts=starts,
                   stack_locs=e_new, locs=out)


#: :func:`origins`' id of a location split from none of the base's (never a frame's id)
NO_ORIGIN = np.iinfo(np.int64).min


def origins(base: Locations, split: Locations) -> np.ndarray:
    """Per location of ``split`` (made from ``base`` by :func:`split_by_source`, or read
    back from the cache), the base location it was split from: the one of the same dso,
    name, range and inlinedness, which are a base location's identity
    (:class:`~perftui.symbols.naming.locations.Locations`); :data:`NO_ORIGIN` for none."""
    inl = base.inlined
    ids = {k: i for i, k in enumerate(zip(base.dso, base.name, base.start, base.end,
                                          (i in inl for i in range(len(base.dso))),
                                          strict=True))}
    sinl = split.inlined
    keys = zip(split.dso, split.name, split.start, split.end,
               (i in sinl for i in range(len(split.dso))), strict=True)
    return np.fromiter((ids.get(k, NO_ORIGIN) for k in keys), np.int64, len(split.dso))
