"""Every sample's names on an indexed recording, with the cache writes that go with them:
the one way ``report`` (its table, folded stacks, speedscope), ``diff``, the browser and
the diff browser get their names.

A walked index not yet kept is kept in the cache before the names are (their attachment
needs its entry), with what a reopened browser draws its first screen from; the names come
from the cache when it keeps them
(:func:`~perftui.symbols.naming.samplestore.kept_sample_locs`), else one resolver names
every sample once and they are kept (:func:`~perftui.symbols.naming.samplestore.name_samples`).
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from ..analysis.sectionreport import keep_first_screen
from ..heap import trim
from ..perfdata import Recording
from ..symbols.modules.modfiles import ModuleFiles
from ..symbols.modules.sectionmap import SectionMap, build_section_map
from ..symbols.naming.resolver import Resolver, SymbolOptions
from ..symbols.naming.samplelocs import Alloc, SampleLocs, plain_alloc
from ..symbols.naming.samplestore import kept_sample_locs, name_samples
from ..symbols.tables.cache import SymbolCache


class IndexSaver:
    """A walked index kept in the cache for the next open, with what a reopened browser
    draws its first screen from (:func:`keep_first_screen`: ~0.5 s at 4.85 M records),
    before the names are kept with it (their attachment needs the entry).  Counted
    before the resolver is made: beside its thread model the counting's temporaries
    took a first report's peak from ~90 to ~125 MB of RssAnon."""

    def __init__(self, rec: Recording, opts: SymbolOptions) -> None:
        self.rec = rec
        self.smap = build_section_map(rec)
        self.files = ModuleFiles.of(rec, opts.modules_dirs,
                                    symfs=opts.symfs)  # (the resolver's too)
        keep_first_screen(rec, self.smap, self.files)
        trim()  # the counting's temporaries
        self._saved = False

    def save(self) -> None:
        """Keep the index (once)."""
        if not self._saved:
            self._saved = True
            self.rec.save_index()


def index_saver(rec: Recording, opts: SymbolOptions) -> IndexSaver | None:
    """A saver for an index just walked into a cache entry in the making (None: restored
    from the cache, kept already, or nothing to keep it in)."""
    store = rec.index.store
    if rec.index.origin != "walk" or rec.cache is None or store is None or not store.keep:
        return None
    return IndexSaver(rec, opts)


def named_samples(rec: Recording, opts: SymbolOptions, callchains: bool,
                  cache: SymbolCache | None = None, *, smap: SectionMap | None = None,
                  files: ModuleFiles | None = None, rows: np.ndarray | None = None,
                  alloc: Alloc = plain_alloc,
                  progress: Callable[[int, int], None] | None = None,
                  stage: Callable[[str], None] | None = None) -> SampleLocs:
    """Every sample's names (``callchains``: their stacks too), the index and the names
    kept in the cache on the way.  ``cache``: symbol files shared with another
    recording's; ``smap``/``files``: the section map and module files when the caller has
    them; ``rows``/``alloc``: every SAMPLE row and where per-sample arrays go (the
    browser's mapped files); ``progress(done, total)`` while naming; ``stage(what)``
    before the resolver is made (its thread model's replay takes seconds at 50 M
    records, before the first ``progress``)."""
    saver = index_saver(rec, opts)
    try:
        sl = kept_sample_locs(rec, opts, callchains, rows)
        if sl is None:
            if stage is not None:
                stage("replaying the recording's thread and map events")
            if saver is not None:
                smap = saver.smap if smap is None else smap
                files = saver.files if files is None else files
            res = Resolver(rec, opts, smap=smap, modfiles=files, cache=cache,
                           kernel_first=True)
            if saver is not None:
                saver.save()  # once the resolver is made, before the names are resolved
            trim()  # the thread model's temporaries
            sl = name_samples(rec, res, opts, callchains, rows, alloc, progress)
            del res
    finally:
        if saver is not None:
            saver.save()
    trim()  # (the resolver is not kept: its symbol tables go before the counting)
    return sl


def by_source_line(rec: Recording, opts: SymbolOptions, sl: SampleLocs, notes: list[str],
                   keep: bool = False) -> SampleLocs:
    """The names with their locations split by source line, for the srcline and srcfile
    keys (:mod:`~perftui.analysis.srclinelocs`): a resolver finds each DSO's DWARF as the
    names found its symbols (what lacked DWARF goes to ``notes``).  ``keep``: from the
    index cache when it keeps them split from these names, else split and kept there (the
    browser's)."""
    from ..analysis.srclinelocs import split_by_source
    from ..symbols.naming.samplestore import keep_source_locs, kept_source_locs
    from ..symbols.naming.srclines import SourceLines
    from ..symbols.unwind.overlay import dwarf_rows

    if keep:
        got = kept_source_locs(rec, opts, sl)
        if got is not None:
            return got
    res = Resolver(rec, opts)
    res.use_locations(sl.locs)
    lines = SourceLines(res)
    out = split_by_source(sl, lines.texts, dwarf_rows(rec))
    out.token = os.urandom(8).hex()  # (what is made of the split is not of the names)
    got_notes = lines.notes()
    notes += got_notes
    if keep:
        out.notes = list(sl.notes) + got_notes
        keep_source_locs(rec, out, res, sl)
    return out
