"""The running kernel's vDSO: this process's ``[vdso]`` mapping copied to a file.

perf 6.1 reads a recording's vDSO from its build-id cache, where ``perf record`` put it
(``perf record -N`` does not); it copies its own process's mapping (``tools/perf/util/
vdso.c``) only for a recording without the vDSO's build id.  perftui also falls back to
this copy when the cache lacks the recorded image, so it names vDSO samples where perf
leaves their addresses bare.  The image is right for a recording only when it came from
the same kernel: the caller checks the build id (or, lacking one, the os release).

The copy is an unlinked temporary file held open for the life of the process, named by
its ``/proc/self/fd`` link: nothing is left in the temporary directory, even when the
process is killed."""

from __future__ import annotations

import os
import tempfile
from functools import lru_cache

_MAX = 1 << 20  # a vDSO is one or two pages


@lru_cache(maxsize=1)
def running_vdso_file() -> str | None:
    """A file holding this process's vDSO image (made once), or None."""
    try:
        with open("/proc/self/maps", encoding="ascii", errors="replace") as f:
            line = next((ln for ln in f if ln.rstrip().endswith("[vdso]")), None)
        if line is None:
            return None
        lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
        if not 0 < hi - lo <= _MAX:
            return None
        fd = os.open("/proc/self/mem", os.O_RDONLY)
        try:
            image = os.pread(fd, hi - lo, lo)
        finally:
            os.close(fd)
    except (OSError, ValueError, StopIteration):
        return None
    if image[:4] != b"\x7fELF":
        return None
    try:
        fd, path = tempfile.mkstemp(prefix="perftui-vdso-")
    except OSError:
        return None
    try:
        os.unlink(path)
        os.write(fd, image)
    except OSError:
        os.close(fd)
        return None
    return f"/proc/self/fd/{fd}"  # the fd stays open: the lru_cache keeps the one name
