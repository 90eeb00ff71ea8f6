"""Give the C heap's free pages back to the system (glibc's ``malloc_trim``).

perftui's temporaries below glibc's mmap threshold (32 MiB, set by the command line) come
from the heap; once a big phase is over (the thread model built, the resolver and its
symbol tables dropped), its free pages stay counted in the process's RssAnon until they
are trimmed: measured 243 -> 127 MB after a report's names were resolved.
"""

from __future__ import annotations


def trim() -> None:
    """Return the heap's free memory to the system (nothing off glibc)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
