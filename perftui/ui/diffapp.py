"""The diff browser: two recordings side by side, as ``perf diff`` compares them.

A timeline per recording (each side's time range selectable), the compared table with
baseline / new / delta columns and bars, and the drill-down of the one-recording browser:
each module's total followed by its sections (a user-space dso or the kernel image: its
total alone), then a section's symbols, each with its delta (Enter on a module's line opens
its first section); ``v`` shows perf diff's own ``dso,sym`` table instead.  Indexing,
resolving, grouping and comparing run in thread workers; the UI thread only draws.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable, Static
from textual.worker import get_current_worker

from ..analysis.diff import Diff
from ..present.diff import mismatch_text
from ..present.report import time_text
from ..textsafe import safe
from .crashing import CrashReportingApp
from .diffmodel import COMPUTE_CYCLE, DiffModel, DiffSide, Level, Line, Shown, first_section
from .difftable import DiffTable as DiffTable
from .difftable import fill_table, key_text
from .screens import KeysScreen
from .screensave import SAVE_BINDING, ScreenSavingApp
from .typeahead import TypeAheadApp
from .widgets.diffflame import DiffFlameGraph
from .widgets.footer import Footer
from .widgets.frames import plural
from .widgets.timeline import Timeline

if TYPE_CHECKING:
    from .keys import Place


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


class DiffHelp(KeysScreen):
    """Every key of the diff browser (``keys.diff_places``)."""

    BINDINGS = [Binding("escape,q,question_mark", "app.pop_screen", "Back", id="help.back",
                        tooltip="back")]
    DEFAULT_CSS = "DiffHelp VerticalScroll { border: round $accent; }"

    def places(self) -> list[Place]:
        from .keys import diff_places

        return diff_places()


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
        if not self.is_running:  # a worker's message after the screens closed (quitting)
            return
        if msg.side == "both":
            want, self.model.old.options = self.model.old.options.event, replace(
                self.model.old.options, event=None)  # (--event: the first table's only)
            if want is not None and not self.model.choose_event(want):
                self.notify(f"--event {want}: no samples of it in either recording",
                            timeout=4, markup=False)
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
        if not self.is_running:  # (as on_loaded)
            return
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
        fill_table(table, shown, level, self.size.width, self.cursor_of.get(level, 0),
                   self.model.old.options.words())
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
                if side.options.time:
                    t.append(f" --time {safe(side.options.time, 30)}", style="bold yellow")
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

    def typeahead_hold(self) -> bool:
        """Keys typed meanwhile wait while the differential flame graph is being counted
        (its screen is open, its tree not yet): they are typed for it."""
        return any(w.group == "dflame" and not w.is_finished for w in self.workers)

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
        from .keys import diff_places, place_of

        self.push_screen(DiffHelp(place_of(self.focused or self.screen, diff_places())))

