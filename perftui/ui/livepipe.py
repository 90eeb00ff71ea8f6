"""A pipe still streaming (``perf record -o - … | perftui -``), shown live, as ``perf top``
does: between two chunks of the walk, about once a second, the records read since the last
update are named and grouped and the section report counted, so the profile, the flame
graph and the section pane fill in and follow the stream; the last update runs when the
stream ends or ``x`` stops reading (:class:`~perftui.ui.indexer.IndexController`).

Each update names only the samples read since the last one
(:class:`~perftui.symbols.naming.livenames.LiveNames`: those perf has processed for good;
the names of samples named before are kept) and adds them to the groups (one
:class:`~perftui.analysis.samplegroups.GroupsBuilder` for every update), so its work and
memory follow what was read since, not everything read; the per-sample arrays grow in
mapped files.  A stream with DWARF user stacks or LBR call stacks is named whole again at
each update (their chains are joined over every sample at once).  Updates are spaced by at least
:data:`INTERVAL`, and by :data:`SHARE` times the last one's cost, so that reading the pipe
keeps most of the time.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from ..analysis import tasks
from ..symbols.modules.modfiles import ModuleFiles
from ..symbols.modules.sectionmap import build_section_map
from ..symbols.naming.livenames import LiveNames
from ..symbols.tables.cache import SymbolCache
from ..symbols.tasks.livethreads import Growing
from ..symbols.unwind.lbr import lbr_attrs
from ..symbols.unwind.overlay import unwinds

if TYPE_CHECKING:
    from ..analysis.samplegroups import GroupsBuilder
    from .model import Model

#: seconds between two updates at least
INTERVAL = 1.0
#: an update's cost times this: the least time to the next (reading keeps ~3/4 of it)
SHARE = 3.0


class LivePipe:
    """The live updates of one streaming recording's views (from the walk's thread)."""

    def __init__(self, model: Model) -> None:
        self.model = model
        #: the symbol tables of every update and of the last pass
        self.cache = SymbolCache()
        self.updates = 0
        self._next = time.monotonic() + INTERVAL / 4  # the first one soon
        self._samples = 0  # samples read at the last update
        self._names: LiveNames | None = None
        self._groups: GroupsBuilder | None = None
        self._group_ids: Growing | None = None
        self._comms: tasks.CommTable | None = None
        self.whole = False  # named whole at each update (DWARF user stacks)

    def due(self) -> bool:
        """Time for an update, and samples read since the last."""
        return (time.monotonic() >= self._next
                and self.model.rec.stats.samples > self._samples)

    @property
    def named_per_update(self) -> list[int]:
        """Samples named by each update (the work done: what was read since the last)."""
        return self._names.named_per_advance if self._names is not None else []

    @property
    def named(self) -> int:
        """Samples named so far (each once)."""
        return sum(self.named_per_update)

    def update(self) -> None:
        """Name and group the records read since the last update and count the sections:
        the model's names, groups and section report become theirs."""
        m = self.model
        rec = m.rec
        start = time.thread_time()  # (the CPU the walk's thread gives it: not its waits)
        self._samples = rec.stats.samples
        m.smap = build_section_map(rec)
        m.files = ModuleFiles.of(rec, m.modules_dirs, symfs=m.symbol_options.symfs)
        if unwinds(rec) or lbr_attrs(rec) or self.whole:
            self.whole = True
            m.comms = tasks.comm_model(rec)  # (build_names puts perf's names over it)
            m.build_names(cache=self.cache)
        else:
            self._advance(final=False)
        m.report = m.compute_report()
        m.update_stats()
        # the first one loads the symbol tables every later one reuses: not its cost
        cost = time.thread_time() - start if self.updates else 0.0
        self.updates += 1
        self._next = time.monotonic() + max(INTERVAL - cost, SHARE * cost)

    def finish(self) -> bool:
        """After the last record (the stream's end, or ``x``): name what is left; False
        when the whole recording must be named instead (no live names, or DWARF)."""
        if self._names is None or self.whole:
            return False
        self._advance(final=True)
        return True

    def _advance(self, final: bool) -> None:
        # (the profile's modules: not part of the browser's start-up)
        from ..analysis.report import has_callchains
        from ..analysis.samplegroups import GroupsBuilder, assemble

        m = self.model
        rec = m.rec
        assert m.smap is not None and m.files is not None
        if self._names is None:
            chains = has_callchains(rec)
            self._names = LiveNames(rec, m.symbol_options, chains, m.smap, m.files,
                                    self.cache)
            self._comms = tasks.CommTable(rec)
        assert self._comms is not None
        sl = self._names.advance(final)
        if self._groups is None:
            self._groups = GroupsBuilder(sl.locs, sl.comm_names, sl.stack is not None)
            self._group_ids = Growing(self._names.threads.store, "group", "i4")
        assert self._group_ids is not None
        lo = self._group_ids.n
        c = rec.columns
        r = sl.rows[lo:]
        self._group_ids.extend(self._groups.add_named(sl, lo, len(sl), c["tid"][r],
                                                      c["cpu"][r], c["attr"][r]))
        grouped = assemble(self._groups.tables(), sl.rows, self._group_ids.view,
                           sl.period.view(np.int64), sl.locs, sl.comm_names,
                           sl.stack is not None)
        self._comms.update(rec)
        m.use_names(sl, grouped, self._comms)
