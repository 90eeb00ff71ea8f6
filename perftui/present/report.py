"""``perftui report``: the hotspot table as perf report --stdio prints it, and as JSON.

Every string from a recording goes through :func:`~perftui.textsafe.safe` in text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from ..analysis.eventgroup import GroupTable
from ..analysis.profile import Profile, ProfileRow
from ..symbols.locations import Locations
from ..textsafe import safe

HEADERS = {"comm": "Command", "pid": "Pid:Command", "tid": "Tid", "dso": "Shared Object",
           "sym": "Symbol", "cpu": "CPU", "module": "Module", "section": "Section"}
#: the text report's headers: perf's own (sort_thread's is "    Pid:Command", 15 wide)
TEXT_HEADERS = {**HEADERS, "pid": "    Pid:Command"}
#: columns perf gives a fixed width, whatever their cells (cpu's "%*.*d" in 3: -001 overflows)
FIXED_WIDTH = {"cpu": 3}
UNRESOLVED_DSO_WIDTH = 16


@dataclass
class Names:
    """What the words need besides the profile: locations, thread and comm names."""

    locs: Locations
    comm_name: Callable[[int], str]  # comm id -> name
    thread_comm: Callable[[int], str]  # tid -> the thread's last name (perf's Pid:Command)


def key_value(prof: Profile, names: Names, row: ProfileRow, i: int) -> Any:
    """The JSON value of sort key ``i`` of a row."""
    key, code = prof.keys[i], row.key[i]
    if key == "comm":
        return names.comm_name(code)
    if key in ("pid", "tid", "cpu"):
        return code
    if key == "sym":
        return names.locs.label(row.loc)
    return prof.codes.names[key][code]


#: sort keys that perf prints padded to the column's width even in the last column
#: (pid's "%7d:%-*.*s": the comm padded to the column's width less 8)
PADDED_LAST = frozenset({"comm", "dso", "pid"})


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
    key, code = prof.keys[i], row.key[i]
    if key == "pid":
        return f"{code:>7}:{names.thread_comm(code)}"
    if key == "cpu":  # perf's %*.*d with the column's width (3): 007, -001
        return ("-" if code < 0 else "") + str(abs(code)).zfill(3)
    if key == "sym":
        level = "k" if names.locs.dsos[names.locs.dso[row.loc]].kernel else "."
        return f"[{level}] {names.locs.label(row.loc)}"
    return str(key_value(prof, names, row, i))


def report_json(prof: Profile, names: Names, event: str) -> dict[str, Any]:
    """The stable JSON object of one event's table (rows in perf's order)."""
    rows = []
    for r in prof.rows:
        d: dict[str, Any] = {k: key_value(prof, names, r, i) for i, k in enumerate(prof.keys)}
        if "sym" in prof.keys:
            d["kernel"] = names.locs.dsos[names.locs.dso[r.loc]].kernel
        d["overhead"] = round(prof.overhead(r), 6)
        if prof.children:
            d["children"] = round(prof.children_overhead(r), 6)
        d["samples"] = r.samples
        d["period"] = r.self_period
        rows.append(d)
    return {"event": event, "total_period": prof.total_period,
            "total_samples": prof.total_samples, "sort": list(prof.keys),
            "children": prof.children, "rows": rows}


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


def text_widths(keys: tuple[str, ...], cols: list[list[str]], unresolved: bool) -> list[int]:
    """perf's widths of the key columns of a text table (``cols``: each column's cells):
    its header's or its widest cell's, fixed for cpu; with ``unresolved`` (a row names no
    symbol) the dso column at least an address's 16 digits (hists__set_unres_dso_col_len)."""
    widths = [FIXED_WIDTH.get(k) or max([len(TEXT_HEADERS[k]), *map(len, cols[i])])
              for i, k in enumerate(keys)]
    if unresolved and "dso" in keys:
        at = keys.index("dso")
        widths[at] = max(widths[at], UNRESOLVED_DSO_WIDTH)
    return widths


