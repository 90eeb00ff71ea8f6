"""Read each symbol file once: a cache of loaded symbol tables (thread-safe).

A user ELF file's table is also kept on disk between runs when the cache has a
:class:`~.diskcache.TableStore` (keyed by the files' content).  Entries are keyed by build
id when one is known (the same file mapped by many processes, or found under several
paths, is read once), else by ``(path, size, mtime_ns, inode)`` of
the file, so a rebuilt file is read again.  Failures are cached too (as the
:class:`~perftui.symbols.files.safefile.SymbolFileError` to re-raise), so a missing or hostile
file costs one attempt.

Public API: :class:`SymbolCache` with ``get(key, loader) -> value``, ``file_key(path,
build_id=None) -> tuple``, ``elf(path, runtime_path=None, build_id=None, kernel=False) ->
ElfSymbols`` and ``__len__``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Hashable
from typing import TypeVar

from perftui.symbols.files.safefile import SymbolFileError
from perftui.symbols.modules.modlocate import normalize_build_id
from perftui.symbols.tables.diskcache import TableStore, elf_key
from perftui.symbols.tables.elfsyms import ElfSymbols, load_elf_symbols

__all__ = ["SymbolCache"]

T = TypeVar("T")


class SymbolCache:
    """Loaded symbol sources, each loaded once (see the module docstring)."""

    def __init__(self, disk: TableStore | None = None) -> None:
        #: user ELF tables kept between runs (:mod:`.diskcache`; None: read every run)
        self.disk = disk
        self._lock = threading.Lock()
        self._entries: dict[Hashable, object] = {}
        self._loading: dict[Hashable, threading.Event] = {}

    def __len__(self) -> int:
        return len(self._entries)

    @staticmethod
    def file_key(path: str, build_id: str | None = None) -> tuple[Hashable, ...]:
        """``("build-id", hex)`` when a valid build id is given, else the file's identity."""
        bid = normalize_build_id(build_id)
        if bid is not None:
            return ("build-id", bid)
        try:
            st = os.stat(path)
            return ("file", os.path.realpath(path), st.st_size, st.st_mtime_ns, st.st_ino)
        except (OSError, ValueError):
            return ("missing", path)

    def get(self, key: Hashable, loader: Callable[[], T]) -> T:
        """The cached value for ``key``, loading it with ``loader()`` the first time.

        A :class:`SymbolFileError` from the loader is cached and raised again.  Two
        threads asking for the same key at once load it once.
        """
        while True:
            with self._lock:
                if key in self._entries:
                    value = self._entries[key]
                    if isinstance(value, SymbolFileError):
                        raise value
                    return value  # type: ignore[return-value]
                event = self._loading.get(key)
                if event is None:
                    event = self._loading[key] = threading.Event()
                    break
            event.wait()
        stored: object
        try:
            stored = loader()
        except SymbolFileError as e:
            stored = e
        except BaseException:
            with self._lock:
                self._loading.pop(key, None)
            event.set()
            raise
        with self._lock:
            self._entries[key] = stored
            self._loading.pop(key, None)
        event.set()
        if isinstance(stored, SymbolFileError):
            raise stored
        return stored

    def elf(self, path: str, runtime_path: str | None = None, build_id: str | None = None,
            kernel: bool = False) -> ElfSymbols:
        """:func:`~perftui.symbols.tables.elfsyms.load_elf_symbols` of ``path``, read once."""
        key = (self.file_key(path, build_id), runtime_path, kernel)
        return self.get(key, lambda: self._load_elf(path, runtime_path, build_id, kernel))

    def _load_elf(self, path: str, runtime_path: str | None, build_id: str | None,
                  kernel: bool) -> ElfSymbols:
        disk = self.disk if not kernel else None
        key = elf_key(path, runtime_path, build_id) if disk is not None else None
        if disk is not None and key is not None:
            got = disk.load(key, path, runtime_path)
            if got is not None:
                return got
        syms = load_elf_symbols(path, runtime_path, kernel=kernel, expect_build_id=build_id)
        if disk is not None and key is not None:
            disk.save(key, syms)
        return syms
