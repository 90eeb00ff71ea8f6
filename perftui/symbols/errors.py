"""Errors of the symbol layer: one line naming the file and the problem."""

from __future__ import annotations

from ..textsafe import safe


class FileError(Exception):
    """A file named by a recording cannot be used (missing, not regular, too big, corrupt)."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{safe(path, 300)}: {safe(problem, 300)}")


class ModuleFileError(FileError):
    """A kernel module file cannot be used."""
