"""The flame graph's icicle (``f``): "all" on top, each thread under it, then its stacks
outermost caller first; colours tell the kernel, each kind of module section and user
space apart."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip

from ...analysis.commprocesses import CommMembers
from ...analysis.grouptrees import GroupTree
from ...analysis.transforms import FOCUS_SUBTREE
from ...symbols.naming.locations import Locations
from ...textsafe import safe
from .frames import KIND_COLOURS, LEGEND, frame_kind, frame_name, weight_text, where_text
from .icicle import ICICLE_BINDINGS, TEXT, Icicle
from .transformkeys import SandwichWanted, TransformWanted, transform_bindings


class FlameGraph(Icicle):
    """The icicle of one :class:`GroupTree` (top-down, thread names at the root level)."""

    BINDINGS = [
        *ICICLE_BINDINGS,
        Binding("v", "samples", "Samples", id="flame.samples",
                tooltip="the samples through the frame (Enter on one: its record)"),
        Binding("a", "annotate", "Annotate", show=False, id="flame.annotate",
                tooltip="annotate: the function of the frame (perf's a)"),
        *transform_bindings("flame", subtree=True),
    ]
    DEFAULT_CSS = "FlameGraph { height: 1fr; }"

    class SamplesWanted(Message):
        def __init__(self, node: int) -> None:
            super().__init__()
            self.node = node

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)
        self.gtree: GroupTree | None = None
        self.locs: Locations | None = None
        self.comm_names: Sequence[str] = ()
        self.members: dict[int, CommMembers] = {}  # what each thread name merges
        self._labels: dict[int, str] = {}
        self.names_lower: list[str] = []  # every location's name, lower case (for /)
        self.timed = False  # the periods are nanoseconds (offcpu-time): times are said

    # -- data --------------------------------------------------------------------------------
    def set_tree(self, tree: GroupTree | None, total: int, locs: Locations | None,
                 comm_names: Sequence[str], placeholder: str = "",
                 names_lower: list[str] | None = None,
                 members: dict[int, CommMembers] | None = None) -> None:
        """A new tree (a new scope): the zoom and the cursor stay where they can.
        ``members``: the processes and threads each thread name of the first level merges
        (its label says them)."""
        same = self.gtree is not None and tree is not None and \
            self.gtree.tree.trie is tree.tree.trie
        follow = None  # a transform or an undo: the cursor and the zoom keep their frames
        if not same and self.gtree is not None and tree is not None:
            follow = (self.path_keys(self.cursor[1]), [self.path_keys(z) for z in self.zoom])
        self.gtree, self.locs, self.comm_names = tree, locs, comm_names
        self.names_lower = names_lower or []
        self.members = members or {}
        if not same:
            self._labels = {}
        self.set_stack_tree(None if tree is None else tree.tree, total, placeholder, same,
                            follow)

    # -- names ------------------------------------------------------------------------------------
    def frame_key(self, node: int) -> object:
        """A frame's name as a flame graph folds it (a thread's without what it merges),
        with its dso and level (one ``[unknown]`` of the kernel's is not one of a
        program's)."""
        assert self.gtree is not None and self.locs is not None
        frame = int(self.gtree.tree.frame[node])
        name = frame_name(self.locs, self.comm_names, frame, folded=True)
        if frame < 0:
            return True, name, ""
        return False, name, where_text(self.locs, frame), self.kind(node)

    def label(self, node: int) -> str:
        if node < 0:
            return "all"
        got = self._labels.get(node)
        if got is None:
            assert self.gtree is not None and self.locs is not None
            frame = int(self.gtree.tree.frame[node])
            if frame < 0:  # a thread name: what it merges (the scope's, so not kept)
                name = safe(frame_name(self.locs, self.comm_names, frame))
                seen = self.members.get(-1 - frame)
                return f"{name} ({seen.words()})" if seen is not None else name
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

    def frame_style(self, i: int, node: int) -> Style:
        shades = KIND_COLOURS[self.kind(node)]
        return Style(bgcolor=shades[i % len(shades)], color=TEXT)

    def legend(self, width: int) -> Strip:
        segs = []
        for kind, name in LEGEND:
            segs.append(Segment("  "))
            segs.append(Segment("  ", Style(bgcolor=KIND_COLOURS[kind][0])))
            segs.append(Segment(f" {name}", Style(dim=True)))
        return Strip(segs).crop(0, width).extend_cell_length(width)

    def describe(self, node: int) -> Text:
        """The status line's words for a frame: its name, what it weighs (before where
        it is: a narrow terminal cuts the end)."""
        t = Text(no_wrap=True, overflow="ellipsis")
        if self.gtree is None:
            return t
        tr = self.gtree.tree
        where = ""
        if node < 0:
            count, period = tr.grand_count, tr.grand_total
            t.append("all", style="bold")
        else:
            count, period = int(tr.count[node]), int(tr.total[node])
            frame = int(tr.frame[node])
            if frame < 0:
                t.append(f"comm {self.label(node)}", style="bold")
            else:
                assert self.locs is not None
                t.append(f"{'[k]' if self.locs.dsos[self.locs.dso[frame]].kernel else '[.]'} ",
                         style="dim")
                t.append(self.label(node), style="bold")
                where = "addresses no symbol covers" if self.locs.name[frame] is None else \
                    safe(where_text(self.locs, frame), 60)
        t.append(f"  {weight_text(count, period, self.total, self.timed)}")
        root = self.root()
        if root >= 0 and node != root:
            rp = int(tr.total[root])
            t.append(f" ({100.0 * period / rp if rp else 0.0:.2f}% of the zoom)")
        if where:
            t.append(f"  {where}", style="dim")
        return t

    def match_nodes(self, want: str) -> np.ndarray | None:
        if self.gtree is None or self.locs is None:
            return None
        loc_ok = np.array([want in name for name in self.names_lower], dtype=bool)
        comm_ok = np.array([want in c.lower() for c in self.comm_names], dtype=bool)
        frame = self.gtree.tree.trie.frame
        match = np.zeros(len(frame), dtype=bool)
        pos = frame >= 0
        if len(loc_ok):
            match[pos] = loc_ok[frame[pos]]
        if len(comm_ok):
            match[~pos] = comm_ok[-1 - frame[~pos]]
        return match

    # -- keys --------------------------------------------------------------------------------------
    def action_samples(self) -> None:
        cur = self.current()
        if cur is not None:
            self.post_message(self.SamplesWanted(cur.node))

    def action_transform(self, kind: str) -> None:
        """A transform on the frame (focus on a subtree: its path from the thread)."""
        cur = self.current()
        path: tuple[frozenset[int], ...] = ()
        if cur is not None and cur.node >= 0 and self.gtree is not None:
            frames = self.gtree.tree.trie.path(cur.node)
            path = tuple(frozenset({f}) for f in
                         (frames if kind == FOCUS_SUBTREE else frames[-1:]))
        self.post_message(TransformWanted(kind, path))

    def action_sandwich(self) -> None:
        cur = self.current()
        if cur is not None and cur.node >= 0 and self.gtree is not None:
            frame = int(self.gtree.tree.frame[cur.node])
            if frame >= 0:
                self.post_message(SandwichWanted(frozenset({frame})))

    def action_annotate(self) -> None:
        from .hotspots import annotate_location

        cur = self.current()
        if cur is None or cur.node < 0 or self.gtree is None:
            return
        frame = int(self.gtree.tree.frame[cur.node])
        if frame >= 0:
            annotate_location(self, frame)
