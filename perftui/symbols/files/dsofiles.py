"""Find the files that hold a recorded DSO's symbols, in perf 6.1's order.

User DSOs (``dso__load`` and ``dso__read_binary_type_filename`` in ``tools/perf/util/``):
the ``.gnu_debuglink`` file (next to the DSO, in its ``.debug/``, under
``/usr/lib/debug<dir>/``), the build-id cache (``<debug_dir>/.build-id/xx/rest``, a file, or
a directory holding ``elf`` then ``debug``), ``/usr/lib/debug<path>.debug``,
``/usr/lib/debug<path>``, ``/usr/lib/debug/.build-id/xx/rest.debug``, the recorded path,
``<dir>/.debug/<name>``, and ``/usr/lib/debug/lib/...`` for ``/usr/lib/...``.  Every place
but the build-id cache is under ``--symfs DIR`` when one is given.  The first usable file
with a ``.symtab`` gives the symbols; the first with a ``.dynsym`` is the runtime file
(program headers, PLT).  A candidate whose build id differs from the recording's (or that
has none when the recording has one) is not used; it is named in ``rejected``.  perf's
cwd-relative debuglink place (``./<name>``) is not tried.

Kernel (``dso__load_kernel_sym``): ``--vmlinux FILE`` only, if given; else the build-id
cache entry, ``/boot/vmlinux``, then (without ``--symfs``) ``/boot/vmlinux-R``,
``/usr/lib/debug/boot/vmlinux-R``, ``/lib/modules/R/build/vmlinux``,
``/usr/lib/debug/lib/modules/R/vmlinux``, ``/usr/lib/debug/boot/vmlinux-R.debug``.

Build-id paths are made only from validated hex; only regular files are opened.

Public API: :func:`find_dso_files` ``(path, build_id=None, symfs=None, debug_dir=None)
-> DsoFiles``; :func:`find_vmlinux` ``(build_id, os_release, vmlinux=None, symfs=None,
debug_dir=None) -> DsoFiles``; :func:`load_dso_symbols` ``(files, kernel=False) ->
ElfSymbols``; :class:`DsoFiles` (``syms``, ``runtime``, ``looked_in``, ``rejected``,
``build_id``, ``message()``).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field

from perftui.symbols.files.elfheaders import SHT_DYNSYM, SHT_SYMTAB, ElfHeaders, open_elf_headers
from perftui.symbols.files.safefile import SymbolFileError, is_regular_file, join_symfs
from perftui.symbols.modules.modlocate import default_debug_dir, normalize_build_id
from perftui.symbols.tables.elfsyms import ElfSymbols, load_elf_symbols

__all__ = ["DsoFiles", "find_dso_files", "find_vmlinux", "load_dso_symbols"]

_DEBUGLINK_MAX = 4096


@dataclass
class DsoFiles:
    """Where a DSO's symbols are (``syms``, ``runtime``) and where we looked."""

    path: str
    syms: str | None = None
    runtime: str | None = None
    build_id: str | None = None
    looked_in: list[str] = field(default_factory=list)
    #: "path: why" for each file found but not used (build id mismatch, bad ELF, ...)
    rejected: list[str] = field(default_factory=list)

    @property
    def found(self) -> bool:
        return self.syms is not None or self.runtime is not None

    def message(self) -> str:
        """One line: where the symbols come from, or why there are none."""
        if self.found:
            src = self.syms or self.runtime
            extra = f" (runtime: {self.runtime})" if self.runtime not in (None, src) else ""
            return f"symbols from {src}{extra}"
        msg = f"{self.path}: not found (looked in: {', '.join(self.looked_in) or 'nowhere'})"
        if self.rejected:
            msg += "; not used: " + "; ".join(self.rejected)
        return msg


def _cache_entry(debug_dir: str, bid: str, basename: str) -> str:
    link = os.path.join(debug_dir, ".build-id", bid[:2], bid[2:])
    try:
        if stat.S_ISREG(os.stat(link).st_mode):  # old-style cache: the link is the file
            return link
    except (OSError, ValueError):
        pass
    return os.path.join(link, basename)


def _debuglink(path: str) -> str | None:
    """The file name in ``.gnu_debuglink``, or None."""
    try:
        with open_elf_headers(path) as img:
            sec = img.section(".gnu_debuglink")
            if sec is None:
                return None
            data = img.read(sec, ".gnu_debuglink", _DEBUGLINK_MAX)
    except SymbolFileError:
        return None
    name = data.split(b"\0", 1)[0].decode("utf-8", "replace")
    if not name or "/" in name or name in (".", ".."):
        return None  # a bare file name is all perf expects; anything else is refused
    return name


def _user_candidates(path: str, bid: str | None, symfs: str | None,
                     debug_dir: str) -> list[str]:
    out: list[str] = []
    real = join_symfs(symfs, path)
    directory = os.path.dirname(real)
    if is_regular_file(real):
        link = _debuglink(real)
        if link:
            out += [os.path.join(directory, link), os.path.join(directory, ".debug", link),
                    join_symfs(symfs, "/usr/lib/debug") + os.path.dirname(real) + "/" + link]
    if bid:
        # perf's build_id_cache__basename: the vDSO is kept as "vdso", other files as "elf"
        base_name = "vdso" if path.startswith("[vdso") else "elf"
        out += [_cache_entry(debug_dir, bid, base_name), _cache_entry(debug_dir, bid, "debug")]
    if path.startswith("["):  # [vdso] and friends exist only in the build-id cache
        return out
    out += [join_symfs(symfs, "/usr/lib/debug") + path + ".debug",
            join_symfs(symfs, "/usr/lib/debug") + path]
    if bid:
        out.append(join_symfs(symfs, f"/usr/lib/debug/.build-id/{bid[:2]}/{bid[2:]}.debug"))
    out.append(real)
    d, base = os.path.split(path)
    out.append(join_symfs(symfs, os.path.join(d, ".debug", base)))
    if path.startswith("/usr/lib/"):
        out.append(join_symfs(symfs, "/usr/lib/debug") + path[4:])
    return out


