"""The diff browser: two recordings side by side, as ``perf diff`` compares them.

A timeline per recording (each side's time range selectable), the compared table with
baseline / new / delta columns and bars, and the drill-down of the one-recording browser:
each module's total followed by its sections (a user-space dso or the kernel image: its
total alone), then a section's symbols, each with its delta (Enter on a module's line opens
its first section); ``v`` shows perf diff's own ``dso,sym`` table instead.  Indexing,
resolving, grouping and comparing run in thread workers; the UI thread only draws.
"""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Static
from textual.worker import get_current_worker

from ..analysis.diff import Diff, DiffRow
from ..analysis.sortkeys import SORT_KEYS
from ..present.diff import COMPUTE_COLUMNS, is_kernel, mismatch_text
from ..present.diff import key_text as diff_key_text
from ..present.report import time_text
from ..textsafe import safe
from .crashing import CrashReportingApp
from .diffmodel import COMPUTE_CYCLE, DiffModel, DiffSide, Level, Line, Shown, first_section
from .screensave import SAVE_BINDING, ScreenSavingApp
from .typeahead import TypeAheadApp
from .widgets.diffflame import DiffFlameGraph
from .widgets.footer import Footer
from .widgets.panes import bar
from .widgets.timeline import Timeline

COMPUTE_WORDS = {"delta-abs": "the largest change first", "delta": "the largest increase first",
                 "ratio": "the largest ratio first"}


class Loaded(Message):
    """A side was indexed and grouped (``records`` so far while indexing)."""

    def __init__(self, side: str, records: int, done: bool, error: str | None = None
                 ) -> None:
        super().__init__()
        self.side = side
        self.records = records
        self.done = done
        self.error = error


class DiffReady(Message):
    """A compared table, computed by a worker for ``level``."""

    def __init__(self, level: Level, compute: str, shown: Shown) -> None:
        super().__init__()
        self.level = level
        self.compute = compute
        self.shown = shown


class SideTimeline(Timeline):
    """One recording's timeline; a range selects that side's samples only."""

    class SideRange(Message):
        def __init__(self, side: str, time_range: tuple[int, int] | None) -> None:
            super().__init__()
            self.side = side
            self.time_range = time_range

    def __init__(self, side: DiffSide, **kw: Any) -> None:
        super().__init__(side.model, **kw)
        self.side = side
        self.border_title = f"{side.name} · {escape(safe(_name(side.rec.path), 60))}"

    def on_timeline_range_changed(self, msg: Timeline.RangeChanged) -> None:
        msg.stop()
        self.post_message(self.SideRange(self.side.name, msg.time_range))


def _name(path: object) -> str:
    p = str(path or "-")
    return p.rsplit("/", 1)[-1]


class DiffTable(DataTable):
    """The compared rows; Enter opens a module or section, Backspace goes back up."""

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
        Binding("home", "first_row", "First", show=False, id="diff.home",
                tooltip="first / last row"),
        Binding("end", "last_row", "Last", show=False, id="diff.end",
                tooltip="first / last row"),
    ]

    def action_first_row(self) -> None:
        if self.row_count:
            self.move_cursor(row=0)

    def action_last_row(self) -> None:
        if self.row_count:
            self.move_cursor(row=self.row_count - 1)


class DiffHelp(Screen):
    """Every key of the diff browser, built from its bindings (``keys.diff_help_sections``)."""

    BINDINGS = [Binding("escape,q,question_mark", "app.pop_screen", "Back", id="help.back",
                        tooltip="back")]
    DEFAULT_CSS = "DiffHelp VerticalScroll { border: round $accent; }"

    def compose(self) -> ComposeResult:
        scroll = VerticalScroll()
        scroll.border_title = "keys"
        with scroll:
            yield Static(self._text(), id="help")
        yield Footer()

    def _text(self) -> Text:
        from .keys import diff_help_sections, help_text

        return Text(help_text(self.app.size.width - 4, diff_help_sections()), no_wrap=True)

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).focus()

    def on_resize(self) -> None:
        self.query_one("#help", Static).update(self._text())


