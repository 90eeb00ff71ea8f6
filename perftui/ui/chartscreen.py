"""The flame chart (``C``, issue 30): one thread's stacks in time order, time across and
stack depth downwards, as the Firefox Profiler's stack chart and hotspot's timeline show
them.  Each column is the stack most of its samples have
(:func:`~perftui.analysis.flamechart.chart_columns`); neighbouring columns through the same
frame are one frame.  It counts what the timeline range, the filter and the transforms keep
(the profile's grouped samples), in a worker; Enter zooms to a frame's time span."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Label
from textual.worker import get_current_worker

from ..analysis.flamechart import ChartFrame, chart_columns, chart_levels, column_time, through
from ..analysis.samplegroups import SampleGroups
from ..analysis.transforms import FOCUS_SUBTREE
from ..crash import crash_line, write_traceback
from ..textsafe import safe
from .profiledata import ProfileData, Scope
from .widgets.footer import Footer
from .widgets.frames import KIND_COLOURS, frame_kind, frame_name, where_text
from .widgets.icicle import CURSOR, TEXT
from .widgets.linelist import wrap_note
from .widgets.transformkeys import (
    SandwichWanted,
    TransformWanted,
    push_wanted,
    transform_bindings,
)

_MOVE = "move between frames: ↑ caller, ↓ callee, ←/→ the frames before and after"


@dataclass
class Chart:
    """One thread's chart as computed: the store, the thread, the time span ``[lo, hi)``
    in ``width`` columns, the frames by depth, and the thread's samples in the span (their
    index rows, times and trie nodes)."""

    store: SampleGroups
    tid: int
    comm: int
    lo: int
    hi: int
    width: int
    levels: list[list[ChartFrame]]
    rows: np.ndarray
    time: np.ndarray
    node: np.ndarray
    threads: list[tuple[int, int, int]]  # (tid, comm, samples), busiest first

    def span_of(self, f: ChartFrame) -> tuple[int, int]:
        """The time span ``[t0, t1)`` of a frame's columns."""
        return (column_time(self.lo, self.hi, self.width, f.c0),
                column_time(self.lo, self.hi, self.width, f.c1))

    def samples_in(self, f: ChartFrame) -> np.ndarray:
        """Bool per sample of :attr:`rows`: in the frame's span, its stack through it."""
        t0, t1 = self.span_of(f)
        out: np.ndarray = (self.time >= t0) & (self.time < t1) & \
            through(self.store.trie, self.node, f.node)
        return out


def make_chart(data: ProfileData, scope: Scope, tid: int | None, span: tuple[int, int],
               width: int) -> Chart | None:
    """Thread ``tid``'s chart (None: the busiest thread) over ``span`` in ``width``
    columns, of the samples ``scope`` and the transforms keep (None before the names)."""
    sel = data.selection(scope)
    if sel is None:
        return None
    st = sel.store
    keep = sel.count[st.group] > 0
    if sel.samples is not None:
        keep &= sel.samples
    tids = st.tid[st.group]
    kept_tids, first, n = np.unique(tids[keep], return_index=True, return_counts=True)
    where = np.flatnonzero(keep)
    comms = st.comm[st.group[where[first]]] if len(first) else first
    order = np.lexsort((kept_tids, -n))
    threads = [(int(kept_tids[i]), int(comms[i]), int(n[i])) for i in order]
    if tid is None or tid not in {t for t, _c, _n in threads}:
        tid = threads[0][0] if threads else -1
    comm = next((c for t, c, _n in threads if t == tid), 0)
    lo, hi = span
    mine = np.flatnonzero(keep & (tids == tid))
    time = data.model.rec.columns["time"][st.rows[mine]].astype(np.int64)
    inside = (time >= lo) & (time < hi)
    mine, time = mine[inside], time[inside]
    node = st.node[st.group[mine]].astype(np.int64)
    cols = chart_columns(time, node, lo, hi, width)
    return Chart(st, tid, comm, lo, hi, width, chart_levels(st.trie, cols.stack),
                 st.rows[mine], time, node, threads)