def _examine(cand: str, want: str | None, res: DsoFiles, kernel: bool) -> tuple[bool, bool]:
    """(has .symtab, has .dynsym) of a usable candidate; (False, False) when not usable."""
    try:
        with open_elf_headers(cand) as img:
            if want is not None:
                have = img.build_id
                if have is None:
                    res.rejected.append(f"{cand}: no build id (the recording has {want})")
                    return False, False
                if normalize_build_id(have) != want and not _same(have, want):
                    res.rejected.append(f"{cand}: build id mismatch: {have}, the recording "
                                        f"has {want}")
                    return False, False
            return _has(img, ".symtab", SHT_SYMTAB), (not kernel) and _has(
                img, ".dynsym", SHT_DYNSYM)
    except SymbolFileError as e:
        res.rejected.append(str(e))
        return False, False


def _same(a: str, b: str) -> bool:
    from perftui.symbols.modules.modlocate import same_build_id

    return same_build_id(a, b)


def _has(img: ElfHeaders, name: str, typ: int) -> bool:
    sec = img.section(name)
    return sec is not None and sec.type == typ


def find_dso_files(path: str, build_id: str | None = None, symfs: str | None = None,
                   debug_dir: str | None = None) -> DsoFiles:
    """Find the symbol and runtime files of user DSO ``path`` (see the module docstring).

    ``build_id`` is the recording's (its BUILD_ID feature or MMAP2 record); without it,
    the build id of the file at the recorded path is used for the build-id places, and no
    candidate is refused for its build id (perf does the same).
    """
    want = normalize_build_id(build_id)
    res = DsoFiles(path, build_id=want)
    cache = debug_dir if debug_dir is not None else default_debug_dir()
    bid = want
    if bid is None and is_regular_file(join_symfs(symfs, path)):
        try:
            with open_elf_headers(join_symfs(symfs, path)) as img:
                bid = normalize_build_id(img.build_id)
        except SymbolFileError:
            bid = None
    seen: set[str] = set()
    for cand in _user_candidates(path, bid, symfs, cache):
        if cand in seen:
            continue
        seen.add(cand)
        res.looked_in.append(cand)
        if not is_regular_file(cand):
            continue
        has_symtab, has_dynsym = _examine(cand, want, res, kernel=False)
        if has_symtab and res.syms is None:
            res.syms = cand
        if has_dynsym and res.runtime is None:
            res.runtime = cand
        if res.syms is not None and res.runtime is not None:
            break
    if res.syms is None and res.runtime is not None:
        res.syms = res.runtime
    if res.runtime is None and res.syms is not None:
        res.runtime = res.syms
    return res


def find_vmlinux(build_id: str | None, os_release: str | None, vmlinux: str | None = None,
                 symfs: str | None = None, debug_dir: str | None = None) -> DsoFiles:
    """Find a vmlinux ELF for the recorded kernel (see the module docstring).

    ``res.syms`` is the first candidate with a ``.symtab`` and a matching build id;
    a failure leaves the caller to kallsyms (perf's order).
    """
    want = normalize_build_id(build_id)
    res = DsoFiles("[kernel.kallsyms]", build_id=want)
    if vmlinux is not None:
        cands = [vmlinux if vmlinux.startswith("/") else join_symfs(symfs, vmlinux)]
    else:
        cands = []
        cache = debug_dir if debug_dir is not None else default_debug_dir()
        if want:
            cands.append(_cache_entry(cache, want, "elf"))
        cands.append("/boot/vmlinux")
        rel = os_release or ""
        if not symfs and rel and "/" not in rel and "\0" not in rel and rel not in (".", ".."):
            cands += [f"/boot/vmlinux-{rel}", f"/usr/lib/debug/boot/vmlinux-{rel}",
                      f"/lib/modules/{rel}/build/vmlinux",
                      f"/usr/lib/debug/lib/modules/{rel}/vmlinux",
                      f"/usr/lib/debug/boot/vmlinux-{rel}.debug"]
    for cand in cands:
        res.looked_in.append(cand)
        if not is_regular_file(cand):
            continue
        has_symtab, _ = _examine(cand, want, res, kernel=True)
        if has_symtab:
            res.syms = res.runtime = cand
            break
        if not any(r.startswith(cand) for r in res.rejected):
            res.rejected.append(f"{cand}: no .symtab (stripped)")
    return res


def load_dso_symbols(files: DsoFiles, kernel: bool = False) -> ElfSymbols:
    """The symbols of a found DSO (:class:`SymbolFileError` when there is no file)."""
    if files.syms is None:
        raise SymbolFileError(files.path, files.message().split(": ", 1)[-1])
    return load_elf_symbols(files.syms, files.runtime, kernel=kernel,
                            expect_build_id=files.build_id)
