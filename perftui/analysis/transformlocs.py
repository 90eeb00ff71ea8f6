"""The named samples with their stacks transformed (:mod:`.transforms`).

A :class:`~perftui.symbols.naming.samplelocs.SampleLocs` whose stacks are the transformed
ones, so that every output made from the names (the tables, JSON, call graphs, folded
stacks, speedscope, pprof) shows the transformed profile unchanged.

Each distinct stack is transformed once; a sample keeps its stack id, its own location
becomes its transformed stack's innermost frame, and a sample whose stack is dropped is
left out (:func:`transform_samples`' mask).  A collapsed run's frame is a location of its
own, added to a copy of the location table (:func:`with_frames`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ..symbols.naming.locations import Locations
from ..symbols.naming.samplelocs import SampleLocs
from .transforms import Paths, Transform, apply


def with_frames(locs: Locations, frames: Sequence[tuple[int, str, str | None]]
                ) -> tuple[Locations, list[int]]:
    """A copy of ``locs`` with a location per ``(dso, name, section)`` added (the frames
    collapsed runs become), and their ids; ``locs`` itself is left as it was."""
    out = replace(locs, dso=list(locs.dso), name=list(locs.name), start=list(locs.start),
                  end=list(locs.end), section=list(locs.section))
    ids = []
    for dso, name, section in frames:
        ids.append(len(out.dso))
        out.dso.append(dso)
        out.name.append(name)
        out.start.append(0)
        out.end.append(0)
        out.section.append(section)
    return out, ids


def stack_paths(sl: SampleLocs) -> Paths:
    """Every distinct stack of ``sl`` as a path, outermost first (the callchain; the own
    location alone where there is none); without stacks, a path per location (itself)."""
    if sl.stack is None:
        n = len(sl.locs)
        return Paths.of(np.arange(n + 1, dtype=np.int64), np.arange(n, dtype=np.int64))
    st = np.asarray(sl.stack_starts, dtype=np.int64)
    lengths = np.diff(st)
    chain = lengths > 1
    # a path: the chain's entries (after the own location) reversed, or the own location
    plen = np.where(chain, lengths - 1, np.minimum(lengths, 1))
    starts = np.zeros(len(plen) + 1, np.int64)
    np.cumsum(plen, out=starts[1:])
    owner = np.repeat(np.arange(len(plen), dtype=np.int64), plen)
    k = np.arange(int(starts[-1]), dtype=np.int64) - starts[:-1][owner]
    src = np.where(chain[owner], st[owner + 1] - 1 - k, st[owner])
    return Paths.of(starts, np.asarray(sl.stack_locs, dtype=np.int64)[src])


def transform_samples(sl: SampleLocs, transforms: Sequence[Transform],
                      locs: Locations | None = None) -> tuple[SampleLocs, np.ndarray]:
    """``sl`` with its stacks transformed (``locs``: the location table the transforms'
    frames are in, when they add some), and a bool per sample: not dropped."""
    locs = sl.locs if locs is None else locs
    p = apply(stack_paths(sl), transforms)
    lengths = np.diff(p.starts)
    has = p.keep & (lengths > 0)
    inner = np.where(has, p.frames[np.maximum(p.starts[1:] - 1, 0)], -1) \
        if len(p.frames) else np.full(len(p), -1, np.int64)
    if sl.stack is None:
        kept = has[sl.leaf]
        leaf = np.where(kept, inner[sl.leaf], sl.leaf).astype(np.int32)
        return replace(sl, leaf=leaf, locs=locs), kept
    # each stack: its own location (the innermost frame), then the frames innermost first
    slen = np.where(has, lengths + 1, 0)
    starts = np.zeros(len(p) + 1, np.int64)
    np.cumsum(slen, out=starts[1:])
    owner = np.repeat(np.arange(len(p), dtype=np.int64), slen)
    k = np.arange(int(starts[-1]), dtype=np.int64) - starts[:-1][owner]
    src = np.where(k == 0, p.starts[1:][owner] - 1, p.starts[1:][owner] - k)
    stack_locs = p.frames[src].astype(np.int32) if len(src) else np.zeros(0, np.int32)
    kept = has[sl.stack]
    leaf = np.where(kept, inner[sl.stack], sl.leaf).astype(np.int32)
    return replace(sl, leaf=leaf, stack_starts=starts, stack_locs=stack_locs,
                   locs=locs), kept
