"""The hotspot table as every view holds it: samples grouped by sort keys, self and
children, as perf report, in perf's order.

Overhead is a share of the total period (perf's rule, not of the sample count).  *Self*
adds a sample's period to the row of its own location; *children* adds it once to every
distinct row along its callchain (the sample's own row included), so a caller collects the
time of everything it called.  The tables are counted from the named samples
(:mod:`.sampleprofile` for the command line, :mod:`.samplegroups` for the browser); the
plain per-block engine they are tested against is tests/reference/profile.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..perfdata.grouping import group_ids
from .keycodes import KeyCodes


@dataclass(slots=True)
class ProfileRow:
    """One row of the hotspot table."""

    key: tuple[int, ...]  # the key codes
    loc: int  # a location of the row (for names, [k]/[.], drill-down)
    self_period: int
    children_period: int
    samples: int  # samples whose own location is in this row
    children_samples: int  # samples through this row (those children_period sums)


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


def order_rows(prof: Profile, comm_names: Sequence[str] | None = None) -> None:
    """Put ``prof``'s rows in perf's output order (:func:`perf_order`; ties keep the rows'
    order: the sort is stable)."""
    codes = prof.codes
    if comm_names is not None:
        codes.comm_names = comm_names
    rows = prof.rows
    if not rows:
        return
    key = np.array([r.key for r in rows], dtype=np.int64).reshape(len(rows), -1)
    loc = np.array([r.loc for r in rows], dtype=np.int64)
    first = [r.children_period if prof.children else r.self_period for r in rows]
    second = [r.self_period for r in rows]
    if max(max(first), max(second)) < 1 << 62:
        order = perf_order(codes, prof.keys, prof.children, key, loc,
                           np.array(second, dtype=np.int64),
                           np.array(first, dtype=np.int64)).tolist()
    else:  # (periods past int64's negation: Python's integers)
        cols = [codes.ranks(k, key[:, i], loc).tolist() for i, k in enumerate(prof.keys)]
        order = sorted(range(len(rows)), key=lambda j: (
            -first[j], *([-second[j]] if prof.children else []), *(c[j] for c in cols)))
    prof.rows = [rows[j] for j in order]


def perf_order(codes: KeyCodes, keys: tuple[str, ...], children: bool, key: np.ndarray,
               loc: np.ndarray, self_p: np.ndarray, child_p: np.ndarray) -> np.ndarray:
    """The order perf prints rows in: overhead (children first when shown) descending,
    then each sort key ascending as perf compares what it prints
    (:meth:`.sortkeys.SortKey.order`); ties keep the rows' order (a stable sort).  ``key``:
    the rows' codes, one column per key; ``loc``: a location of each row."""
    if not len(loc):
        return np.zeros(0, np.int64)
    ranks = [codes.ranks(k, key[:, i], loc) for i, k in enumerate(keys)]
    primary = [-child_p, -self_p] if children else [-self_p]
    out: np.ndarray = np.lexsort([*reversed(ranks), *reversed(primary)])
    return out


def sum_by(groups: np.ndarray, values: np.ndarray, m: int) -> np.ndarray:
    """Exact int64 sums of ``values`` per group id in ``[0, m)`` (bincount's float64
    weights would round periods past 2**53)."""
    out = np.zeros(m, dtype=np.int64)
    np.add.at(out, groups, values.astype(np.int64))
    return out
