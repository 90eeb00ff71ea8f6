"""``perftui report``: the hotspot table as perf report --stdio prints it, and as JSON.

Every string from a recording goes through :func:`~perftui.textsafe.safe` in text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from ..analysis.eventgroup import GroupTable
from ..analysis.offcpu import OFFCPU_EVENT
from ..analysis.profile import Profile, ProfileRow
from ..analysis.sortkeys import SORT_KEYS, UNRESOLVED_DSO_WIDTH, Names
from ..symbols.naming.locations import Locations
from ..textsafe import safe

__all__ = ["HEADERS", "TEXT_HEADERS", "Names", "RowGraph", "TableOptions", "frame_name",
           "key_text", "key_value",
           "lost_samples_header", "print_group_report", "print_report", "report_json",
           "sample_count", "text_widths", "time_text"]

#: each key's heading in the browser and the JSON's
HEADERS = {k.name: k.header for k in SORT_KEYS.values()}
#: the text report's headers: perf's own (sort_thread's is "    Pid:Command", 15 wide)
TEXT_HEADERS = {k.name: k.stdio_header for k in SORT_KEYS.values()}


def key_value(prof: Profile, names: Names, row: ProfileRow, i: int) -> Any:
    """The JSON value of sort key ``i`` of a row."""
    return SORT_KEYS[prof.keys[i]].value(prof.codes, names, row.key[i], row.loc)


def sample_count(n: int) -> str:
    """A sample count as perf's header prints it (``convert_unit``: 9036 -> ``9K``, the
    unit a space below 1001)."""
    unit = " "
    for u in "KMG":
        if n > 1000:
            n, unit = n // 1000, u
    return f"{n}{unit}"


def lost_samples_header(lost: int, elided: dict[str, str] | None = None) -> str:
    """The lines perf report --stdio writes once above its tables (its first, a hint to
    use --header, left out: perftui's is ``perftui info``): a column its filter leaves one
    value in (``--comm X``: ``# comm: X``, the column left out), then the lost samples."""
    said = "".join(safe(f"# {k}: {v}") + "\n" for k, v in (elided or {}).items())
    return f"#\n{said}#\n# Total Lost Samples: {lost}\n#\n"


def key_text(prof: Profile, names: Names, row: ProfileRow, i: int) -> str:
    """Sort key ``i`` of a row as perf report prints it."""
    k = SORT_KEYS[prof.keys[i]]
    return k.text(names, k.value(prof.codes, names, row.key[i], row.loc), row.loc)


def report_json(prof: Profile, names: Names, event: str) -> dict[str, Any]:
    """The stable JSON object of one event's table (rows in perf's order)."""
    rows = []
    for r in prof.rows:
        d: dict[str, Any] = {k: key_value(prof, names, r, i) for i, k in enumerate(prof.keys)}
        for k in prof.keys:
            d.update(SORT_KEYS[k].json_extra(names, r.loc))
        d["overhead"] = round(prof.overhead(r), 6)
        if prof.children:
            d["children"] = round(prof.children_overhead(r), 6)
        d["samples"] = r.samples
        d["period"] = r.self_period
        rows.append(d)
    doc = {"event": event, "total_period": prof.total_period,
           "total_samples": prof.total_samples, "sort": list(prof.keys),
           "children": prof.children, "rows": rows}
    if event == OFFCPU_EVENT:
        doc["period_unit"] = "ns"
    return doc


def time_text(ns: int) -> str:
    """Nanoseconds as a time a person reads: ``1.502 s``, ``12.3 ms``, ``870 us``."""
    for unit, scale in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns >= scale - scale // 2000:  # (what would print as 1000 ms is 1.000 s)
            v = ns / scale
            return f"{v:.3f} {unit}" if v < 10 else f"{v:.1f} {unit}" if v < 100 \
                else f"{v:.0f} {unit}"
    return f"{ns} ns"


def key_column(prof: Profile, names: Names, i: int) -> list[str]:
    """:func:`key_text` of sort key ``i`` for every row (each distinct code, or location
    for ``sym``, written once)."""
    key = prof.keys[i]
    done: dict[int, str] = {}
    out = []
    for r in prof.rows:
        c = r.loc if key == "sym" else r.key[i]
        t = done.get(c)
        if t is None:
            t = done[c] = key_text(prof, names, r, i)
        out.append(t)
    return out


INLINED = " (inlined)"
#: the longest header cell perf writes (hists__fprintf_headers' ``char bf[1024]``)
HEADER_CELL = 1023


def text_widths(keys: tuple[str, ...], cols: list[list[str]], unresolved: bool) -> list[int]:
    """perf's widths of the key columns of a text table (``cols``: each column's cells):
    its header's or its widest cell's, a key's fixed width (cpu's 3); with ``unresolved``
    (a row names no symbol) the dso column at least an address's 16 digits
    (hists__set_unres_dso_col_len).  An inlined call's symbol counts without its
    `` (inlined)``: perf's width is the symbol's ``namelen + 4``, the suffix is written
    after it (hists__calc_col_len, _hist_entry__sym_snprintf)."""
    def width(k: str, t: str) -> int:
        return len(t) - len(INLINED) if k == "sym" and t.endswith(INLINED) else len(t)

    widths = [SORT_KEYS[k].fixed_width
              or max([len(TEXT_HEADERS[k]), *(width(k, t) for t in cols[i])])
              for i, k in enumerate(keys)]
    if unresolved and "dso" in keys:
        at = keys.index("dso")
        widths[at] = max(widths[at], UNRESOLVED_DSO_WIDTH)
    return widths


#: what writes a row's call graph after its line (``graph(k, write)`` for row ``k``)
RowGraph = Callable[[int, Callable[[str], object]], None]


@dataclass(frozen=True)
class TableOptions:
    """perf report's ``-n``/``--show-nr-samples`` (a Samples column, each row's own
    samples), ``--percent-limit`` (rows whose overhead, children's with children, is
    under it left out) and ``-t``/``--field-separator`` (None: columns aligned by
    spaces)."""

    nr_samples: bool = False
    percent_limit: float = 0.0
    field_sep: str | None = None

    def pct(self, v: float) -> str:
        """An overhead cell: ``hpp__fmt``'s ``" %*.2f%%"``, 7 wide, or 1 under ``-t``."""
        return f" {v:.2f}%" if self.field_sep else f"{v:7.2f}%"

    def count(self, n: int, width: int) -> str:
        """A samples cell (``" %*" PRIu64``: ``width`` wide, or 1 under ``-t``)."""
        return f" {n}" if self.field_sep else f"{n:>{width}}"


def print_report(prof: Profile, names: Names, event: str, out: TextIO,
                 elided: frozenset[str] = frozenset(), time: str | None = None,
                 graph: RowGraph | None = None, opts: TableOptions = TableOptions()
                 ) -> None:
    """perf report --stdio's table: header lines, then one line a row (and with ``graph``
    the row's call graph under it; without, ``-g none``'s table); the ``elided`` keys'
    columns left out (perf's for a --comms or --dsos of one name); ``time``: the --time
    given, said as perf says it."""
    timed = event == OFFCPU_EVENT  # periods in ns: a Time column (children's, or self)
    _heading(out, prof.total_samples, prof.total_period, f"event '{event}'", time, timed)
    ov, ch = prof.overhead, prof.children_overhead
    heads = [("Children", 8), ("Self", 8)] if prof.children else [("Overhead", 8)]
    if timed:
        heads.append(("Time", 9))
    if opts.nr_samples:
        heads.append(("Samples", 12))

    pc = opts.pct

    def cells(k: int, r: ProfileRow) -> list[str]:
        got = [pc(ch(r)), pc(ov(r))] if prof.children else [pc(ov(r))]
        if timed:
            t = time_text(r.children_period if prof.children else r.self_period)
            got.append(f" {t}" if opts.field_sep else t)
        return [*got, opts.count(r.samples, 1)] if opts.nr_samples else got

    def keep(k: int, r: ProfileRow) -> bool:
        return (ch(r) if prof.children else ov(r)) >= opts.percent_limit

    _table(prof, names, heads, cells, out, elided, graph,
           keep if opts.percent_limit else None, opts.field_sep)


def print_group_report(table: GroupTable, names: Names, out: TextIO,
                       elided: frozenset[str] = frozenset(), time: str | None = None,
                       graph: RowGraph | None = None, opts: TableOptions = TableOptions()
                       ) -> None:
    """perf report --stdio's table of an event group: its events' samples and periods
    summed in the heading, and per overhead column one cell per member, 8 wide each
    (``graph``: the rows' call graphs, the leader's)."""
    _heading(out, table.total_samples, table.total_period, f"events '{table.name}'", time)
    n = len(table.members)

    def pct(shares: list[float]) -> str:
        return "".join(map(opts.pct, shares))

    children = table.profile.children
    heads = [("Children", 8 * n), ("Self", 8 * n)] if children else [("Overhead", 8 * n)]
    if opts.nr_samples:
        heads.append(("Samples", 12 * n))

    def cells(k: int, r: ProfileRow) -> list[str]:
        got = [pct(table.shares(k, True)), pct(table.shares(k, False))] if children else \
            [pct(table.shares(k, False))]
        if opts.nr_samples:
            got.append("".join(opts.count(c, 12) for c in table.samples[k]))
        return got

    def keep(k: int, r: ProfileRow) -> bool:  # (the leader's share, as perf's)
        return table.shares(k, children)[0] >= opts.percent_limit

    _table(table.profile, names, heads, cells, out, elided, graph,
           keep if opts.percent_limit else None, opts.field_sep)


def _heading(out: TextIO, samples: int, period: int, what: str, time: str | None,
             timed: bool = False) -> None:
    slices = f" (time slices: {time})" if time else ""
    out.write(safe(f"# Samples: {sample_count(samples)} of {what}{slices}") + "\n")
    out.write(f"# Event count (approx.): {period}\n")
    if timed:
        out.write(f"# Total time: {time_text(period)}\n")
    out.write("#\n")


def _table(prof: Profile, names: Names, heads: list[tuple[str, int]],
           pcts: Callable[[int, ProfileRow], list[str]], out: TextIO,
           elided: frozenset[str], graph: RowGraph | None = None,
           keep: Callable[[int, ProfileRow], bool] | None = None,
           sep: str | None = None) -> None:
    """The column headers and the rows: ``heads`` (name, width) of the overhead columns,
    ``pcts(k, row)`` their cells for row ``k``, then the sort keys' columns; ``graph``:
    writes each row's call graph after its line; ``keep``: the rows written (the widths
    are every row's, as perf's); ``sep``: perf's ``-t``, between the columns instead of
    two spaces (no dotted line under the header, the cells left-aligned, a key's
    ``sep[0]`` written ``.``: its ``repsep_snprintf``)."""
    w = out.write
    shown = [i for i, k in enumerate(prof.keys) if k not in elided]
    shown_keys = tuple(prof.keys[i] for i in shown)
    keys = [TEXT_HEADERS[k] for k in shown_keys]
    cols = [key_column(prof, names, i) for i in shown]
    widths = text_widths(shown_keys, cols,
                         any(names.locs.name[r.loc] is None for r in prof.rows))
    if sep:
        cols = [[t.replace(sep[0], ".") for t in col] for col in cols]
    between = sep or "  "
    # (each header cell is written into perf's 1024-byte buffer: a column wider than 1023,
    # a long C++ or Rust name's, has its header cut there; the dotted line is not)
    w("# " + between.join([*(f"{h:>{hw}}"[:HEADER_CELL] for h, hw in heads),
                           *(f"{h:<{widths[i]}}"[:HEADER_CELL] for i, h in enumerate(keys))])
      + "\n")
    if not sep:
        w("# " + "  ".join([*("." * hw for _h, hw in heads), *("." * n for n in widths)])
          + "\n#\n")
    # perf aligns every column but the last; the last keeps what its own format gives:
    # comm, dso and pid:comm are padded to the column's width; sym, cpu, srcline and
    # srcfile are not (an empty srcfile leaves the separator before it)
    padded = bool(shown_keys) and SORT_KEYS[shown_keys[-1]].padded_last
    align = "<" if sep else ">"  # (-t: hist_entry__snprintf_alignment pads on the right)
    cells = [*(f"{{:{align}{hw}}}" for _h, hw in heads), *(f"{{:<{n}}}" for n in widths)]
    if cols and not padded:
        cells[-1] = "{}"
    line = ("" if sep else "  ") + between.join(cells)
    # safe() per line only when some cell needs it (it changes nothing otherwise)
    clean = all(safe(t) == t for col in cols for t in set(col))
    for k, r in enumerate(prof.rows):
        if keep is not None and not keep(k, r):
            continue
        if sep and not clean:  # (each cell made safe, not the separator: a tab stays one)
            parts = [f.format(v) for f, v in zip(cells, [*pcts(k, r), *(c[k] for c in cols)],
                                                 strict=True)]
            text = sep.join(map(safe, parts))
        else:
            text = line.format(*pcts(k, r), *(c[k] for c in cols))
            text = text if clean else safe(text)
        w(text + "\n")
        if graph is not None:
            graph(k, w)
    w("\n\n")  # (perf report's after each event's table)


def frame_name(locs: Locations, loc: int, as_script: bool = False) -> str:
    """A frame's name: the symbol, else ``[dso]``, else ``[unknown]``.  ``as_script``
    (folded stacks and speedscope): the dso as flamegraph's stackcollapse-perf names an
    unknown symbol from ``perf script``, the last part of its path (a module recorded by
    its file: ``[ath9k.ko]``, where the browser's flame graph says ``[ath9k]``)."""
    n = locs.name[loc]
    if n is not None:
        return n
    d = locs.dsos[locs.dso[loc]]
    dso = d.name.rsplit("/", 1)[-1] if as_script and "/" in d.name else d.short_name
    return dso if dso.startswith("[") else f"[{dso}]"
