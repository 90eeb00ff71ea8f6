"""One resolver for every view: addresses -> (dso, symbol, offset), as perf 6.1 names them.

It puts the pieces together: the thread/map model (which map an address falls in, per
process, in perf's processing order), the module section map (KMOD_SEC_MAP), and the symbol
sources (kallsyms or vmlinux for the kernel, module ``.ko`` files, ELF files of user DSOs
found as perf finds them, perf maps for JIT code, KSYMBOL names), each found and loaded
once, on first use (:mod:`.symsources`).  Addresses are resolved in batches with numpy: per
map, the distinct addresses are looked up once and interned as
:class:`~.locations.Locations`.

Where names come from, per map kind (docs/architecture.md, "Symbols"):

* kernel: ``--kallsyms FILE``; ``--vmlinux FILE``; a vmlinux found by build id or os release;
  the build-id cache's kallsyms; ``/proc/kallsyms`` only when the recording's kernel build id
  (else its os release) is the running kernel's.  Addresses are absolute.
* modules: an address inside a KMOD_SEC_MAP section resolves in that section of the ``.ko``
  (offset from the section's load address); without a section map, the ``.ko``'s ``.text``
  at the module MMAP start (perf's rule, marked "assumed .text"); without the ``.ko``, the
  module's kallsyms symbols.
* user DSOs: ``ip - map.start + map.pgoff`` in the ELF's symbols (file-offset space).
* JIT: ``/tmp/perf-<pid>.map`` (absolute addresses); KSYMBOL: the record's own name.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...perfdata import Recording
from ...perfdata.constants import Misc
from ...perfdata.grouping import stable_order, unique_inverse
from ..modules.modfiles import ModuleFiles
from ..modules.modnames import module_name
from ..modules.sectionmap import SOURCE_KMOD, SectionMap, build_section_map
from ..options import ASSUMED_TEXT as ASSUMED_TEXT
from ..options import SymbolOptions as SymbolOptions
from ..tables.cache import SymbolCache
from ..tasks.callchain import frame_levels
from ..tasks.dsonames import KERNEL_DSO, MapKind, perf_map_pid
from ..tasks.threads import ThreadModel
from .locations import UNKNOWN_DSO, Locations
from .resolved import ResolvedSamples
from .symsources import SymbolSources, Table

U64 = np.uint64


@dataclass
class _DsoTable:
    """A dso's loaded table (or None) and how its addresses are translated."""

    table: Table | None
    loc_of_sym: np.ndarray  # location id per symbol index, -1 until first met
    dso: int  # index into Locations.dsos
    section: str | None = None
    #: a module section's sh_offset in its .ko: perf's map pgoff once it has read the file
    #: (an address no symbol covers is shown from it, file-relative)
    file_offset: int = 0


def _jit_pid(dso_name: str, pid: int) -> int:
    """Whose perf map names a JIT map: the pid in its dso's name (``/tmp/perf-<pid>.map``,
    the process that mapped it, which a forked child's clone keeps, as perf 6.1 does), else
    ``pid``, its process's."""
    named = perf_map_pid(dso_name)
    return pid if named is None else named


