"""The browser's call trees over sample groups: top-down (the flame graph), bottom-up, and
a hotspot row's callers and callees; each path is a group's stack or part of it, so the
samples under any node are the groups through it (:meth:`GroupTree.groups_through`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .samplegroups import GroupProfile, Selection
from .stacktree import StackTree, TrieBuilder


@dataclass
class GroupTree:
    """A call tree whose paths are groups' stacks (or parts of them): path ``k`` is group
    ``seq_group[k]``'s and ends at node ``end[k]``."""

    tree: StackTree
    seq_group: np.ndarray
    end: np.ndarray
    groups: int

    def groups_through(self, node: int) -> np.ndarray:
        """Bool per group: one of its paths passes through ``node``."""
        out = np.zeros(self.groups, dtype=bool)
        if node < 0:
            out[self.seq_group] = True
            return out
        d = int(self.tree.trie.depth[node])
        hit = self.tree.trie.lift(self.end, d) == node
        out[self.seq_group[hit]] = True
        return out


def top_down(sel: Selection) -> GroupTree:
    """Every stack, outermost caller first, under its thread's name (the flame graph)."""
    st = sel.store
    tree = st.trie.weigh(st.node, sel.period, sel.count)
    return GroupTree(tree, np.arange(st.groups, dtype=np.int64), st.node, st.groups)


def bottom_up(sel: Selection) -> GroupTree:
    """Every stack from the sampled function to the outermost caller, then the thread."""
    st = sel.store
    live = np.nonzero(sel.count > 0)[0]
    last = st.path_start[live + 1] - 1
    return _paths_tree(sel, live, last, st.path_start[live], up=True, thread=True)


def focus_trees(gp: GroupProfile, r: int) -> tuple[GroupTree, GroupTree]:
    """(callers, callees) of row ``r``: the stacks through it, from its outermost
    occurrence down to the sampled function (callees), and from its innermost occurrence
    up to the thread (callers).  Each tree's roots are the row's own frames."""
    sel = gp.selection
    st = sel.store
    hit = np.nonzero((gp.path_row == r) & (sel.count[st.path_group] > 0))[0]
    g = st.path_group[hit]
    # entries are ordered by group, outermost first
    first_g, first_i = np.unique(g, return_index=True)
    last_i = len(g) - 1 - np.unique(g[::-1], return_index=True)[1]
    first = hit[first_i]
    last = hit[last_i]
    # groups whose own location is the row's but no stack entry is (an unresolved address
    # is keyed differently in the stack): their innermost entry stands for it
    found = np.zeros(st.groups, dtype=bool)
    found[first_g] = True
    own = np.nonzero((gp.row_of_group == r) & ~found)[0]
    if len(own):
        leaf_entry = st.path_start[own + 1] - 1
        first_g = np.concatenate([first_g, own])
        first = np.concatenate([first, leaf_entry])
        last = np.concatenate([last, leaf_entry])
    callees = _paths_tree(sel, first_g, first, st.path_start[first_g + 1] - 1, up=False,
                          thread=False)
    callers = _paths_tree(sel, first_g, last, st.path_start[first_g], up=True, thread=True)
    return callers, callees


def _paths_tree(sel: Selection, groups: np.ndarray, begin: np.ndarray, stop: np.ndarray,
                up: bool, thread: bool) -> GroupTree:
    """The tree of the stack entries ``begin..stop`` (inclusive; going up to callers when
    ``up``) of each of ``groups``, then the thread's name when ``thread``."""
    st = sel.store
    groups = np.asarray(groups, dtype=np.int64)
    n = len(groups)
    span = (begin - stop if up else stop - begin) + 1
    extra = 1 if thread else 0
    lengths = span + extra
    starts = np.zeros(n + 1, np.int64)
    np.cumsum(lengths, out=starts[1:])
    total = int(starts[-1])
    frames = np.empty(total, np.int64)
    within = np.arange(total, dtype=np.int64) - np.repeat(starts[:-1], lengths)
    base = np.repeat(begin, lengths)
    pos = base - within if up else base + within
    in_path = within < np.repeat(span, lengths)
    frames[in_path] = st.path_loc[pos[in_path]]
    if thread:
        frames[starts[1:] - 1] = -1 - st.comm[groups]
    b = TrieBuilder()
    end = b.add(starts, frames)
    tree = b.trie().weigh(end, sel.period[groups], sel.count[groups])
    return GroupTree(tree, groups, end, st.groups)
