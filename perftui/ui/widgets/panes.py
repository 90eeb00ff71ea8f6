"""The smaller panes: header line, record detail, module sections."""

from __future__ import annotations

from functools import partial

from rich.segment import Segment
from rich.text import Text
from textual import work
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import DataTable, Static

from ...present.records import field_lines, hexdump
from ...present.sections import sections_json
from ...symbols.tables.livekernel import LIVE_KALLSYMS
from ...textsafe import safe
from ..model import Model
from .timeline import RowSource, SamplesSelected, SelectsSamples, Timeline


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
        self._progress = ""
        #: a shorter form of :attr:`progress`, shown when the whole one would be cut
        self.short = ""

    @property
    def progress(self) -> str:
        return self._progress

    @progress.setter
    def progress(self, text: str) -> None:
        self._progress = text
        self.short = ""  # (a short form is given with its progress, after it)

    def update_line(self) -> None:
        """The file name and the counts first; host, perf version and duration only where
        they fit (80 columns over ssh must keep the first ones readable)."""
        m = self.model
        rec = m.rec
        from ...perfdata import Feature

        t0, t1 = m.span()
        counts = Text(f"  {m.n:,} records  {m.samples:,} samples", style="bold")
        width = self.size.width or 120
        path = safe(rec.path)
        name = path.rsplit("/", 1)[-1]
        base = 10 + counts.cell_len  # " perftui ", a space and the counts
        said = self.progress
        if self.short and base + len(name) + 2 + len(said) > width:
            said = self.short  # the whole one would be cut: its short form, whole
        names = m.names
        if not said and names is not None and any(n.startswith(LIVE_KALLSYMS)
                                                   for n in names.notes):
            said = "unfinished: local kallsyms"  # (i: the note says why)
        progress = Text(f"  {said}", style="yellow") if said else Text()
        extras = []
        if t1 > t0:
            extras.append(f"  {(t1 - t0) / 1e9:.2f}s")
        host = rec.feature(Feature.HOSTNAME)
        if host:
            extras.append(f"  {safe(str(host), 30)}")
        ver = rec.feature(Feature.VERSION)
        if ver:
            extras.append(f"  perf {safe(str(ver), 20)}")
        fixed = base + progress.cell_len

        def room() -> int:
            return width - fixed - sum(len(x) for x in extras)

        # the path gives way first (from the left, down to the file name), then the
        # extras from the last one
        while extras and room() < len(name):
            extras.pop()
        limit = max(len(name), min(room(), 60))
        if len(path) > limit:
            path = "…" + path[len(path) - limit + 1:] if limit > len(name) else name
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(" perftui ", style="bold reverse")
        t.append(" " + path, style="bold")
        t.append_text(counts)
        for x in extras:
            if t.cell_len + len(x) + progress.cell_len <= width:
                t.append(x)
        t.append_text(progress)
        self.update(t)

    def on_resize(self) -> None:
        self.update_line()


