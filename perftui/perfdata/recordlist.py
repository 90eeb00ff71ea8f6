"""Every record of a recording decoded, in the order perf reads them.

:func:`records` walks the records (a ``perf.data/`` directory is indexed first, its
``data.N`` merged by time); :func:`indexed_records` reads them back by index row.  Each is a
dict of the decoded fields with the file offset perf names; a malformed body is an
``error`` field and an entry of the recording's errors.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .constants import type_name
from .errors import PerfDataError
from .index import NO_SOURCE

if TYPE_CHECKING:
    from .recording import Recording

__all__ = ["indexed_records", "records"]


def records(rec: Recording) -> Iterator[dict[str, Any]]:
    """Every record decoded, as perf reads them: file order; for a ``perf.data/``
    directory ``data`` first, then every ``data.N`` merged by time (this builds the
    index).  Each dict has ``offset`` (the file offset perf names), the decoded fields,
    ``compressed`` for records from a COMPRESSED record, ``file`` in directory mode and
    ``error`` for a malformed body (also added to ``rec.errors``).
    """
    if rec.mode == "directory":
        yield from _directory_records(rec)
        return
    for src, ch in rec.chunks():
        rows = rec.builder.rows(ch, max(src, 0))
        types, attrs, sizes = rows["type"], rows["attr"], rows["size"]
        for i in range(len(ch.offs)):
            rel = ch.offs[i] - ch.base
            raw = bytes(ch.buf[rel:rel + int(sizes[i])])
            offset = ch.outer if ch.outer is not None else int(ch.offs[i])
            head: dict[str, Any] = {"offset": offset}
            if ch.outer is not None:
                head["compressed"] = True
            try:
                fields = rec.decoder.decode(raw, int(attrs[i]), int(types[i]))
            except ValueError as e:
                rec.errors.append(PerfDataError(offset, str(e), rec.path))
                fields = {"type": type_name(int(types[i])), "misc": 0,
                          "size": int(sizes[i]), "error": str(e)}
            head.update(fields)
            yield head


def _directory_records(rec: Recording) -> Iterator[dict[str, Any]]:
    rec.spill = True
    rec.build_index()
    for _i, head in indexed_records(rec):
        yield head


def indexed_records(rec: Recording) -> Iterator[tuple[int, dict[str, Any]]]:
    """(index row, record) of an indexed recording, as :func:`records` gives them (a
    directory's ``data.N`` merged by time), each record read back by its row."""
    directory = rec.mode == "directory"
    # the file order unless a directory's files are merged: counted, not listed (an
    # array of every row took 8 bytes a record for as long as a dump ran)
    merged = directory and len(rec.index.stream_starts) >= 2
    compressed: dict[int, bool] = {}  # source -> it holds decompressed records
    for i in rec.merged_order() if merged else range(len(rec.columns)):
        i = int(i)
        src = int(rec.columns["src"][i])
        inner = compressed.get(src)
        if inner is None:
            inner = compressed[src] = src != NO_SOURCE and len(rec.outer_map(src)) > 0
        # (a record of no COMPRESSED one is at its own position: no lookup a record)
        head: dict[str, Any] = {"offset": rec.outer_offset(i) if inner
                                else int(rec.columns["pos"][i])}
        if inner:
            head["compressed"] = True
        if directory:
            head["file"] = rec.source_name(i)
        try:
            head.update(rec.decode(i))
        except ValueError as e:
            rec.errors.append(PerfDataError(head["offset"], str(e), rec.path))
            head.update({"type": type_name(int(rec.columns["type"][i])), "misc": 0,
                         "size": int(rec.columns["size"][i]), "error": str(e)})
        yield i, head
