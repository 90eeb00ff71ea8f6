"""Screens: section drill-down (symbols, samples), header information, help, prompts."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Input, Label, Static

from ..analysis.sections import split_by
from ..symbols.options import ASSUMED_TEXT
from ..textsafe import safe
from .messages import AnnotateWanted, RecordWanted, ReturnPath
from .model import Model
from .widgets.footer import Footer
from .widgets.panes import bar

if TYPE_CHECKING:
    from ..analysis.rowsymbols import RowSymbols
    from .keys import Place
    from .profiledata import ProfileData

SAMPLE_LIMIT = 5000
#: the help line of every ``a`` key
ANNOTATE_TIP = ("annotate: the function of the symbol or sample under the cursor, "
                "disassembled, with its samples per instruction")


class NavTable(DataTable):
    """A drill-down table: Home/End go to the first/last row, as in the record list."""

    BINDINGS = [
        Binding("home", "first_row", "First", show=False, id="table.home",
                tooltip="first / last row"),
        Binding("end", "last_row", "Last", show=False, id="table.end",
                tooltip="first / last row"),
    ]

    def action_first_row(self) -> None:
        if self.row_count:
            self.move_cursor(row=0)

    def action_last_row(self) -> None:
        if self.row_count:
            self.move_cursor(row=self.row_count - 1)


class SymbolList(NavTable):
    """The symbols of a section; Enter (named in the footer) lists a symbol's samples."""

    BINDINGS = [Binding("enter", "select_cursor", "Samples", id="symbols.samples",
                        tooltip="on a symbol: its samples; on a sample: jump to its record "
                                "(Esc there comes back)"),
                Binding("a", "screen.annotate", "Annotate", id="symbols.annotate",
                        tooltip=ANNOTATE_TIP)]


class SampleTable(NavTable):
    """The samples of a symbol; Enter (named in the footer) jumps to the record."""

    BINDINGS = [Binding("enter", "select_cursor", "Jump to record", id="samples.jump",
                        tooltip="on a symbol: its samples; on a sample: jump to its record "
                                "(Esc there comes back)"),
                Binding("a", "screen.annotate", "Annotate", id="samples.annotate",
                        tooltip=ANNOTATE_TIP)]


