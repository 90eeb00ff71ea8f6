"""Word helpers the compiled loops share (numba, inlined where they are called): one step
of a 64-bit hash and a byte swap."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def mix(h: np.uint64, w: np.uint64) -> np.uint64:
    """One step of a hash: splitmix64's finaliser over ``h * golden + w`` (a product, not
    an exclusive or, so that keys (a, b) and (b, a), or with equal ``a ^ b``, differ)."""
    x = h * np.uint64(0x9E3779B97F4A7C15) + w + np.uint64(1)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True, inline="always")
def bswap(w: np.uint64) -> np.uint64:
    """The word with its bytes in the other order (a big-endian recording's)."""
    v = np.uint64(0)
    for _ in range(8):
        v = (v << np.uint64(8)) | (w & np.uint64(0xFF))
        w >>= np.uint64(8)
    return v
