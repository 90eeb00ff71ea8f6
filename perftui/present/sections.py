"""``perftui sections``: the module-section report as stable JSON and as text.

Every string from a recording goes through :func:`~perftui.textsafe.safe` in text.
"""

from __future__ import annotations

from typing import Any, TextIO

from ..analysis.sectionreport import SectionReport
from ..symbols.options import ASSUMED_TEXT
from ..textsafe import safe


def sections_json(rep: SectionReport, symbols: bool = False, files: bool = True
                  ) -> dict[str, Any]:
    """The stable JSON object of ``perftui sections --json`` (``files``: find and read each
    module's file for its build id and notes; False: only what is known without reading
    one, as the browser's section pane needs, drawn before any .ko is read)."""
    mods: dict[str, dict[str, Any]] = {}
    for k, e in enumerate(rep.smap.entries):
        m = mods.get(e.module)
        if m is None:
            mf = rep.files.get(e.module, e.path) if files else None
            m = mods[e.module] = {
                "name": e.module, "path": e.path,
                "file": rep.files.paths.get(e.module),
                "build_id": rep.files.build_ids.get(e.module)
                or (mf.build_id if mf else None),
                "samples": 0, "sections": [],
            }
        n = int(rep.counts.per_entry[k]) if len(rep.counts.per_entry) else 0
        sec: dict[str, Any] = {"name": e.section, "start": e.start, "end": e.end,
                               "pgoff": e.pgoff, "samples": n, "source": e.source}
        if len(rep.rec.attrs) > 1:
            sec["events"] = {a.display_name: int(c) for a, c in
                             zip(rep.rec.attrs, rep.counts.by_event(k), strict=True)}
        if symbols:
            sec["symbols"] = [{"name": s, "samples": c} for s, c in rep.symbol_counts(k)]
            if rep.assumed_text(k):
                sec["symbols_note"] = ASSUMED_TEXT
        m["sections"].append(sec)
        m["samples"] += n
    modules = sorted(mods.values(), key=lambda m: (-m["samples"], m["name"]))
    for m in modules:
        m["sections"].sort(key=lambda s: (-s["samples"], s["start"]))
    warnings = list(rep.smap.warnings)
    for mod in sorted(rep.files.notes):
        warnings.append(f"{mod}: {rep.files.notes[mod]}")
    if rep.smap.source == "none":
        warnings.append("this recording has no KMOD_SEC_MAP record and no kernel-module "
                        "MMAP: no module sections to show")
    return {
        "source": rep.smap.source,
        "modules": modules,
        "kernel_samples": rep.counts.kernel_samples,
        "unattributed_kernel_samples": rep.counts.unattributed_kernel_samples,
        "user_samples": rep.counts.user_samples,
        "other_samples": rep.counts.other_samples,
        "warnings": warnings,
    }


def print_sections(d: dict[str, Any], out: TextIO, symbols: bool,
                   show_all: bool = False) -> None:
    w = out.write
    total = d["kernel_samples"] or 1
    w(f"source: {d['source']}   kernel samples: {d['kernel_samples']}   "
      f"in no module section: {d['unattributed_kernel_samples']}   "
      f"user samples: {d['user_samples']}\n")
    if d["modules"]:
        w(f"\n  {'section':<22} {'address range':<37} {'size':>9} {'samples':>9} "
          f"{'%kernel':>7}  source\n")
    for m in d["modules"]:
        bid = f"  build id {m['build_id']}" if m["build_id"] else ""
        w("\n" + safe(f"[{m['name']}]  {m['samples']} samples  {m['path']}{bid}") + "\n")
        quiet = [s for s in m["sections"] if not s["samples"]]
        for s in m["sections"]:
            if not s["samples"] and not show_all:
                continue
            name = s["name"] or "(whole module)"
            pct = 100.0 * s["samples"] / total
            w(safe(f"  {name:<22} {s['start']:#018x}-{s['end']:#018x} {s['end'] - s['start']:>9}"
                   f" {s['samples']:>9} {pct:6.2f}%  {s['source']}") + "\n")
            if symbols:
                if s.get("symbols_note"):
                    w(f"      ({s['symbols_note']})\n")
                for sym in s.get("symbols", []):
                    w(safe(f"      {sym['samples']:>9}  {sym['name']}") + "\n")
        if quiet and not show_all:
            w(f"  ... and {len(quiet)} sections without samples (--all lists them)\n")
    for m in d["warnings"]:
        w(safe(f"warning: {m}") + "\n")
