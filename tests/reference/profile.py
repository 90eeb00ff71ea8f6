"""The plain per-block hotspot table (it was ``perftui.analysis.profile.build_profile``,
the engine of ``diff`` before every view counted from the named samples): resolved blocks
of samples grouped by the sort keys with ``np.unique``, block by block.  The tests hold
:func:`~perftui.analysis.sampleprofile.profile_of` and
:func:`~perftui.analysis.samplegroups.group_profile` to it, and it to a sample-by-sample
count (test_profile_engine.py)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from perftui.analysis.keycodes import KeyCodes
from perftui.analysis.profile import Profile, ProfileRow, _group, order_rows, sum_by
from perftui.analysis.sortkeys import DEFAULT_SORT, SORT_KEYS
from perftui.symbols.naming.locations import Locations
from perftui.symbols.naming.resolved import ResolvedSamples


@dataclass
class _Acc:
    """Per-block partial sums, merged at the end."""

    keys: list[np.ndarray] = field(default_factory=list)
    self_p: list[np.ndarray] = field(default_factory=list)
    child_p: list[np.ndarray] = field(default_factory=list)
    count: list[np.ndarray] = field(default_factory=list)
    child_n: list[np.ndarray] = field(default_factory=list)
    loc: list[np.ndarray] = field(default_factory=list)


def build_profile(blocks: Iterable[ResolvedSamples], locs_of: Locations,
                  keys: tuple[str, ...] = DEFAULT_SORT, children: bool = False,
                  comm_names: Sequence[str] | None = None) -> Profile:
    """Group the samples of ``blocks`` by ``keys``; ``children`` adds the cumulative
    (callchain) column.  Blocks are aggregated one at a time (a generator keeps memory
    bounded); ``locs_of`` is the resolver's location table, which grows as they come."""
    total_period = 0
    total_samples = 0
    codes = KeyCodes(locs_of, keys, comm_names or ())
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


def entry_codes(codes: KeyCodes, s: ResolvedSamples, which: np.ndarray, loc: np.ndarray
                ) -> np.ndarray:
    """Key codes (one column per key of ``codes``) of entries: per-sample keys from the
    samples ``s`` at ``which``, per-location keys from ``loc``."""
    out = []
    for name in codes.keys:
        k = SORT_KEYS[name]
        if k.column is not None:
            out.append(getattr(s, k.column)[which].astype(np.int64))
        else:
            out.append(codes.of(name)[loc])
    return np.stack(out, axis=1) if out else np.zeros((len(which), 0), np.int64)


def _add_block(acc: _Acc, codes: KeyCodes, s: ResolvedSamples, children: bool) -> None:
    n = len(s)
    if not n:
        return
    idx = np.arange(n, dtype=np.int64)
    period = s.period.astype(np.int64)
    k_self = entry_codes(codes, s, idx, s.leaf.astype(np.int64))
    entries_keys = [k_self]
    entries_self = [period]
    entries_child = [period if children else np.zeros(n, np.int64)]
    entries_count = [np.ones(n, np.int64)]
    entries_child_n = [np.ones(n, np.int64)]
    entries_loc = [s.leaf.astype(np.int64)]
    if children:
        sample, loc = stacks(s)
        k = entry_codes(codes, s, sample, loc)
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
        entries_child_n.append(np.ones(len(uniq), np.int64))
        entries_loc.append(loc[first])
    keys = np.concatenate(entries_keys)
    uniq, inv, first = _group(keys)
    m = len(uniq)
    acc.keys.append(uniq)
    acc.self_p.append(sum_by(inv, np.concatenate(entries_self), m))
    acc.child_p.append(sum_by(inv, np.concatenate(entries_child), m))
    acc.count.append(sum_by(inv, np.concatenate(entries_count), m))
    acc.child_n.append(sum_by(inv, np.concatenate(entries_child_n), m))
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
    child_n = sum_by(inv, np.concatenate(acc.child_n), m)
    loc = np.concatenate(acc.loc)[first]
    return [ProfileRow(tuple(int(x) for x in uniq[i]), int(loc[i]), int(self_p[i]),
                       int(child_p[i]), int(count[i]), int(child_n[i]))
            for i in range(m)]