class BackScreen(Screen):
    """A screen that Esc and q close."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="screen.back",
                tooltip="back one level"),
        Binding("q", "app.pop_screen", "Back", show=False, id="screen.back_q",
                tooltip="back one level"),
    ]


SPLITS_MIN = 24  # the section drill-down's CPU and process splits keep this many columns


class SectionScreen(BackScreen):
    """One section: its symbols by samples, and the split of its samples by CPU and process."""


    DEFAULT_CSS = """
    SectionScreen #title { height: 1; width: 100%; background: $primary 30%;
                      text-wrap: nowrap; text-overflow: ellipsis; }
    SectionScreen #symbols { width: 60%; height: 1fr; border: round $accent; }
    SectionScreen #splits { width: 1fr; }
    SectionScreen #note { height: auto; max-height: 8; width: 100%; color: $warning; }
    SectionScreen #empty { height: 1fr; width: 100%; content-align: center middle;
                           border: round $accent; }
    SectionScreen .split { height: 1fr; border: round $primary 50%; }
    SectionScreen .split:focus { border: round $accent; }
    SectionScreen DataTable { scrollbar-size-horizontal: 0; }
    """

    def __init__(self, data: ProfileData, entry: int, cursor: int = 0) -> None:
        super().__init__()
        self.data = data
        self.model = data.model
        self.entry = entry
        self.cursor = cursor
        self.symbol_names: list[str] = []
        self.symbols: RowSymbols | None = None
        #: a key that wants a symbol typed before the names: done once they are
        self.pending: str | None = None

    def compose(self) -> ComposeResult:
        rep = self.model.report
        assert rep is not None
        e = rep.smap.entries[self.entry]
        rows = rep.counts.rows_of(self.entry)
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(f" {safe(e.label, 60)} ", style="bold reverse")
        t.append(f"  {len(rows):,} samples", style="bold")
        scope = self.model.scope_text()
        if scope:
            t.append(f"  {safe(scope, 80)}", style="bold yellow")
        t.append(f"  {e.start:#x}-{e.end:#x}  {e.size:,} bytes  source {e.source}  "
                 f"{safe(e.path, 80)}")
        yield Label(t, id="title")
        note = rep.files.notes.get(e.module)
        if note:  # where perftui looked: wrapped, a path longer than a line folded (not markup)
            yield Static(Text(f"{safe(e.module, 60)}: {safe(note, 2000)}", overflow="fold"),
                         id="note")
        if not len(rows):
            where = " under this filter and range" if scope else ""
            yield Static(Text(f"no samples in {safe(e.label, 60)}{where}", style="dim"),
                         id="empty")
            yield Footer()
            return
        with Horizontal(id="panes"):
            table = SymbolList(id="symbols", cursor_type="row")
            table.border_title = "symbols"
            if rep.assumed_text(self.entry):  # the MMAP fallback: perf's rule, said so
                table.border_subtitle = ASSUMED_TEXT
            yield table
            with Vertical(id="splits"):
                cpu: DataTable = NavTable(id="by-cpu", classes="split", cursor_type="row")
                cpu.border_title = "by CPU · % of section"
                yield cpu
                proc: DataTable = NavTable(id="by-proc", classes="split", cursor_type="row")
                proc.border_title = "by process · % of section"
                yield proc
        yield Footer()

    def on_mount(self) -> None:
        rep = self.model.report
        assert rep is not None
        rows = rep.counts.rows_of(self.entry)
        if not len(rows):
            return
        total = max(1, len(rows))
        self.fill_symbols()
        cpu = self.query_one("#by-cpu", DataTable)
        cpu.add_columns("cpu", "samples", "share")
        for v, n in split_by(self.model.rec, rows, "cpu"):
            cpu.add_row(str(v), f"{n:,}", Text(f"{100 * n / total:3.0f}% {bar(n / total, 6)}",
                                               style="green"))
        proc = self.query_one("#by-proc", DataTable)
        proc.add_columns("pid", "process", "samples", "share")
        c = self.model.rec.columns
        for v, n in split_by(self.model.rec, rows, "pid"):
            sel = rows[c["pid"][rows] == v]
            # the process's name: its main thread's at its first sample here, from the names
            # pass (the same on a first open and on a reopen from the cache); when only other
            # threads sampled here, the main thread's at the first of them
            main = sel[c["tid"][sel] == v]
            comm = (self.model.comm_of(int(main[0])) if len(main)
                    else self.model.process_name(v, int(c["time"][sel[0]])) if len(sel) else "")
            proc.add_row(str(v), Text(safe(comm, 16)), f"{n:,}",
                         Text(f"{100 * n / total:3.0f}% {bar(n / total, 4)}", style="green"))
        self.query_one("#symbols", DataTable).focus()

    def fill_symbols(self) -> None:
        """The symbols pane: the section's samples by symbol, from the names pass (the
        profile's names and counting); until the names are built, it says so (the app
        calls this again when they are)."""
        rep = self.model.report
        if rep is None or not self.query("#symbols"):
            return
        table = self.query_one("#symbols", DataTable)
        table.clear(columns=True)
        # the numbers first, the name last (as perf report): a long name is what gets cut
        table.add_columns("samples", "% of section", "symbol")
        syms = self.symbols = self.data.section_symbols(rep, self.entry)
        if syms is None:
            table.add_row("", "", Text("naming the samples…", style="dim"))
            return
        self.symbol_names = syms.labels
        total = max(1, syms.table.total_samples)
        widths = [len("samples"), len("% of section"), len("symbol")]
        for i, name in enumerate(syms.labels):
            n = syms.counts[i]
            shown = safe(name, 60)
            table.add_row(Text(f"{n:,}", justify="right"),
                          Text(f"{100 * n / total:5.1f}% {bar(n / total, 6)}", style="green"),
                          Text(shown))
            widths = [max(widths[0], len(f"{n:,}")), widths[1], max(widths[2], len(shown))]
        self._fit_symbols(table, widths)
        if self.cursor:
            table.move_cursor(row=min(self.cursor, max(0, table.row_count - 1)))
        pending, self.pending = self.pending, None
        if pending == "annotate":
            self.action_annotate()
        elif pending == "samples" and syms.labels:
            self.app.push_screen(SamplesScreen(self.data, self.entry,
                                               syms.labels[table.cursor_row]))

    def _fit_symbols(self, table: DataTable, widths: list[int]) -> None:
        """The symbols pane as wide as its names need (borders, cell padding and a
        scrollbar), at least 60% of the screen, leaving the splits :data:`SPLITS_MIN`; on
        a screen too narrow for both, the whole width, the splits side by side below."""
        need = 2 + sum(w + 2 * table.cell_padding for w in widths) + 2
        screen = self.app.size.width
        narrow = need + SPLITS_MIN > screen and need > screen * 3 // 5
        self.query_one("#panes").styles.layout = "vertical" if narrow else "horizontal"
        splits = self.query_one("#splits")
        splits.styles.layout = "horizontal" if narrow else "vertical"
        splits.styles.width = "100%" if narrow else "1fr"
        splits.styles.height = "40%" if narrow else "100%"
        table.styles.width = "100%" if narrow else \
            max(min(need, screen - SPLITS_MIN), screen * 3 // 5)

    def on_resize(self) -> None:
        table = self.query("#symbols")
        if table and self.symbol_names:
            widths = [max(len(str(c.label)), c.content_width)
                      for c in table.first(DataTable).columns.values()]
            self._fit_symbols(table.first(DataTable), widths)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id != "symbols":
            return
        event.stop()
        r = event.cursor_row
        self.cursor = r
        if self.symbols is None:  # before the names: once they are (no key lost)
            self.pending = "samples"
        elif 0 <= r < len(self.symbol_names):
            self.app.push_screen(SamplesScreen(self.data, self.entry, self.symbol_names[r]))

    def action_annotate(self) -> None:
        """``a``: annotate the symbol under the cursor (in this section's module)."""
        rep = self.model.report
        table = self.query_one("#symbols", DataTable)
        r = table.cursor_row
        if self.symbols is None:  # before the names: once they are (no key lost)
            self.pending = "annotate"
            return
        if rep is None or not 0 <= r < len(self.symbol_names):
            return
        name = self.symbol_names[r]
        if self.symbols is not None and not self.symbols.named[r]:
            self.notify("no symbol covers these addresses: nothing to annotate", timeout=3)
            return
        module = rep.smap.entries[self.entry].module
        self.post_message(AnnotateWanted((f"[{module}]", name)))


class SamplesScreen(BackScreen):
    """The samples of one symbol: time, CPU, pid/tid, comm, symbol+offset, ip; Enter jumps
    there."""


    DEFAULT_CSS = """
    SamplesScreen #title { height: 1; width: 100%; background: $primary 30%;
                      text-wrap: nowrap; text-overflow: ellipsis; }
    SamplesScreen DataTable { border: round $accent; height: 1fr;
                              scrollbar-size-horizontal: 0; }
    """

    def __init__(self, data: ProfileData, entry: int, symbol: str, cursor: int = 0) -> None:
        super().__init__()
        self.data = data
        self.model = data.model
        self.entry = entry
        self.symbol = symbol
        self.cursor = cursor
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
        syms = self.data.section_symbols(rep, self.entry)
        rows = syms.rows_named(self.symbol) if syms is not None else np.empty(0, np.int64)
        total = len(rows)
        self.rows = rows[:SAMPLE_LIMIT]
        ips = m.rec.sample_values(self.rows, "ip")
        names = rep.symbol_of(self.entry, ips)
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append(f" {safe(self.symbol, 60)} ", style="bold reverse")
        title.append(f"  in {safe(e.label, 60)}  {total:,} samples")
        if total > SAMPLE_LIMIT:
            title.append(f" (first {SAMPLE_LIMIT:,} shown)", style="yellow")
        scope = m.scope_text()
        if scope:
            title.append(f"  {safe(scope, 80)}", style="bold yellow")
        self.query_one("#title", Label).update(title)
        table = self.query_one(DataTable)
        # the name before the address: on a narrow terminal the address is what gets cut
        table.add_columns(f"time {m.time_unit}", "cpu", "pid/tid", "comm", "where", "ip")
        c = m.rec.columns
        for k, row in enumerate(self.rows.tolist()):
            table.add_row(m.fmt_time(int(c["time"][row])), str(int(c["cpu"][row])),
                          f"{int(c['pid'][row])}/{int(c['tid'][row])}",
                          Text(safe(m.comm_of(row), 16)), Text(safe(names[k], 60)),
                          f"{int(ips[k]):#x}")
        if not len(self.rows):
            table.add_row("", "", "", "", "", Text("no samples", style="dim"))
        if self.cursor:
            table.move_cursor(row=min(self.cursor, max(0, table.row_count - 1)))
        table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        r = event.cursor_row
        if 0 <= r < len(self.rows):
            below = self.app.screen_stack[-2] if len(self.app.screen_stack) > 1 else None
            sym_row = below.cursor if isinstance(below, SectionScreen) else 0
            back = ReturnPath(self.entry, sym_row, self.symbol, r)
            self.post_message(RecordWanted(int(self.rows[r]), back))

    def action_annotate(self) -> None:
        """``a``: annotate the function of the sample under the cursor."""
        from .annotate import SampleTarget

        r = self.query_one(DataTable).cursor_row
        if 0 <= r < len(self.rows):
            self.post_message(AnnotateWanted(SampleTarget(int(self.rows[r]))))


class InfoScreen(BackScreen):
    """Header and feature information (``perf report --header-only`` and ``--stats``), and
    what naming the samples had to say (files not found, stacks not unwound)."""

    DEFAULT_CSS = """
    InfoScreen VerticalScroll { border: round $accent; overflow-x: auto; }
    InfoScreen Static { width: auto; text-wrap: nowrap; }
    """

    def __init__(self, model: Model, more_notes: list[str] | None = None) -> None:
        super().__init__()
        self.model = model
        #: notes of the views beside the names' (what the off-CPU time could not charge)
        self.more_notes = more_notes or []

    def compose(self) -> ComposeResult:
        import io

        from ..present.info import print_info, print_name_notes

        buf = io.StringIO()
        m = self.model
        print_info(m.info(), m.rec, buf, fmt_time=lambda t: f"{m.fmt_time(t)} {m.time_unit}",
                   errors=True)
        names = m.names
        more = self.more_notes
        print_name_notes(names.notes + m.source.notes + more if names is not None else None, buf,
                         self.app.size.width - 4,
                         quiet=names.quiet_notes if names is not None else ())
        scroll = VerticalScroll()
        scroll.border_title = "recording information"
        with scroll:
            yield Static(Text(buf.getvalue(), no_wrap=True))
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).focus()


