"""Where each kernel-module section was loaded: the section map of a recording.

Built from KMOD_SEC_MAP records (docs/format.md, "Type 83") and the module MMAP/MMAP2
records:

* An RFC perf writes a module's ``.text`` as its shrunk MMAP, not as a KMOD_SEC_MAP
  (docs/format.md, "Type 83"): for a module that has KMOD_SEC_MAP records but none for
  ``.text``, its MMAP becomes the ``.text`` entry.
* Without any KMOD_SEC_MAP record, each module MMAP is one entry for the whole module
  (section unknown).

**Overlap rule.** An address belongs to the KMOD_SEC_MAP entry that contains it; if
several do, to the one with the smallest range, then the one recorded last.  Only an
address inside no KMOD_SEC_MAP entry falls to an MMAP entry, by the same rule.  Empty
ranges own no address (they are listed with 0 samples).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...perfdata import KMOD_SEC_MAP, Recording, RecordType
from ...perfdata.constants import Misc
from .modnames import is_module_path, module_name

U64_MAX = 2**64 - 1
SOURCE_KMOD = "KMOD_SEC_MAP"
SOURCE_MMAP = "MMAP"


@dataclass
class SectionEntry:
    """One loaded range: a module section (or a whole module from the MMAP fallback)."""

    module: str
    section: str | None
    start: int
    end: int
    pgoff: int
    path: str
    source: str
    record: int = -1  # index row of the record it came from

    @property
    def size(self) -> int:
        return self.end - self.start

    @property
    def label(self) -> str:
        return f"[{self.module}]{self.section or ''}"


@dataclass
class SectionMap:
    """Entries plus a lookup table over elementary address intervals."""

    entries: list[SectionEntry] = field(default_factory=list)
    source: str = "none"
    warnings: list[str] = field(default_factory=list)
    bounds: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.uint64))
    owner: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int32))

    def modules(self) -> list[str]:
        seen: dict[str, None] = {}
        for e in self.entries:
            seen.setdefault(e.module)
        return list(seen)

    def lookup(self, ips: np.ndarray) -> np.ndarray:
        """Entry index owning each address, -1 for none (vectorised)."""
        ips = np.asarray(ips, dtype=np.uint64)
        if not len(self.owner):
            return np.full(len(ips), -1, dtype=np.int32)
        i = np.searchsorted(self.bounds, ips, side="right").astype(np.int64) - 1
        ok = (i >= 0) & (i < len(self.owner))
        out = np.full(len(ips), -1, dtype=np.int32)
        out[ok] = self.owner[i[ok]]
        return out

    def finish(self) -> None:
        """Build the lookup table from the entries (applies the overlap rule)."""
        live = [k for k, e in enumerate(self.entries) if e.end > e.start]
        if not live:
            return
        pts = sorted({p for k in live for p in (self.entries[k].start, self.entries[k].end)})
        bounds = np.array(pts, dtype=np.uint64)
        owner = np.full(len(pts) - 1, -1, dtype=np.int32)
        def rank(k: int) -> tuple[int, int, int]:
            e = self.entries[k]
            # KMOD before MMAP, then the smaller range, then the later record
            return (0 if e.source == SOURCE_KMOD else 1, e.size, -k)

        for k in sorted(live, key=rank, reverse=True):  # best last, so it wins
            e = self.entries[k]
            lo = int(np.searchsorted(bounds, np.uint64(e.start)))
            hi = int(np.searchsorted(bounds, np.uint64(e.end)))
            owner[lo:hi] = k
        self.bounds, self.owner = bounds, owner


def _kernel_map_rows(rec: Recording) -> np.ndarray:
    rows = rec.rows_of_type(RecordType.MMAP, RecordType.MMAP2, KMOD_SEC_MAP)
    c = rec.columns
    out: np.ndarray = rows[is_map_record(c["type"][rows], c["cpumode"][rows])]
    return out


def is_map_record(types: np.ndarray, cpumode: np.ndarray) -> np.ndarray:
    """Which records the section map is built from: kernel MMAP/MMAP2 and KMOD_SEC_MAP."""
    is_map = (types == RecordType.MMAP) | (types == RecordType.MMAP2)
    out: np.ndarray = (is_map & (cpumode == Misc.KERNEL)) | (types == KMOD_SEC_MAP)
    return out


MapRecord = tuple[int, int, "dict[str, Any] | ValueError"]  # (row, file offset, fields)


def _indexed_map_records(rec: Recording) -> Iterator[MapRecord]:
    for i in _kernel_map_rows(rec):
        i = int(i)
        try:
            f: dict[str, Any] | ValueError = rec.decode(i)
        except ValueError as err:
            f = err
        yield i, rec.outer_offset(i), f


def build_section_map(rec: Recording, records: Iterable[MapRecord] | None = None
                      ) -> SectionMap:
    """The section map of an indexed recording, or of the map ``records`` (row, file
    offset, decoded fields or the decoding error) met while walking one."""
    kmod: list[SectionEntry] = []
    mmaps: list[SectionEntry] = []
    warnings: list[str] = []
    seen: set[tuple[str, str | None, int, int]] = set()
    for i, at, f in (_indexed_map_records(rec) if records is None else records):
        if isinstance(f, ValueError):
            warnings.append(f"record at offset {at}: {f}")
            continue
        if f["type"] == "KMOD_SEC_MAP":
            path = f["filename"]
            if "/" not in path and ".ko" not in path:
                warnings.append(f"KMOD_SEC_MAP at offset {at} names no "
                                f"module file ({path!r}); skipped")
                continue
            e = SectionEntry(module_name(path), f["section"], f["start"],
                             min(f["start"] + f["len"], U64_MAX), f["pgoff"], path,
                             SOURCE_KMOD, i)
            key = (e.module, e.section, e.start, e.end)
            if key not in seen:
                seen.add(key)
                kmod.append(e)
        else:
            path = f["filename"]
            if not is_module_path(path):
                continue
            e = SectionEntry(module_name(path), None, f["addr"],
                             min(f["addr"] + f["len"], U64_MAX), f["pgoff"], path,
                             SOURCE_MMAP, i)
            key = (e.module, None, e.start, e.end)
            if key not in seen:
                seen.add(key)
                mmaps.append(e)
    smap = SectionMap(warnings=warnings)
    if kmod:
        smap.source = SOURCE_KMOD
        with_text = {e.module for e in kmod if e.section == ".text"}
        with_kmod = {e.module for e in kmod}
        for m in mmaps:
            if m.module in with_kmod and m.module not in with_text:
                m.section = ".text"  # the RFC's shrunk module map (docs/format.md)
        smap.entries = kmod + mmaps
    elif mmaps:
        smap.source = SOURCE_MMAP
        smap.entries = mmaps
    smap.finish()
    return smap
