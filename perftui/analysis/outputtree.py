"""perf's output order of rows when its comparison is not a total order.

perf report puts its hist entries in order by inserting them, one by one, into a
red-black tree (``__hists__insert_output_entry``: an entry goes left of a node when
``hist_entry__sort`` says it sorts first, else right) and printing the tree in order.  The
entries are inserted in the order of the collapsed tree (``hists->entries_collapsed``:
the sort keys' collapse comparisons, a total order).  With ``--children`` and call graphs,
``__hpp__sort_acc`` breaks a tie of children period between two entries *of one thread*
by their call trees' depth, and between entries of two threads not at all (the next
field decides).  That comparison is not transitive, so where such ties are the order is
the tree's: only replaying the insertions, rotations included, gives it.  Linux's
``lib/rbtree.c`` inserts as the textbook does (recolour on a red uncle, else one or two
rotations), so the tree here (:class:`~perftui.symbols.tables.rbtree.RedBlackTree`, the
symbol tables' replay of perf's tree) has its shape.

The replay is plain Python, one comparison per level (~20 a row on 49 K rows), the
comparison of ``--children`` rows written into the descent (:func:`acc_tree_order`: a
function call a comparison cost as much as the rest); it runs only when some tie needs it."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..symbols.tables.rbtree import RedBlackTree


def tree_order(sequence: Sequence[int], goes_left: Callable[[int, int], bool]) -> list[int]:
    """The in-order walk of the red-black tree made by inserting ``sequence`` (distinct
    ids in ``[0, n)``) in turn, an id going left of a node when ``goes_left(id, node)``."""
    return _built(sequence, goes_left).in_order()


def build_tree(sequence: Sequence[int], goes_left: Callable[[int, int], bool]
               ) -> tuple[list[int], list[int], list[bool], int]:
    """The red-black tree of :func:`tree_order`: each id's left and right child (-1:
    none), whether it is red, and the root (-1: empty)."""
    t = _built(sequence, goes_left)
    return t.left, t.right, [t.is_red(i) for i in range(len(t.left))], t.root


def _built(sequence: Sequence[int], goes_left: Callable[[int, int], bool]) -> RedBlackTree:
    t = RedBlackTree(max(sequence, default=-1) + 1)
    left, right = t.left, t.right
    for z in sequence:
        p, node, go = -1, t.root, False
        while node != -1:
            p = node
            go = goes_left(z, node)
            node = left[node] if go else right[node]
        t.link(z, p, go)
    return t


def acc_tree_order(sequence: Sequence[int], child: Sequence[int], thread: Sequence[int],
                   depth: Sequence[int], after: Sequence[int], caller: bool) -> list[int]:
    """:func:`tree_order` with perf's comparison of ``--children`` rows
    (``hist_entry__sort``): the larger children period first; between rows of one thread
    of unequal depth, the deeper first in caller order, the shallower in callee order
    (``__hpp__sort_acc``); else the lower ``after`` rank (the fields after it) first, and
    equal ranks in insertion order."""
    t = RedBlackTree(max(sequence, default=-1) + 1)
    left, right = t.left, t.right
    for z in sequence:
        cz, tz, dz, az = child[z], thread[z], depth[z], after[z]
        p, node, go = -1, t.root, False
        while node != -1:
            p = node
            c = child[node]
            if cz != c:
                go = cz > c
            elif tz == thread[node] and dz != depth[node]:
                go = (dz > depth[node]) if caller else (dz < depth[node])
            else:
                go = az < after[node]
            node = left[node] if go else right[node]
        t.link(z, p, go)
    return t.in_order()
