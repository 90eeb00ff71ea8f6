"""Every sample's resolved locations (:class:`~.samplelocs.SampleLocs`) kept in the index
cache, so the second report of a recording resolves nothing.

The result is kept with the recording's index cache entry as every derived result is
(:mod:`~perftui.perfdata.derived`): it goes when the entry goes (the file changed,
evicted, ``perftui cache --clear``).  Its name hashes what the names
depend on besides the recording: the symbol options (paths made absolute), the build-id
cache directory, and perftui's own code (the symbol and record layers' source files).  Its
manifest says where every symbol source came from (:mod:`.sources`); before it is used,
each source is found again and must give the same files with the same identity (path,
size, mtime, inode), else the names are resolved again and the attachment replaced.  Its
arrays are checksummed block by block and range-checked: a damaged or tampered one is
removed, never trusted.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import xxhash

from ...engine import forced
from ...perfdata import Recording, RecordType, derived
from ...perfdata.cacheentry import CachedIndex, CacheError, in_range, one_per, starts_of
from ...perfdata.colstore import ColumnStore
from ..modules.modlocate import default_debug_dir
from ..options import SymbolOptions
from ..origins import kernel_build_id, still_valid
from .locations import LocationDso, Locations
from .samplelocs import Alloc, SampleLocs, plain_alloc, resolve_all

if TYPE_CHECKING:  # (the resolver is imported only where one is made)
    from .resolver import Resolver

#: Bump when what the attachment holds changes meaning (the code hash catches the rest).
#: 3: a period the event does not sample is its sample_period; 4: inlined; 5: each
#: sample's processing rank
NAMES_FORMAT = 5
_CODE_DIRS = ("perfdata", "symbols")
_code_hash: str | None = None


def code_identity() -> str:
    """A hash of the source files of the layers that decide the names (a perftui that
    changed resolves again, even without a version bump)."""
    global _code_hash
    if _code_hash is None:
        h = xxhash.xxh3_128()
        root = Path(__file__).resolve().parents[2]
        for d in _CODE_DIRS:  # every file under them, in subpackages too, by its path
            for p in sorted((root / d).rglob("*.py")):
                h.update(p.relative_to(root).as_posix().encode())
                h.update(p.read_bytes())
        _code_hash = h.hexdigest()
    return _code_hash


def signature(opts: SymbolOptions) -> dict[str, Any]:
    """What the names depend on besides the recording and the files (:mod:`.sources`).
    An engine forced by ``PERFTUI_ENGINE`` names again (the same names: the tests run
    both engines on one recording); else a recording's size chooses it, always alike."""

    def ab(p: str | None) -> str | None:
        return os.path.abspath(p) if p else None

    return {"format": NAMES_FORMAT, "code": code_identity(),
            "kallsyms": ab(opts.kallsyms), "vmlinux": ab(opts.vmlinux),
            "symfs": ab(opts.symfs), "modules_dirs": [ab(d) for d in opts.modules_dirs],
            "debug_dir": ab(opts.debug_dir or default_debug_dir()),
            "perfmap_dir": ab(opts.perfmap_dir), "proc_kallsyms": opts.proc_kallsyms,
            "inline": opts.inline, "stitch_lbr": opts.stitch_lbr,
            "engine": forced() or "auto"}


def attachment_name(opts: SymbolOptions) -> str:
    text = json.dumps(signature(opts), sort_keys=True)
    return "names-" + xxhash.xxh3_64_hexdigest(text.encode())


def sample_rows_all(rec: Recording) -> np.ndarray:
    """Every SAMPLE index row, ascending."""
    return np.asarray(rec.rows_of_type(RecordType.SAMPLE), dtype=np.int64)


def kept_sample_locs(rec: Recording, opts: SymbolOptions, callchains: bool,
                     rows: np.ndarray | None = None) -> SampleLocs | None:
    """Every sample's locations from the cache, when it has them for these options and the
    symbol files are unchanged (None: they are to be named, :func:`name_samples`).
    ``rows``: every SAMPLE row, ascending, when the caller has them."""
    if rec.cache is None or rec.identity() is None:
        return None
    every = sample_rows_all(rec) if rows is None else rows

    def restore(att: CachedIndex) -> SampleLocs | None:
        return _load(att, rec, opts, every, callchains)

    return derived.kept(rec, attachment_name(opts), restore, "names", "resolving again",
                        remember=False)


