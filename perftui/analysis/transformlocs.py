"""The named samples with their stacks transformed (:mod:`.transforms`).

A :class:`~perftui.symbols.naming.samplelocs.SampleLocs` whose stacks are the transformed
ones, so that every output made from the names (the tables, JSON, call graphs, folded
stacks, speedscope, pprof) shows the transformed profile unchanged.

Each distinct stack is transformed once; a sample keeps its stack id, its own location
becomes its transformed stack's innermost frame, and a sample whose stack is dropped is
left out (:func:`transform_samples`' mask).  A collapsed run's frame is a location of its
own, added to a copy of the location table (:func:`with_frames`).  The browser's groups
are transformed the same way (:func:`transform_groups`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ..symbols.naming.locations import Locations
from ..symbols.naming.samplelocs import SampleLocs
from .samplegroups import SampleGroups
from .stacktree import TrieBuilder, spans
from .transforms import FOCUS_SUBTREE, Paths, Transform, apply, apply_one


def with_frames(locs: Locations, frames: Sequence[tuple[int, str, str | None]],
                upto: int | None = None) -> tuple[Locations, list[int]]:
    """A copy of ``locs`` (its first ``upto`` locations: a live pipe's table grows under
    a store) with a location per ``(dso, name, section)`` added (the frames collapsed runs
    become), and their ids; ``locs`` itself is left as it was.  In a table
    split by source line, a collapsed frame has no line (a run of a library's frames):
    perf's texts of a symbol without one, ``name+0`` and an empty srcfile, as ``report
    --collapse-resource`` names it (the split made after the transforms there)."""
    n = len(locs.dso) if upto is None else upto
    out = replace(locs, dso=locs.dso[:n], name=locs.name[:n], start=locs.start[:n],
                  end=locs.end[:n], section=locs.section[:n],
                  srcline=None if locs.srcline is None else locs.srcline[:n],
                  srcfile=None if locs.srcfile is None else locs.srcfile[:n])
    ids = []
    for dso, name, section in frames:
        ids.append(len(out.dso))
        out.dso.append(dso)
        out.name.append(name)
        out.start.append(0)
        out.end.append(0)
        out.section.append(section)
        if out.srcline is not None and out.srcfile is not None:
            out.srcline.append(f"{name}+0")
            out.srcfile.append("")
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


def transform_groups(st: SampleGroups, transforms: Sequence[Transform],
                     locs: Locations | None = None) -> tuple[SampleGroups, np.ndarray]:
    """The browser's grouped samples with every group's stack transformed (each group
    stays under its thread; ``locs``: the location table the transforms' frames are in),
    and a bool per group: not dropped (a dropped group keeps its thread alone as its
    path, and must weigh nothing: :meth:`~.samplegroups.Selection.restrict`).  A
    ``focus-subtree`` whose path begins with threads keeps those threads' groups."""
    body = Paths.of(st.path_start, st.path_loc)
    keep = np.ones(st.groups, dtype=bool)
    thread = -1 - np.asarray(st.comm, dtype=np.int64)
    for t in transforms:
        if t.kind == FOCUS_SUBTREE and t.path and all(f < 0 for f in t.path[0]):
            keep &= np.isin(thread, np.fromiter(t.path[0], np.int64, len(t.path[0])))
            t = replace(t, path=t.path[1:])
        body = apply_one(body, t)
    keep &= body.keep & (np.diff(body.starts) > 0)
    lengths = np.where(keep, np.diff(body.starts), 0)
    starts = np.zeros(st.groups + 1, np.int64)
    np.cumsum(lengths + 1, out=starts[1:])
    frames = np.empty(int(starts[-1]), np.int64)
    frames[starts[:-1]] = thread
    src = spans(body.starts[:-1][keep], body.starts[1:][keep])
    inside = np.ones(len(frames), dtype=bool)
    inside[starts[:-1]] = False
    frames[inside] = body.frames[src]
    b = TrieBuilder()
    node = b.add(starts, frames)
    # the own location: the innermost frame where the transform changed it
    last_old = st.path_loc[st.path_start[1:] - 1] if len(st.path_loc) else st.leaf
    last_new = np.where(keep, frames[starts[1:] - 1], -1)
    leaf = np.where(keep & (last_new != last_old), last_new, st.leaf)
    out = replace(st, leaf=leaf, node=node, trie=b.trie(),
                  locs=st.locs if locs is None else locs)
    return out, keep
