"""Errors of the decoder: every one names a file offset."""

from __future__ import annotations


class PerfDataError(Exception):
    """A recording that cannot be decoded at ``offset``.

    ``offset`` is a byte offset in the file the user gave (for a record inside a
    compressed record: the offset of that compressed record, as perf reports it).
    """

    def __init__(self, offset: int, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.offset = offset
        self.message = message
        self.path = path

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        return f"{where}offset {self.offset:#x} ({self.offset}): {self.message}"

    def as_dict(self) -> dict[str, object]:
        return {"offset": self.offset, "message": self.message}


class NotPerfData(PerfDataError):
    """The input is not a perf.data recording perftui can read (bad magic, v1, ...)."""
