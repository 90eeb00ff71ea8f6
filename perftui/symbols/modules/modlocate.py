"""Find the file of a kernel module named in a recording.

Places, in order: the path in the record; the user's module directories; the installed
tree ``/lib/modules/<release>/``; perf's build-id cache.  With a build id from the
recording, each file found is checked against it and a mismatching file only wins when
nothing matches.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..files.safefile import join_symfs
from .kofile import ModuleFile, ModuleFileError, load_module
from .modnames import MODULE_SUFFIXES, is_module_path, module_name, strip_module_suffix

__all__ = ["Located", "default_debug_dir", "find_module_file", "same_build_id"]

#: Most directory entries one tree search looks at before giving up.
WALK_LIMIT = 200_000
#: Deepest directory level one tree search goes below its top.
WALK_DEPTH = 16
_MODULES_DEP_MAX = 16 << 20
_HEX = re.compile(r"[0-9a-f]{4,128}")


@dataclass
class Located:
    """Where a module file was found (``path``) or why not (``message``).

    ``build_id_match`` is None when the recording or the file has no build id (or none
    was checked).  ``module`` is the parsed file when checking the build id loaded it.
    """

    path: str | None
    looked_in: list[str]
    build_id_match: bool | None = None
    message: str | None = None
    module: ModuleFile | None = field(default=None, repr=False)


def default_debug_dir() -> str:
    """The build-id cache: ``$PERF_BUILDID_DIR``, else ``~/.debug`` (perf's own).

    perf 6.1 reads only ``~/.debug`` (or its ``--buildid-dir``); it sets
    ``$PERF_BUILDID_DIR`` for the scripts it runs, so perftui started from one finds the
    same cache.
    """
    return os.environ.get("PERF_BUILDID_DIR") or os.path.expanduser("~/.debug")


def normalize_build_id(build_id: str | None) -> str | None:
    """Lower-case hex of a build id, or None when it is empty or not hex."""
    if not build_id:
        return None
    text = build_id.strip().lower()
    text = text.removeprefix("0x")
    return text if _HEX.fullmatch(text) else None


def same_build_id(a: str, b: str) -> bool:
    """Equal build ids, ignoring zero padding (perf stores 20 bytes, padding shorter ids)."""
    a, b = a.lower(), b.lower()
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return long_.startswith(short) and not long_[len(short) :].strip("0")


def _suffix_rank(filename: str) -> int:
    for rank, suffix in enumerate(MODULE_SUFFIXES[::-1]):  # .ko, .ko.gz, .ko.xz, .ko.zst
        if filename.endswith(suffix):
            return rank
    return len(MODULE_SUFFIXES)


def _is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _matches(filename: str, want: str) -> bool:
    return is_module_path(filename) and module_name(filename) == want


def _walk(top: str, want: str, notes: list[str]) -> Iterator[str]:
    """Module files named ``want`` under ``top``, shallow first, ``.ko`` before compressed.

    Symlinked directories are not followed (no loops); the walk stops after
    :data:`WALK_LIMIT` entries or below :data:`WALK_DEPTH` levels.
    """
    if _is_regular(top):  # a file given as a "directory"
        if _matches(os.path.basename(top), want):
            yield top
        return
    seen = 0
    level = [top]
    for _depth in range(WALK_DEPTH + 1):
        below: list[str] = []
        for directory in level:
            try:
                with os.scandir(directory) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError:
                continue
            seen += len(entries)
            files = []
            for e in entries:
                try:
                    if e.is_dir(follow_symlinks=False):
                        below.append(e.path)
                    elif _matches(e.name, want) and e.is_file():
                        files.append(e.path)
                except OSError:
                    continue
            files.sort(key=lambda p: (_suffix_rank(p), p))
            yield from files
            if seen > WALK_LIMIT:
                notes.append(f"search of {top} stopped after {WALK_LIMIT} entries")
                return
        if not below:
            return
        level = below


def _modules_dep(root: str, want: str) -> Iterator[str]:
    """Paths that ``modules.dep`` under ``root`` gives for module ``want``."""
    dep = os.path.join(root, "modules.dep")
    try:
        if not _is_regular(dep) or os.path.getsize(dep) > _MODULES_DEP_MAX:
            return
        with open(dep, encoding="utf-8", errors="replace") as f:
            text = f.read(_MODULES_DEP_MAX)
    except OSError:
        return
    for line in text.splitlines():
        rel = line.partition(":")[0].strip()
        if rel and _matches(os.path.basename(rel), want):
            path = rel if os.path.isabs(rel) else os.path.join(root, rel)
            if _is_regular(path):
                yield path


def _record_candidates(record_path: str) -> Iterator[str]:
    """The record's path, then the same module with the other compression suffixes."""
    if _is_regular(record_path):
        yield record_path
    if is_module_path(record_path) and not record_path.startswith("["):
        stem = strip_module_suffix(record_path)
        for suffix in MODULE_SUFFIXES[::-1]:
            other = stem + suffix
            if other != record_path and _is_regular(other):
                yield other


def _cache_candidates(debug_dir: str, build_id: str) -> Iterator[str]:
    """The build-id cache entry: a file, or a directory (via symlink) holding ``elf``."""
    entry = os.path.join(debug_dir, ".build-id", build_id[:2], build_id[2:])
    try:
        st = os.stat(entry)
    except (OSError, ValueError):
        return
    if stat.S_ISDIR(st.st_mode):
        elf = os.path.join(entry, "elf")
        if _is_regular(elf):
            yield elf
    elif stat.S_ISREG(st.st_mode):
        yield entry


def _valid_release(os_release: str | None) -> bool:
    """A release string usable as one path component (it comes from the recording)."""
    if not os_release:
        return False
    return "/" not in os_release and "\0" not in os_release and os_release not in (".", "..")


def find_module_file(
    name: str,
    record_path: str | None,
    modules_dirs: list[str],
    os_release: str | None,
    build_id: str | None = None,
    debug_dir: str | None = None,
    lib_modules_root: str = "/lib/modules",
    symfs: str | None = None,
) -> Located:
    """Find the file of module ``name`` (any form :func:`module_name` accepts).

    Looks at ``record_path`` (and its other-compression siblings), then under each of
    ``modules_dirs`` recursively, then ``<lib_modules_root>/<os_release>/`` (its
    ``modules.dep`` first), then the build-id cache ``<debug_dir>/.build-id/xx/yyyy``.
    File names match by module name, so ``kvm_amd`` finds ``kvm-amd.ko.zst``.  With
    ``symfs`` (perf's ``--symfs``) the recording's path is looked for under it, as perf
    joins it (``symfs + record_path``), and not on this machine.

    Without ``build_id`` the first file found wins.  With it, the first file whose build
    id matches wins; failing that, the first file without a build id (match None), then
    the first mismatching one (match False, with a message saying so).  Files that cannot
    be read are skipped and named in the message if nothing usable is found.
    """
    want = module_name(name)
    want_id = normalize_build_id(build_id)
    looked_in: list[str] = []
    notes: list[str] = []
    unknown: tuple[str, ModuleFile] | None = None
    mismatch: tuple[str, ModuleFile] | None = None
    bad: list[str] = []
    tried: set[str] = set()

    def places() -> Iterator[tuple[str, Iterator[str]]]:
        if record_path and not record_path.startswith("["):  # "[name]" is no file
            real = join_symfs(symfs, record_path)
            yield real, _record_candidates(real)
        for d in modules_dirs:
            yield d, _walk(d, want, notes)
        if os_release is not None and _valid_release(os_release):
            root = os.path.join(lib_modules_root, os_release)
            yield root, _chain(_modules_dep(root, want), _walk(root, want, notes))
        if want_id is not None:
            cache = debug_dir if debug_dir is not None else default_debug_dir()
            yield (
                os.path.join(cache, ".build-id", want_id[:2], want_id[2:]),
                _cache_candidates(cache, want_id),
            )

    for place, candidates in places():
        looked_in.append(place)
        for path in candidates:
            key = os.path.realpath(path)
            if key in tried:
                continue
            tried.add(key)
            if want_id is None:
                return Located(path, looked_in, None, None)
            try:
                mod = load_module(path)
            except ModuleFileError as e:
                bad.append(str(e))
                continue
            if mod.build_id is None:
                unknown = unknown or (path, mod)
                continue
            if same_build_id(mod.build_id, want_id):
                return Located(path, looked_in, True, None, mod)
            mismatch = mismatch or (path, mod)

    if unknown is not None:
        path, mod = unknown
        return Located(path, looked_in, None, f"{path} has no build id to check", mod)
    if mismatch is not None:
        path, mod = mismatch
        msg = (
            f"build id mismatch: {path} has {mod.build_id}, the recording has {want_id}"
            " (symbols may be wrong)"
        )
        return Located(path, looked_in, False, msg, mod)
    msg = f"module file not found (looked in: {', '.join(looked_in) or 'nowhere'})"
    extra = notes + [f"unreadable: {b}" for b in bad]
    if extra:
        msg += "; " + "; ".join(extra)
    return Located(None, looked_in, None, msg)


def _chain(*iters: Iterator[str]) -> Iterator[str]:
    for it in iters:
        yield from it
