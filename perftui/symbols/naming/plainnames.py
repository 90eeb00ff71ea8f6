"""The names pass without compiled tables: the plain engine's (:mod:`perftui.engine`).

:class:`PlainNames` names every address of every sample with the resolver, block by block
(``Resolver.samples``), and numbers the distinct stacks and offset sequences with a numpy
:class:`ChainTable` (64-bit hashes of the sequences, each member compared with its group's
first, a collision given an id of its own).  A small recording is named this way: 0.07 s
for 24 K samples with callchains where the compiled tables (:mod:`.rawsamples`) take 0.04 s
but numba's import and code ~0.9 s more.  The tests hold the two equal, sample by sample.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...perfdata.grouping import group_ids

if TYPE_CHECKING:
    from .resolver import Resolver

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLD = np.uint64(0x9E3779B97F4A7C15)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: every input bit moves every output bit."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * _M1
        x = (x ^ (x >> np.uint64(27))) * _M2
        out: np.ndarray = x ^ (x >> np.uint64(31))
        return out


def chain_hashes(starts: np.ndarray, locs: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each chain of a CSR (``starts``: len + 1): order and length count."""
    lengths = np.diff(starts)
    pos = np.arange(len(locs), dtype=np.int64) - np.repeat(starts[:-1], lengths)
    with np.errstate(over="ignore"):
        v = _mix((locs.astype(np.uint64) + np.uint64(1)) * _GOLD + pos.astype(np.uint64))
    out = np.zeros(len(lengths), dtype=np.uint64)
    some = lengths > 0
    if some.any():
        out[some] = np.add.reduceat(v, starts[:-1][some])
    return _mix(out ^ lengths.astype(np.uint64))


