"""Kernel module names from the forms perf and the file system use.

The kernel names a module after its file with hyphens turned into underscores: the file
``kvm-amd.ko.xz`` is the module ``kvm_amd``, shown by perf as the map ``[kvm_amd]``.
"""

from __future__ import annotations

import re

#: File name endings of kernel modules, longest first.
MODULE_SUFFIXES: tuple[str, ...] = (".ko.zst", ".ko.xz", ".ko.gz", ".ko")

# What a module name may contain (the kernel's own names are C-identifier-like plus hyphen
# in file names).  Anything else inside brackets is a perf pseudo map.
_MODNAME = re.compile(r"[A-Za-z0-9_-]+")

# Bracketed map names that look like module names but are not modules.
_PSEUDO_MAPS = frozenset(
    {
        "vdso",
        "vdso32",
        "vdsox32",
        "vsyscall",
        "vectors",
        "sigpage",
        "vvar",
        "vvar_vclock",
        "heap",
        "stack",
        "uprobes",
        "anon",
        "kernel",
        "guest",
        "kallsyms",
        "unknown",
        "jit",
    }
)
# BPF JIT images; real modules such as ``bpf_preload`` and ``bpf_testmod`` stay modules.
_PSEUDO_PREFIXES = ("bpf_prog", "bpf_trampoline", "bpf_dispatcher")


def strip_module_suffix(filename: str) -> str:
    """``filename`` without a trailing ``.ko``/``.ko.xz``/``.ko.gz``/``.ko.zst``."""
    for suffix in MODULE_SUFFIXES:
        if filename.endswith(suffix) and len(filename) > len(suffix):
            return filename[: -len(suffix)]
    return filename


def module_name(path_or_name: str) -> str:
    """The kernel's module name for a path, file name or ``[name]`` map name.

    ``/lib/modules/6.1.0/kernel/arch/x86/kvm/kvm-amd.ko.zst`` -> ``kvm_amd``;
    ``[kvm-amd]`` and ``[kvm_amd]`` -> ``kvm_amd``.  A section suffix after the bracket, as
    in the RFC's ``[kvm-amd].noinstr.text``, is ignored.  Hyphens become underscores.
    """
    text = path_or_name.strip()
    if text.startswith("[") and "]" in text:
        base = text[1 : text.index("]")]
    else:
        base = text.rstrip("/").rsplit("/", 1)[-1]
        base = strip_module_suffix(base)
    return base.replace("-", "_")


def is_module_path(filename: str) -> bool:
    """True for a kernel module file path (``.ko`` and compressed forms) or ``[name]`` map.

    False for perf's pseudo maps: ``[kernel.kallsyms]...``, ``[guest.kernel.kallsyms...]``,
    ``[vdso]``, ``[vsyscall]``, ``[bpf_prog]``-like names, ``//anon`` and the like.  A
    bracketed name counts only when it is exactly ``[name]`` with a module-like name
    (letters, digits, ``_`` and ``-``).
    """
    if not filename:
        return False
    if filename.startswith("[") and filename.endswith("]"):
        inner = filename[1:-1]
        if not _MODNAME.fullmatch(inner):
            return False
        low = inner.lower()
        return low not in _PSEUDO_MAPS and not low.startswith(_PSEUDO_PREFIXES)
    if filename.startswith("//"):
        return False
    base = filename.rsplit("/", 1)[-1]
    return any(base.endswith(s) and len(base) > len(s) for s in MODULE_SUFFIXES)
