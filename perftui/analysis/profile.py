"""The hotspot table: samples grouped by sort keys, self and children, as perf report.

Overhead is a share of the total period (perf's rule, not of the sample count).  *Self*
adds a sample's period to the row of its own location; *children* adds it once to every
distinct row along its callchain (the sample's own row included), so a caller collects the
time of everything it called.  Everything is numpy over blocks of resolved samples: key
codes per sample (or per callchain entry), combined, then ``np.unique`` + ``bincount``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..perfdata.grouping import group_ids
from ..symbols.locations import UNKNOWN_DSO, Locations
from ..symbols.resolved import ResolvedSamples

#: Sort keys, with perf's names (``module`` and ``section`` are perftui's own).
SORT_KEYS = ("comm", "pid", "tid", "dso", "sym", "cpu", "module", "section")
DEFAULT_SORT = ("comm", "dso", "sym")
NO_VALUE = "-"


class SortKeyError(ValueError):
    """An unknown sort key."""


def parse_sort(text: str) -> tuple[str, ...]:
    """``"comm,dso,sym"`` -> the keys (``symbol`` accepted for ``sym``)."""
    keys = []
    for k in text.split(","):
        k = k.strip().lower()
        if not k:
            continue
        k = {"symbol": "sym", "shared_object": "dso"}.get(k, k)
        if k not in SORT_KEYS:
            raise SortKeyError(f"unknown sort key {k!r} (keys: {', '.join(SORT_KEYS)})")
        if k not in keys:
            keys.append(k)
    if not keys:
        raise SortKeyError("no sort key given")
    return tuple(keys)


class KeyCodes:
    """How each sort key turns a location or a sample into an integer code.

    Per-location codes grow with the location table (:meth:`refresh` after new locations
    were added), so blocks of samples can be aggregated as they are resolved."""

    def __init__(self, locs: Locations, keys: tuple[str, ...]) -> None:
        self.locs = locs
        self.keys = keys
        self._ids: dict[str, dict[str, int]] = {"dso": {}, "module": {}, "section": {}}
        self._codes: dict[str, list[int]] = {"dso": [], "module": [], "section": [],
                                             "sym": []}
        self._sym_ids: dict[tuple[str, int, int], int] = {}
        self.dso_code = np.zeros(0, np.int64)
        self.sym_code = np.zeros(0, np.int64)
        self.module_code = np.zeros(0, np.int64)
        self.section_code = np.zeros(0, np.int64)
        self._names: dict[str, list[str]] | None = None
        self._frozen = False
        self.refresh()

    def freeze(self) -> None:
        """No more locations will come: keep the code arrays, drop what :meth:`refresh`
        grows them from (a list and a dict entry per location: memory)."""
        _ = self.names
        self._codes = {k: [] for k in self._codes}
        self._sym_ids = {}
        self._frozen = True

    @property
    def names(self) -> dict[str, list[str]]:
        """Code -> name, per named key (dso short names, modules, sections)."""
        if self._names is None:  # made once per refresh: a report asks per cell
            self._names = {k: list(v) for k, v in self._ids.items()}
        return self._names

    def _code(self, key: str, name: str) -> int:
        ids = self._ids[key]
        return ids.setdefault(name, len(ids))

    def refresh(self) -> None:
        """Codes for the locations added since the last call (none once frozen)."""
        if self._frozen:
            return
        locs = self.locs
        have = len(self._codes["dso"])
        # (another thread may be appending: only the locations complete in every list)
        n = min(len(locs.dso), len(locs.name), len(locs.start), len(locs.end),
                len(locs.section))
        # per dso once, in the order their first locations come (a short name can cost a
        # regular expression): its short name, dso code and module code
        dso_of = locs.dso[have:n]
        short: dict[int, str] = {}
        dcode: dict[int, int] = {}
        mcode: dict[int, int] = {}
        for di in dict.fromkeys(dso_of):
            d = locs.dsos[di]
            sn = short[di] = d.short_name
            dcode[di] = self._code("dso", sn)
            mcode[di] = self._code("module", d.module if d.module is not None else sn)
        self._codes["dso"].extend([dcode[di] for di in dso_of])
        self._codes["module"].extend([mcode[di] for di in dso_of])
        sections = self._ids["section"]
        self._codes["section"].extend([sections.setdefault(x or NO_VALUE, len(sections))
                                       for x in locs.section[have:n]])
        # perf compares resolved symbols by dso short name and [start, end), unresolved
        # addresses by the address alone (sort__sym_cmp)
        sym_ids = self._sym_ids
        self._codes["sym"].extend([
            sym_ids.setdefault((short[di], st, en) if nm is not None else ("", st, -1),
                               len(sym_ids))
            for di, nm, st, en in zip(dso_of, locs.name[have:n], locs.start[have:n],
                                      locs.end[have:n], strict=True)])
        if have != n:
            self._names = None
        if have != n or not len(self.sym_code):
            self.dso_code = np.asarray(self._codes["dso"], dtype=np.int64)
            self.module_code = np.asarray(self._codes["module"], dtype=np.int64)
            self.section_code = np.asarray(self._codes["section"], dtype=np.int64)
            self.sym_code = np.asarray(self._codes["sym"], dtype=np.int64)

    def codes(self, s: ResolvedSamples, sample: np.ndarray, loc: np.ndarray) -> np.ndarray:
        """Key codes (one column per key) for entries of ``sample`` indices at ``loc``."""
        cols = []
        for k in self.keys:
            if k == "comm":
                cols.append(s.comm[sample].astype(np.int64))
            elif k in ("pid", "tid"):
                # perf's ``pid`` key is the thread (its tid), shown as tid:comm
                cols.append(s.tid[sample].astype(np.int64))
            elif k == "cpu":
                cols.append(s.cpu[sample].astype(np.int64))
            elif k == "dso":
                cols.append(self.dso_code[loc])
            elif k == "sym":
                cols.append(self.sym_code[loc])
            elif k == "module":
                cols.append(self.module_code[loc])
            elif k == "section":
                cols.append(self.section_code[loc])
        return np.stack(cols, axis=1) if cols else np.zeros((len(sample), 0), np.int64)


@dataclass(slots=True)
class ProfileRow:
    """One row of the hotspot table."""

    key: tuple[int, ...]  # the key codes
    loc: int  # a location of the row (for names, [k]/[.], drill-down)
    self_period: int
    children_period: int
    samples: int  # samples whose own location is in this row


@dataclass
class Profile:
    """The hotspot table of one event (or of all samples)."""

    keys: tuple[str, ...]
    children: bool
    total_period: int
    total_samples: int
    rows: list[ProfileRow]
    codes: KeyCodes

    def overhead(self, row: ProfileRow) -> float:
        return 100.0 * row.self_period / self.total_period if self.total_period else 0.0

    def children_overhead(self, row: ProfileRow) -> float:
        return 100.0 * row.children_period / self.total_period if self.total_period else 0.0


@dataclass
class _Acc:
    """Per-block partial sums, merged at the end."""

    keys: list[np.ndarray] = field(default_factory=list)
    self_p: list[np.ndarray] = field(default_factory=list)
    child_p: list[np.ndarray] = field(default_factory=list)
    count: list[np.ndarray] = field(default_factory=list)
    loc: list[np.ndarray] = field(default_factory=list)


def _group(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unique key rows, the inverse, and the first index of each.  The columns are folded
    into one int64 (mixed radix) when they fit: a 1-D unique is ~20x faster than rows."""
    if not len(keys):
        return keys, np.zeros(0, np.int64), np.zeros(0, np.int64)
    low = keys.min(axis=0)
    k = keys - low
    card = k.max(axis=0) + 1
    space = float(np.prod(card.astype(np.float64)))
    if space < 2.0**62:
        mult = np.ones(keys.shape[1], dtype=np.int64)
        for i in range(keys.shape[1] - 2, -1, -1):
            mult[i] = mult[i + 1] * card[i + 1]
        flat = k @ mult if keys.shape[1] else np.zeros(len(keys), np.int64)
        _u, inv, first = group_ids(flat, int(space))
        return keys[first], inv, first
    uniq, first, inv = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    return uniq, inv.reshape(-1), first


