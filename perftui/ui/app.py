"""The perftui browser: header, timeline, records, detail and module sections."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.command import Hit, Hits, Provider
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Footer
from textual.worker import get_current_worker

from .. import startup
from ..analysis.filters import FILTER_HELP, FILTER_RULES, Filter, FilterError
from ..analysis.sectionreport import SectionReport
from ..perfdata import Recording, RecordType
from ..symbols.options import SymbolOptions
from ..textsafe import safe
from .crashing import CrashReportingApp
from .model import Model
from .screens import HelpScreen, InfoScreen, PromptScreen, SamplesScreen, SectionScreen
from .widgets.panes import Detail, HeaderLine, SectionsPane
from .widgets.records import RecordList
from .widgets.timeline import SamplesSelected, Timeline

if TYPE_CHECKING:  # annotate (disassembly, ELF, the resolver): imported when first used
    from textual.screen import Screen
    from textual.widget import AwaitMount

    from ..analysis.annotator import Annotator
    from .annotate import Target
    from .profiledata import ProfileData
    from .widgets.flame import FlamePane
    from .widgets.profile import ProfilePane

DRAIN_READ = 1 << 20


class Progress(Message):
    """Indexing made progress (``done`` at the end)."""

    def __init__(self, records: int, done: bool = False) -> None:
        super().__init__()
        self.records = records
        self.done = done


class CacheNotes(Message):
    """The index cache has something new to say."""


class Drained(Message):
    """Bytes read and dropped from the pipe after a cancel (``done`` at its end)."""

    def __init__(self, nbytes: int, done: bool = False) -> None:
        super().__init__()
        self.nbytes = nbytes
        self.done = done


class _Leaving(Exception):
    """The app is quitting: the index worker's names pass stops (nothing is kept)."""


class NamesProgress(Message):
    """Naming (and grouping) the samples: ``done`` of ``total``; or, before the first
    sample is named, the step under way (``what``)."""

    def __init__(self, done: int, total: int, what: str = "") -> None:
        super().__init__()
        self.done = done
        self.total = total
        self.what = what


class NamesReady(Message):
    """Every sample has its symbol now (or ``error`` says why not)."""

    def __init__(self, error: str | None = None) -> None:
        super().__init__()
        self.error = error


class ReportReady(Message):
    """The section report of the current filter and range, counted by a worker."""

    def __init__(self, report: SectionReport) -> None:
        super().__init__()
        self.report = report


@dataclass
class ReturnPath:
    """Where Esc goes back to after Enter on a sample jumped to its record."""

    entry: int
    symbol_row: int
    symbol: str
    sample_row: int


@dataclass
class ProfileReturn:
    """Esc after a jump from the samples of a profile row, tree line or frame: back to
    that list (``body``: the profile or the flame graph under it)."""

    rows: Any
    title: str
    body: str
    sample_row: int


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


