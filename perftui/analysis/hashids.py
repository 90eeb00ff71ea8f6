"""Dense ids for int64 keys in a compiled hash table: :class:`~.stacktree.Interner`'s ids,
a probe a key instead of a sort a block.

The browser's first open groups every sample (:mod:`.samplegroups`) right after the names
pass, four interners a block of 2^16 samples; numpy's sort-based interning took 0.9 s of
that on the bench recording's 4.85 M samples (8.5 s at 50 M).  numba is loaded by then (the
names pass's loops); the reopen path, whose groups come from the cache, never imports this.

The ids are :class:`~.stacktree.Interner`'s exactly: dense from 0, in order of first use
by block, and within a block new keys numbered in ascending order.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_EMPTY = np.int32(-1)


@njit(cache=True, nogil=True, inline="always")
def _slot_of(k: np.int64, mask: np.int64) -> np.int64:
    """splitmix64's finaliser of the key, masked (scalars only: nothing to count)."""
    x = np.uint64(k) + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return np.int64((x ^ (x >> np.uint64(31))) & np.uint64(mask))


@njit(cache=True, nogil=True)
def _find(keys: np.ndarray, slots: np.ndarray, stored: np.ndarray, out: np.ndarray) -> int:
    """``out[i]``: the id of ``keys[i]``, -1 when unknown; how many are unknown."""
    mask = np.int64(len(slots) - 1)
    missing = 0
    for i in range(len(keys)):
        k = keys[i]
        s = _slot_of(k, mask)
        while True:
            j = slots[s]
            if j == _EMPTY:
                out[i] = -1
                missing += 1
                break
            if stored[j] == k:
                out[i] = j
                break
            s = (s + np.int64(1)) & mask
    return missing


@njit(cache=True, nogil=True)
def _add(keys: np.ndarray, slots: np.ndarray, stored: np.ndarray, n: int) -> None:
    """Add distinct keys not there yet, with ids ``n``, ``n + 1``, ..."""
    mask = np.int64(len(slots) - 1)
    for i in range(len(keys)):
        s = _slot_of(keys[i], mask)
        while slots[s] != _EMPTY:
            s = (s + np.int64(1)) & mask
        slots[s] = n + i
        stored[n + i] = keys[i]


class HashInterner:
    """:class:`~.stacktree.Interner` (the same ids) over a compiled hash table."""

    def __init__(self) -> None:
        self._slots = np.full(1 << 12, _EMPTY, np.int32)
        self._keys = np.zeros(1 << 11, np.int64)
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def _room(self, more: int) -> None:
        need = self._n + more
        if need > len(self._keys):
            keys = np.zeros(1 << (need - 1).bit_length(), np.int64)
            keys[:self._n] = self._keys[:self._n]
            self._keys = keys
        if 2 * need > len(self._slots):  # at most half full
            self._slots = np.full(1 << (2 * need - 1).bit_length(), _EMPTY, np.int32)
            _add(self._keys[:self._n], self._slots, self._keys, 0)

    def ids(self, keys: np.ndarray) -> np.ndarray:
        """The id of each key (int64), new keys added."""
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        out = np.empty(len(keys), np.int64)
        if not len(keys) or not _find(keys, self._slots, self._keys, out):
            return out
        miss = np.flatnonzero(out < 0)
        new = np.unique(keys[miss])  # ascending: numbered as the sort-based interner does
        self._room(len(new))
        _add(new, self._slots, self._keys, self._n)
        self._n += len(new)
        again = np.empty(len(miss), np.int64)
        _find(keys[miss], self._slots, self._keys, again)
        out[miss] = again
        return out

    def keys(self) -> np.ndarray:
        """Every key, in id order."""
        return self._keys[:self._n].copy()