def build_profile(blocks: Iterable[ResolvedSamples], locs_of: Locations,
                  keys: tuple[str, ...] = DEFAULT_SORT, children: bool = False,
                  comm_names: Sequence[str] | None = None) -> Profile:
    """Group the samples of ``blocks`` by ``keys``; ``children`` adds the cumulative
    (callchain) column.  Blocks are aggregated one at a time (a generator keeps memory
    bounded); ``locs_of`` is the resolver's location table, which grows as they come."""
    total_period = 0
    total_samples = 0
    codes = KeyCodes(locs_of, keys)
    acc = _Acc()
    for s in blocks:
        total_period += int(s.period.sum(dtype=np.uint64))
        total_samples += len(s)
        codes.refresh()
        _add_block(acc, codes, s, children)
    rows = _merge(acc, len(keys))
    prof = Profile(keys, children, total_period, total_samples, rows, codes)
    order_rows(prof, comm_names)
    return prof


def order_rows(prof: Profile, comm_names: Sequence[str] | None = None) -> None:
    """perf's output order: overhead (children first when shown) descending, then each
    sort key ascending by what it prints (names by strcmp, numbers by value)."""
    locs = prof.codes.locs
    names = prof.codes.names

    def key_of(r: ProfileRow) -> tuple[Any, ...]:
        out: list[Any] = [-(r.children_period if prof.children else r.self_period)]
        if prof.children:
            out.append(-r.self_period)
        for k, code in zip(prof.keys, r.key, strict=True):
            if k == "comm":
                out.append(_bytes(comm_names[code]) if comm_names is not None else code)
            elif k in ("pid", "tid", "cpu"):
                out.append(code)
            elif k == "sym":
                n = locs.name[r.loc]
                # resolved names by strcmp, unresolved addresses after them by address
                out.append((0, _bytes(n), 0) if n is not None else (1, b"", locs.start[r.loc]))
            else:
                out.append(name_order(k, names[k][code]))
        return tuple(out)

    rows = prof.rows
    if len(rows) < 1000 or max((max(r.self_period, r.children_period) for r in rows),
                               default=0) >= 1 << 62:
        rows.sort(key=key_of)
        return
    # the same order, by numpy: each key as the rank of what it compares (lexsort is
    # stable, as list.sort); ~10x faster on the 10^5 rows of a big report
    cols: list[np.ndarray] = [
        -np.array([r.children_period if prof.children else r.self_period for r in rows],
                  dtype=np.int64)]
    if prof.children:
        cols.append(-np.array([r.self_period for r in rows], dtype=np.int64))
    for i, k in enumerate(prof.keys):
        codes = np.array([r.key[i] for r in rows], dtype=np.int64)
        if k == "comm" and comm_names is not None:
            cols.append(_ranks(codes, comm_names.__getitem__, _bytes))
        elif k in ("comm", "pid", "tid", "cpu"):
            cols.append(codes)
        elif k == "sym":
            cols.append(_sym_ranks(locs, np.array([r.loc for r in rows], dtype=np.int64)))
        else:
            cols.append(_ranks(codes, names[k].__getitem__, functools.partial(name_order, k)))
    order = np.lexsort(cols[::-1])
    prof.rows = [rows[j] for j in order.tolist()]


