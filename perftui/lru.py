"""A bounded cache that drops the least recently used entry first: the one LRU of perftui
(the browser's drawn lines, the profile's tables, parsed ELF headers, opened code files).

``functools.lru_cache`` fits a pure function of hashable arguments; these caches are keyed
by a widget's rows or a file's identity, are cleared when their data changes, and some are
shared between threads.  Every operation holds one lock (uncontended it costs ~0.1 µs).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

__all__ = ["LRU"]


class LRU(Generic[K, V]):
    """At most ``size`` entries; a hit makes its entry the most recent, an insertion
    beyond ``size`` drops the least recent."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"an LRU of {size} entries")
        self.size = size
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: K) -> bool:
        return key in self._entries

    def get(self, key: K) -> V | None:
        """The value of ``key`` (now the most recent), or None."""
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        """Keep ``value`` as the most recent; the least recent goes beyond ``size``."""
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def get_or_make(self, key: K, make: Callable[[], V]) -> V:
        """The value of ``key``, made by ``make()`` (outside the lock: two threads asking
        at once may each make it; the later one is kept) and kept when missing."""
        value = self.get(key)
        if value is None:
            value = make()
            self.put(key, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
