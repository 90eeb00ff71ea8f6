"""The flame graph (``f``): an icicle drawn in terminal cells, "all" on top, each thread
under it, then its stacks outermost caller first; a frame is as wide as the period of
the samples through it (the heaviest on the left).  Arrows move between frames, Enter
zooms into one, Esc zooms out, ``/`` paints the frames whose name matches; colours tell
the kernel, each kind of module section and user space apart."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Label
from textual.worker import get_current_worker

from ...analysis.samplegroups import GroupTree
from ...crash import crash_line, write_traceback
from ...symbols.naming.locations import Locations
from ...textsafe import safe
from ..messages import BodyWanted
from ..profiledata import ProfileData, Scope
from .frames import KIND_COLOURS, LEGEND, EventChoice, frame_kind, frame_name, where_text
from .linelist import wrap_note
from .profile import event_bindings
from .samplerows import show_rows_found
from .timeline import RowSource, SelectsSamples

MAX_LEVELS = 1024  # deepest level laid out
TEXT = "#f2f2f2"
CURSOR = Style(bgcolor="#f2f2f2", color="#000000", bold=True)
MATCH = Style(bgcolor="#e600e6", color="#ffffff", bold=True)


@dataclass
class Frame:
    """A frame as laid out: tree ``node`` (-1: "all") over columns ``[x0, x1)``."""

    node: int
    x0: int
    x1: int


class FlameGraph(Widget, can_focus=True):
    """The icicle of one :class:`GroupTree` (top-down, thread names at the root level)."""

    BINDINGS = [
        Binding("up", "move('up')", "Up", show=False, id="flame.up",
                tooltip="move between frames: ↑ caller, ↓ callee, ←/→ neighbours"),
        Binding("down", "move('down')", "Down", show=False, id="flame.down",
                tooltip="move between frames: ↑ caller, ↓ callee, ←/→ neighbours"),
        Binding("left", "move('left')", "Left", show=False, id="flame.left",
                tooltip="move between frames: ↑ caller, ↓ callee, ←/→ neighbours"),
        Binding("right", "move('right')", "Right", show=False, id="flame.right",
                tooltip="move between frames: ↑ caller, ↓ callee, ←/→ neighbours"),
        Binding("enter", "zoom", "Zoom", id="flame.zoom",
                tooltip="zoom into the frame (Esc zooms out)"),
        Binding("home", "top", "Top", show=False, id="flame.top",
                tooltip="back to the top frame of the zoom"),
        Binding("slash", "search", "Search", key_display="/", id="flame.search",
                tooltip="paint the frames whose name contains a text; n/N: next/previous"),
        Binding("n", "next_match(1)", "Next match", show=False, id="flame.next",
                tooltip="next / previous painted frame"),
        Binding("N", "next_match(-1)", "Previous match", show=False, id="flame.prev",
                tooltip="next / previous painted frame"),
        Binding("v", "samples", "Samples", id="flame.samples",
                tooltip="the samples through the frame (Enter on one: its record)"),
        Binding("a", "annotate", "Annotate", show=False, id="flame.annotate",
                tooltip="annotate: the function of the frame (perf's a)"),
    ]
    DEFAULT_CSS = "FlameGraph { height: 1fr; }"

    class Moved(Message):
        """The cursor, the zoom or the search changed: the status line follows."""

    class SamplesWanted(Message):
        def __init__(self, node: int) -> None:
            super().__init__()
            self.node = node

    class SearchWanted(Message):
        """``/``: the pane asks for the text."""

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.gtree: GroupTree | None = None
        self.locs: Locations | None = None
        self.comm_names: Sequence[str] = ()
        self.total = 0  # the scope's period
        self.zoom: list[int] = []  # zoomed nodes, outermost first
        self.cursor: tuple[int, int] = (0, -1)  # (level, node)
        self.top = 0  # first level drawn
        self.levels: list[list[Frame]] = []
        self.placeholder = ""
        self.search = ""
        self.match: np.ndarray | None = None  # bool per tree node
        self.matched = 0  # period of the matching frames (nested matches once)
        self._labels: dict[int, str] = {}
        self._laid_width = -1
        self.names_lower: list[str] = []  # every location's name, lower case (for /)

    # -- data --------------------------------------------------------------------------------
    def set_tree(self, tree: GroupTree | None, total: int, locs: Locations | None,
                 comm_names: Sequence[str], placeholder: str = "",
                 names_lower: list[str] | None = None) -> None:
        """A new tree (a new scope): the zoom and the cursor stay where they can."""
        same = self.gtree is not None and tree is not None and \
            self.gtree.tree.trie is tree.tree.trie
        self.gtree, self.total, self.locs, self.comm_names = tree, total, locs, comm_names
        self.names_lower = names_lower or []
        self.placeholder = placeholder
        if not same:
            self.zoom, self.cursor, self.top = [], (0, -1), 0
            self._labels = {}
        elif tree is not None:
            self.zoom = [z for z in self.zoom if int(tree.tree.count[z]) > 0]
        self._search(self.search)
        self.relayout()

    def relayout(self) -> None:
        level, node = self.cursor
        self.levels = self._layout()
        self._laid_width = self.size.width
        self._place_cursor(level, node)
        self.refresh()
        self.post_message(self.Moved())

    def _root(self) -> int:
        return self.zoom[-1] if self.zoom else -1

    def _layout(self) -> list[list[Frame]]:
        t = self.gtree.tree if self.gtree is not None else None
        width = self.size.width
        if t is None or width <= 0:
            return []
        root = self._root()
        total = t.grand_total if root < 0 else int(t.total[root])
        if total <= 0:
            return []
        scale = width / total
        levels = [[Frame(root, 0, width)]]
        nodes, starts = [root], [0.0]
        while nodes and len(levels) < MAX_LEVELS:
            row: list[Frame] = []
            next_nodes: list[int] = []
            next_starts: list[float] = []
            for node, start in zip(nodes, starts, strict=True):
                kids = t.children(node)
                if not len(kids):
                    continue
                w = t.total[kids].astype(np.float64)
                s = start + np.concatenate([[0.0], np.cumsum(w)[:-1]])
                x0 = np.rint(s * scale).astype(np.int64)
                x1 = np.rint((s + w) * scale).astype(np.int64)
                for k in np.nonzero(x1 > x0)[0].tolist():
                    row.append(Frame(int(kids[k]), int(x0[k]), int(x1[k])))
                    next_nodes.append(int(kids[k]))
                    next_starts.append(float(s[k]))
            if not row:
                break
            levels.append(row)
            nodes, starts = next_nodes, next_starts
        return levels

    def _place_cursor(self, level: int, node: int) -> None:
        if not self.levels:
            self.cursor, self.top = (0, -1), 0
            return
        level = min(max(level, 0), len(self.levels) - 1)
        row = self.levels[level]
        hit = next((f for f in row if f.node == node), None)
        if hit is None:  # the node is elsewhere (zoom) or gone: find it, else stay near
            for lv, r in enumerate(self.levels):
                f = next((f for f in r if f.node == node), None)
                if f is not None:
                    level, hit = lv, f
                    break
        if hit is None:
            hit = row[0]
        self.cursor = (level, hit.node)
        self._show_level(level)

    def _show_level(self, level: int) -> None:
        h = max(1, self.size.height)
        if level < self.top:
            self.top = level
        elif level >= self.top + h:
            self.top = level - h + 1
        self.top = max(0, min(self.top, max(0, len(self.levels) - 1)))

    def current(self) -> Frame | None:
        level, node = self.cursor
        if not 0 <= level < len(self.levels):
            return None
        return next((f for f in self.levels[level] if f.node == node), None)

    # -- names ------------------------------------------------------------------------------------
    def label(self, node: int) -> str:
        if node < 0:
            return "all"
        got = self._labels.get(node)
        if got is None:
            assert self.gtree is not None and self.locs is not None
            frame = int(self.gtree.tree.frame[node])
            got = safe(frame_name(self.locs, self.comm_names, frame, folded=True))
            if len(self._labels) > 50_000:
                self._labels.clear()
            self._labels[node] = got
        return got

    def kind(self, node: int) -> str:
        if node < 0:
            return "all"
        assert self.gtree is not None and self.locs is not None
        frame = int(self.gtree.tree.frame[node])
        return "thread" if frame < 0 else frame_kind(self.locs, frame)

    def describe(self, node: int) -> Text:
        """The status line's words for a frame."""
        t = Text(no_wrap=True, overflow="ellipsis")
        if self.gtree is None:
            return t
        tr = self.gtree.tree
        if node < 0:
            count, period = tr.grand_count, tr.grand_total
            t.append("all", style="bold")
        else:
            count, period = int(tr.count[node]), int(tr.total[node])
            frame = int(tr.frame[node])
            if frame < 0:
                t.append(f"thread {self.label(node)}", style="bold")
            else:
                assert self.locs is not None
                t.append(f"{'[k]' if self.locs.dsos[self.locs.dso[frame]].kernel else '[.]'} ",
                         style="dim")
                t.append(self.label(node), style="bold")
                if self.locs.name[frame] is None:
                    t.append("  addresses no symbol covers", style="dim")
                else:
                    t.append(f"  {safe(where_text(self.locs, frame), 60)}", style="dim")
        pct = 100.0 * period / self.total if self.total else 0.0
        t.append(f"  {count:,} samples  {pct:.2f}%")
        root = self._root()
        if root >= 0 and node != root:
            rp = int(tr.total[root])
            t.append(f" ({100.0 * period / rp if rp else 0.0:.2f}% of the zoom)")
        return t

    # -- drawing ----------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if width != self._laid_width and self.gtree is not None:
            self.levels = self._layout()
            self._laid_width = width
            self._place_cursor(*self.cursor)
        if not self.levels:
            note = wrap_note(self.placeholder, width)
            if y < len(note):
                return Strip([Segment(note[y].ljust(width), Style(dim=True))]).crop(0, width)
            return Strip.blank(width)
        level = self.top + y
        if level == len(self.levels) + 1:  # under the graph, where there is room: the key
            return self._legend(width)
        if level >= len(self.levels):
            return Strip.blank(width)
        segs: list[Segment] = []
        x = 0
        cur_level, cur_node = self.cursor
        for i, f in enumerate(self.levels[level]):
            if f.x0 > x:
                segs.append(Segment(" " * (f.x0 - x)))
            w = f.x1 - f.x0
            name = self.label(f.node)
            text = name if len(name) <= w else (name[:w - 1] + "…" if w > 1 else " ")
            if level == cur_level and f.node == cur_node:
                style = CURSOR
            elif self.match is not None and f.node >= 0 and bool(self.match[f.node]):
                style = MATCH
            else:
                shades = KIND_COLOURS[self.kind(f.node)]
                style = Style(bgcolor=shades[i % len(shades)], color=TEXT)
            segs.append(Segment(text.ljust(w), style))
            x = f.x1
        if x < width:
            segs.append(Segment(" " * (width - x)))
        return Strip(segs, width)

    @staticmethod
    def _legend(width: int) -> Strip:
        segs = []
        for kind, name in LEGEND:
            segs.append(Segment("  "))
            segs.append(Segment("  ", Style(bgcolor=KIND_COLOURS[kind][0])))
            segs.append(Segment(f" {name}", Style(dim=True)))
        return Strip(segs).crop(0, width).extend_cell_length(width)

    def on_resize(self) -> None:
        if self.gtree is not None:
            self.relayout()

    # -- keys --------------------------------------------------------------------------------------
    def action_move(self, where: str) -> None:
        cur = self.current()
        if cur is None:
            return
        level = self.cursor[0]
        target: Frame | None = None
        if where in ("left", "right"):
            row = self.levels[level]
            i = row.index(cur) + (1 if where == "right" else -1)
            target = row[i] if 0 <= i < len(row) else None
        elif where == "up" and level > 0:
            target = next((f for f in self.levels[level - 1] if f.x0 <= cur.x0 < f.x1), None)
            level -= 1
        elif where == "down" and level + 1 < len(self.levels):
            target = next((f for f in self.levels[level + 1]
                           if cur.x0 <= f.x0 < cur.x1), None)
            level += 1
        if target is None:
            return
        self.cursor = (level, target.node)
        self._show_level(level)
        self.refresh()
        self.post_message(self.Moved())

    def action_top(self) -> None:
        if self.levels:
            self.cursor = (0, self.levels[0][0].node)
            self._show_level(0)
            self.refresh()
            self.post_message(self.Moved())

    def action_zoom(self) -> None:
        cur = self.current()
        if cur is None or cur.node < 0 or cur.node == self._root():
            return
        self.zoom.append(cur.node)
        self.cursor, self.top = (0, cur.node), 0
        self.relayout()

    def zoom_out(self) -> bool:
        """One zoom level out (False when not zoomed)."""
        if not self.zoom:
            return False
        node = self.zoom.pop()
        self.cursor = (0, node)
        self.relayout()
        return True

    def action_search(self) -> None:
        self.post_message(self.SearchWanted())

    def set_search(self, text: str) -> None:
        self._search(text)
        self.refresh()
        self.post_message(self.Moved())

    def _search(self, text: str) -> None:
        self.search = text.strip()
        self.match, self.matched = None, 0
        if not self.search or self.gtree is None or self.locs is None:
            return
        want = self.search.lower()
        loc_ok = np.array([want in name for name in self.names_lower], dtype=bool)
        comm_ok = np.array([want in c.lower() for c in self.comm_names], dtype=bool)
        trie = self.gtree.tree.trie
        frame = trie.frame
        match = np.zeros(len(frame), dtype=bool)
        pos = frame >= 0
        if len(loc_ok):
            match[pos] = loc_ok[frame[pos]]
        if len(comm_ok):
            match[~pos] = comm_ok[-1 - frame[~pos]]
        # a match below a match counts once (flamegraph.pl's "Matched")
        covered = np.zeros(len(frame), dtype=bool)
        depth = trie.depth
        for d in range(1, int(depth.max(initial=0)) + 1):
            at = np.nonzero(depth == d)[0]
            par = trie.parent[at]
            covered[at] = covered[par] | match[par]
        self.match = match
        t = self.gtree.tree
        self.matched = int(t.total[match & ~covered & (t.count > 0)].sum())

    def clear_search(self) -> bool:
        if not self.search:
            return False
        self.set_search("")
        return True

    def action_next_match(self, step: int) -> None:
        if self.match is None:
            return
        hits = [(lv, f) for lv, row in enumerate(self.levels) for f in row
                if f.node >= 0 and self.match[f.node]]
        if not hits:
            self.notify("no painted frame in view", timeout=2)
            return
        level = self.cursor[0]
        keys = [(lv, f.x0) for lv, f in hits]
        cur = self.current()
        here = (level, cur.x0 if cur is not None else -1)
        if step > 0:
            i = next((k for k, key in enumerate(keys) if key > here), 0)
        else:
            i = next((k for k in range(len(keys) - 1, -1, -1) if keys[k] < here),
                     len(keys) - 1)
        lv, f = hits[i]
        self.cursor = (lv, f.node)
        self._show_level(lv)
        self.refresh()
        self.post_message(self.Moved())

    def action_samples(self) -> None:
        cur = self.current()
        if cur is not None:
            self.post_message(self.SamplesWanted(cur.node))

    def action_annotate(self) -> None:
        from .hotspots import annotate_location

        cur = self.current()
        if cur is None or cur.node < 0 or self.gtree is None:
            return
        frame = int(self.gtree.tree.frame[cur.node])
        if frame >= 0:
            annotate_location(self, frame)


