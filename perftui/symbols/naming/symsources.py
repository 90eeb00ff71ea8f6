"""Where a recording's symbols come from: each map's symbol file found as perf 6.1 finds it
and loaded once, for the resolver (:mod:`.resolver`).

The kernel: ``--kallsyms``, ``--vmlinux``, a vmlinux by build id or os release, the
build-id cache's kallsyms, ``/proc/kallsyms`` when it is the recorded kernel's; a module's
``.text`` of its ``.ko`` (else its kallsyms symbols); a user DSO's ELF file (build-id cache,
debug files, ``--symfs``), the vDSO, a JIT map's perf map.  What was found is described in
:meth:`SymbolSources.sources` (what a kept result depends on, :mod:`..origins`); what was
not is said once in ``notes`` (``quiet_notes``: what perf does not say either).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from ...perfdata import Recording
from ..errors import FileError
from ..files.safefile import SymbolFileError
from ..modules.modfiles import ModuleFiles
from ..options import SymbolOptions
from ..origins import SourceFinder, file_ident, kernel_build_id, kernel_source
from ..tables import diskcache
from ..tables.cache import SymbolCache
from ..tables.diskcache import TableStore
from ..tables.kallsymcache import load_kept_kallsyms
from ..tables.kallsyms import Kallsyms
from ..tables.perfmap import load_perf_map


class Table(Protocol):
    """What the resolver needs of a symbol table (both table kinds have it)."""

    @property
    def names(self) -> Sequence[str]: ...

    @property
    def starts(self) -> np.ndarray: ...

    def lookup(self, addrs: np.ndarray) -> np.ndarray: ...


class SymbolSources:
    """The symbol files of one recording's maps (the resolver's, under its lock)."""

    def __init__(self, rec: Recording, opts: SymbolOptions, modfiles: ModuleFiles,
                 cache: SymbolCache | None = None) -> None:
        self.rec = rec
        self.opts = opts
        self.modfiles = modfiles
        self.cache = cache if cache is not None else SymbolCache()  # (an empty one is falsy)
        if self.cache.disk is None and rec.cache is not None:  # tables kept between runs
            self.cache.disk = TableStore(diskcache.default_dir(rec.cache.directory))
        self.finder = SourceFinder(rec, opts, modfiles)
        self._sources: dict[str, Any] = {}
        self.notes: list[str] = []
        #: what perf does not tell either: files expected to be missing (a memfd or
        #: deleted file's map, a JIT map without /tmp/perf-PID.map); for the info notes
        self.quiet_notes: list[str] = []
        self.kernel_source: str | None = None
        #: ("vmlinux" or "kallsyms", path) of the kernel symbols, once loaded
        self.kernel_file: tuple[str, str] | None = None
        self._kallsyms: Kallsyms | None = None
        self._kernel_loaded = False

    def add_source(self, key: str, desc: dict[str, Any]) -> None:
        """Keep a source the names depend on (``kind\0what``: see :mod:`..origins`)."""
        self._sources[key] = desc

    def sources(self) -> dict[str, Any]:
        """Every symbol source used so far, described (:mod:`.sources`): what a saved
        result of this resolver depends on besides the recording and the options."""
        out = dict(self._sources)
        for module, record_path in self.modfiles.record_paths.items():
            path = self.modfiles.paths.get(module)
            out[f"module\0{module}"] = {"record_path": record_path,
                                         "file": [path, file_ident(path)]}
        return out

    # -- the kernel's symbols ---------------------------------------------------------
    def kernel(self) -> Kallsyms | None:
        """The kernel's symbols (kallsyms or vmlinux, found as perf finds them; loaded on
        first use), None without any (noted)."""
        if self._kernel_loaded:
            return self._kallsyms
        self._kernel_loaded = True
        tries, notes = self.finder.kernel_tries(kernel_build_id(self.rec))
        self.notes.extend(notes)
        for k, (kind, path) in enumerate(tries):
            try:
                ks = self._load_kernel(kind, path)
            except (SymbolFileError, FileError) as e:
                self.notes.append(f"kernel: {e}")
                continue
            self._kallsyms, self.kernel_source = ks, f"{kind} {path}"
            self.kernel_file = (kind, path)
            self._sources["kernel"] = kernel_source(tries, k)
            return ks
        self._sources["kernel"] = kernel_source(tries, -1)
        if not tries:
            self.notes.append("kernel: no symbols (give --kallsyms FILE or --vmlinux FILE)")
        return None

    def kernel_table(self) -> Table | None:
        """The kernel's symbol table (absolute addresses; loaded on first use), None
        without kernel symbols."""
        ks = self.kernel()
        return ks.kernel if ks else None

    def _load_kernel(self, kind: str, path: str) -> Kallsyms:
        if kind == "kallsyms":
            return self.cache.get(("kallsyms", path),
                                  lambda: load_kept_kallsyms(path, self.cache.disk))
        syms = self.cache.elf(path, kernel=True)
        return Kallsyms(source=path, kernel=syms.table)

    def user_files(self, path: str, build_id: str, vdso: bool = False
                   ) -> tuple[str, str | None] | None:
        """``(symbol file, runtime file)`` of a user DSO (``vdso``: of the vDSO), found as
        perf finds them (the same files the resolver reads); None, with a note, when
        there is none.  The vDSO comes from the build-id cache, else this kernel's own
        (perf's way) when its build id (or, without one, the os release) says it is the
        recorded one.  What was found is kept in :meth:`sources`."""
        if not vdso:
            files, self._sources[f"user\0{path}\0{build_id}"] = self.finder.user(
                path, build_id)
            if not files.found:
                quiet = path.startswith(("/memfd:", "//anon", "/anon_hugepage", "/dev/zero")) \
                    or path.endswith(" (deleted)")
                (self.quiet_notes if quiet else self.notes).append(files.message())
                return None
            return files.syms or path, files.runtime
        cand, files, self._sources[f"vdso\0{path}\0{build_id}"] = self.finder.vdso(
            path, build_id)
        if cand is None:
            self.notes.append(files.message())
            return None
        return cand, None

    def user_table(self, path: str, build_id: str) -> Table | None:
        """A user DSO's ELF table (see :meth:`user_files`)."""
        files = self.user_files(path, build_id)
        if files is None:
            return None
        try:
            syms = self.cache.elf(files[0], files[1], build_id or None)
        except SymbolFileError as e:
            self.notes.append(str(e))
            return None
        return syms.table

    def vdso_table(self, path: str, build_id: str) -> Table | None:
        """The vDSO's table (see :meth:`user_files`)."""
        files = self.user_files(path, build_id, vdso=True)
        if files is None:
            return None
        try:
            return self.cache.elf(files[0], None, build_id or None).table
        except SymbolFileError as e:
            self.notes.append(f"[vdso]: {e}")
            return None

    def jit_table(self, pid: int) -> Table | None:
        """The perf map (``/tmp/perf-<pid>.map``) of process ``pid``."""
        path, self._sources[f"jit\0{pid}"] = self.finder.jit(pid)
        try:
            pm = self.cache.get(("perfmap", path),
                                lambda: load_perf_map(pid, self.opts.perfmap_dir))
        except (SymbolFileError, FileError) as e:
            missing = not os.path.lexists(os.path.join(self.opts.perfmap_dir,
                                                       f"perf-{pid}.map"))
            (self.quiet_notes if missing else self.notes).append(str(e))
            return None
        return pm.table

    def module_text(self, module: str, path: str) -> tuple[Table | None, str | None]:
        """A module MMAP without a section map: the .ko's .text at the map start."""
        mf = self.modfiles.get(module, path)
        if mf is not None and ".text" in mf.sections:
            return mf.symbols(".text"), ".text"
        ks = self.kernel()
        if ks is not None and module in ks.modules:
            return ks.modules[module], None
        return None, None
