"""The names of a stream still being read (a live pipe), made a piece at a time.

:class:`LiveNames` names each sample once: every :meth:`~LiveNames.advance` names only the
samples read since the last one, and only those perf has processed for good (before the
first row its ordered-events queue still holds, :class:`~..tasks.livethreads.LiveThreads`).
The names of samples already named are kept, as perf keeps a sample's hist entry: maps
and names that come later change only later samples.  One resolver (its symbol tables,
the location table, the namer's stack and offset tables) serves every advance, so ids stay
the ids they were given; the per-sample arrays grow in mapped files.  ``final``: the stream
ended or ``x`` stopped it: what is left is named, and the result is the whole stream's
names, as :func:`~.samplelocs.resolve_all` over the finished recording gives them (the
tests hold the two equal, and equal to perf report's on the saved stream).

Not for a stream with DWARF user stacks or LBR call stacks (their chains are joined once
over every sample: the caller names those whole) nor inline chains (only unwound stacks
have them).
"""

from __future__ import annotations

import numpy as np

from ...perfdata import Recording, RecordType
from ..modules.modfiles import ModuleFiles
from ..modules.sectionmap import SectionMap
from ..options import SymbolOptions
from ..tables.cache import SymbolCache
from ..tasks.livethreads import Growing, LiveThreads
from .plainnames import PlainNames
from .resolver import Resolver
from .samplelocs import BLOCK, SampleLocs, name_block, thread_names

_ARRAYS = (("rows", "i8"), ("comm", "i4"), ("leaf", "i4"), ("period", "u8"),
           ("stack", "i4"), ("off_stack", "i4"), ("other_rows", "i8"), ("other_comm", "i4"),
           ("rank", "i8"))


class LiveNames:
    """The names of a stream's samples, named as they are read (see the module doc)."""

    def __init__(self, rec: Recording, opts: SymbolOptions, callchains: bool,
                 smap: SectionMap, files: ModuleFiles, cache: SymbolCache) -> None:
        self.rec, self.opts, self.callchains = rec, opts, callchains
        self.smap, self.files, self.cache = smap, files, cache
        self.threads = LiveThreads(rec)
        self._a = {k: Growing(self.threads.store, k, dt) for k, dt in _ARRAYS}
        self.res: Resolver | None = None
        self._namer: PlainNames | None = None
        self._tids = np.zeros(0, np.int64)
        self.named = 0  # rows before this one are named
        #: samples named by each advance (a counter of the work done)
        self.named_per_advance: list[int] = []

    def advance(self, final: bool = False, upto: int | None = None) -> SampleLocs:
        """Name the samples perf has processed since the last call (``final``: every one
        read; ``upto``: the rows read, default every row); the names of every sample
        named so far."""
        rec = self.rec
        model = self.threads.advance(final, upto)
        if self.res is None:
            self.res = Resolver(rec, self.opts, model=model, smap=self.smap,
                                modfiles=self.files, cache=self.cache, kernel_first=True)
            self._namer = PlainNames(self.res, self.callchains)
        else:
            self.res.model = model
        res, namer = self.res, self._namer
        assert namer is not None
        hi = self.threads.order.events.read if final else self.threads.order.frontier()
        lo = self.named
        is_sample = rec.columns["type"][lo:hi] == RecordType.SAMPLE
        samples = np.flatnonzero(is_sample) + lo
        others = np.flatnonzero(~is_sample) + lo
        a = self._a
        for at in range(0, len(samples), BLOCK):
            rs = samples[at:at + BLOCK]
            comm, leaf, period, stack, off = name_block(res, namer, rs)
            for k, v in (("rows", rs), ("comm", comm), ("leaf", leaf), ("period", period),
                         ("stack", stack), ("off_stack", off), ("rank", model.seq[rs])):
                a[k].extend(v)
        a["other_rows"].extend(others)
        a["other_comm"].extend(model.sample_comms(others)[0])
        self._tids = np.union1d(self._tids, np.unique(rec.columns["tid"][samples]))
        self.named = hi
        self.named_per_advance.append(len(samples))
        return self._names()

    def _names(self) -> SampleLocs:
        """The names so far (views of the growing arrays: what is named never changes)."""
        res, namer = self.res, self._namer
        assert res is not None and namer is not None
        v = {k: g.view for k, g in self._a.items()}
        return SampleLocs(
            v["rows"], v["comm"], v["leaf"], v["period"],
            v["stack"] if self.callchains else None, namer.stacks.starts, namer.stacks.locs,
            res.locs, list(res.comm_names), v["off_stack"], namer.offsets.starts,
            namer.offsets.locs.view(np.uint32), thread_names(res, self._tids),
            list(res.notes), v["other_rows"], v["other_comm"],
            quiet_notes=list(dict.fromkeys(res.quiet_notes)), rank=v["rank"])

