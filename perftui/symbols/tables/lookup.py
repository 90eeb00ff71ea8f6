"""Address lookups shared by the symbol tables: untrusted integers in, uint64 out, and the
nearest start at or below each address.

A recording's addresses arrive as uint64, int64 (possibly negative) or Python ints; every
table wants the same normalisation before a ``searchsorted``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["as_u64", "cstr", "nearest_start"]

_U64 = np.uint64


def as_u64(addrs: np.ndarray | Sequence[int] | int) -> tuple[np.ndarray, np.ndarray]:
    """``(u, valid)``: the addresses as a 1-d-or-more uint64 array and which of them are
    addresses at all (negative signed input is not).  Raises TypeError for non-integers."""
    arr = np.asarray(addrs)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.dtype == object:  # Python ints, possibly negative or too large
        ints = [int(a) for a in arr.ravel()]
        ok = [0 <= a < 2**64 for a in ints]
        u = np.array([a if k else 0 for a, k in zip(ints, ok, strict=True)], dtype=_U64)
        return u.reshape(arr.shape), np.array(ok, dtype=bool).reshape(arr.shape)
    if arr.dtype.kind == "i":
        valid = arr >= 0
        return np.where(valid, arr, 0).astype(_U64), valid
    if arr.dtype.kind == "u":
        return arr.astype(_U64, copy=False), np.ones(arr.shape, dtype=bool)
    raise TypeError(f"addresses must be integers, not {arr.dtype}")


def nearest_start(starts: np.ndarray, u: np.ndarray, valid: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``(idx, has)``: the index of the last start at or below each address (``starts``
    sorted), and where there is one."""
    idx = np.searchsorted(starts, u, side="right").astype(np.int64) - 1
    return idx, valid & (idx >= 0)


def cstr(table: bytes, off: int) -> str:
    """The NUL-terminated string at ``off`` of a string table ("" when out of range)."""
    if off >= len(table):
        return ""
    end = table.find(b"\0", off)
    raw = table[off:] if end < 0 else table[off:end]
    return raw.decode("utf-8", "backslashreplace")
