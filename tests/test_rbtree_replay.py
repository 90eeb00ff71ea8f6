"""The symbol tree's replay: its runs of inserts build the tree node-by-node inserts build
(``lib/rbtree.c``'s insert, as transcribed one node at a time), and every tree is a valid
red-black search tree (equal keys to the right, as ``__symbols__insert`` puts them)."""

from __future__ import annotations

import random

from perftui.symbols.tables.rbtree import _BLACK, _RED, RedBlackTree, replay


def one_at_a_time(starts: list[int], ops: list[tuple]
                  ) -> tuple[int, list[int], list[int], list[int]]:
    t = RedBlackTree(len(starts))
    for op in ops:
        if op[0] == "ins":
            for node in range(op[1], op[2]):
                t.insert(node, starts)
        else:
            for node in op[1]:
                t.erase(node)
    return t.root, t.left, t.right, t.color


def check_red_black(root: int, left: list[int], right: list[int], color: list[int],
                    keys: list[int], live: set[int]) -> None:
    seen: list[int] = []

    def walk(n: int, lo: int, hi: int) -> int:  # black height
        if n < 0:
            return 1
        seen.append(n)
        assert lo <= keys[n] <= hi
        if color[n] == _RED:
            assert all(c < 0 or color[c] == _BLACK for c in (left[n], right[n]))
        hl = walk(left[n], lo, keys[n])
        hr = walk(right[n], keys[n], hi)
        assert hl == hr
        return hl + (color[n] == _BLACK)

    assert root < 0 or color[root] == _BLACK
    walk(root, -1, 1 << 64)
    assert sorted(seen) == sorted(live)


def test_replay_is_the_tree_of_single_inserts() -> None:
    for seed in range(300):
        rng = random.Random(seed)
        n = rng.randrange(1, 400)
        spread = rng.choice([3, 50, 10**6])
        keys = [rng.randrange(spread) for _ in range(n)]
        if seed % 3 == 0:
            keys.sort()  # a symbol table in address order: perf's worst case
        ops: list[tuple] = []
        live: set[int] = set()
        at = 0
        while at < n:
            stop = min(n, at + rng.randrange(1, n + 1))
            ops.append(("ins", at, stop))
            live |= set(range(at, stop))
            at = stop
            if live and rng.random() < 0.6:
                gone = rng.sample(sorted(live), rng.randrange(1, len(live) + 1) // 2 + 1)
                ops.append(("del", gone))
                live -= set(gone)
        root, left, right, color = one_at_a_time(keys, ops)
        assert replay(keys, ops) == (root, left, right), seed
        check_red_black(root, left, right, color, keys, live)
