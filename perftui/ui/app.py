"""The perftui browser: header, timeline, records, detail and module sections; under the
timeline the records, the profile or the flame graph.

The app owns the navigation: screens and panes ask it by messages
(:mod:`perftui.ui.messages`) to annotate, jump to a record, show a view or a list of
samples.  The index and names are built by :class:`~perftui.ui.indexer.IndexController`
(a worker), drawn by :class:`~perftui.ui.indexviews.IndexDisplay`; the profile and flame
graph panes are mounted late by :class:`~perftui.ui.viewpanes.ViewPanes`; annotate screens
are opened by :class:`~perftui.ui.annotating.AnnotateOpener`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, BinaryIO

from rich.markup import escape
from textual.app import App, ComposeResult
from textual.containers import Horizontal

from .. import startup
from ..analysis.filters import FILTER_HELP, FILTER_RULES, FilterError
from ..perfdata import Recording, RecordType
from ..symbols.options import SymbolOptions
from ..textsafe import safe
from .annotating import AnnotateOpener
from .appkeys import APP_BINDINGS
from .crashing import CrashReportingApp
from .indexer import IndexController
from .indexviews import IndexDisplay
from .messages import (
    AnnotateWanted,
    BodyWanted,
    CacheNotes,
    Drained,
    LiveNames,
    NamesProgress,
    NamesReady,
    Progress,
    RecordWanted,
    ReportReady,
    SamplesWanted,
    TransformsChanged,
)
from .model import Model
from .navigation import Navigator
from .palette import PaletteCommands, browser_commands
from .panesizes import PaneSizingApp
from .screens import HelpScreen, InfoScreen, PromptScreen, SectionScreen
from .screensave import ScreenSavingApp
from .typeahead import TypeAheadApp
from .viewpanes import ViewPanes
from .widgets.footer import Footer
from .widgets.panes import Detail, HeaderLine, SectionsPane
from .widgets.records import RecordList
from .widgets.timeline import SamplesSelected, SelectsSamples, Timeline

if TYPE_CHECKING:
    from .annotate import Target
    from .profiledata import ProfileData
    from .widgets.flame import FlamePane
    from .widgets.profile import ProfilePane
    from .widgets.transformkeys import SandwichWanted


class PerftuiApp(TypeAheadApp, CrashReportingApp, ScreenSavingApp, PaneSizingApp):
    """Browse one recording.  ``recording`` is opened already; indexing starts on mount.

    ``stream`` is the pipe a pipe-mode recording is read from: after a cancel the app
    keeps reading it (and drops the bytes), so the writer never blocks.
    """

    TITLE = "perftui"
    CSS_PATH = "perftui.tcss"
    COMMANDS = App.COMMANDS | {PaletteCommands}
    ENABLE_COMMAND_PALETTE = True
    # the sizes of the panes follow these classes in perftui.tcss
    VERTICAL_BREAKPOINTS = [(0, "-short"), (20, "-medium"), (28, "-tall")]
    BINDINGS = APP_BINDINGS
    #: the pane whose line the timeline shows (see :meth:`on_samples_selected`)
    _selected_by: object = None

    def __init__(self, recording: Recording, modules_dirs: list[str] | None = None,
                 auto_index: bool = True, stream: BinaryIO | None = None,
                 symbols: SymbolOptions | None = None) -> None:
        super().__init__()
        self.model = Model(recording, modules_dirs, symbols)
        self.auto_index = auto_index
        self.indexer = IndexController(self, self.model, stream,
                                       prepare=lambda: self.profile_data.prepare())
        self.index_display = IndexDisplay(self)
        self.views = ViewPanes(self)
        self.annotating = AnnotateOpener(self, self.model)
        self.nav = Navigator(self)
        self._profile_data: ProfileData | None = None
        self._profile_lock = threading.Lock()
        self.body = "records"  # what is under the timeline: records, profile or flame

    def compose(self) -> ComposeResult:
        m = self.model
        yield HeaderLine(m, id="header")
        yield Timeline(m, id="timeline")
        yield RecordList(m, id="records")
        with Horizontal(id="bottom"):
            yield Detail(m, id="detail")
            yield SectionsPane(m, id="sections")
        yield Footer()

    @property
    def profile_data(self) -> ProfileData:
        """The profile views' data (made when first wanted, by the UI or the index worker)."""
        with self._profile_lock:
            if self._profile_data is None:
                from .profiledata import ProfileData

                self._profile_data = ProfileData(self.model)
            return self._profile_data

    def _panes(self) -> tuple[ProfilePane, FlamePane] | None:
        """The profile and flame graph panes, once mounted with their widgets."""
        return self.views.panes()

    MAIN_ONLY = frozenset({"focus_sections", "focus_records", "focus_timeline", "filter",
                           "goto", "toggle_order", "zoom_pane", "toggle_time_base",
                           "annotate_record", "profile", "flame", "flame_chart"})

    def check_action(self, action: str, _parameters: tuple[object, ...]) -> bool | None:
        """The main screen's keys do nothing (and are not shown) on the other screens; a
        prompt shows only its own; "stop indexing" only while indexing."""
        if isinstance(self.screen, PromptScreen) and action in (
                "back_or_quit", "help", "info", "stop_indexing"):
            return False
        if action == "stop_indexing":
            return self.indexer.busy
        return not (action in self.MAIN_ONLY and len(self.screen_stack) > 1)

    #: the workers that make what the next key acts on (a table, a tree, a listing)
    VIEW_WORKERS = frozenset({"profile-table", "profile-trees", "profile-samples", "flame",
                              "flame-samples", "annotate", "chart"})

    def typeahead_hold(self) -> bool:
        """Keys typed meanwhile wait while the profile and flame graph panes are being
        mounted, an annotate screen's symbol tables are being read, or a view is counting
        what it shows: they are typed for what comes."""
        return (self.views.created is not None and self.views.panes() is None) \
            or self.annotating.preparing \
            or any(w.group in self.VIEW_WORKERS and w.is_running for w in self.workers)

    def reopen_from_cache(self) -> bool:
        """Before the app runs: the first frame from the recording's cache entry (see
        :meth:`IndexController.reopen_from_cache`)."""
        return self.indexer.reopen_from_cache()

    def on_mount(self) -> None:
        self.query_one(HeaderLine).update_line()
        self.query_one(RecordList).focus()
        self.update_scope()
        if self.indexer.reopened:  # the first screen, from the cache: before the first frame
            self.on_progress(Progress(0))
        if self.auto_index:
            self.indexer.start()
        else:
            startup.release()

    # -- the index worker's messages ---------------------------------------------------------
    def on_progress(self, msg: Progress) -> None:
        if not self.index_display.leaving():  # (a worker's message as the app exits)
            self.index_display.progress(msg)

    def on_drained(self, msg: Drained) -> None:
        if not self.index_display.leaving():
            self.index_display.drained(msg)

    def on_cache_notes(self, _msg: CacheNotes) -> None:
        if not self.index_display.leaving():
            self.index_display.cache_notes()

    def on_names_progress(self, msg: NamesProgress) -> None:
        if not self.index_display.leaving():
            self.index_display.names_progress(msg)

    def on_names_ready(self, msg: NamesReady) -> None:
        if not self.index_display.leaving():
            self.index_display.names_ready(msg)

    def on_live_names(self, msg: LiveNames) -> None:
        if not self.index_display.leaving():
            self.index_display.live_names(msg)

    def on_report_ready(self, msg: ReportReady) -> None:
        if not self.index_display.leaving():
            self.index_display.report_ready(msg)

    def recount(self) -> None:
        """Count the section report again (filter or range changed)."""
        self.index_display.recount()

    # -- events from widgets ------------------------------------------------------------------
    def on_record_list_highlighted(self, msg: RecordList.Highlighted) -> None:
        if self.index_display.leaving():  # posted as the app began to exit
            return
        self.query_one(Detail).show(msg.row)

    def on_timeline_range_changed(self, msg: Timeline.RangeChanged) -> None:
        m = self.model
        if msg.time_range == m.time_range:
            return
        m.time_range = msg.time_range
        self.view_changed()

    def view_changed(self) -> None:
        """The filter, the range or the order changed: every pane follows."""
        m = self.model
        records = self.query_one(RecordList)
        keep = records.current_row()
        m.invalidate()
        records.refresh_data(keep_row=keep)
        if not m.count():  # nothing in view: no record's detail either
            self.query_one(Detail).show(None)
        self.update_scope()
        self.recount()
        self.refresh_body()
        timeline = self.query_one(Timeline)  # its bars: of what the filter keeps
        timeline.border_title = "timeline" + (
            f" · {escape(safe(m.flt.text, 80))}" if not m.flt.empty else "")
        timeline.refresh_data()

    def update_scope(self) -> None:
        """The active filter and range with the matching count, on the record list."""
        m = self.model
        records = self.query_one(RecordList)
        scope = m.scope_text()
        if scope:
            records.border_title = f"records · {safe(scope, 120)}"
            records.border_subtitle = f"{m.count():,} of {m.n:,} match"
        else:
            order = "time order" if m.time_order else "file order"
            records.border_title = f"records · {order}"
            records.border_subtitle = ""

    def on_sections_pane_chosen(self, msg: SectionsPane.Chosen) -> None:
        if self.model.report is not None:
            self.nav.return_path = None
            self.push_screen(SectionScreen(self.profile_data, msg.entry))

    # -- what screens and panes ask for --------------------------------------------------------
    def on_annotate_wanted(self, msg: AnnotateWanted) -> None:
        msg.stop()
        self.open_annotate(msg.target)

    def on_record_wanted(self, msg: RecordWanted) -> None:
        msg.stop()
        self.nav.jump(msg.row, msg.back)

    def on_body_wanted(self, msg: BodyWanted) -> None:
        msg.stop()
        self.show_body(msg.body)

    def on_samples_wanted(self, msg: SamplesWanted) -> None:
        msg.stop()
        self.nav.show_samples(msg.rows, msg.title, msg.body, msg.cursor)

    def open_annotate(self, target: Target) -> None:
        """Annotate a function: a location id of the model's resolver, a
        :class:`~perftui.symbols.code.codeloc.FunctionRef`, ``(dso or None, symbol name)``, a
        :class:`~perftui.ui.annotate.SampleTarget` (a sample's function) or a
        :class:`~perftui.ui.annotate.Callee`; Esc comes back."""
        self.annotating.open(target)

    def action_annotate_record(self) -> None:
        """``a`` on the record list or the detail: the function of the sample there."""
        row = self.query_one(RecordList).current_row()
        if row is None or int(self.model.rec.columns["type"][row]) != RecordType.SAMPLE:
            self.notify("a annotates a sample's function: put the cursor on a SAMPLE",
                        timeout=3)
            return
        from .annotate import SampleTarget

        self.open_annotate(SampleTarget(row))

    # -- the views under the timeline: records (with detail and sections), profile, flame --
    def show_body(self, name: str) -> None:
        """Show the records, the profile or the flame graph under the timeline."""
        self.views.show(name)

    def selection_pending(self) -> bool:
        """Whether a pane's selected line is still on its way to the timeline (its cursor
        not rested yet, or its samples not counted yet): for tests and screenshots."""
        panes: list[ProfilePane | FlamePane | SectionsPane] = [self.query_one(SectionsPane)]
        if self.views.created is not None:
            panes += self.views.created
        tl = self.query_one(Timeline)
        return any(p.selecting for p in panes) or tl.binning or not tl.selected_drawn

    def on_samples_selected(self, msg: SamplesSelected) -> None:
        """A pane's selected line: its samples drawn as a timeline row of their own.  A
        pane's "nothing" arriving after another pane selected a line is not applied (the
        section pane lets go of its row after the frame that opened the profile), nor a
        line of a pane no longer shown (a burst left the profile before its table's first
        line was posted)."""
        if msg.rows is None and msg.pane is not None and msg.pane is not self._selected_by:
            return
        if msg.rows is not None and isinstance(msg.pane, SelectsSamples) \
                and not msg.pane.selection_live():
            return
        self._selected_by = msg.pane
        self.query_one(Timeline).show_selected(msg.rows)

    def on_transforms_changed(self, _msg: TransformsChanged) -> None:
        self.refresh_body()

    def refresh_body(self) -> None:
        """The scope or the names changed: the profile or flame graph shown follows."""
        panes = self._panes()
        if panes is not None and self.body == "profile":
            panes[0].refresh_data()
        elif panes is not None and self.body == "flame":
            panes[1].refresh_data()

    def on_sandwich_wanted(self, msg: SandwichWanted) -> None:
        """``w`` in the flame graph: the profile shows the frame's sandwich."""
        panes = self._panes()
        if panes is not None and msg.ids:
            self.show_body("profile")
            panes[0].open_sandwich(msg.ids, msg.attr)

    def on_sections_pane_profile_wanted(self, msg: SectionsPane.ProfileWanted) -> None:
        panes = self._panes()
        if panes is None:
            self.views.then(lambda: self.on_sections_pane_profile_wanted(msg))
            return
        panes[0].open_section(msg.section)
        self.show_body("profile")

    # -- actions ----------------------------------------------------------------------------------
    def action_back_or_quit(self) -> None:
        if len(self.screen_stack) > 1:
            self.pop_screen()
        elif self.nav.back():  # a jump from a sample: one level back is its list
            return
        elif self.body != "records":
            self.show_body("records")
        else:
            self.exit(0)

    def _focus_in(self, selector: str) -> bool:
        f = self.focused
        pane = self.query_one(selector)
        return f is not None and (f is pane or pane in f.ancestors)

    def action_profile(self) -> None:
        panes = self._panes()
        if panes is None:
            self.views.then(self.action_profile)
            return
        pane = panes[0]
        if self.body == "profile":
            if self._focus_in("#profile"):
                self.show_body("records")
            else:  # the timeline has the focus: back to the profile
                pane.focus_view()
            return
        if pane.section is not None:  # opened from a section before: everything now
            pane.open_section(None)
        self.show_body("profile")

    def action_flame(self) -> None:
        panes = self._panes()
        if panes is None:
            self.views.then(self.action_flame)
            return
        flame = panes[1]
        if self.body == "flame" and not self._focus_in("#flame"):
            flame.graph.focus()
            return
        self.show_body(flame.came_from if self.body == "flame" else "flame")

    def action_flame_chart(self) -> None:
        from .chartscreen import FlameChartScreen  # (its modules: not part of start-up)
        self.push_screen(FlameChartScreen(self.profile_data, self.views.shown_attr(self.body),
                                          self.body))

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
        self.nav.back()

    def action_stop_indexing(self) -> None:
        if self.indexer.stop():
            self.notify("stopping indexing…")
            self.refresh_bindings()

    def action_help(self) -> None:
        from .keys import place_of, places

        self.push_screen(HelpScreen(place_of(self.focused or self.screen, places())))

    def action_info(self) -> None:
        self.push_screen(InfoScreen(self.model, self.profile_data.offcpu_notes))

    def action_focus_sections(self) -> None:
        if self.body != "records":  # under a profile view: the records and sections again
            self.show_body("records")
        self.query_one(SectionsPane).focus()

    def action_focus_records(self) -> None:
        if self.body != "records":
            self.show_body("records")
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
        self.update_scope()
        self.notify("time order" if m.time_order else "file order", timeout=2)

    def action_toggle_time_base(self) -> None:
        m = self.model
        m.absolute_time = not m.absolute_time
        records = self.query_one(RecordList)
        records.clear_cache()
        records.refresh()
        detail = self.query_one(Detail)
        detail.show(detail.shown_row)
        self.query_one(Timeline).refresh()
        self.update_scope()
        self.notify("absolute times (s, as perf script prints them)" if m.absolute_time
                    else "times relative to the first sample (+s)", timeout=2)

    def action_filter(self) -> None:
        self.push_screen(PromptScreen("filter every pane", f"{FILTER_HELP}\n{FILTER_RULES}",
                                      self.model.flt.text), self._apply_filter)

    def _apply_filter(self, text: str | None) -> None:
        if text is None:
            return
        m = self.model
        try:
            m.flt = m.parse_filter(text)
        except FilterError as e:
            self.notify(safe(str(e), 300), severity="error", markup=False)
            return
        self.view_changed()
        self.notify(f"{m.count():,} records match" if text.strip() else "filter cleared",
                    timeout=3)

    def action_goto(self) -> None:
        self.push_screen(PromptScreen(
            "go to", "an offset (0x1f0, 4096) or a time: 2.5 (seconds, in the shown time "
            "base), 2.5s (from the first sample)"), self._apply_goto)

    def _apply_goto(self, text: str | None) -> None:
        if not text:
            return
        row = self.model.goto(text)
        if row is None:
            self.notify(f"cannot go to {safe(text, 60)!r}", severity="error",
                        markup=False)
            return
        self.nav.jump(row)

    def palette_commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        return browser_commands(self)