class FlameChart(Widget, can_focus=True):
    """The frames of a :class:`Chart`, a depth a line, with a cursor on one."""

    BINDINGS = [
        Binding("up", "move('up')", "Up", show=False, id="chart.up", tooltip=_MOVE),
        Binding("down", "move('down')", "Down", show=False, id="chart.down", tooltip=_MOVE),
        Binding("left", "move('left')", "Left", show=False, id="chart.left", tooltip=_MOVE),
        Binding("right", "move('right')", "Right", show=False, id="chart.right",
                tooltip=_MOVE),
        Binding("home", "top", "Top", show=False, id="chart.top",
                tooltip="back to the first frame of the outermost level"),
        *transform_bindings("chart", subtree=True),
    ]
    DEFAULT_CSS = "FlameChart { height: 1fr; }"

    class Moved(Message):
        """The cursor or the chart changed: the status line follows."""

    class Resized(Message):
        """The chart's width changed: its columns are counted again."""

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.chart: Chart | None = None
        self.placeholder = ""
        self.cursor: tuple[int, int] = (0, 0)  # (level, index in the level)
        self.top = 0

    def set_chart(self, chart: Chart | None, placeholder: str = "") -> None:
        """A new chart; the cursor goes to the frame nearest where it was."""
        old = self.current()
        self.chart, self.placeholder = chart, placeholder
        level = self.cursor[0]
        if chart is None or not chart.levels:
            self.cursor, self.top = (0, 0), 0
        else:
            level = min(level, len(chart.levels) - 1)
            row = chart.levels[level]
            at = old.c0 if old is not None else 0
            i = next((k for k, f in enumerate(row) if f.c1 > at), len(row) - 1)
            self.cursor = (level, i)
            self._show(level)
        self.refresh()
        self.post_message(self.Moved())

    def on_resize(self) -> None:
        if self.chart is not None and self.chart.width != self.size.width:
            self.post_message(self.Resized())

    def current(self) -> ChartFrame | None:
        ch = self.chart
        level, i = self.cursor
        if ch is None or not 0 <= level < len(ch.levels) or not 0 <= i < len(ch.levels[level]):
            return None
        return ch.levels[level][i]

    def label(self, f: ChartFrame) -> str:
        ch = self.chart
        assert ch is not None
        return safe(frame_name(ch.store.locs, ch.store.comm_names,
                               int(ch.store.trie.frame[f.node]), folded=True))

    def _show(self, level: int) -> None:
        h = max(1, self.size.height)
        if level < self.top:
            self.top = level
        elif level >= self.top + h:
            self.top = level - h + 1

    def render_line(self, y: int) -> Strip:
        width, ch = self.size.width, self.chart
        if ch is None or not ch.levels:
            note = wrap_note(self.placeholder, width)
            if y < len(note):
                return Strip([Segment(note[y].ljust(width), Style(dim=True))]).crop(0, width)
            return Strip.blank(width)
        level = self.top + y
        if level >= len(ch.levels):
            return Strip.blank(width)
        segs: list[Segment] = []
        x = 0
        locs = ch.store.locs
        for i, f in enumerate(ch.levels[level]):
            if f.c0 > x:
                segs.append(Segment(" " * (f.c0 - x)))
            w = f.c1 - f.c0
            name = self.label(f)
            text = name if len(name) <= w else (name[:w - 1] + "…" if w > 1 else " ")
            if (level, i) == self.cursor:
                style = CURSOR
            else:
                frame = int(ch.store.trie.frame[f.node])
                shades = KIND_COLOURS["thread" if frame < 0 else frame_kind(locs, frame)]
                style = Style(bgcolor=shades[(f.c0 + f.depth) % len(shades)], color=TEXT)
            segs.append(Segment(text.ljust(w), style))
            x = f.c1
        if x < width:
            segs.append(Segment(" " * (width - x)))
        return Strip(segs, width).crop(0, width)

    def describe(self) -> Text:
        """The status line: the frame under the cursor, its time span and samples."""
        t = Text(no_wrap=True, overflow="ellipsis")
        ch, f = self.chart, self.current()
        if ch is None or f is None:
            return t
        model = self.app.model  # type: ignore[attr-defined]
        t0, t1 = ch.span_of(f)
        t.append(f"{model.fmt_time(t0)}–{model.fmt_time(t1)} {model.time_unit}  ",
                 style="bold yellow")
        frame = int(ch.store.trie.frame[f.node])
        locs = ch.store.locs
        if frame >= 0:
            t.append(f"{'[k]' if locs.dsos[locs.dso[frame]].kernel else '[.]'} ", style="dim")
        t.append(self.label(f), style="bold")
        if frame >= 0:
            t.append(f"  {safe(where_text(locs, frame), 60)}", style="dim")
        n = int(ch.samples_in(f).sum())
        t.append(f"  depth {f.depth}  {n:,} samples  {(t1 - t0) / 1e9:.3f} s")
        return t

    def _go(self, level: int, i: int) -> None:
        self.cursor = (level, i)
        self._show(level)
        self.refresh()
        self.post_message(self.Moved())

    def action_move(self, where: str) -> None:
        cur, ch = self.current(), self.chart
        if cur is None or ch is None:
            return
        level, i = self.cursor
        if where in ("left", "right"):
            j = i + (1 if where == "right" else -1)
            if 0 <= j < len(ch.levels[level]):
                self._go(level, j)
            return
        to = level - 1 if where == "up" else level + 1
        if not 0 <= to < len(ch.levels):
            return
        row = ch.levels[to]
        hit = next((k for k, f in enumerate(row) if f.c0 <= cur.c0 < f.c1), None) \
            if where == "up" else \
            next((k for k, f in enumerate(row) if cur.c0 <= f.c0 < cur.c1), None)
        if hit is not None:
            self._go(to, hit)

    def action_top(self) -> None:
        if self.chart is not None and self.chart.levels:
            self._go(0, 0)

    def action_transform(self, kind: str) -> None:
        cur, ch = self.current(), self.chart
        path: tuple[frozenset[int], ...] = ()
        if cur is not None and ch is not None:
            frames = ch.store.trie.path(cur.node)
            path = tuple(frozenset({f}) for f in
                         (frames if kind == FOCUS_SUBTREE else frames[-1:]))
        self.post_message(TransformWanted(kind, path))

    def action_sandwich(self) -> None:
        cur, ch = self.current(), self.chart
        if cur is not None and ch is not None:
            frame = int(ch.store.trie.frame[cur.node])
            if frame >= 0:
                self.post_message(SandwichWanted(frozenset({frame}), whole=True))


