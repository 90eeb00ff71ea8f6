"""Many slices of one byte buffer as Python strings, made in one decode.

A symbol table has 10^5 names, each a slice of one buffer (kallsyms text, an ELF string
table).  Decoding them one by one is 10^5 Python calls; here numpy gathers every slice,
with a separator byte after each, into one buffer that is decoded and split once.

Public API: :func:`slices_text` ``(buf, starts, ends, sep=0, errors="surrogateescape")
-> list[str]``; :class:`SliceNames` ``(data, starts, ends)``: the same, decoded on
access.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["SliceNames", "slices_text"]


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
    parts = out.tobytes().decode("utf-8", errors).split(chr(sep))
    if len(parts) != k + 1:  # a slice held the separator byte
        return [bytes(buf[s:e]).decode("utf-8", errors)
                for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]
    parts.pop()
    return parts


def _offsets(a: np.ndarray) -> np.ndarray:
    """Byte offsets as int64, or int32 when they are int32 already."""
    a = np.asarray(a)
    return a if a.dtype == np.int32 else a.astype(np.int64, copy=False)


class SliceNames(Sequence[str]):
    """Names that are slices of one buffer (``bytes``), decoded on access (UTF-8, other
    bytes escaped: ``surrogateescape``): a kallsyms table has 10^5 names and a profile
    shows a few hundred of them.  Compares equal to a list of the same names."""

    def __init__(self, data: bytes, starts: np.ndarray, ends: np.ndarray) -> None:
        self._data = data
        # (int32 offsets stay int32: a compacted buffer's, see :meth:`compacted`)
        self._starts = _offsets(starts)
        self._ends = _offsets(ends)

    def __len__(self) -> int:
        return len(self._starts)

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        s, e = int(self._starts[i]), int(self._ends[i])
        return self._data[s:e].decode("utf-8", "surrogateescape")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other,
                                                                     strict=True))

    __hash__ = None  # type: ignore[assignment]

    def compacted(self) -> SliceNames:
        """The same names in a buffer of their own bytes only, with int32 offsets when it
        is under 2 GiB.  Kallsyms names are slices of the whole text (5.4 MB for 122 K
        symbols, of which 3.1 MB are names): kept that way, the text and two int64 offsets
        per name stayed resident as long as the kernel's table (through a first report's
        names pass at 50 M records, ~3 MB of its peak)."""
        lengths = self._ends - self._starts
        ends = np.cumsum(lengths)
        starts = ends - lengths
        src = np.frombuffer(self._data, dtype=np.uint8)
        out = np.empty(int(ends[-1]) if len(ends) else 0, dtype=np.uint8)
        step = 1 << 14  # names gathered at a time: their byte indexes stay a few MB
        for lo in range(0, len(lengths), step):
            ln = lengths[lo:lo + step]
            at, n = int(starts[lo]), int(ln.sum())
            idx = np.repeat(self._starts[lo:lo + step] - (starts[lo:lo + step] - at), ln)
            idx += np.arange(n, dtype=np.int64)
            out[at:at + n] = src[idx]
        buf = out.tobytes()
        del out
        dt = np.int32 if len(buf) < 2**31 else np.int64
        return SliceNames(buf, starts.astype(dt), ends.astype(dt))

    def parts(self) -> tuple[bytes, np.ndarray, np.ndarray]:
        """The buffer and every name's start and end in it."""
        return self._data, self._starts, self._ends

    def take(self, rows: np.ndarray) -> SliceNames:
        """The names at ``rows``, in that order (still lazy)."""
        return SliceNames(self._data, self._starts[rows], self._ends[rows])

    def reorder(self, order: np.ndarray) -> SliceNames:
        """The same names in another order (still lazy)."""
        return self.take(order)

    def lengths(self) -> np.ndarray:
        """The length in bytes of each name."""
        out: np.ndarray = self._ends - self._starts
        return out

    def equal_to(self, value: str) -> np.ndarray:
        """Which names are ``value`` (a bool per name; their bytes compared in numpy)."""
        want = np.frombuffer(value.encode("utf-8", "surrogateescape"), dtype=np.uint8)
        out: np.ndarray = self.lengths() == len(want)
        rows = np.flatnonzero(out)
        if len(rows) and len(want):
            buf = np.frombuffer(self._data, dtype=np.uint8)
            got = buf[self._starts[rows][:, None] + np.arange(len(want))]
            out[rows[~(got == want).all(axis=1)]] = False
        return out

    def index(self, value: object, start: int = 0, stop: int = 2**63) -> int:
        """The first index of ``value``."""
        rows = np.flatnonzero(self.equal_to(value)) if isinstance(value, str) else \
            np.zeros(0, dtype=np.int64)
        rows = rows[(rows >= start) & (rows < stop)]
        if not len(rows):
            raise ValueError(f"{value!r} is not in the names")
        return int(rows[0])