class DiffApp(TypeAheadApp, CrashReportingApp, ScreenSavingApp):
    """Compare two recordings (opened already; indexed on mount)."""

    TITLE = "perftui diff"
    VERTICAL_BREAKPOINTS = [(0, "-short"), (28, "-tall")]
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    CSS = """
    #head { height: 1; background: $primary 30%; text-wrap: nowrap; text-overflow: ellipsis; }
    #warn { height: auto; max-height: 2; color: $warning; }
    SideTimeline { height: 4; border: round $primary 50%; }
    SideTimeline:focus { border: round $accent; }
    #table { height: 1fr; border: round $primary 50%; scrollbar-size-horizontal: 0; }
    #table:focus { border: round $accent; }
    #status { height: 1; text-wrap: nowrap; text-overflow: ellipsis; background: $boost; }
    Screen.-tall SideTimeline { height: 5; }
    """
    BINDINGS = [
        Binding("question_mark", "help", "Help", id="diffapp.help", key_display="?",
                tooltip="this help"),
        Binding("q", "back_or_quit", "Quit", id="diffapp.quit",
                tooltip="back up one level, or quit"),
        SAVE_BINDING,
        Binding("escape", "up", "Back", show=False, id="diffapp.escape",
                tooltip="back up one level of the drill-down"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True, id="diffapp.ctrl_c",
                tooltip="quit"),
        Binding("o", "focus_side('OLD')", "OLD", id="diffapp.old",
                tooltip="the OLD recording's timeline (shift+←/→ selects its range)"),
        Binding("n", "focus_side('NEW')", "NEW", id="diffapp.new",
                tooltip="the NEW recording's timeline (shift+←/→ selects its range)"),
        Binding("d", "focus_table", "Table", show=False, id="diffapp.table",
                tooltip="the compared table"),
        Binding("e", "next_event", "Event", show=False, id="diffapp.event",
                tooltip="the next event, when the recordings have several"),
        Binding("f", "flame", "Flame", show=False, id="diffapp.flame",
                tooltip="the differential flame graph: NEW's stacks, red where a frame's "
                        "self share grew against OLD, blue where it shrank"),
    ]

    MAIN_ONLY = frozenset({"up", "focus_side", "focus_table", "next_event", "flame"})

    def check_action(self, action: str, _parameters: tuple[object, ...]) -> bool | None:
        """The main screen's keys do nothing (and are not shown) on the help screen."""
        return not (action in self.MAIN_ONLY and len(self.screen_stack) > 1)

    def __init__(self, model: DiffModel) -> None:
        super().__init__()
        self.model = model
        self.diff: Diff | None = None  # the level's compared rows
        self.lines: list[Line] = []  # the table's rows (at the top: modules, then sections)
        self.shown_level: Level | None = None
        self.cursor_of: dict[Level, int] = {}  # where the cursor was on each level
        self.progress = {"OLD": "", "NEW": ""}
        self.comparing = False  # a regroup or a compare asked for and not shown yet
        self.want_symbol: str | None = None  # the flame graph's frame: its row, once shown

    def compose(self) -> ComposeResult:
        m = self.model
        yield Static("", id="head")
        yield Static("", id="warn")
        yield SideTimeline(m.old, id="old")
        yield SideTimeline(m.new, id="new")
        table = DiffTable(id="table", cursor_type="row")
        yield table
        yield Static("", id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#warn", Static).display = False
        self.update_head()
        self.query_one(DiffTable).focus()
        self.load()

    # -- workers --------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="load")
    def load(self) -> None:
        """Index and group OLD, then NEW."""
        for side in (self.model.old, self.model.new):

            def progress(records: int, _bytes: int, side: DiffSide = side) -> None:
                self.post_message(Loaded(side.name, records, False))

            try:
                side.load(progress)
                self.post_message(Loaded(side.name, len(side.rec.columns), True))
            except Exception as e:
                side.error = str(e)
                self.post_message(Loaded(side.name, len(side.rec.columns), True, str(e)))
                return
        self.post_message(Loaded("both", 0, True))

    @work(thread=True, exclusive=True, group="diff")
    def compare(self, level: Level, compute: str) -> None:
        shown = self.model.shown(level, compute)
        if not get_current_worker().is_cancelled:
            self.post_message(DiffReady(level, compute, shown))

    @work(thread=True, group="side")
    def regroup(self, side: DiffSide) -> None:
        """One side's tables again, for its new time range; then compare again."""
        side.compute()
        self.post_message(Loaded(side.name, len(side.rec.columns), True))
        self.post_message(Loaded("both", 0, True))

    # -- messages -------------------------------------------------------------------------
    def on_loaded(self, msg: Loaded) -> None:
        if msg.side == "both":
            self.refresh_diff()
            return
        self.progress[msg.side] = (f"error: {msg.error}" if msg.error else
                                   "" if msg.done else f"indexing… {msg.records:,} records")
        tl = self.query_one("#old" if msg.side == "OLD" else "#new", SideTimeline)
        tl.refresh_data()
        self.update_head()

    def refresh_diff(self, level: Level | None = None) -> None:
        """Compare again (in a worker) for ``level`` (default: the current one)."""
        if not self.model.ready:
            return
        level = level or self.model.level
        table = self.query_one(DiffTable)
        table.border_subtitle = "comparing…"
        self.comparing = True
        self.compare(level, self.model.compute)

    def on_diff_ready(self, msg: DiffReady) -> None:
        m = self.model
        if msg.level != m.level or msg.compute != m.compute:
            return  # the user moved on meanwhile
        table = self.query_one(DiffTable)
        if self.shown_level is not None:
            self.cursor_of[self.shown_level] = table.cursor_row
        self.diff = msg.shown.diff
        self.lines = msg.shown.lines
        self.shown_level = msg.level
        self.comparing = False
        self.fill(table, msg.shown, msg.level)
        if self.want_symbol is not None:
            self.show_symbol(self.want_symbol)
            self.want_symbol = None
        self.update_head()

    def on_side_timeline_side_range(self, msg: SideTimeline.SideRange) -> None:
        side = self.model.old if msg.side == "OLD" else self.model.new
        if msg.time_range == side.time_range or not side.ready:
            return
        side.time_range = msg.time_range
        self.query_one(DiffTable).border_subtitle = "comparing…"
        self.comparing = True
        self.regroup(side)

    def on_data_table_row_highlighted(self, msg: DataTable.RowHighlighted) -> None:
        self.update_status(msg.cursor_row)

    def on_data_table_row_selected(self, msg: DataTable.RowSelected) -> None:
        msg.stop()
        d, level = self.diff, self.shown_level
        if d is None or level is None or not 0 <= msg.cursor_row < len(self.lines):
            return
        if level.deepest:
            self.notify("symbols are the deepest level (Backspace goes back up)", timeout=3)
            return
        line = self.lines[msg.cursor_row]
        module = line.row.key[0]
        # a module's line opens its first section, as the one-recording browser's does
        section = first_section(d, module) if line.module else line.row.key[1]
        if section is not None:
            self.go(Level("sections", module, section))

    # -- drawing --------------------------------------------------------------------------
    def fill(self, table: DataTable, shown: Shown, level: Level) -> None:
        d = shown.diff
        wide = self.size.width >= 100
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
        inner = (table.size.width or self.size.width) - 2 - table.styles.scrollbar_size_vertical
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
        table.border_title = (f"{escape(safe(level.title(), 80))} · {cname}: "
                              f"{COMPUTE_WORDS[d.compute]}")
        counts = [(len(d.rows), "row")]
        if shown.modules is not None:
            counts = [(len(shown.modules.rows), "module"), (len(d.rows), "section")]
        table.border_subtitle = (" · ".join(f"{n:,} {plural(n, w)}" for n, w in counts)
                                 + f" · {d.matched:,} in both" if d.rows else "")
        at = self.cursor_of.get(level, 0)
        if table.row_count:
            table.move_cursor(row=min(at, table.row_count - 1))
        self.update_status(table.cursor_row)

    def update_status(self, k: int) -> None:
        status = self.query_one("#status", Static)
        if self.diff is None or not 0 <= k < len(self.lines):
            status.update("")
            return
        ln = self.lines[k]
        d, r = ln.of, ln.row
        t = Text(no_wrap=True, overflow="ellipsis")
        name = " ".join(key_text(d, r, key) for key in d.keys)
        if ln.module:
            name = f"module {name}"
        t.append(f" {safe(name, 120)} ", style="bold")
        for side, e, share in (("OLD", r.old, r.baseline), ("NEW", r.new, r.share)):
            if e is None:
                t.append(f" {side} none ", style="dim")
            else:
                weight = time_text(e.period) if self.model.timed else f"period {e.period:,}"
                t.append(f" {side} {share:.2f}% ({e.samples:,} {plural(e.samples, 'sample')}"
                         f", {weight}) ")
        if r.ratio is not None:
            t.append(f" ratio {r.ratio:.3f}")
        status.update(t)

    def update_head(self) -> None:
        m = self.model
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(" perftui diff ", style="bold reverse")
        for side in (m.old, m.new):
            t.append(f" {side.name} ", style="bold")
            t.append(safe(_name(side.rec.path), 40))
            if self.progress[side.name]:
                t.append(f" {self.progress[side.name]}", style="yellow")
            elif side.ready:
                n = sum(tab.total_samples for _n, tab in side.tables.values())
                t.append(f" {n:,} {plural(n, 'sample')}")
                if side.time_range is not None:
                    lo, hi = side.time_range
                    first = side.model.first_time
                    t.append(f" in {(lo - first) / 1e9:.3f}–{(hi - first) / 1e9:.3f} +s",
                             style="bold yellow")
        if m.ready:
            ev = m.events()
            more = f" ({m.event % len(ev) + 1}/{len(ev)}: e)" if len(ev) > 1 else ""
            t.append(f"  {safe(m.event_name(), 40)}{more}", style="bold")
        self.query_one("#head", Static).update(t)
        warn = self.query_one("#warn", Static)
        words = [mismatch_text(w) for w in m.warnings()] if m.ready else []
        for side in (m.old, m.new):  # a fault: said; what was read is compared
            if side.rec.errors:
                e = side.rec.errors[0]
                words.append(f"{side.name} {_name(side.rec.path)}: error at offset "
                             f"{e.offset:#x}: {e.message}; compared what could be read")
        warn.display = bool(words)
        warn.update(Text("\n".join(f"⚠ {safe(w, 200)}" for w in words)))

    # -- actions --------------------------------------------------------------------------
    def go(self, level: Level) -> None:
        table = self.query_one(DiffTable)
        if self.shown_level is not None:
            self.cursor_of[self.shown_level] = table.cursor_row
        self.model.levels.append(level)
        self.refresh_diff()

    def action_up(self) -> None:
        m = self.model
        if len(m.levels) > 1:
            table = self.query_one(DiffTable)
            if self.shown_level is not None:
                self.cursor_of[self.shown_level] = table.cursor_row
            m.levels.pop()
            self.refresh_diff()

    def action_back_or_quit(self) -> None:
        if len(self.screen_stack) > 1:
            self.pop_screen()
        elif len(self.model.levels) > 1:
            self.action_up()
        else:
            self.exit(0)

    def action_compute(self) -> None:
        m = self.model
        m.compute = COMPUTE_CYCLE[(COMPUTE_CYCLE.index(m.compute) + 1) % len(COMPUTE_CYCLE)]
        self.refresh_diff()  # the table's title says the order

    def action_view(self) -> None:
        m = self.model
        view = "symbols" if m.level.view == "sections" else "sections"
        m.levels = [Level(view)]
        self.refresh_diff()

    def action_next_event(self) -> None:
        m = self.model
        if len(m.events()) > 1:
            m.event += 1
            self.refresh_diff()

    def action_flame(self) -> None:
        if not self.model.ready:
            self.notify("the recordings are still being read", timeout=2)
            return
        from .diffflamescreen import DiffFlameScreen

        self.push_screen(DiffFlameScreen(self.model))

    def on_diff_flame_graph_row_wanted(self, msg: DiffFlameGraph.RowWanted) -> None:
        """A frame of the flame graph: its function's row in perf diff's dso,sym table."""
        self.pop_screen()
        self.want_symbol = msg.name
        self.model.levels = [Level("symbols")]
        self.refresh_diff()

    def show_symbol(self, name: str) -> None:
        i = next((k for k, ln in enumerate(self.lines) if "sym" in ln.of.keys
                  and ln.row.key[ln.of.keys.index("sym")] == name), None)
        if i is None:
            self.notify(f"{safe(name, 60)}: no row of its own in the table", timeout=3,
                        markup=False)
            return
        table = self.query_one(DiffTable)
        table.move_cursor(row=i)
        table.focus()

    def action_focus_side(self, side: str) -> None:
        self.query_one("#old" if side == "OLD" else "#new", SideTimeline).focus()

    def action_focus_table(self) -> None:
        self.query_one(DiffTable).focus()

    def action_help(self) -> None:
        self.push_screen(DiffHelp())


def key_text(d: Diff, r: DiffRow, key: str) -> str:
    """A key of a row as the table shows it (perf diff's text: ``[k]``/``[.]`` before a
    symbol)."""
    return diff_key_text(d, r, d.keys.index(key))


def module_name(d: Diff, r: DiffRow) -> str:
    """A module's line: a kernel module in brackets, as perf names it (``[demo_nic]``);
    ``[kernel.kallsyms]`` and a user-space dso as they are."""
    name = str(r.key[0])
    return f"[{name}]" if is_kernel(d, r) and not name.startswith("[") else name


def plural(n: int, word: str) -> str:
    return word if n == 1 else word + "s"


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
