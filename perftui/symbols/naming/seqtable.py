"""Distinct int32 sequences (the names pass's stacks and offset lists) and their ids, each
kept once (CSR), found or added a block of rows at a time by a compiled loop
(:func:`seq_ids`); ids are exact: an equal hash is followed by a whole comparison."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..compiledwords import mix

_EMPTY = -1


@njit(cache=True, nogil=True)
def seq_ids(e_key: np.ndarray, e_starts: np.ndarray, k_name: np.ndarray, col: int,
             slots: np.ndarray, s_hash: np.ndarray, s_starts: np.ndarray, s_vals: np.ndarray,
             n_seq: int, out: np.ndarray) -> int:
    """Each row's sequence (column ``col`` of its keys' names, CSR by ``e_starts``) as its
    id among the distinct ones (``out``): found, else added; the sequences after.  One
    call a block, not a row: numba counts the references of the arrays handed to a call
    (atomic operations, ~5% of the names pass when this was called per row)."""
    mask = np.int64(len(slots) - 1)
    for i in range(len(out)):
        lo, hi = e_starts[i], e_starts[i + 1]
        n = hi - lo
        h = np.uint64(n)
        for j in range(lo, hi):
            h = mix(h, np.uint64(np.uint32(k_name[e_key[j], col])))
        s = np.int64(h & np.uint64(mask))
        while True:
            k = slots[s]
            if k == _EMPTY:
                slots[s] = n_seq
                s_hash[n_seq] = h
                b = s_starts[n_seq]
                for j in range(n):
                    s_vals[b + j] = k_name[e_key[lo + j], col]
                s_starts[n_seq + 1] = b + n
                out[i] = n_seq
                n_seq += 1
                break
            if s_hash[k] == h and s_starts[k + 1] - s_starts[k] == n:
                b = s_starts[k]
                same = True
                for j in range(n):
                    if s_vals[b + j] != k_name[e_key[lo + j], col]:
                        same = False
                        break
                if same:
                    out[i] = k
                    break
            s = (s + np.int64(1)) & mask
    return n_seq


@njit(cache=True, nogil=True)
def _rehash_seqs(slots: np.ndarray, s_hash: np.ndarray, n_seq: int) -> None:
    mask = np.int64(len(slots) - 1)
    for k in range(n_seq):
        s = np.int64(s_hash[k] & np.uint64(mask))
        while slots[s] != _EMPTY:
            s = (s + np.int64(1)) & mask
        slots[s] = k


def pow2(n: int) -> int:
    """The power of two at least ``n`` (4096 at least): a table's size."""
    return 1 << max(12, (n - 1).bit_length())


class SeqTable:
    """Distinct int32 sequences and their ids (id 0: the empty one), CSR, grown as needed."""

    def __init__(self) -> None:
        self.slots = np.full(1 << 12, _EMPTY, dtype=np.int32)
        self.hash = np.zeros(1 << 11, dtype=np.uint64)
        self.starts = np.zeros((1 << 11) + 1, dtype=np.int64)
        self.vals = np.zeros(1 << 14, dtype=np.int32)
        # id 0: the empty sequence, where seq_ids would put it (its hash is 0: slot 0)
        self.slots[0] = 0
        self.n = 1

    def room(self, seqs: int, vals: int) -> None:
        """Make room for ``seqs`` more sequences of ``vals`` values in all."""
        need = self.n + seqs
        if need > len(self.hash):
            cap = pow2(need)
            self.hash = grown(self.hash, cap)
            self.starts = grown(self.starts, cap + 1)
        if 2 * need > len(self.slots):
            self.slots = np.full(pow2(2 * need), _EMPTY, dtype=np.int32)
            _rehash_seqs(self.slots, self.hash, self.n)
        used = int(self.starts[self.n])
        if used + vals > len(self.vals):
            self.vals = grown(self.vals, pow2(used + vals))

    def csr(self) -> tuple[np.ndarray, np.ndarray]:
        """(starts, values) of the sequences, copies."""
        return self.starts[:self.n + 1].copy(), self.vals[:int(self.starts[self.n])].copy()


def grown(a: np.ndarray, n: int) -> np.ndarray:
    """``a`` in a new array of ``n`` rows (zeros after)."""
    out = np.zeros((n, *a.shape[1:]), dtype=a.dtype)
    out[:len(a)] = a
    return out