def _ranks(codes: np.ndarray, text: Callable[[int], str],
           order_key: Callable[[str], Any]) -> np.ndarray:
    """Per code, the rank of ``order_key`` of its text (equal keys: equal ranks)."""
    uniq, inv = np.unique(codes, return_inverse=True)
    texts = [order_key(text(int(c))) for c in uniq]
    order = sorted(set(texts))
    rank = {t: j for j, t in enumerate(order)}
    return np.array([rank[t] for t in texts], dtype=np.int64)[inv.reshape(-1)]


def _sym_ranks(locs: Locations, loc: np.ndarray) -> np.ndarray:
    """Per row location: resolved names first, by their bytes, then unresolved addresses
    by value (as ``order_rows``'s key)."""
    uniq, inv = np.unique(loc, return_inverse=True)
    named = [locs.name[int(x)] for x in uniq]
    texts = sorted({_bytes(n) for n in named if n is not None})
    rank = {t: j for j, t in enumerate(texts)}
    addrs = sorted({locs.start[int(x)] for x, n in zip(uniq, named, strict=True) if n is None})
    arank = {a: len(texts) + j for j, a in enumerate(addrs)}
    out = [rank[_bytes(n)] if n is not None else arank[locs.start[int(x)]]
           for x, n in zip(uniq, named, strict=True)]
    return np.array(out, dtype=np.int64)[inv.reshape(-1)]


