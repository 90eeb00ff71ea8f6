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

The replay is plain Python: at most one comparison per level, ~17 per row on 50 K rows
(0.2 s measured on this machine's 2 cores); it runs only when some tie needs it."""

from __future__ import annotations

from collections.abc import Callable, Sequence


def tree_order(sequence: Sequence[int], goes_left: Callable[[int, int], bool]) -> list[int]:
    """The in-order walk of the red-black tree made by inserting ``sequence`` (distinct
    ids in ``[0, n)``) in turn, an id going left of a node when ``goes_left(id, node)``."""
    left, right, _red, root = build_tree(sequence, goes_left)
    out: list[int] = []
    stack: list[int] = []
    node = root
    while stack or node != -1:
        while node != -1:
            stack.append(node)
            node = left[node]
        node = stack.pop()
        out.append(node)
        node = right[node]
    return out


def build_tree(sequence: Sequence[int], goes_left: Callable[[int, int], bool]
               ) -> tuple[list[int], list[int], list[bool], int]:
    """The red-black tree of :func:`tree_order`: each id's left and right child (-1:
    none), whether it is red, and the root (-1: empty)."""
    n = max(sequence, default=-1) + 1
    left = [-1] * n
    right = [-1] * n
    up = [-1] * n
    red = [False] * n
    root = -1

    def rotate_left(x: int) -> None:
        nonlocal root
        y = right[x]
        right[x] = b = left[y]
        if b != -1:
            up[b] = x
        p = up[x]
        up[y] = p
        if p == -1:
            root = y
        elif left[p] == x:
            left[p] = y
        else:
            right[p] = y
        left[y] = x
        up[x] = y

    def rotate_right(x: int) -> None:
        nonlocal root
        y = left[x]
        left[x] = b = right[y]
        if b != -1:
            up[b] = x
        p = up[x]
        up[y] = p
        if p == -1:
            root = y
        elif right[p] == x:
            right[p] = y
        else:
            left[p] = y
        right[y] = x
        up[x] = y

    for z in sequence:
        p, node, go_left = -1, root, False
        while node != -1:
            p = node
            go_left = goes_left(z, node)
            node = left[node] if go_left else right[node]
        up[z] = p
        if p == -1:
            root = z
        elif go_left:
            left[p] = z
        else:
            right[p] = z
        red[z] = True
        while True:  # the colour fix-up (lib/rbtree.c's __rb_insert)
            p = up[z]
            if p == -1:
                red[z] = False
                break
            if not red[p]:
                break
            g = up[p]
            if p == left[g]:
                u = right[g]
                if u != -1 and red[u]:
                    red[u] = red[p] = False
                    red[g] = True
                    z = g
                    continue
                if z == right[p]:
                    rotate_left(p)
                    p = z
                rotate_right(g)
            else:
                u = left[g]
                if u != -1 and red[u]:
                    red[u] = red[p] = False
                    red[g] = True
                    z = g
                    continue
                if z == left[p]:
                    rotate_right(p)
                    p = z
                rotate_left(g)
            red[p] = False
            red[g] = True
            break

    return left, right, red, root
