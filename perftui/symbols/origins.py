"""Where the resolver's symbols come from, said in plain data, so a saved result can be
checked against the files as they are now.

Finding a dso's files (stat calls and ELF headers) is cheap; loading their symbols is
not.  The resolver records, for every symbol source it used, what finding it gave: the
files chosen (or none) with their identity (real path, size, mtime, inode, device; the
content hash of a ``/proc`` or ``/sys`` file and of the running kernel's vDSO image),
and for the kernel every place tried up to the one that worked.  :func:`still_valid`
finds them again and compares: a file rebuilt, a debug file or vmlinux that appeared, a
module file moved, another boot's ``/proc/kallsyms``... all give another answer.
"""

from __future__ import annotations

import os
import stat
from typing import Any

import numpy as np
import xxhash

from ..perfdata import Feature, Recording, RecordType
from .files.dsofiles import DsoFiles, find_dso_files, find_vmlinux
from .files.safefile import join_symfs
from .files.vdso import running_vdso_file
from .modules.modfiles import ModuleFiles
from .tables.kallsyms import cached_kallsyms_path, running_kernel_matches
from .tables.livekernel import LIVE_KALLSYMS, this_boot
from .tables.perfmap import perf_map_path
from .tasks.dsonames import KERNEL_DSO

_CONTENT_MAX = 64 << 20  # bytes of a /proc or /sys file hashed at most
_BY_CONTENT = ("/proc/", "/sys/")

Ident = list[Any] | None


def file_ident(path: str | None, by_content: bool = False) -> Ident:
    """A file's identity: ``[real path, size, mtime_ns, inode, device]``, a content hash
    for ``/proc`` and ``/sys`` files (or ``by_content``), ``["missing", path]``; None for
    no path."""
    if path is None:
        return None
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return ["missing", path]
    if by_content or os.path.realpath(path).startswith(_BY_CONTENT):
        if not stat.S_ISREG(st.st_mode):
            return ["not regular", path]
        try:
            with open(path, "rb") as f:
                data = f.read(_CONTENT_MAX + 1)
        except OSError as e:
            return ["unreadable", path, e.errno]
        return ["content", path, xxhash.xxh3_128_hexdigest(data)]
    return [os.path.realpath(path), st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev]


def dso_files_source(files: DsoFiles, real: str) -> dict[str, Any]:
    """What finding a user dso's files gave, and every file it looked at: finding them
    again gives the same answer while none of these changed (the places looked at
    depend only on the options and on the recorded file ``real``, whose build id and
    debuglink name places; the places after the one that answered were not looked at)."""
    return {"syms": files.syms, "runtime": files.runtime,
            "looked": [[p, file_ident(p)] for p in dict.fromkeys([real, *files.looked_in])]}


def _same_files(looked: list[list[Any]]) -> bool:
    """Whether every ``[path, identity]`` still holds."""
    return all(_plain(file_ident(p)) == _plain(ident) for p, ident in looked)


class SourceFinder:
    """Finds symbol sources the resolver's way (no symbols loaded) and describes them."""

    def __init__(self, rec: Recording, opts: Any, modfiles: ModuleFiles | None = None) -> None:
        self.rec = rec
        self.opts = opts
        self.modfiles = modfiles if modfiles is not None else ModuleFiles.of(
            rec, opts.modules_dirs)

    # -- one finder per source kind ----------------------------------------------------------
    def user(self, path: str, build_id: str) -> tuple[DsoFiles, dict[str, Any]]:
        o = self.opts
        files = find_dso_files(path, build_id or None, o.symfs, o.debug_dir)
        return files, dso_files_source(files, join_symfs(o.symfs, path))

    def vdso(self, path: str, build_id: str) -> tuple[str | None, DsoFiles, dict[str, Any]]:
        """The vDSO from the build-id cache, else this kernel's own when its build id (or,
        without one, the os release) says it is the recorded one (perf stops at the cache
        when the recording has the vDSO's build id: see :mod:`.vdso`)."""
        o = self.opts
        files = find_dso_files(path, build_id or None, o.symfs, o.debug_dir)
        cand = files.syms if files.found else None
        own = False
        same_kernel = self.same_kernel(build_id)
        if cand is None and same_kernel:
            cand = running_vdso_file()
            own = cand is not None
        desc = dso_files_source(files, join_symfs(o.symfs, path))
        desc["same_kernel"] = same_kernel
        desc["own"] = file_ident(cand, by_content=True) if own else None
        return cand, files, desc

    def same_kernel(self, build_id: str) -> bool:
        """Whether the running kernel's vDSO may stand for the recorded one (a build id to
        check it by, or the same os release)."""
        return bool(build_id) or self.rec.feature(Feature.OSRELEASE) == os.uname().release

    def jit(self, pid: int) -> tuple[str, dict[str, Any]]:
        path = perf_map_path(pid, self.opts.perfmap_dir)
        return path, {"map": [path, file_ident(path)]}

    def kernel_tries(self, build_id: str | None) -> tuple[list[tuple[str, str]], list[str]]:
        """The kernel symbol files to try, in order, and notes on the places left out."""
        o = self.opts
        release = self.rec.feature(Feature.OSRELEASE)
        tries: list[tuple[str, str]] = []
        notes: list[str] = []
        if o.kallsyms:
            tries.append(("kallsyms", o.kallsyms))
        if o.vmlinux or not o.kallsyms:
            vm = find_vmlinux(build_id, release, o.vmlinux, o.symfs, o.debug_dir)
            if vm.syms:
                tries.insert(0 if o.vmlinux else len(tries), ("vmlinux", vm.syms))
            elif o.vmlinux:
                notes.append(f"kernel: {vm.message()}")
        if not o.kallsyms:
            cached = cached_kallsyms_path(build_id, o.debug_dir) if build_id else None
            if cached:
                tries.append(("kallsyms", cached))
            live = None if build_id or release else this_boot(self.rec, o.proc_kallsyms)
            if running_kernel_matches(build_id, release):
                tries.append(("kallsyms", o.proc_kallsyms))
            elif live is not None:  # still being written, here: this boot's _text
                tries.append(("kallsyms", o.proc_kallsyms))
                notes.append(f"{LIVE_KALLSYMS}: the recording is still being written (data "
                             f"size 0: no build id or release yet) and its kernel map's _text "
                             f"{live:#x} is this boot's")
            elif os.path.exists(o.proc_kallsyms):
                notes.append("kernel: /proc/kallsyms not used: the recording was made "
                             "on another kernel (build id or release differs)")
        return tries, notes

    def module(self, module: str, record_path: str | None) -> dict[str, Any]:
        loc = self.modfiles.locate(module, record_path)
        return {"record_path": record_path, "file": [loc.path, file_ident(loc.path)]}