def _bytes(s: str) -> bytes:
    """strcmp order: the UTF-8 bytes."""
    return s.encode("utf-8", "surrogateescape")


def name_order(key: str, text: str) -> tuple[int, bytes]:
    """How perf orders rows that tie on overhead by a key that prints a name: by strcmp,
    but for ``dso`` a sample with no map (``[unknown]``) after every dso (sort.c's
    ``_sort__dso_cmp``: ``cmp_null`` puts the missing dso last)."""
    if key == "dso" and text == UNKNOWN_DSO:
        return (1, b"")
    return (0, _bytes(text))


def _add_block(acc: _Acc, codes: KeyCodes, s: ResolvedSamples, children: bool) -> None:
    n = len(s)
    if not n:
        return
    idx = np.arange(n, dtype=np.int64)
    period = s.period.astype(np.int64)
    k_self = codes.codes(s, idx, s.leaf.astype(np.int64))
    entries_keys = [k_self]
    entries_self = [period]
    entries_child = [period if children else np.zeros(n, np.int64)]
    entries_count = [np.ones(n, np.int64)]
    entries_loc = [s.leaf.astype(np.int64)]
    if children:
        sample, loc = stacks(s)
        k = codes.codes(s, sample, loc)
        # each distinct row once per sample: unique over (sample, key codes)
        both = np.concatenate([sample[:, None], k], axis=1)
        uniq, _inv, first = _group(both)
        us = uniq[:, 0]
        # the sample's own row already has its period (perf's he_cache check): skip it
        own = np.all(uniq[:, 1:] == k_self[us], axis=1)
        uniq, first, us = uniq[~own], first[~own], us[~own]
        entries_keys.append(uniq[:, 1:])
        entries_self.append(np.zeros(len(uniq), np.int64))
        entries_child.append(period[us])
        entries_count.append(np.zeros(len(uniq), np.int64))
        entries_loc.append(loc[first])
    keys = np.concatenate(entries_keys)
    uniq, inv, first = _group(keys)
    m = len(uniq)
    acc.keys.append(uniq)
    acc.self_p.append(sum_by(inv, np.concatenate(entries_self), m))
    acc.child_p.append(sum_by(inv, np.concatenate(entries_child), m))
    acc.count.append(sum_by(inv, np.concatenate(entries_count), m))
    acc.loc.append(np.concatenate(entries_loc)[first])


def stacks(s: ResolvedSamples) -> tuple[np.ndarray, np.ndarray]:
    """(sample index, location) of every frame of every sample's stack, leaf first: the
    callchain where the sample has one, else the sample's own location."""
    lengths = np.diff(s.chain_starts)
    none = lengths == 0
    n = len(s)
    sample = np.repeat(np.arange(n, dtype=np.int64), lengths)
    loc = s.chain_locs.astype(np.int64)
    if none.any():
        lone = np.nonzero(none)[0]
        sample = np.concatenate([sample, lone])
        loc = np.concatenate([loc, s.leaf[lone].astype(np.int64)])
        order = np.argsort(sample, kind="stable")
        sample, loc = sample[order], loc[order]
    return sample, loc


def _merge(acc: _Acc, nkeys: int) -> list[ProfileRow]:
    if not acc.keys:
        return []
    keys = np.concatenate(acc.keys).reshape(-1, nkeys)
    uniq, inv, first = _group(keys)
    m = len(uniq)
    self_p = sum_by(inv, np.concatenate(acc.self_p), m)
    child_p = sum_by(inv, np.concatenate(acc.child_p), m)
    count = sum_by(inv, np.concatenate(acc.count), m)
    loc = np.concatenate(acc.loc)[first]
    return [ProfileRow(tuple(int(x) for x in uniq[i]), int(loc[i]), int(self_p[i]),
                       int(child_p[i]), int(count[i]))
            for i in range(m)]


def sum_by(groups: np.ndarray, values: np.ndarray, m: int) -> np.ndarray:
    """Exact int64 sums of ``values`` per group id in ``[0, m)`` (bincount's float64
    weights would round periods past 2**53)."""
    out = np.zeros(m, dtype=np.int64)
    np.add.at(out, groups, values.astype(np.int64))
    return out
