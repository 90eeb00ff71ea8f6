"""Grouping integers without a sort, where the values are few or their range is small.

``np.unique(..., return_inverse=True)`` sorts with a stable argsort, measured ~1 s on 5 M
keys on the bench machine; a presence table over a small range does the same in ~0.1 s.
Every layer uses these (per-sample key codes, map ids, table numbers).
"""

from __future__ import annotations

import numpy as np

#: Largest value range :func:`dense_unique` takes (a bool and an int32 per possible value).
DENSE_MAX = 1 << 24


def dense_limit(n: int) -> int:
    """The range of values up to which :func:`dense_unique` beats a sort for ``n`` keys."""
    return min(DENSE_MAX, max(4 * n, 1 << 16))


def dense_unique(flat: np.ndarray, space: int, first: bool = True
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(flat, return_index=True, return_inverse=True)`` (sorted unique values,
    the inverse, the first index of each) for integers in ``[0, space)``, by a presence
    table instead of a sort.  ``first`` False skips the first indexes (returned empty)."""
    pres = np.zeros(space, dtype=bool)
    pres[flat] = True
    ids = np.cumsum(pres, dtype=np.int32)
    inv = ids[flat].astype(np.int64) - 1
    uniq = np.flatnonzero(pres)
    if not first:
        return uniq, inv, np.zeros(0, np.int64)
    at = np.full(len(uniq), len(flat), dtype=np.int64)
    np.minimum.at(at, inv, np.arange(len(flat), dtype=np.int64))
    return uniq, inv, at


class DenseGrouper:
    """:func:`dense_unique` for many arrays of keys in one ``[0, space)``, each of at most
    ``n_max`` keys: the presence and id tables are made once and cleared after each use
    (only where it set them), the inverse is int32.  Made per call, the tables and the
    int64 inverse were ~12 MB of temporaries per 2^18 keys over a 2^20 range: the peak of
    a first ``report --children`` at 50 M records."""

    def __init__(self, space: int, n_max: int) -> None:
        self.present = np.zeros(space, dtype=bool)
        self.ids = np.zeros(space, dtype=np.int32)
        self.positions = np.arange(n_max, dtype=np.int64)

    def __call__(self, flat: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(sorted unique values, int32 inverse, first index of each) of ``flat``."""
        present = self.present
        present[flat] = True
        uniq = np.flatnonzero(present)
        present[uniq] = False
        self.ids[uniq] = np.arange(len(uniq), dtype=np.int32)
        inv = self.ids[flat]
        first = np.full(len(uniq), len(flat), dtype=np.int64)
        np.minimum.at(first, inv, self.positions[:len(flat)])
        return uniq, inv, first


def group_ids(flat: np.ndarray, space: int | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(flat, return_index=True, return_inverse=True)`` for non-negative
    integers below ``space`` (None: any int64): by a presence table when the range is
    small, else by a sort of the values and a search of each in the (few) distinct ones,
    which measured 2-3x faster than ``np.unique``'s stable argsort of millions of keys."""
    n = len(flat)
    if not n:
        return flat[:0], np.zeros(0, np.int64), np.zeros(0, np.int64)
    if space is not None and space <= dense_limit(n):
        return dense_unique(flat, space)
    s = np.sort(flat)
    uniq = s[np.concatenate([[True], s[1:] != s[:-1]])]
    del s
    inv = np.searchsorted(uniq, flat).astype(np.int64, copy=False)  # (intp: no copy)
    first = np.full(len(uniq), n, dtype=np.int64)
    np.minimum.at(first, inv, np.arange(n, dtype=np.int64))
    return uniq, inv, first


def unique_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted unique values, inverse) of integers: by a presence table when their range
    is small, else ``np.unique``."""
    if not len(values):
        return values[:0], np.zeros(0, np.int64)
    lo, hi = int(values.min()), int(values.max())
    if hi - lo < dense_limit(len(values)):
        u, inv, _ = dense_unique((values - lo).astype(np.int64), hi - lo + 1, first=False)
        return (u + lo).astype(values.dtype), inv
    u, inv = np.unique(values, return_inverse=True)
    return u, inv.reshape(-1)


def stable_order(small: np.ndarray) -> np.ndarray:
    """``np.argsort(small, kind="stable")`` for integers of a small range: as int16, which
    numpy sorts by radix (linear) instead of timsort."""
    if len(small) and int(small.min()) >= -(1 << 15) and int(small.max()) < (1 << 15):
        return np.argsort(small.astype(np.int16), kind="stable")
    return np.argsort(small, kind="stable")
