"""An unfinished recording (``perf record`` still writing it: the header's data size 0, no
features yet, so neither build id nor release nor hostname) made on this machine: its
kernel map's ``_text`` (the kernel MMAP's pgoff, randomised per boot by KASLR) equals this
machine's ``/proc/kallsyms`` ``_text``, and the running kernel's symbols fit it.

perf 6.1 falls back to ``/proc/kallsyms`` for a kernel without a build id whatever the
machine (``dso__find_kallsyms``); perftui asks for this boot's ``_text`` first.
"""

from __future__ import annotations

from ...perfdata import Recording, RecordType
from ..tasks.dsonames import KERNEL_DSO

#: said in the naming notes, and by the main screen's header
LIVE_KALLSYMS = "kernel: this machine's /proc/kallsyms used"
_MMAP_ROWS = 4096  # the kernel map is among the first records: looked for no further


def unfinished(rec: Recording) -> bool:
    """Whether the file's header still says data size 0 (perf record has not ended)."""
    data = rec.header.get("data") if isinstance(rec.header, dict) else None
    return isinstance(data, dict) and data.get("size") == 0 and rec.path is not None


def recorded_text(rec: Recording) -> int | None:
    """The recorded kernel's ``_text``: the pgoff of its ``[kernel.kallsyms]`` MMAP."""
    rows = rec.index.rows_of_type(RecordType.MMAP, RecordType.MMAP2)[:_MMAP_ROWS]
    for row in rows.tolist():
        try:
            d = rec.decode(int(row))
        except ValueError:
            continue
        name = str(d.get("filename", ""))
        if d.get("pid") == -1 and name.startswith(KERNEL_DSO[:-1]):
            pgoff = d.get("pgoff")
            return int(pgoff) if pgoff else None
    return None


def running_text(path: str) -> int | None:
    """``_text`` in a kallsyms file (None: not there, or hidden as 0 by kptr_restrict)."""
    try:
        with open(path, "rb") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[2] == b"_text" and parts[1] in (b"T", b"t"):
                    addr = int(parts[0], 16)
                    return addr or None
    except (OSError, ValueError):
        return None
    return None


def this_boot(rec: Recording, kallsyms: str) -> int | None:
    """The ``_text`` an unfinished recording shares with ``kallsyms`` (None: not
    unfinished, or another boot or machine)."""
    if not unfinished(rec):
        return None
    text = recorded_text(rec)
    return text if text is not None and text == running_text(kallsyms) else None
