"""Screens: section drill-down (symbols, samples), header information, help, prompts."""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Input, Label, Static

from ..analysis.sections import split_by
from ..symbols.symtable import NO_SYMBOL
from ..textsafe import safe
from .model import Model
from .widgets.panes import bar

SAMPLE_LIMIT = 5000


class SymbolList(DataTable):
    """The symbols of a section; Enter (named in the footer) lists a symbol's samples."""

    BINDINGS = [Binding("enter", "select_cursor", "Samples", id="symbols.samples")]


class SampleTable(DataTable):
    """The samples of a symbol; Enter (named in the footer) jumps to the record."""

    BINDINGS = [Binding("enter", "select_cursor", "Jump to record", id="samples.jump")]


class BackScreen(Screen):
    """A screen that Esc and q close."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="screen.back"),
        Binding("q", "app.pop_screen", "Back", show=False, id="screen.back_q"),
    ]


class SectionScreen(BackScreen):
    """One section: its symbols by samples, and the split of its samples by CPU and process."""


    DEFAULT_CSS = """
    SectionScreen #title { height: 1; width: 100%; background: $primary 30%;
                      text-wrap: nowrap; text-overflow: ellipsis; }
    SectionScreen #symbols { width: 60%; height: 1fr; border: round $accent; }
    SectionScreen #splits { width: 40%; }
    SectionScreen .split { height: 1fr; border: round $primary 50%; }
    SectionScreen .split:focus { border: round $accent; }
    SectionScreen DataTable { scrollbar-size-horizontal: 0; }
    """

    def __init__(self, model: Model, entry: int) -> None:
        super().__init__()
        self.model = model
        self.entry = entry
        self.symbol_names: list[str] = []

    def compose(self) -> ComposeResult:
        rep = self.model.report
        assert rep is not None
        e = rep.smap.entries[self.entry]
        rows = rep.counts.rows_of(self.entry)
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(f" {safe(e.label, 60)} ", style="bold reverse")
        t.append(f"  {e.start:#x}-{e.end:#x}  {e.size:,} bytes  {len(rows):,} samples  "
                 f"source {e.source}  {safe(e.path, 80)}")
        yield Label(t, id="title")
        note = rep.files.notes.get(e.module)
        with Horizontal():
            table = SymbolList(id="symbols", cursor_type="row")
            table.border_title = "symbols"
            if note:
                table.border_subtitle = Text(safe(note, 120))  # a path: not markup
            yield table
            with Vertical(id="splits"):
                cpu: DataTable = DataTable(id="by-cpu", classes="split", show_cursor=False)
                cpu.border_title = "by CPU"
                yield cpu
                proc: DataTable = DataTable(id="by-proc", classes="split", show_cursor=False)
                proc.border_title = "by process"
                yield proc
        yield Footer()

    def on_mount(self) -> None:
        rep = self.model.report
        assert rep is not None
        rows = rep.counts.rows_of(self.entry)
        total = max(1, len(rows))
        table = self.query_one("#symbols", DataTable)
        table.add_columns("symbol", "samples", "share")
        for name, n in rep.symbol_counts(self.entry):
            table.add_row(Text(safe(name, 60)), Text(f"{n:,}"),
                          Text(f"{100 * n / total:5.1f}% {bar(n / total, 10)}", style="green"))
            self.symbol_names.append(name)
        cpu = self.query_one("#by-cpu", DataTable)
        cpu.add_columns("cpu", "samples", "share")
        for v, n in split_by(self.model.rec, rows, "cpu"):
            cpu.add_row(str(v), f"{n:,}", Text(bar(n / total, 10), style="green"))
        proc = self.query_one("#by-proc", DataTable)
        proc.add_columns("pid", "process", "samples", "share")
        c = self.model.rec.columns
        for v, n in split_by(self.model.rec, rows, "pid"):
            sel = rows[c["pid"][rows] == v]
            # the process's name: its main thread's comm at its first sample here
            comm = self.model.comms.comm(v, int(c["time"][sel[0]])) if len(sel) else ""
            proc.add_row(str(v), Text(safe(comm, 16)), f"{n:,}",
                         Text(bar(n / total, 8), style="green"))
        table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id != "symbols":
            return
        event.stop()
        r = event.cursor_row
        if 0 <= r < len(self.symbol_names):
            self.app.push_screen(SamplesScreen(self.model, self.entry, self.symbol_names[r]))


class SamplesScreen(BackScreen):
    """The samples of one symbol: time, CPU, pid/tid, comm, ip+offset; Enter jumps there."""


    DEFAULT_CSS = """
    SamplesScreen #title { height: 1; width: 100%; background: $primary 30%;
                      text-wrap: nowrap; text-overflow: ellipsis; }
    SamplesScreen DataTable { border: round $accent; height: 1fr;
                              scrollbar-size-horizontal: 0; }
    """

    def __init__(self, model: Model, entry: int, symbol: str) -> None:
        super().__init__()
        self.model = model
        self.entry = entry
        self.symbol = symbol
        self.rows: np.ndarray = np.empty(0, dtype=np.int64)

    def compose(self) -> ComposeResult:
        yield Label("", id="title")
        yield SampleTable(id="samples", cursor_type="row")
        yield Footer()

    def on_mount(self) -> None:
        m = self.model
        rep = m.report
        assert rep is not None
        e = rep.smap.entries[self.entry]
        rows = rep.counts.rows_of(self.entry)
        ips = rep.counts.ips_of(self.entry)
        names = rep.symbol_of(self.entry, ips)
        if self.symbol == NO_SYMBOL:
            keep = np.array([n.startswith(e.label) for n in names], dtype=bool)
        else:
            keep = np.array([n.rsplit("+", 1)[0] == self.symbol for n in names], dtype=bool)
        sel = np.nonzero(keep)[0]
        total = len(sel)
        sel = sel[:SAMPLE_LIMIT]
        self.rows = rows[sel]
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append(f" {safe(self.symbol, 60)} ", style="bold reverse")
        title.append(f"  in {safe(e.label, 60)}  {total:,} samples")
        if total > SAMPLE_LIMIT:
            title.append(f" (first {SAMPLE_LIMIT:,} shown)", style="yellow")
        self.query_one("#title", Label).update(title)
        table = self.query_one(DataTable)
        table.add_columns("time", "cpu", "pid/tid", "comm", "ip", "where")
        c = m.rec.columns
        for k, row in zip(sel, self.rows, strict=True):
            row = int(row)
            table.add_row(m.rel_time(int(c["time"][row])), str(int(c["cpu"][row])),
                          f"{int(c['pid'][row])}/{int(c['tid'][row])}",
                          Text(safe(m.comm_of(row), 16)), f"{int(ips[k]):#x}",
                          Text(safe(names[k], 60)))
        table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        r = event.cursor_row
        if 0 <= r < len(self.rows):
            self.app.jump_to_record(int(self.rows[r]))  # type: ignore[attr-defined]


class InfoScreen(BackScreen):
    """Header and feature information (``perf report --header-only`` and ``--stats``)."""

    DEFAULT_CSS = """
    InfoScreen VerticalScroll { border: round $accent; overflow-x: auto; }
    InfoScreen Static { width: auto; text-wrap: nowrap; }
    """

    def __init__(self, model: Model) -> None:
        super().__init__()
        self.model = model

    def compose(self) -> ComposeResult:
        import io

        from ..present.info import print_info

        buf = io.StringIO()
        print_info(self.model.info(), self.model.rec, buf)
        scroll = VerticalScroll()
        scroll.border_title = "recording information"
        with scroll:
            yield Static(Text(buf.getvalue(), no_wrap=True))
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).focus()


class HelpScreen(BackScreen):
    """Every key, by where it applies."""

    DEFAULT_CSS = "HelpScreen VerticalScroll { border: round $accent; }"

    def compose(self) -> ComposeResult:
        scroll = VerticalScroll()
        scroll.border_title = "keys"
        with scroll:
            yield Static(Text(HELP_TEXT, no_wrap=True))
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).focus()


HELP_TEXT = """\
everywhere
  ?          this help                    i          header and feature info
  q          back one level, or quit      ctrl+p     command palette
  tab        next pane                    shift+tab  previous pane
  m          focus the module sections    l          focus the record list
  T          focus the timeline           z          zoom the focused pane
  esc        cancel indexing / un-zoom / back one level

