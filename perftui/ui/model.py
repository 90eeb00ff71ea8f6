"""The browser's data model: one recording, its index, views over it.  No widgets here.

The model is shared by the widgets; the indexing worker fills the recording's columns
while widgets read the prefix indexed so far.
"""

from __future__ import annotations

import re
import threading
from typing import Any

import numpy as np

from ..analysis.filters import Filter, FilterContext
from ..analysis.sectionreport import SectionReport, section_report
from ..analysis.summary import info_dict
from ..analysis.tasks import CommTable
from ..perfdata import Recording, RecordType, type_name
from ..perfdata.constants import CONTEXT_MARKERS
from ..present.records import summary
from ..symbols.modfiles import ModuleFiles
from ..symbols.sectionmap import SectionMap, build_section_map
from ..symbols.symbolize import Symbolizer


class Model:
    """A recording plus everything the views derive from it."""

    def __init__(self, rec: Recording, modules_dirs: list[str] | None = None) -> None:
        self.rec = rec
        self.modules_dirs = list(modules_dirs or [])
        self.lock = threading.Lock()
        self.done = False
        self.bytes_done = 0
        self.comms = CommTable(rec)
        self.smap: SectionMap | None = None
        self.files: ModuleFiles | None = None
        self.symbolizer: Symbolizer | None = None
        self.report: SectionReport | None = None
        self.time_order = False
        self.flt = Filter()
        self.time_range: tuple[int, int] | None = None  # the timeline selection
        self._view: np.ndarray | None = None
        self._view_n = -1
        self._first_time = 0
        # running totals over the rows indexed so far (see update_stats)
        self.stats_n = 0
        self.samples = 0
        self.sample_span = (0, 0)
        self.any_span = (0, 0)

    # -- indexing -------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return len(self.rec.columns)

    def finish(self) -> None:
        """After indexing: section map, module files, symbolizer, comms, report."""
        rec = self.rec
        self.comms.update(rec)
        self.smap = build_section_map(rec)
        self.files = ModuleFiles.of(rec, self.modules_dirs)
        self.symbolizer = Symbolizer(self.smap, self.files)
        self._first_time = self.span()[0]
        self.refresh_report()
        if self.report is not None:
            self.report.load_files()  # finds and reads .ko files: here, in the worker
        self.done = True

    @property
    def context(self) -> FilterContext:
        """What the filter needs besides the index (names, section map)."""
        return FilterContext(comms=self.comms, smap=self.smap)

    def refresh_report(self) -> None:
        """Count the section samples again under the current filter and range (slow on a
        big recording: call it from a worker)."""
        if self.smap is None:
            return
        flt = self.flt.within(self.time_range)
        self.report = section_report(self.rec, self.modules_dirs, flt, smap=self.smap,
                                     files=self.files, ctx=self.context)

    @property
    def first_time(self) -> int:
        return self._first_time or self.span()[0]

    def update_stats(self) -> None:
        """Fold the rows indexed since the last call into the running totals (O(new)).

        Called from the UI thread and, at the end, from the indexing worker: locked.
        """
        with self.lock:
            self._update_stats()

    def _update_stats(self) -> None:
        c = self.rec.columns
        n = len(c)
        if n <= self.stats_n:
            return
        for lo in range(self.stats_n, n, 1 << 20):  # in blocks: small temporaries
            hi_row = min(n, lo + (1 << 20))
            t = c["time"][lo:hi_row]
            is_s = c["type"][lo:hi_row] == RecordType.SAMPLE
            self.samples += int(np.count_nonzero(is_s))
            timed = t > 0
            for attr, mask in (("sample_span", is_s & timed), ("any_span", timed)):
                if mask.any():
                    first = int(t.min(where=mask, initial=np.uint64(2**64 - 1)))
                    last = int(t.max(where=mask, initial=np.uint64(0)))
                    old = getattr(self, attr)
                    if old != (0, 0):
                        first, last = min(first, old[0]), max(last, old[1])
                    setattr(self, attr, (first, last))
        self.stats_n = n

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
        else:
            rows = np.arange(n)
        mask = self._mask(rows)
        if mask is not None:
            rows = rows[mask]
        self._view, self._view_n = rows, n
        return rows

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
        c = self.rec.columns
        tid = int(c["tid"][row])
        return self.comms.comm(tid, int(c["time"][row])) if tid >= 0 else ""

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
            where = self.describe_ip(f["ip"])  # the symbol first: it is what a narrow
            s = f"{f['ip']:#x}"  # terminal should still show
            return f"{where}  {s}" if where else s
        try:
            return summary(f)
        except (KeyError, TypeError, ValueError):
            return ""

    def rel_time(self, t: int) -> str:
        if not t:
            return ""
        rel = (t - self.first_time) / 1e9
        return f"{0.0 if abs(rel) < 5e-7 else rel:.6f}"  # never "-0.000000"

    def goto(self, text: str) -> int | None:
        """Index row for ``g``: an offset (``0x1f0``, ``4096``) or a time (``2.5s``)."""
        text = text.strip().lower()
        c = self.rec.columns
        n = self.n
        if not n or not text:
            return None
        m = re.fullmatch(r"(-?[0-9.]+)\s*s", text)
        if m:
            want = self.first_time + round(float(m.group(1)) * 1e9)
            t = c["time"][:n]
            cand = np.nonzero(t >= np.uint64(max(want, 0)))[0]
            if not len(cand):
                return n - 1
            return int(cand[np.argmin(t[cand])])
        try:
            off = int(text, 0)
        except ValueError:
            return None
        # the first record at or after the offset (offsets of data.N files and of records
        # inside compressed ones are not monotonic across the index)
        outer = self.rec.outer_offsets(np.arange(n))
        cand = np.nonzero(outer >= off)[0]
        if not len(cand):
            return n - 1
        return int(cand[np.argmin(outer[cand])])