class FlameChartScreen(Screen[None]):
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
    ]
    DEFAULT_CSS = """
    FlameChartScreen .chart-line { height: 1; width: 100%; text-wrap: nowrap;
                                  text-overflow: ellipsis; }
    FlameChartScreen #chart-title { background: $primary 30%; }
    FlameChartScreen #chart-status { background: $primary 15%; }
    """

    def __init__(self, data: ProfileData) -> None:
        super().__init__()
        self.data = data
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
        return Scope(m.flt.within(m.time_range), self.data.default_attr())

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
            t.append(f" {safe(self.data.event_name(self.scope().attr), 30)}", style="bold")
            k = next(i for i, (tid, _c, _n) in enumerate(ch.threads) if tid == ch.tid)
            name = ch.store.comm_names[ch.comm] if 0 <= ch.comm < len(ch.store.comm_names) \
                else "?"
            t.append(f"  thread {safe(name, 30)} {ch.tid} ({k + 1}/{len(ch.threads)})",
                     style="bold")
            t.append(f"  {len(ch.rows):,} samples")
            t.append(f"  {m.fmt_time(ch.lo)}–{m.fmt_time(ch.hi)} {m.time_unit}")
        if self.zoom:
            t.append("  zoomed", style="bold")
        scope_text = m.scope_text()
        if scope_text:
            t.append(f"  {safe(scope_text, 80)}", style="bold yellow")
        crumbs = self.data.transforms.crumbs()
        if crumbs:
            t.append(f"  {safe(crumbs, 100)}", style="bold magenta")
        if self.busy:
            t.append("  counting…", style="yellow")
        self.query_one("#chart-title", Label).update(t)

    def on_flame_chart_moved(self, msg: FlameChart.Moved) -> None:
        msg.stop()
        self.query_one("#chart-status", Label).update(self.graph.describe())

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
        self.app.refresh_body()  # type: ignore[attr-defined]

    def on_sandwich_wanted(self, msg: SandwichWanted) -> None:
        msg.stop()
        self.app.pop_screen()
        self.app.post_message(SandwichWanted(msg.ids, whole=True))

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
        app.push_screen(ProfileSamplesScreen(m, np.sort(rows), title,
                                             app.body))  # type: ignore[attr-defined]
