"""Integer key columns folded into one int64 (mixed radix) and grouped: what every table
of samples groups by (:mod:`.sampleprofile`, :mod:`.tablerows`)."""

from __future__ import annotations

import numpy as np

from ..perfdata.grouping import group_ids
from .profile import _group


class Packer:
    """Integer columns folded into one int64 (mixed radix) and back.  A column is either
    a range ``[low, low + card)``, or compacted: its values present, ranked (``rank``
    maps ``value - low`` to the rank, ``values`` a rank to the value), so that the folded
    space is the product of the values present, not of the ranges."""

    def __init__(self) -> None:
        self.lows: list[int] = []
        self.cards: list[int] = []
        self.ranks: list[np.ndarray | None] = []
        self.values: list[np.ndarray | None] = []

    def add(self, col: np.ndarray) -> None:
        lo, hi = (int(col.min()), int(col.max())) if len(col) else (0, 0)
        self.add_range(lo, hi - lo + 1)

    def add_range(self, lo: int, card: int) -> None:
        self.lows.append(lo)
        self.cards.append(card)
        self.ranks.append(None)
        self.values.append(None)

    def add_present(self, lo: int, present: np.ndarray) -> None:
        """A compacted column: ``present[v - lo]`` for each value ``v`` met."""
        values = np.flatnonzero(present)
        rank = np.cumsum(present, dtype=np.int64) - 1
        self.lows.append(lo)
        self.cards.append(max(1, len(values)))
        self.ranks.append(rank)
        self.values.append(values + lo)

    @property
    def space(self) -> int:
        return int(np.prod(self.cards, dtype=object)) if self.cards else 1

    def pack(self, cols: list[np.ndarray], n: int) -> np.ndarray:
        flat = np.zeros(n, dtype=np.int64)
        for col, lo, card, rank in zip(cols, self.lows, self.cards, self.ranks, strict=True):
            flat *= card
            v = col - lo if lo else col
            flat += rank[v] if rank is not None else v
        return flat

    def unpack(self, flat: np.ndarray) -> list[np.ndarray]:
        out = []
        for lo, card, values in zip(reversed(self.lows), reversed(self.cards),
                                    reversed(self.values), strict=True):
            r = flat % card
            out.append(values[r] if values is not None else r + lo)
            flat = flat // card
        return out[::-1]


def grouped(cols: list[np.ndarray], n: int) -> tuple[list[np.ndarray], np.ndarray,
                                                      np.ndarray]:
    """(the distinct rows of ``cols``, as columns; inverse; first index of each)."""
    pk = Packer()
    for c in cols:
        pk.add(c)
    if pk.space >= 2**62:  # too wide for one int64: rows
        uniq, inv, first = _group(np.stack(cols, axis=1))
        return [uniq[:, j] for j in range(uniq.shape[1])], inv, first
    u, inv, first = group_ids(pk.pack(cols, n), pk.space)
    return pk.unpack(u), inv, first


def lookup(table: list[np.ndarray], want: list[np.ndarray]) -> np.ndarray:
    """The index in ``table`` (distinct rows, as columns) of each row of ``want`` (as
    columns), -1 where it is not there."""
    m = len(table[0]) if table else 0
    n = len(want[0]) if want else 0
    if not table:  # (no columns: every row is the one row, if any)
        return np.full(n, 0 if m else -1, np.int64)
    _u, inv, _f = grouped([np.concatenate([t, w]) for t, w in zip(table, want, strict=True)],
                          m + n)
    at = np.full(int(inv.max(initial=-1)) + 1, -1, np.int64)
    at[inv[:m]] = np.arange(m, dtype=np.int64)
    out: np.ndarray = at[inv[m:]]
    return out
