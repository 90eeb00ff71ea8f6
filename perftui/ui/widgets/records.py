"""The record list: a Line-API view that draws only the visible records."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...lru import LRU
from ...textsafe import safe
from ..model import Model

TYPE_STYLES = {
    "SAMPLE": "green", "MMAP": "cyan", "MMAP2": "cyan", "KMOD_SEC_MAP": "bold magenta",
    "COMM": "yellow", "FORK": "yellow", "EXIT": "yellow", "COMPRESSED": "dim",
    "COMPRESSED2": "dim", "FINISHED_ROUND": "dim", "FINISHED_INIT": "dim",
}


class RecordList(ScrollView, can_focus=True):
    """Every record (or the filtered view), one line each, with a cursor."""

    BINDINGS = [
        Binding("up", "cursor(-1)", "Up", show=False, id="records.up", tooltip="move"),
        Binding("down", "cursor(1)", "Down", show=False, id="records.down", tooltip="move"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="records.pageup",
                tooltip="move"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="records.pagedown",
                tooltip="move"),
        Binding("home", "jump(0)", "First", show=False, id="records.home",
                tooltip="first / last record"),
        Binding("end", "jump(-1)", "Last", show=False, id="records.end",
                tooltip="first / last record"),
        Binding("left", "pan(-8)", "Scroll left", show=False, id="records.left",
                tooltip="scroll sideways (the summary on a narrow terminal)"),
        Binding("right", "pan(8)", "Scroll right", show=False, id="records.right",
                tooltip="scroll sideways (the summary on a narrow terminal)"),
        Binding("a", "app.annotate_record", "Annotate", show=False, id="records.annotate",
                tooltip="on a sample: annotate its function (its instructions with their "
                        "samples)"),
    ]
    DEFAULT_CSS = """
    RecordList { height: 1fr; scrollbar-size-horizontal: 0; }
    RecordList > .recordlist--cursor { background: $accent 40%; }
    RecordList > .recordlist--header { background: $primary 25%; text-style: bold; }
    """
    COMPONENT_CLASSES = {"recordlist--cursor", "recordlist--header"}

    cursor = reactive(0, always_update=True)

    class Highlighted(Message):
        """The cursor moved to index row ``row``."""

        def __init__(self, row: int) -> None:
            super().__init__()
            self.row = row

    def __init__(self, model: Model, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.model = model
        self._cache: LRU[int, Text] = LRU(2048)
        self._seg_cache: LRU[int, list] = LRU(2048)
        self._width_class = True
        self._count = 0
        self._row: int | None = None  # the index row under the cursor

    # -- data --------------------------------------------------------------------------------
    def refresh_data(self, keep_row: int | None = None) -> None:
        """Re-read the model (after indexing progress, a filter or an order change)."""
        self._count = self.model.count()
        self.virtual_size = Size(max(self.size.width, 160), self._count + 1)
        pos = self.model.display_of(keep_row) if keep_row is not None else None
        if pos is not None:
            self.cursor = pos
        elif self.cursor >= self._count:  # fewer rows than the cursor: the last one
            self.cursor = max(0, self._count - 1)
        else:
            self.cursor = self.cursor  # re-read the row under it (the view changed)
        self.refresh()

    def clear_cache(self) -> None:
        self._cache.clear()
        self._seg_cache.clear()

    def columns(self) -> tuple[int, int, int]:
        """Widths of pid/tid, comm and type: narrower below 90 columns (80x24 over ssh)."""
        return (11, 14, 12) if self.size.width >= 90 or not self.size.width else (9, 10, 11)

    def time_width(self) -> int:
        """Width of the time column: relative times fit 10; absolute ones as long as the
        last time is."""
        m = self.model
        if not m.absolute_time:
            return 10
        return max(10, len(m.fmt_time(m.span()[1] or 1)))

    def header_text(self) -> str:
        who, comm, typ = self.columns()
        head = f"time {self.model.time_unit}"
        return (f"{'offset':>9} {head:>{self.time_width()}} {'cpu':>3} {'pid/tid':>{who}} "
                f"{'comm':<{comm}} {'type':<{typ}} summary")

    def line_text(self, row: int) -> Text:
        t = self._cache.get(row)
        if t is not None:
            return t
        m = self.model
        c = m.rec.columns
        off = int(m.rec.outer_offset(row))
        z = "z" if int(c["src"][row]) != 0 and m.rec.mode != "directory" else " "
        time = int(c["time"][row])
        cpu = int(c["cpu"][row])
        pid, tid = int(c["pid"][row]), int(c["tid"][row])
        fields = m.fields(row)
        f_type = fields["type"]
        w_who, w_comm, w_type = self.columns()
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(f"{off:>#9x}{z}", style="dim")
        t.append(f"{m.fmt_time(time):>{self.time_width()}} ")
        # synthesized records carry a zeroed trailer: no time, so no CPU either
        known = time > 0 or f_type == "SAMPLE"
        t.append(f"{cpu:>3} " if cpu >= 0 and known else "    ", style="dim")
        who = "" if tid < 0 else (str(pid) if pid == tid else f"{pid}/{tid}")
        t.append(f"{who:>{w_who}} ")
        t.append(f"{safe(m.comm_of(row), w_comm):<{w_comm}} ", style="bold")
        t.append(f"{safe(f_type, w_type):<{w_type}} ", style=TYPE_STYLES.get(f_type, ""))
        t.append(safe(m.line_summary(row, fields), 400))
        self._cache.put(row, t)
        return t

    def _segments(self, row: int) -> list:
        return self._seg_cache.get_or_make(
            row, lambda: list(self.line_text(row).render(self.app.console)))

    # -- drawing -----------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        sx, sy = self.scroll_offset
        width = self.size.width
        if y == 0:
            style = self.get_component_rich_style("recordlist--header")
            head = Text(self.header_text(), no_wrap=True)
            head.stylize(style)  # Text.render drops a span-less Text's base style
            segs = list(head.render(self.app.console))
            return Strip(segs).crop(sx, sx + width).extend_cell_length(width, style)
        display = sy + y - 1
        if display >= min(self._count, self.model.count()):
            return Strip.blank(width, self.rich_style)
        row = self.model.row(display)
        strip = Strip(self._segments(row)).crop(sx, sx + width).extend_cell_length(width)
        if display == self.cursor:
            strip = strip.apply_style(self.get_component_rich_style("recordlist--cursor"))
        return strip.apply_style(self.rich_style)

    # -- cursor ------------------------------------------------------------------------------
    def watch_cursor(self, old: int, new: int) -> None:
        if not self._count or new >= self.model.count():
            self._row = None
            return
        self._row = self.model.row(new)
        self._scroll_to_cursor()
        self.refresh()
        self.post_message(self.Highlighted(self._row))

    def _scroll_to_cursor(self) -> None:
        sy = int(self.scroll_offset.y)
        h = max(1, self.size.height - 1)
        if self.cursor < sy:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= sy + h:
            self.scroll_to(y=self.cursor - h + 1, animate=False)

    def action_cursor(self, delta: int) -> None:
        if self._count:
            self.cursor = min(max(0, self.cursor + delta), self._count - 1)

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.size.height - 2))

    def action_pan(self, delta: int) -> None:
        """Scroll sideways: the summary of a narrow terminal."""
        self.scroll_to(x=max(0, int(self.scroll_offset.x) + delta), animate=False)

    def action_jump(self, where: int) -> None:
        if self._count:
            self.cursor = 0 if where == 0 else self._count - 1

    def jump_to_row(self, row: int) -> bool:
        pos = self.model.display_of(row)
        if pos is None:
            return False
        self.cursor = pos
        return True

    def current_row(self) -> int | None:
        """The index row under the cursor (kept across view changes until the next
        :meth:`refresh_data` moves the cursor)."""
        return self._row if self._count else None

    async def _on_click(self, event: events.Click) -> None:
        y = event.y
        if y >= 1:
            target = int(self.scroll_offset.y) + y - 1
            if target < self._count:
                self.cursor = target

    def _on_resize(self, event: events.Resize) -> None:
        self.virtual_size = Size(max(self.size.width, 160), self._count + 1)
        wide = self.size.width >= 90
        if wide != self._width_class:
            self._width_class = wide
            self.clear_cache()