class Detail(ScrollView, can_focus=True):
    """The selected record, field by field, then its raw bytes (a Line-API view: showing
    another record changes no layout, so following the cursor stays cheap)."""

    BINDINGS = [
        Binding("up", "scroll_up", "Up", show=False, id="detail.up", tooltip="scroll"),
        Binding("down", "scroll_down", "Down", show=False, id="detail.down", tooltip="scroll"),
        Binding("pageup", "page_up", "Page up", show=False, id="detail.pageup",
                tooltip="scroll"),
        Binding("pagedown", "page_down", "Page down", show=False, id="detail.pagedown",
                tooltip="scroll"),
        Binding("left", "scroll_left", "Left", show=False, id="detail.left", tooltip="scroll"),
        Binding("right", "scroll_right", "Right", show=False, id="detail.right",
                tooltip="scroll"),
        Binding("home", "scroll_home", "Top", show=False, id="detail.home",
                tooltip="top / bottom"),
        Binding("end", "scroll_end", "Bottom", show=False, id="detail.end",
                tooltip="top / bottom"),
        Binding("a", "app.annotate_record", "Annotate", show=False, id="detail.annotate",
                tooltip="on a sample: annotate its function (its instructions with their "
                        "samples)"),
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
        self._chains: dict[int, list[str]] = {}  # callchain names by row, as computed

    @work(thread=True, exclusive=True, group="detail-chain")
    def _name_chain(self, row: int, chain: list[int]) -> None:
        """Name a sample's callchain off the UI thread (it may read a symbol table)."""
        names = self.model.chain_names(row, chain)
        if names is not None:
            self.app.call_from_thread(self._chain_named, row, names)

    def _chain_named(self, row: int, names: list[str]) -> None:
        if len(self._chains) > 256:
            self._chains.clear()
        self._chains[row] = names
        if self.shown_row == row:
            self.show(row)

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
        if row is None:  # (no record in view: a filter or range that keeps none)
            self._set([])
            self.border_title = "detail"
            return
        m = self.model
        f = m.fields(row)
        head = {"offset": f"{m.rec.outer_offset(row):#x}"}
        if int(m.rec.columns["src"][row]) != 0:
            head["stored in"] = m.rec.source_name(row)
        comm = m.comm_of(row)
        if comm:
            head["comm"] = comm
        where = m.where(row) if f.get("type") == "SAMPLE" else ""
        if where:
            head["symbol"] = where
        chain = self._chains.get(row)
        lines = field_lines({**head, **f}, m.describe_ip, fmt_time=self._time, chain=chain)
        if chain is None and f.get("callchain") and m.names is not None:
            self._name_chain(row, list(f["callchain"]))
        try:
            raw = m.rec.record_bytes(row)
        except ValueError:
            raw = b""
        lines.append("")
        lines.append(f"raw bytes ({len(raw)}):")
        lines.extend(hexdump(raw))
        self._set(lines)
        self.border_title = f"detail: {safe(f['type'])}"

    def _time(self, t: int) -> str:
        """A ``time`` field: in the panes' time base, then the raw nanoseconds."""
        return f"{self.model.fmt_time(t)} {self.model.time_unit} ({t} ns)" if t else "0"

    def _set(self, lines: list[str]) -> None:
        self.lines = lines
        width = max((len(x) for x in lines), default=0)
        self.virtual_size = Size(width, len(lines))
        self.scroll_to(0, 0, animate=False)
        self.refresh()


class SectionsPane(SelectsSamples, DataTable):
    """Modules and their sections: range, size, samples and share of kernel samples."""

    BINDINGS = [
        Binding("enter", "choose", "Drill in", id="sections.drill",
                tooltip="open the section: its symbols, its samples by CPU and process"),
        Binding("a", "toggle_all", "All sections", id="sections.all",
                tooltip="show / hide the sections without samples"),
        Binding("p", "profile", "Profile", id="sections.profile",
                tooltip="the profile of the section (of the module, on its line), sorted "
                        "module,section,sym"),
    ]
    DEFAULT_CSS = """
    SectionsPane { border: round $primary 50%; scrollbar-size-horizontal: 0; }
    SectionsPane:focus { border: round $accent; }
    """

    class Chosen(Message):
        def __init__(self, entry: int) -> None:
            super().__init__()
            self.entry = entry

    class ProfileWanted(Message):
        """``p``: the profile of module ``section[0]`` (its section ``section[1]``; None:
        the whole module)."""

        def __init__(self, section: tuple[str, str | None]) -> None:
            super().__init__()
            self.section = section

    def __init__(self, model: Model, **kw: object) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, **kw)  # type: ignore[arg-type]
        self.model = model
        self.border_title = "module sections"
        self.entry_of_row: list[int] = []
        self.summary = ""
        self.show_all = False  # sections without samples too (a)
        self.hidden = 0  # sections without samples not shown

    def _columns(self) -> None:
        self.add_column("section", width=17)
        self.add_column("samples", width=7)
        self.add_column("% kernel", width=11)  # of the kernel samples (the border's count)
        self.add_column("size", width=8)  # the range: the border shows the highlighted one

    def on_mount(self) -> None:
        self._columns()

    def pending(self) -> None:
        """The counts are being made again (filter or range changed)."""
        self.border_title = "module sections (counting…)"

    def action_toggle_all(self) -> None:
        self.show_all = not self.show_all
        self.fill()

    def fill(self) -> None:
        m = self.model
        self.clear(columns=True)
        self._columns()
        self.entry_of_row = []
        rep = m.report
        if rep is None:
            self.border_title = "module sections (indexing…)"
            return
        d = sections_json(rep, files=False)  # (no .ko read: the worker reads them)
        src = d["source"]
        self.border_title = f"module sections · {src}"
        ksamples = max(1, d["kernel_samples"])
        if src == "none":
            # one column as wide as the message (short lines: the pane is narrow at 80x24)
            lines = ["no module sections in this", "recording: no KMOD_SEC_MAP record",
                     "and no kernel-module MMAP"]
            self.clear(columns=True)
            self.add_column("module sections", width=max(map(len, lines)))
            self.border_subtitle = "no KMOD_SEC_MAP and no module MMAP in this recording"
            self.summary = self.border_subtitle
            for line in lines:
                self.add_row(Text(line, style="dim"))
            self.entry_of_row += [-1] * len(lines)
            return
        scope = m.scope_text()  # what the counts are under (the record list may be hidden)
        scope = f" · {safe(scope, 120)}" if scope else ""
        self.border_title = f"module sections · {src}{scope}"
        self.border_subtitle = (f"% of {d['kernel_samples']:,} kernel samples · "
                                f"{d['unattributed_kernel_samples']:,} outside modules")
        index = {(e.module, e.section, e.start): k for k, e in enumerate(rep.smap.entries)}
        self.hidden = 0
        for mod in d["modules"]:
            if not mod["samples"] and not self.show_all:
                self.hidden += len(mod["sections"])
                continue
            self.add_row(Text(safe(f"[{mod['name']}]", 17), style="bold"),
                         Text(f"{mod['samples']:,}", style="bold"),
                         Text(f"{100 * mod['samples'] / ksamples:5.1f}% "
                              f"{bar(mod['samples'] / ksamples, 4)}", style="bold green"),
                         "")
            self.entry_of_row.append(-1)
            for s in mod["sections"]:
                if not s["samples"] and not self.show_all:
                    self.hidden += 1
                    continue
                name = s["name"] or "(whole module)"
                k = index[(mod["name"], s["name"], s["start"])]
                share = s["samples"] / ksamples
                self.add_row(Text(" " + safe(name, 16)),
                             Text(f"{s['samples']:,}"),
                             Text(f"{100 * share:5.1f}% {bar(share, 4)}", style="green"),
                             Text(f"{s['end'] - s['start']:,}", style="dim"))
                self.entry_of_row.append(k)
        if self.hidden:
            self.add_row(Text(f"+{self.hidden} empty", style="dim"),
                         Text("a shows", style="dim"), "", "")
            self.entry_of_row.append(-1)
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

    def action_profile(self) -> None:
        rep = self.model.report
        r = self.cursor_row
        k = self._entry_at(r)
        if rep is None or k < 0 or k >= len(rep.smap.entries):
            return
        e = rep.smap.entries[k]
        whole = self.entry_of_row[r] < 0 or not e.section  # a module line, or no sections
        self.post_message(self.ProfileWanted((e.module, None if whole else e.section)))

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
            self.select_later()

    def on_focus(self) -> None:
        self._show_range()
        self.select_later()

    # -- the highlighted line's samples, for the timeline -----------------------------------
    def on_blur(self) -> None:
        self.border_subtitle = getattr(self, "summary", "")
        self.call_after_refresh(self._unselect)

    def _unselect(self) -> None:
        """Away from the pane (but to the timeline, to look at the row): no row."""
        self.select_cancel()
        if not self.has_focus and not isinstance(self.app.focused, Timeline):
            self.post_message(SamplesSelected(None, self))

    def selection_live(self) -> bool:
        return self.has_focus

    def selected_rows(self) -> RowSource | None:
        """The samples of the section under the cursor (of every section of a module, on
        its line)."""
        rep, r = self.model.report, self.cursor_row
        if rep is None or rep.counts.smap is None or not 0 <= r < len(self.entry_of_row):
            return None
        k = self.entry_of_row[r]
        if k >= 0:
            entries = [k]
        else:  # a module line: its sections shown under it
            entries = []
            for e in self.entry_of_row[r + 1:]:
                if e < 0:
                    break
                entries.append(e)
        return partial(rep.counts.row_blocks_in, entries) if entries else None

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_choose()
