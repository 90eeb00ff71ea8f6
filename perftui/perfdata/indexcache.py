"""The persistent index cache: a complete index kept on disk and mapped on the next open.

An entry is a directory ``<cache>/<key>/`` of column files (``NAME.col``, raw numpy
arrays) and a ``manifest``.  The key hashes the recording's identity: device, inode,
size and mtime of each of its files, an xxh3 hash of each file's first and last 64 KiB,
and :data:`FORMAT_VERSION`.  A rewritten, touched, grown or replaced file gets a new key;
a change that keeps all of these (same size, mtime set back, bytes changed only in the
middle) is not seen, as with make or ccache.

Nothing in an entry is trusted: the manifest carries an xxh3-128 of itself and one per
block of every array (``BLOCK_ROWS`` rows), and the reader checks each block before the
rows in it are used; a bad entry is removed and the index is built again.  Entries are
written under a temporary name and renamed into place (two writers: one wins, the other's
work is dropped; a reader never sees half an entry).  The cache is bounded (``limit``
bytes; least recently used entries go first).  A cache that cannot be written (read-only,
full) leaves perftui working without it, and says so once.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import xxhash

from .cacheentry import (
    ARRAY_NAME,
    FORMAT_VERSION,
    MAGIC,
    check_arrays,
    check_manifest,
    read_manifest,
    write_manifest,
)
from .cacheentry import (
    CachedIndex as CachedIndex,  # (re-exported: the cache's readers take it from here)
)
from .cacheentry import (
    CacheError as CacheError,
)
from .colstore import ColumnStore

HEAD_TAIL = 64 << 10  # bytes hashed at each end of each file
BLOCK_ROWS = 1 << 20  # rows per checksum block
SMALL_BLOCK = 64 << 20  # bytes per checksum block of arrays that are not row columns
DEFAULT_LIMIT = 20 << 30
ENV_DIR = "PERFTUI_CACHE_DIR"
ENV_LIMIT = "PERFTUI_CACHE_LIMIT"
_KEY = re.compile(r"[0-9a-f]{32}\Z")
_ORPHAN_AGE = 24 * 3600
ATTACHMENT_PREFIX = "att-"


def default_dir() -> str:
    """``$PERFTUI_CACHE_DIR``, else ``$XDG_CACHE_HOME/perftui``, else ``~/.cache/perftui``."""
    env = os.environ.get(ENV_DIR)
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "perftui")


def parse_size(text: str) -> int:
    """``"20G"``, ``"512M"``, ``"4096"`` -> bytes; raises ValueError."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)i?[bB]?\s*", text)
    if not m:
        raise ValueError(f"bad size {text!r} (expected e.g. 20G, 512M)")
    scale = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2).lower()]
    return int(float(m.group(1)) * scale)


def default_limit() -> int:
    env = os.environ.get(ENV_LIMIT)
    return parse_size(env) if env else DEFAULT_LIMIT


def file_identity(path: str, st: os.stat_result, buf: memoryview | bytes) -> dict[str, Any]:
    """What says "this is the same file": stat fields and a hash of both ends."""
    h = xxhash.xxh3_128()
    h.update(buf[:HEAD_TAIL])
    if len(buf) > HEAD_TAIL:
        h.update(buf[max(HEAD_TAIL, len(buf) - HEAD_TAIL):])
    return {"path": os.path.abspath(path), "dev": st.st_dev, "ino": st.st_ino,
            "size": st.st_size, "mtime_ns": st.st_mtime_ns, "ends": h.hexdigest()}


def key_of(mode: str, files: list[dict[str, Any]], layout: dict[str, str]) -> str:
    """The entry name of a recording (its path is not part of it: links share an entry).

    ``layout`` (column name -> dtype) is part of it: an index of other columns is another
    entry, even if FORMAT_VERSION was not bumped.
    """
    ident = [{k: f[k] for k in ("dev", "ino", "size", "mtime_ns", "ends")} for f in files]
    text = json.dumps({"format": FORMAT_VERSION, "mode": mode, "files": ident,
                       "layout": layout}, sort_keys=True)
    return xxhash.xxh3_128_hexdigest(text.encode())


