"""A list of text lines with a cursor, drawn with the Line API (only the visible lines are
made), for tables of any length: the profile's hotspot table and call trees."""

from __future__ import annotations

import textwrap

from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...lru import LRU


def wrap_note(note: str, width: int) -> list[str]:
    """``note`` in lines of at most ``width - 1`` cells (words kept whole where they fit);
    no lines for no note."""
    if not note:
        return []
    return textwrap.wrap(note, max(8, width - 1)) or [""]


class LineList(ScrollView, can_focus=True):
    """Subclasses give :meth:`line_count`, :meth:`line` (a Text, no markup) and
    optionally :meth:`header`; Enter posts :class:`LineList.Chosen`."""

    BINDINGS = [
        Binding("up", "cursor(-1)", "Up", show=False, id="lines.up", tooltip="move"),
        Binding("down", "cursor(1)", "Down", show=False, id="lines.down", tooltip="move"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="lines.pageup",
                tooltip="move"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="lines.pagedown",
                tooltip="move"),
        Binding("home", "jump(0)", "First", show=False, id="lines.home",
                tooltip="first / last line"),
        Binding("end", "jump(-1)", "Last", show=False, id="lines.end",
                tooltip="first / last line"),
    ]
    DEFAULT_CSS = """
    LineList { height: 1fr; scrollbar-size-horizontal: 0; border: round $primary 50%; }
    LineList:focus { border: round $accent; }
    LineList > .linelist--cursor { background: $accent 40%; }
    LineList > .linelist--header { background: $primary 25%; text-style: bold; }
    """
    COMPONENT_CLASSES = {"linelist--cursor", "linelist--header"}

    cursor = reactive(0, always_update=True)

    class Chosen(Message):
        """Enter on line ``index``."""

        def __init__(self, lines: LineList, index: int) -> None:
            super().__init__()
            self.lines = lines
            self.index = index

        @property
        def control(self) -> LineList:
            return self.lines

    class Moved(Message):
        """The cursor moved to line ``index``."""

        def __init__(self, lines: LineList, index: int) -> None:
            super().__init__()
            self.lines = lines
            self.index = index

        @property
        def control(self) -> LineList:
            return self.lines

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self._segs: LRU[int, list[Segment]] = LRU(1024)

    # -- what subclasses give ------------------------------------------------------------
    def line_count(self) -> int:
        return 0

    def line(self, i: int) -> Text:
        return Text()

    def header(self) -> Text | None:
        return None

    def note_lines(self, note: str) -> list[str]:
        """``note`` (what the list says instead of lines) wrapped to the list's width: a
        long one is read whole at 80 columns, not cut off."""
        return wrap_note(note, self.size.width)

    # -- data --------------------------------------------------------------------------------
    @property
    def _head(self) -> int:
        return 1 if self.header() is not None else 0

    def reload(self, cursor: int | None = None) -> None:
        """The lines changed: redraw (and put the cursor at ``cursor``)."""
        self._segs.clear()
        n = self.line_count()
        self.virtual_size = Size(self.size.width, n + self._head)
        if cursor is not None:
            self.cursor = max(0, min(cursor, n - 1))
        elif self.cursor >= n:
            self.cursor = max(0, n - 1)
        else:
            self.cursor = self.cursor
        self.refresh()

    def _segments(self, i: int) -> list[Segment]:
        return self._segs.get_or_make(i, lambda: list(self.line(i).render(self.app.console)))

    # -- drawing -----------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        sx, sy = self.scroll_offset
        width = self.size.width
        head = self.header()
        if head is not None:
            if y == 0:
                style = self.get_component_rich_style("linelist--header")
                head.stylize(style)
                segs = list(head.render(self.app.console))
                return Strip(segs).crop(0, width).extend_cell_length(width, style)
            y -= 1
        i = sy + y
        if i >= self.line_count():
            return Strip.blank(width, self.rich_style)
        strip = Strip(self._segments(i)).crop(sx, sx + width).extend_cell_length(width)
        if i == self.cursor:
            strip = strip.apply_style(self.get_component_rich_style("linelist--cursor"))
        return strip.apply_style(self.rich_style)

    # -- cursor --------------------------------------------------------------------------------
    def watch_cursor(self, _old: int, new: int) -> None:
        if not self.line_count():
            return
        sy = int(self.scroll_offset.y)
        h = max(1, self.size.height - self._head)
        if new < sy:
            self.scroll_to(y=new, animate=False)
        elif new >= sy + h:
            self.scroll_to(y=new - h + 1, animate=False)
        self.refresh()
        self.post_message(self.Moved(self, new))

    def action_cursor(self, delta: int) -> None:
        n = self.line_count()
        if n:
            self.cursor = min(max(0, self.cursor + delta), n - 1)

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.size.height - 1 - self._head))

    def action_jump(self, where: int) -> None:
        n = self.line_count()
        if n:
            self.cursor = 0 if where == 0 else n - 1

    def action_choose(self) -> None:
        if self.line_count():
            self.post_message(self.Chosen(self, self.cursor))

    async def _on_click(self, event: events.Click) -> None:
        i = int(self.scroll_offset.y) + event.y - self._head
        if 0 <= i < self.line_count():
            if i == self.cursor and event.chain > 1:
                self.action_choose()
            self.cursor = i

    def _on_resize(self, event: events.Resize) -> None:
        self._segs.clear()
        n = self.line_count()  # a note's lines are wrapped to the width: fewer when wider
        self.virtual_size = Size(self.size.width, n + self._head)
        if self.cursor >= n:
            self.cursor = max(0, n - 1)
