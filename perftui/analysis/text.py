"""Text reports for people: ``perftui info`` and ``perftui sections`` (and the ``i`` screen).

Every string from a recording goes through :func:`~perftui.textsafe.safe`.
"""

from __future__ import annotations

import shlex
from typing import Any, TextIO

from ..perfdata import Recording
from ..perfdata.constants import feature_name
from ..textsafe import safe


def print_info(d: dict[str, Any], rec: Recording, out: TextIO) -> None:
    w = out.write

    def line(k: str, v: Any) -> None:
        if v is not None and v != "" and v != []:
            w(safe(f"{k:<16} {v}") + "\n")

    line("file", d["path"])
    line("mode", f"{d['mode']}, {d['byte_order']}-endian")
    line("perf version", d["perf_version"])
    line("hostname", d["hostname"])
    line("os release", d["os_release"])
    line("arch", d["arch"])
    line("cpu", d["cpudesc"])
    if d["nr_cpus_online"] is not None:
        line("cpus", f"{d['nr_cpus_online']} online of {d['nr_cpus_avail']} available")
    if d["total_mem_kb"]:
        line("memory", f"{d['total_mem_kb']} kB")
    line("cmdline", shlex.join(d["cmdline"]))
    if d["last_time"]:
        line("time", f"{d['first_time'] / 1e9:.6f} .. {d['last_time'] / 1e9:.6f} s "
             f"({d['duration_ns'] / 1e9:.3f} s)")
    line("features", ", ".join(d["features"]))
    w("\nevents:\n")
    for e in d["events"]:
        w(safe(f"  {e['name']:<24} type {e['type']} config {e['config']:#x} "
               f"samples {e['samples']}  [{'|'.join(e['sample_type'])}]") + "\n")
    if d["samples_with_unknown_id"]:
        w(f"  samples with an id not in the header: {d['samples_with_unknown_id']}\n")
    w(f"\nrecords: {d['total_records']}\n")
    for name, n in sorted(d["records"].items(), key=lambda kv: -kv[1]):
        w(f"  {name:<22} {n:>10}\n")
    for m in d["warnings"]:
        w(safe(f"warning: {m}") + "\n")
    for bit, msg in rec.feature_errors.items():
        w(safe(f"warning: feature {feature_name(bit)}: {msg}") + "\n")


def print_sections(d: dict[str, Any], out: TextIO, symbols: bool,
                   show_all: bool = False) -> None:
    w = out.write
    total = d["kernel_samples"] or 1
    w(f"source: {d['source']}   kernel samples: {d['kernel_samples']}   "
      f"in no module section: {d['unattributed_kernel_samples']}   "
      f"user samples: {d['user_samples']}\n")
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
                for sym in s.get("symbols", []):
                    w(safe(f"      {sym['samples']:>9}  {sym['name']}") + "\n")
        if quiet and not show_all:
            w(f"  ... and {len(quiet)} sections without samples (--all lists them)\n")
    for m in d["warnings"]:
        w(safe(f"warning: {m}") + "\n")
