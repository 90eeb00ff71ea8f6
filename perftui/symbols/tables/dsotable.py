"""Symbol tables as sorted numpy arrays, built with perf 6.1's own rules.

:class:`DsoSymbolTable` is what every symbol source returns (ELF files, kallsyms, perf maps):

- ``starts``, ``ends``: sorted ``uint64`` arrays; symbol ``i`` covers ``[starts[i], ends[i])``,
  and a symbol with ``ends[i] == starts[i]`` covers its start address only (perf's
  ``symbols__find``);
- ``names``: the names as perf prints them (demangled where perf demangles);
- ``kinds``: ``uint8`` codes, :data:`KIND_NAMES` gives their words (``"func"``, ``"object"``,
  ``"label"``, ``"plt"``);
- ``space``: what the addresses are (``"file offset"`` for user ELF files, as perf 6.1 keeps
  them, ``"address"`` for kallsyms, vmlinux and perf maps);
- :meth:`DsoSymbolTable.lookup` ``(addrs) -> int64 index or -1`` (vectorised).

:class:`~.symbuilder.PerfSymbolBuilder` reproduces how perf 6.1 fills its symbol tree
(``tools/perf/util/symbol.c``).

Where two symbols overlap (one starts inside another), perf's answer depends on the shape
of its red-black tree; :meth:`DsoSymbolTable.lookup` returns the one with the greatest start
that covers the address, else the symbol before it that still covers it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .byteslices import SliceNames
from .lookup import as_u64, nearest_start
from .symnames import LazyNames

__all__ = [
    "KIND_FUNC",
    "KIND_LABEL",
    "KIND_NAMES",
    "KIND_OBJECT",
    "KIND_PLT",
    "STB_GLOBAL",
    "STB_LOCAL",
    "STB_WEAK",
    "DsoSymbolTable",
]

KIND_FUNC, KIND_OBJECT, KIND_LABEL, KIND_PLT = 0, 1, 2, 3
#: Words for the ``kinds`` codes.
KIND_NAMES = ("func", "object", "label", "plt")
STB_LOCAL, STB_GLOBAL, STB_WEAK = 0, 1, 2

_U64 = np.uint64


_LAZY = (LazyNames, SliceNames)


class DsoSymbolTable:
    """Sorted, non-empty-or-empty arrays of symbols; see the module docstring."""

    def __init__(
        self,
        starts: np.ndarray,
        ends: np.ndarray,
        names: Sequence[str],
        kinds: np.ndarray | None = None,
        space: str = "address",
        tree: Callable[[], tuple[int, np.ndarray, np.ndarray]] | None = None,
    ) -> None:
        starts = np.ascontiguousarray(starts, dtype=_U64)
        ends = np.ascontiguousarray(ends, dtype=_U64)
        n = len(starts)
        if ends.shape != (n,) or len(names) != n:
            raise ValueError("starts, ends and names must have the same length")
        if kinds is None:
            kinds = np.zeros(n, dtype=np.uint8)
        kinds = np.ascontiguousarray(kinds, dtype=np.uint8)
        if n > 1 and bool(np.any(starts[1:] < starts[:-1])):
            tree = None  # rows reordered: the tree's rows would not match
            order = np.argsort(starts, kind="stable")
            starts, ends, kinds = starts[order], ends[order], kinds[order]
            names = names.reorder(order) if isinstance(names, _LAZY) else \
                [names[i] for i in order]
        self.starts: np.ndarray = starts
        self.ends: np.ndarray = ends
        # lazy names stay lazy: demangling every name of a big library costs seconds
        self.names: Sequence[str] = names if isinstance(names, _LAZY) else list(names)
        self.kinds: np.ndarray = kinds
        self.space = space
        self._tree_source = tree
        self._tree: tuple[int, list[int], list[int]] | None = None
        #: what perf's tree is replayed from (:meth:`PerfSymbolBuilder.table`: every
        #: symbol's start by id, the insert/erase log, the ids of these rows), for
        #: :mod:`.diskcache`; None where no builder made the table
        self.replay_input: tuple[np.ndarray, list[tuple[Any, ...]], np.ndarray] | None = None
        # Overlap zones: [start, end) of every symbol that reaches past the next start;
        # there perf's answer depends on its tree, so lookups descend a replay of it.
        if n > 1:
            container = ends[:-1] > starts[1:]
            zs, ze = starts[:-1][container], ends[:-1][container]
            if len(zs):
                ze = np.maximum.accumulate(ze)
                self._zones: tuple[np.ndarray, np.ndarray] | None = (zs, ze)
            else:
                self._zones = None
        else:
            self._zones = None
        # For addresses past the end of the symbol just before them: the symbol before
        # that reaches furthest (an enclosing symbol, when symbols nest).
        if n:
            reach = np.maximum.accumulate(ends)
            first_at_reach = np.flatnonzero(np.r_[True, reach[1:] != reach[:-1]])
            owner = np.repeat(first_at_reach, np.diff(np.r_[first_at_reach, n]))
            self._reach = reach
            self._reach_owner = owner.astype(np.int64)
        else:
            self._reach = ends
            self._reach_owner = np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.names)

    def __repr__(self) -> str:
        return f"DsoSymbolTable({len(self)} symbols, space={self.space!r})"

    def lookup(self, addrs: np.ndarray | Sequence[int] | int) -> np.ndarray:
        """Index into :attr:`names` of the symbol covering each address, -1 where none does.

        ``addrs`` must be in :attr:`space` (for an ELF file: ``ip - map.start + map.pgoff``).
        Negative values (signed input) give -1.
        """
        u, valid = as_u64(addrs)
        result = np.full(u.shape, -1, dtype=np.int64)
        if not len(self.starts) or not u.size:
            return result
        idx, has = nearest_start(self.starts, u, valid)
        i = np.where(has, idx, 0)
        start, end = self.starts[i], self.ends[i]
        hit = has & ((u < end) | ((u == start) & (end == start)))
        result[hit] = idx[hit]
        # Not in the nearest symbol: an earlier one that reaches over the address.
        miss = has & ~hit
        if miss.any():
            owner = self._reach_owner[i[miss]]
            covered = u[miss] < self._reach[i[miss]]
            result[np.flatnonzero(miss)[covered]] = owner[covered]
        if self._zones is not None and self._tree_source is not None:
            zs, ze = self._zones
            z = np.searchsorted(zs, u, side="right") - 1
            in_zone = valid & (z >= 0) & (u < ze[np.maximum(z, 0)])
            if in_zone.any():
                self._descend_into(u, in_zone, result)
        return result

    @property
    def tree_source(self) -> Callable[[], tuple[int, np.ndarray, np.ndarray]] | None:
        """What gives perf's tree over these rows ``(root, left, right)`` when a lookup
        first needs it (None: the rows were reordered, or no tree is known)."""
        return self._tree_source

    def set_tree_source(self, tree: Callable[[], tuple[int, np.ndarray, np.ndarray]]
                        ) -> None:
        """Another way to the same tree (kept on disk, :mod:`.diskcache`)."""
        self._tree_source = tree
        self._tree = None

    def _descend_into(self, u: np.ndarray, mask: np.ndarray, result: np.ndarray) -> None:
        """perf's tree descent for the addresses in overlap zones."""
        from perftui.symbols.tables.rbtree import descend

        if self._tree is None:
            assert self._tree_source is not None
            root0, left0, right0 = self._tree_source()
            self._tree = (root0, left0.tolist(), right0.tolist())
        root, left, right = self._tree
        starts, ends = self._starts_list, self._ends_list
        flat = result.reshape(-1)
        uf = u.reshape(-1)
        for k in np.flatnonzero(mask.reshape(-1)).tolist():
            flat[k] = descend(root, left, right, starts, ends, int(uf[k]))

    @property
    def _starts_list(self) -> list[int]:
        if not hasattr(self, "_sl"):
            self._sl: list[int] = self.starts.tolist()
            self._el: list[int] = self.ends.tolist()
        return self._sl

    @property
    def _ends_list(self) -> list[int]:
        self._starts_list  # noqa: B018  (fills both)
        return self._el


#: pairs that names decide from which numpy beats one pair at a time
