"""``perftui diff``: the compared table as perf diff --stdio prints it, and as JSON.

Every string from a recording goes through :func:`~perftui.textsafe.safe` in text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO

from ..analysis.diff import Diff, DiffRow, EventDiff, Mismatch
from ..analysis.offcpu import OFFCPU_EVENT
from ..analysis.sortkeys import SORT_KEYS, Names
from ..textsafe import safe
from .report import HEADER_CELL, TEXT_HEADERS, text_widths, time_text

#: perf diff's column of the computation, and its width (builtin-diff.c ``columns``).
COMPUTE_COLUMNS = {"delta-abs": ("Delta Abs", 9), "delta": ("Delta", 7),
                   "ratio": ("Ratio", 14)}


def mismatch_text(m: Mismatch) -> str:
    """One line saying what differs."""
    return f"different {m.what}: {m.old} (OLD) and {m.new} (NEW); compared anyway"


def key_value(d: Diff, row: DiffRow, i: int) -> Any:
    """The JSON value of sort key ``i`` of a row (an unresolved symbol: its address)."""
    return SORT_KEYS[d.keys[i]].ident_json(row.key[i], d.locs_of(row), row.loc)


def is_kernel(d: Diff, row: DiffRow) -> bool:
    """perf's ``[k]``: the row's location is in the kernel or a module."""
    locs = d.locs_of(row)
    return locs.dsos[locs.dso[row.loc]].kernel


def side_names(d: Diff, row: DiffRow) -> Names:
    """The names of the side that names ``row`` (its thread names for ``pid``)."""
    return Names(d.locs_of(row), str, lambda tid: d.thread_name(row, tid))


def key_text(d: Diff, row: DiffRow, i: int) -> str:
    """Sort key ``i`` of a row as perf diff prints it."""
    return SORT_KEYS[d.keys[i]].text(side_names(d, row), row.key[i], row.loc)


def baseline_cell(row: DiffRow) -> str:
    return f"{row.baseline:6.2f}%" if row.baseline is not None else ""


def compute_cell(d: Diff, row: DiffRow) -> str:
    """The computation's cell: ``%+4.2F%%`` for deltas, ``%14.6F`` for ratios, ``N/A`` for a
    ratio without baseline, empty without a NEW side (perf's hpp__entry_pair)."""
    if row.new is None:
        return ""
    if d.compute == "ratio":
        if row.old is None:
            return "N/A"
        return f"{row.ratio:14.6f}" if row.ratio is not None and row.ratio > 0 else ""
    return f"{row.delta or 0.0:+4.2f}%"


def time_cells(row: DiffRow) -> str:
    """OLD's and NEW's time of a row of a timed event (empty where a side has none)."""
    return "".join(f"{time_text(e.period) if e is not None else '':>9}  "
                   for e in (row.old, row.new))


def _r(x: float | None) -> float | None:
    return round(x, 6) if x is not None else None


def row_json(d: Diff, row: DiffRow) -> dict[str, Any]:
    out: dict[str, Any] = {k: key_value(d, row, i) for i, k in enumerate(d.keys)}
    for k in d.keys:
        out.update(SORT_KEYS[k].json_extra(side_names(d, row), row.loc))
    out.update(baseline=_r(row.baseline), new=_r(row.share), delta=_r(row.delta),
               ratio=_r(row.ratio),
               baseline_period=row.old.period if row.old is not None else None,
               new_period=row.new.period if row.new is not None else None)
    return out


def diff_json(ed: EventDiff, old_file: str, new_file: str) -> dict[str, Any]:
    """The stable JSON object of one event's diff (rows in perf diff's order)."""
    d = ed.diff
    return {
        "event": ed.event,
        "old": {"file": old_file, "total_period": d.old.total_period,
                "total_samples": d.old.total_samples},
        "new": {"file": new_file, "total_period": d.new.total_period,
                "total_samples": d.new.total_samples} if ed.in_new else None,
        "sort": list(d.keys), "compute": d.compute,
        "rows": [row_json(d, r) for r in d.rows],
        **({"period_unit": "ns"} if ed.event == OFFCPU_EVENT else {}),
    }


def diffs_json(eds: list[EventDiff], old_file: str, new_file: str,
               warnings: list[Mismatch], keys: tuple[str, ...], compute: str
               ) -> dict[str, Any]:
    """The whole answer: the first event's diff at the top (``events``: all of them when
    there are several), and what differs between the recordings."""
    docs = [diff_json(ed, old_file, new_file) for ed in eds]
    out: dict[str, Any] = dict(docs[0]) if docs else {
        "event": None, "old": {"file": old_file, "total_period": 0, "total_samples": 0},
        "new": {"file": new_file, "total_period": 0, "total_samples": 0},
        "sort": list(keys), "compute": compute, "rows": []}
    if len(docs) > 1:
        out["events"] = docs
    out["warnings"] = [{"what": m.what, "old": m.old, "new": m.new,
                        "message": mismatch_text(m)} for m in warnings]
    return out


def print_preamble(old_file: str, new_file: str, warnings: list[Mismatch],
                   out: TextIO) -> None:
    """Which file is which (perf diff -v's lines) and what differs, as comment lines."""
    w = out.write
    w("# Data files:\n")
    w(safe(f"#  [0] {old_file} (Baseline)") + "\n")
    w(safe(f"#  [1] {new_file}") + "\n#\n")
    for m in warnings:
        w(safe(f"# Warning: {mismatch_text(m)}") + "\n")
    if warnings:
        w("#\n")


def print_diff(ed: EventDiff, out: TextIO, first: bool = True, sep: str | None = None
               ) -> None:
    """perf diff --stdio's table of one event; ``sep``: perf's ``-t`` (as report's, and
    the baseline written without its ``%``, the cells left-aligned)."""
    d = ed.diff
    w = out.write
    w(("" if first else "\n") + safe(f"# Event '{ed.event}'") + "\n#\n")
    if not ed.in_new:
        w(safe(f"# (no event '{ed.event}' in NEW: baseline only)") + "\n#\n")
    cname, cwidth = COMPUTE_COLUMNS[d.compute]
    cwidth = max(cwidth, len(cname))
    timed = ed.event == OFFCPU_EVENT  # periods in ns: each side's time of the row
    times = "".join(f"{h:>9}  " for h in ("Base time", "Time")) if timed else ""
    heads = [TEXT_HEADERS[k] for k in d.keys]
    cells = [[key_text(d, r, i) for i in range(len(d.keys))] for r in d.rows]
    widths = text_widths(tuple(d.keys), [[c[i] for c in cells] for i in range(len(heads))],
                         any(d.locs_of(r).name[r.loc] is None for r in d.rows))
    padded = bool(d.keys) and SORT_KEYS[d.keys[-1]].padded_last  # (as perf report's)
    if sep:
        _separated(d, cells, widths, (cname, cwidth), timed, padded, sep, w)
        return
    w("# " + f"{'Baseline':>8}  {cname:>{cwidth}}  {times}"
      + "  ".join(f"{h:<{widths[i]}}"[:HEADER_CELL] for i, h in enumerate(heads)) + "\n")
    w("# " + "." * 8 + "  " + "." * cwidth + "  " + ("." * 9 + "  ") * (2 if timed else 0)
      + "  ".join("." * widths[i] for i in range(len(heads))) + "\n#\n")
    for r, c in zip(d.rows, cells, strict=True):
        line = (f"  {baseline_cell(r):>8}  {compute_cell(d, r):>{cwidth}}  "
                + (time_cells(r) if timed else "")
                + "  ".join(f"{v:<{widths[i]}}" for i, v in enumerate(c)))
        w(safe(line if padded else line.rstrip()) + "\n")


def _separated(d: Diff, cells: list[list[str]], widths: list[int], compute: tuple[str, int],
               timed: bool, padded: bool, sep: str, w: Callable[[str], object]) -> None:
    """perf diff -t's header and rows: the columns joined by ``sep``, every cell but the
    last left-aligned to its width (hist_entry__snprintf_alignment), the baseline
    ``%.2f`` (no ``%``), a key's ``sep[0]`` written ``.`` (repsep_snprintf)."""
    cname, cwidth = compute
    heads = [f"{'Baseline':>8}", f"{cname:>{cwidth}}",
             *([f"{h:>9}" for h in ("Base time", "Time")] if timed else []),
             *(f"{TEXT_HEADERS[k]:<{widths[i]}}"[:HEADER_CELL] for i, k in enumerate(d.keys))]
    w("# " + sep.join(heads) + "\n")
    for r, c in zip(d.rows, cells, strict=True):
        vals = [f"{r.baseline:.2f}" if r.baseline is not None else "", compute_cell(d, r),
                *((time_text(e.period) if e is not None else "" for e in (r.old, r.new))
                  if timed else ()),
                *(v.replace(sep[0], ".") for v in c)]
        sizes = [8, cwidth, *([9, 9] if timed else []), *widths]
        parts = [f"{v:<{n}}" for v, n in zip(vals, sizes, strict=True)]
        if not padded:
            parts[-1] = parts[-1].rstrip()
        w(sep.join(map(safe, parts)) + "\n")  # (each cell made safe: a tab SEP stays one)
