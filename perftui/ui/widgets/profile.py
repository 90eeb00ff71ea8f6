"""The profile view (``p``): perf report's hotspot table and, from a row, its callers and
callees; or the call trees of everything shown.  It lives on the main screen under the
timeline and follows the filter, the range, the event and a module section; every table
and tree is made in a thread worker (:class:`~perftui.ui.profiledata.ProfileData`)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

import numpy as np
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label
from textual.worker import get_current_worker

from ...analysis.samplegroups import GroupProfile, SampleGroups
from ...analysis.sortkeys import BROWSER_KEYS, DEFAULT_SORT, SORT_KEYS, SortKeyError, parse_sort
from ...crash import crash_line, write_traceback
from ...present.report import time_text
from ...textsafe import safe
from ..messages import BodyWanted
from ..profiledata import ProfileData, Scope
from .calltrees import CallTreeList, Forest
from .frames import EventChoice, ShareChoice, shares_binding
from .hotspots import HotspotTable, RowKey, TableAction, TableView
from .linelist import LineList
from .profiletrees import forests_of
from .samplerows import show_rows_found
from .timeline import RowSource, SelectsSamples
from .transformkeys import UNDO, SandwichWanted, TransformWanted, append_scope, push_wanted

#: ``S`` goes round these
SORT_PRESETS: tuple[tuple[str, ...], ...] = (
    DEFAULT_SORT, ("dso", "sym"), ("sym",), ("comm",), ("pid",), ("tid",), ("cpu",),
    ("dso",), ("module", "section", "sym"))
SECTION_SORT = ("module", "section", "sym")
LOCATION_KEYS = frozenset(k.name for k in SORT_KEYS.values() if k.per_location)


def event_bindings() -> list[Binding]:
    """``1``..``9``: the n-th event (perf's 0-9 pick an event of a group)."""
    out = []
    for n in range(1, 10):
        out.append(Binding(str(n), f"event({n})", "Event", show=False, id=f"profile.event{n}",
                           tooltip="the n-th event of the recording (1-9), when it has "
                                   "several" if n == 1 else ""))
    return out


class ProfilePane(SelectsSamples, EventChoice, ShareChoice, Vertical):
    """The hotspot table, or call trees, under a title line saying what is counted."""

    BINDINGS = [
        Binding("escape", "back", "Back", id="profile.back",
                tooltip="back one level: trees → table → (name filter) → records"),
        Binding("q", "back", "Back", show=False, id="profile.back_q",
                tooltip="back one level: trees → table → (name filter) → records"),
        Binding("F", "app.filter", "Filter", show=False, id="profile.filter",
                tooltip="filter every pane (the record list's /)"),
        shares_binding("profile"),
        *event_bindings(),
    ]
    DEFAULT_CSS = """
    ProfilePane { height: 1fr; }
    ProfilePane #profile-title { height: 1; width: 100%; background: $primary 30%;
                                 text-wrap: nowrap; text-overflow: ellipsis; }
    ProfilePane CallTreeList { display: none; }
    ProfilePane.-trees CallTreeList { display: block; }
    ProfilePane.-trees HotspotTable { display: none; }
    """

    def __init__(self, data: ProfileData, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.data = data
        self.keys: tuple[str, ...] = DEFAULT_SORT
        self.with_children = True
        self.find = ""
        self.attr: int | None = None  # None: the first event (perf shows each apart)
        self.section: tuple[str, str | None] | None = None
        self.level = "table"  # or "trees"
        self.tree_row: RowKey | None = None  # the focused row's keys (None: whole)
        #: the sandwich's function (its locations; None: no sandwich), and the base
        #: store they are of (a DWARF live pipe's next names number them anew)
        self.sandwich: frozenset[int] | None = None
        self._sandwich_store: SampleGroups | None = None
        #: the profile the trees shown are of (the table's, or a sandwich's by sym)
        self.tree_gp: GroupProfile | None = None
        self.tree_title = ""
        self.fresh_trees = False  # the trees to be made are new ones (not a new scope's)
        self.note = ""  # what the indexing worker is doing (names)
        self.busy = False
        self.view: TableView | None = None

    def compose(self) -> ComposeResult:
        yield Label("", id="profile-title")
        yield HotspotTable(id="hotspots")
        yield CallTreeList(id="calltrees")

    @property
    def table(self) -> HotspotTable:
        return self.query_one(HotspotTable)

    @property
    def trees(self) -> CallTreeList:
        return self.query_one(CallTreeList)

    def focus_view(self) -> None:
        (self.trees if self.level == "trees" else self.table).focus()

    # -- what is counted ---------------------------------------------------------------------
    def scope(self) -> Scope:
        m = self.data.model
        return Scope(m.flt.within(m.time_range), self.chosen_attr(), self.section)

    def open_section(self, section: tuple[str, str | None] | None) -> None:
        """Show the profile of one module (section), sorted module,section,sym (None:
        everything, the keys as they were)."""
        if section != self.section:
            self.section = section
            if section is not None:
                self.keys = SECTION_SORT
        self.level = "table"
        self.set_class(False, "-trees")
        self.refresh_data()

    def set_note(self, note: str) -> None:
        self.note = note
        if self.view is None:
            self.refresh_data()

    # -- the table --------------------------------------------------------------------------
    def refresh_data(self) -> None:
        """Count again (filter, range, names, keys, event or section changed)."""
        placeholder = self._placeholder()
        if placeholder:
            self.view = None
            self.table.show(None, placeholder)
            self.trees.clear_trees(placeholder)
            self._title()
            return
        self.busy = True
        self._title()
        self._count(self.scope(), self.keys, self.with_children, self.find)

    def _placeholder(self) -> str:
        m = self.data.model
        if not m.done and not self.data.ready:  # (a live pipe's are ready while it streams)
            return "indexing… (the profile follows once every record is indexed)"
        if not self.data.ready:
            return self.note or "naming samples… (the profile opens when every sample " \
                                "has its symbol)"
        st = self.data.store
        if st is None or not len(st):
            return "no samples in this recording: nothing to profile"
        return ""

    @work(thread=True, exclusive=True, group="profile-table")
    def _count(self, scope: Scope, keys: tuple[str, ...], children: bool, find: str) -> None:
        data = self.data
        try:
            gp = data.table(scope, keys, children)
            names = data.names(gp.selection.store) if gp is not None else None
            if gp is None or names is None:
                return
            rows = (data.matching_rows(gp, find) if find
                    else np.arange(len(gp), dtype=np.int64))
            if scope.section is not None and LOCATION_KEYS & set(keys):
                st = gp.selection.store
                rows = rows[data.section_locations(st, scope.section)[gp.loc[rows]]]
            view = TableView.make(gp, rows, names, data.timed(scope.attr))
        except Exception as e:  # a bug must not end the browser: said, traceback kept
            self.app.call_from_thread(self._failed, e)
            return
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._counted, view)

    def _failed(self, error: Exception) -> None:
        line = crash_line(error, write_traceback(error))
        self.busy = False
        self.view = None
        self.table.show(None, safe(line, 300))
        self._title()
        self.notify(safe(line, 300), severity="error", markup=False)

    def _counted(self, view: TableView) -> None:
        self.busy = False
        self.view = view
        self.table.show(view, self._empty_text(view))
        self._title()
        if self.level == "trees":
            self._make_trees(fresh=self.fresh_trees)
            self.fresh_trees = False

    def _empty_text(self, view: TableView) -> str:
        gp = view.gp
        if not gp.total_samples:
            where = " in this section" if self.section else ""
            scope = self.data.model.scope_text()
            return (f"no samples{where} under {safe(scope, 80)}" if scope
                    else f"no samples{where}")
        if self.find:
            return f"no row matches /{safe(self.find, 40)} (Esc clears it)"
        return "no rows"

    def _title(self) -> None:
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(" profile ", style="bold reverse")
        scope = self.scope()
        if self.data.ready and len(self.data.attrs()) > 1:
            n = self.data.attrs().index(scope.attr) + 1 if scope.attr is not None else 0
            t.append(f" {safe(self.data.event_title(scope.attr), 40)} ({n}/"
                     f"{len(self.data.attrs())})", style="bold")
        elif self.data.ready:
            t.append(f" {safe(self.data.event_title(scope.attr), 40)}", style="bold")
        v = self.view
        if v is not None:
            t.append(f"  {v.gp.total_samples:,} samples")
            if v.timed:
                t.append(f"  {time_text(v.gp.total_period)}")
            t.append(self.shares_words(), style="bold")
        if self.level == "trees":
            t.append(f"  {safe(self.tree_title, 120)}", style="bold")
        else:
            t.append(f"  sort {','.join(self.keys)}")
            if v is not None and not v.gp.children and self.data.callchains:
                t.append("  self only", style="bold")
            elif v is not None and not self.data.callchains:
                t.append("  no callchains", style="dim")
        if self.section is not None:
            mod, sec = self.section
            t.append(f"  [{safe(mod, 30)}]{safe(sec or '', 30)}", style="bold yellow")
        if self.find and self.level == "table":
            shown = f" ({len(v.rows):,} rows)" if v is not None else ""
            t.append(f"  /{safe(self.find, 30)}{shown}", style="bold yellow")
        append_scope(t, self.data, self.busy)
        self.query_one("#profile-title", Label).update(t)

    # -- keys of the table ---------------------------------------------------------------------
    def on_table_action(self, msg: TableAction) -> None:
        msg.stop()
        what = msg.what
        if what == "sort":
            self._ask_sort()
        elif what == "next_sort":
            i = SORT_PRESETS.index(self.keys) + 1 if self.keys in SORT_PRESETS else 0
            self.keys = SORT_PRESETS[i % len(SORT_PRESETS)]
            self.refresh_data()
        elif what == "children":
            if not self.data.callchains:
                self.notify("no callchains in this recording: Self is all there is",
                            timeout=3)
                return
            self.with_children = not self.with_children
            self.refresh_data()
        elif what == "find":
            self._ask_find()
        elif what == "trees":
            self._open_trees(None)
        elif what == "focus":
            key = self.table.current_key()
            if key is not None:
                self._open_trees(key)
        elif what == "samples":
            self._row_samples()

    def _ask_sort(self) -> None:
        from ..screens import PromptScreen

        hint = (f"sort keys, comma-separated: {' '.join(BROWSER_KEYS)} (perf's default "
                f"{','.join(DEFAULT_SORT)}; module,section,sym: by module section)")
        self.app.push_screen(PromptScreen("sort keys", hint, ",".join(self.keys)),
                             self._apply_sort)

    def _apply_sort(self, text: str | None) -> None:
        if text is None:
            return
        try:
            keys = parse_sort(text) if text.strip() else DEFAULT_SORT
        except SortKeyError as e:
            self.notify(safe(str(e), 200), severity="error", markup=False)
            return
        self.keys = keys
        self.refresh_data()

    def _ask_find(self) -> None:
        from ..screens import PromptScreen

        self.app.push_screen(PromptScreen(
            "find rows by name", "rows whose symbol contains the text (case-insensitive; "
            "without a sym key: any key); empty: every row", self.find), self._apply_find)

    def _apply_find(self, text: str | None) -> None:
        if text is None:
            return
        self.find = text.strip()
        self.refresh_data()

    def action_back(self) -> None:
        if self.level == "trees":
            self.level = "table"
            self.sandwich = None
            self.set_class(False, "-trees")
            self.table.focus()
            self._title()
            return
        if self.find:
            self.find = ""
            self.refresh_data()
            return
        self.post_message(BodyWanted("records"))

    # -- trees --------------------------------------------------------------------------------
    def open_sandwich(self, ids: frozenset[int], attr: int | None = None) -> None:
        """The sandwich of the function whose locations are ``ids``: its callers merged
        above it and its callees below, across every call site and thread (its ``sym``
        row's callers and callees); ``attr``: of that event (the flame graph's or the
        chart's where ``w`` was pressed: the table is counted again first)."""
        if attr is None or attr == self.chosen_attr():
            self._open_trees(None, ids)
            return
        self.attr, self.view = attr, None
        self._open_trees(None, ids)  # (no view: the trees wait for the table)
        self.fresh_trees = True
        self.refresh_data()

    def _open_trees(self, key: RowKey | None,
                    sandwich: frozenset[int] | None = None) -> None:
        self.level = "trees"
        self.tree_row = key
        self.sandwich, self._sandwich_store = sandwich, self.data.store
        self.set_class(True, "-trees")
        self.trees.clear_trees("making the trees…")
        self.trees.forests = []
        self._make_trees(fresh=True)
        self.trees.focus()

    def _make_trees(self, fresh: bool = False) -> None:
        v = self.view
        if v is None:
            return
        row = None
        if self.sandwich is not None:  # (of the base store's locations)
            st, was = self.data.store, self._sandwich_store
            if st is not None and was is not None and st is not was \
                    and st.locs is not was.locs:
                self.sandwich = was.locs.same_in(self.sandwich, st.locs)
                self._sandwich_store = st
            name = self.data.transforms.base_name(min(self.sandwich)) if self.sandwich \
                else "?"
            self.tree_title = f"sandwich of {name}: its callers above, its callees below"
            self._title()
            self._grow(v.gp, None, fresh, v.timed, self.scope(), self.sandwich)
            return
        if self.tree_row is not None:
            found = v.find(self.tree_row, np.arange(len(v.gp), dtype=np.int64))
            if found is None:
                self.tree_title = "the row has no samples under this filter and range"
                self.trees.clear_trees(self.tree_title)
                self._title()
                return
            row = found
            self.tree_title = f"callers and callees of {self._row_text(v, row)}"
        else:
            self.tree_title = "call trees of everything shown"
        self._title()
        self._grow(v.gp, row, fresh, v.timed)

    def _row_text(self, v: TableView, r: int) -> str:
        from ...present.report import key_text

        row = v.gp.row(r)
        return " ".join(key_text(v.shell, v.names, row, i) for i in range(len(v.gp.keys)))

    @work(thread=True, exclusive=True, group="profile-trees")
    def _grow(self, gp: GroupProfile, row: int | None, fresh: bool, timed: bool,
              scope: Scope | None = None, sandwich: frozenset[int] | None = None) -> None:
        try:
            gp, forests = forests_of(self.data, gp, row, fresh, scope, sandwich)
        except Exception as e:  # said, the traceback kept; the browser goes on
            self.app.call_from_thread(self._failed, e)
            return
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._grown, forests, gp, fresh, timed)

    def _grown(self, forests: list[Forest], gp: GroupProfile, fresh: bool,
               timed: bool) -> None:
        res = self.data.model.names
        if res is None or self.level != "trees":
            return
        if not forests:
            self.trees.clear_trees("the function has no samples under this filter and range")
            return
        self.tree_gp = gp
        self.trees.show(forests, gp.share_total, gp.selection.store.locs, res.comm_names,
                        timed)
        if fresh and self.trees.line_count() > 1:
            self.trees.cursor = 1  # the first root: the row's own frame

    # -- transforms and the sandwich ------------------------------------------------------------
    def on_sandwich_wanted(self, msg: SandwichWanted) -> None:
        msg.stop()
        st = self._shown_store()
        if msg.ids and st is not None:
            self.open_sandwich(self.data.transforms.base_ids(msg.ids) if _split(st)
                               else msg.ids)

    def _shown_store(self) -> SampleGroups | None:
        """The store whose locations the table's rows, or the trees' lines, are of."""
        if self.level == "trees" and self.tree_gp is not None:
            return self.tree_gp.selection.store
        v = self.view
        return v.gp.selection.store if v is not None else self.data.store

    def on_transform_wanted(self, msg: TransformWanted) -> None:
        """A transform key of the table or the trees: on every view's stack; counted
        again."""
        msg.stop()
        st = self._shown_store()
        if st is None or (msg.kind != UNDO and self.view is None):
            return
        # a table by srcline or srcfile (and its trees) shows locations split by line:
        # the transform is of their functions, the base's locations
        said = push_wanted(self.data.transforms, st, msg, _split(st))
        if said:
            self.notify(said, timeout=3)
            return
        self.refresh_data()

    # -- the selected row's samples, for the timeline ---------------------------------------
    def on_line_list_moved(self, msg: LineList.Moved) -> None:
        """The cursor moved in the table or the trees: once it rests, the samples of its
        row go to the timeline (a row of their own)."""
        self.select_later()

    def selected_rows(self) -> RowSource | None:
        v = self.view
        if v is None:
            return None
        gp = v.gp
        if self.level == "trees":
            groups = self.trees.current_groups()
            return None if groups is None else partial(gp.selection.row_blocks, groups)
        r = self.table.current_row()  # (its groups too are found in the timeline's thread)
        return None if r is None else partial(_row_blocks, gp, r)

    def on_call_tree_list_samples_wanted(self, msg: CallTreeList.SamplesWanted) -> None:
        msg.stop()
        v = self.view
        if v is not None:
            self._samples(v.gp, msg.groups, msg.title)

    def _row_samples(self) -> None:
        v = self.view
        r = self.table.current_row()
        if v is None or r is None:
            return
        gp = v.gp
        groups = gp.groups_of_row(r, through=gp.children)
        how = "through it" if gp.children else "its own"
        self._samples(gp, groups, f"{self._row_text(v, r)} · samples {how}")

    def _samples(self, gp: GroupProfile, groups: np.ndarray, title: str) -> None:
        self._find_samples(gp, groups, title)

    @work(thread=True, exclusive=True, group="profile-samples")
    def _find_samples(self, gp: GroupProfile, groups: np.ndarray, title: str) -> None:
        show_rows_found(self, lambda: gp.selection.rows_of(groups), title, "profile")


def _row_blocks(gp: GroupProfile, row: int) -> Iterable[np.ndarray]:
    """The SAMPLE rows of table row ``row`` (its own, or through it with Children), a
    block at a time."""
    return gp.selection.row_blocks(gp.groups_of_row(row, through=gp.children))


def _split(st: SampleGroups) -> bool:
    """Whether ``st``'s locations are split by source line (a table by srcline or
    srcfile, and its trees)."""
    return st.locs.srcline is not None
