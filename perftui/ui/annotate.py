"""The annotate screen: one function disassembled, each instruction with its samples.

Open it with ``app.open_annotate(target)`` (see :data:`Target`).  The function is found,
read and counted in a thread worker (a large function takes 100+ ms to disassemble);
the hottest instruction is highlighted and the cursor starts on it.  ``n``/``N`` go to
the next/previous instruction with samples, ``Enter`` on a jump moves to its target in
the function and on a call opens the callee's annotation (``Esc`` comes back to this
screen, on the same row), ``s`` shows or hides the source lines.  Every string that
comes from a file (symbol, file and source text) is shown as a :class:`~rich.text.Text`
through :func:`~perftui.textsafe.safe`, never as markup.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Label, Static
from textual.worker import get_current_worker

from ..analysis.annotate import Annotation
from ..analysis.annotatefunction import FunctionAnnotation
from ..analysis.annotator import Annotator
from ..symbols.code.codeloc import FunctionRef
from ..symbols.code.srctext import SourceFiles
from ..textsafe import safe
from .messages import AnnotateWanted
from .screens import BackScreen
from .widgets.footer import Footer

__all__ = ["AnnotateScreen", "AnnotateTable", "Callee", "SampleTarget", "Target"]

_OFFSET = re.compile(r"\+0x[0-9a-f]+$")


@dataclass(frozen=True)
class SampleTarget:
    """The function a sample's ip is in (index row of the SAMPLE record)."""

    row: int


@dataclass(frozen=True)
class Callee:
    """A call's target by name: in ``dso`` first, else anywhere."""

    name: str
    dso: str | None = None


#: What ``open_annotate`` takes: a location id of the annotator's resolver, a
#: :class:`FunctionRef`, ``(dso or None, symbol name)``, a :class:`SampleTarget` or a
#: :class:`Callee`.
Target = int | FunctionRef | tuple[str | None, str] | SampleTarget | Callee

#: The sample mask of the browser's filter over the annotator's rows (None: all).
KeepFn = Callable[[np.ndarray], "np.ndarray | None"]


class AnnotateTable(DataTable[Text]):
    """The instructions (and source lines) of the function."""

    BINDINGS = [
        Binding("enter", "select_cursor", "Follow", id="annotate.follow",
                tooltip="on a jump: go to its target in this function; on a call: annotate "
                        "the callee (Esc comes back here)"),
        Binding("home", "screen.first", "First", show=False, id="annotate.home",
                tooltip="first / last instruction"),
        Binding("end", "screen.last", "Last", show=False, id="annotate.end",
                tooltip="first / last instruction"),
    ]


