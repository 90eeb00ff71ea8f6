"""The perftui browser: header, timeline, records, detail and module sections."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.command import Hit, Hits, Provider
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Footer

from ..analysis.filters import FILTER_HELP, Filter, FilterError, parse_filter
from ..perfdata import Recording
from ..textsafe import safe
from .model import Model
from .screens import HelpScreen, InfoScreen, PromptScreen, SectionScreen
from .widgets.panes import Detail, HeaderLine, SectionsPane
from .widgets.records import RecordList
from .widgets.timeline import Timeline


class Progress(Message):
    """Indexing made progress (``done`` at the end)."""

    def __init__(self, records: int, done: bool = False) -> None:
        super().__init__()
        self.records = records
        self.done = done


class CacheNotes(Message):
    """The index cache has something new to say."""


class PerftuiCommands(Provider):
    """The command palette: the app's actions by name."""

    async def search(self, query: str) -> Hits:
        app = self.app
        assert isinstance(app, PerftuiApp)
        matcher = self.matcher(query)
        for name, help_text, action in app.palette_commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), action, help=help_text)

    async def discover(self) -> Hits:
        app = self.app
        assert isinstance(app, PerftuiApp)
        for name, help_text, action in app.palette_commands():
            yield Hit(1.0, name, action, help=help_text)


