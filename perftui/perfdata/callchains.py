"""The callchains of many samples at once, gathered with numpy (no decode per sample).

A callchain sits at a fixed offset in the samples of one attr unless a variable-size field
comes before it (a READ block with ``PERF_FORMAT_GROUP``); those samples are decoded one by
one.  The result is a CSR pair: ``starts`` (one more than the rows) and ``ips``, the
entries of row *k* being ``ips[starts[k]:starts[k + 1]]``, leaf first, context markers
included as the kernel wrote them (docs/format.md, "Callchains").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .constants import ReadFormat, Sample
from .index import NO_SOURCE, gather
from .sample import SampleLayout

if TYPE_CHECKING:
    from .recording import Recording


@dataclass
class Callchains:
    """CSR callchains of index rows: entries of row k are ``ips[starts[k]:starts[k+1]]``."""

    starts: np.ndarray  # int64, len(rows) + 1
    ips: np.ndarray  # uint64

    def __len__(self) -> int:
        return len(self.starts) - 1

    def of(self, k: int) -> np.ndarray:
        """The entries of row ``k``."""
        return self.ips[self.starts[k]:self.starts[k + 1]]

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.starts)


def callchain_offset(layout: SampleLayout) -> int | None:
    """Byte offset of the callchain's ``nr`` from the start of the sample record, or None
    when the attr has no callchain or a variable-size field comes first."""
    attr = layout.attr
    st = attr.sample_type
    if not st & Sample.CALLCHAIN:
        return None
    pos = 8 + layout.fixed_size
    if st & Sample.READ:
        rf = attr.read_format
        if rf & ReadFormat.GROUP:
            return None
        pos += 8 * (1 + sum(1 for f in (ReadFormat.TOTAL_TIME_ENABLED,
                                        ReadFormat.TOTAL_TIME_RUNNING, ReadFormat.ID,
                                        ReadFormat.LOST) if rf & f))
    return pos


def sample_callchains(rec: Recording, rows: np.ndarray) -> Callchains:
    """The callchains of SAMPLE index ``rows`` (empty for a sample without one, or one whose
    callchain does not fit its record, or that cannot be read back)."""
    c = rec.columns
    rows = np.asarray(rows, dtype=np.int64)
    n = len(rows)
    nr = np.zeros(n, dtype=np.int64)
    pos = c["pos"][rows]
    size = c["size"][rows].astype(np.int64)
    src = c["src"][rows]
    attr = c["attr"][rows]
    dt = np.dtype(rec.order + "u8")
    groups: list[tuple[np.ndarray, int, int | None]] = []  # (sel, src, offset or None)
    for s in np.unique(src):
        if int(s) == NO_SOURCE:
            continue
        in_src = src == s
        for a in np.unique(attr[in_src]):
            if not 0 <= a < len(rec.attrs):
                continue
            sel = np.nonzero(in_src & (attr == a))[0]
            off = callchain_offset(rec.decoder.sample_layouts[int(a)])
            if off is None:
                if rec.attrs[int(a)].sample_type & Sample.CALLCHAIN:
                    groups.append((sel, int(s), None))
                continue
            u8 = np.frombuffer(rec.sources[int(s)].buf, dtype=np.uint8)  # type: ignore[attr-defined]
            fits = size[sel] >= off + 8
            sel = sel[fits]
            got = gather(u8, pos[sel] + off, dt).astype(np.int64)
            room = (size[sel] - off - 8) // 8
            ok = (got >= 0) & (got <= room)
            nr[sel[ok]] = got[ok]
            groups.append((sel[ok], int(s), off))
    slow: dict[int, list[int]] = {}
    for sel, _s, off in groups:
        if off is None:
            for k in sel.tolist():
                try:
                    chain = rec.decode(int(rows[k])).get("callchain", [])
                except ValueError:
                    chain = []
                slow[k] = chain
                nr[k] = len(chain)
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(nr, out=starts[1:])
    ips = np.zeros(int(starts[-1]), dtype=np.uint64)
    for sel, s, off in groups:
        if off is None or not len(sel):
            continue
        counts = nr[sel]
        total = int(counts.sum())
        if not total:
            continue
        u8 = np.frombuffer(rec.sources[s].buf, dtype=np.uint8)  # type: ignore[attr-defined]
        first = np.repeat(pos[sel] + off + 8, counts)
        within = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
        dest = np.repeat(starts[sel], counts) + within
        ips[dest] = gather(u8, first + 8 * within, dt)
    for k, chain in slow.items():
        ips[starts[k]:starts[k + 1]] = np.asarray(chain, dtype=np.uint64)
    return Callchains(starts, ips)
