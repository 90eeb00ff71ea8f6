"""Tracepoint fields of many samples at once: each sample's RAW data found after its
callchain, and a field of it read where the recording's own format file puts it
(:mod:`.tracefmt`), gathered with numpy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .constants import ReadFormat, Sample
from .index import NO_SOURCE, gather
from .tracefmt import TraceField

if TYPE_CHECKING:
    from .recording import Recording

_INT = (1, 2, 4, 8)  # the integer sizes a field may have


@dataclass
class RawSpans:
    """Where each sample's RAW data is: its source, the data's first byte and its size
    (``size`` -1: the sample has no RAW data, or its record is too short to hold it)."""

    src: np.ndarray  # int64
    start: np.ndarray  # int64, byte position of the data in its source
    size: np.ndarray  # int64

    def take(self, sel: np.ndarray) -> RawSpans:
        """The spans of samples ``sel`` (positions in these)."""
        return RawSpans(self.src[sel], self.start[sel], self.size[sel])

    def field(self, rec: Recording, f: TraceField) -> tuple[np.ndarray, np.ndarray]:
        """``f`` of every sample as int64 (sign- or zero-extended as its format says) and
        whether the sample's RAW data holds it; an array field is not read (False)."""
        n = len(self.size)
        out = np.zeros(n, np.int64)
        ok = (self.size >= f.offset + f.size) & (f.size in _INT) & (not f.array)
        if not ok.any():
            return out, ok
        dt = np.dtype(f"{rec.order}{'i' if f.signed else 'u'}{f.size}")
        for s in np.unique(self.src[ok]).tolist():
            sel = np.flatnonzero(ok & (self.src == s))
            u8 = np.frombuffer(rec.sources[s].buf, dtype=np.uint8)
            at = self.start[sel] + f.offset
            out[sel] = u8[at[:, None] + np.arange(f.size)].view(dt).ravel().astype(np.int64)
        return out, ok


def raw_spans(rec: Recording, rows: np.ndarray) -> RawSpans:
    """The RAW data of SAMPLE index ``rows``: after the fixed fields, a READ block (not a
    group's) and the callchain as recorded (its ``nr`` read per sample)."""
    c = rec.columns
    rows = np.asarray(rows, dtype=np.int64)
    n = len(rows)
    src = c["src"][rows].astype(np.int64)
    pos = c["pos"][rows].astype(np.int64)
    size = c["size"][rows].astype(np.int64)
    attr = c["attr"][rows]
    start = np.zeros(n, np.int64)
    got = np.full(n, -1, np.int64)
    u4 = np.dtype(rec.order + "u4")
    u8t = np.dtype(rec.order + "u8")
    for a in np.unique(attr).tolist():
        if not 0 <= a < len(rec.attrs):
            continue
        at = _raw_offset(rec, a)
        if at is None:
            continue
        off, chain = at
        for s in np.unique(src[attr == a]).tolist():
            if s == NO_SOURCE:
                continue
            sel = np.flatnonzero((attr == a) & (src == s))
            u8 = np.frombuffer(rec.sources[s].buf, dtype=np.uint8)
            here = np.full(len(sel), off, np.int64)
            if chain:
                fits = size[sel] >= off + 8
                nr = np.zeros(len(sel), np.int64)
                nr[fits] = np.minimum(gather(u8, pos[sel[fits]] + off, u8t), 1 << 16)
                here = np.where(fits, off + 8 + 8 * nr, size[sel])
            fits = size[sel] >= here + 4
            sel, here = sel[fits], here[fits]
            length = gather(u8, pos[sel] + here, u4, aligned=False).astype(np.int64)
            inside = here + 4 + length <= size[sel]
            start[sel[inside]] = pos[sel[inside]] + here[inside] + 4
            got[sel[inside]] = length[inside]
    return RawSpans(src, start, got)


def _raw_offset(rec: Recording, a: int) -> tuple[int, bool] | None:
    """Where attr ``a``'s samples have their callchain's ``nr`` (True) or, without one,
    their RAW size (False); None without RAW or after a group's READ block."""
    attr = rec.attrs[a]
    st = attr.sample_type
    if not st & Sample.RAW:
        return None
    off = 8 + rec.decoder.sample_layouts[a].fixed_size
    if st & Sample.READ:
        rf = attr.read_format
        if rf & ReadFormat.GROUP:
            return None
        off += 8 * (1 + sum(1 for f in (ReadFormat.TOTAL_TIME_ENABLED,
                                        ReadFormat.TOTAL_TIME_RUNNING, ReadFormat.ID,
                                        ReadFormat.LOST) if rf & f))
    return off, bool(st & Sample.CALLCHAIN)
