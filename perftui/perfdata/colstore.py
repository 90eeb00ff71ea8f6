"""Index columns in files mapped shared, not in anonymous memory.

A column is one file ``NAME.col`` of a store directory, mapped read-write; it grows by
extending the file and mapping it again (nothing is copied: the old map's pages are the
same file pages), and its pages belong to the page cache, so the process's anonymous
memory does not grow with the recording.  A store is either *kept* (its files stay, to
become a cache entry) or *anonymous* (each file is unlinked as soon as it is open: nothing
is left behind, even after a crash).
"""

from __future__ import annotations

import contextlib
import mmap
import os
import shutil
import tempfile
import weakref

import numpy as np
import numpy.typing as npt


class ColumnStore:
    """Column files in ``directory``; ``keep`` False unlinks each file once it is open."""

    def __init__(self, directory: str, keep: bool, fallback: bool = False) -> None:
        """``fallback``: a column the directory cannot take is made in memory
        (:attr:`broken` says why) instead of raising OSError."""
        self.directory = directory
        self.keep = keep
        self.fallback = fallback
        self._fds: dict[str, int] = {}
        # a fallback store that could not take a column (its directory removed by another
        # process, a full disk): the column is in memory instead, the store is not kept
        self.broken: str | None = None
        self._memory: dict[str, np.ndarray] = {}
        # a store nobody kept (its recording dropped, the process ending) leaves no files
        self._cleanup = weakref.finalize(self, shutil.rmtree, directory, True)

    def detach(self) -> None:
        """The directory is someone else's now (renamed into a cache entry)."""
        self._cleanup.detach()

    @classmethod
    def temporary(cls, parent: str | None = None) -> ColumnStore:
        """An anonymous store in a new directory under ``parent`` (default: TMPDIR)."""
        d = tempfile.mkdtemp(prefix="perftui-index-", dir=parent)
        store = cls(d, keep=False)
        return store

    def path(self, name: str) -> str:
        return os.path.join(self.directory, name + ".col")

    def _fd(self, name: str) -> int:
        fd = self._fds.get(name)
        if fd is None:
            fd = os.open(self.path(name), os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC,
                         0o600)
            if not self.keep:
                os.unlink(self.path(name))
            self._fds[name] = fd
        return fd

    def array(self, name: str, dtype: np.dtype | str, rows: int) -> np.ndarray:
        """Column ``name`` sized to ``rows`` rows (its file grown or cut to fit), mapped.

        Earlier arrays of the column stay valid over the rows they share with the file.
        A ``fallback`` store (a derived result's) that cannot take the column makes it in
        memory (what was computed is never lost to the cache) and :attr:`broken` says why.
        """
        if self.fallback:
            try:
                return self._mapped(name, dtype, rows)
            except OSError as e:
                self.broken = self.broken or (os.strerror(e.errno) if e.errno else str(e))
                return self._in_memory(name, np.dtype(dtype), rows)
        return self._mapped(name, dtype, rows)

    def _in_memory(self, name: str, dt: np.dtype, rows: int) -> np.ndarray:
        """Column ``name`` of a broken store: a new array with the rows it shares with the
        column's earlier array (from memory, or from its file)."""
        old = self._memory.get(name)
        if old is None and name in self._fds:
            with contextlib.suppress(OSError, ValueError):
                old = self._mapped(name, dt, os.fstat(self._fds[name]).st_size // dt.itemsize)
        new = scratch(dt, rows)
        if old is not None and old.dtype == dt:
            n = min(len(old), rows)
            new[:n] = old[:n]
        self._memory[name] = new
        return new

    def _mapped(self, name: str, dtype: np.dtype | str, rows: int) -> np.ndarray:
        dt = np.dtype(dtype)
        if name in self._memory:  # (broken before: it stays in memory)
            raise OSError(0, "column in memory")
        fd = self._fd(name)
        nbytes = rows * dt.itemsize
        old = os.fstat(fd).st_size
        os.ftruncate(fd, nbytes)
        if nbytes > old:
            # reserve the blocks now: on a full disk this raises OSError (ENOSPC); writing
            # into a map of a sparse file would kill the process with SIGBUS instead
            os.posix_fallocate(fd, old, nbytes - old)
        if nbytes == 0:
            return np.empty(0, dt)
        m = mmap.mmap(fd, nbytes, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        return np.frombuffer(m, dtype=dt)

    def nbytes(self) -> int:
        """Bytes the column files take on disk."""
        return sum(os.fstat(fd).st_blocks * 512 for fd in self._fds.values())

    def names(self) -> list[str]:
        return list(self._fds)

    def discard(self) -> None:
        """Close the files and remove the directory (maps in use stay valid)."""
        self.close()
        shutil.rmtree(self.directory, ignore_errors=True)

    def close(self) -> None:
        """Close the files (maps still in use stay valid); an anonymous store's directory
        goes too."""
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
        if not self.keep:
            with contextlib.suppress(OSError):
                os.rmdir(self.directory)


def scratch(dtype: npt.DTypeLike, rows: int) -> np.ndarray:
    """A temporary array of ``rows`` rows mapped from an unlinked file (file pages, which
    the kernel can write back and drop, not anonymous memory); in memory when no file can
    be made (a full or read-only TMPDIR).  Its pages go when the array does."""
    try:
        store = ColumnStore.temporary()
    except OSError:
        return np.zeros(rows, dtype)
    try:
        return store.array("a", np.dtype(dtype), rows)
    except OSError:
        return np.zeros(rows, dtype)
    finally:
        store.close()  # the map stays valid; the unlinked file and the directory go
