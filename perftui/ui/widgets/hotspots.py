"""The hotspot table: perf report's rows (Children/Self or Overhead, Samples, then the sort
keys as perf prints them), drawn line by line: only the visible rows are ever made."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widget import Widget

from ...analysis.profile import Profile
from ...analysis.samplegroups import GroupProfile
from ...analysis.sortkeys import BROWSER_KEYS, DEFAULT_SORT, SORT_KEYS
from ...present.report import HEADERS, Names, key_text, time_text
from ...textsafe import safe
from ..messages import AnnotateWanted
from .frames import pct_text
from .linelist import LineList
from .transformkeys import UNDO, SandwichWanted, TransformWanted, transform_bindings

#: widest a key column gets (the last one takes what is left)
WIDTH_CAP = {k.name: k.browser_width for k in SORT_KEYS.values()}
NATURAL_CAP = 96  # widest a column is measured (a wide terminal shows up to its share)
WIDTH_SCAN = 4096  # distinct values measured per column at most
LAST_WANTS = 26  # what the last key column (the symbol) keeps on a narrow terminal
MIN_WIDTH = 10  # narrowest a key column before the last is squeezed to
SQUEEZED_WIDTH = 4  # ... and then, for the last one's room, on a very narrow terminal
TIME_WIDTH = 9  # the Time column of a timed event (offcpu-time): ``1.502 s``
#: rows looked through for a row's printed keys when its table's store changed (codes and
#: location ids are a store's own: a DWARF live pipe names the whole stream again at each
#: update, in a new location table)
TEXT_SCAN = 4096


@dataclass(frozen=True)
class RowKey:
    """A table row's keys: their codes in ``store`` (``keys`` of it), and the texts they
    print, by which a row is found in another store's table."""

    keys: tuple[str, ...]
    codes: tuple[int, ...]
    texts: tuple[str, ...]
    store: object


@dataclass
class TableView:
    """A table ready to draw: ``rows`` are the rows of ``gp`` shown (after the name
    filter and a section's scope), in perf's order."""

    gp: GroupProfile
    shell: Profile
    rows: np.ndarray
    names: Names
    widths: list[int]
    count_width: int
    #: the periods are nanoseconds (offcpu-time): a Time column, the children's with
    #: Children (as ``perftui report`` prints it)
    timed: bool = False

    @classmethod
    def make(cls, gp: GroupProfile, rows: np.ndarray, names: Names, timed: bool = False
             ) -> TableView:
        """Column widths from the values the rows print (slow part: call from a worker)."""
        shell = gp.shell
        widths = []
        for i, k in enumerate(gp.keys):
            w = len(HEADERS[k])
            if len(rows) and i < len(gp.keys) - 1:
                _codes, first = np.unique(gp.key[rows, i], return_index=True)
                for r in rows[np.sort(first)[:WIDTH_SCAN]].tolist():
                    w = max(w, len(key_text(shell, names, gp.row(int(r)), i)))
            widths.append(min(w, NATURAL_CAP))
        most = int(gp.samples[rows].max(initial=0)) if len(rows) else 0
        return cls(gp, shell, rows, names, widths, max(7, len(f"{most:,}")), timed)

    def key_of(self, r: int) -> RowKey:
        """Row ``r`` of the profile's keys (see :class:`RowKey`)."""
        gp = self.gp
        row = gp.row(r)
        return RowKey(gp.keys, tuple(int(x) for x in gp.key[r]),
                      tuple(key_text(self.shell, self.names, row, i)
                            for i in range(len(gp.keys))),
                      gp.selection.store)

    def find(self, key: RowKey, rows: np.ndarray | None = None) -> int | None:
        """The profile's row with ``key``'s keys, among ``rows`` (None: the rows shown),
        the first in their order: by its codes in the same store, else by the texts its
        keys print among the first :data:`TEXT_SCAN` (None: none)."""
        gp = self.gp
        rows = self.rows if rows is None else rows
        if key.keys != gp.keys or not len(rows):
            return None
        if key.store is gp.selection.store:
            hit = np.flatnonzero((gp.key[rows] == np.asarray(key.codes)).all(axis=1))
            return int(rows[hit[0]]) if len(hit) else None
        for r in rows[:TEXT_SCAN].tolist():
            row = gp.row(int(r))
            if all(key_text(self.shell, self.names, row, i) == t
                   for i, t in enumerate(key.texts)):
                return int(r)
        return None

    @property
    def numbers_width(self) -> int:
        """Cells before the key columns: the shares, the time, the samples."""
        return (18 if self.gp.children else 9) + (1 + TIME_WIDTH if self.timed else 0) \
            + 1 + self.count_width

    def fit(self, width: int) -> list[int]:
        """The key columns' widths on a table ``width`` cells wide: each as wide as its
        values, but no wider than its share of the room (at least its WIDTH_CAP): a long
        dso shows in full on a wide terminal; the last column is not cut here."""
        keys = self.gp.keys
        fixed = self.numbers_width + 2 * len(keys)
        share = max(0, width - fixed) // (len(keys) + 1)
        return [w if i == len(keys) - 1 else
                min(w, max(WIDTH_CAP[k], len(HEADERS[k]), share))
                for i, (k, w) in enumerate(zip(keys, self.widths, strict=True))]


