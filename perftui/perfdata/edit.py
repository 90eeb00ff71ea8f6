"""Rewrite a recording with records inserted or removed, fixing every file offset.

Streams the bytes (no whole-file copy in memory) and writes ``out`` atomically: a
temporary file in the same directory, renamed over ``out`` once complete.  In file mode
the header's data size, the attrs offset, the id-array offsets, the feature table and
the AUXTRACE feature index are adjusted for the bytes moved (docs/format.md, "File header",
"Features").
"""

from __future__ import annotations

import contextlib
import os
import struct
import tempfile
from bisect import bisect_right
from dataclasses import dataclass
from typing import BinaryIO

from .constants import Feature
from .recording import Recording

COPY_CHUNK = 8 << 20


@dataclass(frozen=True)
class Edit:
    """At file offset ``pos``: drop ``remove`` bytes, then insert ``insert``."""

    pos: int
    remove: int = 0
    insert: bytes = b""


class Shifter:
    """Maps an offset of the input to the output, given sorted edits."""

    def __init__(self, edits: list[Edit]) -> None:
        self.keys: list[int] = []
        self.deltas: list[int] = []
        acc = 0
        for e in edits:
            acc += len(e.insert) - e.remove
            self.keys.append(e.pos)
            self.deltas.append(acc)

    def __call__(self, off: int) -> int:
        """Offsets at or past an edit's position move with it (inserted bytes go first)."""
        j = bisect_right(self.keys, off) - 1
        return off + (self.deltas[j] if j >= 0 else 0)


def rewrite(rec: Recording, out_path: str, edits: list[Edit]) -> int:
    """Write ``rec``'s file with ``edits`` applied to ``out_path``; returns its size."""
    if rec.mode not in ("file", "pipe") or rec.buf is None:
        raise ValueError(f"cannot rewrite a {rec.mode}-mode recording")
    edits = sorted(edits, key=lambda e: e.pos)
    src = rec.buf
    out_dir = os.path.dirname(os.path.abspath(out_path)) or "."
    fd, tmp = tempfile.mkstemp(prefix=".perftui-", suffix=".tmp", dir=out_dir)
    try:
        with os.fdopen(fd, "wb") as f:
            pos = 0
            for e in edits:
                _copy(f, src, pos, e.pos)
                f.write(e.insert)
                pos = e.pos + e.remove
            _copy(f, src, pos, len(src))
            if rec.mode == "file":
                _patch_file(f, rec, Shifter(edits), sum(len(e.insert) - e.remove
                                                        for e in edits))
            f.flush()
            os.fsync(f.fileno())
            size = f.tell()
        os.replace(tmp, out_path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return size


def _copy(f: BinaryIO, src: memoryview, start: int, end: int) -> None:
    while start < end:
        n = min(COPY_CHUNK, end - start)
        f.write(src[start:start + n])
        start += n


def _patch_file(f: BinaryIO, rec: Recording, shift: Shifter, delta: int) -> None:
    assert rec.buf is not None
    o = rec.order
    h = rec.header
    d_off, d_size = h["data"]["offset"], h["data"]["size"]
    a_off, a_size, a_stride = h["attrs"]["offset"], h["attrs"]["size"], h["attr_size"]

    def put(at: int, fmt: str, *vals: int) -> None:
        f.seek(at)
        f.write(struct.pack(o + fmt, *vals))

    new_data_size = d_size + delta if d_size else 0
    put(24, "Q", shift(a_off))
    put(40, "QQ", shift(d_off), new_data_size)
    src = rec.buf
    for k in range(a_size // a_stride if a_stride else 0):
        entry = a_off + k * a_stride
        ids_at = entry + a_stride - 16
        ids_off, ids_size = struct.unpack_from(o + "QQ", src, ids_at)
        put(shift(ids_at), "QQ", shift(ids_off), ids_size)
    if not d_size:
        return
    table = d_off + d_size
    for k, bit in enumerate(rec.feature_bits):
        at = table + 16 * k
        if at + 16 > len(src):
            break
        off, size = struct.unpack_from(o + "QQ", src, at)
        if off or size:
            put(shift(at), "QQ", shift(off), size)
        if bit == Feature.AUXTRACE and off + size <= len(src) and size >= 8:
            (n,) = struct.unpack_from(o + "Q", src, off)
            for j in range(min(n, (size - 8) // 16)):
                eo = off + 8 + 16 * j
                aux_off, aux_size = struct.unpack_from(o + "QQ", src, eo)
                put(shift(eo), "QQ", shift(aux_off), aux_size)
    f.seek(0, 2)
