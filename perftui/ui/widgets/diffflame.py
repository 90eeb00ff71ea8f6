"""The differential flame graph's icicle: NEW's stacks, each frame coloured by the change
of its self share against OLD, as Brendan Gregg's differential flame graphs
(``difffolded.pl -n`` then ``flamegraph.pl``): red grew, blue shrank, white unchanged, the
shade by the size of the change against the largest one."""

from __future__ import annotations

import numpy as np
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip

from ...analysis.diffflame import DiffFlame
from ...textsafe import safe
from .icicle import ICICLE_BINDINGS, Icicle

#: the cursor on light frames: white would be a frame that did not change
DIFF_CURSOR = Style(bgcolor="#ffd700", color="#000000", bold=True)


def diff_rgb(delta: float, max_delta: float) -> tuple[int, int, int]:
    """flamegraph.pl's ``color_scale``: a change ``delta`` (NEW less OLD) as a shade of
    red (grew) or blue (shrank) against the largest change ``max_delta``; white for none."""
    if max_delta <= 0 or delta == 0:
        return 255, 255, 255
    if delta > 0:
        gb = int(210 * (max_delta - delta) / max_delta)
        return 255, gb, gb
    rg = int(210 * (max_delta + delta) / max_delta)
    return rg, rg, 255


class DiffFlameGraph(Icicle):
    """The icicle of one :class:`DiffFlame` (its node ``k + 1`` is node ``k`` here)."""

    BINDINGS = [
        *ICICLE_BINDINGS,
        Binding("v", "row", "Diff row", id="dflame.row",
                tooltip="the frame's row in perf diff's dso,sym table"),
    ]
    DEFAULT_CSS = "DiffFlameGraph { height: 1fr; }"
    cursor_style = DIFF_CURSOR

    class RowWanted(Message):
        """``v``: show the frame's function in the compared table."""

        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)
        self.flame: DiffFlame | None = None
        self.delta = np.zeros(0)  # self change per node (percentage points)
        self.max_delta = 0.0
        self._styles: dict[int, Style] = {}

    def set_flame(self, flame: DiffFlame | None, placeholder: str = "") -> None:
        self.flame = flame
        self._styles = {}
        if flame is None:
            self.set_stack_tree(None, 0, placeholder, same=False)
            return
        self.delta = flame.self_delta()
        self.max_delta = flame.max_delta()
        self.set_stack_tree(flame.stack_tree(), flame.new_sum, placeholder, same=False)

    # -- names and colours -----------------------------------------------------------------
    def label(self, node: int) -> str:
        if node < 0 or self.flame is None:
            return "all"
        return safe(self.flame.name[node + 1])

    def frame_style(self, i: int, node: int) -> Style:
        got = self._styles.get(node)
        if got is None:
            d = float(self.delta[node + 1]) if node >= 0 and self.flame is not None else 0.0
            r, g, b = diff_rgb(d, self.max_delta)
            got = self._styles[node] = Style(bgcolor=f"#{r:02x}{g:02x}{b:02x}",
                                             color="#000000")
        return got

    def legend(self, width: int) -> Strip:
        segs = []
        for (r, g, b), name in (((255, 0, 0), "grew"), ((0, 0, 255), "shrank"),
                                ((255, 255, 255), "same")):
            segs.append(Segment("  "))
            segs.append(Segment("  ", Style(bgcolor=f"#{r:02x}{g:02x}{b:02x}")))
            segs.append(Segment(f" {name}", Style(dim=True)))
        segs.append(Segment("  (self share, NEW against OLD; width: NEW)", Style(dim=True)))
        return Strip(segs).crop(0, width).extend_cell_length(width)

    def match_nodes(self, want: str) -> np.ndarray | None:
        if self.flame is None:
            return None
        return np.array([want in n.lower() for n in self.flame.name[1:]], dtype=bool)

    def describe(self, node: int) -> Text:
        """The status line's words for a frame: its shares in NEW and OLD, the change."""
        t = Text(no_wrap=True, overflow="ellipsis")
        fl = self.flame
        if fl is None:
            return t
        k = node + 1
        t.append(self.label(node), style="bold")
        new_t, old_t = fl.share(fl.new_total[k:k + 1], "new")[0], \
            fl.share(fl.old_total[k:k + 1], "old")[0]
        t.append(f" · total NEW {new_t:.2f}% OLD {old_t:.2f}%")
        if node >= 0:
            new_s, old_s = fl.share(fl.new_self[k:k + 1], "new")[0], \
                fl.share(fl.old_self[k:k + 1], "old")[0]
            d = float(self.delta[k])
            style = "bold red" if d > 0 else "bold blue" if d < 0 else ""
            t.append(f" · self NEW {new_s:.2f}% OLD {old_s:.2f}% ")
            t.append(f"{d:+.2f}", style=style)
        return t

    def action_row(self) -> None:
        cur = self.current()
        if cur is not None and cur.node >= 0 and self.flame is not None:
            self.post_message(self.RowWanted(self.flame.name[cur.node + 1]))
