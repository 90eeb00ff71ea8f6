"""Call trees as an expandable list: one or more trees (callers and callees of a row, or
top-down and bottom-up of the whole scope), each under a heading line.

Expansion is kept by *path* (the frames from the tree's root), not by node id: a new
filter or range weighs new trees, and what was open stays open."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from rich.text import Text
from textual.binding import Binding
from textual.message import Message

from ...analysis.grouptrees import GroupTree
from ...analysis.transforms import FOCUS_SUBTREE
from ...present.report import time_text
from ...symbols.naming.locations import Locations
from .frames import frame_text, pct_text, weight_text
from .linelist import LineList
from .transformkeys import SandwichWanted, TransformWanted, transform_bindings

LINE_LIMIT = 100_000  # lines an "expand all" opens at most
INDENT_CAP = 16  # levels drawn as indentation; deeper ones say their depth
TIME_WIDTH = 9  # a timed event's Time column (``1.502 s``)

Path = tuple[int, ...]


@dataclass
class Forest:
    """One tree under a heading: ``expanded`` holds the paths that are open (``()`` is
    the heading itself); ``top_down`` False for a tree whose paths go up to callers."""

    title: str
    tree: GroupTree
    top_down: bool = True  # a path's end is a sampled function: Self means something
    expanded: set[Path] = field(default_factory=lambda: {()})


@dataclass
class Line:
    forest: int
    node: int  # -1: the heading
    depth: int  # 0: the heading, 1: a root
    path: Path


class CallTreeList(LineList):
    """The trees' visible lines: ``total%  self%  samples  ▸ frame``."""

    BINDINGS = [
        Binding("right", "expand", "Expand", show=False, id="tree.expand",
                tooltip="expand (again: into the first callee/caller)"),
        Binding("plus", "expand", "Expand", show=False, id="tree.expand_plus",
                tooltip="expand (again: into the first callee/caller)"),
        Binding("left", "collapse", "Collapse", show=False, id="tree.collapse",
                tooltip="collapse (again: up to the parent)"),
        Binding("minus", "collapse", "Collapse", show=False, id="tree.collapse_minus",
                tooltip="collapse (again: up to the parent)"),
        Binding("enter", "toggle_line", "Expand", id="tree.toggle",
                tooltip="expand / collapse the line"),
        Binding("e", "subtree", "Subtree", show=False, id="tree.subtree",
                tooltip="expand / collapse everything below the line (perf's e)"),
        Binding("E", "expand_all", "Expand all", show=False, id="tree.expand_all",
                tooltip="expand every tree (perf's E)"),
        Binding("C", "collapse_all", "Collapse all", show=False, id="tree.collapse_all",
                tooltip="collapse every tree (perf's C)"),
        Binding("v", "samples", "Samples", id="tree.samples",
                tooltip="the samples through the line (Enter on one: its record)"),
        Binding("a", "annotate", "Annotate", show=False, id="tree.annotate",
                tooltip="annotate: the function of the line (perf's a)"),
        *transform_bindings("tree", subtree=True),
    ]

    class SamplesWanted(Message):
        """``v``: the samples of the groups in ``groups`` (bool per group)."""

        def __init__(self, groups: np.ndarray, title: str) -> None:
            super().__init__()
            self.groups = groups
            self.title = title

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)
        self.forests: list[Forest] = []
        self.lines: list[Line] = []
        self.total = 0  # the scope's period: shares are of it
        self.locs: Locations | None = None
        self.comm_names: Sequence[str] = ()
        self.count_width = 7
        self.placeholder = ""
        self.timed = False  # periods in ns (offcpu-time): a Time column, the total's

    # -- data ---------------------------------------------------------------------------------
    def show(self, forests: list[Forest], total: int, locs: Locations,
             comm_names: Sequence[str], timed: bool = False) -> None:
        """New trees; what was open (by path) stays open, the cursor stays on its path
        (``timed``: the periods are nanoseconds, shown as times too)."""
        keep = self.lines[self.cursor] if 0 <= self.cursor < len(self.lines) else None
        old = {f.title: f.expanded for f in self.forests}
        for f in forests:
            if f.title in old:
                f.expanded = old[f.title]
        self.forests, self.total, self.locs, self.comm_names = forests, total, locs, comm_names
        self.timed = timed
        most = max((int(f.tree.tree.count.max(initial=0)) for f in forests), default=0)
        self.count_width = max(7, len(f"{most:,}"))
        self.placeholder = ""
        self._rebuild(keep)

    def clear_trees(self, placeholder: str) -> None:
        self.forests, self.lines, self.placeholder = [], [], placeholder
        self.reload(0)

    def _rebuild(self, keep: Line | None = None) -> None:
        lines: list[Line] = []
        for fi, f in enumerate(self.forests):
            lines.append(Line(fi, -1, 0, ()))
            if () not in f.expanded:
                continue
            t = f.tree.tree
            stack: list[tuple[int, int, Path]] = [(int(c), 1, (int(t.frame[c]),))
                                                  for c in t.children(-1)[::-1]]
            while stack and len(lines) < LINE_LIMIT:
                node, depth, path = stack.pop()
                lines.append(Line(fi, node, depth, path))
                if path in f.expanded:
                    stack.extend((int(c), depth + 1, (*path, int(t.frame[c])))
                                 for c in t.children(node)[::-1])
        self.lines = lines
        cursor = None
        if keep is not None:
            for i, ln in enumerate(lines):
                if ln.forest == keep.forest and ln.path == keep.path:
                    cursor = i
                    break
        self.reload(cursor)

    def current(self) -> Line | None:
        return self.lines[self.cursor] if 0 <= self.cursor < len(self.lines) else None

    # -- drawing --------------------------------------------------------------------------------
    def line_count(self) -> int:
        return len(self.lines) if self.forests else len(self.note_lines(self.placeholder))

    def header(self) -> Text | None:
        if not self.forests:
            return None
        time = f" {'Time':>{TIME_WIDTH}}" if self.timed else ""
        return Text(f"{'Total':>7} {'Self':>7}{time} {'Samples':>{self.count_width}}  Frame")

    def line(self, i: int) -> Text:
        if not self.forests:
            return Text(self.note_lines(self.placeholder)[i], style="dim")
        ln = self.lines[i]
        f = self.forests[ln.forest]
        t = f.tree.tree
        if ln.node < 0:
            mark = "▾" if () in f.expanded else "▸"
            out = Text()
            out.append(f"{mark} {f.title}", style="bold")
            out.append(f"  {weight_text(t.grand_count, t.grand_total, self.total, self.timed)}",
                       style="dim")
            return out
        node = ln.node
        out = Text()
        out.append_text(pct_text(int(t.total[node]), self.total))
        out.append(" ")
        if f.top_down:
            out.append_text(pct_text(int(t.self_period[node]), self.total))
        else:  # bottom-up paths end at the thread: a self share would say nothing
            out.append(f"{'-':>7}", style="dim")
        if self.timed:
            out.append(f" {time_text(int(t.total[node])):>{TIME_WIDTH}}")
        out.append(f" {int(t.count[node]):>{self.count_width},}  ")
        d = ln.depth - 1
        if d > INDENT_CAP:
            out.append(f"{' ' * (2 * INDENT_CAP - 4)}…{d:>2} ", style="dim")
        else:
            out.append("  " * d)
        mark = ("▾" if ln.path in f.expanded else "▸") if t.has_children(node) else "·"
        out.append(f"{mark} ")
        assert self.locs is not None
        out.append_text(frame_text(self.locs, self.comm_names, int(t.frame[node])))
        return out

    # -- keys ----------------------------------------------------------------------------------
    def _has_children(self, ln: Line) -> bool:
        t = self.forests[ln.forest].tree.tree
        return bool(len(t.children(ln.node))) if ln.node >= 0 else bool(len(t.children(-1)))

    def action_expand(self) -> None:
        ln = self.current()
        if ln is None or not self._has_children(ln):
            return
        f = self.forests[ln.forest]
        if ln.path in f.expanded:
            self.action_cursor(1)
        else:
            f.expanded.add(ln.path)
            self._rebuild(ln)

    def action_collapse(self) -> None:
        ln = self.current()
        if ln is None:
            return
        f = self.forests[ln.forest]
        if ln.path in f.expanded and self._has_children(ln):
            f.expanded.discard(ln.path)
            self._rebuild(ln)
            return
        for i in range(self.cursor - 1, -1, -1):  # up to the parent line
            up = self.lines[i]
            if up.forest == ln.forest and up.depth == ln.depth - 1:
                self.cursor = i
                return

    def action_toggle_line(self) -> None:
        ln = self.current()
        if ln is None or not self._has_children(ln):
            return
        f = self.forests[ln.forest]
        if ln.path in f.expanded:
            f.expanded.discard(ln.path)
        else:
            f.expanded.add(ln.path)
        self._rebuild(ln)

    def _open_below(self, f: Forest, node: int, path: Path) -> bool:
        """Open every path below ``node`` (False when the limit stopped it)."""
        t = f.tree.tree
        stack = [(node, path)]
        opened = 0
        while stack:
            n, p = stack.pop()
            kids = t.children(n)
            if not len(kids):
                continue
            f.expanded.add(p)
            opened += len(kids)
            if opened > LINE_LIMIT:
                return False
            stack.extend((int(c), (*p, int(t.frame[c]))) for c in kids)
        return True

    def action_subtree(self) -> None:
        ln = self.current()
        if ln is None:
            return
        f = self.forests[ln.forest]
        below = [p for p in f.expanded if p[:len(ln.path)] == ln.path and p != ln.path]
        if below:
            f.expanded -= set(below)
            f.expanded.discard(ln.path)
        elif not self._open_below(f, ln.node, ln.path):
            self.notify(f"stopped at {LINE_LIMIT:,} lines", severity="warning")
        self._rebuild(ln)

    def action_expand_all(self) -> None:
        keep = self.current()
        for f in self.forests:
            if not self._open_below(f, -1, ()):
                self.notify(f"stopped at {LINE_LIMIT:,} lines", severity="warning")
                break
        self._rebuild(keep)

    def action_collapse_all(self) -> None:
        for f in self.forests:
            f.expanded = {()}
        ln = self.current()
        self._rebuild(Line(ln.forest, -1, 0, ()) if ln is not None else None)

    def action_choose(self) -> None:
        self.action_toggle_line()

    def current_groups(self) -> np.ndarray | None:
        """The groups (bool per group) of the samples through the line under the cursor."""
        ln = self.current()
        if ln is None or self.locs is None:
            return None
        groups: np.ndarray = self.forests[ln.forest].tree.groups_through(ln.node)
        return groups

    def action_transform(self, kind: str) -> None:
        """A transform on the line's frame; focus on a subtree takes the line's path, in a
        top-down tree whose roots are threads."""
        ln = self.current()
        path: tuple[frozenset[int], ...] = ()
        if ln is not None and ln.node >= 0:
            f = self.forests[ln.forest]
            if kind != FOCUS_SUBTREE:
                path = (frozenset({int(f.tree.tree.frame[ln.node])}),)
            elif f.top_down and ln.path and ln.path[0] < 0:
                path = tuple(frozenset({p}) for p in ln.path)
        self.post_message(TransformWanted(kind, path))

    def action_sandwich(self) -> None:
        ln = self.current()
        if ln is not None and ln.node >= 0:
            frame = int(self.forests[ln.forest].tree.tree.frame[ln.node])
            if frame >= 0:
                self.post_message(SandwichWanted(frozenset({frame}), whole=True))

    def action_samples(self) -> None:
        ln = self.current()
        groups = self.current_groups()
        if ln is None or groups is None or self.locs is None:
            return
        f = self.forests[ln.forest]
        if ln.node < 0:
            title = f.title
        else:
            frame = int(f.tree.tree.frame[ln.node])
            title = f"{frame_text(self.locs, self.comm_names, frame).plain} · {f.title}"
        self.post_message(self.SamplesWanted(groups, title))

    def action_annotate(self) -> None:
        from .hotspots import annotate_location

        ln = self.current()
        if ln is None or ln.node < 0:
            return
        frame = int(self.forests[ln.forest].tree.tree.frame[ln.node])
        if frame >= 0:
            annotate_location(self, frame)
