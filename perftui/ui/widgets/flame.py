"""The flame graph's pane (``f``): the icicle of the scope's stacks (:mod:`.flamegraph`)
under a title line, with a status line for the frame under the cursor; the tree is grown
in a worker from :meth:`ProfileData.flame` (the stacks drawn)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

import numpy as np
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label
from textual.worker import get_current_worker

from ...analysis.commprocesses import CommMembers
from ...analysis.grouptrees import GroupTree
from ...analysis.samplegroups import SampleGroups
from ...crash import crash_line, write_traceback
from ...present.report import time_text
from ...textsafe import safe
from ..messages import BodyWanted
from ..profiledata import ProfileData, Scope
from .flamegraph import FlameGraph
from .frames import EventChoice, ShareChoice, plural, shares_binding
from .icicle import Icicle
from .profile import event_bindings
from .samplerows import show_rows_found
from .timeline import RowSource, SelectsSamples
from .transformkeys import SandwichWanted, TransformWanted, append_scope, push_wanted

__all__ = ["FlameGraph", "FlamePane"]


class FlamePane(SelectsSamples, EventChoice, ShareChoice, Vertical):
    """The flame graph under a title line, with a status line for the frame under the
    cursor."""

    BINDINGS = [
        Binding("escape", "back", "Back", id="fpane.back",
                tooltip="zoom out; then clear the paint; then back"),
        Binding("q", "leave", "Back", show=False, id="fpane.leave",
                tooltip="back to where the flame graph was opened"),
        Binding("F", "app.filter", "Filter", show=False, id="fpane.filter",
                tooltip="filter every pane (the record list's /)"),
        shares_binding("fpane"),
        *[Binding(b.key, b.action, b.description, show=False, id=f"f{b.id}",
                  tooltip=b.tooltip) for b in event_bindings()],
    ]
    DEFAULT_CSS = """
    FlamePane { height: 1fr; }
    FlamePane .flame-line { height: 1; width: 100%; text-wrap: nowrap;
                            text-overflow: ellipsis; }
    FlamePane #flame-title { background: $primary 30%; }
    FlamePane #flame-status { background: $primary 15%; }
    """

    def __init__(self, data: ProfileData, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.data = data
        self.attr: int | None = None
        self.note = ""
        self.busy = False
        self.came_from = "records"
        self.samples = 0
        self.total = 0  # their period (offcpu-time: ns)
        self.store: SampleGroups | None = None  # the grouped samples the graph shows

    def compose(self) -> ComposeResult:
        yield Label("", id="flame-title", classes="flame-line")
        yield FlameGraph(id="flame-graph")
        yield Label("", id="flame-status", classes="flame-line")

    @property
    def graph(self) -> FlameGraph:
        return self.query_one(FlameGraph)

    def scope(self) -> Scope:
        m = self.data.model
        return Scope(m.flt.within(m.time_range), self.chosen_attr())

    def set_note(self, note: str) -> None:
        self.note = note
        if self.graph.gtree is None:
            self.refresh_data()

    def refresh_data(self) -> None:
        m = self.data.model
        if not m.done and not self.data.ready:  # (a live pipe's are ready while it streams)
            placeholder = "indexing… (the flame graph follows once every record is indexed)"
        elif not self.data.ready:
            placeholder = self.note or "naming samples…"
        elif self.data.store is None or not len(self.data.store):
            placeholder = "no samples in this recording"
        else:
            placeholder = ""
        if placeholder:
            self.graph.set_tree(None, 0, None, (), placeholder)
            self._title()
            return
        self.busy = True
        self._title()
        self._grow(self.scope())

    @work(thread=True, exclusive=True, group="flame")
    def _grow(self, scope: Scope) -> None:
        try:
            sel = self.data.selection(scope)
            if sel is None:
                return
            tree = self.data.flame(sel)
            tree.tree.children(-1)  # the children index, off the UI thread
            names = self.data.flame_labels()
            members = self.data.comm_members(sel)
        except Exception as e:  # said, the traceback kept; the browser goes on
            self.app.call_from_thread(self._failed, e)
            return
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._grown, tree, sel.total_period, sel.total_samples,
                                      names, sel.store, members, self.data.timed(scope.attr),
                                      sel.share_total)

    def _failed(self, error: Exception) -> None:
        line = safe(crash_line(error, write_traceback(error)), 300)
        self.busy = False
        self.graph.set_tree(None, 0, None, (), line)
        self._title()
        self.notify(line, severity="error", markup=False)

    def _grown(self, tree: GroupTree, total: int, samples: int, names: list[str],
               store: SampleGroups, members: dict[int, CommMembers], timed: bool,
               share_total: int) -> None:
        res = self.data.model.names
        self.busy = False
        self.samples, self.total = samples, total
        self.graph.timed = timed
        self.store = store
        if res is None:
            return
        empty = ""
        if not samples:
            scope = self.data.model.scope_text()
            empty = f"no samples under {safe(scope, 80)}" if scope else "no samples"
        self.graph.set_tree(tree, share_total, store.locs, res.comm_names, empty, names,
                            members)
        self._title()

    def _title(self) -> None:
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(" flame graph ", style="bold reverse")
        scope = self.scope()
        if self.data.ready:
            attrs = self.data.attrs()
            n = f" ({attrs.index(scope.attr) + 1}/{len(attrs)})" if len(attrs) > 1 and \
                scope.attr in attrs else ""
            t.append(f" {safe(self.data.event_title(scope.attr), 40)}{n}", style="bold")
            t.append(f"  {self.samples:,} {plural(self.samples, 'sample')}")
            if self.graph.timed:
                t.append(f"  {time_text(self.total)}")
            t.append(self.shares_words(), style="bold")
        g = self.graph
        if g.zoom:
            t.append(f"  zoom: {g.label(g.zoom[-1])}", style="bold")
        if g.search:
            pct = 100.0 * g.matched / g.total if g.total else 0.0
            t.append(f"  /{safe(g.search, 30)}: {pct:.2f}% matched", style="bold magenta")
        append_scope(t, self.data, self.busy)
        self.query_one("#flame-title", Label).update(t)

    def on_sandwich_wanted(self, msg: SandwichWanted) -> None:
        """``w`` on a frame: the locations it stands for, on to the app (the profile shows
        the sandwich)."""
        if msg.whole:
            return
        msg.stop()
        if self.store is None:
            return
        st = self.store
        ids = frozenset().union(*(self.data.flame_locations(st, f) for f in msg.ids))
        self.post_message(SandwichWanted(ids, whole=True, attr=self.chosen_attr()))

    def on_transform_wanted(self, msg: TransformWanted) -> None:
        """A transform key of the graph: its frames as the locations they stand for, on
        every view's stack; drawn again."""
        msg.stop()
        if self.store is None:
            return
        st = self.store
        path = tuple(frozenset().union(*(self.data.flame_locations(st, f) for f in level))
                     for level in msg.path)
        said = push_wanted(self.data.transforms, self.store,
                           TransformWanted(msg.kind, path))
        if said:
            self.notify(said, timeout=3)
            return
        self.refresh_data()

    def _status(self) -> None:
        g = self.graph
        cur = g.current()
        if cur is None:
            self.query_one("#flame-status", Label).update("")
            return
        self.query_one("#flame-status", Label).update(g.describe(cur.node))

    def on_icicle_moved(self, msg: Icicle.Moved) -> None:
        msg.stop()
        self._status()
        self._title()
        self.select_later()  # once the cursor rests, the frame's samples: to the timeline

    def selected_rows(self) -> RowSource | None:
        g = self.graph
        cur, tree = g.current(), g.gtree
        return None if tree is None or cur is None else partial(
            _frame_row_blocks, self.data, self.scope(), tree, cur.node)

    def on_flame_graph_samples_wanted(self, msg: FlameGraph.SamplesWanted) -> None:
        msg.stop()
        g = self.graph
        if g.gtree is None:
            return
        title = "all samples" if msg.node < 0 else f"{g.label(msg.node)} · samples through it"
        self._find_samples(g.gtree, msg.node, title)

    @work(thread=True, exclusive=True, group="flame-samples")
    def _find_samples(self, tree: GroupTree, node: int, title: str) -> None:
        def find() -> np.ndarray | None:
            sel = self.data.selection(self.scope())
            return None if sel is None else sel.rows_of(tree.groups_through(node))

        show_rows_found(self, find, title, "flame")

    def action_back(self) -> None:
        g = self.graph
        if g.zoom_out() or g.clear_search():
            return
        self.action_leave()

    def action_leave(self) -> None:
        self.post_message(BodyWanted(self.came_from))


def _frame_row_blocks(data: ProfileData, scope: Scope, tree: GroupTree, node: int
                      ) -> Iterable[np.ndarray]:
    """The SAMPLE rows through frame ``node`` of ``tree`` in ``scope``, a block at a time."""
    sel = data.selection(scope)
    return () if sel is None else sel.row_blocks(tree.groups_through(node))
