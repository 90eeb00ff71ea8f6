"""Totals of a recording kept while its records are walked: per-type counts, samples per
event, time spans.  O(chunk) work per chunk and a few kB whatever the recording's size, so
``perftui info`` needs no index, and the browser's header needs no pass over one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .constants import RecordType

TYPE_SLOTS = 1 << 16  # index type codes are u16
NO_SPAN = (0, 0)


@dataclass
class IndexStats:
    """What :meth:`add` has seen so far.

    ``type_counts[code]``: records of each index type code.  ``attr_samples[k]``: SAMPLE
    records of attr *k* (the last slot: samples of an id not in the header).  Spans are
    (first, last) times in ns of the SAMPLE records and of every timed record; (0, 0)
    when there is none.
    """

    records: int = 0
    type_counts: np.ndarray = field(default_factory=lambda: np.zeros(TYPE_SLOTS, np.int64))
    attr_samples: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))
    sample_span: tuple[int, int] = NO_SPAN
    any_span: tuple[int, int] = NO_SPAN

    @property
    def samples(self) -> int:
        return int(self.type_counts[RecordType.SAMPLE])

    def span(self) -> tuple[int, int]:
        """(first, last) sample time; of every timed record when there is no sample."""
        return self.sample_span if self.sample_span != NO_SPAN else self.any_span

    def add(self, typ: np.ndarray, attr: np.ndarray, time: np.ndarray, nattrs: int) -> None:
        """Fold one chunk's rows in (``attr`` -1: unknown; ``time`` 0: untimed)."""
        n = len(typ)
        if not n:
            return
        self.type_counts += np.bincount(typ, minlength=TYPE_SLOTS)[:TYPE_SLOTS]
        is_s = typ == RecordType.SAMPLE
        if is_s.any():
            a = attr[is_s].astype(np.int64)
            a[(a < 0) | (a >= nattrs)] = nattrs
            per = np.bincount(a, minlength=nattrs + 1)
            self._add_attr_samples(per, nattrs)
        timed = time > 0
        for name, mask in (("sample_span", is_s & timed), ("any_span", timed)):
            if mask.any():
                first = int(time.min(where=mask, initial=np.uint64(2**64 - 1)))
                last = int(time.max(where=mask, initial=np.uint64(0)))
                old = getattr(self, name)
                if old != NO_SPAN:
                    first, last = min(first, old[0]), max(last, old[1])
                setattr(self, name, (first, last))
        self.records += n

    def _add_attr_samples(self, per: np.ndarray, nattrs: int) -> None:
        """Add per-attr counts whose last slot is "unknown"; attrs can grow (pipe mode)."""
        old = self.attr_samples
        if len(old) < nattrs + 1:  # move the old "unknown" slot to the new last place
            grown = np.zeros(nattrs + 1, np.int64)
            grown[: len(old) - 1] = old[:-1]
            grown[-1] = old[-1]
            self.attr_samples = old = grown
        old[: nattrs] += per[:nattrs]
        old[-1] += per[nattrs]

    def samples_per_attr(self, nattrs: int) -> np.ndarray:
        """SAMPLE count per attr index, then one slot for samples of unknown ids."""
        out = np.zeros(nattrs + 1, np.int64)
        known = min(nattrs, len(self.attr_samples) - 1)
        out[:known] = self.attr_samples[:known]
        out[nattrs] = self.attr_samples[-1] + self.attr_samples[known:-1].sum()
        return out

    def type_dict(self) -> dict[int, int]:
        """Type code -> count, for the codes that occur."""
        codes = np.flatnonzero(self.type_counts)
        return {int(c): int(self.type_counts[c]) for c in codes}

    # -- the cache stores these as JSON ----------------------------------------------------
    def as_json(self) -> dict[str, Any]:
        return {"records": self.records, "types": [[c, n] for c, n in self.type_dict().items()],
                "attr_samples": [int(x) for x in self.attr_samples],
                "sample_span": list(self.sample_span), "any_span": list(self.any_span)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> IndexStats:
        """Raises ValueError (or KeyError, TypeError) on a malformed object."""
        st = cls(records=int(d["records"]))
        for code, n in d["types"]:
            if not 0 <= int(code) < TYPE_SLOTS or int(n) < 0:
                raise ValueError("type count out of range")
            st.type_counts[int(code)] = int(n)
        st.attr_samples = np.array([int(x) for x in d["attr_samples"]] or [0], np.int64)
        st.sample_span = (int(d["sample_span"][0]), int(d["sample_span"][1]))
        st.any_span = (int(d["any_span"][0]), int(d["any_span"][1]))
        if int(st.type_counts.sum()) != st.records:
            raise ValueError("type counts do not add up to the record count")
        return st
