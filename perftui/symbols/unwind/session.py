"""A recording's user stacks unwound once, before anything reads its callchains.

:func:`ensure_unwound` is called by whatever is about to read callchains through a
resolver (the names pass, :meth:`~..naming.resolver.Resolver.samples`): the first call
unwinds every DWARF sample (or takes the chains from the index cache, :mod:`.store`), joins
every LBR call stack (:mod:`.lbr`, numpy: made again on each open) and installs the joined
chains (:mod:`.overlay`); later calls find them there.  The notes on
what could not be unwound go to the resolver's notes (``i`` in the browser, stderr for the
CLI) once.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from ...heap import trim
from ...perfdata import Feature
from ..files.safefile import is_regular_file, join_symfs
from .arch import arch_named
from .overlay import ChainOverlay, dwarf_rows, merged, overlay_of, set_overlay

if TYPE_CHECKING:
    from ..naming.resolver import Resolver

_lock = threading.Lock()


def ensure_unwound(res: Resolver) -> ChainOverlay | None:
    """The joined chains of ``res``'s recording, unwound (or restored) on the first call."""
    rec = res.rec
    with _lock:
        ov = overlay_of(rec)
        if ov is not None:
            return ov
        from .lbr import lbr_overlay

        ov = merged(_unwind(res), lbr_overlay(rec, res.opts.stitch_lbr))
        set_overlay(rec, ov)
        res.notes.extend(ov.notes)
        return ov


def _unwind(res: Resolver) -> ChainOverlay:
    from .store import load_chains, save_chains

    rec = res.rec
    rows = dwarf_rows(rec)
    empty = ChainOverlay.empty()
    if not len(rows):
        return empty
    name = rec.feature(Feature.ARCH) or os.uname().machine
    arch = arch_named(name)
    if arch is None:
        empty.notes.append(f"DWARF unwinding: {len(rows)} samples' user stacks not unwound: "
                           f"{name} is not an architecture perftui unwinds")
        return empty
    got = load_chains(rec, res.opts, rows)
    if got is not None:
        return got
    from .unwinder import BLOCK, Unwinder  # numba: only where there is a stack to unwind

    sources: dict[str, Any] = {}
    u = Unwinder(rec, res.model, arch, _finder(res, sources))
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    outcomes: list[np.ndarray] = []
    for lo in range(0, len(rows), BLOCK):
        block = u.unwind(rows[lo:lo + BLOCK])
        parts.append(u.joined(block))
        outcomes.append(block.outcome[np.diff(block.starts) > 0])
    trim()
    kept = np.concatenate([p[0] for p in parts])
    count = np.concatenate([p[1] for p in parts]).astype(np.int64)
    words = np.concatenate([p[2] for p in parts])
    at = np.zeros(len(count), np.int64)
    if len(count):
        at[1:] = np.cumsum(count)[:-1] * 8
    buf = words.astype(np.dtype(rec.order + "u8")).view(np.uint8)
    ov = ChainOverlay(kept, at, count, buf, u.notes(), np.concatenate(outcomes))
    save_chains(rec, res.opts, rows, ov, sources)
    return ov


def _finder(res: Resolver, sources: dict[str, Any]) -> Any:
    """The files of a user DSO (or the vDSO) in perf's order, found as the resolver finds
    them; what was found kept in ``sources`` (the cache's check that they are the same)."""

    def find(path: str, build_id: str, vdso: bool) -> tuple[list[str], str]:
        if vdso:
            cand, files, desc = res.finder.vdso(path, build_id)
            sources[f"vdso\0{path}\0{build_id}"] = desc
            return ([cand] if cand else []), files.message()
        files, desc = res.finder.user(path, build_id)
        sources[f"user\0{path}\0{build_id}"] = desc
        real = join_symfs(res.opts.symfs, path)
        found = [files.runtime, files.syms, real if is_regular_file(real) else None]
        return [p for p in dict.fromkeys(found) if p is not None], files.message()

    return find