def _same_chains(a_starts: np.ndarray, a_locs: np.ndarray, a: np.ndarray,
                 b_starts: np.ndarray, b_locs: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per pair, whether chain ``a[i]`` (of CSR a) equals chain ``b[i]`` (of CSR b)."""
    la = a_starts[a + 1] - a_starts[a]
    lb = b_starts[b + 1] - b_starts[b]
    same = la == lb
    k = np.nonzero(same)[0]
    lens = la[k]
    total = int(lens.sum())
    if total:
        first = np.repeat(np.cumsum(lens) - lens, lens)
        step = np.arange(total, dtype=np.int64) - first
        ea = np.repeat(a_starts[a[k]], lens) + step
        eb = np.repeat(b_starts[b[k]], lens) + step
        bad = a_locs[ea] != b_locs[eb]
        if bad.any():
            same[k[np.unique(np.repeat(np.arange(len(k)), lens)[bad])]] = False
    out: np.ndarray = same
    return out


class ChainTable:
    """Distinct sequences of locations (stacks) and their ids, filled block by block (id 0:
    the empty one)."""

    def __init__(self) -> None:
        self._hashes = np.zeros(0, np.uint64)  # sorted: the first chain of each hash
        self._hash_ids = np.zeros(0, np.int64)
        self._starts = np.zeros(1 << 12, dtype=np.int64)
        self._locs = np.zeros(1 << 16, dtype=np.int32)
        self.n = 0
        self._add(np.zeros(2, np.int64), np.zeros(0, np.int32), np.zeros(1, np.int64))

    @property
    def starts(self) -> np.ndarray:
        return self._starts[:self.n + 1]

    @property
    def locs(self) -> np.ndarray:
        return self._locs[:int(self._starts[self.n])]

    def _add(self, starts: np.ndarray, locs: np.ndarray, which: np.ndarray) -> np.ndarray:
        """Append chains ``which`` of a CSR; their new ids."""
        lens = starts[which + 1] - starts[which]
        total = int(lens.sum())
        end = int(self._starts[self.n])
        while self.n + len(which) + 1 > len(self._starts):
            self._starts = np.concatenate([self._starts, np.zeros_like(self._starts)])
        while end + total > len(self._locs):
            self._locs = np.concatenate([self._locs, np.zeros_like(self._locs)])
        if total:
            first = np.repeat(np.cumsum(lens) - lens, lens)
            src = np.repeat(starts[which], lens) + np.arange(total, dtype=np.int64) - first
            self._locs[end:end + total] = locs[src]
        self._starts[self.n + 1:self.n + 1 + len(which)] = end + np.cumsum(lens)
        ids = np.arange(self.n, self.n + len(which), dtype=np.int64)
        self.n += len(which)
        return ids

    def ids(self, starts: np.ndarray, locs: np.ndarray) -> np.ndarray:
        """The id of each chain of a CSR block (new chains added)."""
        n = len(starts) - 1
        out = np.empty(n, dtype=np.int32)
        if not n:
            return out
        h = chain_hashes(starts, locs)
        uh, inv, first = group_ids(h)
        # every member must equal its group's first: else (a hash collision) it is exact
        # from here on, by its bytes
        odd = ~_same_chains(starts, locs, np.arange(n), starts, locs, first[inv])
        known = np.full(len(uh), -1, dtype=np.int64)
        if len(self._hashes):
            at = np.minimum(np.searchsorted(self._hashes, uh), len(self._hashes) - 1)
            hit = self._hashes[at] == uh
            known[hit] = self._hash_ids[at[hit]]
        have = known >= 0
        if have.any():  # a block's chain found in the table: compare with the table's
            ok = _same_chains(starts, locs, first[have], self.starts, self.locs, known[have])
            if not ok.all():
                bad = np.nonzero(have)[0][~ok]
                odd |= np.isin(inv, bad)
                known[bad] = -2  # not to be taken from the table, nor added to it
        new = np.nonzero(known == -1)[0]
        if len(new):
            known[new] = self._add(starts, locs, first[new])
            at = np.searchsorted(self._hashes, uh[new])  # uh is sorted: so are these
            self._hashes = np.insert(self._hashes, at, uh[new])
            self._hash_ids = np.insert(self._hash_ids, at, known[new])
        out[:] = known[inv]
        if odd.any():
            self._exact(starts, locs, np.nonzero(odd)[0], out)
        return out

    def _exact(self, starts: np.ndarray, locs: np.ndarray, which: np.ndarray,
               out: np.ndarray) -> None:
        """Ids for chains the hash could not tell apart: one per distinct chain, by bytes."""
        seen: dict[bytes, int] = {}
        for k in which.tolist():
            body = locs[starts[k]:starts[k + 1]].tobytes()
            i = seen.get(body)
            if i is None:
                i = seen[body] = int(self._add(starts, locs, np.array([k]))[0])
            out[k] = i


def with_leaf(starts: np.ndarray, locs: np.ndarray, leaf: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """A CSR of callchains with each one's own location put first."""
    out_starts = starts + np.arange(len(starts), dtype=np.int64)
    return out_starts, np.insert(locs, starts[:-1], leaf).astype(np.int32)


def clamp_offsets(offs: np.ndarray) -> np.ndarray:
    """Offsets into symbols as kept (uint32; a larger one as the largest)."""
    out: np.ndarray = np.minimum(offs, np.uint64(2**32 - 1)).astype(np.uint32)
    return out


class PlainNames:
    """Samples named by the resolver, every address of every sample: what
    :func:`~.samplelocs.resolve_all` asks of its namer, without numba."""

    def __init__(self, res: Resolver, callchains: bool) -> None:
        self.res = res
        self.callchains = callchains
        self.stacks = ChainTable()
        self.offsets = ChainTable()  # (the table of int32 sequences, the uint32 bits in them)

    def names(self, rows: np.ndarray, _ip: np.ndarray, _uobj: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(own location, stack id, offsets id) of SAMPLE ``rows``."""
        s = self.res.samples(rows, self.callchains)
        offs = clamp_offsets(s.leaf_off).view(np.int32)
        if not self.callchains:
            return (s.leaf, np.zeros(len(rows), np.int32),
                    self.offsets.ids(np.arange(len(rows) + 1, dtype=np.int64), offs))
        stack = self.stacks.ids(*with_leaf(s.chain_starts, s.chain_locs, s.leaf))
        off = self.offsets.ids(*with_leaf(
            s.chain_starts, clamp_offsets(s.chain_offs).view(np.int32), offs))
        return s.leaf, stack, off

    def stacks_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """(starts, locations) of the distinct stacks, copies."""
        return self.stacks.starts.copy(), self.stacks.locs.copy()

    def offsets_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """(starts, int32 bits of the uint32 offsets) of the distinct offset sequences."""
        return self.offsets.starts.copy(), self.offsets.locs.copy()
