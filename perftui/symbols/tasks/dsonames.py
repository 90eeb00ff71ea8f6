"""The names perf 6.1 gives to what a MMAP record maps (tools/perf/util/map.c, dso.c, machine.c).

These are the strings ``perf script -F dso`` prints: a user file by its recorded path, an
anonymous executable mapping as ``/tmp/perf-<pid>.map`` (where perf looks for JIT symbols),
the vDSO as ``[vdso]``, the kernel as ``[kernel.kallsyms]``, a module as ``[name]`` (or, when the
recording's build-id table lists it, by that table's path), a KSYMBOL by its own name.
"""

from __future__ import annotations

import re
from enum import IntEnum

KERNEL_DSO = "[kernel.kallsyms]"
#: machine__process_kernel_mmap_event compares ``strlen("[kernel.kallsyms]") - 1`` bytes, so
#: ``[kernel.kallsyms]_text`` and ``[kernel.kallsyms]_stext`` are both the kernel map.
KERNEL_MMAP_PREFIX = KERNEL_DSO[:-1]
VDSO = "[vdso]"
#: x86_64 PTI entry trampolines (machine.c perf_event__is_extra_kernel_mmap)
ENTRY_TRAMPOLINE = "__entry_SYSCALL_64_trampoline"
#: KMAP_NAME_LEN: perf copies a kernel MMAP's name into a 256-byte buffer
KMAP_NAME_LEN = 256
#: module compressions perf 6.1 understands (dso.c ``compressions[]``: gzip with zlib, xz
#: with lzma; zstd modules are not recognised by 6.1 and keep their file name)
COMPRESSIONS = ("gz", "xz")
#: kmod_path__parse: these bracketed names are not modules
_NOT_MODULES = ("[kernel.kallsyms]", "[guest.kernel.kallsyms", "[vdso]", "[vdso32]",
                "[vdsox32]", "[vsyscall]")
PROT_EXEC = 4
MAP_HUGETLB = 0x40000


class MapKind(IntEnum):
    """What a map is, for the resolver: where its symbols come from."""

    USER = 0  # a file: ELF symbols through pgoff and the program headers
    ANON = 1  # anonymous or [heap]/[stack] data, never symbolised
    JIT = 2  # anonymous executable: /tmp/perf-<pid>.map
    VDSO = 3  # [vdso]
    KERNEL = 4  # the kernel map ([kernel.kallsyms]_text MMAP)
    MODULE = 5  # a kernel module MMAP
    KSYMBOL = 6  # a KSYMBOL record (BPF program, trampoline): name and range in the record
    KERNEL_EXTRA = 7  # an x86_64 PTI entry trampoline map of the kernel


def kmod_name(path: str) -> tuple[str, bool]:
    """perf's ``__kmod_path__parse``: (name, is_module) of a kernel MMAP's file name.

    ``/lib/modules/.../nf-nat.ko.xz`` gives ``[nf_nat]``; ``[name]`` (old perf) stays as it
    is; other files keep their base name, with ``-`` replaced by ``_`` as perf does.
    """
    name = path.rsplit("/", 1)[-1]
    if name.startswith("["):
        return name, not name.startswith(_NOT_MODULES)
    dot = name.rfind(".")
    if dot < 0:
        return name, False
    ext = dot
    if name[dot + 1:] in COMPRESSIONS:
        ext -= 3
    kmod = ext > 0 and name[ext:ext + 3] == ".ko"
    out = f"[{name[:ext]}]" if kmod else name
    return out.replace("-", "_"), kmod


def is_anon(filename: str, flags: int) -> bool:
    """map.c ``is_anon_memory`` (or a MAP_HUGETLB mapping)."""
    return (filename == "//anon" or filename.startswith("/dev/zero")
            or filename.startswith("/anon_hugepage") or bool(flags & MAP_HUGETLB))


def is_no_dso(filename: str) -> bool:
    """map.c ``is_no_dso_memory``: stacks, SysV shared memory, the heap."""
    return filename.startswith("[stack") or filename.startswith("/SYSV") or filename == "[heap]"


_PERF_MAP = re.compile(r"/tmp/perf-(\d+)\.map")


def perf_map_pid(dso_name: str) -> int | None:
    """The pid of a JIT map's dso name (``/tmp/perf-<pid>.map``, :func:`user_map_name`'s),
    None for any other name."""
    m = _PERF_MAP.fullmatch(dso_name)
    return int(m.group(1)) if m else None


def user_map_name(filename: str, prot: int, flags: int, ns_pid: int) -> tuple[str, MapKind]:
    """The dso name and kind of a user MMAP, as perf 6.1 ``map__new`` names it.

    ``ns_pid`` is the pid the mapping thread was created with (perf's ``thread->nsinfo``);
    0 means no namespace info (the idle thread), which leaves an anonymous map's name alone.
    """
    anon = is_anon(filename, flags)
    no_dso = is_no_dso(filename)
    if (anon or no_dso) and ns_pid != 0 and prot & PROT_EXEC:
        return f"/tmp/perf-{ns_pid}.map", MapKind.JIT
    if filename == VDSO:
        return VDSO, MapKind.VDSO
    if anon or no_dso:
        return filename, MapKind.ANON
    return filename, MapKind.USER

