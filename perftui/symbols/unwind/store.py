"""The joined chains (:class:`~.overlay.ChainOverlay`) kept in the index cache, so a
reopened recording is never unwound again.

They are kept with the recording's index cache entry as every derived result is
(:mod:`~perftui.perfdata.derived`), going when the entry goes.
Its name hashes what the chains depend on besides the recording, as the names' attachment
does (:func:`~..naming.samplestore.signature`: perftui's code, the symbol options; not
``--inline``, which the chains do not depend on).  Its manifest says which files each
DSO's CFI was looked for in (the unwinder's finder, keys as :mod:`..origins` checks
them); before the chains are used every one is found again and must be the same file
(path, size, mtime, inode), else the recording is unwound again and the attachment
replaced.  The arrays are checksummed and range-checked: a damaged one is removed.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import xxhash

from ...perfdata import Recording, derived
from ...perfdata.cacheentry import CachedIndex, CacheError, in_range, one_per
from ..origins import kernel_build_id, still_valid
from .overlay import ChainOverlay

#: Bump when what the attachment holds changes meaning (the code hash catches the rest).
CHAINS_FORMAT = 1
_ARRAYS = {"rows": "i8", "at": "i8", "count": "i8", "buf": "u1", "outcome": "u1"}


def _signature(opts: Any) -> dict[str, Any]:
    from ..naming.samplestore import signature

    sig = {k: v for k, v in signature(opts).items() if k not in ("inline", "engine", "format")}
    plain: dict[str, Any] = json.loads(json.dumps({**sig, "chains_format": CHAINS_FORMAT}))
    return plain


def _name(opts: Any) -> str:
    text = json.dumps(_signature(opts), sort_keys=True)
    return "chains-" + xxhash.xxh3_64_hexdigest(text.encode())


def load_chains(rec: Recording, opts: Any, rows: np.ndarray) -> ChainOverlay | None:
    """The kept chains of DWARF sample ``rows`` (ascending), or None (none kept, or no
    longer right: then removed, and said in the cache's notes)."""
    return derived.kept(rec, _name(opts), lambda att: _load(att, rec, opts, rows),
                        "call chains", "unwinding again", remember=False)


def _load(att: CachedIndex, rec: Recording, opts: Any, rows: np.ndarray) -> ChainOverlay:
    meta = att.meta
    if meta.get("signature") != _signature(opts):
        raise CacheError("made with other symbol options")
    if meta.get("samples") != len(rows) or meta.get("order") != rec.order:
        raise CacheError("made from other samples")
    if not still_valid(rec, opts, meta["sources"], kernel_build_id(rec)):
        raise derived.Stale("binaries changed since their stacks were unwound: "
                            "unwinding again")
    a = att.checked(_ARRAYS)
    kept, at, count, buf = a["rows"], a["at"], a["count"], a["buf"]
    n = len(kept)
    one_per(a, ("at", "count", "outcome"), n, "chain")
    if n and (np.any(np.diff(kept) <= 0) or not np.all(np.isin(kept, rows))):
        raise CacheError("rows: not ascending DWARF sample rows")
    in_range(at, 0, len(buf) + 1, "at")
    in_range(count, 0, len(buf) // 8 + 1, "count")
    if n and (np.any(at % 8) or int((at + count * 8).max()) > len(buf)):
        raise CacheError("a chain outside its words")
    notes = meta["notes"]
    if not isinstance(notes, list):
        raise CacheError("notes: not a list")
    return ChainOverlay(kept, at, count, buf, [str(x) for x in notes], a["outcome"])


def save_chains(rec: Recording, opts: Any, rows: np.ndarray, ov: ChainOverlay,
                sources: dict[str, Any]) -> None:
    """Keep ``ov`` (the chains of DWARF sample ``rows``) with the recording's index cache
    entry, when there is one that can take it (else the cache's notes say why)."""
    got = {"rows": ov.rows, "at": ov.at, "count": ov.count, "buf": ov.buf,
           "outcome": ov.outcome}
    arrays = {k: np.asarray(got[k], np.dtype(dt)) for k, dt in _ARRAYS.items()}
    meta = {"signature": _signature(opts), "samples": len(rows), "order": rec.order,
            "sources": json.loads(json.dumps(sources)), "notes": list(ov.notes)}
    derived.keep(rec, _name(opts), meta, arrays, len(ov.rows))