class AnnotateScreen(BackScreen):
    """One function's annotation (see the module docstring)."""

    DEFAULT_CSS = """
    AnnotateScreen #title { height: 1; width: 100%; background: $primary 30%;
                            text-wrap: nowrap; text-overflow: ellipsis; }
    AnnotateScreen #note { height: auto; max-height: 4; width: 100%; color: $warning; }
    AnnotateScreen #annotation { height: 1fr; border: round $accent;
                                 scrollbar-size-horizontal: 1; }
    """
    BINDINGS = [
        Binding("n", "next_hot", "Next hot", id="annotate.next",
                tooltip="next / previous instruction with samples"),
        Binding("N", "prev_hot", "Prev hot", show=False, id="annotate.prev",
                tooltip="next / previous instruction with samples"),
        Binding("h", "hottest", "Hottest", show=False, id="annotate.hottest",
                tooltip="back to the hottest instruction"),
        Binding("s", "toggle_source", "Source", id="annotate.source",
                tooltip="show / hide the source lines (from the file's DWARF line table)"),
    ]

    def __init__(self, annotator: Annotator, target: Target, keep: KeepFn | None = None,
                 scope: str = "", sources: SourceFiles | None = None) -> None:
        super().__init__()
        self.annotator = annotator
        self.target = target
        self.keep = keep
        self.scope = scope
        self.sources = sources or SourceFiles()
        self.result: FunctionAnnotation | None = None
        self.problem: str | None = None
        self.show_source = True
        self.row_of: list[int] = []  # instruction -> table row
        self.insn_at: list[int | None] = []  # table row -> instruction (None: source line)
        self.loaded = False

    def compose(self) -> ComposeResult:
        yield Label(Text(" disassembling… ", style="bold reverse"), id="title")
        note = Static("", id="note")
        note.display = False
        yield note
        table = AnnotateTable(id="annotation", cursor_type="row", zebra_stripes=False)
        table.border_title = "annotate"
        yield table
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(AnnotateTable).focus()
        self.load()

    # -- the work, in a thread ------------------------------------------------------------
    @work(thread=True, exclusive=True, group="annotate")
    def load(self) -> None:
        try:
            fa, others, problem = self._compute()
        except Exception as e:  # a bug must not leave the screen spinning
            fa, others, problem = None, [], f"annotation failed: {safe(str(e), 300)}"
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show, fa, others, problem)

    def _compute(self) -> tuple[FunctionAnnotation | None, list[str], str | None]:
        a = self.annotator
        ref: FunctionRef | None = None
        others: list[str] = []
        t = self.target
        if isinstance(t, FunctionRef):
            ref = t
        elif isinstance(t, int):
            ref = a.of_location(t)
            if ref is None:
                return None, [], "no symbol covers this address: nothing to annotate"
        elif isinstance(t, SampleTarget):
            ref = a.of_sample(t.row)
            if ref is None:
                return None, [], "no symbol covers this sample's address: nothing to annotate"
        else:
            dso, name = (t.dso, t.name) if isinstance(t, Callee) else t
            choice = a.find(name, dso)
            if choice is None and isinstance(t, Callee) and dso is not None:
                choice = a.find(name)
            if choice is None:
                where = f" in {dso}" if dso and not isinstance(t, Callee) else ""
                return None, [], f"no function {name!r}{where} in this recording's symbols"
            ref = choice.ref
            locs = a.resolver.locs
            others = [f"also in {locs.dsos[r.dso].short_name} ({n:,} samples)"
                      for r, n in choice.others[:3]]
        keep = self.keep(a.rows) if self.keep is not None else None
        return a.annotate(ref, keep), others, None

    # -- showing it ---------------------------------------------------------------------------
    def _show(self, fa: FunctionAnnotation | None, others: list[str], problem: str | None
              ) -> None:
        if not self.is_attached:  # closed while the worker ran
            return
        self.result = fa
        self.problem = problem or (fa.problem if fa is not None else None)
        self.loaded = True
        title = Text(no_wrap=True, overflow="ellipsis")
        notes = list(others)
        if fa is None:
            title.append(" annotate ", style="bold reverse")
        else:
            ref = fa.ref
            dso = self.annotator.resolver.locs.dsos[ref.dso]
            title.append(f" {safe(ref.name, 60)} ", style="bold reverse")
            where = dso.short_name + (f" {ref.section}" if ref.section else "")
            title.append(f"  {safe(where, 60)}  {fa.samples:,} samples")
            if fa.annotation is not None:
                title.append(f"  {fa.annotation.disasm.start:#x}"
                             f"  {fa.annotation.disasm.size:,} bytes")
            notes += fa.warnings
        if self.scope:
            title.append(f"  {safe(self.scope, 80)}", style="bold yellow")
        self.query_one("#title", Label).update(title)
        if self.problem:
            notes.insert(0, self.problem)
        ann = fa.annotation if fa is not None else None
        if ann is not None and not ann.disasm.is_code:
            notes.insert(0, ann.disasm.note or "not code")
        note = self.query_one("#note", Static)
        note.update(Text("\n".join(safe(n, 300) for n in notes)))
        note.display = bool(notes)
        self._fill(keep_insn=None)
        if ann is not None and ann.hottest is not None:
            self._go(ann.hottest)

    def _fill(self, keep_insn: int | None) -> None:
        table = self.query_one(AnnotateTable)
        table.clear(columns=True)
        self.row_of, self.insn_at = [], []
        ann = self.result.annotation if self.result is not None else None
        if ann is None or not ann.disasm.instructions:
            # (why is the note above, whole: the row, as long, was cut at 80 columns and
            # scrolled sideways)
            why = self.query_one("#note", Static).display
            table.add_column("")
            table.add_row(Text("no instructions: why is said above" if why
                               else "no instructions", style="dim"))
            self.insn_at.append(None)
            return
        rows: list[tuple[Text, Text, Text, Text]] = []
        hottest = ann.hottest
        prev = None
        lines = ann.source if self.show_source else None
        for k, insn in enumerate(ann.disasm.instructions):
            line = lines[k] if lines is not None else None
            if line is not None and line != prev:
                text = self.sources.line(line.file, line.line)
                shown = f"{line.file.rsplit('/', 1)[-1]}:{line.line}"
                if text is not None:
                    shown += f"  {text.strip()}"
                rows.append((Text(""), Text(""), Text(""),
                             Text(safe(shown, 200), style="italic cyan")))
                self.insn_at.append(None)
            prev = line if line is not None else prev
            hits = int(ann.counts.hits[k])
            pct = float(ann.percent[k])
            style = "bold white on red" if k == hottest else (
                "bold red" if pct >= 5 else "yellow" if hits else "dim")
            self.row_of.append(len(rows))
            self.insn_at.append(k)
            rows.append((Text(f"{pct:6.2f}%", style=style, justify="right"),
                         Text(f"{hits:,}" if hits else "", style=style, justify="right"),
                         Text(f"{insn.addr:x}", style="dim" if not hits else ""),
                         Text(safe(insn.asm, 300), style="bold" if k == hottest else "")))
        # columns as wide as their cells from the start: left to the table, the widths are
        # worked out when it is next idle, and a header drawn before that kept its old
        # widths (seen on a loaded machine)
        for i, label in enumerate(("percent", "samples", "address", "instruction")):
            table.add_column(label, width=max([len(label), *(r[i].cell_len for r in rows)]))
        table.add_rows(rows)
        if keep_insn is not None:
            self._go(keep_insn)

    def _go(self, k: int) -> None:
        """Put the cursor on instruction ``k`` (scrolled into view, near the middle)."""
        if not 0 <= k < len(self.row_of):
            return
        table = self.query_one(AnnotateTable)
        row = self.row_of[k]
        table.move_cursor(row=row, animate=False, scroll=False)
        self._center(row)

    def _center(self, row: int) -> None:
        """Scroll row ``row`` of the table near the middle of the view."""
        table = self.query_one(AnnotateTable)

        def center(tries: int = 20) -> None:
            y = max(0, row - max(1, table.scrollable_content_region.height) // 2)
            table.scroll_to(y=y, animate=False, immediate=True)
            # the table sizes its rows after a refresh: until it has, the scroll is clamped
            # short of the row (seen on a loaded machine); try again after the next refresh
            if table.scroll_y < y and tries:
                self.call_after_refresh(center, tries - 1)

        center()

    def on_resize(self) -> None:
        """A smaller or larger terminal: the cursor's row stays in view (near the middle)."""
        if self.loaded:
            # after the next refresh: the table has its new size then
            self.call_after_refresh(self._center, self.query_one(AnnotateTable).cursor_row)

    def current(self) -> int | None:
        """The instruction under the cursor (the next one when on a source line)."""
        table = self.query_one(AnnotateTable)
        r = table.cursor_row
        for k in self.insn_at[r:] if 0 <= r < len(self.insn_at) else []:
            if k is not None:
                return k
        return None

    # -- keys ---------------------------------------------------------------------------------
    def _annotation(self) -> Annotation | None:
        return self.result.annotation if self.result is not None else None

    def action_next_hot(self) -> None:
        ann = self._annotation()
        k = self.current()
        if ann is None or k is None:
            return
        nxt = ann.next_hot(k)
        if nxt is None:
            self.notify("no instruction has samples", timeout=2)
        else:
            self._go(nxt)

    def action_prev_hot(self) -> None:
        ann = self._annotation()
        k = self.current()
        if ann is None or k is None:
            return
        prv = ann.prev_hot(k)
        if prv is None:
            self.notify("no instruction has samples", timeout=2)
        else:
            self._go(prv)

    def action_first(self) -> None:
        self._go(0)

    def action_last(self) -> None:
        self._go(len(self.row_of) - 1)

    def action_hottest(self) -> None:
        ann = self._annotation()
        if ann is not None and ann.hottest is not None:
            self._go(ann.hottest)

    def action_toggle_source(self) -> None:
        ann = self._annotation()
        if ann is None:
            return
        if ann.source is None:
            self.notify("no source lines: the file has no DWARF line table", timeout=3)
            return
        k = self.current()
        self.show_source = not self.show_source
        self._fill(keep_insn=k)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        r = event.cursor_row
        ann = self._annotation()
        if ann is None or not 0 <= r < len(self.insn_at):
            return
        k = self.insn_at[r]
        if k is None:
            k = self.current()
            if k is None:
                return
        insn = ann.disasm.instructions[k]
        if not (insn.is_jump or insn.is_call):
            self.notify("Enter follows a jump or a call", timeout=2)
            return
        if insn.target is not None and ann.disasm.start <= insn.target < ann.disasm.end:
            j = ann.disasm.index_of(insn.target)
            if j is not None:
                self._go(j)
                return
        name = insn.target_name
        if name is None:
            self.notify(f"no symbol names {insn.target:#x}" if insn.target is not None else
                        "an indirect jump or call: its target is not in the code", timeout=3)
            return
        callee = _OFFSET.sub("", name)
        if _OFFSET.search(name):
            self.notify(f"{safe(name, 80)} is inside {safe(callee, 80)}: annotating it",
                        timeout=3)
        fa = self.result
        dso = None
        if fa is not None:
            dso = self.annotator.resolver.locs.dsos[fa.ref.dso].short_name
        self.post_message(AnnotateWanted(Callee(callee, dso)))
