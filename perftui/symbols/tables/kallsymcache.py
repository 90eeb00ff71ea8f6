"""Parsed kallsyms kept on disk between runs, keyed by the text's content.

``/proc/kallsyms`` is read and parsed by every first report of a recording with kernel
samples (~0.15 s of CPU for 120 K symbols, of which reading the text is ~0.06 s): the
parse, not the read, is what a kept table saves.  The key is an xxh3 of the whole text
(a module loaded or unloaded changes it), of perftui's code of the symbol tables and of a
format number, so nothing is trusted by its path.  The entry is one ``.npz`` in the
:class:`~.diskcache.TableStore`'s directory (the index cache's ``symbols/``, bounded with
the other tables), range-checked on reading; a damaged one is removed and the text parsed
again.

Public API: :func:`load_kept_kallsyms` ``(path, store) -> Kallsyms``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import xxhash

from .byteslices import SliceNames
from .diskcache import TableStore, code_hash
from .dsotable import KIND_NAMES, DsoSymbolTable
from .kallsyms import DEFAULT_MAX_KALLSYMS, Kallsyms, parse_and_trim, read_kallsyms

__all__ = ["load_kept_kallsyms"]

FORMAT = 1


def kallsyms_key(text: bytes) -> str:
    """The store's key of a kallsyms text."""
    h = xxhash.xxh3_128()
    h.update(json.dumps(["kallsyms", FORMAT, code_hash()]).encode())
    h.update(text)
    return "kallsyms-" + h.hexdigest()


def load_kept_kallsyms(path: str, store: TableStore | None,
                       max_size: int = DEFAULT_MAX_KALLSYMS) -> Kallsyms:
    """:func:`~.kallsyms.load_kallsyms` of ``path``, the parse kept in ``store`` (None:
    parsed every time) and taken from it when the text is the same."""
    text = read_kallsyms(path, max_size)
    if store is None:
        return parse_and_trim(text, path)
    key = kallsyms_key(text)
    got = store.read_arrays(key)
    if got is not None:
        try:
            return _from_arrays(got, path)
        except (ValueError, KeyError, TypeError, IndexError):
            store.remove(key)
    ks = parse_and_trim(text, path)
    store.write_arrays(key, _to_arrays(ks))
    return ks


def _tables(ks: Kallsyms) -> list[DsoSymbolTable]:
    return [ks.kernel, *ks.modules.values()]


def _slices(names: Sequence[str]) -> tuple[bytes, np.ndarray, np.ndarray]:
    """The names as one buffer and each one's start and end in it."""
    if isinstance(names, SliceNames):
        return names.parts()
    raw = [n.encode("utf-8", "surrogateescape") for n in names]
    ends = np.cumsum([len(b) for b in raw], dtype=np.int64)
    return b"".join(raw), ends - np.array([len(b) for b in raw], np.int64), ends


def _to_arrays(ks: Kallsyms) -> dict[str, np.ndarray]:
    tables = _tables(ks)
    parts = [_slices(t.names) for t in tables]
    base = np.cumsum([0, *(len(b) for b, _s, _e in parts)]).tolist()
    meta = {"skipped": ks.skipped, "filtered": ks.filtered, "raw": ks.raw,
            "modules": list(ks.modules)}
    return {"meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
            "sizes": np.array([len(t.starts) for t in tables], np.int64),
            "starts": np.concatenate([t.starts for t in tables]),
            "ends": np.concatenate([t.ends for t in tables]),
            "kinds": np.concatenate([t.kinds for t in tables]),
            "names": np.frombuffer(b"".join(b for b, _s, _e in parts), dtype=np.uint8),
            "name_starts": np.concatenate([np.zeros(0, np.int64)] + [
                s.astype(np.int64) + b for (_d, s, _e), b in zip(parts, base, strict=False)]),
            "name_ends": np.concatenate([np.zeros(0, np.int64)] + [
                e.astype(np.int64) + b for (_d, _s, e), b in zip(parts, base, strict=False)])}


def _from_arrays(got: dict[str, np.ndarray], path: str) -> Kallsyms:
    meta: dict[str, Any] = json.loads(got["meta"].tobytes().decode())
    sizes, starts, ends, kinds = got["sizes"], got["starts"], got["ends"], got["kinds"]
    buf, ns, ne = got["names"], got["name_starts"], got["name_ends"]
    n = len(starts)
    modules = [str(m) for m in meta["modules"]]
    if (starts.dtype != np.uint64 or ends.dtype != np.uint64 or sizes.dtype != np.int64
            or not (len(ends) == len(kinds) == len(ns) == len(ne) == n)
            or len(sizes) != 1 + len(modules) or (sizes < 0).any() or int(sizes.sum()) != n):
        raise ValueError("arrays of different lengths")
    if n and (kinds.max() >= len(KIND_NAMES) or ns.min() < 0 or (ne < ns).any()
              or ne.max() > len(buf)):
        raise ValueError("values out of range")
    data = buf.tobytes()
    dt = np.int32 if len(data) < 2**31 else np.int64  # (as SliceNames.compacted's)
    ns, ne = ns.astype(dt), ne.astype(dt)
    bounds = np.cumsum([0, *sizes.tolist()])
    tables = []
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        s = starts[lo:hi]
        if len(s) > 1 and (s[1:] < s[:-1]).any():
            raise ValueError("starts out of order")
        names = SliceNames(data, ns[lo:hi], ne[lo:hi])  # (one buffer of names only)
        tables.append(DsoSymbolTable(s, ends[lo:hi], names, kinds[lo:hi], "address"))
    raw = {str(k): int(v) for k, v in dict(meta["raw"]).items()}
    return Kallsyms(path, tables[0], dict(zip(modules, tables[1:], strict=True)),
                    int(meta["skipped"]), int(meta["filtered"]), raw)
