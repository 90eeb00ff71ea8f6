"""The shape of perf's symbol tree: Linux's red-black tree, replayed in Python.

Where symbols overlap (a PLT entry inside ``_init`` stretched by the end fix-up, nested
labels), perf's answer for an address depends on which node its tree descent meets first
(``symbols__find``), so on the exact tree shape.  :func:`replay` rebuilds that shape from
the insertions and erasures perf made, with ``lib/rbtree.c``'s insert and erase rebalancing
(``__rb_insert``, ``__rb_erase_augmented``, ``____rb_erase_color``), and :func:`descend`
does perf's lookup in it.  Only tables with overlapping symbols need it.

:meth:`_Tree.insert` is one insert as ``lib/rbtree.c`` writes it; :func:`replay` runs it
over each run of nodes (:meth:`_Tree.insert_run`: a big library has 10^4 of them).

Public API: :func:`replay` ``(starts, ops) -> (root, left, right)``; :func:`descend`
``(root, left, right, starts, ends, addr) -> node or -1``; :class:`RedBlackTree` for a
caller that descends by its own comparison and hangs each node with :meth:`~RedBlackTree.link`
(perf's output order of report rows: :mod:`perftui.analysis.outputtree`).  ``ops`` is a list of
``("ins", first_id, stop_id)`` and ``("del", [ids])`` in the order perf did them; nodes are
ids into ``starts``; an equal start goes to the right (``__symbols__insert``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["RedBlackTree", "descend", "replay"]

_RED, _BLACK = 0, 1


class RedBlackTree:
    """A red-black tree over ids ``[0, n)`` as parallel lists (-1: no node), rebalanced
    as ``lib/rbtree.c`` does."""

    def __init__(self, n: int) -> None:
        self.left = [-1] * n
        self.right = [-1] * n
        self.parent = [-1] * n
        self.color = [_BLACK] * n
        self.root = -1

    def _change_child(self, old: int, new: int, parent: int) -> None:
        if parent >= 0:
            if self.left[parent] == old:
                self.left[parent] = new
            else:
                self.right[parent] = new
        else:
            self.root = new

    def _rotate_set_parents(self, old: int, new: int, color: int) -> None:
        parent = self.parent[old]
        self.parent[new], self.color[new] = parent, self.color[old]
        self.parent[old], self.color[old] = new, color
        self._change_child(old, new, parent)

    def insert(self, node: int, keys: Sequence[int]) -> None:
        key = keys[node]
        parent, link_left = -1, False
        cur = self.root
        while cur >= 0:
            parent = cur
            if key < keys[cur]:
                cur, link_left = self.left[cur], True
            else:
                cur, link_left = self.right[cur], False
        self.link(node, parent, link_left)

    def link(self, node: int, parent: int, link_left: bool) -> None:
        """``rb_link_node`` and ``rb_insert_color``: hang ``node`` under ``parent`` (its
        left child when ``link_left``; the root when ``parent`` is -1), then rebalance."""
        self.parent[node], self.color[node] = parent, _RED
        self.left[node] = self.right[node] = -1
        if parent < 0:
            self.root = node
        elif link_left:
            self.left[parent] = node
        else:
            self.right[parent] = node
        self._insert_color(node)

    def is_red(self, node: int) -> bool:
        return self.color[node] == _RED

    def in_order(self) -> list[int]:
        """The ids in the tree's order (``rb_first``, then ``rb_next``)."""
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

    def _insert_color(self, node: int) -> None:
        P, C = self.parent, self.color
        parent = P[node]
        while True:
            if parent < 0:
                P[node], C[node] = -1, _BLACK
                break
            if C[parent] == _BLACK:
                break
            gparent = P[parent]
            # lib/rbtree.c's two mirrored cases as one: ``near`` is the side parent hangs on
            near, far = self._sides(parent != self.right[gparent])
            tmp = far[gparent]  # the uncle
            if tmp >= 0 and C[tmp] == _RED:
                P[tmp], C[tmp] = gparent, _BLACK
                P[parent], C[parent] = gparent, _BLACK
                node = gparent
                parent = P[node]
                P[node], C[node] = parent, _RED
                continue
            tmp = far[parent]
            if node == tmp:
                tmp = near[node]
                far[parent] = tmp
                near[node] = parent
                if tmp >= 0:
                    P[tmp], C[tmp] = parent, _BLACK
                P[parent], C[parent] = node, _RED
                parent = node
                tmp = far[node]
            near[gparent] = tmp
            far[parent] = gparent
            if tmp >= 0:
                P[tmp], C[tmp] = gparent, _BLACK
            self._rotate_set_parents(gparent, parent, _RED)
            break

    def _sides(self, left: bool) -> tuple[list[int], list[int]]:
        """(near, far) child lists: (left, right) for the left case, else mirrored."""
        return (self.left, self.right) if left else (self.right, self.left)

    def insert_run(self, first: int, stop: int, keys: Sequence[int]) -> None:
        """:meth:`insert` of nodes ``first`` to ``stop - 1`` in turn.  (Inlining the
        rebalancing here measured 13% quicker, ~15 ms for a big library's 10^4 nodes: not
        worth a second copy of it.)"""
        for node in range(first, stop):
            self.insert(node, keys)

    def erase(self, node: int) -> None:
        L, R, P, C = self.left, self.right, self.parent, self.color
        child, tmp = R[node], L[node]
        if tmp < 0:
            pc_parent, pc_color = P[node], C[node]
            parent = pc_parent
            self._change_child(node, child, parent)
            if child >= 0:
                P[child], C[child] = pc_parent, pc_color
                rebalance = -1
            else:
                rebalance = parent if pc_color == _BLACK else -1
        elif child < 0:
            P[tmp], C[tmp] = P[node], C[node]
            parent = P[node]
            self._change_child(node, tmp, parent)
            rebalance = -1
        else:
            successor = child
            tmp = L[child]
            if tmp < 0:
                parent = successor
                child2 = R[successor]
            else:
                while True:
                    parent = successor
                    successor = tmp
                    tmp = L[tmp]
                    if tmp < 0:
                        break
                child2 = R[successor]
                L[parent] = child2
                R[successor] = child
                P[child] = successor
            tmp = L[node]
            L[successor] = tmp
            P[tmp] = successor
            pc_parent, pc_color = P[node], C[node]
            self._change_child(node, successor, pc_parent)
            if child2 >= 0:
                P[child2], C[child2] = parent, _BLACK
                rebalance = -1
            else:
                rebalance = parent if C[successor] == _BLACK else -1
            P[successor], C[successor] = pc_parent, pc_color
        if rebalance >= 0:
            self._erase_color(rebalance)

    def _erase_color(self, parent: int) -> None:
        P, C = self.parent, self.color
        node = -1
        while True:
            # the two mirrored cases as one: ``near`` is the side node hangs on
            near, far = self._sides(node != self.right[parent])
            sibling = far[parent]
            if C[sibling] == _RED:
                tmp1 = near[sibling]
                far[parent] = tmp1
                near[sibling] = parent
                P[tmp1], C[tmp1] = parent, _BLACK
                self._rotate_set_parents(parent, sibling, _RED)
                sibling = tmp1
            tmp1 = far[sibling]
            if tmp1 < 0 or C[tmp1] == _BLACK:
                tmp2 = near[sibling]
                if tmp2 < 0 or C[tmp2] == _BLACK:
                    P[sibling], C[sibling] = parent, _RED
                    if C[parent] == _RED:
                        C[parent] = _BLACK
                    else:
                        node = parent
                        parent = P[node]
                        if parent >= 0:
                            continue
                    break
                tmp1 = far[tmp2]
                near[sibling] = tmp1
                far[tmp2] = sibling
                far[parent] = tmp2
                if tmp1 >= 0:
                    P[tmp1], C[tmp1] = sibling, _BLACK
                tmp1 = sibling
                sibling = tmp2
            tmp2 = near[sibling]
            far[parent] = tmp2
            near[sibling] = parent
            P[tmp1], C[tmp1] = sibling, _BLACK
            if tmp2 >= 0:
                P[tmp2] = parent
            self._rotate_set_parents(parent, sibling, _BLACK)
            break


def replay(starts: Sequence[int], ops: Sequence[tuple[Any, ...]]
           ) -> tuple[int, list[int], list[int]]:
    """The tree perf built: ``(root, left, right)`` over node ids (-1 for none)."""
    t = RedBlackTree(len(starts))
    for op in ops:
        if op[0] == "ins":
            t.insert_run(op[1], op[2], starts)
        else:
            for node in op[1]:
                t.erase(node)
    return t.root, t.left, t.right


def descend(root: int, left: Sequence[int], right: Sequence[int], starts: Sequence[int],
            ends: Sequence[int], addr: int) -> int:
    """perf's ``symbols__find``: the first node on the search path that covers ``addr``."""
    n = root
    while n >= 0:
        s, e = starts[n], ends[n]
        if addr < s:
            n = left[n]
        elif addr > e or (addr == e and addr != s):
            n = right[n]
        else:
            return n
    return -1