def print_report(prof: Profile, names: Names, event: str, out: TextIO,
                 elided: frozenset[str] = frozenset(), time: str | None = None) -> None:
    """perf report --stdio's table (``-g none``): header lines, then one line a row; the
    ``elided`` keys' columns left out (perf's for a --comms or --dsos of one name);
    ``time``: the --time given, said as perf says it."""
    _heading(out, prof.total_samples, prof.total_period, f"event '{event}'", time)
    ov, ch = prof.overhead, prof.children_overhead
    if prof.children:
        _table(prof, names, [("Children", 8), ("Self", 8)],
               lambda k, r: [f"{ch(r):7.2f}%", f"{ov(r):7.2f}%"], out, elided)
    else:
        _table(prof, names, [("Overhead", 8)], lambda k, r: [f"{ov(r):7.2f}%"], out, elided)


def print_group_report(table: GroupTable, names: Names, out: TextIO,
                       elided: frozenset[str] = frozenset(), time: str | None = None
                       ) -> None:
    """perf report --stdio's table of an event group: its events' samples and periods
    summed in the heading, and per overhead column one cell per member, 8 wide each."""
    _heading(out, table.total_samples, table.total_period, f"events '{table.name}'", time)
    n = len(table.members)

    def cells(shares: list[float]) -> str:
        return "".join(f"{v:7.2f}%" for v in shares)

    if table.profile.children:
        _table(table.profile, names, [("Children", 8 * n), ("Self", 8 * n)],
               lambda k, r: [cells(table.shares(k, True)), cells(table.shares(k, False))],
               out, elided)
    else:
        _table(table.profile, names, [("Overhead", 8 * n)],
               lambda k, r: [cells(table.shares(k, False))], out, elided)


def _heading(out: TextIO, samples: int, period: int, what: str, time: str | None) -> None:
    slices = f" (time slices: {time})" if time else ""
    out.write(safe(f"# Samples: {sample_count(samples)} of {what}{slices}") + "\n")
    out.write(f"# Event count (approx.): {period}\n#\n")


def _table(prof: Profile, names: Names, heads: list[tuple[str, int]],
           pcts: Callable[[int, ProfileRow], list[str]], out: TextIO,
           elided: frozenset[str]) -> None:
    """The column headers and the rows: ``heads`` (name, width) of the overhead columns,
    ``pcts(k, row)`` their cells for row ``k``, then the sort keys' columns."""
    w = out.write
    shown = [i for i, k in enumerate(prof.keys) if k not in elided]
    shown_keys = tuple(prof.keys[i] for i in shown)
    keys = [TEXT_HEADERS[k] for k in shown_keys]
    cols = [key_column(prof, names, i) for i in shown]
    widths = text_widths(shown_keys, cols,
                         any(names.locs.name[r.loc] is None for r in prof.rows))
    w("# " + "  ".join([*(f"{h:>{hw}}" for h, hw in heads),
                        *(f"{h:<{widths[i]}}" for i, h in enumerate(keys))]) + "\n")
    w("# " + "  ".join([*("." * hw for _h, hw in heads), *("." * n for n in widths)])
      + "\n#\n")
    line = "  " + "  ".join([*(f"{{:>{hw}}}" for _h, hw in heads),
                             *(f"{{:<{n}}}" for n in widths)])
    # safe() per line only when some cell needs it (it changes nothing otherwise)
    clean = all(safe(t) == t for col in cols for t in set(col))
    # perf aligns every column but the last; the last keeps what its own format gives:
    # comm, dso and pid:comm are padded to the column's width; sym and cpu are not
    padded = bool(shown_keys) and shown_keys[-1] in PADDED_LAST
    for k, r in enumerate(prof.rows):
        text = line.format(*pcts(k, r), *(c[k] for c in cols))
        text = text if padded else text.rstrip()
        w((text if clean else safe(text)) + "\n")
    w("\n")


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
