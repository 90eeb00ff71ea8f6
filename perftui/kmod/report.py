"""The module-section report: map + counts + module files -> one stable structure.

This is what ``perftui sections --json`` prints and what the browser's section pane shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..analysis.filters import SampleFilter
from ..analysis.sections import SectionCounts, count_sections
from ..perfdata import Feature, Recording, RecordType
from .elf import ModuleFile, ModuleFileError, load_module
from .locate import find_module_file
from .names import is_module_path, module_name
from .sectionmap import SectionMap, build_section_map

NO_SYMBOL = "[no symbol]"


def recording_build_ids(rec: Recording) -> dict[str, str]:
    """Module name -> build id, from the BUILD_ID feature and HEADER_BUILD_ID records."""
    out: dict[str, str] = {}
    entries = list(rec.feature(Feature.BUILD_ID) or [])
    rows = np.nonzero(rec.columns["type"] == RecordType.HEADER_BUILD_ID)[0]
    for i in rows:
        try:
            entries.append(rec.decode(int(i)))
        except ValueError:
            continue
    for e in entries:
        name = e.get("filename", "")
        if is_module_path(name) and e.get("build_id"):
            out[module_name(name)] = e["build_id"]
    return out


@dataclass
class ModuleFiles:
    """Finds and loads module ELF files once per module; remembers why one is missing."""

    modules_dirs: list[str]
    os_release: str | None
    build_ids: dict[str, str]
    debug_dir: str | None = None
    files: dict[str, ModuleFile | None] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    paths: dict[str, str | None] = field(default_factory=dict)

    def get(self, module: str, record_path: str | None) -> ModuleFile | None:
        if module in self.files:
            return self.files[module]
        bid = self.build_ids.get(module)
        loc = find_module_file(module, record_path, self.modules_dirs, self.os_release,
                               build_id=bid, debug_dir=self.debug_dir)
        mf: ModuleFile | None = None
        self.paths[module] = loc.path
        if loc.path is None:
            self.notes[module] = loc.message or "module file not found"
        else:
            try:
                mf = load_module(loc.path)
            except ModuleFileError as e:
                self.notes[module] = str(e)
            if loc.message:
                self.notes[module] = loc.message
        self.files[module] = mf
        return mf


@dataclass
class SectionReport:
    """Everything the section views need, computed once per filter."""

    rec: Recording
    smap: SectionMap
    counts: SectionCounts
    files: ModuleFiles

    def symbol_counts(self, entry: int) -> list[tuple[str, int]]:
        """(symbol, samples) in one section entry, by count; needs the module file."""
        e = self.smap.entries[entry]
        ips = self.counts.ips_of(entry)
        if not len(ips):
            return []
        mf = self.files.get(e.module, e.path)
        if mf is None or e.section is None or e.section not in mf.sections:
            return [(NO_SYMBOL, len(ips))]
        offsets = ips - np.uint64(e.start)
        return mf.symbols(e.section).counts(offsets)

    def symbol_of(self, entry: int, ips: np.ndarray) -> list[str]:
        """``symbol+0xoff`` for each ip of an entry (``[module]section+0xoff`` when unknown),
        looked up for all ips at once."""
        e = self.smap.entries[entry]
        offs = np.asarray(ips, dtype=np.uint64) - np.uint64(e.start)
        mf = self.files.get(e.module, e.path)
        if mf is None or e.section is None or e.section not in mf.sections:
            return [f"{e.label}+{int(o):#x}" for o in offs]
        table = mf.symbols(e.section)
        idx = table.lookup(offs)
        out = []
        for o, k in zip(offs.tolist(), idx.tolist(), strict=True):
            if k < 0:
                out.append(f"{e.label}+{o:#x}")
            else:
                out.append(f"{table.names[k]}+{o - int(table.starts[k]):#x}")
        return out

    def as_dict(self, symbols: bool = False) -> dict[str, Any]:
        """The stable JSON object of ``perftui sections --json``."""
        mods: dict[str, dict[str, Any]] = {}
        for k, e in enumerate(self.smap.entries):
            m = mods.get(e.module)
            if m is None:
                mf = self.files.get(e.module, e.path)
                m = mods[e.module] = {
                    "name": e.module, "path": e.path,
                    "file": self.files.paths.get(e.module),
                    "build_id": self.files.build_ids.get(e.module)
                    or (mf.build_id if mf else None),
                    "samples": 0, "sections": [],
                }
            n = int(self.counts.per_entry[k]) if len(self.counts.per_entry) else 0
            sec: dict[str, Any] = {"name": e.section, "start": e.start, "end": e.end,
                                   "pgoff": e.pgoff, "samples": n, "source": e.source}
            if len(self.rec.attrs) > 1:
                sec["events"] = {a.display_name: int(c) for a, c in
                                 zip(self.rec.attrs, self.counts.by_event(k), strict=True)}
            if symbols:
                sec["symbols"] = [{"name": s, "samples": c} for s, c in self.symbol_counts(k)]
            m["sections"].append(sec)
            m["samples"] += n
        modules = sorted(mods.values(), key=lambda m: (-m["samples"], m["name"]))
        for m in modules:
            m["sections"].sort(key=lambda s: (-s["samples"], s["start"]))
        warnings = list(self.smap.warnings)
        for mod in sorted(self.files.notes):
            warnings.append(f"{mod}: {self.files.notes[mod]}")
        if self.smap.source == "none":
            warnings.append("this recording has no KMOD_SEC_MAP record and no kernel-module "
                            "MMAP: no module sections to show")
        return {
            "source": self.smap.source,
            "modules": modules,
            "kernel_samples": self.counts.kernel_samples,
            "unattributed_kernel_samples": self.counts.unattributed_kernel_samples,
            "user_samples": self.counts.user_samples,
            "other_samples": self.counts.other_samples,
            "warnings": warnings,
        }


def section_report(rec: Recording, modules_dirs: list[str] | None = None,
                   flt: SampleFilter | None = None, smap: SectionMap | None = None,
                   files: ModuleFiles | None = None) -> SectionReport:
    """Build the report of an indexed recording (reuse ``smap``/``files`` across filters)."""
    smap = smap or build_section_map(rec)
    counts = count_sections(rec, smap, flt)
    if files is None:
        files = ModuleFiles(list(modules_dirs or []), rec.feature(Feature.OSRELEASE),
                            recording_build_ids(rec))
    return SectionReport(rec, smap, counts, files)
