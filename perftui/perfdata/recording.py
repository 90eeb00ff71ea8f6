"""Opening a recording: file, pipe and directory mode, header, attrs, features, walk.

:class:`Recording` is the entry point of the headless decoder.  Opening reads only the
header, the attrs and the feature sections (file mode); the records are walked lazily
(:meth:`Recording.chunks`), counted in one pass that keeps no index (:meth:`Recording.scan`)
or indexed into numpy columns (:meth:`Recording.build_index`), which an index cache
(``indexcache``) keeps for the next open (:meth:`Recording.save_index`).

The walk that builds the index is :mod:`~perftui.perfdata.indexwalk`; finding, restoring,
checking and saving the index in the cache is :mod:`~perftui.perfdata.indexpersist`.  The
methods of :class:`Recording` that start them are thin calls into those modules.
"""

from __future__ import annotations

import contextlib
import os
import struct
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from ..heap import trim
from . import indexpersist, indexwalk
from .attr import EventAttr, parse_attr
from .callchains import Callchains, sample_callchains
from .colstore import ColumnStore, scratch
from .constants import (
    PIPE_HEADER_SIZE,
    Feature,
    RecordType,
    feature_name,
    type_name,
)
from .errors import NotPerfData, PerfDataError
from .features import parse_feature, parse_tracing_data
from .header import detect, read_file_header
from .index import NO_SOURCE, Columns, IndexBuilder, RowList, distinct, gather
from .indexcache import CachedIndex, CacheError, IndexCache
from .prefetch import Prefetch
from .records import RecordDecoder
from .sources import MmapSource, Source, SpillSource
from .speculate import release_scratch
from .stats import IndexStats
from .walk import Chunk, StreamState, Walker

MAX_SOURCES = NO_SOURCE  # the src column is u2: data files and spills, at most this many
SCAN_BLOCK = 1 << 20  # rows per block when a whole column is scanned