def kernel_source(tries: list[tuple[str, str]], upto: int) -> dict[str, Any]:
    """The kernel's source: the places tried, up to and with the one that worked
    (``upto``: its position, or -1 when none did: then every place)."""
    used = tries if upto < 0 else tries[:upto + 1]
    return {"tries": [[k, p, file_ident(p)] for k, p in used], "found": upto >= 0}


def still_valid(rec: Recording, opts: Any, used: dict[str, Any], build_id: str | None
                ) -> bool:
    """Whether finding every source in ``used`` (a resolver's :attr:`sources`) gives the
    same answer now.  ``build_id``: the recording's kernel build id."""
    f = SourceFinder(rec, opts)
    for key, want in used.items():
        kind, _, rest = key.partition("\0")
        if kind in ("user", "vdso"):
            if not _same_files(want["looked"]):
                return False
            if kind == "user" or (want["syms"] or want["runtime"]):
                continue  # found in the files: the running kernel's vDSO not looked at
            bid = rest.partition("\0")[2]
            same = f.same_kernel(bid)
            own = running_vdso_file() if same else None
            got: Any = dict(want, same_kernel=same,
                            own=file_ident(own, by_content=True) if own else None)
        elif kind == "dwarf":
            got = dwarf_source(rest)
        elif kind == "jit":
            got = f.jit(int(rest))[1]
        elif kind == "module":
            got = f.module(rest, want.get("record_path"))
        elif kind == "kernel":
            tries, _notes = f.kernel_tries(build_id)
            n = len(want["tries"]) if want.get("found") else len(tries)
            if want.get("found") and n > len(tries):
                return False
            got = {"tries": [[k, p, file_ident(p)] for k, p in tries[:n]],
                   "found": bool(want.get("found"))}
        else:
            return False
        if _plain(got) != _plain(want):
            return False
    return True


def dwarf_source(syms: str) -> dict[str, Any]:
    """Where a DSO's DWARF comes from (its inline chains): the file and its identity."""
    from .dwarf.dwarffile import dwarf_file

    d = dwarf_file(syms)
    return {"file": [d, file_ident(d)]}


def _plain(x: Any) -> Any:
    """Tuples as lists (a description after a JSON round trip)."""
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


def kernel_build_id(rec: Recording) -> str | None:
    """The recorded kernel's build id (BUILD_ID feature or HEADER_BUILD_ID records)."""
    entries = list(rec.feature(Feature.BUILD_ID) or [])
    t = rec.columns["type"]
    found: list[np.ndarray] = []
    for lo in range(0, len(t), 1 << 20):  # in blocks: no mask as long as the index
        found.append(np.flatnonzero(t[lo:lo + (1 << 20)] == RecordType.HEADER_BUILD_ID) + lo)
        if sum(len(f) for f in found) >= 10000:
            break
    rows = np.concatenate(found) if found else np.zeros(0, np.int64)
    for i in rows[:10000]:
        try:
            entries.append(rec.decode(int(i)))
        except ValueError:
            continue
    for e in entries:
        if isinstance(e, dict) and e.get("filename") == KERNEL_DSO and e.get("build_id"):
            return str(e["build_id"])
    return None
