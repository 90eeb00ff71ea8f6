"""Integer codes of the sort keys (:mod:`.sortkeys`) for a location table, and the ranks
that order rows by them as perf prints them.

A per-location key's code is an id of what it compares of a location (interned as the
locations come: :meth:`KeyCodes.refresh`); a per-sample key's code is the sample's own
column (its comm id, tid or cpu).  A rank orders codes as perf orders the printed values
(names by strcmp; resolved symbols before addresses; numbers by value); equal printed
values have equal ranks.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from ..symbols.naming.locations import Locations
from .sortkeys import SORT_KEYS, LocationBatch, SortKey

LOCATION_KEYS: tuple[SortKey, ...] = tuple(k for k in SORT_KEYS.values() if k.per_location)


class KeyCodes:
    """The codes of every per-location key for the locations of ``locs``, grown with the
    table (:meth:`refresh` after new locations were added, :meth:`freeze` once none will
    come), and the ranks of codes (``comm_names``: the comm ids' names)."""

    def __init__(self, locs: Locations, keys: tuple[str, ...] = (),
                 comm_names: Sequence[str] = ()) -> None:
        self.locs = locs
        self.keys = keys
        self.comm_names = comm_names
        self._ids: dict[str, dict[Hashable, int]] = {k.name: {} for k in LOCATION_KEYS}
        self._codes: dict[str, list[int]] = {k.name: [] for k in LOCATION_KEYS}
        self._code: dict[str, np.ndarray] = {k.name: np.zeros(0, np.int64)
                                             for k in LOCATION_KEYS}
        self._have = 0
        self._names: dict[str, list[Any]] | None = None
        self._ranks: dict[str, np.ndarray] = {}
        self._frozen = False
        self.refresh()

    def with_keys(self, keys: tuple[str, ...]) -> KeyCodes:
        """These codes (shared, not copied) for a table by ``keys``."""
        other = object.__new__(KeyCodes)
        other.__dict__.update(self.__dict__)
        other.keys = keys
        return other

    def freeze(self) -> None:
        """No more locations will come: keep the code arrays, drop what :meth:`refresh`
        grows them from (a list and a dict entry per location: memory)."""
        _ = self.names
        self._codes = {k: [] for k in self._codes}
        self._ids = {k: {} for k in self._ids}
        self._frozen = True

    def of(self, key: str) -> np.ndarray:
        """The code of every location for a per-location ``key`` (int64)."""
        return self._code[key]

    @property
    def names(self) -> dict[str, list[Any]]:
        """Code -> what it compares, per per-location key (dso short names, modules,
        sections; a symbol's (dso, start, end))."""
        if self._names is None:  # made once per refresh: a report asks per cell
            self._names = {k: list(v) for k, v in self._ids.items()}
        return self._names

    def refresh(self) -> None:
        """Codes for the locations added since the last call (none once frozen)."""
        if self._frozen:
            return
        locs = self.locs
        have = self._have
        # (another thread may be appending: only the locations complete in every list)
        n = min(len(locs.dso), len(locs.name), len(locs.start), len(locs.end),
                len(locs.section))
        if have == n and have:
            return
        dso_of = locs.dso[have:n]
        short: dict[int, str] = {}
        module: dict[int, str] = {}
        for di in dict.fromkeys(dso_of):  # per dso once (a short name can cost a regex)
            d = locs.dsos[di]
            sn = short[di] = d.short_name
            module[di] = d.module if d.module is not None else sn
        b = LocationBatch(dso_of, locs.name[have:n], locs.start[have:n], locs.end[have:n],
                          locs.section[have:n], short, module,
                          {i - have for i in locs.inlined if have <= i < n},
                          locs.srcline[have:n] if locs.srcline is not None else None,
                          locs.srcfile[have:n] if locs.srcfile is not None else None)
        for k in LOCATION_KEYS:
            ids = self._ids[k.name]
            self._codes[k.name].extend([ids.setdefault(k.location_value(b, i), len(ids))
                                        for i in range(n - have)])
            self._code[k.name] = np.asarray(self._codes[k.name], dtype=np.int64)
        self._have = n
        self._names = None
        self._ranks = {}

    # -- order ----------------------------------------------------------------------------
    def ranks(self, key: str, code: np.ndarray, loc: np.ndarray) -> np.ndarray:
        """Sort ranks of rows by ``key`` (``code``: the rows' codes of the key, ``loc``:
        each row's location)."""
        k = SORT_KEYS[key]
        if k.rank_by == "value" or (k.column == "comm" and not self.comm_names):
            return np.asarray(code, dtype=np.int64)  # (comms without names: by id)
        table = self._ranks.get(key)
        if table is None:
            table = self._ranks[key] = self._rank_table(k)
        at = loc if k.rank_by == "loc" else code
        return np.asarray(table[np.asarray(at, dtype=np.int64)], dtype=np.int64)

    def _rank_table(self, k: SortKey) -> np.ndarray:
        locs = self.locs
        if k.rank_by == "loc":
            values = [k.order(None, locs, i) for i in range(self._have)]
        else:
            domain: Sequence[Any] = (self.comm_names if k.column == "comm"
                                     else self.names[k.name])
            values = [k.order(v, locs, -1) for v in domain]
        return dense_rank(values)


def dense_rank(values: Sequence[Any]) -> np.ndarray:
    """Dense rank of each value (equal values, equal ranks)."""
    order = sorted(range(len(values)), key=values.__getitem__)
    rank = np.zeros(len(values), np.int64)
    r = -1
    prev: Any = object()
    for i in order:
        if values[i] != prev:
            r += 1
            prev = values[i]
        rank[i] = r
    return rank
