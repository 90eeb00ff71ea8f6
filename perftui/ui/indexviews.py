"""How the main screen follows the index worker's messages: the header's progress line,
the record list, the timeline (re-binned at most ~10% of the time while indexing), the
detail, the section pane (and its count under the filter and range, in a worker), the
cache's notes and the profile views' notes."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual.worker import get_current_worker

from .. import engine, startup
from ..textsafe import safe
from .messages import Drained, LiveNames, NamesProgress, NamesReady, Progress, ReportReady
from .screens import SectionScreen
from .widgets.panes import Detail, HeaderLine, SectionsPane
from .widgets.records import RecordList
from .widgets.timeline import Timeline

if TYPE_CHECKING:
    from .app import PerftuiApp


class IndexDisplay:
    """The main screen's panes as the index and the names come (the app's handlers of the
    worker's messages call it)."""

    def __init__(self, app: PerftuiApp) -> None:
        self.app = app
        self._timeline_at = 0.0
        self._timeline_cost = 0.0
        self._sections_shown = False
        self._notes_shown = 0

    def leaving(self) -> bool:
        """The app is exiting: its main screen's widgets may be gone (the screen itself
        still attached while its children are being removed: a live pipe's progress came
        then, under load, and found no header)."""
        app = self.app
        return (not app.screen_stack or not app.screen_stack[0].is_attached
                or not app.screen_stack[0].query(HeaderLine))

    def drained(self, msg: Drained) -> None:
        state = "read to its end" if msg.done else "still being read"
        header = self.app.query_one(HeaderLine)
        header.progress = (f"indexing cancelled; the pipe is {state} "
                           f"({msg.nbytes:,} bytes dropped)")
        header.update_line()

    def progress(self, msg: Progress) -> None:
        app = self.app
        header = app.query_one(HeaderLine)
        records = app.query_one(RecordList)
        m = app.model
        self.cache_notes()
        if msg.done:
            self._indexed()
        else:
            stop = "" if app.indexer.cancel_requested else " (x stops)"
            what = ("checking the cached index" if m.rec.index.origin == "cache"
                    else "reading the pipe" if app.indexer.stream is not None else "indexing")
            live = app.indexer.live
            done = (f"{live.named:,} samples named" if live is not None and live.named
                    else f"{msg.records:,} records")  # (the header has the records read)
            header.progress = f"{what}… {done}{stop}"
            m.invalidate()
            if m.report is not None and not self._sections_shown:  # kept by the cache
                self._sections_shown = True
                app.query_one(SectionsPane).fill()
        records.refresh_data()
        # the timeline re-bins every record: while indexing, spend at most ~10% of the time
        now = time.monotonic()
        if msg.done or now - self._timeline_at >= max(1.0, 10 * self._timeline_cost):
            app.query_one(Timeline).refresh_data()
            self._timeline_at = time.monotonic()
            self._timeline_cost = self._timeline_at - now
        header.update_line()
        app.update_scope()
        detail = app.query_one(Detail)
        row = records.current_row()
        if row is not None and (detail.shown_row is None or msg.done):
            detail.show(row)
        if not app.indexer.first_screen_shown.is_set():
            app.call_after_refresh(self._first_screen_shown)

    def _indexed(self) -> None:
        """The last progress: what the header says, the section pane, the notes."""
        app = self.app
        m, rec = app.model, app.model.rec
        header = app.query_one(HeaderLine)
        error = app.indexer.index_error
        if rec.cancelled and app.indexer.stream is not None:
            header.progress = f"stopped reading the pipe: {m.n:,} records read, kept"
        elif rec.cancelled:
            header.progress = "indexing cancelled"
        elif error:
            header.progress = error
        elif rec.errors:
            e = rec.errors[0]
            more = f" (+{len(rec.errors) - 1} more: i)" if len(rec.errors) > 1 else ""
            header.progress = f"error at offset {e.offset:#x}: {e.message}{more}"
        else:
            # the names pass follows (the worker keeps the index first): said from now, not
            # from its first progress, so no moment looks finished before the names came
            header.progress, header.short = "naming samples…", "naming…"
        m.invalidate()
        if m.flt.empty and m.time_range is None:
            app.query_one(SectionsPane).fill()
        else:  # a filter typed while indexing: count under it
            self.recount()
        app.query_one(RecordList).clear_cache()
        if rec.errors:
            app.notify(safe(str(rec.errors[0]), 300), severity="error", timeout=10,
                       markup=False)
        if error or (rec.cancelled and app.indexer.stream is None):
            note = "no profile: " + ("indexing was cancelled" if rec.cancelled
                                     else safe(error or "", 200))
            app.views.set_notes(note, note, redraw=False)
        app.refresh_body()
        app.refresh_bindings()

    def _first_screen_shown(self) -> None:
        """The first screen with the index's rows is painted: start-up is over (and the
        profile and flame graph panes can be mounted, hidden)."""
        self.app.indexer.first_screen_shown.set()
        startup.release()
        self._mount_views_once_complete()

    def _mount_views_once_complete(self) -> None:
        """Mount the profile and flame graph panes after the frame that has the timeline's
        bins (their imports must not hold back the first complete screen); at once when
        the timeline is not laid out (another pane zoomed with ``z``: it bins when shown
        again; waiting for it left the panes unmounted, found by the seeded walk)."""
        app = self.app
        if self.leaving() or app.views.mounting:
            return
        timeline = app.query_one(Timeline)
        if timeline.bins is None and timeline.content_size.width:
            app.call_after_refresh(self._mount_views_once_complete)
        else:
            app.call_after_refresh(app.views.mount)

    def cache_notes(self) -> None:
        """What the index cache has to say (read-only, full, a bad entry), once each."""
        cache = self.app.model.rec.cache
        if cache is None:
            return
        for note in cache.notes[self._notes_shown:]:
            self.app.notify(safe(note, 300), severity="warning", timeout=8, markup=False)
        self._notes_shown = len(cache.notes)

    # -- the section report under the filter and range: counted in a worker ----------------
    def recount(self) -> None:
        """Count the section report again (filter or range changed)."""
        app = self.app
        if not app.model.done:
            return
        app.query_one(SectionsPane).pending()
        app.run_worker(self._count, name="report", group="report", thread=True,
                       exclusive=True)

    def _count(self) -> None:
        rep = self.app.model.compute_report()
        if rep is not None and not get_current_worker().is_cancelled:
            self.app.post_message(ReportReady(rep))

    def report_ready(self, msg: ReportReady) -> None:
        self.app.model.report = msg.report
        self.app.query_one(SectionsPane).fill()

    def names_progress(self, msg: NamesProgress) -> None:
        pct = f"{100 * msg.done // max(1, msg.total)}%"
        note = f"naming samples: {msg.what}…" if msg.what else f"naming samples… {pct}"
        header = self.app.query_one(HeaderLine)
        if not header.progress or header.progress.startswith("naming samples"):
            header.progress = note
            header.short = "naming…" if msg.what else f"naming {pct}"  # (80 columns)
            header.update_line()
        self.app.views.set_notes(
            f"{note} (the profile opens when every sample has its symbol)", note)

    def live_names(self, _msg: LiveNames) -> None:
        """A streaming pipe's records named so far: the section pane and the view shown
        follow them."""
        app = self.app
        if app.model.done:
            return  # (the exact pass is coming)
        self._sections_shown = True
        app.query_one(SectionsPane).fill()
        app.refresh_body()
        app.query_one(RecordList).clear_cache()

    def names_ready(self, msg: NamesReady) -> None:
        """Symbols and perf's thread names arrived: draw the list and detail again."""
        app = self.app
        header = app.query_one(HeaderLine)
        if header.progress.startswith("naming samples"):
            header.progress = ""
            header.update_line()
        if msg.error:
            app.notify(safe(msg.error, 300), severity="warning", markup=False)
            note = "no symbols: " + msg.error
            app.views.set_notes(note, note)
        for note in engine.NOTES:  # the background compile: said once (in a toast)
            app.notify(note, severity="information", timeout=10, markup=False)
        app.refresh_body()
        records = app.query_one(RecordList)
        records.clear_cache()
        records.refresh()
        detail = app.query_one(Detail)
        if detail.shown_row is not None:
            detail.show(detail.shown_row)
        for screen in app.screen_stack:  # a section drill-down opened before the names
            if isinstance(screen, SectionScreen):
                screen.fill_symbols()
        app.annotating.names_ready(msg.error)