class PerftuiApp(CrashReportingApp):
    """Browse one recording.  ``recording`` is opened already; indexing starts on mount.

    ``stream`` is the pipe a pipe-mode recording is read from: after a cancel the app
    keeps reading it (and drops the bytes), so the writer never blocks.
    """

    TITLE = "perftui"
    CSS_PATH = "perftui.tcss"
    COMMANDS = App.COMMANDS | {PerftuiCommands}
    ENABLE_COMMAND_PALETTE = True
    # the sizes of the panes follow these classes in perftui.tcss
    VERTICAL_BREAKPOINTS = [(0, "-short"), (20, "-medium"), (28, "-tall")]
    BINDINGS = [
        Binding("question_mark", "help", "Help", id="app.help", key_display="?",
                tooltip="this help, built from the key bindings"),
        Binding("i", "info", "Info", id="app.info",
                tooltip="header, features, events, record counts and every decode error"),
        Binding("q", "back_or_quit", "Quit", id="app.quit",
                tooltip="back one level, or quit"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True, id="app.ctrl_c",
                tooltip="quit"),
        Binding("escape", "escape", "Back", show=False, id="app.escape",
                tooltip="un-zoom; after a jump from a sample, back to its samples list"),
        Binding("m", "focus_sections", "Sections", id="app.sections",
                tooltip="focus the module sections"),
        Binding("p", "profile", "Profile", id="app.profile",
                tooltip="the profile: perf report's table, callers and callees, call trees "
                        "(again: back)"),
        Binding("f", "flame", "Flame", id="app.flame",
                tooltip="the flame graph (again: back)"),
        Binding("l", "focus_records", "Records", show=False, id="app.records",
                tooltip="focus the record list"),
        Binding("T", "focus_timeline", "Timeline", show=False, id="app.timeline",
                tooltip="focus the timeline"),
        Binding("slash", "filter", "Filter", id="app.filter", key_display="/",
                tooltip="filter every pane: " + FILTER_HELP.replace(' comm="CPU 0/KVM"', "")),
        Binding("g", "goto", "Go to", id="app.goto",
                tooltip="go to an offset (0x1f0, 4096: the record holding it) or a time "
                        "(2.5: seconds in the shown time base; 2.5s: from the first sample)"),
        Binding("t", "toggle_order", "Order", show=False, id="app.order",
                tooltip="file order / time order"),
        Binding("b", "toggle_time_base", "Time base", show=False, id="app.timebase",
                tooltip="times relative to the first sample (+s) / absolute as perf "
                        "prints them (s)"),
        Binding("z", "zoom_pane", "Zoom pane", show=False, id="app.zoom",
                tooltip="give the focused pane the whole screen (again: back)"),
        Binding("x", "stop_indexing", "Stop indexing", show=False, id="app.stop",
                tooltip="stop indexing (a pipe is still read to its end, so perf record "
                        "never blocks)"),
    ]

    def __init__(self, recording: Recording, modules_dirs: list[str] | None = None,
                 auto_index: bool = True, stream: BinaryIO | None = None,
                 symbols: SymbolOptions | None = None) -> None:
        super().__init__()
        self.model = Model(recording, modules_dirs, symbols)
        self.auto_index = auto_index
        self.stream = stream
        self.cancel_requested = False
        self.index_error: str | None = None
        self.drained = 0
        self.started = time.monotonic()
        self.return_path: ReturnPath | ProfileReturn | None = None
        self._profile_data: ProfileData | None = None
        self._profile_lock = threading.Lock()
        #: the profile and flame graph panes: mounted once the first screen is painted (or
        #: when first asked for), so their modules and widgets are not part of start-up
        self._view_panes: tuple[ProfilePane, FlamePane] | None = None
        self._views_mounting: AwaitMount | None = None
        #: what the panes say while there is no profile: (profile's, flame's, redraw)
        self._view_notes: tuple[str, str, bool] | None = None
        self.body = "records"  # what is under the timeline: records, profile or flame
        self._names_at = 0.0
        self._timeline_at = 0.0
        self._timeline_cost = 0.0
        self._sections_shown = False
        #: set once the screen of a reopen from the cache is painted (the index worker
        #: waits for it before checking the cached rows)
        self._cached_shown = threading.Event()
        #: the cache entry and its section report opened before the app started
        #: (:meth:`reopen_from_cache`): the first frame has the totals and the section pane
        self._reopened = False
        self._opened_early = False  # reopen_from_cache ran (the worker does not again)
        self._notes_shown = 0
        self._annotator: Annotator | None = None
        #: ``a`` pressed before the names were there: (what, on which screen), opened when
        #: they come if that screen is still the one shown
        self._annotate_later: tuple[Target, Screen[Any]] | None = None

    def compose(self) -> ComposeResult:
        m = self.model
        yield HeaderLine(m, id="header")
        yield Timeline(m, id="timeline")
        yield RecordList(m, id="records")
        with Horizontal(id="bottom"):
            yield Detail(m, id="detail")
            yield SectionsPane(m, id="sections")
        yield Footer()

    # -- the profile and flame graph panes, mounted after the first screen --------------------
    @property
    def profile_data(self) -> ProfileData:
        """The profile views' data (made when first wanted, by the UI or the index worker)."""
        with self._profile_lock:
            if self._profile_data is None:
                from .profiledata import ProfileData

                self._profile_data = ProfileData(self.model)
            return self._profile_data

    def _mount_views(self) -> AwaitMount | None:
        """Mount the (hidden) profile and flame graph panes on the main screen, once (None:
        the app is closing)."""
        main = self.screen_stack[0] if self.screen_stack else None
        if self._views_mounting is None and main is not None and main.is_attached \
                and not self._closing:
            from .widgets.flame import FlamePane
            from .widgets.profile import ProfilePane

            panes = (ProfilePane(self.profile_data, id="profile"),
                     FlamePane(self.profile_data, id="flame"))
            self._view_panes = panes
            self._views_mounting = main.mount(*panes, before=main.query_one(Footer))
            self.call_later(self._views_mounted, self._views_mounting)
        return self._views_mounting

    async def _views_mounted(self, mounting: AwaitMount) -> None:
        await mounting
        self._apply_view_notes()

    def _panes(self) -> tuple[ProfilePane, FlamePane] | None:
        """The profile and flame graph panes, once mounted with their widgets."""
        panes = self._view_panes
        return panes if panes is not None and all(p.is_mounted for p in panes) else None

    def _with_views(self, then: Callable[[], object]) -> bool:
        """True when the panes are mounted; else mount them, call ``then()`` once they
        are, and return False (a key pressed while they are being mounted)."""
        if self._panes() is not None:
            return True
        mounting = self._mount_views()
        if mounting is None:
            return False

        async def later() -> None:
            await mounting
            if len(self.screen_stack) == 1:  # (a screen opened meanwhile: the key is moot)
                then()

        self.call_later(later)
        return False

    def _set_view_notes(self, profile: str, flame: str, redraw: bool = True) -> None:
        """What the profile and flame graph say instead of a profile (``redraw``: shown
        at once, else when next drawn)."""
        self._view_notes = (profile, flame, redraw)
        self._apply_view_notes()

    def _apply_view_notes(self) -> None:
        panes, notes = self._panes(), self._view_notes
        if panes is None or notes is None:
            return
        profile, flame = panes
        if notes[2]:
            profile.set_note(notes[0])
            flame.set_note(notes[1])
        else:
            profile.note, flame.note = notes[0], notes[1]
        self._view_notes = None

    MAIN_ONLY = frozenset({"focus_sections", "focus_records", "focus_timeline", "filter",
                           "goto", "toggle_order", "zoom_pane", "toggle_time_base",
                           "annotate_record", "profile", "flame"})

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The main screen's keys do nothing (and are not shown) on the other screens; a
        prompt shows only its own; "stop indexing" only while indexing."""
        if isinstance(self.screen, PromptScreen) and action in (
                "back_or_quit", "help", "info", "stop_indexing"):
            return False
        if action == "stop_indexing":
            return not self.model.done and not self.cancel_requested
        return not (action in self.MAIN_ONLY and len(self.screen_stack) > 1)

    def reopen_from_cache(self) -> bool:
        """Before the app runs: open the recording's cache entry and the section report
        it keeps (~10 ms at 50 M records; no .ko file read), so that the first frame
        has the totals and the section pane (else the index worker does this after an
        empty first frame; the timeline is binned once laid out either way).  False:
        nothing cached, the worker indexes as on a first open."""
        try:
            self._reopened = self.model.rec.open_cached() and self.model.prepare_cached()
        except Exception:  # the worker tries again, and says what is wrong as it does
            return False
        self._opened_early = True
        return self._reopened

    def on_mount(self) -> None:
        self.query_one(HeaderLine).update_line()
        self.query_one(RecordList).focus()
        self.update_scope()
        if self._reopened:  # the first screen, from the cache: before the first frame
            self.on_progress(Progress(0))
        if self.auto_index:
            self.index()
        else:
            startup.release()

    # -- indexing ---------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="index")
    def index(self) -> None:
        rec = self.model.rec
        worker = get_current_worker()

        def progress(records: int, _bytes: int) -> None:
            # Esc, or the app quitting (Textual cancels its workers, then waits for their
            # threads: q while a 50 M-record file was indexed took ~40 s to exit)
            if self.cancel_requested or worker.is_cancelled:
                rec.cancelled = True
            self.post_message(Progress(records))

        try:
            reopened = self._reopened
            if not self._opened_early:
                reopened = rec.open_cached() and self.model.prepare_cached()
                if reopened:
                    self.post_message(Progress(0))  # the first screen, from the cache
            if reopened:
                # checking the rows holds the GIL for long stretches: let that screen be
                # painted first (0.1-0.25 s sooner on a 5 M-record reopen)
                self._cached_shown.wait(timeout=1.0)
            rec.build_index(progress=progress, budget=0.25)
            self.model.finish()
        except Exception as e:
            self.index_error = f"indexing stopped: {e}"
        self.post_message(Progress(len(rec.columns), done=True))
        if worker.is_cancelled:
            return  # the app is leaving: no drain of a pipe, no cache entry, no names
        if rec.cancelled and self.stream is not None:
            self._drain(self.stream)
        elif self.index_error is None:
            self.model.save()  # after the screen is complete: kept for the next open
            self.post_message(CacheNotes())
        if self.index_error is None and not rec.cancelled and self.model.done:
            try:
                self.model.build_names(progress=self._names_progress,
                                       stage=self._names_stage)
            except _Leaving:
                return
            except Exception as e:  # a symbol source that breaks must not stop the app
                self.post_message(NamesReady(f"symbols: {e}"))
            else:
                self.post_message(NamesReady())
                # the first profile, ready before anyone asks for it (if this breaks, the
                # view computes it again and says why)
                with contextlib.suppress(Exception):
                    self.profile_data.prepare()

    def _names_stage(self, what: str) -> None:
        self.post_message(NamesProgress(0, 0, what))

    def _names_progress(self, done: int, total: int) -> None:
        if get_current_worker().is_cancelled:
            raise _Leaving  # (after a block: the names pass stops within ~10 ms)
        now = time.monotonic()
        if now - self._names_at >= 0.25:
            self._names_at = now
            self.post_message(NamesProgress(done, total))

    def _drain(self, stream: BinaryIO) -> None:
        """Read the pipe to its end after a cancel: the writer must never block."""
        last = time.monotonic()
        try:
            while True:
                data = stream.read(DRAIN_READ)
                if not data:
                    break
                self.drained += len(data)
                now = time.monotonic()
                if now - last > 0.5:
                    last = now
                    self.post_message(Drained(self.drained))
        except (OSError, ValueError):
            pass  # closed at exit
        self.post_message(Drained(self.drained, done=True))

    def on_drained(self, msg: Drained) -> None:
        if self._leaving():  # a worker's message after the app began to exit
            return
        state = "read to its end" if msg.done else "still being read"
        self.query_one(HeaderLine).progress = (f"indexing cancelled; the pipe is {state} "
                                               f"({msg.nbytes:,} bytes dropped)")
        self.query_one(HeaderLine).update_line()

    def on_progress(self, msg: Progress) -> None:
        if self._leaving():  # a worker's message after the app began to exit
            return
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
                more = f" (+{len(rec.errors) - 1} more: i)" if len(rec.errors) > 1 else ""
                header.progress = f"error at offset {e.offset:#x}: {e.message}{more}"
            else:
                header.progress = ""
            m.invalidate()
            if self.model.flt.empty and self.model.time_range is None:
                self.query_one(SectionsPane).fill()
            else:  # a filter typed while indexing: count under it
                self.recount()
            records.clear_cache()
            if rec.errors:
                self.notify(safe(str(rec.errors[0]), 300), severity="error", timeout=10,
                            markup=False)
            if rec.cancelled or self.index_error:
                note = "no profile: " + ("indexing was cancelled" if rec.cancelled
                                         else safe(self.index_error or "", 200))
                self._set_view_notes(note, note, redraw=False)
            self.refresh_body()
            self.refresh_bindings()
        else:
            stop = "" if self.cancel_requested else " (x stops)"
            what = "checking the cached index" if m.rec.index_origin == "cache" else "indexing"
            header.progress = f"{what}… {msg.records:,} records{stop}"
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
        self.update_scope()
        detail = self.query_one(Detail)
        row = records.current_row()
        if row is not None and (detail.shown_row is None or msg.done):
            detail.show(row)
        if not self._cached_shown.is_set():
            self.call_after_refresh(self._first_screen_shown)

    def _leaving(self) -> bool:
        """The app is exiting: its main screen's widgets may be gone."""
        return not self.screen_stack or not self.screen_stack[0].is_attached

    def _first_screen_shown(self) -> None:
        """The first screen with the index's rows is painted: start-up is over (and the
        profile and flame graph panes can be mounted, hidden)."""
        self._cached_shown.set()
        startup.release()
        self._mount_views_once_complete()

    def _mount_views_once_complete(self) -> None:
        """Mount the profile and flame graph panes after the frame that has the timeline's
        bins (their imports must not hold back the first complete screen)."""
        if self._leaving() or self._views_mounting is not None:
            return
        if self.query_one(Timeline).bins is None:
            self.call_after_refresh(self._mount_views_once_complete)
        else:
            self.call_after_refresh(self._mount_views)

    def on_cache_notes(self, _msg: CacheNotes) -> None:
        if self._leaving():  # a worker's message after the app began to exit
            return
        self._cache_notes()

    def _cache_notes(self) -> None:
        """What the index cache has to say (read-only, full, a bad entry), once each."""
        cache = self.model.rec.cache
        if cache is None:
            return
        for note in cache.notes[self._notes_shown:]:
            self.notify(safe(note, 300), severity="warning", timeout=8, markup=False)
        self._notes_shown = len(cache.notes)

    # -- the section report under the filter and range: counted in a worker ----------------
    def recount(self) -> None:
        """Count the section report again (filter or range changed)."""
        if not self.model.done:
            return
        self.query_one(SectionsPane).pending()
        self._recount()

    @work(thread=True, exclusive=True, group="report")
    def _recount(self) -> None:
        rep = self.model.compute_report()
        if rep is not None and not get_current_worker().is_cancelled:
            self.post_message(ReportReady(rep))

    def on_names_progress(self, msg: NamesProgress) -> None:
        if self._leaving():  # a worker's message after the app began to exit
            return
        pct = f"{100 * msg.done // max(1, msg.total)}%"
        note = f"naming samples: {msg.what}…" if msg.what else f"naming samples… {pct}"
        header = self.query_one(HeaderLine)
        if not header.progress or header.progress.startswith("naming samples"):
            header.progress = note
            header.short = "naming…" if msg.what else f"naming {pct}"  # (80 columns)
            header.update_line()
        self._set_view_notes(f"{note} (the profile opens when every sample has its symbol)",
                             note)

    def on_names_ready(self, msg: NamesReady) -> None:
        """Symbols and perf's thread names arrived: draw the list and detail again."""
        if self._leaving():  # a worker's message after the app began to exit
            return
        header = self.query_one(HeaderLine)
        if header.progress.startswith("naming samples"):
            header.progress = ""
            header.update_line()
        if msg.error:
            self.notify(safe(msg.error, 300), severity="warning", markup=False)
            note = "no symbols: " + msg.error
            self._set_view_notes(note, note)
        self.refresh_body()
        records = self.query_one(RecordList)
        records.clear_cache()
        records.refresh()
        detail = self.query_one(Detail)
        if detail.shown_row is not None:
            detail.show(detail.shown_row)
        later, self._annotate_later = self._annotate_later, None
        if later is not None and not msg.error and later[1] is self.screen:
            self.open_annotate(later[0])

    def on_report_ready(self, msg: ReportReady) -> None:
        if self._leaving():  # a worker's message after the app began to exit
            return
        self.model.report = msg.report
        self.query_one(SectionsPane).fill()

    # -- events from widgets ------------------------------------------------------------------
    def on_record_list_highlighted(self, msg: RecordList.Highlighted) -> None:
        if self._leaving():  # posted as the app began to exit
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
            self.return_path = None
            self.push_screen(SectionScreen(self.model, msg.entry))

    # -- annotate ---------------------------------------------------------------------------
    @property
    def annotator(self) -> Annotator:
        """The recording's annotator, on the model's one resolver and the samples' leaves
        it already named (call after :class:`NamesReady`)."""
        if self._annotator is None:
            from ..analysis.annotatefunction import SampleLeaves
            from ..analysis.annotator import Annotator

            m = self.model
            assert m.resolver is not None and m.names is not None
            leaves = SampleLeaves(m.names.rows, np.asarray(m.names.leaf, dtype=np.int32))
            self._annotator = Annotator(m.rec, m.symbol_options, resolver=m.resolver,
                                        leaves=leaves)
        return self._annotator

    def open_annotate(self, target: Target) -> None:
        """Annotate a function: a location id of ``self.annotator.resolver``, a
        :class:`~perftui.symbols.codeloc.FunctionRef`, ``(dso or None, symbol name)``, a
        :class:`~perftui.ui.annotate.SampleTarget` (a sample's function) or a
        :class:`~perftui.ui.annotate.Callee`.  The screen counts the samples the filter
        and the time range keep; Esc comes back."""
        if not self.model.done or self.model.names is None:
            self._annotate_later = (target, self.screen)
            what = "every sample has its symbol" if self.model.done else "indexing ends " \
                "and every sample has its symbol"
            self.notify(f"annotate: opens once {what}", timeout=3)
            return
        if self.model.resolver is None:  # the names came from the cache: made once, now
            self.notify("annotate: reading the symbol tables…", timeout=3)
            self._resolver_then_annotate(target)
            return
        from .annotate import AnnotateScreen

        self.push_screen(AnnotateScreen(self.annotator, target, keep=self._annotate_keep,
                                        scope=self.model.scope_text()))

    @work(thread=True, exclusive=True, group="resolver")
    def _resolver_then_annotate(self, target: Target) -> None:
        try:
            self.model.ensure_resolver()
        except Exception as e:  # a symbol source that breaks must not stop the app
            self.call_from_thread(self.notify, safe(f"annotate: {e}", 300),
                                  severity="error", markup=False)
            return
        self.call_from_thread(self.open_annotate, target)

    def _annotate_keep(self, rows: np.ndarray) -> np.ndarray | None:
        """The filter and the range as a mask over sample rows (None: all kept)."""
        m = self.model
        flt = m.flt.within(m.time_range)
        return None if flt.empty else flt.mask(m.rec, rows, m.context)

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
        views = {"records": ("#records", "#bottom"), "profile": ("#profile",),
                 "flame": ("#flame",)}
        if name not in views:
            name = "records"
        if name != "records" and not self._with_views(lambda: self.show_body(name)):
            return
        if name != self.body:  # (the profile, shown, says its row again)
            self.query_one(Timeline).show_selected(None)
        if self.screen.maximized is not None:
            self.screen.minimize()
        for key, ids in views.items():
            for i in ids:
                self.query_one(i).display = key == name
        old, self.body = self.body, name
        panes = self._panes()
        if name == "records":
            came = "records"
            if panes is not None and old == "flame":
                came = panes[1].came_from
            if panes is not None and old == "profile" and panes[0].section is not None:
                came = "sections"
            (self.query_one(SectionsPane) if came == "sections"
             else self.query_one(RecordList)).focus()
        elif name == "profile" and panes is not None:
            pane = panes[0]
            pane.refresh_data()
            pane.focus_view()
        elif panes is not None:
            flame = panes[1]
            if old != "flame":
                flame.came_from = old
            flame.refresh_data()
            flame.graph.focus()
        self.refresh_bindings()

    def selection_pending(self) -> bool:
        """Whether a pane's selected line is still on its way to the timeline (its cursor
        not rested yet, or its samples not counted yet): for tests and screenshots."""
        panes: list[ProfilePane | FlamePane | SectionsPane] = [self.query_one(SectionsPane)]
        if self._view_panes is not None:
            panes += self._view_panes
        tl = self.query_one(Timeline)
        return any(p.selecting for p in panes) or tl.binning or not tl.selected_drawn

    def on_samples_selected(self, msg: SamplesSelected) -> None:
        """A pane's selected line: its samples drawn as a timeline row of their own."""
        self.query_one(Timeline).show_selected(msg.rows)

    def refresh_body(self) -> None:
        """The scope or the names changed: the profile or flame graph shown follows."""
        panes = self._panes()
        if panes is not None and self.body == "profile":
            panes[0].refresh_data()
        elif panes is not None and self.body == "flame":
            panes[1].refresh_data()

    def show_samples(self, rows: Any, title: str, body: str, cursor: int = 0) -> None:
        """The samples of a profile row, tree line or frame (Enter: their records)."""
        if len(self.screen_stack) == 1:
            from .samplescreen import ProfileSamplesScreen

            self.push_screen(ProfileSamplesScreen(self.model, rows, title, body, cursor))

    def on_sections_pane_profile_wanted(self, msg: SectionsPane.ProfileWanted) -> None:
        panes = self._panes()
        if panes is None:
            self._with_views(lambda: self.on_sections_pane_profile_wanted(msg))
            return
        panes[0].open_section(msg.section)
        self.show_body("profile")

    def jump_to_record(self, row: int, came_from: ReturnPath | ProfileReturn | None = None
                       ) -> None:
        """From a sample in the drill-down back to its record in the list (Esc returns)."""
        while len(self.screen_stack) > 1:
            self.pop_screen()
        if self.body != "records":
            self.show_body("records")
        self.return_path = came_from
        records = self.query_one(RecordList)
        if not records.jump_to_row(row):
            # hidden by the filter or the range: clear them, then jump
            self.model.flt = Filter()
            self.model.time_range = None
            self.model.invalidate()
            self.query_one(Timeline).action_reset()
            records.refresh_data()
            self.update_scope()
            self.recount()
            records.jump_to_row(row)
        records.focus()

    # -- actions ----------------------------------------------------------------------------------
    def action_back_or_quit(self) -> None:
        if len(self.screen_stack) > 1:
            self.pop_screen()
        elif self._back_from_jump():  # a jump from a sample: one level back is its list
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
            self._with_views(self.action_profile)
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
            self._with_views(self.action_flame)
            return
        flame = panes[1]
        if self.body == "flame" and not self._focus_in("#flame"):
            flame.graph.focus()
            return
        self.show_body(flame.came_from if self.body == "flame" else "flame")

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
        self._back_from_jump()

    def _back_from_jump(self) -> bool:
        """After Enter on a sample jumped to its record: back to that samples list, on that
        row (navigation is a stack); False when there is no such jump to go back from."""
        back = self.return_path
        if isinstance(back, ProfileReturn) and len(self.screen_stack) == 1:
            self.return_path = None
            self.show_body(back.body)
            self.show_samples(back.rows, back.title, back.body, back.sample_row)
            return True
        if isinstance(back, ReturnPath) and len(self.screen_stack) == 1 and \
                self.model.report is not None:
            self.return_path = None
            self.push_screen(SectionScreen(self.model, back.entry, cursor=back.symbol_row))
            self.push_screen(SamplesScreen(self.model, back.entry, back.symbol,
                                           cursor=back.sample_row))
            return True
        return False

    def action_stop_indexing(self) -> None:
        if not self.model.done and not self.cancel_requested:
            self.cancel_requested = True
            self.model.rec.cancelled = True
            self.notify("stopping indexing…")
            self.refresh_bindings()

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_info(self) -> None:
        self.push_screen(InfoScreen(self.model))

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
        self.jump_to_record(row)

    def palette_commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        return [
            ("Filter records", "filter by type, cpu, pid, tid, comm, time, section",
             self.action_filter),
            ("Go to offset or time", "jump to a record by file offset or time",
             self.action_goto),
            ("Toggle file/time order", "show records in file order or time order",
             self.action_toggle_order),
            ("Toggle time base", "relative to the first sample or absolute",
             self.action_toggle_time_base),
            ("Module sections", "focus the module-section pane", self.action_focus_sections),
            ("Profile", "perf report's hotspot table, callers and callees",
             self.action_profile),
            ("Flame graph", "the flame graph of what is shown", self.action_flame),
            ("Timeline by kind/CPU", "one timeline row per record kind or per CPU",
             partial(self.query_one(Timeline).action_toggle_rows)),
            ("Reset timeline", "zoom out and clear the time range",
             partial(self.query_one(Timeline).action_reset)),
            ("Recording information", "header and features", self.action_info),
            ("Help", "every key", self.action_help),
            ("Quit", "leave perftui", partial(self.exit, 0)),
        ]
