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
rotations), so the tree here has its shape.

The replay is plain Python, one comparison per level (~20 a row on 49 K rows), the
comparison of ``--children`` rows written into the descent (:func:`acc_tree_order`: a
function call a comparison cost as much as the rest); it runs only when some tie needs it."""

from __future__ import annotations

from collections.abc import Callable, Sequence


class _Tree:
    """A red-black tree of ids ``[0, n)`` as parallel lists (-1: no node)."""

    def __init__(self, n: int) -> None:
        self.left = [-1] * n
        self.right = [-1] * n
        self.up = [-1] * n
        self.red = [False] * n
        self.root = -1

    def link(self, z: int, parent: int, go_left: bool) -> None:
        """Hang ``z`` under ``parent`` (its left child when ``go_left``) and recolour."""
        self.up[z] = parent
        if parent == -1:
            self.root = z
        elif go_left:
            self.left[parent] = z
        else:
            self.right[parent] = z
        self.red[z] = True
        self._fix_up(z)

    def _rotate(self, x: int, to_left: bool) -> None:
        left, right, up = (self.left, self.right, self.up) if to_left else \
            (self.right, self.left, self.up)
        y = right[x]
        right[x] = b = left[y]
        if b != -1:
            up[b] = x
        p = up[x]
        up[y] = p
        if p == -1:
            self.root = y
        elif left[p] == x:
            left[p] = y
        else:
            right[p] = y
        left[y] = x
        up[x] = y

    def _fix_up(self, z: int) -> None:
        """lib/rbtree.c's ``__rb_insert``: recolour on a red uncle, else rotate."""
        up, red = self.up, self.red
        while True:
            p = up[z]
            if p == -1:
                red[z] = False
                return
            if not red[p]:
                return
            g = up[p]
            on_left = p == self.left[g]
            u = self.right[g] if on_left else self.left[g]
            if u != -1 and red[u]:
                red[u] = red[p] = False
                red[g] = True
                z = g
                continue
            if z == (self.right[p] if on_left else self.left[p]):
                self._rotate(p, on_left)
                p = z
            self._rotate(g, not on_left)
            red[p] = False
            red[g] = True
            return

    def in_order(self) -> list[int]:
        out: list[int] = []
        stack: list[int] = []
        node, left, right = self.root, self.left, self.right
        while stack or node != -1:
            while node != -1:
                stack.append(node)
                node = left[node]
            node = stack.pop()
            out.append(node)
            node = right[node]
        return out


def tree_order(sequence: Sequence[int], goes_left: Callable[[int, int], bool]) -> list[int]:
    """The in-order walk of the red-black tree made by inserting ``sequence`` (distinct
    ids in ``[0, n)``) in turn, an id going left of a node when ``goes_left(id, node)``."""
    return _built(sequence, goes_left).in_order()


def build_tree(sequence: Sequence[int], goes_left: Callable[[int, int], bool]
               ) -> tuple[list[int], list[int], list[bool], int]:
    """The red-black tree of :func:`tree_order`: each id's left and right child (-1:
    none), whether it is red, and the root (-1: empty)."""
    t = _built(sequence, goes_left)
    return t.left, t.right, t.red, t.root


def _built(sequence: Sequence[int], goes_left: Callable[[int, int], bool]) -> _Tree:
    t = _Tree(max(sequence, default=-1) + 1)
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
    t = _Tree(max(sequence, default=-1) + 1)
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
