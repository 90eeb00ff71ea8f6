"""Symbol tables kept on disk between runs and recordings, keyed by the files' content.

An ELF file's table (perf's rules applied: :mod:`.elfsyms`) costs ~5 us a symbol to build:
a big C++ library such as libLLVM (230 K symbols) takes over a second, and every recording
that samples it builds it again.  perf keeps the files themselves by build id
(``~/.debug``); here the finished table is kept too, under a key hashed from the bytes of
the file (and of the runtime file, when the symbols come from a debug file), the build id
the recording wants, perftui's code of the symbol tables and a format number: a rebuilt
or edited file, or another perftui, is another key, so nothing is trusted by its name or
build id alone.  Each entry is one uncompressed ``.npz`` (its members checked by their
CRC on reading) beside a ``.tree.npz`` of perf's tree once a lookup has replayed it
(:mod:`.rbtree`: 0.7 s for librustc_driver's 150 K symbols); both are range-checked
before use, and a damaged one is removed and built again.  The directory is the index
cache's ``symbols/`` (off with ``--no-cache``), bounded to :data:`LIMIT` bytes, least
recently used first out.

Public API: :class:`TableStore` ``(directory)`` with ``load(key, path)``,
``save(key, syms)``, :func:`elf_key` and :func:`clear`.
"""

from __future__ import annotations

import contextlib
import json
import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from ..files.elfheaders import Segment
from ..files.safefile import is_regular_file
from .demangle import demangle
from .dsotable import KIND_NAMES, DsoSymbolTable
from .elfsyms import ElfSymbols
from .symnames import LazyNames, _same_name

FORMAT = 1
LIMIT = 1 << 30
_CONVERT: dict[str, Callable[[str], str]] = {"demangle": demangle, "same": _same_name}
_HASHED = ("tables", "files")  # the code that decides a table (symbols/<these>/*.py)
_code: str | None = None


def code_hash() -> str:
    """A hash of perftui's code that decides a table (a changed rule: another key)."""
    global _code
    if _code is None:
        h = xxhash.xxh3_128()
        root = Path(__file__).resolve().parents[1]
        for d in _HASHED:
            for p in sorted((root / d).glob("*.py")):
                h.update(p.name.encode())
                h.update(p.read_bytes())
        _code = h.hexdigest()
    return _code


def _hash_file(h: xxhash.xxh3_128, path: str) -> bool:
    if not is_regular_file(path):
        return False
    try:
        with open(path, "rb") as f:
            while chunk := f.read(8 << 20):
                h.update(chunk)
    except OSError:
        return False
    return True


def elf_key(path: str, runtime_path: str | None, build_id: str | None) -> str | None:
    """The key of a user ELF table (None: a file that cannot be read whole)."""
    h = xxhash.xxh3_128()
    h.update(json.dumps([FORMAT, code_hash(), build_id, runtime_path is not None]).encode())
    if not _hash_file(h, path):
        return None
    if runtime_path is not None and runtime_path != path and not _hash_file(h, runtime_path):
        return None
    return h.hexdigest()


def default_dir(cache_dir: str) -> str:
    return os.path.join(cache_dir, "symbols")