class KeysScreen(Screen):
    """Every key of a browser (:meth:`places`), by where it applies, built from the
    bindings: those of the place ``here`` (where the focus was) first, then everywhere's."""

    def __init__(self, here: str | None) -> None:
        super().__init__()
        self.here = here

    def places(self) -> list[Place]:
        """The browser's places (``keys.places``)."""
        from .keys import places

        return places()

    def compose(self) -> ComposeResult:
        scroll = VerticalScroll()
        scroll.border_title = "keys"
        with scroll:
            yield Static(self._text(), id="help")
        yield Footer()

    def _text(self) -> Text:
        from .keys import help_text, sections_from

        return Text(help_text(self.app.size.width - 4, sections_from(self.here, self.places())),
                    no_wrap=True)

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).focus()

    def on_resize(self) -> None:
        self.query_one("#help", Static).update(self._text())


class HelpScreen(KeysScreen, BackScreen):
    """The browser's keys (``?``); Esc and q close it."""

    DEFAULT_CSS = "HelpScreen VerticalScroll { border: round $accent; }"


class PromptScreen(ModalScreen[str | None]):
    """A one-line prompt (filter, go to)."""

    DEFAULT_CSS = """
    PromptScreen { align: center middle; }
    PromptScreen > Vertical { width: 80%; height: auto; border: round $accent;
                              background: $surface; padding: 0 1; }
    PromptScreen .hint { width: 100%; height: auto; }
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
            yield Input(value=self.value, placeholder=self.hint.split("\n")[0])
            yield Static(Text(self.hint, style="dim"), classes="hint")  # wrapped, in full

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
