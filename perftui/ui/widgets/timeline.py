"""The record timeline: density of records over time, per kind or per CPU, with a range."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

import numpy as np
from rich.console import RenderableType
from rich.text import Text
from textual import work
from textual.binding import Binding
from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget
from textual.worker import get_current_worker

from ...analysis.timeline import Bins, bins_are_kept, rows_counts, timeline_bins
from ...crash import write_traceback
from ..model import Model
from .timerange import range_prompt, typed_range

BLOCKS = " ▁▂▃▄▅▆▇█"
LABEL_W = 9
ROW_STYLES = {"samples": "green", "maps": "cyan", "tasks": "yellow", "other": "magenta"}
#: the row of the samples of what is selected in a pane (profile, call trees, flame graph,
#: section pane)
SELECTED = "selected"
SELECTED_STYLE = "bold red"
SELECT_AFTER = 0.15  # s a pane's cursor rests on a line before its samples are drawn here


#: the samples of a selection: called in a thread, it gives their SAMPLE index rows a block
#: at a time (never all at once: every sample of 50 M records would be ~400 MB)
RowSource = Callable[[], Iterable[np.ndarray]]


class SamplesSelected(Message):
    """The samples of what is now selected in a pane (a profile row, a call tree line, a
    flame graph frame, a section; None: nothing selected).  The timeline draws them as a
    row of their own.  ``pane`` is the pane it comes from: a pane's None takes away only
    its own row, not one another pane selected since."""

    def __init__(self, rows: RowSource | None, pane: object = None) -> None:
        super().__init__()
        self.rows = rows
        self.pane = pane


#: a window of (t0, t1, columns, by, rows drawn) to bin, and the ``/`` filter's text ("":
#: every record)
BinsWanted = tuple[int, int, int, str, int, str]
#: above this many index rows a window the kept bins do not cover is binned in a thread
SYNC_ROWS = 1 << 20

#: what says which times a timeline's columns hold: (t0, t1, columns, evenly split)
ColumnsKey = tuple[int, int, int, bool]


def _columns_key(b: Bins) -> ColumnsKey:
    """Bins with equal keys have the same columns (their edges follow from these)."""
    return (b.t0, b.t1, b.width, b.edges is None)


if TYPE_CHECKING:
    from ...analysis.filters import Filter

    _WidgetMixin = Widget
else:  # a plain mixin: a Widget base before DataTable's hid its component classes
    _WidgetMixin = object


class SelectsSamples(_WidgetMixin):
    """A pane whose line under the cursor also shows in the timeline: it calls
    :meth:`select_later` when its cursor moves; once the cursor has rested
    (:data:`SELECT_AFTER`), and while :meth:`selection_live`, the samples of
    :meth:`selected_rows` are posted (:class:`SamplesSelected`)."""

    _select_timer: Timer | None = None

    def select_later(self) -> None:
        if self._select_timer is not None:
            self._select_timer.stop()
        self._select_timer = self.set_timer(SELECT_AFTER, self._select_now)

    def select_cancel(self) -> None:
        if self._select_timer is not None:
            self._select_timer.stop()
            self._select_timer = None

    @property
    def selecting(self) -> bool:
        """Whether a selection waits for the cursor to rest."""
        return self._select_timer is not None

    def _select_now(self) -> None:
        self._select_timer = None
        if self.selection_live():
            self.post_message(SamplesSelected(self.selected_rows(), self))

    def selection_live(self) -> bool:
        """Whether the pane's line is what the timeline should show now."""
        return bool(self.display)

    def selected_rows(self) -> RowSource | None:
        """The samples of the line under the cursor (None: none)."""
        return None


