"""A block of samples with every name resolved: what the resolver hands to the analysis.

All arrays are parallel over the samples of the block (one per SAMPLE index row), except the
callchain, which is CSR: the locations of sample *k* are
``chain_locs[chain_starts[k]:chain_starts[k + 1]]``, leaf first, context markers dropped,
as perf walks them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class ResolvedSamples:
    """Samples with their thread name, location and callchain locations."""

    rows: np.ndarray  # int64 index rows
    period: np.ndarray  # uint64 (1 where the sample has no period field)
    comm: np.ndarray  # int32 comm name id (names in the resolver's comm table)
    pid: np.ndarray  # int32
    tid: np.ndarray  # int32
    cpu: np.ndarray  # int32 (-1 when unknown)
    attr: np.ndarray  # int16 event (attr index)
    time: np.ndarray  # uint64 ns
    leaf: np.ndarray  # int32 location id of the sample ip
    leaf_off: np.ndarray  # uint64 offset of the ip into its symbol (0 when unresolved)
    chain_starts: np.ndarray  # int64, len + 1
    chain_locs: np.ndarray  # int32 location ids
    chain_ips: np.ndarray  # uint64 addresses of the callchain entries (parallel)
    chain_offs: np.ndarray  # uint64 offsets of the entries into their symbols (0: unresolved)

    def __len__(self) -> int:
        return len(self.rows)

    def chain(self, k: int) -> np.ndarray:
        """Location ids of sample ``k``'s callchain, leaf first."""
        return self.chain_locs[self.chain_starts[k]:self.chain_starts[k + 1]]
