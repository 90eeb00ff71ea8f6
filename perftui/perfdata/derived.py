"""Results derived from a recording, kept with its index cache entry: one way in, one out.

Everything perftui works out from a recording and keeps for the next open (each row's
module section, the timeline's fine bins, the section map and its counts, the names, the
profile groups, the unwound chains) is kept alike: a *derived result* of a name, a JSON
``meta`` and named arrays, in a directory ``att-NAME`` of the recording's cache entry
(:meth:`~.indexcache.IndexCache.commit_attachment`).  One kept while the walk's entry is
still being made goes in with it; one kept later is added to the entry.  It goes when the
entry goes (the file changed, evicted, ``perftui cache --clear``).

Reading one back (:func:`kept`) is one way too: the owner's ``restore`` holds the meta to
what the result depends on (raising :class:`Stale`), then its arrays to their checksums
and dtypes (:meth:`~.cacheentry.CachedIndex.checked`) and their values to their ranges
(:func:`~.cacheentry.in_range`, :func:`~.cacheentry.one_per`,
:func:`~.cacheentry.starts_of`).  A result that fails any of these is removed, said once
in the cache's notes, and worked out again; it is never trusted.  What was kept or read
back is remembered by the index (``RecordingIndex.kept``) for the rest of the session.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from .cacheentry import CachedIndex, CacheError
from .colstore import ColumnStore

if TYPE_CHECKING:
    from .indexcache import IndexCache
    from .recording import Recording

__all__ = ["Stale", "begin", "commit", "keep", "kept"]

T = TypeVar("T")
#: what a bad result raises while it is read back (it is then removed, never trusted)
READ_ERRORS = (CacheError, KeyError, TypeError, ValueError, IndexError, OSError)


class Stale(Exception):
    """Raised by a ``restore``: the result was made from other inputs.  It is removed (the
    message, if there is one, said once) and worked out again."""


def _place(rec: Recording) -> tuple[IndexCache, str, str | None] | None:
    """(the cache, the entry's key, the directory of the entry still being made, else
    None), or None when nothing of this recording can be kept."""
    cache = rec.cache
    if cache is None:
        return None
    store = rec.index.store
    if store is not None and not store.keep:  # columns in temporary files: no entry
        return None
    ident = rec.identity()
    if ident is None:
        return None
    return cache, ident[0], store.directory if store is not None else None


def begin(rec: Recording) -> ColumnStore | None:
    """A store for the arrays of a result written as they are computed (``store.array``),
    then kept by :func:`commit`; None when the recording's entry cannot take one."""
    place = _place(rec)
    return None if place is None else place[0].begin_attachment(place[1], place[2])


def commit(rec: Recording, store: ColumnStore | None, name: str, meta: dict[str, Any],
           arrays: dict[str, np.ndarray], rows: int, replaces: str | None = None,
           value: Any = None) -> bool:
    """Keep result ``name`` (``arrays``: files of ``store`` from :func:`begin`, or written
    into it now; ``rows``: what it has one value per).  ``replaces``: a name prefix; the
    entry's other results of it go (an entry keeps one of them).  ``value``: what
    :func:`kept` gives for ``name`` in this session, even when ``store`` is None (nowhere
    to keep it).  False when it is not kept (the cache's notes say why)."""
    if value is not None:
        rec.index.kept[name] = value
    place = _place(rec)
    if store is None or place is None:
        if store is not None:
            store.discard()
        return False
    cache, key, within = place
    ok = cache.commit_attachment(store, key, name, {"rows": rows, "meta": meta}, arrays,
                                 within)
    if ok and replaces is not None:
        cache.drop_attachments(key, replaces, name, within)
    return ok


def keep(rec: Recording, name: str, meta: dict[str, Any],
         arrays: dict[str, np.ndarray] | None = None, rows: int = 0,
         value: Any = None) -> bool:
    """Keep result ``name`` of arrays already computed (:func:`commit`); ``value`` is
    remembered even when there is no cache to keep it in."""
    return commit(rec, begin(rec), name, meta, arrays or {}, rows, value=value)


def kept(rec: Recording, name: str, restore: Callable[[CachedIndex], T | None],
         what: str, again: str, remember: bool = True) -> T | None:
    """Result ``name`` as ``restore`` makes it of the kept one (``remember``: and kept
    for the session; else made anew on each call), or None: none kept, or ``restore``
    gave None (kept, not for this caller), or it failed (removed, said once: "cached WHAT
    not usable (why): AGAIN")."""
    got = rec.index.kept.get(name) if remember else None
    if got is not None:
        return got  # type: ignore[no-any-return]
    place = _place(rec)
    if place is None:
        return None
    cache, key, within = place
    att = cache.attachment(key, name, within, what, again)
    if att is None:
        return None
    try:
        value = restore(att)
    except Stale as e:
        cache.discard(att.directory, str(e) or None)
        return None
    except READ_ERRORS as e:
        cache.discard(att.directory, f"cached {what} not usable ({e}): {again}")
        return None
    if value is not None and remember:
        rec.index.kept[name] = value
    return value