def _hash_blocks(buf: memoryview, block: int) -> list[str]:
    return [xxhash.xxh3_128_hexdigest(buf[lo:lo + block])
            for lo in range(0, len(buf), block)] or [xxhash.xxh3_128_hexdigest(b"")]


def _dir_bytes(path: str, depth: int = 1) -> int:
    """Bytes on disk of the files in ``path`` and (``depth`` levels of) its directories."""
    total = 0
    try:
        with os.scandir(path) as it:
            for e in it:
                with contextlib.suppress(OSError):
                    if depth > 0 and e.is_dir(follow_symlinks=False):
                        total += _dir_bytes(e.path, depth - 1)
                    else:
                        total += e.stat(follow_symlinks=False).st_blocks * 512
    except OSError:
        pass
    return total


def _write_specs(store: ColumnStore, arrays: dict[str, np.ndarray], rows: int
                 ) -> dict[str, dict[str, Any]]:
    """Write the arrays ``store`` does not hold yet; their manifest specs (checksums)."""
    specs = {}
    for name, a in arrays.items():
        if not ARRAY_NAME.match(name):
            raise ValueError(f"bad array name {name!r}")
        a = np.ascontiguousarray(a)
        path = store.path(name)
        if name not in store.names() and not os.path.exists(path):
            with open(path, "wb") as f:
                f.write(a.view(np.uint8).data if len(a) else b"")
        block = BLOCK_ROWS if rows == len(a) else max(1, SMALL_BLOCK // a.dtype.itemsize)
        raw = a.view(np.uint8).data if len(a) else memoryview(b"")
        specs[name] = {"dtype": a.dtype.str, "length": len(a), "block": block,
                       "blocks": _hash_blocks(raw, block * a.dtype.itemsize)}
    return specs


@dataclass
class EntryInfo:
    """One entry as ``perftui cache --list`` shows it."""

    key: str
    path: str
    records: int
    nbytes: int
    last_used: float
    ok: bool


class IndexCache:
    """The cache directory: look up, write, bound and list entries."""

    def __init__(self, directory: str | None = None, limit: int | None = None) -> None:
        self.directory = os.path.abspath(directory or default_dir())
        self.limit = default_limit() if limit is None else limit
        self.notes: list[str] = []

    def note(self, message: str) -> None:
        """Remember something the user should hear once (read-only cache, bad entry...)."""
        if message not in self.notes:
            self.notes.append(message)

    def entry_dir(self, key: str) -> str:
        return os.path.join(self.directory, key)

    # -- reading ------------------------------------------------------------------------
    def lookup(self, key: str, files: list[dict[str, Any]]) -> CachedIndex | None:
        """The entry of ``key`` if its manifest checks out and names the same files; a bad
        entry is removed (and noted)."""
        d = self.entry_dir(key)
        if not os.path.isdir(d):
            return None
        try:
            manifest = read_manifest(os.path.join(d, "manifest"))
            check_manifest(manifest, key, files)
        except (CacheError, OSError, ValueError, KeyError, TypeError) as e:
            self.discard(d, f"index cache entry for {files[0]['path']} was not usable "
                            f"({_why(e)}): building the index again")
            return None
        with contextlib.suppress(OSError):
            os.utime(os.path.join(d, "manifest"))  # the LRU clock
        return CachedIndex(d, manifest)

    def discard(self, directory: str, why: str | None = None) -> None:
        """Remove an entry (renamed away first: no reader sees it half removed)."""
        if why:
            self.note(why)
        trash = os.path.join(self.directory, f".trash-{os.getpid()}-{os.urandom(4).hex()}")
        try:
            os.rename(directory, trash)
        except OSError:
            return
        shutil.rmtree(trash, ignore_errors=True)

    # -- writing ------------------------------------------------------------------------
    def begin(self) -> ColumnStore | None:
        """A store for a new entry's columns (a temporary directory in the cache), or
        None when the cache cannot be written (noted)."""
        try:
            os.makedirs(self.directory, mode=0o700, exist_ok=True)
            self._sweep()
            d = os.path.join(self.directory, f".tmp-{os.getpid()}-{os.urandom(4).hex()}")
            os.mkdir(d, 0o700)
        except OSError as e:
            self.note(f"index cache off: cannot write in {self.directory} ({_why(e)})")
            return None
        return ColumnStore(d, keep=True)

    def commit(self, store: ColumnStore, key: str, manifest: dict[str, Any],
               arrays: dict[str, np.ndarray]) -> bool:
        """Checksum ``arrays`` (files of ``store``, or written into it now), write the
        manifest and rename the store into place as entry ``key``; then keep the cache
        under its limit.  False (noted) when the entry is not kept."""
        try:
            specs = _write_specs(store, arrays, manifest["rows"])
            manifest = {**manifest, "magic": MAGIC, "format": FORMAT_VERSION, "key": key,
                        "arrays": specs, "created": time.time()}
            size = sum(a.nbytes for a in arrays.values())
            if size > self.limit:
                self.note(f"index not kept: {size / 1e6:.0f} MB is more than the cache limit "
                          f"({self.limit / 1e6:.0f} MB; {ENV_LIMIT} sets it)")
                store.discard()
                return False
            write_manifest(os.path.join(store.directory, "manifest"), manifest)
            store.close()
            target = self.entry_dir(key)
            try:
                os.rename(store.directory, target)
            except OSError:  # another process wrote this entry first: keep theirs
                store.discard()
                return False
            store.detach()
        except OSError as e:
            self.note(f"index not kept in {self.directory} ({_why(e)})")
            store.discard()
            return False
        self._forget_replaced(key, manifest["files"][0]["path"])
        self.evict(keep=key)
        return True

    # -- attachments: results derived from an entry's recording, kept inside the entry --
    # (:mod:`~perftui.perfdata.derived` is the one way to them; ``within``: the directory
    # of the entry still being made, whose rename takes its attachments with it)
    def attachment_dir(self, key: str, name: str, within: str | None = None) -> str:
        return os.path.join(within or self.entry_dir(key), ATTACHMENT_PREFIX + name)

    def attachment(self, key: str, name: str, within: str | None = None,
                   what: str | None = None, again: str = "computing it again"
                   ) -> CachedIndex | None:
        """Attachment ``name`` of entry ``key`` if its manifest checks out (its arrays are
        checked by the caller, :meth:`CachedIndex.checked`); a bad one is removed, noted
        as "cached WHAT (default: the name) not usable (why): AGAIN"."""
        d = self.attachment_dir(key, name, within)
        if not ARRAY_NAME.match(name) or not os.path.isdir(d):
            return None
        try:
            manifest = read_manifest(os.path.join(d, "manifest"))
            if manifest.get("magic") != MAGIC or manifest.get("key") != f"{key}/{name}":
                raise CacheError("manifest of another attachment")
            check_arrays(manifest)
        except (CacheError, OSError, ValueError, KeyError, TypeError) as e:
            self.discard(d, f"cached {what or name} not usable ({_why(e)}): {again}")
            return None
        return CachedIndex(d, manifest)

    def begin_attachment(self, key: str, within: str | None = None) -> ColumnStore | None:
        """A store for a new attachment of entry ``key`` (None: no such entry, or it
        cannot be written)."""
        entry = within or self.entry_dir(key)
        if not os.path.isdir(entry):
            return None
        self._sweep(entry)
        d = os.path.join(entry, f".tmp-{os.getpid()}-{os.urandom(4).hex()}")
        try:
            os.mkdir(d, 0o700)
        except OSError as e:
            self.note(f"results not cached: cannot write in {entry} ({_why(e)})")
            return None
        return ColumnStore(d, keep=True, fallback=True)

    def commit_attachment(self, store: ColumnStore, key: str, name: str,
                          manifest: dict[str, Any], arrays: dict[str, np.ndarray],
                          within: str | None = None) -> bool:
        """Checksum ``arrays`` and rename ``store`` into place as attachment ``name`` of
        entry ``key`` (replacing an older one); then keep the cache under its limit."""
        if store.broken:  # (its entry went while it was written: another process's)
            self.note(f"results not cached in {self.directory} ({store.broken})")
            store.discard()
            return False
        try:
            if not ARRAY_NAME.match(name):
                raise ValueError(f"bad attachment name {name!r}")
            specs = _write_specs(store, arrays, manifest["rows"])
            manifest = {**manifest, "magic": MAGIC, "format": FORMAT_VERSION,
                        "key": f"{key}/{name}", "arrays": specs, "created": time.time()}
            write_manifest(os.path.join(store.directory, "manifest"), manifest)
            store.close()
            target = self.attachment_dir(key, name, within)
            if os.path.isdir(target):
                self.discard(target)
            try:
                os.rename(store.directory, target)
            except OSError:  # another process was first, or the entry went: keep theirs
                store.discard()
                return False
            store.detach()
        except OSError as e:
            self.note(f"results not cached in {self.directory} ({_why(e)})")
            store.discard()
            return False
        if within is None:
            self.evict(keep=key)
        return True

    def drop_attachments(self, key: str, prefix: str, keep: str,
                         within: str | None = None) -> None:
        """Remove entry ``key``'s attachments named ``prefix``... but ``keep``."""
        entry = within or self.entry_dir(key)
        for d in glob.glob(os.path.join(glob.escape(entry), ATTACHMENT_PREFIX + prefix + "*")):
            if os.path.basename(d) != ATTACHMENT_PREFIX + keep:
                self.discard(d)

    def _forget_replaced(self, key: str, path: str) -> None:
        """Entries of an earlier file of the same name (rewritten, replaced) go."""
        for e in self.entries():
            if e.key != key and e.path == path:
                self.discard(self.entry_dir(e.key))

    def evict(self, keep: str | None = None) -> None:
        """Remove least recently used entries until the cache is within its limit."""
        entries = sorted(self.entries(), key=lambda e: e.last_used)
        total = sum(e.nbytes for e in entries)
        for e in entries:
            if total <= self.limit:
                break
            if e.key == keep:
                continue
            self.discard(self.entry_dir(e.key))
            total -= e.nbytes

    def _sweep(self, directory: str | None = None) -> None:
        """Remove temporary directories that no running perftui owns (in the cache, or in
        ``directory``)."""
        directory = directory or self.directory
        try:
            names = os.listdir(directory)
        except OSError:
            return
        now = time.time()
        for n in names:
            m = re.fullmatch(r"\.(tmp|trash)-(\d+)-[0-9a-f]+", n)
            if not m:
                continue
            p = os.path.join(directory, n)
            pid = int(m.group(2))
            try:
                old = now - os.stat(p).st_mtime > _ORPHAN_AGE
            except OSError:
                continue
            if old or not _alive(pid):
                shutil.rmtree(p, ignore_errors=True)

    # -- listing ------------------------------------------------------------------------
    def entries(self) -> list[EntryInfo]:
        out = []
        try:
            names = sorted(os.listdir(self.directory))
        except OSError:
            return []
        for n in names:
            if not _KEY.match(n):
                continue
            d = self.entry_dir(n)
            try:
                mpath = os.path.join(d, "manifest")
                used = os.stat(mpath).st_mtime
                m = read_manifest(mpath)
                path, rows, ok = str(m["files"][0]["path"]), int(m["rows"]), True
            except (CacheError, OSError, ValueError, KeyError, TypeError, IndexError):
                used, path, rows, ok = 0.0, "?", 0, False
            out.append(EntryInfo(n, path, rows, _dir_bytes(d), used, ok))
        return out

    def clear(self) -> int:
        """Remove every entry (and leftover temporary directories); returns how many."""
        n = 0
        for e in self.entries():
            self.discard(self.entry_dir(e.key))
            n += 1
        self._sweep()
        return n


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _why(e: BaseException) -> str:
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    return str(e) or type(e).__name__