class FlamePane(SelectsSamples, EventChoice, Vertical):
    """The flame graph under a title line, with a status line for the frame under the
    cursor."""

    BINDINGS = [
        Binding("escape", "back", "Back", id="fpane.back",
                tooltip="zoom out; then clear the paint; then back"),
        Binding("q", "leave", "Back", show=False, id="fpane.leave",
                tooltip="back to where the flame graph was opened"),
        Binding("F", "app.filter", "Filter", show=False, id="fpane.filter",
                tooltip="filter every pane (the record list's /)"),
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
        if not m.done:
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
        except Exception as e:  # said, the traceback kept; the browser goes on
            self.app.call_from_thread(self._failed, e)
            return
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._grown, tree, sel.total_period, sel.total_samples,
                                      names)

    def _failed(self, error: Exception) -> None:
        line = safe(crash_line(error, write_traceback(error)), 300)
        self.busy = False
        self.graph.set_tree(None, 0, None, (), line)
        self._title()
        self.notify(line, severity="error", markup=False)

    def _grown(self, tree: GroupTree, total: int, samples: int, names: list[str]) -> None:
        res = self.data.model.names
        self.busy = False
        self.samples = samples
        if res is None:
            return
        empty = ""
        if not samples:
            scope = self.data.model.scope_text()
            empty = f"no samples under {safe(scope, 80)}" if scope else "no samples"
        self.graph.set_tree(tree, total, res.locs, res.comm_names, empty, names)
        self._title()

    def _title(self) -> None:
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(" flame graph ", style="bold reverse")
        scope = self.scope()
        if self.data.ready:
            attrs = self.data.attrs()
            n = f" ({attrs.index(scope.attr) + 1}/{len(attrs)})" if len(attrs) > 1 and \
                scope.attr in attrs else ""
            t.append(f" {safe(self.data.event_name(scope.attr), 40)}{n}", style="bold")
            t.append(f"  {self.samples:,} samples")
        g = self.graph
        if g.zoom:
            t.append(f"  zoom: {g.label(g.zoom[-1])}", style="bold")
        if g.search:
            pct = 100.0 * g.matched / g.total if g.total else 0.0
            t.append(f"  /{safe(g.search, 30)}: {pct:.2f}% matched", style="bold magenta")
        scope_text = self.data.model.scope_text()
        if scope_text:
            t.append(f"  {safe(scope_text, 80)}", style="bold yellow")
        if self.busy:
            t.append("  counting…", style="yellow")
        self.query_one("#flame-title", Label).update(t)

    def _status(self) -> None:
        g = self.graph
        cur = g.current()
        if cur is None:
            self.query_one("#flame-status", Label).update("")
            return
        self.query_one("#flame-status", Label).update(g.describe(cur.node))

    def on_flame_graph_moved(self, msg: FlameGraph.Moved) -> None:
        msg.stop()
        self._status()
        self._title()
        self.select_later()  # once the cursor rests, the frame's samples: to the timeline

    def selected_rows(self) -> RowSource | None:
        g = self.graph
        cur, tree = g.current(), g.gtree
        return None if tree is None or cur is None else partial(
            _frame_row_blocks, self.data, self.scope(), tree, cur.node)

    def on_flame_graph_search_wanted(self, msg: FlameGraph.SearchWanted) -> None:
        msg.stop()
        from ..screens import PromptScreen

        self.app.push_screen(PromptScreen(
            "paint frames", "frames whose name contains the text (case-insensitive); "
            "empty: no paint", self.graph.search), self._apply_search)

    def _apply_search(self, text: str | None) -> None:
        if text is not None:
            self.graph.set_search(text)

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
