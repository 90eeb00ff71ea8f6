"""The browser's data model: one recording, its index, views over it.  No widgets here.

The model is shared by the widgets; the indexing worker fills the recording's columns
while widgets read the prefix indexed so far.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import heap
from ..analysis import tasks
from ..analysis.filters import Filter, FilterContext, SampleNames, parse_filter
from ..analysis.sectionreport import (
    SectionReport,
    keep_first_screen,
    kept_section_report,
    section_report,
)
from ..analysis.summary import info_dict
from ..analysis.tasks import CommModel, CommTable, SampleComms, comm_of_row
from ..analysis.timespec import format_seconds
from ..perfdata import Recording, RecordType, type_name
from ..perfdata.colstore import ColumnStore
from ..perfdata.constants import CONTEXT_MARKERS
from ..present.records import summary
from ..symbols.modules.modfiles import ModuleFiles
from ..symbols.modules.sectionmap import SectionMap, build_section_map
from ..symbols.modules.symbolize import Symbolizer
from ..symbols.naming.locations import Locations
from ..symbols.naming.samplelocs import SampleLocs, plain_alloc
from ..symbols.options import SymbolOptions
from .sourcelines import SourceGroups

if TYPE_CHECKING:
    from ..analysis.samplegroups import SampleGroups
    from ..symbols.naming.resolver import Resolver
    from ..symbols.tables.cache import SymbolCache

BLOCK = 1 << 20  # rows per pass of a whole-index scan


def location_text(locs: Locations, loc: int, off: int) -> str:
    """``[k] sym+0xoff (dso)`` (``[k]``/``[.]`` as perf report marks kernel and user
    code; a module's section from KMOD_SEC_MAP follows its name: ``([mod].section)``); an
    address no symbol covers: ``[.] 0x1234 (dso)``."""
    d = locs.dsos[locs.dso[loc]]
    level = "[k]" if d.kernel else "[.]"
    name = locs.name[loc]
    sym = f"{name}+{off:#x}" if name is not None else locs.label(loc)
    where = d.short_name
    if d.module is not None and locs.section[loc] and not d.assumed_text:
        where += locs.section[loc] or ""  # [demo_kvm].noinstr.text, from KMOD_SEC_MAP
    return f"{level} {sym} ({where})"


class Model:
    """A recording plus everything the views derive from it."""

    def __init__(self, rec: Recording, modules_dirs: list[str] | None = None,
                 symbols: SymbolOptions | None = None) -> None:
        """``symbols``: perf's symbol options (kallsyms, vmlinux, symfs...); its module
        directories are ``modules_dirs`` when given."""
        self.rec = rec
        self.modules_dirs = list(modules_dirs or (symbols.modules_dirs if symbols else []))
        self.lock = threading.Lock()
        self.done = False
        # the one place that names threads: every comm shown and comm= go through it
        self.comms: CommModel = CommTable(rec)
        self.smap: SectionMap | None = None
        self.files: ModuleFiles | None = None
        self.symbolizer: Symbolizer | None = None
        # every sample's names (perf's rules): from the index cache, else resolved (and
        # kept there) in the worker after indexing
        self.names: SampleLocs | None = None
        # the resolver: made by the names pass when the cache had no names, else only when
        # something asks (ensure_resolver: annotate)
        self.resolver: Resolver | None = None
        self._resolver_lock = threading.Lock()
        self.symbol_options = dataclasses.replace(symbols or SymbolOptions(),
                                                  modules_dirs=self.modules_dirs)
        self.sample_rows: np.ndarray | None = None  # SAMPLE index rows, ascending
        # every sample grouped by thread, CPU, event, own location and stack (profiles)
        self.groups: SampleGroups | None = None
        # the same split by source line (srcline, srcfile keys): made when first asked
        self.source = SourceGroups(self)
        self._names_store: ColumnStore | None = None
        self.report: SectionReport | None = None
        self.time_order = False
        self.flt = Filter()
        self.time_range: tuple[int, int] | None = None  # the timeline selection
        self.absolute_time = False  # the time base of every pane (b switches)
        self._view: np.ndarray | None = None
        self._view_n = -1
        self._first_time = 0
        # running totals over the rows indexed so far (see update_stats)
        self.samples = 0
        self.sample_span = (0, 0)
        self.any_span = (0, 0)

    # -- indexing -------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return len(self.rec.columns)

    def prepare_cached(self) -> bool:
        """A recording reopened from the cache: the section report it keeps, before its
        rows are checked (no .ko file read: :meth:`finish` reads them, in the worker)."""
        rep = kept_section_report(self.rec, self.modules_dirs)
        if rep is None:
            return False
        self.smap, self.files, self.report = rep.smap, rep.files, rep
        self._first_time = self.span()[0]
        return True

    def finish(self) -> None:
        """After indexing: section map, module files, symbolizer, comms, report; after a
        walk, what the cache keeps besides the columns (fine timeline bins, the report)."""
        rec = self.rec
        self.comms = tasks.comm_model(rec)  # the one place a thread-name model is chosen
        if rec.index.origin != "cache" or self.smap is None or self.files is None:
            self.smap = build_section_map(rec)
            self.files = ModuleFiles.of(rec, self.modules_dirs,
                                        symfs=self.symbol_options.symfs)
        self.symbolizer = Symbolizer(self.smap, self.files)
        self._first_time = self.span()[0]
        rep = self.compute_report()
        if rep is not None:
            self.report = rep
        if self.report is not None:
            self.report.load_files()  # finds and reads .ko files: here, in the worker
        if rec.index.origin == "walk" and rec.indexed:
            keep_first_screen(rec, self.smap, self.files)
        self.done = True

    def build_names(self, block: int = 1 << 16,
                    progress: Callable[[int, int], None] | None = None,
                    stage: Callable[[str], None] | None = None,
                    cache: SymbolCache | None = None) -> None:
        """Every sample's names, perf's thread names and, from them, every sample's group
        for the profile views (its stack with the callchains when the recording has them).
        The names come from the index cache when it has them for these symbol options and
        the symbol files are unchanged (no thread model, no resolver); else a resolver
        names them, the cache keeps them for the next open, of the browser or of ``perftui
        report`` (the same :func:`~perftui.present.session.named_samples`), and the
        resolver goes (``stage(what)`` before it is made: the thread model's replay takes
        seconds at 50 M records, before the first ``progress``).  Either way
        :attr:`resolver` stays None until annotate asks.  The
        groups likewise (:mod:`~perftui.analysis.groupstore`: kept with the names they were
        made from).
        Slow on a big first open:
        from the worker, after the first screen; ``progress(done, total)`` while
        resolving.  The per-sample arrays live in mapped files (not anonymous memory).
        ``cache``: symbol tables kept from an earlier pass (a live pipe's)."""
        if self.smap is None or self.files is None:
            return
        from ..analysis.groupstore import sample_groups
        from ..analysis.report import has_callchains
        from ..present.session import named_samples
        from ..symbols.naming.samplestore import attachment_name

        rec, smap, files = self.rec, self.smap, self.files
        chains = has_callchains(rec)
        heap.trim()  # the indexing's freed heap, before the thread model's replay
        store = self._names_arrays_store()
        rows = self._rows_array(store)
        alloc = store.array if store is not None else plain_alloc
        # the resolver (its thread model and symbol tables: ~100 MB at 10^6 map versions)
        # goes before the groups are made, as on a reopen from the cache; annotate makes it
        # again when first asked (:meth:`ensure_resolver`), naming into the same locations
        sl = named_samples(rec, self.symbol_options, chains, cache, smap=smap, files=files,
                           rows=rows, alloc=alloc, progress=progress, stage=stage)
        c = rec.columns

        def columns(r: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            return c["tid"][r], c["cpu"][r], c["attr"][r]

        grouped = sample_groups(rec, sl, attachment_name(self.symbol_options), chains,
                                columns, alloc, block=block)
        if store is not None:
            store.close()  # every array is made (their maps stay valid)
        self.use_names(sl, grouped, self.comms)
        heap.trim()

    def use_names(self, sl: SampleLocs, grouped: SampleGroups, other: CommModel) -> None:
        """Every view's names and groups become these (``other``: the thread names of
        records ``sl`` does not name)."""
        comms: CommModel = SampleComms(sl.rows, sl.comm, sl.other_rows, sl.other_comm,
                                       sl.comm_names, other)
        with self.lock:
            self.names = sl
            self.sample_rows = sl.rows
            self.groups = grouped
            self.comms = comms  # perf's names: fork inherits, exec renames, swapper
        self.invalidate()

    def ensure_resolver(self) -> Resolver:
        """The recording's one resolver, made on first use when the names came from the
        cache (slow: the thread model is replayed; from a worker).  It names into the
        names' own location table, so location ids stay those of :attr:`names`."""
        with self._resolver_lock:
            if self.resolver is not None:
                return self.resolver
            from ..symbols.naming.resolver import Resolver

            res = Resolver(self.rec, self.symbol_options, smap=self.smap,
                           modfiles=self.files)
            if self.names is not None:
                res.use_locations(self.names.locs)
            with self.lock:
                self.resolver = res
            return res

    def _sample_row_blocks(self) -> Iterator[np.ndarray]:
        """The SAMPLE rows (ascending) of each block of rows, one block at a time."""
        t = self.rec.columns["type"]
        for lo in range(0, self.n, BLOCK):
            yield np.flatnonzero(t[lo:lo + BLOCK] == RecordType.SAMPLE) + lo

    def _names_arrays_store(self) -> ColumnStore | None:
        """A temporary mapped store for the per-sample arrays (file pages, which the
        kernel can drop, not anonymous memory); None when it cannot be made."""
        try:
            self._names_store = ColumnStore.temporary()
        except OSError:
            self._names_store = None
        return self._names_store

    def _rows_array(self, store: ColumnStore | None) -> np.ndarray:
        """Every SAMPLE row, ascending, in ``store`` (in memory without one)."""
        n = sum(len(b) for b in self._sample_row_blocks())
        rows = store.array("rows", "i8", n) if store is not None else np.zeros(n, np.int64)
        at = 0
        for b in self._sample_row_blocks():
            rows[at:at + len(b)] = b
            at += len(b)
        return rows

    def where(self, row: int) -> str:
        """``[k] sym+0xoff (dso)`` of a SAMPLE row, as perf script and report name it
        ("" until the names are built, or for another record)."""
        sl = self.names
        k = sl.position(row) if sl is not None else None
        if sl is None or k is None:
            return ""
        _locs, offs = sl.frames(k)
        return location_text(sl.locs, int(sl.leaf[k]), offs[0])

    def chain_names(self, row: int, chain: list[int]) -> list[str] | None:
        """A name for each entry of a SAMPLE's callchain (context markers by name), or
        None before the names are built (from the kept names: no resolver)."""
        sl = self.names
        k = sl.position(row) if sl is not None else None
        if sl is None or k is None or sl.stack is None:
            return None
        locs, offs = sl.frames(k)
        frames = [location_text(sl.locs, loc, off)
                  for loc, off in zip(locs[1:], offs[1:], strict=False)]
        out: list[str] = []
        it = iter(frames)
        for ip in chain:
            if ip in CONTEXT_MARKERS:
                out.append(CONTEXT_MARKERS[ip])
            else:
                out.append(next(it, ""))
        return out

    def save(self) -> bool:
        """Keep a walked index in the cache (slow on a big recording: from the worker)."""
        return self.rec.save_index()

    @property
    def context(self) -> FilterContext:
        """What the filter needs besides the index (names, section map)."""
        names = None
        sl = self.names
        if sl is not None:
            names = SampleNames(sl.rows, sl.leaf, sl.locs)
        return FilterContext(comms=self.comms, smap=self.smap, names=names)

    def compute_report(self) -> SectionReport | None:
        """Count the section samples under the current filter and range (slow on a big
        recording: the app calls it from a worker and then sets :attr:`report`)."""
        if self.smap is None:
            return None
        flt = self.flt.within(self.time_range)
        return section_report(self.rec, self.modules_dirs, flt, smap=self.smap,
                              files=self.files, ctx=self.context)

    def parse_filter(self, text: str) -> Filter:
        """The ``/`` prompt's text as a filter (raises FilterError)."""
        first, last = self.span()
        return parse_filter(text, first, last)

    def scope_text(self) -> str:
        """The active filter and range in words ("" when everything is shown)."""
        parts = []
        if self.flt.text.strip():
            parts.append(self.flt.text.strip())
        if self.time_range is not None:
            lo, hi = self.time_range
            parts.append(f"range {self.fmt_time(lo)}–{self.fmt_time(hi)} {self.time_unit}")
        return " · ".join(parts)

    @property
    def first_time(self) -> int:
        return self._first_time or self.span()[0]

    def update_stats(self) -> None:
        """The running totals, from those the walk keeps (``rec.stats``; complete at once
        for a recording reopened from the cache): nothing to scan."""
        st = self.rec.stats
        with self.lock:
            self.samples = st.samples
            self.sample_span, self.any_span = st.sample_span, st.any_span

    def span(self) -> tuple[int, int]:
        """(first, last) sample time of what is indexed (all timed records if no sample)."""
        self.update_stats()
        return self.sample_span if self.sample_span != (0, 0) else self.any_span

    def info(self) -> dict[str, Any]:
        return info_dict(self.rec)

    # -- the record view ------------------------------------------------------------------
    def invalidate(self) -> None:
        self._view_n = -1

    def view(self) -> np.ndarray | None:
        """Index rows in display order, or None for "every row in file order"."""
        n = self.n
        plain = not self.time_order and self.flt.within(self.time_range).empty
        if plain:
            return None
        if self._view_n == n and self._view is not None:
            return self._view
        c = self.rec.columns
        if self.time_order:
            t = c["time"][:n]
            # untimed records (time 0) keep their file position among the first
            rows = np.argsort(t, kind="stable")
            mask = self._mask(rows)
            if mask is not None:
                rows = rows[mask]
        else:  # in blocks: memory for the rows that pass, not for every row
            parts = []
            for lo in range(0, n, BLOCK):
                block = np.arange(lo, min(n, lo + BLOCK))
                mask = self._mask(block)
                parts.append(block if mask is None else block[mask])
            rows = np.concatenate(parts) if parts else np.empty(0, np.int64)
        self._view, self._view_n = rows, n
        return rows

    def filtered_rows(self, flt: Filter) -> np.ndarray:
        """The index rows ``flt`` keeps, in file order (the timeline's bars under the
        ``/`` filter: its own range is not part of it).  Callable from a thread."""
        n, ctx = self.n, self.context
        parts = [np.arange(lo, min(n, lo + BLOCK)) for lo in range(0, n, BLOCK)]
        kept = [b[flt.mask(self.rec, b, ctx)] for b in parts]
        return np.concatenate(kept) if kept else np.empty(0, np.int64)

    def _mask(self, rows: np.ndarray) -> np.ndarray | None:
        flt = self.flt.within(self.time_range)
        if flt.empty:
            return None
        return flt.mask(self.rec, rows, self.context)

    def count(self) -> int:
        v = self.view()
        return self.n if v is None else len(v)

    def row(self, display: int) -> int:
        v = self.view()
        return display if v is None else int(v[display])

    def display_of(self, row: int) -> int | None:
        """Display position of index row ``row`` in the current view (None if hidden)."""
        v = self.view()
        if v is None:
            return row if row < self.n else None
        hit = np.nonzero(v == row)[0]
        return int(hit[0]) if len(hit) else None

    # -- one record ------------------------------------------------------------------------
    def fields(self, row: int) -> dict[str, Any]:
        try:
            return self.rec.decode(row)
        except ValueError as e:
            c = self.rec.columns
            return {"type": type_name(int(c["type"][row])), "cpumode": int(c["cpumode"][row]),
                    "size": int(c["size"][row]), "error": str(e)}

    def comm_of(self, row: int) -> str:
        """The name of the thread of index row ``row`` at its time."""
        return comm_of_row(self.comms, row) if int(self.rec.columns["tid"][row]) >= 0 else ""

    def process_name(self, pid: int, time: int) -> str:
        """A process's name: its main thread's at ``time`` (the thread model's on a first
        open, the COMM records' on a reopen from the cache)."""
        return self.comms.comm(pid, time) if pid >= 0 else ""

    def describe_ip(self, ip: int) -> str:
        if ip in CONTEXT_MARKERS:
            return CONTEXT_MARKERS[ip]
        if self.symbolizer is None:
            return ""
        return self.symbolizer.describe(ip)

    def line_summary(self, row: int, fields: dict[str, Any] | None = None) -> str:
        f = self.fields(row) if fields is None else fields
        if "error" in f:
            return f"! {f['error']}"
        if f["type"] == "SAMPLE" and "ip" in f:
            where = self.where(row) or self.describe_ip(f["ip"])  # the symbol first: a narrow
            s = f"{f['ip']:#x}"  # terminal should still show it
            return f"{where}  {s}" if where else s
        try:
            return summary(f)
        except (KeyError, TypeError, ValueError):
            return ""

    # -- the time base ---------------------------------------------------------------------
    def fmt_time(self, t: int) -> str:
        """A time in the current base: seconds as perf script prints them (absolute) or
        seconds from the first sample (relative)."""
        return format_seconds(t, None if self.absolute_time else self.first_time)

    @property
    def time_unit(self) -> str:
        """The base in a column heading: ``s`` (absolute, as perf) or ``+s`` (relative)."""
        return "s" if self.absolute_time else "+s"

    def goto(self, text: str) -> int | None:
        """Index row for ``g``: an offset (``0x1f0``, ``4096``: the record that holds it)
        or a time in seconds (``2.5`` in the list's time base, ``2.5s`` from the first
        sample)."""
        text = text.strip().lower()
        c = self.rec.columns
        n = self.n
        if not n or not text:
            return None
        m = re.fullmatch(r"(-?[0-9]*\.[0-9]*|-?[0-9]+)\s*s", text)
        if m is None and re.fullmatch(r"-?[0-9]*\.[0-9]+|-?[0-9]+\.", text):
            secs = float(text)
            base = 0 if self.absolute_time else self.first_time
        elif m is not None and m.group(1) not in ("", "-", ".", "-."):
            secs, base = float(m.group(1)), self.first_time
        else:
            secs, base = float("nan"), 0
        if secs == secs:  # a time
            want = base + round(secs * 1e9)
            return self._first_at_or_after(
                n, lambda rows: c["time"][rows].astype(np.int64), max(want, 0))
        try:
            off = int(text, 0)
        except ValueError:
            return None
        if off < 0:
            return None
        # the record that holds the offset, else the first one after it (offsets of
        # data.N files and of records inside compressed ones are not monotonic)
        for lo in range(0, n, BLOCK):
            rows = np.arange(lo, min(n, lo + BLOCK))
            outer = self.rec.outer_offsets(rows)
            size = c["size"][rows].astype(np.int64)
            inside = np.flatnonzero((outer <= off) & (off < outer + size))
            if len(inside):
                return int(rows[inside[0]])
        return self._first_at_or_after(n, self.rec.outer_offsets, off)

    def _first_at_or_after(self, n: int, key: Any, want: int) -> int:
        """The row with the smallest ``key(row) >= want`` (the first such row on a tie;
        the last row when there is none), in blocks of rows."""
        best: tuple[int, int] | None = None
        for lo in range(0, n, BLOCK):
            rows = np.arange(lo, min(n, lo + BLOCK))
            k = np.asarray(key(rows))
            cand = np.flatnonzero(k >= want)
            if len(cand):
                i = int(cand[np.argmin(k[cand])])
                if best is None or int(k[i]) < best[0]:
                    best = (int(k[i]), int(rows[i]))
        return n - 1 if best is None else best[1]
