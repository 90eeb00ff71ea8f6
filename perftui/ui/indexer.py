"""The browser's controller of one recording's index and names: a thread worker that
reopens the cache entry or walks the file, keeps the finished index, names every sample
and prepares the first profile, and tells the app how far it got by messages
(:mod:`perftui.ui.messages`).  No widget is touched here: the app's handlers
(:mod:`perftui.ui.indexviews`) draw what the messages say."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, BinaryIO

from textual.message import Message
from textual.worker import Worker, get_current_worker

from .. import heap
from .livepipe import LivePipe
from .messages import CacheNotes, Drained, LiveNames, NamesProgress, NamesReady, Progress

if TYPE_CHECKING:
    from textual.app import App

    from .model import Model

DRAIN_READ = 1 << 20


class _Leaving(Exception):
    """The app is quitting: the names pass stops (nothing is kept)."""


class IndexController:
    """Index, cache and names of ``model``'s recording, in one worker of ``app``.

    ``stream`` is the pipe a pipe-mode recording is read from: while it streams the views
    follow it (:class:`~perftui.ui.livepipe.LivePipe`); after a cancel the records read
    are named for every view, and the pipe is read to its end in a thread of its own (the
    bytes dropped), so the writer never blocks.  ``prepare`` is called in the worker once
    every sample is named (the first profile, ready before anyone asks).
    """

    def __init__(self, app: App, model: Model, stream: BinaryIO | None = None,
                 prepare: Callable[[], object] | None = None) -> None:
        self.app = app
        self.model = model
        self.stream = stream
        self.prepare = prepare
        self.cancel_requested = False  # x: stop indexing
        self.index_error: str | None = None
        self.drained = 0
        self.live = LivePipe(model) if stream is not None else None
        #: set once the screen of a reopen from the cache is painted (the worker waits for
        #: it before checking the cached rows)
        self.first_screen_shown = threading.Event()
        #: the cache entry and its section report opened before the app started
        #: (:meth:`reopen_from_cache`): the first frame has the totals and the section pane
        self.reopened = False
        self._opened_early = False  # reopen_from_cache ran (the worker does not again)
        self._names_at = 0.0

    @property
    def busy(self) -> bool:
        """Indexing, and not asked to stop."""
        return not self.model.done and not self.cancel_requested

    def reopen_from_cache(self) -> bool:
        """Before the app runs: open the recording's cache entry and the section report
        it keeps (~10 ms at 50 M records; no .ko file read), so that the first frame
        has the totals and the section pane (else the worker does this after an empty
        first frame; the timeline is binned once laid out either way).  False: nothing
        cached, the worker indexes as on a first open."""
        try:
            self.reopened = self.model.rec.open_cached() and self.model.prepare_cached()
        except Exception:  # the worker tries again, and says what is wrong as it does
            return False
        self._opened_early = True
        return self.reopened

    def start(self) -> Worker[None]:
        """Index (or reopen), keep, name: in a thread worker of the app."""
        return self.app.run_worker(self._run, name="index", group="index", thread=True,
                                   exclusive=True)

    def stop(self) -> bool:
        """``x``: stop indexing (False: nothing to stop)."""
        if not self.busy:
            return False
        self.cancel_requested = True
        self.model.rec.cancelled = True
        return True

    def _post(self, msg: Message) -> None:
        self.app.post_message(msg)

    # -- in the worker's thread -------------------------------------------------------------
    def _run(self) -> None:
        rec = self.model.rec
        worker = get_current_worker()

        def progress(records: int, _bytes: int) -> None:
            # x, or the app quitting (Textual cancels its workers, then waits for their
            # threads: q while a 50 M-record file was indexed took ~40 s to exit)
            if self.cancel_requested or worker.is_cancelled:
                rec.cancelled = True
            self._post(Progress(records))
            if self.live is not None and not rec.cancelled and self.live.due():
                self._live_update()

        try:
            reopened = self.reopened
            if not self._opened_early:
                reopened = rec.open_cached() and self.model.prepare_cached()
                if reopened:
                    self._post(Progress(0))  # the first screen, from the cache
            if reopened:
                # checking the rows holds the GIL for long stretches: let that screen be
                # painted first (0.1-0.25 s sooner on a 5 M-record reopen)
                self.first_screen_shown.wait(timeout=1.0)
            rec.build_index(progress=progress, budget=0.25)
            self.model.finish()
        except Exception as e:
            self.index_error = f"indexing stopped: {e}"
        self._post(Progress(len(rec.columns), done=True))
        if worker.is_cancelled:
            return  # the app is leaving: no drain of a pipe, no cache entry, no names
        if rec.cancelled and self.stream is not None:
            threading.Thread(target=self._drain, args=(self.stream,), name="drain",
                             daemon=True).start()
        elif self.index_error is None:
            self.model.save()  # after the screen is complete: kept for the next open
            self._post(CacheNotes())
        if self.index_error is None and self.model.done and (
                not rec.cancelled or self.stream is not None):  # x on a pipe keeps it
            self._name_samples()

    def _live_update(self) -> None:
        """The views of a streaming pipe follow what is read (between two chunks)."""
        assert self.live is not None
        try:
            self.live.update()
        except Exception as e:  # said once; the exact pass at the end still runs
            self.live = None
            self._post(NamesReady(f"live view stopped: {e}"))
            return
        self._post(LiveNames())

    def _name_samples(self) -> None:
        live = self.live
        try:
            if live is None or not live.finish():  # (a live pipe: what is left named)
                self.model.build_names(progress=self._names_progress,
                                       stage=self._names_stage,
                                       cache=live.cache if live is not None else None)
        except _Leaving:
            return
        except Exception as e:  # a symbol source that breaks must not stop the app
            self._post(NamesReady(f"symbols: {e}"))
            return
        finally:
            # a live pipe's symbol tables go with its last pass, as a resolver's do (a
            # system-wide stream of 80 K samples: 234 -> 93 MB of RssAnon)
            self.live = live = None
            heap.trim()
        self._post(NamesReady())
        if self.prepare is not None:
            # (if this breaks, the view computes it again and says why)
            with contextlib.suppress(Exception):
                self.prepare()

    def _names_stage(self, what: str) -> None:
        self._post(NamesProgress(0, 0, what))

    def _names_progress(self, done: int, total: int) -> None:
        if get_current_worker().is_cancelled:
            raise _Leaving  # (after a block: the names pass stops within ~10 ms)
        now = time.monotonic()
        if now - self._names_at >= 0.25:
            self._names_at = now
            self._post(NamesProgress(done, total))

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
                    self._post(Drained(self.drained))
        except (OSError, ValueError):
            pass  # closed at exit
        self._post(Drained(self.drained, done=True))
