"""An icicle of a weighed tree drawn in terminal cells (the flame graph and the
differential flame graph): the root on top, each node's children under it, heaviest on
the left, a frame as wide as the period through it.  Arrows move between frames, Enter
zooms into one, Esc zooms out, ``/`` paints the frames whose name matches.  Subclasses
name and colour the nodes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from ...analysis.stacktree import StackTree
from .linelist import wrap_note

MAX_LEVELS = 1024  # deepest level laid out
TEXT = "#f2f2f2"
CURSOR = Style(bgcolor="#f2f2f2", color="#000000", bold=True)
MATCH = Style(bgcolor="#e600e6", color="#ffffff", bold=True)

_MOVE = "move between frames: ↑ caller, ↓ callee, ←/→ neighbours"
#: the keys every icicle has (each subclass's BINDINGS start with them)
ICICLE_BINDINGS = [
    Binding("up", "move('up')", "Up", show=False, id="flame.up", tooltip=_MOVE),
    Binding("down", "move('down')", "Down", show=False, id="flame.down", tooltip=_MOVE),
    Binding("left", "move('left')", "Left", show=False, id="flame.left", tooltip=_MOVE),
    Binding("right", "move('right')", "Right", show=False, id="flame.right", tooltip=_MOVE),
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
]


@dataclass
class Frame:
    """A frame as laid out: tree ``node`` (-1: "all") over columns ``[x0, x1)``."""

    node: int
    x0: int
    x1: int


def layout(t: StackTree, root: int, width: int) -> list[list[Frame]]:
    """The levels of ``t`` under ``root`` (-1: every root under "all") in ``width``
    columns: a frame per node at least a column wide, children from their parent's left
    edge, heaviest first."""
    total = t.grand_total if root < 0 else int(t.total[root])
    if total <= 0 or width <= 0:
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


def first_matches(t: StackTree, match: np.ndarray) -> np.ndarray:
    """Bool per node: it matches and no node above it does (a match below a match
    counts once, flamegraph.pl's "Matched")."""
    trie = t.trie
    covered = np.zeros(len(match), dtype=bool)
    for d in range(1, int(trie.depth.max(initial=0)) + 1):
        at = np.nonzero(trie.depth == d)[0]
        par = trie.parent[at]
        covered[at] = covered[par] | match[par]
    out: np.ndarray = match & ~covered & (t.count > 0)
    return out


class Icicle(Widget, can_focus=True):
    """The icicle of one :class:`StackTree`; a subclass gives :meth:`label`,
    :meth:`frame_style`, :meth:`legend` and :meth:`match_nodes`."""

    cursor_style = CURSOR

    class Moved(Message):
        """The cursor, the zoom or the search changed: the status line follows."""

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.stree: StackTree | None = None
        self.total = 0  # the scope's period
        self.zoom: list[int] = []  # zoomed nodes, outermost first
        self.cursor: tuple[int, int] = (0, -1)  # (level, node)
        self.top = 0  # first level drawn
        self.levels: list[list[Frame]] = []
        self.placeholder = ""
        self.search = ""
        self.match: np.ndarray | None = None  # bool per tree node
        self.matched = 0  # period of the matching frames (nested matches once)
        self._laid_width = -1

    # -- hooks ------------------------------------------------------------------------------
    def label(self, node: int) -> str:
        """The frame's name (-1: "all")."""
        raise NotImplementedError

    def frame_style(self, i: int, node: int) -> Style:
        """The colours of the ``i``-th frame of its level, ``node``."""
        raise NotImplementedError

    def legend(self, width: int) -> Strip:
        """The key of the colours, under the graph."""
        return Strip.blank(width)

    def match_nodes(self, want: str) -> np.ndarray | None:
        """Bool per tree node: its name contains ``want`` (lower case)."""
        return None

    def frame_key(self, node: int) -> object:
        """What a frame is across trees (a transform or an undo makes a new one, its nodes
        numbered afresh): the cursor and the zoom follow it there (None: not followed)."""
        return None

    def path_keys(self, node: int) -> list[object]:
        """The :meth:`frame_key` of each frame from the root to ``node`` ([]: "all")."""
        if self.stree is None or node < 0:
            return []
        return [self.frame_key(n) for n in self.stree.trie.nodes(node)]

    def nearest(self, keys: list[object]) -> int:
        """The node of this tree nearest a path of another's (:meth:`path_keys`): each
        frame in turn is the nearest frame under the node reached that has it (a child,
        else the shallowest and heaviest below: what a focus cut away is back after an
        undo), or is skipped when none has it (merged, dropped or focused away).  -1:
        "all"."""
        node = -1
        for key in keys:
            hit = self._below(node, key)
            if hit is not None:
                node = hit
        return node

    def _below(self, node: int, key: object, cap: int = 20_000) -> int | None:
        """The shallowest node under ``node`` (heaviest first) whose frame is ``key``
        (None: none among the first ``cap`` looked at)."""
        if self.stree is None:
            return None
        level = self.stree.children(node).tolist()
        seen = 0
        while level and seen < cap:
            nxt: list[int] = []
            for c in level:
                if self.frame_key(c) == key:
                    return int(c)
                nxt.extend(self.stree.children(c).tolist())
            seen += len(level)
            level = nxt
        return None

    # -- data --------------------------------------------------------------------------------
    def set_stack_tree(self, tree: StackTree | None, total: int, placeholder: str,
                       same: bool, follow: tuple[list[object], list[list[object]]] | None = None
                       ) -> None:
        """A new tree; when ``same`` (same structure, new weights) the zoom and the cursor
        stay where they can; else, with ``follow`` (the :meth:`path_keys` of the cursor's
        frame and of each zoomed one in the tree before), they go to the nearest frames
        the new tree has (the frame itself or its nearest ancestor left)."""
        self.stree, self.total, self.placeholder = tree, total, placeholder
        if not same:
            self.zoom, self.cursor, self.top = [], (0, -1), 0
        if not same and follow is not None and tree is not None:
            for keys in follow[1]:
                z = self.nearest(keys)
                if z >= 0 and z not in self.zoom:
                    self.zoom.append(z)
            self.cursor = (0, self.nearest(follow[0]))
        elif tree is not None:
            self.zoom = [z for z in self.zoom if int(tree.count[z]) > 0]
        self._search(self.search)
        self.relayout()

    def relayout(self) -> None:
        level, node = self.cursor
        self.levels = self._layout()
        self._laid_width = self.size.width
        self._place_cursor(level, node)
        self.refresh()
        self.post_message(self.Moved())

    def root(self) -> int:
        """The zoomed node (-1: "all")."""
        return self.zoom[-1] if self.zoom else -1

    def _layout(self) -> list[list[Frame]]:
        if self.stree is None:
            return []
        return layout(self.stree, self.root(), self.size.width)

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

    # -- drawing ----------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if width != self._laid_width and self.stree is not None:
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
            return self.legend(width)
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
                style = self.cursor_style
            elif self.match is not None and f.node >= 0 and bool(self.match[f.node]):
                style = MATCH
            else:
                style = self.frame_style(i, f.node)
            segs.append(Segment(text.ljust(w), style))
            x = f.x1
        if x < width:
            segs.append(Segment(" " * (width - x)))
        return Strip(segs, width)

    def on_resize(self) -> None:
        if self.stree is not None:
            self.relayout()

    # -- keys --------------------------------------------------------------------------------------
    def _go(self, level: int, node: int) -> None:
        self.cursor = (level, node)
        self._show_level(level)
        self.refresh()
        self.post_message(self.Moved())

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
        if target is not None:
            self._go(level, target.node)

    def action_top(self) -> None:
        if self.levels:
            self._go(0, self.levels[0][0].node)

    def action_zoom(self) -> None:
        cur = self.current()
        if cur is None or cur.node < 0 or cur.node == self.root():
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
        """``/``: the text to paint the frames with, asked in a prompt."""
        from ..screens import PromptScreen

        self.app.push_screen(PromptScreen(
            "paint frames", "frames whose name contains the text (case-insensitive); "
            "empty: no paint", self.search), self._searched)

    def _searched(self, text: str | None) -> None:
        if text is not None:
            self.set_search(text)

    def set_search(self, text: str) -> None:
        self._search(text)
        self.refresh()
        self.post_message(self.Moved())

    def _search(self, text: str) -> None:
        self.search = text.strip()
        self.match, self.matched = None, 0
        if not self.search or self.stree is None:
            return
        match = self.match_nodes(self.search.lower())
        if match is None:
            return
        self.match = match
        self.matched = int(self.stree.total[first_matches(self.stree, match)].sum())

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
        self._go(lv, f.node)