record list
  up/down, pgup/pgdn, home/end  move      t          file order / time order
  left/right scroll sideways (the summary on a narrow terminal)
  /          filter: type=SAMPLE,MMAP2 cpu=0-3 pid=123 tid=456 comm=bash
                     time=1.5,2.0 section=.noinstr.text   (empty clears)
  g          go to an offset (0x1f0, 4096) or a time (2.5s)

timeline
  left/right move the cursor              shift+left/right  select a range
  + / -      zoom in / out at the cursor  r          reset zoom and range
  c          one row per kind / per CPU
  The selected range filters the record list and the section counts.

module sections
  enter      open the section: its symbols, its samples by CPU and process
  enter      on a symbol: its samples;  on a sample: jump to its record
  esc        back one level
"""


class PromptScreen(ModalScreen[str | None]):
    """A one-line prompt (filter, go to)."""

    DEFAULT_CSS = """
    PromptScreen { align: center middle; }
    PromptScreen > Vertical { width: 80%; height: auto; border: round $accent;
                              background: $surface; padding: 0 1; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="prompt.cancel")]

    def __init__(self, title: str, hint: str, value: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.hint = hint
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(self.title_text, style="bold"))
            yield Input(value=self.value, placeholder=self.hint)
            yield Label(Text(self.hint, style="dim"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
