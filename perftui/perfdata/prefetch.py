"""Run an iterator a few items ahead in a thread of its own.

The index walk has two halves of about equal cost: finding the records (numpy over the
file's words, zstd) and turning each chunk of them into index rows (numpy gathers).  Both
spend most of their time in numpy or zstd, which let go of the GIL, so on two cores the
second half of chunk k runs while the first half finds chunk k + 1.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Iterator
from typing import Generic, TypeVar

__all__ = ["Prefetch"]

T = TypeVar("T")

_END = object()


class Prefetch(Generic[T]):
    """Iterate ``items`` (consumed in a thread) at most ``ahead`` items ahead of the caller.

    What the iterator raises is raised to the caller, in order.  Leaving the loop early
    (``break``, an exception, :meth:`close`) stops the thread at its next item; the
    iterator is closed in its own thread.  Use as a context manager so the thread is
    always stopped.
    """

    def __init__(self, items: Iterator[T], ahead: int = 2) -> None:
        self._items = items
        self._q: queue.Queue[object] = queue.Queue(maxsize=ahead)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="perftui-walk", daemon=True)
        self._thread.start()

    def _put(self, item: object) -> bool:
        """Hand ``item`` over unless the caller has stopped (False then)."""
        while not self._stop.is_set():
            try:
                self._q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        items = self._items
        try:
            for item in items:
                if not self._put((item,)):
                    break
        except BaseException as e:  # (handed to the caller's thread)
            self._put(e)
        else:
            self._put(_END)
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()

    def __iter__(self) -> Iterator[T]:
        while True:
            got = self._q.get()
            if got is _END:
                return
            if isinstance(got, BaseException):
                raise got
            yield got[0]  # type: ignore[index]

    def close(self) -> None:
        """Stop the thread (what it has fetched is dropped) and wait for it."""
        self._stop.set()
        while self._thread.is_alive():
            with contextlib.suppress(queue.Empty):
                self._q.get(timeout=0.05)  # (a put it is waiting on gets through)
        self._thread.join()

    def __enter__(self) -> Prefetch[T]:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
