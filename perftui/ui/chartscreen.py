"""The flame chart (``C``, issue 30): one thread's stacks in time order, time across and
stack depth downwards, as the Firefox Profiler's stack chart and hotspot's timeline show
them (the chart itself: :mod:`.widgets.flamechart`).  It counts what the timeline range,
the filter and the transforms keep (the profile's grouped samples), in a worker; Enter
zooms to a frame's time span."""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Label
from textual.worker import get_current_worker

from ..crash import crash_line, write_traceback
from ..present.report import time_text
from ..textsafe import safe
from .messages import TransformsChanged
from .profiledata import ProfileData, Scope
from .widgets.flamechart import Chart, FlameChart, make_chart
from .widgets.footer import Footer
from .widgets.frames import EventChoice, plural
from .widgets.profile import event_bindings
from .widgets.transformkeys import SandwichWanted, TransformWanted, append_scope, push_wanted

__all__ = ["FlameChart", "FlameChartScreen", "make_chart"]


class FlameChartScreen(EventChoice, Screen[None]):
    """The flame chart of one thread, its title and status lines."""

    BINDINGS = [
        Binding("enter", "zoom", "Zoom", id="chart.zoom",
                tooltip="zoom to the frame's time span (Esc or Backspace: back)"),
        Binding("escape", "back", "Back", id="chart.back",
                tooltip="zoom out; then back to the browser"),
        Binding("backspace", "back", "Back", show=False, id="chart.unzoom",
                tooltip="zoom out; then back to the browser"),
        Binding("q", "app.pop_screen", "Back", show=False, id="chart.leave",
                tooltip="back to the browser"),
        Binding("v", "samples", "Samples", id="chart.samples",
                tooltip="the samples of the frame: in its time span, their stack through it "
                        "(Enter on one: its record)"),
        Binding("right_square_bracket", "thread(1)", "Next thread", key_display="]",
                id="chart.next_thread", tooltip="the next / previous thread, busiest first"),
        Binding("left_square_bracket", "thread(-1)", "Previous thread", key_display="[",
                show=False, id="chart.prev_thread",
                tooltip="the next / previous thread, busiest first"),
        Binding("t", "choose_thread", "Thread", id="chart.thread",
                tooltip="choose the thread: its tid, or a part of its name"),
        *[Binding(b.key, b.action, b.description, show=False, id=f"chart.{b.id}",
                  tooltip=b.tooltip) for b in event_bindings()],
    ]
    DEFAULT_CSS = """
    FlameChartScreen .chart-line { height: 1; width: 100%; text-wrap: nowrap;
                                  text-overflow: ellipsis; }
    FlameChartScreen #chart-title { background: $primary 30%; }
    FlameChartScreen #chart-status { background: $primary 15%; }
    """

    def __init__(self, data: ProfileData, attr: int | None = None,
                 body: str = "records") -> None:
        """``attr``: the event to count first and ``body`` the view under it (the one it
        was opened from, where Esc after a jump to a record goes back to)."""
        super().__init__()
        self.data = data
        self.attr = attr
        self.body = body
        self.tid: int | None = None
        self.zoom: list[tuple[int, int]] = []
        self.busy = False

    def compose(self) -> ComposeResult:
        yield Label("", id="chart-title", classes="chart-line")
        yield FlameChart(id="chart")
        yield Label("", id="chart-status", classes="chart-line")
        yield Footer()

    @property
    def graph(self) -> FlameChart:
        return self.query_one(FlameChart)

    def on_mount(self) -> None:
        self.graph.focus()
        self.call_after_refresh(self.recompute)  # (once the chart's width is known)

    def on_flame_chart_resized(self, msg: FlameChart.Resized) -> None:
        msg.stop()
        self.recompute()

    def scope(self) -> Scope:
        m = self.data.model
        return Scope(m.flt.within(m.time_range), self.chosen_attr())

    def span(self) -> tuple[int, int]:
        """The time the chart spans: the zoom, else the timeline range, else the
        recording's samples."""
        if self.zoom:
            return self.zoom[-1]
        m = self.data.model
        if m.time_range is not None:
            return m.time_range
        lo, hi = m.span()
        return lo, hi + 1

    def refresh_data(self) -> None:
        """Another event chosen (``1``-``9``): counted again."""
        self.recompute()

    def recompute(self) -> None:
        if not self.data.ready:
            self.graph.set_chart(None, "naming samples… (the flame chart opens when every "
                                       "sample has its stack)")
            self._title()
            return
        self.busy = True
        self._title()
        self._compute(self.scope(), self.tid, self.span(), max(1, self.graph.size.width))

    @work(thread=True, exclusive=True, group="chart")
    def _compute(self, scope: Scope, tid: int | None, span: tuple[int, int],
                 width: int) -> None:
        try:
            chart = make_chart(self.data, scope, tid, span, width)
        except Exception as e:  # said, the traceback kept; the browser goes on
            self.app.call_from_thread(self._failed, e)
            return
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._computed, chart)

    def _failed(self, error: Exception) -> None:
        line = safe(crash_line(error, write_traceback(error)), 300)
        self.busy = False
        self.graph.set_chart(None, line)
        self._title()
        self.notify(line, severity="error", markup=False)

    def _computed(self, chart: Chart | None) -> None:
        self.busy = False
        if chart is not None:
            self.tid = chart.tid if chart.threads else self.tid
        empty = "" if chart is not None and chart.levels else "no samples of this thread here"
        if chart is not None and not chart.threads:
            empty = "no samples under the filter, range and transforms"
        self.graph.set_chart(chart, empty)
        self._title()

    def _title(self) -> None:
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(" flame chart ", style="bold reverse")
        ch = self.graph.chart
        m = self.data.model
        if ch is not None and ch.threads:
            attr, attrs = self.scope().attr, self.data.attrs()
            n = f" ({attrs.index(attr) + 1}/{len(attrs)})" if len(attrs) > 1 and \
                attr in attrs else ""
            t.append(f" {safe(self.data.event_title(attr), 30)}{n}", style="bold")
            k = next(i for i, (tid, _c, _n) in enumerate(ch.threads) if tid == ch.tid)
            name = ch.store.comm_names[ch.comm] if 0 <= ch.comm < len(ch.store.comm_names) \
                else "?"
            t.append(f"  thread {safe(name, 30)} {ch.tid} ({k + 1}/{len(ch.threads)})",
                     style="bold")
            t.append(f"  {len(ch.rows):,} {plural(len(ch.rows), 'sample')}")
            if ch.timed:
                t.append(f"  {time_text(ch.total())}")
            t.append(f"  {m.fmt_time(ch.lo)}–{m.fmt_time(ch.hi)} {m.time_unit}")
        if self.zoom:
            t.append("  zoomed", style="bold")
        append_scope(t, self.data, self.busy)
        self.query_one("#chart-title", Label).update(t)

    def on_flame_chart_moved(self, msg: FlameChart.Moved) -> None:
        msg.stop()
        self.query_one("#chart-status", Label).update(self.graph.describe(self.data.model))

    def on_transform_wanted(self, msg: TransformWanted) -> None:
        msg.stop()
        ch = self.graph.chart
        if ch is None:
            return
        said = push_wanted(self.data.transforms, ch.store, msg)
        if said:
            self.notify(said, timeout=3)
            return
        self.recompute()
        self.app.post_message(TransformsChanged())

    def on_sandwich_wanted(self, msg: SandwichWanted) -> None:
        msg.stop()
        self.app.pop_screen()
        self.app.post_message(SandwichWanted(msg.ids, whole=True, attr=self.chosen_attr()))

    def action_zoom(self) -> None:
        ch, f = self.graph.chart, self.graph.current()
        if ch is None or f is None:
            return
        t0, t1 = ch.span_of(f)
        if t1 - t0 >= 2 and (t0, t1) != (ch.lo, ch.hi):
            self.zoom.append((t0, t1))
            self.recompute()

    def action_back(self) -> None:
        if self.zoom:
            self.zoom.pop()
            self.recompute()
        else:
            self.app.pop_screen()

    def action_thread(self, step: int) -> None:
        ch = self.graph.chart
        if ch is None or not ch.threads:
            return
        tids = [t for t, _c, _n in ch.threads]
        k = tids.index(ch.tid) if ch.tid in tids else 0
        self.tid = tids[(k + step) % len(tids)]
        self.recompute()

    def action_choose_thread(self) -> None:
        from .screens import PromptScreen

        self.app.push_screen(PromptScreen(
            "thread", "a tid, or a part of the thread's name (the busiest such thread)"),
            self._choose)

    def _choose(self, text: str | None) -> None:
        ch = self.graph.chart
        if not text or ch is None:
            return
        want = text.strip()
        names = ch.store.comm_names
        hit = next((t for t, c, _n in ch.threads if str(t) == want), None)
        if hit is None:
            hit = next((t for t, c, _n in ch.threads
                        if want.lower() in names[c].lower()), None)
        if hit is None:
            self.notify(f"no thread {safe(want, 40)!r} has samples here", timeout=3,
                        markup=False)
            return
        self.tid = hit
        self.recompute()

    def action_samples(self) -> None:
        ch, f = self.graph.chart, self.graph.current()
        if ch is None or f is None:
            return
        from .samplescreen import ProfileSamplesScreen

        rows = ch.rows[ch.samples_in(f)]
        app = self.app
        t0, t1 = ch.span_of(f)
        m = self.data.model
        title = f"{self.graph.label(f)} · {m.fmt_time(t0)}–{m.fmt_time(t1)} {m.time_unit}"
        app.push_screen(ProfileSamplesScreen(m, np.sort(rows), title, self.body))
