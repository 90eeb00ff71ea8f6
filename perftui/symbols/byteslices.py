"""Many slices of one byte buffer as Python strings, made in one decode.

A symbol table has 10^5 names, each a slice of one buffer (kallsyms text, an ELF string
table).  Decoding them one by one is 10^5 Python calls; here numpy gathers every slice,
with a separator byte after each, into one buffer that is decoded and split once.

Public API: :func:`slices_text` ``(buf, starts, ends, sep=0, errors="surrogateescape")
-> list[str]``; :func:`cstr_ends` ``(buf, offsets) -> (starts, ends)``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["cstr_ends", "slices_text"]


def slices_text(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, sep: int = 0,
                errors: str = "surrogateescape") -> list[str]:
    """``[bytes(buf[s:e]).decode("utf-8", errors) for s, e in zip(starts, ends)]``, made
    with one gather and one decode.  ``sep`` is a byte no slice holds (checked: when one
    does, the slices are decoded one by one).  Decoding is per slice in effect: UTF-8 never
    carries a multi-byte sequence across an ASCII separator, so an undecodable byte at a
    slice's edge is replaced (or escaped) as it would be alone."""
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.maximum(np.asarray(ends, dtype=np.int64), starts)
    k = len(starts)
    if not k:
        return []
    lengths = ends - starts
    width = lengths + 1  # the slice and its separator
    base = np.cumsum(width) - width  # where each slice lands in the gathered buffer
    total = int(base[-1] + width[-1])
    src = np.arange(total, dtype=np.int64)
    src += np.repeat(starts - base, width)
    seps = base + lengths
    src[seps] = 0  # the separator slots read any byte, then are overwritten
    out = buf[src] if len(buf) else np.zeros(total, dtype=np.uint8)
    out[seps] = sep
    text = out.tobytes().decode("utf-8", errors)
    parts = text.split(chr(sep))
    if len(parts) != k + 1:  # a slice held the separator byte
        return [bytes(buf[s:e]).decode("utf-8", errors)
                for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]
    parts.pop()
    return parts


def cstr_ends(buf: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, ends)`` of the NUL-terminated strings at ``offsets`` of a string table
    (an offset outside the table gives an empty string; a string without its NUL ends at
    the table's end)."""
    n = len(buf)
    off = np.asarray(offsets, dtype=np.int64)
    inside = (off >= 0) & (off < n)
    starts = np.where(inside, off, 0)
    nuls = np.flatnonzero(buf == 0)
    at = np.searchsorted(nuls, starts)
    ends = np.where(at < len(nuls), nuls[np.minimum(at, max(len(nuls) - 1, 0))], n) \
        if len(nuls) else np.full(len(off), n, dtype=np.int64)
    ends = np.where(inside, ends, starts)
    return starts, ends.astype(np.int64)
