"""``perftui report --stats``: perf report's ``--stats`` text, record counts by type and
samples (and lost samples) by event.

perf 6.1 (``perf_session__fprintf_nr_events``, ``events_stats__fprintf``,
``evlist__fprintf_nr_events``): a blank line, ``Aggregated stats:`` (with a note when the
recording has AUX area data), ``TOTAL`` and each record type that occurs, in type order,
``%16s events: %10d`` and its share ``(%4.1f%%)`` of the total (a record inside a COMPRESSED
one counts, and so does the COMPRESSED record); then per event with samples or lost samples
(``--skip-empty``, perf's default) ``NAME stats:`` and its ``SAMPLE`` and ``LOST_SAMPLES``
counts (the lost ones summed from the LOST_SAMPLES records of its id).  perf names the
user record types without perftui's ``HEADER_``.  An event's name is perf's
``evsel__name``: from the header's EVENT_DESC in a file; in a pipe-mode stream the EVENT_DESC
comes as a HEADER_FEATURE record, which ``--stats`` does not process (its tool has no
``feature`` callback), so there the name is made from the attr (``cycles:uH``, where the
report says ``cycles:u``).
"""

from __future__ import annotations

from typing import TextIO

from ..analysis.summary import lost_per_attr, record_counts, samples_per_attr
from ..perfdata import Feature, Recording
from ..textsafe import safe

_AUX_NOTE = " (excludes AUX area (e.g. instruction trace) decoded / synthesized events)"


def print_stats(rec: Recording, out: TextIO) -> None:
    """perf report --stats's text for ``rec`` (indexed)."""
    counts = record_counts(rec)
    total = sum(counts.values())
    note = _AUX_NOTE if Feature.AUXTRACE in rec.features else ""
    lines = ["", f"Aggregated stats:{note}", f"{'TOTAL':>16} events: {total:>10}"]
    for name, n in counts.items():
        share = f"  ({100.0 * n / total:4.1f}%)" if total else ""
        lines.append(f"{name.removeprefix('HEADER_'):>16} events: {n:>10}{share}")
    samples = samples_per_attr(rec)
    lost = lost_per_attr(rec)
    for k, a in enumerate(rec.attrs):
        if not samples[k] and not lost[k]:
            continue
        name = a.default_name() if rec.mode == "pipe" else a.display_name
        lines.append(safe(f"{name} stats:"))
        if samples[k]:
            lines.append(f"{'SAMPLE':>16} events: {int(samples[k]):>10}")
        if lost[k]:
            lines.append(f"{'LOST_SAMPLES':>16} events: {int(lost[k]):>10}")
    out.write("\n".join(lines) + "\n")
