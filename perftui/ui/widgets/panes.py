"""The smaller panes: header line, record detail, module sections."""

from __future__ import annotations

from rich.segment import Segment
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import DataTable, Static

from ...present.records import field_lines, hexdump
from ...present.sections import sections_json
from ...textsafe import safe
from ..model import Model


def bar(frac: float, width: int = 12) -> str:
    """A share as a bar of eighth blocks."""
    eighths = round(max(0.0, min(1.0, frac)) * width * 8)
    full, part = divmod(eighths, 8)
    return ("█" * full + (" ▏▎▍▌▋▊▉"[part] if part else "")).ljust(width)


class HeaderLine(Static):
    """File, perf version, host, duration, counts and indexing progress."""

    DEFAULT_CSS = ("HeaderLine { height: 1; background: $primary 30%; text-wrap: nowrap; "
                   "text-overflow: ellipsis; }")

    def __init__(self, model: Model, **kw: object) -> None:
        super().__init__("", **kw)  # type: ignore[arg-type]
        self.model = model
        self.progress = ""

    def update_line(self) -> None:
        m = self.model
        rec = m.rec
        from ...perfdata import Feature

        t0, t1 = m.span()
        samples = m.samples
        tail = Text()
        ver = rec.feature(Feature.VERSION)
        host = rec.feature(Feature.HOSTNAME)
        if ver:
            tail.append(f" perf {safe(str(ver), 20)}")
        if host:
            tail.append(f"  {safe(str(host), 30)}")
        if t1 > t0:
            tail.append(f"  {(t1 - t0) / 1e9:.2f}s")
        tail.append(f"  {m.n:,} records  {samples:,} samples", style="bold")
        if self.progress:
            tail.append(f"  {self.progress}", style="yellow")
        # the path gives way first (from the left: the file name stays), not the counts
        room = self.size.width - 11 - tail.cell_len
        limit = max(12, min(60, room)) if self.size.width else 60
        path = safe(rec.path)
        if len(path) > limit:
            path = "…" + path[len(path) - limit + 1:]
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(" perftui ", style="bold reverse")
        t.append(" " + path + " ", style="bold")
        t.append_text(tail)
        self.update(t)

    def on_resize(self) -> None:
        self.update_line()


