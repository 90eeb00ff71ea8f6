"""Open files named by a recording without trusting them.

Every symbol source reads through here: only regular files (a symlink to one is fine) are
opened, without blocking (a FIFO or device is refused before it is opened, and again after,
in case the path changed in between), and sizes are capped.  Every problem is one
:class:`SymbolFileError` whose message is a single line naming the file.

Public API:

- :class:`SymbolFileError` ``(path, problem)``: ``str(e)`` is ``"<path>: <problem>"``.
- :func:`open_regular` ``(path, max_size) -> (fd, size)``: an fd the caller closes.
- :func:`read_at` ``(fd, path, offset, size, what) -> bytes``: exactly ``size`` bytes.
- :func:`read_text` ``(path, max_size) -> str``: a whole small text file (UTF-8, errors
  replaced); :func:`read_bytes` ``(path, max_size) -> bytes``: its bytes.
- :func:`is_regular_file` ``(path) -> bool``.
"""

from __future__ import annotations

import os
import stat

from perftui.symbols.errors import FileError
from perftui.symbols.files.decompress import mib
from perftui.symbols.files.decompress import open_regular as open_capped
from perftui.textsafe import safe

__all__ = ["SymbolFileError", "is_regular_file", "join_symfs", "open_regular", "read_at",
           "read_bytes", "read_text"]


class SymbolFileError(FileError):
    """A symbol file cannot be used; the message is one line naming the file and the problem."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(path, " ".join(problem.split()))
        self.args = (f"{safe(path, 300)}: {safe(self.problem, 300)}",)


def join_symfs(symfs: str | None, path: str) -> str:
    """perf's ``path__join(symfs, path)``: ``path`` under perf's ``--symfs`` directory."""
    if not symfs:
        return path
    return symfs.rstrip("/") + "/" + path.lstrip("/")


def is_regular_file(path: str) -> bool:
    """True when ``path`` names a regular file (following symlinks)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def open_regular(path: str, max_size: int) -> tuple[int, int]:
    """Open a regular file of at most ``max_size`` bytes; return ``(fd, size)``."""
    return open_capped(path, max_size, SymbolFileError)


def read_at(fd: int, path: str, offset: int, size: int, what: str) -> bytes:
    """``size`` bytes at ``offset``; a short read (file shrank, bad offset) is an error."""
    if offset < 0 or size < 0:
        raise SymbolFileError(path, f"{what}: bad offset {offset:#x} or size {size:#x}")
    chunks: list[bytes] = []
    done = 0
    try:
        while done < size:
            chunk = os.pread(fd, min(size - done, 1 << 24), offset + done)
            if not chunk:
                break
            chunks.append(chunk)
            done += len(chunk)
    except (OSError, OverflowError) as e:
        raise SymbolFileError(path, f"cannot read {what}: {getattr(e, 'strerror', None) or e}"
                              ) from None
    if done < size:
        raise SymbolFileError(
            path, f"{what} (offset {offset:#x}, size {size:#x}) extends past the end of the file"
        )
    return b"".join(chunks)


def read_text(path: str, max_size: int) -> str:
    """The whole text of a small regular file (UTF-8, undecodable bytes replaced)."""
    return read_bytes(path, max_size).decode("utf-8", "replace")


def read_bytes(path: str, max_size: int) -> bytes:
    """The whole content of a small regular file."""
    fd, size = open_regular(path, max_size)
    try:
        data = read_at(fd, path, 0, size, "file")
        extra = os.pread(fd, 1, size)  # grew since fstat: still capped
    except OSError as e:
        raise SymbolFileError(path, f"cannot read: {e.strerror or e}") from None
    finally:
        os.close(fd)
    if extra and size >= max_size:
        raise SymbolFileError(path, f"file is over the {mib(max_size)} cap")
    return data