class Recording:
    """One perf.data recording (file, pipe-mode file or stream, or directory).

    ``cache``: where a complete index is kept and found again (no cache: every open walks
    the records).  ``mapped``: index columns in files mapped shared (unlinked temporary
    files when there is no cache) instead of anonymous memory, so memory does not grow
    with the recording; with a cache they always are.
    """

    def __init__(self, path: str | os.PathLike[str] | None, stream: BinaryIO | None = None,
                 spill: bool = True, cache: IndexCache | None = None,
                 mapped: bool = False) -> None:
        self.path = str(path) if path is not None else "-"
        self.spill = spill
        self.errors: list[PerfDataError] = []
        self.warnings: list[str] = []
        self.attrs: list[EventAttr] = []
        self.features: dict[int, Any] = {}
        self.feature_errors: dict[int, str] = {}
        self.tracepoints: dict[int, str] = {}
        self.header: dict[str, Any] = {}
        self.sources: list[Source] = []
        self.streams: list[tuple[int, str, int, int]] = []  # (src, name, start, end)
        self.walks = 0
        self.stream_starts: list[int] = []  # first index row of each stream (data, data.N)
        self.extra_files: list[str] = []
        self.columns = Columns()
        self.stats = IndexStats()
        self.others = RowList("others")  # rows of every record that is not a SAMPLE
        self.cache = cache
        self.mapped = mapped or cache is not None
        self.store: ColumnStore | None = None
        self.index_origin = ""  # "walk" or "cache" once an index is being built
        self.outer_maps: dict[int, np.ndarray] = {}  # spill source -> (spill pos, outer)
        self.derived_arrays: dict[str, np.ndarray] = {}
        self.derived_meta: dict[str, Any] = {}
        self.cache_entry: CachedIndex | None = None  # the cache entry the index comes from
        self.entry_others: np.ndarray | None = None  # its rows that are not samples
        self._rows = 0
        self.indexed = False
        self.cancelled = False
        self.unknown_ids = 0
        self.stdin: BinaryIO | None = None  # standard input, read once
        self.last_walker: Walker | None = None  # of the last walk (spills, outer maps)
        self._stdin_head = b""
        self.buf: memoryview | None = None
        if stream is not None:
            self._open_stream(stream)
        elif self.path == "-":
            self._open_stream(sys.stdin.buffer)
        elif os.path.isdir(self.path):
            self._open_directory(self.path)
        else:
            self._open_file(self.path)
        self.n_open_errors = len(self.errors)  # errors after these are the walk's
        self.n_file_sources = len(self.sources)
        self.decoder = RecordDecoder(self.order, self.attrs)
        self.builder = IndexBuilder(self.order)
        self.builder.set_attrs(self.attrs)

    # -- opening -------------------------------------------------------------------------
    def _map(self, path: str, name: str) -> MmapSource:
        try:
            return MmapSource.open(path, name)
        except OSError as e:
            raise NotPerfData(0, f"cannot read: {e.strerror}", path) from None

    def _open_file(self, path: str) -> None:
        source = self._map(path, os.path.basename(path))
        self.sources.append(source)
        buf = source.buf
        self.order, self.mode = detect(bytes(buf[:16]), path)
        self.buf = buf
        self.file_size = len(buf)
        src = len(self.sources) - 1
        if self.mode == "pipe":
            self.streams.append((src, os.path.basename(path), PIPE_HEADER_SIZE, len(buf)))
            return
        h = read_file_header(buf, path, self.order)
        self.header, self.feature_bits, self.attrs = h.header, h.feature_bits, h.attrs
        self.interrupted = h.interrupted
        self.errors.extend(h.errors)
        self.warnings.extend(h.warnings)
        for bit in sorted(h.features):
            self._add_feature(bit, h.features[bit])
        self.streams.append((src, os.path.basename(path), h.data_start, h.data_end))

    def _open_directory(self, path: str) -> None:
        data = os.path.join(path, "data")
        if not os.path.isfile(data):
            raise NotPerfData(0, "a directory without a 'data' file is not a perf.data "
                              "directory", path)
        self._open_file(data)
        self.mode = "directory"
        names = sorted((n for n in os.listdir(path) if n.startswith("data.")
                        and n[5:].isdigit()), key=lambda n: int(n[5:]))
        if 2 * (len(names) + 1) >= MAX_SOURCES:  # each may add a decompressed spill
            raise NotPerfData(0, f"{len(names)} data.N files: more than perftui can index "
                              f"({MAX_SOURCES // 2 - 1})", path)
        for n in names:
            source = self._map(os.path.join(path, n), n)
            self.sources.append(source)
            self.streams.append((len(self.sources) - 1, n, 0, len(source.buf)))
            self.extra_files.append(n)

    def _open_stream(self, f: BinaryIO) -> None:
        head = b""
        while len(head) < 16:
            more = f.read(16 - len(head))
            if not more:
                break
            head += more
        self.order, self.mode = detect(head, self.path)
        if self.mode != "pipe":
            raise NotPerfData(0, "standard input holds a file-mode recording: give the "
                              "file name instead (file mode needs to seek)", self.path)
        self.buf = None
        self.file_size = -1
        self.stdin = f
        self._stdin_head = head
        self.sources.append(SpillSource("stdin") if self.spill
                            else MmapSource("stdin", memoryview(b"")))
        if self.spill:
            self.sources[0].append(head)  # type: ignore[attr-defined]
        self.streams.append((0, "stdin", PIPE_HEADER_SIZE, -1))

    def _add_feature(self, bit: int, payload: bytes) -> None:
        try:
            self.features[bit] = parse_feature(bit, payload, self.order, self.features)
        except Exception as e:
            self.feature_errors[bit] = str(e) or type(e).__name__
            self.features[bit] = payload
            self.warnings.append(f"feature {feature_name(bit)} is malformed: {e}")
            return
        if bit == Feature.EVENT_DESC:
            self._name_events()
        if bit == Feature.TRACING_DATA:
            self._tracing_names(payload)

    def _name_events(self) -> None:
        for a in self.attrs:
            if a.type == 2 and a.config in self.tracepoints:
                a.name = self.tracepoints[a.config]
        desc = self.feature(Feature.EVENT_DESC) or []
        by_id = {i: d["name"] for d in desc for i in d["ids"]}
        for k, a in enumerate(self.attrs):
            name = next((by_id[i] for i in a.ids if i in by_id), None)
            if name is None and k < len(desc) and not a.ids:
                name = desc[k]["name"]
            if name:
                a.name = name

    # -- pipe-mode header records ---------------------------------------------------------
    def _on_attr(self, raw: bytes, offset: int) -> None:
        try:
            a = parse_attr(raw[8:], self.order)
        except ValueError as e:
            self.errors.append(PerfDataError(offset, f"HEADER_ATTR: {e}", self.path))
            return
        if a.size % 8 or 8 + a.size > len(raw):
            self.errors.append(PerfDataError(offset, f"HEADER_ATTR: attr size {a.size} does "
                                             f"not fit its {len(raw)}-byte record", self.path))
            return
        a.ids = list(self.decoder.L.records.HEADER_ATTR.parse(raw[8:]).ids)
        self.attrs.append(a)
        self.decoder.set_attrs(self.attrs)
        self.builder.set_attrs(self.attrs)
        self._name_events()

    def _on_feature(self, raw: bytes, offset: int) -> None:
        if len(raw) <= 16:
            return  # too short, or the end-of-features marker
        c = self.decoder.L.records.HEADER_FEATURE.parse(raw[8:])
        self._add_feature(int(c.feat_id), c.data)

    # -- walking ------------------------------------------------------------------------------
    def walker(self) -> Walker:
        w = Walker(self.order, self.sources, self.errors, self._on_attr, self._on_feature,
                   spill=self.spill)
        w.on_tracing = self._on_tracing
        w.warnings = self.warnings  # a text tail is a warning, not an error
        return w

    def _on_tracing(self, payload: bytes, offset: int) -> None:
        """The tracing-data blob (pipe mode): it names the tracepoint events."""
        self._tracing_names(payload)

    def _tracing_names(self, payload: bytes) -> None:
        try:
            self.tracepoints = parse_tracing_data(payload)
        except ValueError as e:
            self.warnings.append(f"tracing data: {e}")
            return
        self._name_events()

    def chunks(self) -> Iterator[tuple[int, Chunk]]:
        """Every record in file order as chunks: (source index, chunk)."""
        if self.walks and self.stdin is not None:
            raise PerfDataError(0, "standard input can be read only once", self.path)
        self.walks += 1
        del self.errors[self.n_open_errors:]
        if self.mode == "pipe":  # attrs and features come from the stream: learn them anew
            self.attrs.clear()
            self.features.clear()
            self.feature_errors.clear()
            self.decoder.set_attrs(self.attrs)
            self.builder.set_attrs(self.attrs)
        w = self.walker()
        self.last_walker = w
        self.stream_starts = []
        self._rows = 0
        for src, name, start, end in self.streams:
            st = StreamState(name)
            w.states.append(st)
            if end < 0:
                assert self.stdin is not None
                spill = self.sources[0] if self.spill else None
                it = w.walk_stream(src, self.stdin, start, st, spill,  # type: ignore[arg-type]
                                   self._stdin_head)
            else:
                buf = self.sources[src].buf  # type: ignore[attr-defined]
                it = w.walk_buffer(src, buf, start, end, st)
            self.stream_starts.append(self._rows)
            for ch in it:
                yield (src if ch.outer is None else st.spill_src), ch
                self._rows += len(ch.offs)
            w.finish_stream(st, end if end >= 0 else 0)
        release_scratch()  # (the walk's work arrays: not kept through what follows)

    @contextlib.contextmanager
    def chunks_ahead(self) -> Iterator[Iterator[tuple[int, Chunk]]]:
        """:meth:`chunks`, for a file-mode recording walked a chunk ahead in a thread of
        its own: the records are found there (numpy over the file's words, zstd) while the
        caller makes its rows of the chunk before (numpy gathers); both let go of the GIL,
        so two cores overlap them (``info`` on the 4.85 M-record bench recording: 1.06-1.15
        -> 0.82-0.87 s).  A pipe brings attrs and features inside the stream, which the
        rows of later records need, and a directory merges streams: walked in the
        caller's thread."""
        if self.mode != "file":
            yield self.chunks()
            return
        with Prefetch(self.chunks()) as ahead:
            yield iter(ahead)
        trim()  # (what the walk's thread freed stays in its own heap arena otherwise)

    def records(self) -> Iterator[dict[str, Any]]:
        """Every record decoded, as perf reads them: file order; for a ``perf.data/``
        directory ``data`` first, then every ``data.N`` merged by time (this builds the
        index).  Each dict has ``offset`` (the file offset perf names), the decoded fields,
        ``compressed`` for records from a COMPRESSED record, ``file`` in directory mode and
        ``error`` for a malformed body (also added to :attr:`errors`).
        """
        if self.mode == "directory":
            yield from self._directory_records()
            return
        for src, ch in self.chunks():
            rows = self.builder.rows(ch, max(src, 0))
            types, attrs, sizes = rows["type"], rows["attr"], rows["size"]
            for i in range(len(ch.offs)):
                rel = ch.offs[i] - ch.base
                raw = bytes(ch.buf[rel:rel + int(sizes[i])])
                offset = ch.outer if ch.outer is not None else int(ch.offs[i])
                head: dict[str, Any] = {"offset": offset}
                if ch.outer is not None:
                    head["compressed"] = True
                try:
                    fields = self.decoder.decode(raw, int(attrs[i]), int(types[i]))
                except ValueError as e:
                    self.errors.append(PerfDataError(offset, str(e), self.path))
                    fields = {"type": type_name(int(types[i])), "misc": 0,
                              "size": int(sizes[i]), "error": str(e)}
                head.update(fields)
                yield head

    def _directory_records(self) -> Iterator[dict[str, Any]]:
        self.spill = True
        self.build_index()
        for _i, head in self.indexed_records():
            yield head

    def indexed_records(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """(index row, record) of an indexed recording, as :meth:`records` gives them (a
        directory's ``data.N`` merged by time), each record read back by its row."""
        directory = self.mode == "directory"
        # the file order unless a directory's files are merged: counted, not listed (an
        # array of every row took 8 bytes a record for as long as a dump ran)
        merged = directory and len(self.stream_starts) >= 2
        for i in self.merged_order() if merged else range(len(self.columns)):
            i = int(i)
            head: dict[str, Any] = {"offset": self.outer_offset(i)}
            src = int(self.columns["src"][i])
            if src != NO_SOURCE and len(self._outer_map(src)):
                head["compressed"] = True
            if directory:
                head["file"] = self.source_name(i)
            try:
                head.update(self.decode(i))
            except ValueError as e:
                self.errors.append(PerfDataError(head["offset"], str(e), self.path))
                head.update({"type": type_name(int(self.columns["type"][i])), "misc": 0,
                             "size": int(self.columns["size"][i]), "error": str(e)})
            yield i, head

    def build_index(self, progress: Callable[[int, int], None] | None = None,
                    budget: float = 0.25) -> None:
        """Index every record; ``progress(records, bytes_done)`` about every ``budget`` s.

        With a cache, a valid entry is mapped instead of walking: its rows become visible
        block by block as their checksums are checked (``bytes_done`` is -1 then).
        """
        if not self.load_cached(progress, budget):
            indexwalk.walk_index(self, progress, budget)

    def load_cached(self, progress: Callable[[int, int], None] | None = None,
                    budget: float = 0.25) -> bool:
        """:meth:`build_index` from the cache only: False (nothing walked) without a valid
        entry."""
        return self.open_cached() and indexpersist.load_cached_columns(self, progress, budget)

    def scan(self) -> IndexStats:
        """The totals of every record (:class:`IndexStats`) in one pass that keeps no
        index; from the cache when it has this recording."""
        return indexwalk.scan(self)

    # -- the cache (indexpersist) -----------------------------------------------------------
    def identity(self) -> tuple[str, list[dict[str, Any]]] | None:
        """(cache key, identity of each file), or None for standard input."""
        return indexpersist.cache_identity(self)

    def open_cached(self) -> bool:
        """Take a valid cache entry's totals, errors and small tables (its columns are
        checked later, by :meth:`build_index`).  False when there is none."""
        return indexpersist.open_cached(self)

    def save_index(self) -> bool:
        """Keep the complete index of this walk (and the derived arrays and
        :attr:`derived_meta` added since) in the cache.  False when it is not kept."""
        return indexpersist.save_index(self)

    def drop_store(self) -> None:
        """Forget a store that did not become a cache entry (its maps stay valid)."""
        if self.store is not None:
            if self.store.keep:
                self.store.discard()
            else:
                self.store.close()
            self.store = None

    def replay_header_records(self, records: list[tuple[int, int, int, int]]) -> None:
        """Pipe mode, an index restored from the cache: read the attrs, features and
        tracing data again from their records, ``(type, source, position, size)`` in
        order (:class:`CacheError` when one is out of range)."""
        self.attrs.clear()
        self.features.clear()
        self.feature_errors.clear()
        for typ, src, pos, size in records:
            if not 0 <= src < len(self.sources):
                raise CacheError("replayed record out of range")
            rec = self.sources[src].read(pos, size)
            if len(rec) != size or size < 8:
                raise CacheError("replayed record out of range")
            if typ == RecordType.HEADER_ATTR:
                self._on_attr(rec, pos)
            elif typ == RecordType.HEADER_FEATURE:
                self._on_feature(rec, pos)
            elif typ == RecordType.HEADER_TRACING_DATA and size >= 12:
                n = struct.unpack_from(self.order + "I", rec, 8)[0]
                self._tracing_names(self.sources[src].read(pos + size, n))
        self.decoder.set_attrs(self.attrs)
        self.builder.set_attrs(self.attrs)

    # -- derived data (the analysis layer names and fills it; the cache keeps it) -------------
    def derived(self, name: str) -> np.ndarray | None:
        """A derived array kept with the index (None if there is none)."""
        a = self.derived_arrays.get(name)
        if a is not None:
            return a
        entry = self.cache_entry
        if entry is not None and entry.has("d." + name):
            spec = entry.arrays["d." + name]
            if spec["length"] != entry.rows:  # checked at open; row arrays once indexed
                return entry.array("d." + name)
        return None

    def new_derived(self, name: str, dtype: str | np.dtype, length: int) -> np.ndarray:
        """A writable array for derived data, mapped from the index store when there is
        one; :meth:`save_index` keeps it with the index."""
        a: np.ndarray | None = None
        if self.store is not None:
            try:
                a = self.store.array("d." + name, dtype, length)
            except OSError:
                a = None
        if a is None:
            a = np.zeros(length, dtype=dtype)
        self.derived_arrays[name] = a
        return a

    def rows_of_type(self, *codes: int) -> np.ndarray:
        """Index rows (of those indexed so far) whose type is one of ``codes``.

        Records that are not samples are listed apart while indexing, so asking for them
        looks at that short list, not at every row.
        """
        n = len(self.columns)
        t = self.columns["type"]
        if RecordType.SAMPLE not in codes:
            o = self.entry_others if self.entry_others is not None else self.others.rows
            o = o[: int(np.searchsorted(o, n))]
            return o[np.isin(t[o], codes)]
        # every sample: millions of rows, so two passes (count, then fill) into a mapped
        # scratch array rather than the blocks' parts and their concatenation in memory
        # (blocks of 2^18 rows: with 2^20 the fill's temporaries left ~15 MB in the heap
        # through a first report's names pass)
        block = SCAN_BLOCK >> 2
        counts = [int(np.count_nonzero(np.isin(t[lo:lo + block], codes)))
                  for lo in range(0, n, block)]
        out = scratch(np.int64, sum(counts))
        at = 0
        for lo, cnt in zip(range(0, n, block), counts, strict=True):
            if cnt:
                rows = np.flatnonzero(np.isin(t[lo:lo + block], codes))
                rows += lo
                out[at:at + cnt] = rows
                at += cnt
        return out

    # -- access -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.columns)

    def record_bytes(self, i: int) -> bytes:
        c = self.columns
        src, pos, size = int(c["src"][i]), int(c["pos"][i]), int(c["size"][i])
        if src == NO_SOURCE:
            raise ValueError("record inside compressed data was not kept (opened with "
                             "spill=False)")
        return self.sources[src].read(pos, size)

    def _outer_map(self, src: int) -> list[tuple[int, int]] | np.ndarray:
        if src in self.outer_maps:
            return self.outer_maps[src]
        w = self.last_walker
        for st in (w.states if w else []):
            if st.spill_src == src:
                return list(st.outer_map)
        return []

    def outer_offset(self, i: int) -> int:
        """The file offset perf would name for record ``i`` (its COMPRESSED record's)."""
        return int(self.outer_offsets(np.array([i]))[0])

    def outer_offsets(self, rows: np.ndarray) -> np.ndarray:
        """File offsets of index rows: their own position, or their COMPRESSED record's."""
        c = self.columns
        rows = np.asarray(rows, dtype=np.int64)
        src = c["src"][rows]
        out: np.ndarray = c["pos"][rows].copy()
        for s in np.unique(src):
            m = np.asarray(self._outer_map(int(s)) if s != NO_SOURCE else [],
                           dtype=np.int64).reshape(-1, 2)
            if not len(m):
                continue
            sel = np.nonzero(src == s)[0]
            keys, vals = m[:, 0], m[:, 1]
            j = np.maximum(np.searchsorted(keys, out[sel], side="right") - 1, 0)
            out[sel] = vals[j]
        return out

    def sample_values(self, rows: np.ndarray, field: str = "ip") -> np.ndarray:
        """A fixed-position u64 SAMPLE field (``ip``, ``period``, ``addr``, ``id``) of index
        rows, gathered from the sources with numpy; 0 where the sample lacks it."""
        return self.sample_fields(rows, (field,))[0][0]

    def sample_fields(self, rows: np.ndarray, fields: tuple[str, ...]
                      ) -> list[tuple[np.ndarray, np.ndarray]]:
        """:meth:`sample_values` of several fields, the rows' index columns gathered once:
        per field (values, whether the row's event samples the field at all).  A ``period``
        the event does not sample is its attr's ``sample_period``, as perf's
        ``evsel__parse_sample`` sets it before reading the sample (a fixed-period event
        recorded without PERF_SAMPLE_PERIOD: every sample weighs that period)."""
        c = self.columns
        rows = np.asarray(rows, dtype=np.int64)
        got = [(np.zeros(len(rows), dtype=np.uint64), np.zeros(len(rows), dtype=bool))
               for _ in fields]
        if not len(rows):
            return got
        src = c["src"][rows]
        attr = c["attr"][rows]
        pos = c["pos"][rows]
        size = c["size"][rows].astype(np.int64)
        dt = np.dtype(self.order + "u8")
        known = [a for a in distinct(attr) if 0 <= a < len(self.attrs)]
        offsets = {a: self.decoder.sample_layouts[a].offsets for a in known}
        for a in known:  # (whatever the bytes: a row of no source still has its event)
            fixed = self.attrs[a].sample_period if "period" not in offsets[a] else 0
            if (fixed and "period" in fields) or any(f in offsets[a] for f in fields):
                of_attr = attr == a
                for (out, has), field in zip(got, fields, strict=True):
                    if field in offsets[a]:
                        has |= of_attr
                    elif field == "period":
                        out[of_attr] = fixed
        for s in distinct(src):
            if s == NO_SOURCE:
                continue
            u8 = np.frombuffer(self.sources[s].buf, dtype=np.uint8)  # type: ignore[attr-defined]
            of_src = src == s
            for a in distinct(attr[of_src]):
                if a not in offsets:
                    continue
                these = of_src & (attr == a)
                for (out, _has), field in zip(got, fields, strict=True):
                    off = offsets[a].get(field)
                    if off is None:
                        continue
                    sel = np.nonzero(these & (size >= off + 8))[0]
                    out[sel] = gather(u8, pos[sel] + off, dt)
        return got

    def record_u64s(self, rows: np.ndarray, offset: int) -> np.ndarray:
        """The u64 ``offset`` bytes into the record of each of index ``rows`` (of any type;
        0 where the record is shorter), gathered with numpy."""
        c = self.columns
        rows = np.asarray(rows, dtype=np.int64)
        out = np.zeros(len(rows), dtype=np.uint64)
        if not len(rows):
            return out
        src, pos = c["src"][rows], c["pos"][rows]
        size = c["size"][rows].astype(np.int64)
        dt = np.dtype(self.order + "u8")
        for s in distinct(src):
            if s == NO_SOURCE:
                continue
            u8 = np.frombuffer(self.sources[s].buf, dtype=np.uint8)  # type: ignore[attr-defined]
            sel = np.nonzero((src == s) & (size >= offset + 8))[0]
            out[sel] = gather(u8, pos[sel] + offset, dt)
        return out

    def callchains(self, rows: np.ndarray) -> Callchains:
        """The callchains of SAMPLE index rows, gathered with numpy (CSR arrays)."""
        return sample_callchains(self, rows)

    def chunk_sample_values(self, ch: Chunk, rows: np.ndarray, attr: np.ndarray,
                            size: np.ndarray, field: str = "ip") -> np.ndarray:
        """:meth:`sample_values` for SAMPLE records of a walk's chunk, without an index:
        ``rows`` are positions in the chunk, ``attr``/``size`` their index fields."""
        out = np.zeros(len(rows), dtype=np.uint64)
        if not len(rows):
            return out
        u8 = np.frombuffer(ch.buf, dtype=np.uint8)
        rel = np.frombuffer(ch.offs, dtype=np.int64)[rows] - ch.base
        dt = np.dtype(self.order + "u8")
        for a in np.unique(attr):
            if not 0 <= a < len(self.attrs):
                continue
            off = self.decoder.sample_layouts[int(a)].offsets.get(field)
            if off is None:
                continue
            sel = np.nonzero((attr == a) & (size.astype(np.int64) >= off + 8))[0]
            out[sel] = gather(u8, rel[sel] + off, dt)
        return out

    def chunk_decode(self, ch: Chunk, i: int, attr: int, typ: int) -> dict[str, Any]:
        """Fields of record ``i`` of a walk's chunk (raises ValueError when malformed)."""
        rel = int(ch.offs[i]) - ch.base
        size = struct.unpack_from(self.order + "H", ch.buf, rel + 6)[0]
        return self.decoder.decode(bytes(ch.buf[rel:rel + size]), attr, typ)

    def merged_order(self) -> np.ndarray:
        """Index rows as perf reads a directory: ``data`` first, then every ``data.N``
        merged by time (equal times keep their order)."""
        n = len(self.columns)
        if self.mode != "directory" or len(self.stream_starts) < 2:
            return np.arange(n)
        cut = self.stream_starts[1]
        rest = np.arange(cut, n)
        rest = rest[np.argsort(self.columns["time"][cut:n], kind="stable")]
        return np.concatenate([np.arange(cut), rest])

    def source_name(self, i: int) -> str:
        return self.sources[int(self.columns["src"][i])].name

    def decode(self, i: int) -> dict[str, Any]:
        """Fields of record ``i`` (raises ValueError for a malformed body)."""
        c = self.columns
        return self.decoder.decode(self.record_bytes(i), int(c["attr"][i]), int(c["type"][i]))

    def close(self) -> None:
        for s in self.sources:
            s.close()
        self.drop_store()

    # -- summaries ------------------------------------------------------------------------------
    def feature(self, f: int, default: Any = None) -> Any:
        v = self.features.get(f, default)
        return default if f in self.feature_errors else v


def open_recording(path: str | os.PathLike[str], spill: bool = True,
                   cache: IndexCache | None = None, mapped: bool = False) -> Recording:
    """Open ``path`` ("-" for standard input); see :class:`Recording` for the rest."""
    p = str(path)
    if p != "-" and not os.path.exists(p):
        raise NotPerfData(0, "no such file", p)
    return Recording(Path(p) if p != "-" else None, spill=spill, cache=cache, mapped=mapped)


__all__ = ["NO_SOURCE", "RecordType", "Recording", "detect", "open_recording"]
