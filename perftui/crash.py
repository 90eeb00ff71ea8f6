"""Unhandled exceptions: the full traceback goes to a file, the user gets one line."""

from __future__ import annotations

import os
import tempfile
import time
import traceback

EXIT_INTERNAL = 3  # exit status of a crash (0 ok, 1 bad input, 2 bad usage)


def crash_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "perftui")


def write_traceback(error: BaseException) -> str:
    """Write ``error``'s traceback to a new file; returns its path."""
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for folder in (crash_dir(), tempfile.gettempdir()):
        try:
            os.makedirs(folder, exist_ok=True)
            fd, path = tempfile.mkstemp(prefix=f"crash-{stamp}-", suffix=".txt", dir=folder)
        except OSError:
            continue
        with os.fdopen(fd, "w") as f:
            f.write(text)
        return path
    return "(nowhere: no writable cache or temporary directory)"


def crash_line(error: BaseException, path: str) -> str:
    """The one line a user sees."""
    what = f"{type(error).__name__}: {error}".splitlines()[0][:200]
    return f"perftui: internal error ({what}); the full traceback is in {path}"
