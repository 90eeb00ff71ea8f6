"""The flame chart's widget (``C``, issue 30): one thread's chart as computed
(:class:`Chart`, :func:`make_chart`: each column the stack most of its samples have,
:func:`~perftui.analysis.flamechart.chart_columns`; neighbouring columns through the same
frame one frame) and :class:`FlameChart`, its frames a depth a line with a cursor on one.
The screen around it is :mod:`..chartscreen`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from ...analysis.flamechart import ChartFrame, chart_columns, chart_levels, column_time, through
from ...analysis.samplegroups import SampleGroups
from ...analysis.transforms import FOCUS_SUBTREE
from ...textsafe import safe
from ..model import Model
from ..profiledata import ProfileData, Scope
from .frames import KIND_COLOURS, frame_kind, frame_name, weight_text, where_text
from .icicle import CURSOR, TEXT
from .linelist import wrap_note
from .transformkeys import SandwichWanted, TransformWanted, transform_bindings

_MOVE = "move between frames: ↑ caller, ↓ callee, ←/→ the frames before and after"


@dataclass
class Chart:
    """One thread's chart as computed: the store, the thread, the time span ``[lo, hi)``
    in ``width`` columns, the frames by depth, and the thread's samples in the span (their
    index rows, times, trie nodes and what each weighs: its period, or with ``timed`` its
    nanoseconds off the CPU, then drawn over the interval from its time)."""

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
    weight: np.ndarray
    timed: bool
    threads: list[tuple[int, int, int]]  # (tid, comm, samples), busiest first

    def span_of(self, f: ChartFrame) -> tuple[int, int]:
        """The time span ``[t0, t1)`` of a frame's columns."""
        return (column_time(self.lo, self.hi, self.width, f.c0),
                column_time(self.lo, self.hi, self.width, f.c1))

    def samples_in(self, f: ChartFrame) -> np.ndarray:
        """Bool per sample of :attr:`rows`: in the frame's span (timed: its interval
        overlaps the span), its stack through it."""
        t0, t1 = self.span_of(f)
        end = self.time + np.maximum(self.weight, 1) if self.timed else self.time + 1
        out: np.ndarray = (self.time < t1) & (end > t0) & \
            through(self.store.trie, self.node, f.node)
        return out

    def weighs_in(self, t0: int, t1: int, hit: np.ndarray | None = None) -> int:
        """What the samples ``hit`` (all: None) weigh in ``[t0, t1)``: their periods, or
        (timed) the part of each interval inside it."""
        w, t = (self.weight, self.time) if hit is None else (self.weight[hit], self.time[hit])
        if not self.timed:
            return int(w.sum())
        inside = np.minimum(t + w, t1) - np.maximum(t, t0)
        return int(np.maximum(inside, 0).sum())

    def total(self) -> int:
        """What the chart's samples weigh in its span."""
        return self.weighs_in(self.lo, self.hi)


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
    weight = data.sample_weights(scope, st)[mine].astype(np.int64)
    timed = data.timed(scope.attr)
    # (a timed sample, a switch-out, is drawn over its time off the CPU from its time)
    end = time + np.maximum(weight, 1) if timed else time + 1
    inside = (time < hi) & (end > lo)
    mine, time, weight = mine[inside], time[inside], weight[inside]
    node = st.node[st.group[mine]].astype(np.int64)
    cols = chart_columns(time, node, lo, hi, width, duration=weight if timed else None)
    return Chart(st, tid, comm, lo, hi, width, chart_levels(st.trie, cols.stack),
                 st.rows[mine], time, node, weight, timed, threads)


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

    def describe(self, model: Model) -> Text:
        """The status line: the frame under the cursor, its time span (in ``model``'s
        time), what it weighs there and its depth (before where it is: a narrow terminal
        cuts the end)."""
        t = Text(no_wrap=True, overflow="ellipsis")
        ch, f = self.chart, self.current()
        if ch is None or f is None:
            return t
        t0, t1 = ch.span_of(f)
        t.append(f"{model.fmt_time(t0)}–{model.fmt_time(t1)} {model.time_unit}  ",
                 style="bold yellow")
        frame = int(ch.store.trie.frame[f.node])
        locs = ch.store.locs
        if frame >= 0:
            t.append(f"{'[k]' if locs.dsos[locs.dso[frame]].kernel else '[.]'} ", style="dim")
        t.append(self.label(f), style="bold")
        hit = ch.samples_in(f)
        weighs = weight_text(int(hit.sum()), ch.weighs_in(t0, t1, hit), ch.total(), ch.timed)
        t.append(f"  {weighs}  depth {f.depth}  over {(t1 - t0) / 1e9:.3f} s")
        if frame >= 0:
            t.append(f"  {safe(where_text(locs, frame), 60)}", style="dim")
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
