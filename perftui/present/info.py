"""``perftui info`` (and the browser's ``i`` screen) as text for people.

Every string from a recording goes through :func:`~perftui.textsafe.safe`.
"""

from __future__ import annotations

import shlex
import textwrap
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from ..analysis.timespec import format_seconds
from ..perfdata import Recording
from ..perfdata.constants import feature_name
from ..textsafe import safe


def print_info(d: dict[str, Any], rec: Recording, out: TextIO,
               fmt_time: Callable[[int], str] | None = None, errors: bool = False) -> None:
    """``d`` (``info_dict``) as text; times through ``fmt_time`` (default: absolute
    seconds as perf prints them); ``errors`` lists every decode error with its offset."""
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
        show = fmt_time or (lambda t: f"{format_seconds(t, None)} s")
        line("time", f"{show(d['first_time'])} .. {show(d['last_time'])} "
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
    if errors and d["errors"]:
        w(f"\ndecode errors: {len(d['errors'])}\n")
        for e in d["errors"]:
            w(safe(f"  offset {e['offset']:#x} ({e['offset']}): {e['message']}") + "\n")
    for bit, msg in rec.feature_errors.items():
        w(safe(f"warning: feature {feature_name(bit)}: {msg}") + "\n")


def print_name_notes(notes: list[str] | None, out: TextIO, width: int = 0,
                     quiet: Sequence[str] = ()) -> None:
    """What naming the samples had to say (symbol files not found, stacks that could not be
    unwound, with counts and DSOs), once each, wrapped at ``width`` (0: not); ``None``: not
    named yet.  ``quiet``: the files expected to be missing (a memfd, a JIT without its
    /tmp/perf-PID.map), said here only, as perf says nothing of them."""
    out.write("\nsymbols and call stacks:\n")
    if notes is None:
        out.write("  the samples are not named yet (see this screen again once they are)\n")
        return
    if not notes and not quiet:
        out.write("  nothing to say: every file was found and every stack read\n")
    _wrapped(notes, out, width)
    if quiet:
        out.write("  expected to have no file (perf is silent about them):\n")
        _wrapped(quiet, out, width, "    ")


def _wrapped(notes: Sequence[str], out: TextIO, width: int, indent: str = "  ") -> None:
    for n in dict.fromkeys(notes):
        text = safe(n, 2000)
        if width > 8:
            text = textwrap.fill(text, width - len(indent), subsequent_indent="    ",
                                 break_on_hyphens=False)
        out.write(indent + text.replace("\n", "\n" + indent) + "\n")