def name_samples(rec: Recording, res: Resolver, opts: SymbolOptions, callchains: bool,
                 rows: np.ndarray | None = None, alloc: Alloc = plain_alloc,
                 progress: Callable[[int, int], None] | None = None) -> SampleLocs:
    """Every sample's locations named by ``res`` (a resolver of ``rec`` and ``opts``), kept
    in the cache when it can take them.  ``rows``: every SAMPLE row, ascending, when the
    caller has them (the browser's, in a mapped file); ``alloc``: where the per-sample
    arrays go when the cache cannot keep them; ``progress(done, total)`` while naming."""
    if rows is None:
        rows = sample_rows_all(rec)
    store = derived.begin(rec)
    if store is not None:
        alloc = store.array
    try:
        sl = resolve_all(res, rows, callchains, alloc, progress=progress)
        if callchains and opts.inline:
            _inline(rec, res, sl)
    except BaseException:
        if store is not None:
            store.discard()
        raise
    if store is not None:
        _save(rec, store, attachment_name(opts), sl, res)
    return sl


def _inline(rec: Recording, res: Resolver, sl: SampleLocs) -> None:
    """perf's inline chains in the unwound stacks (:mod:`.inlines`), said in the notes."""
    from ..unwind import overlay

    unwound = overlay.unwound_rows(rec)
    if not len(unwound):  # (the DWARF readers are not even imported)
        return
    from .inlines import InlineNames, expand_inlines

    names = InlineNames(res)
    expand_inlines(sl, names, unwound)
    sl.notes.extend(names.notes())


def source_name(opts: SymbolOptions) -> str:
    """The attachment of the names split by source line (:func:`kept_source_locs`)."""
    return "srclines-" + attachment_name(opts).removeprefix("names-")


def kept_source_locs(rec: Recording, opts: SymbolOptions, sl: SampleLocs
                     ) -> SampleLocs | None:
    """The names ``sl`` with their locations split by source line
    (:mod:`perftui.analysis.srclinelocs`), from the cache when it keeps them, split from
    these very names (their token) with these options and files; else None."""
    if rec.cache is None or rec.identity() is None:
        return None

    def restore(att: CachedIndex) -> SampleLocs | None:
        if att.meta.get("split_of") != sl.token:
            raise derived.Stale()  # of other names: split again
        return _load(att, rec, opts, sl.rows, sl.stack is not None)

    return derived.kept(rec, source_name(opts), restore, "source lines",
                        "reading the DWARF again", remember=False)


def keep_source_locs(rec: Recording, split: SampleLocs, res: Resolver, of: SampleLocs
                     ) -> bool:
    """Keep ``split`` (the names ``of`` split by source line, by ``res``'s DWARF) with the
    recording's cache entry, when it can take it."""
    store = derived.begin(rec)
    if store is None:
        return False
    return _save(rec, store, source_name(res.opts), split, res, {"split_of": of.token})


def _save(rec: Recording, store: ColumnStore, name: str, sl: SampleLocs, res: Resolver,
          extra: dict[str, Any] | None = None) -> bool:
    locs = sl.locs
    sections = sorted({s for s in locs.section if s is not None})
    sec_id = {s: i for i, s in enumerate(sections)}
    arrays: dict[str, np.ndarray] = {"comm": sl.comm, "leaf": sl.leaf, "period": sl.period,
                                     "stack_starts": sl.stack_starts,
                                     "stack_locs": sl.stack_locs,
                                     "off_stack": sl.off_stack,
                                     "off_starts": sl.off_starts, "off_vals": sl.off_vals,
                                     "other_rows": sl.other_rows,
                                     "other_comm": sl.other_comm,
                                     "loc_dso": np.asarray(locs.dso, dtype=np.int32),
                                     "loc_start": np.asarray(locs.start, dtype=np.uint64),
                                     "loc_end": np.asarray(locs.end, dtype=np.uint64),
                                     "loc_section": np.array(
                                         [sec_id[s] if s is not None else -1
                                          for s in locs.section], dtype=np.int32),
                                     "loc_inlined": np.array(sorted(locs.inlined),
                                                             dtype=np.int32)}
    if sl.stack is not None:
        arrays["stack"] = sl.stack
    if sl.rank is not None:
        arrays["rank"] = sl.rank
    meta = {"signature": json.loads(json.dumps(signature(res.opts))),
            "chains": sl.stack is not None, "samples": len(sl), "sources": res.sources(),
            "dsos": [[d.name, d.kernel, d.module, d.assumed_text] for d in locs.dsos],
            "names": locs.name, "sections": sections, "comm_names": sl.comm_names,
            "threads": [[t, n] for t, n in sl.thread_names.items()], "notes": sl.notes,
            "quiet_notes": sl.quiet_notes, "token": sl.token, **(extra or {})}
    if locs.srcline is not None and locs.srcfile is not None:
        meta["srcline"], meta["srcfile"] = locs.srcline, locs.srcfile
    return derived.commit(rec, store, name, meta, arrays, len(sl))


