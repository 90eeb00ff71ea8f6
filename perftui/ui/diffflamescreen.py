"""The diff browser's differential flame graph (``f``): NEW's stacks coloured by their
change against OLD (:mod:`.widgets.diffflame`), under a title line, with a status line for
the frame under the cursor.  Both sides' stacks are named and compared in a worker."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Label
from textual.worker import get_current_worker

from ..analysis.diffflame import DiffFlame
from ..crash import crash_line, write_traceback
from ..textsafe import safe
from .diffmodel import DiffModel
from .widgets.diffflame import DiffFlameGraph
from .widgets.footer import Footer
from .widgets.icicle import Icicle


class DiffFlameScreen(Screen):
    """The differential flame graph of the current event, each side in its time range."""

    BINDINGS = [
        Binding("escape", "back", "Back", id="dflame.back",
                tooltip="zoom out; then clear the paint; then back to the table"),
        Binding("q", "app.pop_screen", "Back", show=False, id="dflame.leave",
                tooltip="back to the compared table"),
    ]
    DEFAULT_CSS = """
    DiffFlameScreen .dflame-line { height: 1; width: 100%; text-wrap: nowrap;
                                  text-overflow: ellipsis; }
    DiffFlameScreen #dflame-title { background: $primary 30%; }
    DiffFlameScreen #dflame-status { background: $primary 15%; }
    """

    def __init__(self, model: DiffModel) -> None:
        super().__init__()
        self.model = model
        self.busy = True

    def compose(self) -> ComposeResult:
        yield Label("", id="dflame-title", classes="dflame-line")
        yield DiffFlameGraph(id="dflame-graph")
        yield Label("", id="dflame-status", classes="dflame-line")
        yield Footer()

    @property
    def graph(self) -> DiffFlameGraph:
        return self.query_one(DiffFlameGraph)

    def on_mount(self) -> None:
        self.graph.focus()
        self.graph.set_flame(None, "naming both recordings' stacks…")
        self._title()
        self.grow()

    @work(thread=True, exclusive=True, group="dflame")
    def grow(self) -> None:
        try:
            flame = self.model.flame()
            if flame is not None:
                flame.stack_tree().children(-1)  # the children index, off the UI thread
        except Exception as e:  # said, the traceback kept; the browser goes on
            line = safe(crash_line(e, write_traceback(e)), 300)
            self.app.call_from_thread(self._grown, None, line)
            return
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._grown, flame, "" if flame else "no samples")

    def _grown(self, flame: DiffFlame | None, note: str) -> None:
        self.busy = False
        if flame is not None and not flame.new_sum:
            note = "NEW has no samples of the event in its range"
        self.graph.set_flame(flame if flame is not None and flame.new_sum else None, note)
        self._title()

    def _title(self) -> None:
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(" differential flame graph ", style="bold reverse")
        m = self.model
        t.append(f" {safe(m.event_name(), 40)}", style="bold")
        t.append("  NEW's stacks; red grew, blue shrank against OLD")
        g = self.graph
        fl = g.flame
        if fl is not None and fl.old_elsewhere:
            pct = 100.0 * fl.old_elsewhere / fl.old_sum if fl.old_sum else 0.0
            t.append(f"  OLD only: {pct:.2f}%", style="dim")
        if g.zoom:
            t.append(f"  zoom: {g.label(g.zoom[-1])}", style="bold")
        if g.search:
            pct = 100.0 * g.matched / g.total if g.total else 0.0
            t.append(f"  /{safe(g.search, 30)}: {pct:.2f}% matched", style="bold magenta")
        for side in (m.old, m.new):
            if side.time_range is not None:
                lo, hi = side.time_range
                first = side.model.first_time
                t.append(f"  {side.name} {(lo - first) / 1e9:.3f}–{(hi - first) / 1e9:.3f} s",
                         style="bold yellow")
        if self.busy:
            t.append("  counting…", style="yellow")
        self.query_one("#dflame-title", Label).update(t)

    def on_icicle_moved(self, msg: Icicle.Moved) -> None:
        msg.stop()
        cur = self.graph.current()
        status = self.query_one("#dflame-status", Label)
        status.update(self.graph.describe(cur.node) if cur is not None else "")
        self._title()

    def action_back(self) -> None:
        g = self.graph
        if g.zoom_out() or g.clear_search():
            return
        self.app.pop_screen()