class PerftuiApp(App[int]):
    """Browse one recording.  ``recording`` is opened already; indexing starts on mount."""

    TITLE = "perftui"
    CSS_PATH = "perftui.tcss"
    COMMANDS = App.COMMANDS | {PerftuiCommands}
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        Binding("q", "back_or_quit", "Quit", id="app.quit"),
        Binding("question_mark", "help", "Help", id="app.help", key_display="?"),
        Binding("i", "info", "Info", id="app.info"),
        Binding("m", "focus_sections", "Sections", id="app.sections"),
        Binding("l", "focus_records", "Records", show=False, id="app.records"),
        Binding("T", "focus_timeline", "Timeline", show=False, id="app.timeline"),
        Binding("slash", "filter", "Filter", id="app.filter", key_display="/"),
        Binding("g", "goto", "Go to", id="app.goto"),
        Binding("t", "toggle_order", "Order", show=False, id="app.order"),
        Binding("z", "zoom_pane", "Zoom pane", show=False, id="app.zoom"),
        Binding("escape", "escape", "Cancel", show=False, id="app.escape"),
    ]

    def __init__(self, recording: Recording, modules_dirs: list[str] | None = None,
                 auto_index: bool = True) -> None:
        super().__init__()
        self.model = Model(recording, modules_dirs)
        self.auto_index = auto_index
        self.cancel_requested = False
        self.index_error: str | None = None
        self.started = time.monotonic()
        self._timeline_at = 0.0
        self._timeline_cost = 0.0
        self._sections_shown = False
        self._notes_shown = 0

    def compose(self) -> ComposeResult:
        m = self.model
        yield HeaderLine(m, id="header")
        yield Timeline(m, id="timeline")
        yield RecordList(m, id="records")
        with Horizontal(id="bottom"):
            yield Detail(m, id="detail")
            yield SectionsPane(m, id="sections")
        yield Footer()

    def on_resize(self) -> None:
        h = self.size.height
        # 80x24 over ssh: a shorter timeline and bottom row leave the record list room
        self.query_one(Timeline).styles.height = 5 if h < 28 else 7
        self.query_one("#bottom").styles.height = 8 if h < 28 else "40%"

    MAIN_ONLY = frozenset({"focus_sections", "focus_records", "focus_timeline", "filter",
                           "goto", "toggle_order", "zoom_pane"})

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The main screen's keys do nothing (and are not shown) on the other screens; a
        prompt shows only its own."""
        if isinstance(self.screen, PromptScreen) and action in (
                "back_or_quit", "help", "info"):
            return False
        return not (action in self.MAIN_ONLY and len(self.screen_stack) > 1)

    def on_mount(self) -> None:
        self.query_one(HeaderLine).update_line()
        self.query_one(RecordList).focus()
        if self.auto_index:
            self.index()

    # -- indexing ---------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="index")
    def index(self) -> None:
        rec = self.model.rec

        def progress(records: int, _bytes: int) -> None:
            if self.cancel_requested:
                rec.cancelled = True
            self.post_message(Progress(records))

        try:
            if rec.open_cached() and self.model.prepare_cached():
                self.post_message(Progress(0))  # the first screen, from the cache
            rec.build_index(progress=progress, budget=0.25)
            self.model.finish()
        except Exception as e:
            self.index_error = f"indexing stopped: {e}"
        self.post_message(Progress(len(rec.columns), done=True))
        if self.index_error is None:
            self.model.save()  # after the screen is complete: kept for the next open
            self.post_message(CacheNotes())

    def on_progress(self, msg: Progress) -> None:
        header = self.query_one(HeaderLine)
        records = self.query_one(RecordList)
        m = self.model
        self._cache_notes()
        if msg.done:
            rec = m.rec
            if rec.cancelled:
                header.progress = "indexing cancelled"
            elif self.index_error:
                header.progress = self.index_error
            elif rec.errors:
                e = rec.errors[0]
                header.progress = f"error at offset {e.offset:#x}: {e.message}"
            else:
                header.progress = ""
            m.invalidate()
            self.query_one(SectionsPane).fill()
            records.clear_cache()
            if rec.errors:
                self.notify(safe(str(rec.errors[0]), 300), severity="error", timeout=10,
                            markup=False)
        else:
            what = "checking the cached index" if m.rec.index_origin == "cache" else "indexing"
            header.progress = f"{what}… {msg.records:,} records"
            m.invalidate()
            if m.report is not None and not self._sections_shown:  # kept by the cache
                self._sections_shown = True
                self.query_one(SectionsPane).fill()
        records.refresh_data()
        # the timeline re-bins every record: while indexing, spend at most ~10% of the time
        now = time.monotonic()
        if msg.done or now - self._timeline_at >= max(1.0, 10 * self._timeline_cost):
            self.query_one(Timeline).refresh_data()
            self._timeline_at = time.monotonic()
            self._timeline_cost = self._timeline_at - now
        header.update_line()
        detail = self.query_one(Detail)
        row = records.current_row()
        if row is not None and (detail.shown_row is None or msg.done):
            detail.show(row)

    def on_cache_notes(self, _msg: CacheNotes) -> None:
        self._cache_notes()

    def _cache_notes(self) -> None:
        """What the index cache has to say (read-only, full, a bad entry), once each."""
        cache = self.model.rec.cache
        if cache is None:
            return
        for note in cache.notes[self._notes_shown:]:
            self.notify(safe(note, 300), severity="warning", timeout=8, markup=False)
        self._notes_shown = len(cache.notes)

    # -- events from widgets ------------------------------------------------------------------
    def on_record_list_highlighted(self, msg: RecordList.Highlighted) -> None:
        self.query_one(Detail).show(msg.row)

    def on_timeline_range_changed(self, msg: Timeline.RangeChanged) -> None:
        m = self.model
        m.time_range = msg.time_range
        m.invalidate()
        keep = self.query_one(RecordList).current_row()
        self.query_one(RecordList).refresh_data(keep_row=keep)
        if m.done:
            m.refresh_report()
            self.query_one(SectionsPane).fill()

    def on_sections_pane_chosen(self, msg: SectionsPane.Chosen) -> None:
        if self.model.report is not None:
            self.push_screen(SectionScreen(self.model, msg.entry))

    def jump_to_record(self, row: int) -> None:
        """From a sample in the drill-down back to its record in the list."""
        while len(self.screen_stack) > 1:
            self.pop_screen()
        records = self.query_one(RecordList)
        if not records.jump_to_row(row):
            # hidden by the filter or the range: clear them, then jump
            self.model.flt = Filter()
            self.model.time_range = None
            self.model.invalidate()
            self.query_one(Timeline).action_reset()
            records.refresh_data()
            records.jump_to_row(row)
        records.focus()

    # -- actions ----------------------------------------------------------------------------------
    def action_back_or_quit(self) -> None:
        if len(self.screen_stack) > 1:
            self.pop_screen()
        else:
            self.exit(0)

    def action_zoom_pane(self) -> None:
        """Give the focused pane the whole screen (again: back to the layout)."""
        screen = self.screen
        if screen.maximized is not None:
            screen.minimize()
        elif self.focused is not None:
            screen.maximize(self.focused)

    def action_escape(self) -> None:
        if self.screen.maximized is not None:
            self.screen.minimize()
            return
        if not self.model.done and not self.cancel_requested:
            self.cancel_requested = True
            self.model.rec.cancelled = True
            self.notify("cancelling indexing…")

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_info(self) -> None:
        self.push_screen(InfoScreen(self.model))

    def action_focus_sections(self) -> None:
        self.query_one(SectionsPane).focus()

    def action_focus_records(self) -> None:
        self.query_one(RecordList).focus()

    def action_focus_timeline(self) -> None:
        self.query_one(Timeline).focus()

    def action_toggle_order(self) -> None:
        m = self.model
        records = self.query_one(RecordList)
        keep = records.current_row()
        m.time_order = not m.time_order
        m.invalidate()
        records.refresh_data(keep_row=keep)
        self.query_one(RecordList).border_title = None
        self.notify("time order" if m.time_order else "file order", timeout=2)

    def action_filter(self) -> None:
        self.push_screen(PromptScreen("filter records", FILTER_HELP, self.model.flt.text),
                         self._apply_filter)

    def _apply_filter(self, text: str | None) -> None:
        if text is None:
            return
        m = self.model
        try:
            m.flt = parse_filter(text, m.first_time)
        except FilterError as e:
            self.notify(safe(str(e), 300), severity="error", markup=False)
            return
        records = self.query_one(RecordList)
        keep = records.current_row()
        m.invalidate()
        records.refresh_data(keep_row=keep)
        self.notify(f"{m.count():,} records match" if text.strip() else "filter cleared",
                    timeout=3)

    def action_goto(self) -> None:
        self.push_screen(PromptScreen("go to", "an offset (0x1f0, 4096) or a time (2.5s)"),
                         self._apply_goto)

    def _apply_goto(self, text: str | None) -> None:
        if not text:
            return
        row = self.model.goto(text)
        if row is None:
            self.notify(f"cannot go to {safe(text, 60)!r}", severity="error",
                        markup=False)
            return
        self.jump_to_record(row)

    def palette_commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        return [
            ("Filter records", "filter by type, cpu, pid, tid, comm, time, section",
             self.action_filter),
            ("Go to offset or time", "jump to a record by file offset or time",
             self.action_goto),
            ("Toggle file/time order", "show records in file order or time order",
             self.action_toggle_order),
            ("Module sections", "focus the module-section pane", self.action_focus_sections),
            ("Timeline by kind/CPU", "one timeline row per record kind or per CPU",
             partial(self.query_one(Timeline).action_toggle_rows)),
            ("Reset timeline", "zoom out and clear the time range",
             partial(self.query_one(Timeline).action_reset)),
            ("Recording information", "header and features", self.action_info),
            ("Help", "every key", self.action_help),
            ("Quit", "leave perftui", partial(self.exit, 0)),
        ]
