"""A section's symbols as sorted arrays, with vectorised lookup (module sections)."""

from __future__ import annotations

import numpy as np

from ..tables.lookup import as_u64, nearest_start

#: Name under which :meth:`SectionSymbolTable.counts` puts offsets that no symbol covers.
NO_SYMBOL = "[no symbol]"


class SectionSymbolTable:
    """The symbols of one section, as sorted arrays.

    Coverage rule: a symbol with ``st_size > 0`` covers ``[st_value, st_value + st_size)``.
    A zero-size symbol covers up to the next symbol's start (the last one up to the end of
    the section).  An offset resolves to the symbol with the greatest start ``<=`` offset
    if that symbol covers it, else to nothing (-1): before the first symbol, in padding
    between functions, or past the end of the section.  One name is kept per address;
    the other names at that address are in :attr:`aliases`.
    """

    def __init__(
        self,
        starts: np.ndarray,
        sizes: np.ndarray,
        names: list[str],
        section_size: int | None = None,
        aliases: list[tuple[str, ...]] | None = None,
    ) -> None:
        starts = np.asarray(starts, dtype=np.uint64)
        sizes = np.asarray(sizes, dtype=np.uint64)
        if starts.shape != sizes.shape or starts.ndim != 1 or len(names) != len(starts):
            raise ValueError("starts, sizes and names must have the same length")
        order = np.argsort(starts, kind="stable")
        if not np.array_equal(order, np.arange(len(starts))):
            starts, sizes = starts[order], sizes[order]
            names = [names[i] for i in order]
            if aliases is not None:
                aliases = [aliases[i] for i in order]
        self.starts: np.ndarray = starts
        self.sizes: np.ndarray = sizes
        self.names: list[str] = list(names)
        self.aliases: list[tuple[str, ...]] = (
            list(aliases) if aliases is not None else [() for _ in names]
        )
        self.section_size = section_size
        # End (exclusive) of what each symbol covers.
        last = np.uint64(section_size) if section_size is not None else np.uint64(2**64 - 1)
        nxt = np.append(starts[1:], last) if len(starts) else starts
        nxt = np.maximum(nxt, starts)  # a zero-size last symbol past the section end
        with np.errstate(over="ignore"):
            sized_end = starts + sizes
        sized_end = np.where(sized_end < starts, np.uint64(2**64 - 1), sized_end)  # wrap
        self.ends: np.ndarray = np.where(sizes > 0, sized_end, nxt)

    def __len__(self) -> int:
        return len(self.names)

    def lookup(self, offsets: np.ndarray) -> np.ndarray:
        """Index into :attr:`names` for each offset (``ip - section start``), -1 for none.

        Negative offsets (signed input) give -1.
        """
        u, valid = as_u64(offsets)
        result = np.full(u.shape, -1, dtype=np.int64)
        if not len(self.starts) or not u.size:
            return result
        idx, hit = nearest_start(self.starts, u, valid)
        safe_idx = np.where(hit, idx, 0)
        hit &= u < self.ends[safe_idx]
        result[hit] = idx[hit]
        return result

    def resolve(self, offset: int) -> tuple[str, int] | None:
        """``(symbol name, offset into the symbol)`` for one offset, or None."""
        if offset < 0 or offset >= 2**64:
            return None
        i = int(self.lookup(np.array([offset], dtype=np.uint64))[0])
        if i < 0:
            return None
        return self.names[i], offset - int(self.starts[i])

    def hits(self, offsets: np.ndarray, weights: np.ndarray | None = None
             ) -> tuple[np.ndarray, int]:
        """Per-symbol sample counts (array parallel to :attr:`names`) and the no-symbol count
        (``weights``: samples at each offset, default one)."""
        idx = self.lookup(offsets)
        binned = np.bincount(idx + 1, weights=weights, minlength=len(self.names) + 1)
        binned = binned.astype(np.int64)
        return binned[1:], int(binned[0])

    def counts(self, offsets: np.ndarray, weights: np.ndarray | None = None
               ) -> list[tuple[str, int]]:
        """``(name, samples)`` for every symbol hit, by count descending, then name.

        Offsets that no symbol covers are counted together under :data:`NO_SYMBOL`
        (``"[no symbol]"``).  Distinct symbols that share a name (two static functions of
        different objects) stay separate entries.
        """
        per_symbol, missed = self.hits(offsets, weights)
        rows: list[tuple[str, int, int]] = [
            (self.names[i], int(per_symbol[i]), int(i)) for i in np.flatnonzero(per_symbol)
        ]
        if missed:
            rows.append((NO_SYMBOL, missed, len(self.names)))
        rows.sort(key=lambda r: (-r[1], r[0], r[2]))
        return [(name, n) for name, n, _ in rows]


def empty_section_table(section_size: int | None = None) -> SectionSymbolTable:
    """A table without symbols."""
    return SectionSymbolTable(np.zeros(0, np.uint64), np.zeros(0, np.uint64), [], section_size)