def _load(att: CachedIndex, rec: Recording, opts: SymbolOptions, rows: np.ndarray,
          callchains: bool) -> SampleLocs | None:
    """The kept locations, or None (kept without the callchains asked for); raises
    :class:`~perftui.perfdata.derived.Stale` when they are no longer right."""
    meta = att.meta
    if meta.get("signature") != json.loads(json.dumps(signature(opts))):
        raise CacheError("made with other symbol options")
    if meta.get("samples") != len(rows) or att.rows != len(rows):
        raise CacheError("another number of samples")
    if callchains and not meta.get("chains"):
        return None  # kept without callchains: resolved again, with them
    if not still_valid(rec, opts, meta["sources"], kernel_build_id(rec)):
        raise derived.Stale("symbol files changed since the names were cached: "
                            "resolving again")
    return _restore(att, meta, rows, len(rec.columns))


#: what each array of the names is
DTYPES = {"comm": "i4", "leaf": "i4", "period": "u8", "stack": "i4", "stack_starts": "i8",
          "stack_locs": "i4", "off_stack": "i4", "off_starts": "i8", "off_vals": "u4",
          "other_rows": "i8", "other_comm": "i4", "loc_dso": "i4", "loc_start": "u8",
          "loc_end": "u8", "loc_section": "i4", "loc_inlined": "i4", "rank": "i4"}
#: arrays a names attachment may lack (no callchains; no ranks past 2^31 rows)
OPTIONAL = ("stack", "rank")


def _restore(att: CachedIndex, meta: dict[str, Any], rows: np.ndarray, nrows: int
             ) -> SampleLocs:
    a = att.checked(DTYPES, tuple(k for k in DTYPES if k not in OPTIONAL))
    n = len(rows)
    dsos = [LocationDso(str(d[0]), bool(d[1]), None if d[2] is None else str(d[2]), bool(d[3]))
            for d in meta["dsos"]]
    names = meta["names"]
    sections = [str(s) for s in meta["sections"]]
    nloc = len(names)
    one_per(a, ("loc_dso", "loc_start", "loc_end", "loc_section"), nloc, "location")
    in_range(a["loc_dso"], 0, len(dsos), "loc_dso")
    in_range(a["loc_section"], -1, len(sections), "loc_section")
    inlined = a["loc_inlined"]
    in_range(inlined, 0, nloc, "loc_inlined")
    if any(names[int(i)] is None for i in inlined.tolist()):
        raise CacheError("loc_inlined: an inlined location without a name")
    comm_names = [str(c) for c in meta["comm_names"]]
    one_per(a, ("comm", "leaf", "period", "off_stack", "stack", "rank"), n, "sample")
    if "rank" in a:
        in_range(a["rank"], 0, nrows, "rank")
    in_range(a["comm"], 0, len(comm_names), "comm")
    in_range(a["leaf"], 0, nloc, "leaf")
    starts, stack_locs = a["stack_starts"], a["stack_locs"]
    starts_of(starts, len(stack_locs), "stack_starts", "stacks")
    in_range(stack_locs, 0, nloc, "stack_locs")
    if "stack" in a:  # never the empty one (a split by source line numbers them anew)
        in_range(a["stack"], 0 if "split_of" in meta else 1, len(starts) - 1, "stack")
    off_starts = a["off_starts"]
    starts_of(off_starts, len(a["off_vals"]), "off_starts", "offsets")
    in_range(a["off_stack"], 1, len(off_starts) - 1, "off_stack")  # never the empty one
    other_rows, other_comm = a["other_rows"], a["other_comm"]
    if len(other_rows) != len(other_comm) or np.any(np.diff(other_rows) <= 0):
        raise CacheError("other_rows: not ascending rows, one name each")
    in_range(other_comm, -1, len(comm_names), "other_comm")
    locs = Locations()
    locs.dsos = dsos
    locs.dso_ids = {(d.name, d.kernel): i for i, d in enumerate(dsos)}
    locs.dso = a["loc_dso"].tolist()
    locs.name = [None if x is None else str(x) for x in names]
    locs.start = a["loc_start"].tolist()
    locs.end = a["loc_end"].tolist()
    locs.section = [sections[i] if i >= 0 else None for i in a["loc_section"].tolist()]
    locs.inlined = set(inlined.tolist())
    locs._ids = None  # (made when a resolver adds to the table: memory)
    if "srcline" in meta:  # (names split by source line)
        lines, files = meta["srcline"], meta.get("srcfile")
        if not isinstance(lines, list) or not isinstance(files, list) \
                or len(lines) != nloc or len(files) != nloc:
            raise CacheError("srcline: not one text per location")
        locs.srcline, locs.srcfile = [str(x) for x in lines], [str(x) for x in files]
    threads = {int(t): str(c) for t, c in meta["threads"]}
    return SampleLocs(rows, a["comm"], a["leaf"], a["period"], a.get("stack"), starts,
                      stack_locs, locs, comm_names, a["off_stack"], off_starts,
                      a["off_vals"], threads, [str(x) for x in meta["notes"]],
                      other_rows, other_comm, origin="cache", token=str(meta["token"]),
                      quiet_notes=[str(x) for x in meta.get("quiet_notes", [])],
                      rank=a.get("rank"))

