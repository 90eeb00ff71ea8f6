"""Symbol names kept cheaply: added in parts (:class:`NamePool`), read from an ELF string
table by offset (:class:`StrtabNames`), demangled only when shown (:class:`LazyNames`);
what :class:`~.dsotable.DsoSymbolTable` and :class:`~.symbuilder.PerfSymbolBuilder` hold."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence

import numpy as np

from .byteslices import slices_text

#: names from which one decode of them all beats one decode each
_MANY_NAMES = 48


class NamePool(Sequence[str]):
    """Names added in parts (lists, or lazy :class:`StrtabNames`), indexed as one list."""

    def __init__(self) -> None:
        self._parts: list[Sequence[str]] = []
        self._bases: list[int] = []
        self._n = 0

    @classmethod
    def of(cls, names: Sequence[str]) -> NamePool:
        pool = cls()
        pool.extend(names)
        return pool

    def extend(self, names: Sequence[str]) -> None:
        self._parts.append(names)
        self._bases.append(self._n)
        self._n += len(names)

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        if i < 0:
            i += self._n
        k = bisect_right(self._bases, i) - 1
        return self._parts[k][i - self._bases[k]]

    def take(self, ids: np.ndarray) -> list[str]:
        """``[self[i] for i in ids]`` for sorted ``ids``, a string table's in one decode."""
        ids = np.asarray(ids, dtype=np.int64)
        bases = np.asarray(self._bases, dtype=np.int64)
        cuts = np.searchsorted(ids, bases)
        out: list[str] = []
        for k, part in enumerate(self._parts):
            rows = ids[cuts[k]:cuts[k + 1] if k + 1 < len(cuts) else len(ids)] - bases[k]
            if not len(rows):
                continue
            if isinstance(part, StrtabNames) and len(rows) >= _MANY_NAMES:
                out += part.take(rows)
            else:
                out += [part[i] for i in rows.tolist()]
        return out


    def slices(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Names ``ids`` (any order) as slices ``[starts, ends)`` of one byte buffer
        (UTF-8, surrogateescape), without decoding a string table's names."""
        ids = np.asarray(ids, dtype=np.int64)
        part = np.searchsorted(np.asarray(self._bases, dtype=np.int64), ids, side="right") - 1
        bufs: list[np.ndarray] = []
        starts = np.zeros(len(ids), np.int64)
        ends = np.zeros(len(ids), np.int64)
        at = 0
        for k, names in enumerate(self._parts):
            sel = np.flatnonzero(part == k)
            if not len(sel):
                continue
            rows = ids[sel] - self._bases[k]
            if isinstance(names, StrtabNames):
                buf, a, b = names.slices(rows)
            else:
                raw = [names[i].encode("utf-8", "surrogateescape") for i in rows.tolist()]
                buf = np.frombuffer(b"".join(raw), dtype=np.uint8)
                b = np.cumsum([len(x) for x in raw], dtype=np.int64)
                a = b - np.array([len(x) for x in raw], dtype=np.int64)
            starts[sel], ends[sel] = a + at, b + at
            bufs.append(buf)
            at += len(buf)
        return (np.concatenate(bufs) if bufs else np.zeros(0, np.uint8)), starts, ends


class StrtabNames(Sequence[str]):
    """Names in an ELF string table, decoded on access (a big library has 10^5 of them)."""

    def __init__(self, strtab: bytes, offsets: np.ndarray) -> None:
        self._strtab = strtab
        self._offsets = offsets
        self._nuls: np.ndarray | None = None  # where the table's strings end, once needed

    def __len__(self) -> int:
        return len(self._offsets)

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        off = int(self._offsets[i])
        table = self._strtab
        if off < 0 or off >= len(table):
            return ""
        end = table.find(b"\0", off)
        raw = table[off:] if end < 0 else table[off:end]
        return raw.decode("utf-8", "surrogateescape")

    def take(self, rows: np.ndarray) -> list[str]:
        """``[self[i] for i in rows]``, in one decode."""
        return slices_text(*self.slices(rows), sep=0)

    def slices(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(the table's bytes, starts, ends) of names ``rows``: an offset outside the
        table is the empty name."""
        buf = np.frombuffer(self._strtab, dtype=np.uint8)
        off = np.asarray(self._offsets, dtype=np.int64)[rows]
        inside = (off >= 0) & (off < len(buf))
        starts = np.where(inside, off, 0)
        if self._nuls is None:
            self._nuls = np.append(np.flatnonzero(buf == 0), len(buf))
        nuls = self._nuls
        ends = nuls[np.searchsorted(nuls[:-1], starts)]  # the table's end: no NUL follows
        return buf, starts, np.where(inside, ends, starts)


class _Picked(Sequence[str]):
    """``names[order[i]]`` without materialising the names."""

    def __init__(self, names: Sequence[str], order: np.ndarray) -> None:
        self._names, self._order = names, order

    def __len__(self) -> int:
        return len(self._order)

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        return self._names[int(self._order[i])]

    def slices(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every name, in order, as slices of one byte buffer (:meth:`NamePool.slices`)."""
        if isinstance(self._names, NamePool):
            return self._names.slices(self._order)
        return NamePool.of(self).slices(np.arange(len(self)))


class LazyNames(Sequence[str]):
    """Names turned into their shown form (demangled) on first access, then kept: a big
    C++ or Rust library has 10^5 names and a profile shows a few hundred of them."""

    def __init__(self, raw: Sequence[str], convert: Callable[[str], str]) -> None:
        self._raw = raw
        self._convert = convert
        self._done: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self._raw)

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        if not isinstance(i, int):
            raise TypeError("LazyNames takes integer indexes")
        if i < 0:
            i += len(self._raw)
        got = self._done.get(i)
        if got is None:
            got = self._done[i] = self._convert(self._raw[i])
        return got

    def raw_slices(self) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray],
                                  Callable[[str], str]]:
        """Every name before it is turned into its shown form, as slices of one byte
        buffer, and what turns it."""
        raw = self._raw
        got = raw.slices() if isinstance(raw, _Picked) else \
            NamePool.of(raw).slices(np.arange(len(raw)))
        return got, self._convert

    def reorder(self, order: np.ndarray) -> LazyNames:
        """The same names in another order (still lazy)."""
        return LazyNames(_Picked(self._raw, np.asarray(order, dtype=np.int64)), self._convert)

    def index(self, value: object, start: int = 0, stop: int = 2**63) -> int:
        for i in range(max(start, 0), min(stop, len(self._raw))):
            if self[i] == value:
                return i
        raise ValueError(f"{value!r} is not in the names")


#: name sequences a table keeps as they are (made on access)


def _same_name(name: str) -> str:
    return name
