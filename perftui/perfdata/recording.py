"""Opening a recording: file, pipe and directory mode, header, attrs, features, walk.

:class:`Recording` is the entry point of the headless decoder.  Opening reads only the
header, the attrs and the feature sections (file mode); the records are walked lazily
(:meth:`Recording.chunks`), counted in one pass that keeps no index (:meth:`Recording.scan`)
or indexed into numpy columns (:meth:`Recording.build_index`), which an index cache
(``indexcache``) keeps for the next open (:meth:`Recording.save_index`).  The index is one
:class:`~.recindex.RecordingIndex` (``Recording.index``), made by the walk
(:mod:`~.indexwalk`) or restored from the cache (:mod:`~.indexpersist`); decoding every
record is :mod:`~.recordlist`, gathering fields of many records :mod:`~.fieldgather`.
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
from . import fieldgather, indexpersist, indexwalk, recordlist
from .attr import EventAttr, parse_attr
from .callchains import Callchains, sample_callchains
from .constants import (
    PIPE_HEADER_SIZE,
    Feature,
    RecordType,
    feature_name,
)
from .errors import NotPerfData, PerfDataError
from .features import parse_feature
from .header import detect, read_file_header
from .index import NO_SOURCE, Columns, IndexBuilder
from .indexcache import CacheError, IndexCache
from .prefetch import Prefetch
from .recindex import RecordingIndex
from .records import RecordDecoder
from .sources import MmapSource, Source, SpillSource
from .speculate import release_scratch
from .stats import IndexStats
from .tracefmt import TraceFormat, parse_formats
from .walk import Chunk, StreamState, Walker

MAX_SOURCES = NO_SOURCE  # the src column is u2: data files and spills, at most this many


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
        self.trace_formats: dict[int, TraceFormat] = {}  # by tracepoint id (attr config)
        self.tracing_error: PerfDataError | None = None  # a malformed tracing-data blob
        self.header: dict[str, Any] = {}
        self.sources: list[Source] = []
        self.streams: list[tuple[int, str, int, int]] = []  # (src, name, start, end)
        self.walks = 0
        self.walk_starts: list[int] = []  # the last walk's first row of each stream
        self.extra_files: list[str] = []
        self.index = RecordingIndex()  # the last one built (walked, restored or counted)
        self.cache = cache
        self.mapped = mapped or cache is not None
        self.cancelled = False
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
            self._add_feature(bit, h.features[bit], h.feature_offsets.get(bit, 0))
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

    def _add_feature(self, bit: int, payload: bytes, offset: int = 0) -> None:
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
            self._tracing_names(payload, offset)

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
        self._add_feature(int(c.feat_id), c.data, offset)

    # -- walking ------------------------------------------------------------------------------
    def walker(self) -> Walker:
        w = Walker(self.order, self.sources, self.errors, self._on_attr, self._on_feature,
                   spill=self.spill)
        w.on_tracing = self._on_tracing
        w.warnings = self.warnings  # a text tail is a warning, not an error
        return w

    def _on_tracing(self, payload: bytes, offset: int) -> None:
        """The tracing-data blob (pipe mode): it names the tracepoint events."""
        self._tracing_names(payload, offset)

    def _tracing_names(self, payload: bytes, offset: int) -> None:
        """The tracepoints' formats and names from a tracing-data blob at file ``offset``
        (a malformed one: a warning, no tracepoint named)."""
        try:
            self.trace_formats = parse_formats(payload)
        except ValueError as e:
            self.warnings.append(f"offset {offset}: tracing data: {e}")
            self.tracing_error = PerfDataError(offset, f"tracing data: {e}", self.path)
            return
        self.tracepoints = {i: f.name for i, f in self.trace_formats.items()}
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
        self.walk_starts = []
        rows = 0
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
            self.walk_starts.append(rows)
            for ch in it:
                yield (src if ch.outer is None else st.spill_src), ch
                rows += len(ch.offs)
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
        """Every record decoded, as perf reads them (:func:`.recordlist.records`)."""
        return recordlist.records(self)

    def indexed_records(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """(index row, record) of an indexed recording (:func:`.recordlist.indexed_records`)."""
        return recordlist.indexed_records(self)

    def build_index(self, progress: Callable[[int, int], None] | None = None,
                    budget: float = 0.25) -> None:
        """Index every record; ``progress(records, bytes_done)`` about every ``budget`` s.

        With a cache, a valid entry is mapped instead of walking: its rows become visible
        block by block as their checksums are checked (``bytes_done`` is -1 then).
        """
        if not self.load_cached(progress, budget):
            self.drop_store()
            self.index = indexwalk.new_index(self)
            indexwalk.walk_index(self, self.index, progress, budget)

    def load_cached(self, progress: Callable[[int, int], None] | None = None,
                    budget: float = 0.25) -> bool:
        """:meth:`build_index` from the cache only: False (nothing walked) without a valid
        entry."""
        if not self.open_cached():
            return False
        if indexpersist.load_cached_columns(self, self.index, progress, budget):
            return True
        self.index = RecordingIndex()
        return False

    def scan(self) -> IndexStats:
        """The totals of every record (:class:`IndexStats`) in one pass that keeps no
        index; from the cache when it has this recording."""
        if not self.open_cached():
            self.index = indexwalk.scan(self)
        return self.index.stats

    # -- the index and the cache (indexpersist) ------------------------------------------------
    @property
    def columns(self) -> Columns:
        """The index's columns (of the rows indexed so far)."""
        return self.index.columns

    @property
    def stats(self) -> IndexStats:
        """The totals of every record (of those indexed or counted so far)."""
        return self.index.stats

    @property
    def indexed(self) -> bool:
        """Every record is indexed (the index is complete, not stopped part way)."""
        return self.index.complete

    def identity(self) -> tuple[str, list[dict[str, Any]]] | None:
        """(cache key, identity of each file), or None for standard input."""
        return indexpersist.cache_identity(self)

    def open_cached(self) -> bool:
        """Take a valid cache entry's totals, errors and small tables (its columns are
        checked later, by :meth:`build_index`).  False when there is none."""
        if self.index.entry is not None:
            return True
        got = indexpersist.open_cached(self)
        if got is not None:
            self.index = got
        return got is not None

    def save_index(self) -> bool:
        """Keep the complete index of this walk (with the results derived from it kept
        so far, :mod:`.derived`) in the cache.  False when it is not kept."""
        return indexpersist.save_index(self, self.index)

    def drop_store(self) -> None:
        """Forget a store that did not become a cache entry (its maps stay valid)."""
        store, self.index.store = self.index.store, None
        if store is not None:
            if store.keep:
                store.discard()
            else:
                store.close()

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
                self._tracing_names(self.sources[src].read(pos + size, n), pos)
        self.decoder.set_attrs(self.attrs)
        self.builder.set_attrs(self.attrs)

    def rows_of_type(self, *codes: int) -> np.ndarray:
        """Index rows (of those indexed so far) whose type is one of ``codes``."""
        return self.index.rows_of_type(*codes)

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

    def outer_map(self, src: int) -> list[tuple[int, int]] | np.ndarray:
        """(spill position, COMPRESSED record's offset) pairs of spill source ``src``."""
        if src in self.index.outer_maps:
            return self.index.outer_maps[src]
        w = self.last_walker
        for st in (w.states if w else []):
            if st.spill_src == src:
                return list(st.outer_map)
        return []

    def outer_offset(self, i: int) -> int:
        """The file offset perf would name for record ``i`` (its COMPRESSED record's)."""
        return int(self.outer_offsets(np.array([i]))[0])

    def outer_offsets(self, rows: np.ndarray) -> np.ndarray:
        """File offsets of index rows (:func:`.fieldgather.outer_offsets`)."""
        return fieldgather.outer_offsets(self, rows)

    def sample_values(self, rows: np.ndarray, field: str = "ip") -> np.ndarray:
        """A fixed-position u64 SAMPLE field (``ip``, ``period``, ``addr``, ``id``) of index
        rows, gathered from the sources with numpy; 0 where the sample lacks it."""
        return self.sample_fields(rows, (field,))[0][0]

    def sample_fields(self, rows: np.ndarray, fields: tuple[str, ...]
                      ) -> list[tuple[np.ndarray, np.ndarray]]:
        """:meth:`sample_values` of several fields (:func:`.fieldgather.sample_fields`)."""
        return fieldgather.sample_fields(self, rows, fields)

    def record_u64s(self, rows: np.ndarray, offset: int) -> np.ndarray:
        """The u64 ``offset`` bytes into each record of ``rows`` (0 where it is shorter)."""
        return fieldgather.record_u64s(self, rows, offset)

    def callchains(self, rows: np.ndarray) -> Callchains:
        """The callchains of SAMPLE index rows, gathered with numpy (CSR arrays)."""
        return sample_callchains(self, rows)

    def chunk_sample_values(self, ch: Chunk, rows: np.ndarray, attr: np.ndarray,
                            size: np.ndarray, field: str = "ip") -> np.ndarray:
        """:meth:`sample_values` of a walk's chunk (:func:`.fieldgather.chunk_sample_values`)."""
        return fieldgather.chunk_sample_values(self, ch, rows, attr, size, field)

    def chunk_decode(self, ch: Chunk, i: int, attr: int, typ: int) -> dict[str, Any]:
        """Fields of record ``i`` of a walk's chunk (raises ValueError when malformed)."""
        rel = int(ch.offs[i]) - ch.base
        size = struct.unpack_from(self.order + "H", ch.buf, rel + 6)[0]
        return self.decoder.decode(bytes(ch.buf[rel:rel + size]), attr, typ)

    def merged_order(self) -> np.ndarray:
        """Index rows as perf reads a directory: ``data`` first, then every ``data.N``
        merged by time (equal times keep their order)."""
        n = len(self.columns)
        starts = self.index.stream_starts
        if self.mode != "directory" or len(starts) < 2:
            return np.arange(n)
        cut = starts[1]
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