class Detail(ScrollView, can_focus=True):
    """The selected record, field by field, then its raw bytes (a Line-API view: showing
    another record changes no layout, so following the cursor stays cheap)."""

    BINDINGS = [
        Binding("up", "scroll_up", "Up", show=False, id="detail.up"),
        Binding("down", "scroll_down", "Down", show=False, id="detail.down"),
        Binding("pageup", "page_up", "Page up", show=False, id="detail.pageup"),
        Binding("pagedown", "page_down", "Page down", show=False, id="detail.pagedown"),
        Binding("home", "scroll_home", "Top", show=False, id="detail.home"),
        Binding("left", "scroll_left", "Left", show=False, id="detail.left"),
        Binding("right", "scroll_right", "Right", show=False, id="detail.right"),
        Binding("end", "scroll_end", "Bottom", show=False, id="detail.end"),
    ]
    DEFAULT_CSS = """
    Detail { border: round $primary 50%; scrollbar-size-horizontal: 0; }
    Detail:focus { border: round $accent; }
    """

    def __init__(self, model: Model, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.model = model
        self.lines: list[str] = []
        self.border_title = "detail"
        self.shown_row: int | None = None

    def render_line(self, y: int) -> Strip:
        sx, sy = self.scroll_offset
        width = self.size.width
        i = sy + y
        if i >= len(self.lines):
            return Strip.blank(width, self.rich_style)
        segs = [Segment(self.lines[i])]
        return Strip(segs).crop(sx, sx + width).extend_cell_length(width).apply_style(
            self.rich_style)

    def show(self, row: int | None) -> None:
        self.shown_row = row
        if row is None:
            self._set([])
            return
        m = self.model
        f = m.fields(row)
        head = {"offset": f"{m.rec.outer_offset(row):#x}"}
        if int(m.rec.columns["src"][row]) != 0:
            head["stored in"] = m.rec.source_name(row)
        comm = m.comm_of(row)
        if comm:
            head["comm"] = comm
        lines = field_lines({**head, **f}, m.describe_ip)
        try:
            raw = m.rec.record_bytes(row)
        except ValueError:
            raw = b""
        lines.append("")
        lines.append(f"raw bytes ({len(raw)}):")
        lines.extend(hexdump(raw))
        self._set(lines)
        self.border_title = f"detail: {safe(f['type'])}"

    def _set(self, lines: list[str]) -> None:
        self.lines = lines
        width = max((len(x) for x in lines), default=0)
        self.virtual_size = Size(width, len(lines))
        self.scroll_to(0, 0, animate=False)
        self.refresh()


class SectionsPane(DataTable):
    """Modules and their sections: range, size, samples and share of kernel samples."""

    BINDINGS = [Binding("enter", "choose", "Drill in", id="sections.drill")]
    DEFAULT_CSS = """
    SectionsPane { border: round $primary 50%; scrollbar-size-horizontal: 0; }
    SectionsPane:focus { border: round $accent; }
    """

    class Chosen(Message):
        def __init__(self, entry: int) -> None:
            super().__init__()
            self.entry = entry

    def __init__(self, model: Model, **kw: object) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, **kw)  # type: ignore[arg-type]
        self.model = model
        self.border_title = "module sections"
        self.entry_of_row: list[int] = []
        self.summary = ""

    def on_mount(self) -> None:
        self.add_column("section", width=17)
        self.add_column("samples", width=7)
        self.add_column("share", width=11)
        self.add_column("size", width=8)  # the range: the border shows the highlighted one

    def fill(self) -> None:
        m = self.model
        self.clear()
        self.entry_of_row = []
        rep = m.report
        if rep is None:
            self.border_title = "module sections (indexing…)"
            return
        d = sections_json(rep)
        src = d["source"]
        self.border_title = f"module sections · {src}"
        ksamples = max(1, d["kernel_samples"])
        if src == "none":
            # one wide column, so that the message is not cut to the section column's width
            self.clear(columns=True)
            self.add_column("module sections")
            self.border_subtitle = "no KMOD_SEC_MAP and no module MMAP in this recording"
            self.summary = self.border_subtitle
            self.add_row(Text("no module sections in this recording:", style="dim"))
            self.add_row(Text("no KMOD_SEC_MAP record and no module MMAP", style="dim"))
            self.entry_of_row += [-1, -1]
            return
        self.border_subtitle = (f"{d['kernel_samples']:,} kernel · "
                                f"{d['unattributed_kernel_samples']:,} outside modules")
        index = {(e.module, e.section, e.start): k for k, e in enumerate(rep.smap.entries)}
        for mod in d["modules"]:
            self.add_row(Text(safe(f"[{mod['name']}]", 17), style="bold"),
                         Text(f"{mod['samples']:,}", style="bold"),
                         Text(f"{100 * mod['samples'] / ksamples:5.1f}% "
                              f"{bar(mod['samples'] / ksamples, 4)}", style="bold green"),
                         "")
            self.entry_of_row.append(-1)
            for s in mod["sections"]:
                name = s["name"] or "(whole module)"
                k = index[(mod["name"], s["name"], s["start"])]
                share = s["samples"] / ksamples
                self.add_row(Text(" " + safe(name, 16)),
                             Text(f"{s['samples']:,}"),
                             Text(f"{100 * share:5.1f}% {bar(share, 4)}", style="green"),
                             Text(f"{s['end'] - s['start']:,}", style="dim"))
                self.entry_of_row.append(k)
        self.summary = self.border_subtitle
        if self.has_focus:
            self._show_range()

    def _entry_at(self, r: int) -> int:
        """The entry of row ``r``; for a module row, its first (busiest) section."""
        if not 0 <= r < len(self.entry_of_row):
            return -1
        if self.entry_of_row[r] >= 0:
            return self.entry_of_row[r]
        nxt = self.entry_of_row[r + 1] if r + 1 < len(self.entry_of_row) else -1
        return nxt

    def action_choose(self) -> None:
        k = self._entry_at(self.cursor_row)
        if k >= 0:
            self.post_message(self.Chosen(k))

    def _show_range(self) -> None:
        """The highlighted section's whole range goes in the border (no column fits it)."""
        rep = self.model.report
        k = self._entry_at(self.cursor_row)
        if rep is None or k < 0 or k >= len(rep.smap.entries):
            self.border_subtitle = getattr(self, "summary", "")
            return
        e = rep.smap.entries[k]
        self.border_subtitle = f"{e.start:#x}-{e.end:#x} · {e.source}"

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if self.has_focus:
            self._show_range()

    def on_focus(self) -> None:
        self._show_range()

    def on_blur(self) -> None:
        self.border_subtitle = getattr(self, "summary", "")

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_choose()
