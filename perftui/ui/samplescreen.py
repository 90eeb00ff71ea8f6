"""The samples behind a profile row, a tree line or a flame-graph frame: one line each
(time, CPU, pid/tid, thread, where), any number of them; Enter jumps to the record."""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Label

from ..textsafe import safe
from .messages import ProfileReturn, RecordWanted
from .model import Model
from .screens import BackScreen
from .widgets.footer import Footer
from .widgets.linelist import LineList


class SampleLines(LineList):
    """Every sample of ``rows`` (SAMPLE index rows), drawn as they come into view."""

    BINDINGS = [Binding("enter", "choose", "Jump to record", id="psamples.jump",
                        tooltip="jump to the sample's record (Esc there comes back)")]

    def __init__(self, model: Model, rows: np.ndarray, **kw: object) -> None:
        super().__init__(**kw)
        self.model = model
        self.rows = rows

    def line_count(self) -> int:
        return max(1, len(self.rows))

    def header(self) -> Text | None:
        m = self.model
        return Text(f"{'time ' + m.time_unit:>14}  cpu  {'pid/tid':>13}  {'comm':<16}  where")

    def line(self, i: int) -> Text:
        if not len(self.rows):
            return Text("no samples", style="dim")
        m = self.model
        row = int(self.rows[i])
        c = m.rec.columns
        t = Text(f"{m.fmt_time(int(c['time'][row])):>14}  {int(c['cpu'][row]):>3}  "
                 f"{str(int(c['pid'][row])) + '/' + str(int(c['tid'][row])):>13}  ")
        t.append(safe(m.comm_of(row), 16).ljust(16), style="bold")
        t.append("  " + safe(m.where(row), 300))
        line = m.source.srcline(row)
        if line is not None:  # (split by source line for a srcline or srcfile table)
            t.append("  " + safe(line, 200), style="cyan")
        return t


class ProfileSamplesScreen(BackScreen):
    """The samples of one profile row, tree line or frame (``body``: the view it came
    from, where Esc after a jump goes back to)."""

    DEFAULT_CSS = """
    ProfileSamplesScreen #title { height: 1; width: 100%; background: $primary 30%;
                                  text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, model: Model, rows: np.ndarray, title: str, body: str,
                 cursor: int = 0) -> None:
        super().__init__()
        self.model = model
        self.rows = rows
        self.title_text = title
        self.body = body
        self.cursor = cursor

    def compose(self) -> ComposeResult:
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(" samples ", style="bold reverse")
        t.append(f"  {len(self.rows):,}  ", style="bold")
        t.append(safe(self.title_text, 200))
        scope = self.model.scope_text()
        if scope:
            t.append(f"  {safe(scope, 80)}", style="bold yellow")
        yield Label(t, id="title")
        yield SampleLines(self.model, self.rows, id="sample-lines")
        yield Footer()

    def on_mount(self) -> None:
        lines = self.query_one(SampleLines)
        lines.reload(self.cursor)
        lines.focus()

    def on_line_list_chosen(self, msg: LineList.Chosen) -> None:
        msg.stop()
        if not len(self.rows):
            return
        back = ProfileReturn(self.rows, self.title_text, self.body, msg.index)
        self.post_message(RecordWanted(int(self.rows[msg.index]), back))
