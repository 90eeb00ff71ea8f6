"""The hotspot table: samples grouped by sort keys, self and children, as perf report.

Overhead is a share of the total period (perf's rule, not of the sample count).  *Self*
adds a sample's period to the row of its own location; *children* adds it once to every
distinct row along its callchain (the sample's own row included), so a caller collects the
time of everything it called.  Everything is numpy over blocks of resolved samples: key
codes per sample (or per callchain entry), combined, then ``np.unique`` + ``bincount``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from ..symbols.locations import Locations
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


@dataclass
class KeyCodes:
    """How each sort key turns a location or a sample into an integer code."""

    locs: Locations
    keys: tuple[str, ...]
    dso_code: np.ndarray = field(init=False)  # per location: dso short-name id
    sym_code: np.ndarray = field(init=False)  # per location: symbol identity
    module_code: np.ndarray = field(init=False)
    section_code: np.ndarray = field(init=False)
    names: dict[str, list[str]] = field(init=False)

    def __post_init__(self) -> None:
        locs = self.locs
        short: dict[str, int] = {}
        dso_short = np.array([short.setdefault(d.short_name, len(short)) for d in locs.dsos],
                             dtype=np.int64)
        dso_of = locs.dso_of()
        self.dso_code = dso_short[dso_of] if len(dso_of) else np.zeros(0, np.int64)
        # perf compares resolved symbols by dso and [start, end); a location is exactly that
        self.sym_code = np.arange(len(locs), dtype=np.int64)
        mod: dict[str, int] = {}
        sec: dict[str, int] = {}
        mcode, scode = [], []
        for i in range(len(locs)):
            d = locs.dsos[locs.dso[i]]
            m = d.module if d.module is not None else d.short_name
            mcode.append(mod.setdefault(m, len(mod)))
            s = locs.section[i] or NO_VALUE
            scode.append(sec.setdefault(s, len(sec)))
        self.module_code = np.asarray(mcode, dtype=np.int64)
        self.section_code = np.asarray(scode, dtype=np.int64)
        self.names = {"dso": list(short), "module": list(mod), "section": list(sec)}

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


@dataclass
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
    """Unique key rows, the inverse, and the first index of each."""
    if not len(keys):
        return keys, np.zeros(0, np.int64), np.zeros(0, np.int64)
    uniq, first, inv = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    return uniq, inv.reshape(-1), first


def build_profile(blocks: Iterable[ResolvedSamples], locs_of: Locations,
                  keys: tuple[str, ...] = DEFAULT_SORT, children: bool = False) -> Profile:
    """Group the samples of ``blocks`` by ``keys``; ``children`` adds the cumulative
    (callchain) column.  The location table must be complete when this returns: give the
    same :class:`Locations` the resolver filled (codes are computed at the end)."""
    parts: list[ResolvedSamples] = []
    total_period = 0
    total_samples = 0
    for s in blocks:
        parts.append(s)
        total_period += int(s.period.sum(dtype=np.uint64))
        total_samples += len(s)
    codes = KeyCodes(locs_of, keys)
    acc = _Acc()
    for s in parts:
        _add_block(acc, codes, s, children)
    rows = _merge(acc, len(keys))
    rows.sort(key=lambda r: (-(r.children_period if children else r.self_period),
                             -r.self_period, r.key))
    return Profile(keys, children, total_period, total_samples, rows, codes)


def _add_block(acc: _Acc, codes: KeyCodes, s: ResolvedSamples, children: bool) -> None:
    n = len(s)
    if not n:
        return
    idx = np.arange(n, dtype=np.int64)
    period = s.period.astype(np.int64)
    k_self = codes.codes(s, idx, s.leaf.astype(np.int64))
    entries_keys = [k_self]
    entries_self = [period]
    entries_child = [np.zeros(n, np.int64)]
    entries_count = [np.ones(n, np.int64)]
    entries_loc = [s.leaf.astype(np.int64)]
    if children:
        sample, loc = stacks(s)
        k = codes.codes(s, sample, loc)
        # each distinct row once per sample: unique over (sample, key codes)
        both = np.concatenate([sample[:, None], k], axis=1)
        uniq, first = np.unique(both, axis=0, return_index=True)
        us = uniq[:, 0]
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