def heading(key: str, width: int) -> str:
    """A key column's heading: perf's (``Command``), or in a column too narrow for it the
    key's name as ``s`` takes it (``comm``, ``dso``), not ``Com…``."""
    head = HEADERS[key]
    return head if len(head) <= width or len(key) > width else key


def cell(text: str, width: int, last: bool) -> str:
    """A column's text: cut with an ellipsis and padded (the last one only cut later)."""
    text = safe(text)
    if last:
        return text
    if len(text) > width:
        text = text[:max(0, width - 1)] + "…"
    return text.ljust(width)


class TableAction(Message):
    """A key of the table the pane acts on (``what``: sort, next_sort, children, find,
    trees, samples, focus)."""

    def __init__(self, table: LineList, what: str) -> None:
        super().__init__()
        self.table = table
        self.what = what


class HotspotTable(LineList):
    """The table of a :class:`TableView`, or one line saying why there is none."""

    BINDINGS = [
        Binding("enter", "choose", "Callers/callees", id="hot.focus",
                tooltip="the row's callers and callees, as trees"),
        Binding("s", "sort_keys", "Sort", id="hot.sort",
                tooltip=f"sort keys: {' '.join(BROWSER_KEYS)} (perf's default "
                        f"{','.join(DEFAULT_SORT)})"),
        Binding("S", "next_sort", "Next sort", show=False, id="hot.next_sort",
                tooltip="the next common set of sort keys"),
        Binding("c", "toggle_children", "Children", id="hot.children",
                tooltip="with / without the Children column (callchains)"),
        Binding("slash", "name_filter", "Find", key_display="/", id="hot.find",
                tooltip="only the rows whose symbol contains a text (perf's /)"),
        Binding("t", "trees", "Call trees", id="hot.trees",
                tooltip="the call trees of everything shown: top-down and bottom-up"),
        Binding("v", "samples", "Samples", id="hot.samples",
                tooltip="the samples of the row (through it with Children; Enter on one: "
                        "its record)"),
        Binding("a", "annotate", "Annotate", id="hot.annotate",
                tooltip="annotate: the function of the row (perf's a)"),
        *transform_bindings("hot", subtree=False),
    ]

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)
        self.view: TableView | None = None
        self.placeholder = "no profile yet"

    def show(self, view: TableView | None, placeholder: str = "") -> None:
        """Draw ``view``; the cursor stays on the row with the same keys if there is one."""
        old = self.current_key()
        self.view = view
        self.placeholder = placeholder
        cursor = None
        r = view.find(old) if view is not None and old is not None else None
        if r is not None and view is not None:
            cursor = int(np.flatnonzero(view.rows == r)[0])
        self.reload(cursor)

    def current_row(self) -> int | None:
        """The row of the table's profile under the cursor."""
        v = self.view
        if v is None or not 0 <= self.cursor < len(v.rows):
            return None
        return int(v.rows[self.cursor])

    def _function(self) -> frozenset[int] | None:
        """Every location of the row's symbol (None: a table without a sym key)."""
        v, r = self.view, self.current_row()
        if v is None or "sym" not in v.gp.keys:
            return None
        if r is None:
            return frozenset()
        code = v.gp.key[r, v.gp.keys.index("sym")]
        return frozenset(np.flatnonzero(v.gp.codes.of("sym") == code).tolist())

    def action_transform(self, kind: str) -> None:
        """A transform on the row's function (a table without a sym key has none)."""
        ids = self._function()
        if ids is None and kind != UNDO:
            self.notify("a function's transforms: on a table sorted by sym (s)", timeout=3)
            return
        self.post_message(TransformWanted(kind, (ids,) if ids else ()))

    def action_sandwich(self) -> None:
        ids = self._function()
        if ids is None:
            self.notify("the sandwich: on a table sorted by sym (s)", timeout=3)
        elif ids:
            self.post_message(SandwichWanted(ids, whole=True))

    def current_key(self) -> RowKey | None:
        r = self.current_row()
        if r is None or self.view is None:
            return None
        return self.view.key_of(r)

    # -- drawing --------------------------------------------------------------------------------
    def line_count(self) -> int:
        v = self.view
        if v is None or not len(v.rows):
            return len(self.note_lines(self.placeholder))
        return len(v.rows)

    def header(self) -> Text | None:
        v = self.view
        if v is None or not len(v.rows):
            return None
        gp = v.gp
        heads = ["Children", "    Self"] if gp.children else ["Overhead"]
        out = " ".join(f"{h:>8}" for h in heads)
        if v.timed:
            out += f" {'Time':>{TIME_WIDTH}}"
        out += f" {'Samples':>{v.count_width}}"
        last = len(gp.keys) - 1
        widths = self.fitted(v)
        for i, k in enumerate(gp.keys):
            head = HEADERS[k] if i == last else heading(k, widths[i])  # (the last: not cut)
            out += "  " + cell(head, widths[i], i == last)
        return Text(out)

    def fitted(self, v: TableView) -> list[int]:
        """The key columns' widths on this terminal: the columns before the last give up
        characters (the widest first, down to :data:`MIN_WIDTH`, then on a narrower
        terminal down to :data:`SQUEEZED_WIDTH`) until the last one — the symbol, usually
        — has :data:`LAST_WANTS` columns: the symbol gets the room first."""
        widths = v.fit(self.size.width)
        if len(widths) < 2:
            return widths
        numbers = v.numbers_width
        used = numbers + sum(2 + w for w in widths[:-1]) + 2
        excess = used + LAST_WANTS - max(1, self.size.width - 1)
        for floor in (MIN_WIDTH, SQUEEZED_WIDTH):
            while excess > 0:
                k = max(range(len(widths) - 1), key=lambda j: widths[j])
                if widths[k] <= floor:
                    break
                widths[k] -= 1
                excess -= 1
        return widths

    def line(self, i: int) -> Text:
        v = self.view
        if v is None or not len(v.rows):
            return Text(self.note_lines(self.placeholder)[i], style="dim")
        gp = v.gp
        r = int(v.rows[i])
        total = gp.share_total
        out = Text(" ")
        if gp.children:
            out.append_text(pct_text(int(gp.children_period[r]), total))
            out.append("  ")
        out.append_text(pct_text(int(gp.self_period[r]), total))
        if v.timed:
            ns = int(gp.children_period[r] if gp.children else gp.self_period[r])
            out.append(f" {time_text(ns):>{TIME_WIDTH}}")
        out.append(f" {int(gp.samples[r]):>{v.count_width},}")
        row = gp.row(r)
        last = len(gp.keys) - 1
        widths = self.fitted(v)
        for k in range(len(gp.keys)):
            out.append("  ")
            out.append(cell(key_text(v.shell, v.names, row, k), widths[k], k == last))
        return out

    # -- keys (the pane does the work) ------------------------------------------------------
    def action_sort_keys(self) -> None:
        self.post_message(TableAction(self, "sort"))

    def action_next_sort(self) -> None:
        self.post_message(TableAction(self, "next_sort"))

    def action_toggle_children(self) -> None:
        self.post_message(TableAction(self, "children"))

    def action_name_filter(self) -> None:
        self.post_message(TableAction(self, "find"))

    def action_trees(self) -> None:
        self.post_message(TableAction(self, "trees"))

    def action_samples(self) -> None:
        if self.current_row() is not None:
            self.post_message(TableAction(self, "samples"))

    def action_choose(self) -> None:
        if self.current_row() is not None:
            self.post_message(TableAction(self, "focus"))

    def action_annotate(self) -> None:
        r = self.current_row()
        v = self.view
        if r is None or v is None:
            return
        if "sym" not in v.gp.keys:
            self.notify("a annotates a function: sort by sym (s) first", timeout=3)
            return
        annotate_location(self, int(v.gp.loc[r]))


def annotate_location(widget: Widget, loc: int) -> None:
    """Open the annotate screen on a location of the model's names (a symbol)."""
    widget.post_message(AnnotateWanted(loc))  # (the app says when no symbol is there)