class TableStore:
    """The tables in ``directory`` (made on the first save)."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def _path(self, key: str, what: str = "") -> str:
        return os.path.join(self.directory, f"{key}{what}.npz")

    # -- reading ----------------------------------------------------------------------
    def load(self, key: str, path: str, runtime_path: str | None) -> ElfSymbols | None:
        """The kept table of ``key`` as read from ``path`` (and ``runtime_path``); None:
        not kept, or damaged (then removed)."""
        file = self._path(key)
        if not os.path.exists(file):
            return None
        try:
            with np.load(file, allow_pickle=False) as z:
                got = {k: z[k] for k in z.files}
            syms = _syms_of(got, path, runtime_path)
        except (OSError, ValueError, KeyError, TypeError, IndexError, zipfile.BadZipFile):
            self.remove(key)
            return None
        with contextlib.suppress(OSError):
            os.utime(file)  # the LRU clock
        t = syms.table
        if "replay_ops" in got:
            t.set_tree_source(self._tree_source(key, t, got))
        return syms

    def read_arrays(self, key: str) -> dict[str, np.ndarray] | None:
        """The arrays kept under ``key`` (None: not kept, or unreadable: then removed)."""
        file = self._path(key)
        if not os.path.exists(file):
            return None
        try:
            with np.load(file, allow_pickle=False) as z:
                got = {k: z[k] for k in z.files}
        except (OSError, ValueError, KeyError, zipfile.BadZipFile):
            self.remove(key)
            return None
        with contextlib.suppress(OSError):
            os.utime(file)  # the LRU clock
        return got

    def write_arrays(self, key: str, arrays: dict[str, np.ndarray]) -> None:
        """Keep ``arrays`` under ``key`` (quietly nothing when they cannot be written)."""
        self._write(self._path(key), arrays)
        self._bound()

    def _tree_source(self, key: str, table: DsoSymbolTable, got: dict[str, np.ndarray]
                     ) -> Callable[[], tuple[int, np.ndarray, np.ndarray]]:
        def tree() -> tuple[int, np.ndarray, np.ndarray]:
            kept = self._load_tree(key, len(table))
            if kept is not None:
                return kept
            from .rbtree import replay

            starts, order = got["replay_starts"], got["replay_order"]
            root, left, right = replay(starts.tolist(), _ops_of(got))
            pos = np.full(len(starts) + 1, -1, dtype=np.int64)
            pos[order] = np.arange(len(order))
            out = (int(pos[root]) if root >= 0 else -1,
                   pos[np.asarray(left, dtype=np.int64)[order]],
                   pos[np.asarray(right, dtype=np.int64)[order]])
            self._save_tree(key, out)
            return out

        return tree

    def _load_tree(self, key: str, n: int) -> tuple[int, np.ndarray, np.ndarray] | None:
        file = self._path(key, ".tree")
        if not os.path.exists(file):
            return None
        try:
            with np.load(file, allow_pickle=False) as z:
                root, left, right = int(z["root"][0]), z["left"], z["right"]
            ok = (len(left) == len(right) == n and -1 <= root < n
                  and all(len(a) == 0 or (a.min() >= -1 and a.max() < n) for a in (left, right)))
            if not ok:
                raise ValueError("tree out of range")
        except (OSError, ValueError, KeyError, IndexError, zipfile.BadZipFile):
            with contextlib.suppress(OSError):
                os.unlink(file)
            return None
        return root, left.astype(np.int64), right.astype(np.int64)

    # -- writing ----------------------------------------------------------------------
    def save(self, key: str, syms: ElfSymbols) -> None:
        """Keep ``syms``'s table (quietly nothing when it cannot be written or kept); its
        tree is kept when a lookup first replays it."""
        arrays = _arrays_of(syms)
        if arrays is None:
            return
        self._write(self._path(key), arrays)
        t = syms.table
        source = t.tree_source
        if source is not None:
            def tree() -> tuple[int, np.ndarray, np.ndarray]:
                out = source()
                self._save_tree(key, out)
                return out

            t.set_tree_source(tree)
        self._bound()

    def _save_tree(self, key: str, tree: tuple[int, np.ndarray, np.ndarray]) -> None:
        root, left, right = tree
        self._write(self._path(key, ".tree"), {"root": np.array([root], np.int64),
                                               "left": np.asarray(left, np.int64),
                                               "right": np.asarray(right, np.int64)})

    def _write(self, file: str, arrays: dict[str, np.ndarray]) -> None:
        tmp = f"{file}.tmp-{os.getpid()}-{os.urandom(4).hex()}"
        try:
            os.makedirs(self.directory, mode=0o700, exist_ok=True)
            with open(tmp, "wb") as f:
                np.savez(f, **arrays)  # type: ignore[arg-type]
            os.replace(tmp, file)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)

    def remove(self, key: str) -> None:
        """The entry of ``key`` gone (its tree too)."""
        for what in ("", ".tree"):
            with contextlib.suppress(OSError):
                os.unlink(self._path(key, what))

    def _bound(self) -> None:
        """Least recently used entries out until the directory is within :data:`LIMIT`."""
        try:
            with os.scandir(self.directory) as it:
                files = [(e.stat().st_mtime, e.stat().st_size, e.name) for e in it
                         if e.name.endswith(".npz") and not e.name.endswith(".tree.npz")]
        except OSError:
            return
        total = sum(size for _t, size, _n in files)
        for _t, size, name in sorted(files):
            if total <= LIMIT:
                break
            self.remove(name[:-len(".npz")])
            total -= size


def clear(cache_dir: str) -> int:
    """Remove every kept table of the cache in ``cache_dir``; how many."""
    d = default_dir(cache_dir)
    n = 0
    with contextlib.suppress(OSError), os.scandir(d) as it:
        for e in it:
            if e.name.endswith(".npz") or ".npz.tmp-" in e.name:
                with contextlib.suppress(OSError):
                    os.unlink(e.path)
                    n += not e.name.endswith(".tree.npz") and ".tmp-" not in e.name
    return n


def _meta(arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(arrays["meta"].tobytes().decode())
    return out


def _arrays_of(syms: ElfSymbols) -> dict[str, np.ndarray] | None:
    t = syms.table
    if not isinstance(t.names, LazyNames):
        return None
    (buf, starts, ends), convert = t.names.raw_slices()
    how = next((k for k, f in _CONVERT.items() if f is convert), None)
    if how is None:
        return None
    meta = {"build_id": syms.build_id, "elf_type": syms.elf_type, "sources": syms.sources,
            "runtime_path": syms.runtime_path, "ref_reloc": syms.ref_reloc,
            "space": t.space, "convert": how,
            "loads": [[s.offset, s.vaddr, s.filesz, s.memsz, s.flags] for s in syms.loads]}
    out = {"meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
           "starts": t.starts, "ends": t.ends, "kinds": t.kinds, "names": buf,
           "name_starts": starts, "name_ends": ends}
    if t.replay_input is not None and t.tree_source is not None:
        all_starts, ops, order = t.replay_input
        table: list[tuple[int, int, int]] = []
        dels: list[np.ndarray] = []
        used = 0  # erased ids logged so far
        for op in ops:
            if op[0] == "ins":
                table.append((0, int(op[1]), int(op[2])))
            else:
                table.append((1, used, used + len(op[1])))
                dels.append(np.asarray(op[1], dtype=np.int64))
                used += len(op[1])
        out.update(replay_starts=np.asarray(all_starts, np.uint64),
                   replay_order=np.asarray(order, np.int64),
                   replay_ops=np.asarray(table, np.int64).reshape(-1, 3),
                   replay_dels=np.concatenate([np.zeros(0, np.int64), *dels]))
    return out


def _ops_of(got: dict[str, np.ndarray]) -> list[tuple[Any, ...]]:
    dels = got["replay_dels"]
    n = len(got["replay_starts"])
    ops: list[tuple[Any, ...]] = []
    for kind, a, b in got["replay_ops"].tolist():
        if kind == 0 and 0 <= a <= b <= n:
            ops.append(("ins", a, b))
        elif kind == 1 and 0 <= a <= b <= len(dels):
            ids = dels[a:b]
            if len(ids) and (ids.min() < 0 or ids.max() >= n):
                raise ValueError("erased ids out of range")
            ops.append(("del", ids.tolist()))
        else:
            raise ValueError("bad replay log")
    return ops


def _syms_of(got: dict[str, np.ndarray], path: str, runtime_path: str | None) -> ElfSymbols:
    meta = _meta(got)
    starts, ends, kinds = got["starts"], got["ends"], got["kinds"]
    buf, ns, ne = got["names"], got["name_starts"], got["name_ends"]
    n = len(starts)
    if not (len(ends) == len(kinds) == len(ns) == len(ne) == n) or starts.dtype != np.uint64:
        raise ValueError("arrays of different lengths")
    if n and (kinds.max() >= len(KIND_NAMES) or ns.min() < 0 or (ne < ns).any()
              or ne.max() > len(buf) or (starts[1:] < starts[:-1]).any()):
        raise ValueError("values out of range")
    from .byteslices import SliceNames

    names = LazyNames(SliceNames(buf.tobytes(), ns, ne), _CONVERT[meta["convert"]])
    table = DsoSymbolTable(starts, ends, names, kinds, str(meta["space"]))
    if "replay_order" in got and (len(got["replay_order"]) != n or (
            n and (got["replay_order"].min() < 0
                   or got["replay_order"].max() >= len(got["replay_starts"])))):
        raise ValueError("replay order out of range")
    loads = [Segment(*[int(v) for v in s]) for s in meta["loads"]]
    return ElfSymbols(path, table, meta["build_id"], str(meta["elf_type"]), loads,
                      list(meta["sources"]), runtime_path if meta["runtime_path"] else None,
                      meta["ref_reloc"])
