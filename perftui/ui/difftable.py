"""The diff browser's compared table (:mod:`.diffapp`): the widget, its cells (shares
and deltas with bars, the ratio, the keys as perf diff writes them) and how a level's rows
are laid out in it (the numbers keep their widths, the last key column takes the rest)."""

from __future__ import annotations

from rich.markup import escape
from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from ..analysis.diff import Diff, DiffRow
from ..analysis.sortkeys import SORT_KEYS
from ..present.diff import COMPUTE_COLUMNS, is_kernel
from ..present.diff import key_text as diff_key_text
from ..textsafe import safe
from .diffmodel import Level, Shown
from .screens import NavTable
from .widgets.frames import plural
from .widgets.panes import bar

COMPUTE_WORDS = {"delta-abs": "the largest change first", "delta": "the largest increase first",
                 "ratio": "the largest ratio first"}


class DiffTable(NavTable):
    """The compared rows; Enter opens a module or section, Backspace goes back up (Home/End
    as in every drill-down table)."""

    BINDINGS = [
        Binding("enter", "select_cursor", "Open", id="diff.open",
                tooltip="open a module section: its symbols, each with its delta (on a "
                        "module's line, its first section)"),
        Binding("backspace", "app.up", "Up", id="diff.up",
                tooltip="back up one level of the drill-down"),
        Binding("c", "app.compute", "Compute", id="diff.compute",
                tooltip="order by the size of the change (perf diff's default), the change, "
                        "or the ratio"),
        Binding("v", "app.view", "View", id="diff.view",
                tooltip="module sections drill-down / perf diff's dso,sym table"),
    ]


def fill_table(table: DataTable, shown: Shown, level: Level, screen_width: int, at: int,
               asked: str = "") -> None:
    """Show the rows of ``level`` in ``table`` (``screen_width``: the screen's columns;
    ``at``: the row the cursor goes to; ``asked``: the options that shape every row, said
    in the title: ``children  cpu 0-3``)."""
    d = shown.diff
    wide = screen_width >= 100
    table.clear(columns=True)
    cname = COMPUTE_COLUMNS[d.compute][0]
    heads = ["baseline", "new", "delta"] + (["ratio"] if wide else [])
    names = {k.name: k.wide_label if wide else k.label for k in SORT_KEYS.values()}
    names["module/section"] = "module / section"
    keys = ["module/section"] if level.by_module else list(level.shown)
    lines = [ln.row for ln in shown.lines]
    shares = [x for r in lines for x in (r.baseline, r.share) if x is not None]
    top = max(shares, default=0.0) or 1.0
    top_delta = max((abs(r.delta) for r in lines if r.delta is not None),
                    default=0.0) or 1.0
    sbar, dbar = (5, 5) if wide else (3, 4)  # 80 columns: room for the names
    rows = []
    for ln in shown.lines:
        r = ln.row
        cells: list[Text] = [share_cell(r.baseline, top, sbar),
                             share_cell(r.share, top, sbar), delta_cell(r, top_delta, dbar)]
        if wide:
            cells.append(ratio_cell(r))
        if level.by_module:
            name = module_name(ln.of, r) if ln.module else f"  {r.key[1]}"
            cells.append(Text(safe(name, 200)))
        else:
            for k in keys:
                cells.append(Text(safe(key_text(ln.of, r, k), 200)))
        if ln.module:  # a module's total stands out, as in the sections pane
            for cell in cells:
                cell.stylize("bold")
        rows.append(cells)
    if not rows:
        rows.append([Text("") for _ in heads] + [Text("no samples", style="dim")
                                                for _ in keys])
    # explicit widths: the numbers keep theirs, a dso column at most 24 (14 in 80
    # columns), the last
    # column takes what is left (a long name is what gets cut)
    widths = [max([len(h)] + [c[i].cell_len for c in rows]) for i, h in enumerate(heads)]
    # inside the border, less the vertical scrollbar's gutter (kept whether or not the
    # rows overflow: a column must never push the table into a horizontal scroll)
    inner = (table.size.width or screen_width) - 2 - table.styles.scrollbar_size_vertical
    room = max(12, inner - sum(w + 2 for w in widths))
    for i, k in enumerate(keys):
        col = len(heads) + i
        want = max([len(names[k])] + [c[col].cell_len for c in rows])
        if i < len(keys) - 1:
            want = min(want, 24 if wide else 11)
            for c in rows:
                if c[col].cell_len > want:
                    c[col] = Text(c[col].plain[:want - 1] + "…")
            room -= want + 2
        else:
            want = max(len(names[k]), room - 2)
        widths.append(want)
    for h, w in zip([*heads, *[names[k] for k in keys]], widths, strict=True):
        table.add_column(h, width=w)
    for cells in rows:
        table.add_row(*cells)
    # a border title is markup: a name like "[unknown]" must stay text
    table.border_title = (f"{escape(safe(level.title(), 80))} · "
                          f"{escape(safe(asked, 40)) + ' · ' if asked else ''}{cname}: "
                          f"{COMPUTE_WORDS[d.compute]}")
    counts = [(len(d.rows), "row")]
    if shown.modules is not None:
        counts = [(len(shown.modules.rows), "module"), (len(d.rows), "section")]
    table.border_subtitle = (" · ".join(f"{n:,} {plural(n, w)}" for n, w in counts)
                             + f" · {d.matched:,} in both" if d.rows else "")
    if table.row_count:
        table.move_cursor(row=min(at, table.row_count - 1))


def key_text(d: Diff, r: DiffRow, key: str) -> str:
    """A key of a row as the table shows it (perf diff's text: ``[k]``/``[.]`` before a
    symbol)."""
    return diff_key_text(d, r, d.keys.index(key))


def module_name(d: Diff, r: DiffRow) -> str:
    """A module's line: a kernel module in brackets, as perf names it (``[demo_nic]``);
    ``[kernel.kallsyms]`` and a user-space dso as they are."""
    name = str(r.key[0])
    return f"[{name}]" if is_kernel(d, r) and not name.startswith("[") else name


def share_cell(share: float | None, top: float, width: int = 5) -> Text:
    if share is None:
        return Text("     —", style="dim")
    return Text(f"{share:6.2f}% {bar(share / top, width)}", style="cyan")


def delta_cell(r: DiffRow, top: float, width: int = 5) -> Text:
    """The change: red where the share grew, green where it shrank; ``gone`` for a row
    only in OLD (perf diff leaves its delta blank)."""
    if r.delta is None:
        return Text(f"{'gone':>7}", style="green")
    style = "red" if r.delta > 0 else "green" if r.delta < 0 else ""
    return Text(f"{r.delta:+6.2f}% {bar(abs(r.delta) / top, width)}", style=style)


def ratio_cell(r: DiffRow) -> Text:
    if r.new is None:
        return Text("")
    if r.old is None:
        return Text(f"{'N/A':>9}", style="dim")
    return Text(f"{r.ratio or 0.0:9.3f}")
