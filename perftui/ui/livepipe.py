"""A pipe still streaming (``perf record -o - … | perftui -``), shown live, as ``perf top``
does: between two chunks of the walk, about once a second, the records read so far are
named and grouped and their section report counted, so the profile, the flame graph and
the section pane fill in and follow the stream; the exact pass over everything read runs
when the stream ends or ``x`` stops reading (:class:`~perftui.ui.indexer.IndexController`).

Each update names every sample read so far again (the walk waits meanwhile: a pipe's walk
runs in the worker's thread), with the symbol tables loaded once for all of them; at ~20 K
samples of a system-wide ``-g`` recording one costs ~0.2 s of CPU.  Updates are spaced by
at least :data:`INTERVAL`, and by :data:`SHARE` times the last one's cost, so that reading
the pipe keeps most of the time.  Nothing of an update is kept but its result: the
per-sample arrays are mapped files, replaced by the next update's.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ..analysis import tasks
from ..symbols.modules.modfiles import ModuleFiles
from ..symbols.modules.sectionmap import build_section_map
from ..symbols.tables.cache import SymbolCache

if TYPE_CHECKING:
    from .model import Model

#: seconds between two updates at least
INTERVAL = 1.0
#: an update's cost times this: the least time to the next (reading keeps ~3/4 of it)
SHARE = 3.0


class LivePipe:
    """The live updates of one streaming recording's views (from the walk's thread)."""

    def __init__(self, model: Model) -> None:
        self.model = model
        #: the symbol tables of every update and of the last, exact pass
        self.cache = SymbolCache()
        self.updates = 0
        self._next = time.monotonic() + INTERVAL / 4  # the first one soon
        self._samples = 0  # samples read at the last update

    def due(self) -> bool:
        """Time for an update, and samples read since the last."""
        return (time.monotonic() >= self._next
                and self.model.rec.stats.samples > self._samples)

    def update(self) -> None:
        """Name and group the records read so far and count their sections: the model's
        names, groups and section report become theirs."""
        m = self.model
        rec = m.rec
        start = time.thread_time()  # (the CPU the walk's thread gives it: not its waits)
        self._samples = rec.stats.samples
        m.smap = build_section_map(rec)
        m.files = ModuleFiles.of(rec, m.modules_dirs)
        m.comms = tasks.comm_model(rec)  # (build_names puts perf's names over it)
        m.build_names(cache=self.cache)
        m.report = m.compute_report()
        m.update_stats()
        # the first one loads the symbol tables every later one reuses: not its cost
        cost = time.thread_time() - start if self.updates else 0.0
        self.updates += 1
        self._next = time.monotonic() + max(INTERVAL - cost, SHARE * cost)