class Timeline(Widget, can_focus=True):
    """One row per kind (or CPU); left/right move the cursor, shift extends a range."""

    BINDINGS = [
        Binding("left", "move(-1)", "Earlier", show=False, id="timeline.left",
                tooltip="move the cursor (drops the range)"),
        Binding("right", "move(1)", "Later", show=False, id="timeline.right",
                tooltip="move the cursor (drops the range)"),
        Binding("shift+left", "extend(-1)", "Range", id="timeline.extend_left",
                key_display="⇧←", tooltip="select a range: it filters every pane"),
        Binding("shift+right", "extend(1)", "Extend range", show=False,
                id="timeline.extend_right", tooltip="select a range: it filters every pane"),
        Binding("plus,equals_sign", "zoom(1)", "Zoom", id="timeline.zoom_in",
                key_display="+", tooltip="zoom in / out at the cursor (the range stays)"),
        Binding("minus", "zoom(-1)", "Zoom out", show=False, id="timeline.zoom_out",
                key_display="-", tooltip="zoom in / out at the cursor (the range stays)"),
        Binding("r", "reset", "Reset", id="timeline.reset",
                tooltip="reset the zoom and clear the range"),
        Binding("c", "toggle_rows", "Kind/CPU", id="timeline.rows",
                tooltip="one row per record kind / per CPU"),
        Binding("R", "type_range", "Type range", show=False, id="timeline.type_range",
                tooltip="type the range as perf report --time takes it: 1.5s,3s (from the "
                        "first sample), 757.81,758.2 (perf's timestamps), 50%/2 (the "
                        "second half), 0%-10%"),
        Binding("home", "move_to_end(0)", "First", show=False, id="timeline.home",
                tooltip="the cursor to the first / last column (drops the range)"),
        Binding("end", "move_to_end(1)", "Last", show=False, id="timeline.end",
                tooltip="the cursor to the first / last column (drops the range)"),
    ]
    DEFAULT_CSS = """
    Timeline { height: 7; border: round $primary 50%; padding: 0 0; }
    Timeline:focus { border: round $accent; }
    """

    class RangeChanged(Message):
        """The selected time range changed (None: no selection)."""

        def __init__(self, time_range: tuple[int, int] | None) -> None:
            super().__init__()
            self.time_range = time_range

    def __init__(self, model: Model, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.model = model
        self.by = "kind"
        self.view: tuple[int, int] | None = None  # zoomed window [t0, t1)
        self.cursor = 0  # column
        self.range_start: int | None = None  # selection start column (None: no range)
        # the selection in ns [lo, hi], kept across zoom and resize; the anchor is the
        # time span of the column where shift was first pressed
        self.selection: tuple[int, int] | None = None
        self._anchor: tuple[int, int] | None = None
        self._cursor_time: int | None = None  # where the user put the cursor, in ns
        self.bins: Bins | None = None  # what is drawn: the kind bins and the selected row
        self._kind_bins: Bins | None = None
        self._binning: BinsWanted | None = None  # the window being binned in a thread
        self._kind_for: BinsWanted | None = None  # the window the kind bins are of
        self.border_title = "timeline"
        # the samples of what is selected (a profile row, a section): their own row, under
        # the samples (DESIGN §3: when it was hot, not only how much)
        self.selected: RowSource | None = None
        # their counts: the columns they were counted for, then the counts per column
        self._selected_counts: tuple[ColumnsKey, np.ndarray] | None = None
        self._selected_wanted: ColumnsKey | None = None

    # -- data --------------------------------------------------------------------------------
    def width_cols(self) -> int:
        return max(4, self.content_size.width - LABEL_W)

    def window(self) -> tuple[int, int]:
        if self.view is not None:
            return self.view
        t0, t1 = self.model.span()
        return t0, max(t1 + 1, t0 + 1)

    def refresh_data(self, keep_time: int | None = None) -> None:
        """Bin again (indexing progress, zoom, resize); ``keep_time`` puts the cursor on
        the column of that time."""
        if not self.content_size.width:
            return  # not laid out yet: its first frame bins it (not 4 columns for a frame)
        self._bin(keep_time)
        self.refresh()

    def _bin(self, keep_time: int | None) -> None:
        """Bin the window at the laid-out width (no refresh: ``render`` calls it too);
        ``keep_time``: the cursor goes to that time's column.  A window of a big indexed
        recording that the kept bins do not cover (zoomed in, or by CPU) is a pass over
        every row (~1 s at 50 M records): binned in a thread, the bins drawn staying until
        the new ones come."""
        if keep_time is None:
            keep_time = self._cursor_time
        m = self.model
        # a recording reopened from the cache has its totals (and kept bins) before rows
        if not m.n and not m.rec.stats.records:
            self._binning = self._kind_for = None
            self._set_kind_bins(None, keep_time)
            return
        t0, t1 = self.window()
        flt = m.flt
        want = (t0, t1, self.width_cols(), self.by, max(1, self.content_size.height - 1),
                "" if flt.empty else flt.text)
        if m.done and want == self._kind_for and self._kind_bins is not None:
            self._binning = None  # (made for this very window of the complete index)
            self._set_kind_bins(self._kind_bins, keep_time)
            return
        if m.done and m.n > SYNC_ROWS and (want[5] or not bins_are_kept(m.rec, *want[:4])):
            if want != self._binning:
                self._binning = want
                self._bin_in_thread(want, keep_time, flt)
            return
        self._binning = None
        self._kind_for = want if m.done else None
        self._set_kind_bins(self._bins(want, flt), keep_time)

    def _bins(self, want: BinsWanted, flt: Filter) -> Bins:
        """The bins of ``want``: of the records ``flt`` keeps when it keeps not all."""
        m = self.model
        rows = m.filtered_rows(flt) if want[5] else None
        return timeline_bins(m.rec, *want[:4], max_rows=want[4], rows=rows)

    def _set_kind_bins(self, b: Bins | None, keep_time: int | None) -> None:
        self._kind_bins = b
        self._with_selected()
        if keep_time is not None and self.bins is not None:
            self.cursor = self.col_of(keep_time)
        self.cursor = min(max(self.cursor, 0), self.width_cols() - 1)

    @work(thread=True, exclusive=True, group="timeline-bins")
    def _bin_in_thread(self, want: BinsWanted, keep_time: int | None, flt: Filter) -> None:
        b = self._bins(want, flt)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._binned, want, b, keep_time)

    def _binned(self, want: BinsWanted, b: Bins, keep_time: int | None) -> None:
        if want == self._binning:
            self._binning = None
            self._kind_for = want
            self._set_kind_bins(b, keep_time)
            self.refresh()

    @property
    def binning(self) -> bool:
        """Whether bins are being made in a thread."""
        return self._binning is not None

    # -- the selected row ----------------------------------------------------------------
    def show_selected(self, rows: RowSource | None) -> None:
        """Draw a row of the samples ``rows`` gives under the samples (None: no such row).
        Counted in a thread; until then the row is not drawn."""
        if rows is None and self.selected is None:
            return
        self.selected = rows
        self._selected_counts = None
        self._selected_wanted = None
        self._with_selected()
        self.refresh()

    @property
    def selected_drawn(self) -> bool:
        """Whether the selected row (if any) is drawn as counted for the bins shown."""
        b = self.bins
        if self.selected is None or b is None:
            return True
        got = self._selected_counts
        return got is not None and self._kind_bins is not None and \
            got[0] == _columns_key(self._kind_bins)

    def _with_selected(self) -> None:
        """The bins shown: the kind (or CPU) bins, and the selected row second when it is
        counted for them; else it is counted now in a thread (the bins are drawn without it
        meanwhile).  The kind bins are not made again for it: zoomed in, they are a pass
        over every row (seconds at 50 M records), and the row changes with every cursor."""
        b = self._kind_bins
        self.bins = b
        if b is None or self.selected is None:
            return
        got = self._selected_counts
        key = _columns_key(b)
        if got is not None and got[0] == key:
            row = got[1]
            at = min(1, len(b.labels))
            self.bins = Bins([*b.labels[:at], SELECTED, *b.labels[at:]],
                             np.insert(b.counts, at, row, axis=0), b.t0, b.t1, b.edges)
        elif self._selected_wanted != key:
            self._selected_wanted = key
            self._count_selected(self.selected, b)

    @work(thread=True, exclusive=True, group="timeline-selected")
    def _count_selected(self, rows: RowSource, want: Bins) -> None:
        worker = get_current_worker()

        def blocks() -> Iterator[np.ndarray]:
            for b in rows():
                if worker.is_cancelled:  # (another selection came: its count goes on)
                    return
                yield b

        try:
            counts = rows_counts(self.model.rec, blocks(), want)
        except Exception as e:  # a bug must not end the browser: the row is not drawn, the
            write_traceback(e)  # traceback kept (the pane shows its own errors)
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self._selected_counted, rows, _columns_key(want), counts)

    def _selected_counted(self, rows: RowSource, want: ColumnsKey, counts: np.ndarray
                          ) -> None:
        if rows is self.selected and want == self._selected_wanted:
            self._selected_counts = (want, counts)
            self._with_selected()
            self.refresh()

    def col_of(self, t: int) -> int:
        """The column whose time span holds ``t`` (clamped to the window)."""
        b = self.bins
        if b is None:
            return 0
        span = max(1, b.t1 - b.t0)
        return min(max(0, (t - b.t0) * b.width // span), b.width - 1)

    def col_range(self) -> tuple[int, int] | None:
        if self.selection is None or self.bins is None:
            return None
        lo, hi = self.selection
        b = self.bins
        if hi < b.t0 or lo >= b.t1:
            return None
        return self.col_of(lo), self.col_of(hi)

    def time_range(self) -> tuple[int, int] | None:
        return self.selection

    # -- drawing -----------------------------------------------------------------------------
    def render(self) -> RenderableType:
        if self.bins is None and self.content_size.width:
            # the first frame after layout: binned now, not a frame later on its resize
            # (a reopen's complete screen one layout sooner)
            self._bin(None)
        b = self.bins
        if b is None:
            return Text("binning…" if self._binning else "indexing…", style="dim")
        w = b.width
        cr = self.col_range()
        lines = Text(no_wrap=True, overflow="crop")
        rows = max(1, self.content_size.height - 1)
        for r, label in enumerate(b.labels[:rows]):
            counts = b.counts[r]
            top = counts.max() if len(counts) else 0
            lines.append(f"{label:<{LABEL_W - 1}} ", style="bold")
            if top:
                level = np.round(counts * (len(BLOCKS) - 1) / top).astype(int)
                level[(counts > 0) & (level == 0)] = 1  # never hide a record
            else:
                level = np.zeros(w, dtype=int)
            style = SELECTED_STYLE if r <= 1 and label == SELECTED else \
                ROW_STYLES.get(label, "green")
            for col in range(w):
                ch = BLOCKS[level[col]]
                st = style
                if cr is not None and cr[0] <= col <= cr[1]:
                    # a full block hides any background: the range shows in its own colour
                    st = "bold bright_white on grey30" if level[col] else "on grey30"
                if col == self.cursor and self.has_focus:
                    # reversed, an empty cell would show a block of the row's colour: a
                    # record that is not there
                    st += " reverse" if level[col] else " on grey62"
                lines.append(ch, style=st)
            lines.append("\n")
        t0, t1 = b.t0, b.t1
        first = self.model.first_time
        base = 0 if self.model.absolute_time else first
        unit = self.model.time_unit

        def sec(t: int) -> str:
            return f"{(t - base) / 1e9:.3f}"

        left = f"{sec(t0)} {unit}"
        mid = f"cursor {sec(b.col_time(self.cursor))} {unit}"
        tr = self.time_range()
        if tr is not None:  # (as the record list's title says it: perf script's µs)
            fmt = self.model.fmt_time
            mid = f"range {fmt(tr[0])}–{fmt(tr[1])} {unit}"
        right = f"{sec(t1)} {unit}"
        if len(left) + len(mid) + len(right) + 2 > w:  # narrow: the range before the ends
            left = right = ""
        gap = max(1, w - len(left) - len(mid) - len(right))
        axis = f"{'':<{LABEL_W}}{left}{' ' * (gap // 2)}{mid}{' ' * (gap - gap // 2)}{right}"
        lines.append(axis, style="dim")
        return lines

    # -- keys --------------------------------------------------------------------------------
    def _set_cursor(self, col: int) -> None:
        self.cursor = min(max(0, col), self.width_cols() - 1)
        if self.bins is not None:
            self._cursor_time = self.bins.col_time(self.cursor)

    def action_move(self, delta: int) -> None:
        self._set_cursor(self.cursor + delta)
        if self.selection is not None:
            self._clear_selection()
            self.post_message(self.RangeChanged(None))
        self.refresh()

    def action_move_to_end(self, last: int) -> None:
        """Home and End: the first or the last column."""
        self.action_move((self.width_cols() if last else 0) - self.cursor)

    def _clear_selection(self) -> None:
        self.range_start = None
        self.selection = None
        self._anchor = None

    def _col_span(self, col: int) -> tuple[int, int]:
        b = self.bins
        assert b is not None
        return b.col_time(col), b.col_time(col + 1) - 1

    def action_extend(self, delta: int) -> None:
        if self.bins is None:
            return
        if self._anchor is None:
            self.range_start = self.cursor
            self._anchor = self._col_span(self.cursor)
        self._set_cursor(self.cursor + delta)
        here = self._col_span(self.cursor)
        self.selection = (min(self._anchor[0], here[0]), max(self._anchor[1], here[1]))
        self.refresh()
        self.post_message(self.RangeChanged(self.selection))

    def action_type_range(self) -> None:
        """R: the range typed, in ``perftui report --time``'s syntax."""
        self.app.push_screen(range_prompt(self.model, self.selection), self._typed_range)

    def _typed_range(self, text: str | None) -> None:
        if text is None:
            return
        got = typed_range(self.model, text) if text.strip() else None  # empty: no range
        if isinstance(got, str):
            self.app.notify(got, severity="error", markup=False)
            return
        self._clear_selection()
        self.selection = got
        t0, t1 = self.window()
        if got is not None:
            self._cursor_time = got[0]
            if got[0] < t0 or got[1] >= t1:  # zoomed elsewhere: the whole span shows it
                self.view = None
        self.refresh_data(keep_time=self._cursor_time)
        self.post_message(self.RangeChanged(got))

    def action_zoom(self, direction: int) -> None:
        t0, t1 = self.window()
        full0, full1 = self.model.span()
        span = t1 - t0
        if self.bins is not None:
            center = self.bins.col_time(self.cursor)
        else:
            center = (t0 + t1) // 2
        new = span // 2 if direction > 0 else span * 2
        new = max(new, 1000)
        lo = max(full0, center - new // 2)
        hi = min(full1 + 1, lo + new)
        lo = max(full0, hi - new)
        self.view = None if (lo <= full0 and hi >= full1) else (lo, hi)
        # the range (in times) and the record list stay as they are
        self._cursor_time = center
        self.refresh_data(keep_time=center)
        self.refresh()

    def action_reset(self) -> None:
        self.view = None
        self._cursor_time = None
        self._clear_selection()
        self.refresh_data()
        self.post_message(self.RangeChanged(None))

    def action_toggle_rows(self) -> None:
        self.by = "cpu" if self.by == "kind" else "kind"
        self.refresh_data()

    def on_resize(self) -> None:
        self.refresh_data()  # the cursor keeps its time

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()
