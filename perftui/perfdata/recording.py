"""Opening a recording: file, pipe and directory mode, header, attrs, features, walk.

:class:`Recording` is the entry point of the headless decoder.  Opening reads only the
header, the attrs and the feature sections (file mode); the records are walked lazily
(:meth:`Recording.chunks`) or indexed into numpy columns (:meth:`Recording.build_index`).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from .attr import EventAttr, parse_attr
from .callchains import Callchains, sample_callchains
from .constants import (
    PIPE_HEADER_SIZE,
    Feature,
    RecordType,
    feature_name,
)
from .errors import NotPerfData, PerfDataError
from .features import parse_feature, parse_tracing_data
from .header import detect, read_file_header
from .index import Columns, IndexBuilder, gather
from .records import RecordDecoder
from .sources import MmapSource, Source, SpillSource
from .walk import Chunk, StreamState, Walker

NO_SOURCE = 255  # index rows of records that cannot be read back (no spill)


class Recording:
    """One perf.data recording (file, pipe-mode file or stream, or directory)."""

    def __init__(self, path: str | os.PathLike[str] | None, stream: BinaryIO | None = None,
                 spill: bool = True) -> None:
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
        self.indexed = False
        self.cancelled = False
        self.unknown_ids = 0
        self._stdin: BinaryIO | None = None
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
        self._n_open_errors = len(self.errors)
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
        self._stdin = f
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
        if self.walks and self._stdin is not None:
            raise PerfDataError(0, "standard input can be read only once", self.path)
        self.walks += 1
        del self.errors[self._n_open_errors:]
        if self.mode == "pipe":  # attrs and features come from the stream: learn them anew
            self.attrs.clear()
            self.features.clear()
            self.feature_errors.clear()
            self.decoder.set_attrs(self.attrs)
            self.builder.set_attrs(self.attrs)
        w = self.walker()
        self._walker = w
        for src, name, start, end in self.streams:
            st = StreamState(name)
            w.states.append(st)
            if end < 0:
                assert self._stdin is not None
                spill = self.sources[0] if self.spill else None
                it = w.walk_stream(src, self._stdin, start, st, spill,  # type: ignore[arg-type]
                                   self._stdin_head)
            else:
                buf = self.sources[src].buf  # type: ignore[attr-defined]
                it = w.walk_buffer(src, buf, start, end, st)
            self.stream_starts.append(len(self.columns))
            for ch in it:
                yield (src if ch.outer is None else st.spill_src), ch
            w.finish_stream(st, end if end >= 0 else 0)

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
                    fields = {"type": "?", "misc": 0, "size": int(sizes[i]), "error": str(e)}
                head.update(fields)
                yield head

    def _directory_records(self) -> Iterator[dict[str, Any]]:
        self.spill = True
        self.build_index()
        for i in self.merged_order():
            i = int(i)
            head: dict[str, Any] = {"offset": self.outer_offset(i), "file": self.source_name(i)}
            try:
                head.update(self.decode(i))
            except ValueError as e:
                self.errors.append(PerfDataError(head["offset"], str(e), self.path))
                head.update({"type": "?", "misc": 0, "size": int(self.columns["size"][i]),
                             "error": str(e)})
            yield head

    def build_index(self, progress: Callable[[int, int], None] | None = None,
                    budget: float = 0.25) -> None:
        """Index every record; ``progress(records, bytes_done)`` about every ``budget`` s."""
        cols = self.columns = Columns()
        self.stream_starts = []
        self.builder.unknown_ids = 0
        last = time.monotonic()
        first = True
        start_at = self.streams[0][2] if self.streams else 0
        self._next_estimate = 0.0
        for src, ch in self.chunks():
            if self.cancelled:
                break
            if ch.outer is None and len(ch.offs) and self.file_size > 0 and src == 0:
                self._reserve(cols, int(ch.offs[-1]), start_at)
            cols.append(self.builder.rows(ch, src if src >= 0 else NO_SOURCE))
            if progress is not None:
                now = time.monotonic()
                if now - last >= budget or first:  # the first chunk at once: first screen
                    first = False
                    last = now
                    progress(len(cols), int(ch.offs[-1]) if ch.outer is None else -1)
        self.unknown_ids = self.builder.unknown_ids
        cols.trim()
        self.indexed = not self.cancelled
        if progress is not None:
            progress(len(cols), -1)

    def _reserve(self, cols: Columns, done_at: int, start_at: int) -> None:
        """Grow the columns to the record count the bytes read so far predict.

        Estimated after the first chunk and again at 5%, 15% and 40% of the file, while the
        columns are still small: a late growth would copy (and briefly double) them all.
        """
        done = (done_at - start_at) / max(1, self.file_size - start_at)
        if done < self._next_estimate:
            return
        self._next_estimate = next((f for f in (0.05, 0.15, 0.4) if f > done), 2.0)
        per_byte = len(cols) / max(1, done_at - start_at)
        if per_byte > 0:
            cols.reserve(int((self.file_size - start_at) * per_byte * 1.05) + 1024)

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

    def _outer_map(self, src: int) -> list[tuple[int, int]]:
        w = getattr(self, "_walker", None)
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
            m = self._outer_map(int(s)) if s != NO_SOURCE else []
            if not m:
                continue
            sel = np.nonzero(src == s)[0]
            keys = np.array([k for k, _ in m], dtype=np.int64)
            vals = np.array([v for _, v in m], dtype=np.int64)
            j = np.maximum(np.searchsorted(keys, out[sel], side="right") - 1, 0)
            out[sel] = vals[j]
        return out

    def sample_values(self, rows: np.ndarray, field: str = "ip") -> np.ndarray:
        """A fixed-position u64 SAMPLE field (``ip``, ``period``, ``addr``, ``id``) of index
        rows, gathered from the sources with numpy; 0 where the sample lacks it."""
        c = self.columns
        rows = np.asarray(rows, dtype=np.int64)
        out = np.zeros(len(rows), dtype=np.uint64)
        if not len(rows):
            return out
        src = c["src"][rows]
        attr = c["attr"][rows]
        pos = c["pos"][rows]
        size = c["size"][rows].astype(np.int64)
        dt = np.dtype(self.order + "u8")
        for s in np.unique(src):
            if s == NO_SOURCE:
                continue
            u8 = np.frombuffer(self.sources[int(s)].buf, dtype=np.uint8)  # type: ignore[attr-defined]
            for a in np.unique(attr[src == s]):
                if not 0 <= a < len(self.attrs):
                    continue
                off = self.decoder.sample_layouts[int(a)].offsets.get(field)
                if off is None:
                    continue
                sel = np.nonzero((src == s) & (attr == a) & (size >= off + 8))[0]
                at = pos[sel] + off
                out[sel] = gather(u8, at, dt)
        return out

    def callchains(self, rows: np.ndarray) -> Callchains:
        """The callchains of SAMPLE index rows, gathered with numpy (CSR arrays)."""
        return sample_callchains(self, rows)

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

    # -- summaries ------------------------------------------------------------------------------
    def feature(self, f: int, default: Any = None) -> Any:
        v = self.features.get(f, default)
        return default if f in self.feature_errors else v


def open_recording(path: str | os.PathLike[str], spill: bool = True) -> Recording:
    """Open ``path`` ("-" for standard input)."""
    p = str(path)
    if p != "-" and not os.path.exists(p):
        raise NotPerfData(0, "no such file", p)
    return Recording(Path(p) if p != "-" else None, spill=spill)


__all__ = ["RecordType", "Recording", "detect", "open_recording"]
