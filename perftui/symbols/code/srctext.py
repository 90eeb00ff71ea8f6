"""The text of source lines named by DWARF, for showing next to instructions.

The paths come from a file's line table: untrusted.  Only regular files are read (never a
FIFO or a device), at most :data:`MAX_SOURCE` bytes each, decoded as UTF-8 with errors
replaced; a file that cannot be read gives None (the caller shows ``file:line``).  Each
file is read once per :class:`SourceFiles`.
"""

from __future__ import annotations

import threading

from ..errors import FileError
from ..files.decompress import read_capped

__all__ = ["MAX_SOURCE", "SourceFiles"]

MAX_SOURCE = 8 << 20


class SourceFiles:
    """Source files read on demand and kept (thread-safe)."""

    def __init__(self, max_size: int = MAX_SOURCE) -> None:
        self._max = max_size
        self._files: dict[str, list[str] | None] = {}
        self._lock = threading.Lock()

    def lines(self, path: str) -> list[str] | None:
        """The lines of ``path`` (without line ends), None when it cannot be read."""
        with self._lock:
            if path in self._files:
                return self._files[path]
        try:
            text: list[str] | None = read_capped(path, self._max).decode(
                "utf-8", "replace").splitlines()
        except (FileError, OSError, ValueError):
            text = None
        with self._lock:
            self._files[path] = text
        return text

    def line(self, path: str, number: int) -> str | None:
        """Line ``number`` (1-based) of ``path``, None when unknown."""
        lines = self.lines(path)
        if lines is None or not 1 <= number <= len(lines):
            return None
        return lines[number - 1]
