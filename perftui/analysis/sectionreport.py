"""The module-section report: section map + sample counts + module files, per filter.

What ``perftui sections`` prints and the browser's section pane shows (the words are in
``present.sections``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..perfdata import Feature, Recording
from ..symbols.modules.modfiles import ModuleFiles
from ..symbols.modules.sectionmap import SOURCE_MMAP, SectionMap, build_section_map
from ..symbols.modules.sectiontable import NO_SYMBOL
from .filters import Filter, FilterContext
from .sections import (
    SectionCounts,
    count_sections,
    keep_section_map,
    kept_counts,
    kept_section_map,
    stream_sections,
)

#: the section a module's MMAP is taken for without a section map (perf's rule)
ASSUMED_SECTION = ".text"


@dataclass
class SectionReport:
    """Everything the section views need, computed once per filter."""

    rec: Recording
    smap: SectionMap
    counts: SectionCounts
    files: ModuleFiles

    def symbols_section(self, entry: int) -> str | None:
        """The section of the module file whose symbols name an entry's addresses (None:
        no file, or no such section).  A whole module from the MMAP fallback (no section
        map) is named from ``.text`` at the MMAP start, as perf does (:meth:`assumed_text`)."""
        e = self.smap.entries[entry]
        mf = self.files.get(e.module, e.path)
        section = ASSUMED_SECTION if e.section is None and e.source == SOURCE_MMAP \
            else e.section
        if mf is None or section is None or section not in mf.sections:
            return None
        return section

    def assumed_text(self, entry: int) -> bool:
        """Whether an entry's symbols come from ``.text`` assumed at the module MMAP's
        start (no KMOD_SEC_MAP for it): the views say so (``ASSUMED_TEXT``)."""
        e = self.smap.entries[entry]
        return e.section is None and self.symbols_section(entry) is not None

    def symbol_counts(self, entry: int) -> list[tuple[str, int]]:
        """(symbol, samples) in one section entry, by count; needs the module file."""
        e = self.smap.entries[entry]
        ips, weights = self.counts.ip_counts(entry)
        if not len(ips):
            return []
        section = self.symbols_section(entry)
        if section is None:
            return [(NO_SYMBOL, int(weights.sum()))]
        mf = self.files.get(e.module, e.path)
        assert mf is not None
        offsets = ips - np.uint64(e.start)
        return mf.symbols(section).counts(offsets, weights)

    def symbol_of(self, entry: int, ips: np.ndarray) -> list[str]:
        """``symbol+0xoff`` for each ip of an entry (``[module]section+0xoff`` when unknown),
        looked up for all ips at once."""
        e = self.smap.entries[entry]
        offs = np.asarray(ips, dtype=np.uint64) - np.uint64(e.start)
        section = self.symbols_section(entry)
        mf = self.files.get(e.module, e.path)
        if mf is None or section is None:
            return [f"{e.label}+{int(o):#x}" for o in offs]
        table = mf.symbols(section)
        idx = table.lookup(offs)
        out = []
        for o, k in zip(offs.tolist(), idx.tolist(), strict=True):
            if k < 0:
                out.append(f"{e.label}+{o:#x}")
            else:
                out.append(f"{table.names[k]}+{o - int(table.starts[k]):#x}")
        return out

    def load_files(self) -> None:
        """Find and load every module file of the map now (slow: a worker calls this)."""
        for e in self.smap.entries:
            self.files.get(e.module, e.path)


def kept_section_report(rec: Recording, modules_dirs: list[str] | None = None
                        ) -> SectionReport | None:
    """The unfiltered report from what the index keeps (a cache entry: no pass over its
    rows, nor a check of them); None when it keeps no report."""
    kept = kept_section_map(rec)
    if kept is None:
        return None
    smap, build_ids = kept
    counts = kept_counts(rec, smap)
    if counts is None:
        return None
    files = ModuleFiles(list(modules_dirs or []), rec.feature(Feature.OSRELEASE), build_ids)
    return SectionReport(rec, smap, counts, files)


def keep_first_screen(rec: Recording, smap: SectionMap | None = None,
                      files: ModuleFiles | None = None,
                      modules_dirs: list[str] | None = None) -> None:
    """What a reopened browser draws its first screen from, kept with a walked index
    (:meth:`~perftui.perfdata.recording.Recording.save_index` writes it to the cache): the
    timeline's fine bins, the unfiltered section counts and the section map.  Without
    them a reopen counts them again over every row before its screen is complete (~9 s
    at 50 M records)."""
    from .timeline import keep_fine_bins

    smap = smap if smap is not None else build_section_map(rec)
    files = files if files is not None else ModuleFiles.of(rec, modules_dirs)
    keep_fine_bins(rec)
    count_sections(rec, smap)  # unfiltered counts, kept (no-op if they are)
    keep_section_map(rec, smap, files.build_ids)


def streamed_section_report(rec: Recording, modules_dirs: list[str] | None = None,
                            flt: Filter | None = None) -> SectionReport:
    """The report of a recording without an index, counted in one walk (constant memory;
    its sections cannot list their samples)."""
    s = stream_sections(rec, flt)
    files = ModuleFiles.of(rec, modules_dirs, build_id_records=s.build_id_records)
    return SectionReport(rec, s.smap, s.counts, files)


def section_report(rec: Recording, modules_dirs: list[str] | None = None,
                   flt: Filter | None = None, smap: SectionMap | None = None,
                   files: ModuleFiles | None = None,
                   ctx: FilterContext | None = None) -> SectionReport:
    """Build the report of an indexed recording (reuse ``smap``/``files`` across filters)."""
    smap = smap or build_section_map(rec)
    counts = count_sections(rec, smap, flt, ctx)
    if files is None:
        files = ModuleFiles.of(rec, modules_dirs)
    return SectionReport(rec, smap, counts, files)
