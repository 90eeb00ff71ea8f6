"""Where symbols may come from (perf's options): light, so that what only passes them on
(the browser's start-up, the command line) does not import the resolver."""

from __future__ import annotations

from dataclasses import dataclass, field

#: a module's samples counted in .text because the recording has no section map
ASSUMED_TEXT = "assumed .text: no section map in this recording"


@dataclass
class SymbolOptions:
    """Where symbols may come from (perf's option names where perf has them)."""

    kallsyms: str | None = None  # --kallsyms FILE
    vmlinux: str | None = None  # --vmlinux FILE
    symfs: str | None = None  # --symfs DIR
    modules_dirs: list[str] = field(default_factory=list)  # --modules-dir DIR...
    debug_dir: str | None = None  # the build-id cache (default ~/.debug)
    perfmap_dir: str = "/tmp"  # where perf-<pid>.map files are
    proc_kallsyms: str = "/proc/kallsyms"  # the running kernel's (when it matches)
    inline: bool = True  # --inline / --no-inline: inlined frames in unwound stacks
    stitch_lbr: bool = False  # --stitch-lbr: LBR call stacks continued by earlier samples
