"""The browser's messages: what the index worker tells the app (progress, names, the cache's
notes), and what screens and panes ask of it (annotate a function, jump to a record, show a
view or a list of samples).  A child posts one of these instead of calling the app: it
bubbles up to :class:`~perftui.ui.app.PerftuiApp`, which owns the navigation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    from ..analysis.sectionreport import SectionReport
    from .annotate import Target


# -- from the index worker ----------------------------------------------------------------
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


class LiveNames(Message):
    """A pipe still streaming: the names, groups and section report of the records read so
    far are the model's (:class:`~perftui.ui.livepipe.LivePipe`)."""


class ReportReady(Message):
    """The section report of the current filter and range, counted by a worker."""

    def __init__(self, report: SectionReport) -> None:
        super().__init__()
        self.report = report


# -- where Esc goes back to after a jump from a sample to its record -----------------------
@dataclass
class ReturnPath:
    """Back to the section drill-down's samples of a symbol, on that row."""

    entry: int
    symbol_row: int
    symbol: str
    sample_row: int


@dataclass
class ProfileReturn:
    """Back to the samples of a profile row, tree line or frame (``body``: the profile or
    the flame graph under it)."""

    rows: Any
    title: str
    body: str
    sample_row: int


# -- from screens and panes to the app -----------------------------------------------------
class AnnotateWanted(Message):
    """Annotate a function (see :data:`~perftui.ui.annotate.Target`); Esc comes back."""

    def __init__(self, target: Target) -> None:
        super().__init__()
        self.target = target


class RecordWanted(Message):
    """Jump to a sample's record in the record list (``back``: where Esc returns)."""

    def __init__(self, row: int, back: ReturnPath | ProfileReturn | None = None) -> None:
        super().__init__()
        self.row = row
        self.back = back


class TransformsChanged(Message):
    """The transforms changed on a screen over the main one: the body under it follows."""


class BodyWanted(Message):
    """Show ``records``, ``profile`` or ``flame`` under the timeline."""

    def __init__(self, body: str) -> None:
        super().__init__()
        self.body = body


class SamplesWanted(Message):
    """List these SAMPLE rows (a profile row's, a tree line's, a frame's) on a screen of
    their own; ``body`` is the view they came from."""

    def __init__(self, rows: Any, title: str, body: str, cursor: int = 0) -> None:
        super().__init__()
        self.rows = rows
        self.title = title
        self.body = body
        self.cursor = cursor
