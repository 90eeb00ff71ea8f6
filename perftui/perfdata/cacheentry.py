"""One entry of the index cache on disk: its manifest read and checked, its arrays mapped.

A manifest is one line ``perftui-index FORMAT XXH3`` then JSON (:func:`write_manifest`,
:func:`read_manifest`); :func:`check_manifest` holds it to the files it was made for and to
well-formed array specs.  :class:`CachedIndex` maps an entry's arrays read-only and checks
them block by block against the manifest's checksums.  The cache directory (keys, writing,
bounds) is :mod:`~perftui.perfdata.indexcache`.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import numpy as np
import xxhash

# Bump whenever what the columns mean, the totals or the manifest change (a change of the
# columns' names or dtypes changes every key by itself).  2: derived data only in
# attachments (no ``d.*`` arrays, empty ``meta``): an entry of 1 is another key, made again.
FORMAT_VERSION = 2
MAGIC = "perftui-index"
MANIFEST_MAX = 64 << 20
DTYPES = frozenset({"|u1", "|i1", "<u2", "<i2", "<u4", "<i4", "<u8", "<i8", "<f8",
                    ">u2", ">i2", ">u4", ">i4", ">u8", ">i8", ">f8"})
ARRAY_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}\Z")


class CacheError(Exception):
    """A cache entry that cannot be used (why, in words)."""


class CachedIndex:
    """A cache entry whose manifest checked out; its arrays are checked block by block."""

    def __init__(self, directory: str, manifest: dict[str, Any]) -> None:
        self.directory = directory
        self.manifest = manifest
        self.rows = int(manifest["rows"])
        self.arrays: dict[str, dict[str, Any]] = manifest["arrays"]
        self._maps: dict[str, np.ndarray] = {}

    @property
    def state(self) -> dict[str, Any]:
        state: dict[str, Any] = self.manifest["state"]
        return state

    @property
    def meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = self.manifest["meta"]
        return meta

    def has(self, name: str) -> bool:
        return name in self.arrays

    def array(self, name: str) -> np.ndarray:
        """Array ``name`` mapped read-only (not checked: see :meth:`check`)."""
        a = self._maps.get(name)
        if a is not None:
            return a
        spec = self.arrays.get(name)
        if spec is None:
            raise CacheError(f"no array {name!r}")
        dt = np.dtype(spec["dtype"])
        path = os.path.join(self.directory, name + ".col")
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            st = os.fstat(fd)
            if not _is_regular(st):
                raise CacheError(f"{name}: not a regular file")
            if st.st_size != spec["length"] * dt.itemsize:
                raise CacheError(f"{name}: {st.st_size} bytes, the manifest says "
                                 f"{spec['length'] * dt.itemsize}")
            if st.st_size == 0:
                a = np.empty(0, dt)
            else:
                import mmap

                m = mmap.mmap(fd, st.st_size, access=mmap.ACCESS_READ)
                a = np.frombuffer(m, dtype=dt)
        finally:
            os.close(fd)
        self._maps[name] = a
        return a

    def _block(self, name: str) -> int:
        spec = self.arrays[name]
        return int(spec["block"])

    def check(self, name: str, lo: int = 0, hi: int | None = None) -> None:
        """Check the blocks of ``name`` that hold elements [lo, hi); raises CacheError."""
        spec = self.arrays[name]
        a = self.array(name)
        hi = len(a) if hi is None else min(hi, len(a))
        block = self._block(name)  # elements per block
        blocks = spec["blocks"]
        if len(blocks) != max(1, -(-len(a) // block)):
            raise CacheError(f"{name}: {len(blocks)} checksums for {len(a)} elements")
        raw = a.view(np.uint8).data if len(a) else memoryview(b"")
        size = a.dtype.itemsize
        for b in range(lo // block, max(lo // block + 1, -(-hi // block))):
            part = raw[b * block * size:(b + 1) * block * size]
            if xxhash.xxh3_128_hexdigest(part) != blocks[b]:
                raise CacheError(f"{name}: block {b} does not match its checksum")

    def checked(self, dtypes: dict[str, str], required: tuple[str, ...] | None = None
                ) -> dict[str, np.ndarray]:
        """Every array (an attachment's, read back), each checked against its checksums
        and of its dtype in ``dtypes``, which names every array there may be; those in
        ``required`` (default: all of ``dtypes``) must be there.  Raises CacheError."""
        for k in (dtypes if required is None else required):
            if k not in self.arrays:
                raise CacheError(f"{k}: missing")
        for k in self.arrays:
            if k not in dtypes or np.dtype(self.arrays[k]["dtype"]) != np.dtype(dtypes[k]):
                raise CacheError(f"{k}: not an array of this perftui")
            self.check(k)
        return {k: self.array(k) for k in self.arrays}

    def close(self) -> None:
        self._maps.clear()


# -- what a derived result read back must hold (every attachment's loader uses these) ------
def in_range(a: np.ndarray, lo: int, hi: int, what: str) -> None:
    """Every value of ``a`` in ``[lo, hi)``, else CacheError."""
    if len(a) and (int(a.min()) < lo or int(a.max()) >= hi):
        raise CacheError(f"{what}: out of range")


def one_per(arrays: dict[str, np.ndarray], names: tuple[str, ...], n: int, what: str
            ) -> None:
    """Arrays ``names`` (those there) of ``n`` values each (``what``: one per what)."""
    for k in names:
        if k in arrays and len(arrays[k]) != n:
            raise CacheError(f"{k}: not one per {what}")


def starts_of(starts: np.ndarray, n: int, name: str, parts: str, empty: bool = True) -> None:
    """``starts`` (array ``name``) splits ``n`` values into ``parts`` (CSR): from 0,
    ascending, to ``n``; a part may be empty only when ``empty``."""
    if (not len(starts) or starts[0] != 0 or starts[-1] != n
            or np.any(np.diff(starts) < (0 if empty else 1))):
        raise CacheError(f"{name}: not the starts of the {parts}")


def _is_regular(st: os.stat_result) -> bool:
    import stat

    return stat.S_ISREG(st.st_mode)


# -- the manifest: one line "perftui-index FORMAT XXH3" then JSON ----------------------------
def write_manifest(path: str, manifest: dict[str, Any]) -> None:
    body = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
    head = f"{MAGIC} {FORMAT_VERSION} {xxhash.xxh3_128_hexdigest(body)}\n".encode()
    with open(path, "wb") as f:
        f.write(head + body)


def read_manifest(path: str) -> dict[str, Any]:
    """The manifest at ``path``; raises CacheError when it is not one of this version or
    does not match its checksum."""
    with open(path, "rb") as f:
        data = f.read(MANIFEST_MAX + 1)
    if len(data) > MANIFEST_MAX:
        raise CacheError("manifest too large")
    head, _, body = data.partition(b"\n")
    parts = head.split()
    if len(parts) != 3 or parts[0] != MAGIC.encode():
        raise CacheError("not a perftui index manifest")
    if parts[1] != str(FORMAT_VERSION).encode():
        raise CacheError(f"index format {parts[1].decode(errors='replace')}, this perftui "
                         f"writes {FORMAT_VERSION}")
    if xxhash.xxh3_128_hexdigest(body).encode() != parts[2]:
        raise CacheError("manifest does not match its checksum")
    m = json.loads(body)
    if not isinstance(m, dict):
        raise CacheError("manifest is not an object")
    return m


def check_manifest(m: dict[str, Any], key: str, files: list[dict[str, Any]]) -> None:
    """Raise CacheError unless ``m`` is a well-formed entry for these very files."""
    if m.get("magic") != MAGIC or m.get("format") != FORMAT_VERSION or m.get("key") != key:
        raise CacheError("manifest of another entry or version")
    mine = [{k: f[k] for k in ("dev", "ino", "size", "mtime_ns", "ends")} for f in files]
    theirs = [{k: f.get(k) for k in ("dev", "ino", "size", "mtime_ns", "ends")}
              for f in m.get("files", [])]
    if mine != theirs:
        raise CacheError("made for another file")
    check_arrays(m)
    if not isinstance(m.get("state"), dict):
        raise CacheError("no state")


def check_arrays(m: dict[str, Any]) -> None:
    """Raise CacheError unless the row count, the array specs, state and meta are
    well-formed."""
    rows = m.get("rows")
    if not isinstance(rows, int) or rows < 0:
        raise CacheError("bad row count")
    arrays = m.get("arrays")
    if not isinstance(arrays, dict):
        raise CacheError("no arrays")
    for name, spec in arrays.items():
        if not ARRAY_NAME.match(str(name)) or not isinstance(spec, dict):
            raise CacheError(f"bad array name {name!r}")
        if spec.get("dtype") not in DTYPES:
            raise CacheError(f"{name}: bad dtype")
        length, block, blocks = spec.get("length"), spec.get("block"), spec.get("blocks")
        if not (isinstance(length, int) and length >= 0 and isinstance(block, int)
                and block > 0 and isinstance(blocks, list)
                and all(isinstance(b, str) for b in blocks)):
            raise CacheError(f"{name}: bad shape")
    if not isinstance(m.get("meta"), dict):
        raise CacheError("no meta")
