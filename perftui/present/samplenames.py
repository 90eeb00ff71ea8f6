"""The names of samples for ``dump`` (JSON and text): comm, dso, symbol, offset, module
section and the callchain frames, as ``perf script`` prints them.

Samples are resolved in blocks as the dump reaches them (:class:`SampleNamer`), so a
dump of a big recording never holds more than one block of names.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..perfdata import Recording, RecordType, Sample
from ..symbols.naming.inlines import InlineNames
from ..symbols.naming.resolved import ResolvedSamples
from ..symbols.naming.resolver import Resolver
from ..symbols.unwind import overlay

BLOCK = 1 << 14


def _frame(res: Resolver, loc: int, ip: int, off: int) -> dict[str, Any]:
    locs = res.locs
    name = locs.name[loc]
    out = {"ip": ip, "dso": locs.dsos[locs.dso[loc]].name, "sym": name,
           "symoff": off if name is not None else None}
    if loc in locs.inlined:
        out["inlined"] = True  # perf script: "name (inlined)", without the dso
    return out


class SampleNamer:
    """Names of SAMPLE index rows, resolved a block at a time in row order."""

    def __init__(self, rec: Recording, res: Resolver, rows: np.ndarray | None = None) -> None:
        """``rows``: the SAMPLE rows to name (default: every one, listed in a mapped scratch
        array, ascending: listed in memory, with a sorted copy, they took 16 bytes per
        sample, ~200 MB of a 4.6 M-record dump's RssAnon)."""
        self.rec = rec
        self.res = res
        self.sorted = (rec.rows_of_type(RecordType.SAMPLE) if rows is None
                       else np.sort(np.asarray(rows, dtype=np.int64)))
        self._block: ResolvedSamples | None = None
        self._pos: dict[int, int] = {}
        #: inline chains of unwound frames (perf's --inline); the unwound rows, known once
        #: the resolver has read the callchains
        self._inline = InlineNames(res) if res.opts.inline else None
        self._unwound: np.ndarray | None = None

    def _load(self, row: int) -> None:
        at = int(np.searchsorted(self.sorted, row))
        rows = self.sorted[at:at + BLOCK]
        self._block = self.res.samples(rows)
        self._pos = {int(r): k for k, r in enumerate(rows.tolist())}

    def names(self, row: int) -> dict[str, Any]:
        """``comm``, ``dso``, ``sym``, ``symoff``, ``section`` and (with a callchain)
        ``frames`` (leaf first, context markers left out; none for a chain perf 6.1 drops,
        one with a context marker it does not know, as ``perf script`` prints none) of
        SAMPLE row ``row``."""
        if row not in self._pos:
            self._load(row)
        s = self._block
        assert s is not None
        k = self._pos[row]
        res = self.res
        loc = int(s.leaf[k])
        name = res.locs.name[loc]
        out: dict[str, Any] = {
            "comm": res.comm_names[int(s.comm[k])],
            "dso": res.locs.dsos[res.locs.dso[loc]].name,
            "sym": name,
            "symoff": int(s.leaf_off[k]) if name is not None else None,
        }
        section = res.locs.section[loc]
        if res.locs.dsos[res.locs.dso[loc]].module is not None:
            out["section"] = section
        a, b = int(s.chain_starts[k]), int(s.chain_starts[k + 1])
        attr = int(self.rec.columns["attr"][row])
        if b > a or self.rec.attrs[attr].sample_type & Sample.CALLCHAIN:  # ([]: perf drops it)
            chains = self._chains_of(row)
            frames = []
            for j in range(a, b):
                fl, ip, off = int(s.chain_locs[j]), int(s.chain_ips[j]), int(s.chain_offs[j])
                expanded = chains.chain(fl, off) if chains is not None else None
                frames += [_frame(res, x, ip, off) for x in expanded or (fl,)]
            out["frames"] = frames
        return out

    def _chains_of(self, row: int) -> InlineNames | None:
        """The inline chains for a sample's frames when its user stack was unwound."""
        if self._inline is None:
            return None
        if self._unwound is None:
            self._unwound = overlay.unwound_rows(self.rec)
        u = self._unwound
        k = int(np.searchsorted(u, row))
        return self._inline if k < len(u) and int(u[k]) == row else None


def where(names: dict[str, Any]) -> str:
    """``sym+0xoff (dso)`` as perf script prints a location (``[unknown]`` without one)."""
    sym = names.get("sym")
    head = f"{sym}+{names['symoff']:#x}" if sym is not None else "[unknown]"
    return f"{head} ({names.get('dso')})"