class Resolver:
    """Names for the addresses of one indexed recording (see the module docstring).

    Thread-safe for one writer: the UI resolves in a worker.  ``notes`` collects one line
    per problem worth telling the user (a missing file, a build-id mismatch, where the
    kernel symbols came from).
    """

    def __init__(self, rec: Recording, opts: SymbolOptions | None = None,
                 model: ThreadModel | None = None, smap: SectionMap | None = None,
                 modfiles: ModuleFiles | None = None, cache: SymbolCache | None = None,
                 kernel_first: bool = False) -> None:
        """``kernel_first``: every sample is to be named; load the kernel's symbols
        before the thread model when the recording has kernel records.  Parsing a 5 MB
        kallsyms needs ~25 MB of temporaries: next to the thread model and numba's code
        they made the peak of a first ``perftui report``."""
        self.rec = rec
        self.opts = opts or SymbolOptions()
        self.smap = smap if smap is not None else build_section_map(rec)
        self.modfiles = modfiles if modfiles is not None else ModuleFiles.of(
            rec, self.opts.modules_dirs, symfs=self.opts.symfs)
        #: every map's symbol file, found and loaded once (with the notes of what was not)
        self.symbols = SymbolSources(rec, self.opts, self.modfiles, cache)
        self.cache, self.finder = self.symbols.cache, self.symbols.finder
        self.notes, self.quiet_notes = self.symbols.notes, self.symbols.quiet_notes
        self.locs = Locations()
        self._tables: dict[tuple[Any, ...], _DsoTable] = {}
        self._lock = threading.RLock()
        self._kmod_entries = np.array([k for k, e in enumerate(self.smap.entries)
                                       if e.source == SOURCE_KMOD], dtype=np.int64)
        self.kernel_dso = self.locs.dso_id(KERNEL_DSO, kernel=True)
        self._kmod_modules = {e.module for e in self.smap.entries if e.source == SOURCE_KMOD}
        if kernel_first and _has_kernel_records(rec):
            self.symbols.kernel()
        self.model = model if model is not None else ThreadModel.build(rec)

    def use_locations(self, locs: Locations) -> None:
        """Name into ``locs``, a table an earlier resolver of this recording and options
        filled (kept with its names), instead of a new one: the ids it has stay valid.
        Call before any naming."""
        with self._lock:
            self.locs = locs
            self.kernel_dso = locs.dso_id(KERNEL_DSO, kernel=True)

    # -- where the names come from (:class:`~.symsources.SymbolSources`) ---------------
    @property
    def kernel_source(self) -> str | None:
        return self.symbols.kernel_source

    @property
    def kernel_file(self) -> tuple[str, str] | None:
        """("vmlinux" or "kallsyms", path) of the kernel symbols, once loaded."""
        return self.symbols.kernel_file

    def add_source(self, key: str, desc: dict[str, Any]) -> None:
        """Keep a source the names depend on (:meth:`.SymbolSources.add_source`)."""
        self.symbols.add_source(key, desc)

    def sources(self) -> dict[str, Any]:
        """Every symbol source used so far (:meth:`.SymbolSources.sources`)."""
        return self.symbols.sources()

    def kernel_table(self) -> Table | None:
        """The kernel's symbol table (:meth:`.SymbolSources.kernel_table`)."""
        return self.symbols.kernel_table()

    def user_files(self, path: str, build_id: str, vdso: bool = False
                   ) -> tuple[str, str | None] | None:
        """A user DSO's files (:meth:`.SymbolSources.user_files`)."""
        return self.symbols.user_files(path, build_id, vdso)

    # -- names of threads ---------------------------------------------------------------
    @property
    def comm_names(self) -> list[str]:
        return self.model.names

    def thread_comm(self, tid: int) -> str:
        """The last name of thread ``tid`` (perf's ``Pid:Command`` column)."""
        return self.model.comm_at(tid, 2**63 - 1)

    # -- one dso's table ------------------------------------------------------------------------
    def _dso_table(self, map_id: int) -> _DsoTable:
        maps = self.model.maps
        d = maps.dsos[int(maps.dso[map_id])]
        kind = MapKind(int(maps.kind[map_id]))
        key: tuple[Any, ...]
        jit_pid = _jit_pid(d.name, int(maps.pid[map_id]))
        if kind == MapKind.JIT:
            key = ("jit", jit_pid)
        elif kind == MapKind.KSYMBOL:
            key = ("ksymbol", d.name, int(maps.start[map_id]))
        else:
            key = ("dso", d.name, d.path, d.build_id)
        got = self._tables.get(key)
        if got is not None:
            return got
        table: Table | None = None
        kernel = kind in (MapKind.KERNEL, MapKind.MODULE, MapKind.KSYMBOL,
                          MapKind.KERNEL_EXTRA)
        module = None
        section = None
        if kind == MapKind.USER:
            table = self.symbols.user_table(d.path, d.build_id)
        elif kind == MapKind.VDSO:
            table = self.symbols.vdso_table(d.path, d.build_id)
        elif kind == MapKind.JIT:
            table = self.symbols.jit_table(jit_pid)
        elif kind in (MapKind.KERNEL, MapKind.KERNEL_EXTRA):
            ks = self.symbols.kernel()
            table = ks.kernel if ks else None
        elif kind == MapKind.MODULE:
            module = module_name(d.path) if "/" in d.path or ".ko" in d.path else \
                d.name.strip("[]")
            table, section = self.symbols.module_text(module, d.path)
        name = d.name
        dso = self.locs.dso_id(name, kernel=kernel, module=module)
        if kind == MapKind.MODULE and section == ".text" and module not in self._kmod_modules:
            # no section map for this module: its .text at the MMAP start (perf's rule);
            # with KMOD_SEC_MAP records the module MMAP is the RFC's own .text map
            self.locs.dsos[dso].assumed_text = True
            self.notes.append(f"[{module}]: {ASSUMED_TEXT}")
        n = len(table.names) if table is not None else 0
        got = self._tables[key] = _DsoTable(table, np.full(n, -1, np.int64), dso, section,
                                            self._file_offset(module, d.path, section))
        return got

    def _file_offset(self, module: str | None, path: str | None, section: str | None) -> int:
        """Where ``section`` of ``module``'s .ko starts in the file (0: no file)."""
        if module is None or section is None:
            return 0
        mf = self.modfiles.get(module, path)
        info = mf.sections.get(section) if mf is not None else None
        return int(info.offset) if info is not None else 0

    def _section_table(self, entry: int) -> _DsoTable:
        """A KMOD_SEC_MAP section of a module: its symbols from the .ko."""
        e = self.smap.entries[entry]
        key = ("kmod", e.module, e.section, e.start)
        got = self._tables.get(key)
        if got is not None:
            return got
        mf = self.modfiles.get(e.module, e.path)
        table: Table | None = None
        if mf is not None and e.section and e.section in mf.sections:
            table = mf.symbols(e.section)
        dso = self.locs.dso_id(f"[{e.module}]", kernel=True, module=e.module)
        n = len(table.names) if table is not None else 0
        got = self._tables[key] = _DsoTable(table, np.full(n, -1, np.int64), dso, e.section,
                                            self._file_offset(e.module, e.path, e.section))
        return got

    def _module_shown(self, dt: _DsoTable, ips: np.ndarray, start: int, frames: bool
                      ) -> np.ndarray | None:
        """How a module address no symbol covers is shown: a sample's own as perf's module
        map gives it once the .ko is read (from the section's start in the file: map__map_ip
        with pgoff its sh_offset, 0x10090 for .text+0xfff0), a callchain entry's at itself
        (None: ``_intern``'s default)."""
        if frames:
            return None
        with np.errstate(over="ignore"):
            return ips - U64(start) + U64(dt.file_offset)

    # -- resolving ------------------------------------------------------------------------------
    def _intern(self, dt: _DsoTable, addrs: np.ndarray, base: int = 0,
                raw: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Location ids and symbol offsets of addresses of one dso (``addrs`` in the
        table's space, ``+ base`` shown).  An address no symbol covers is a location of
        its own: at ``addrs + base``, or at ``raw`` when given (perf keys the callchain
        entries of its cumulative rows by the raw address, the sample's own by the
        map-relative one)."""
        n = len(addrs)
        locs = np.empty(n, dtype=np.int32)
        offs = np.zeros(n, dtype=U64)
        if dt.table is not None and len(dt.table.names):
            idx = np.asarray(dt.table.lookup(addrs), dtype=np.int64)
        else:
            idx = np.full(n, -1, dtype=np.int64)
        hit = idx >= 0
        if hit.any():
            t = dt.table
            assert t is not None
            hidx = idx[hit]
            have = dt.loc_of_sym[hidx]
            new = have < 0
            if new.any():  # symbols met for the first time (rare after the first blocks)
                ends = getattr(t, "ends", None)
                for i in np.unique(hidx[new]).tolist():
                    start = int(t.starts[i])
                    end = int(ends[i]) if ends is not None else start + 1
                    dt.loc_of_sym[i] = self.locs.add(dt.dso, t.names[i], start + base,
                                                     end + base, dt.section)
                have = dt.loc_of_sym[hidx]
            locs[hit] = have
            offs[hit] = addrs[hit] - t.starts[hidx]
        miss = ~hit
        if miss.any():
            shown = (addrs[miss] + U64(base)) if raw is None else raw[miss]
            locs[miss] = self.locs.unresolved_ids(dt.dso, shown, dt.section)
        return locs, offs

    def resolve(self, map_ids: np.ndarray, ips: np.ndarray, kernel: np.ndarray,
                frames: bool = False, level: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
        """Location id and symbol offset of each address (``map_ids`` from the thread
        model, ``kernel``: kernel cpumode).  ``frames``: callchain entries, whose
        unresolved addresses perf keys by the raw address.  ``level``: the ``[k]`` mark of
        an address no map covers (default: its own cpumode)."""
        kernel = np.asarray(kernel, dtype=bool)
        with self._lock:
            return self._resolve(np.asarray(map_ids, dtype=np.int64),
                                 np.asarray(ips, dtype=U64), kernel, frames,
                                 kernel if level is None else np.asarray(level, dtype=bool))

    def _resolve(self, map_ids: np.ndarray, ips: np.ndarray, kernel: np.ndarray,
                 frames: bool, level: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = len(ips)
        locs = np.empty(n, dtype=np.int32)
        offs = np.zeros(n, dtype=U64)
        todo = np.ones(n, dtype=bool)
        # kernel addresses in a KMOD_SEC_MAP section: that section of the module
        if len(self._kmod_entries) and kernel.any():
            kk = np.nonzero(kernel)[0]
            owner = self.smap.lookup(ips[kk])
            in_kmod = np.isin(owner, self._kmod_entries)
            for ent in np.unique(owner[in_kmod]).tolist():
                sel = kk[owner == ent]
                dt = self._section_table(int(ent))
                start = self.smap.entries[int(ent)].start
                locs[sel], offs[sel] = self._intern(
                    dt, ips[sel] - U64(start), start,
                    self._module_shown(dt, ips[sel], start, frames))
                todo[sel] = False
        maps = self.model.maps
        # kernel addresses no map covers: the kernel's own symbols (perf stretches the
        # kernel map over everything kallsyms names)
        stray = todo & kernel & (map_ids < 0)
        if stray.any():
            ks = self.symbols.kernel()
            if ks is not None and len(ks.kernel.names):
                sel = np.nonzero(stray)[0]
                inside = ks.kernel.lookup(ips[sel]) >= 0
                sel = sel[inside]
                if len(sel):
                    dt = self._kernel_table()
                    locs[sel], offs[sel] = self._intern(dt, ips[sel], 0)
                    todo[sel] = False
        rest = np.nonzero(todo)[0]
        if not len(rest):
            return locs, offs
        # per distinct map (a Python loop over maps, not entries): its table and how its
        # addresses are translated; then one vectorised pass per table
        uniq, inv = unique_inverse(map_ids[rest])
        table_of = np.zeros(len(uniq), np.int64)
        shift = np.zeros(len(uniq), dtype=U64)  # subtracted from the ip
        add = np.zeros(len(uniq), dtype=U64)  # then added (pgoff)
        special: list[int] = []  # maps handled one by one (modules, KSYMBOL)
        tables: list[_DsoTable] = []
        index: dict[int, int] = {}
        for j, m in enumerate(uniq.tolist()):
            if m < 0:
                table_of[j] = -1
                continue
            dt = self._dso_table(int(m))
            kind = MapKind(int(maps.kind[m]))
            if kind in (MapKind.KSYMBOL, MapKind.MODULE):
                special.append(j)
                table_of[j] = -2
                continue
            k = index.get(id(dt))
            if k is None:
                k = index[id(dt)] = len(tables)
                tables.append(dt)
            table_of[j] = k
            if kind in (MapKind.USER, MapKind.VDSO):  # perf's map__map_ip
                shift[j], add[j] = maps.start[m], maps.pgoff[m]
        t_of = table_of[inv]
        with np.errstate(over="ignore"):
            addrs = ips[rest] - shift[inv] + add[inv]
        order = stable_order(t_of)
        bounds = np.searchsorted(t_of[order], np.arange(-2, len(tables) + 1))
        for k, dt in enumerate(tables):
            seg = order[bounds[k + 2]:bounds[k + 3]]
            if len(seg):
                sel = rest[seg]
                raw = ips[sel] if frames else None
                locs[sel], offs[sel] = self._intern(dt, addrs[seg], 0, raw)
        nomap = rest[order[bounds[1]:bounds[2]]]  # table -1: no map
        for kern in (False, True):  # [unknown], at the raw address; [k] in kernel context
            part = nomap[level[nomap] == kern]
            if len(part):
                dt = self._unknown_table(kernel=kern)
                locs[part], offs[part] = self._intern(dt, ips[part], 0)
        for j in special:
            m = int(uniq[j])
            sel = rest[inv == j]
            dt = self._dso_table(m)
            start = int(maps.start[m])
            if MapKind(int(maps.kind[m])) == MapKind.KSYMBOL:
                locs[sel], offs[sel] = self._ksymbol(dt, m, ips[sel])
            elif dt.section == ".text":
                locs[sel], offs[sel] = self._intern(
                    dt, ips[sel] - U64(start), start,
                    self._module_shown(dt, ips[sel], start, frames))
            else:  # no .ko: kallsyms' symbols of the module (at their addresses), or none;
                # an address none covers is shown as perf's module map shows it
                # (map__map_ip: from the map's start, pgoff 0), a frame's at itself
                shown = ips[sel] if frames else ips[sel] - U64(start)
                locs[sel], offs[sel] = self._intern(dt, ips[sel], 0, shown)
        return locs, offs

    def _kernel_table(self) -> _DsoTable:
        key = ("kernel",)
        got = self._tables.get(key)
        if got is None:
            ks = self.symbols.kernel()
            table = ks.kernel if ks else None
            n = len(table.names) if table is not None else 0
            got = self._tables[key] = _DsoTable(table, np.full(n, -1, np.int64),
                                                self.kernel_dso)
        return got

    def _unknown_table(self, kernel: bool) -> _DsoTable:
        key = ("unknown", kernel)
        got = self._tables.get(key)
        if got is None:
            dso = self.locs.dso_id(UNKNOWN_DSO, kernel=kernel)
            got = self._tables[key] = _DsoTable(None, np.zeros(0, np.int64), dso)
        return got

    def _ksymbol(self, dt: _DsoTable, m: int, ips: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        maps = self.model.maps
        name = maps.dsos[int(maps.dso[m])].name
        start, end = int(maps.start[m]), int(maps.end[m])
        loc = self.locs.add(dt.dso, name, start, end)
        return np.full(len(ips), loc, np.int32), ips - U64(start)

    # -- samples -------------------------------------------------------------------------------
    def samples(self, rows: np.ndarray, callchains: bool = True) -> ResolvedSamples:
        """Every name of SAMPLE index ``rows`` (one block: keep blocks to ~10^5 rows).
        Thread-safe: the browser's workers share one resolver."""
        with self._lock:
            return self._samples(rows, callchains)

    def _samples(self, rows: np.ndarray, callchains: bool) -> ResolvedSamples:
        if callchains and len(rows):
            from ..unwind.session import ensure_unwound  # (user stacks: perf's joined chains)

            ensure_unwound(self)
        rec = self.rec
        c = rec.columns
        rows = np.asarray(rows, dtype=np.int64)
        n = len(rows)
        comm, _names = self.model.sample_comms(rows)
        ips = rec.sample_values(rows, "ip")
        period = self.periods(rows)
        kernel = c["cpumode"][rows] == Misc.KERNEL
        leaf, leaf_off = self.resolve(self.model.map_of(rows), ips, kernel)
        if callchains and n:
            cm = self.model.callchain_maps(rows)
            keep = cm.frames()
            kc = np.zeros(len(keep) + 1, np.int64)
            np.cumsum(keep, out=kc[1:])
            counts = kc[cm.starts + cm.counts] - kc[cm.starts]
            starts = np.zeros(n + 1, np.int64)
            np.cumsum(counts, out=starts[1:])
            fips = cm.ips[keep]
            fkern = cm.modes[keep] == Misc.KERNEL
            level = frame_levels(kernel, counts, fkern, cm.maps[keep] >= 0)
            floc, foff = self.resolve(cm.maps[keep], fips, fkern, frames=True, level=level)
        else:
            starts = np.zeros(n + 1, np.int64)
            fips = np.zeros(0, U64)
            floc = np.zeros(0, np.int32)
            foff = np.zeros(0, U64)
        return ResolvedSamples(
            rows=rows, period=period, comm=comm.astype(np.int32),
            pid=c["pid"][rows].astype(np.int32), tid=c["tid"][rows].astype(np.int32),
            cpu=c["cpu"][rows].astype(np.int32), attr=c["attr"][rows].astype(np.int16),
            time=c["time"][rows], leaf=leaf, leaf_off=leaf_off,
            chain_starts=starts, chain_locs=floc, chain_ips=fips, chain_offs=foff)

    def periods(self, rows: np.ndarray) -> np.ndarray:
        """The period of SAMPLE index ``rows`` (u64; the event's ``sample_period`` where it
        samples none, as perf)."""
        return self.rec.sample_fields(rows, ("period",))[0][0]

    def blocks(self, rows: np.ndarray, block: int = 1 << 16, callchains: bool = True
               ) -> Iterator[ResolvedSamples]:
        """:meth:`samples` of ``rows`` in blocks (bounded temporaries)."""
        for lo in range(0, len(rows), block):
            yield self.samples(rows[lo:lo + block], callchains)


def _has_kernel_records(rec: Recording, block: int = 1 << 20) -> bool:
    """Whether any record of ``rec`` has the kernel's cpumode (a block at a time: the
    first kernel sample is usually in the first)."""
    cm = rec.columns["cpumode"]
    return any(bool(np.any(cm[lo:lo + block] == Misc.KERNEL)) for lo in range(0, len(cm), block))
