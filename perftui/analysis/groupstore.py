"""Every sample's profile group (:mod:`.samplegroups`) kept in the index cache next to the
names it was made from (:mod:`~perftui.symbols.naming.samplestore`), so a reopened browser
neither resolves nor groups.

The groups are kept with the recording's cache entry as the names are
(:mod:`~perftui.perfdata.derived`): per sample its group id (int32), and the builder's
small tables (paths, groups, pairs, slots).  They
are used only with the very names they were made from (the names' token, which changes
whenever the names are resolved again) and the same grouping code (a hash of its source
files); their arrays are checksummed and range-checked, a bad or stale one is removed.  An
entry keeps one set of groups: writing one removes the others.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from ..engine import compiled
from ..perfdata import Recording, derived
from ..perfdata.cacheentry import CachedIndex, CacheError, in_range, one_per, starts_of
from ..symbols.naming.samplelocs import SampleLocs
from .samplegroups import GroupsBuilder, KeyIds, SampleGroups, assemble
from .stacktree import Interner

#: Bump when what the attachment holds changes meaning (the code hash catches the rest).
GROUPS_FORMAT = 2  # 2: each group's lowest processing rank
_CODE = ("samplegroups.py", "stacktree.py", "groupstore.py", "hashids.py")


def groups_name(names_attachment: str, prefix: str = "groups-") -> str:
    """The attachment's name: of the names' attachment, this format and this code."""
    h = xxhash.xxh3_64()
    h.update(f"{GROUPS_FORMAT}:{names_attachment}".encode())
    here = Path(__file__).resolve().parent
    for f in _CODE:
        h.update((here / f).read_bytes())
    return prefix + h.hexdigest()


def sample_groups(rec: Recording, sl: SampleLocs, names_attachment: str, callchains: bool,
                  columns: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]],
                  alloc: Callable[[str, str, int], np.ndarray], block: int = 1 << 16,
                  prefix: str = "groups-") -> SampleGroups:
    """Every sample of ``sl`` grouped: from the cache when it keeps the groups of these
    very names, else grouped (``columns(rows)``: the index's tid, cpu and attr of rows;
    block by block) and kept when the cache can take them (else the group ids come from
    ``alloc``).  ``prefix``: the attachment's (an entry keeps one set of each: the
    names' groups, ``srcgroups-`` of the names split by source line)."""
    name = groups_name(names_attachment, prefix)
    got = derived.kept(rec, name, lambda att: _load(att, sl, callchains), "profile groups",
                       "grouping again", remember=False)
    if got is not None:
        return got
    store = derived.begin(rec)
    n = len(sl)
    try:
        group = store.array("group", "i4", n) if store is not None else alloc("group", "i4", n)
        interner: Callable[[], KeyIds] = Interner
        if compiled(len(rec.columns)):
            from .hashids import HashInterner  # numba: loaded by the names pass before this

            interner = HashInterner
        builder = GroupsBuilder(sl.locs, sl.comm_names, callchains=callchains,
                                interner=interner)
        for lo in range(0, n, block):
            hi = min(n, lo + block)
            group[lo:hi] = builder.add_named(sl, lo, hi, *columns(sl.rows[lo:hi]))
        tables = builder.tables()
    except BaseException:
        if store is not None:
            store.discard()
        raise
    if store is not None:  # one entry keeps one set of groups: older ones (other code,
        # other names) go
        meta = {"names": sl.token, "samples": len(sl), "callchains": callchains}
        derived.commit(rec, store, name, meta, {"group": group, **tables}, len(sl),
                       replaces=prefix)
    return assemble(tables, sl.rows, group, sl.period.view(np.int64), sl.locs,
                    sl.comm_names, callchains)


def _load(att: CachedIndex, sl: SampleLocs, callchains: bool) -> SampleGroups:
    meta = att.meta
    if meta.get("names") != sl.token or meta.get("samples") != len(sl) \
            or meta.get("callchains") != callchains:
        raise derived.Stale()  # made from other names: grouped again
    a = att.checked(DTYPES)
    _validate(a, sl)
    return assemble(a, sl.rows, a["group"], sl.period.view(np.int64), sl.locs,
                    sl.comm_names, callchains)


#: what each array of the groups is
DTYPES = {"group": "i4", "path_starts": "i8", "path_frames": "i8", "group_keys": "i8",
          "pair_keys": "i8", "slot_keys": "i8", "group_rank": "i8"}


def _validate(a: dict[str, Any], sl: SampleLocs) -> None:
    """Every id in range, every array of its length (else CacheError)."""
    one_per(a, ("group",), len(sl), "sample")
    starts, frames = a["path_starts"], a["path_frames"]
    starts_of(starts, len(frames), "path_starts", "paths", empty=False)
    in_range(frames, -len(sl.comm_names), len(sl.locs), "path_frames")
    head = np.zeros(len(frames), dtype=bool)
    head[starts[:-1]] = True
    if np.any((frames < 0) != head):
        raise CacheError("path_frames: not a thread, then locations")
    gk, pk, sk = a["group_keys"], a["pair_keys"], a["slot_keys"]
    in_range(gk >> 32, 0, len(starts) - 1, "group_keys")
    in_range(gk & 0xFFFFFFFF, 0, len(pk), "group_keys")
    in_range(pk >> 32, 0, len(sk), "pair_keys")
    in_range(pk & 0xFFFFFFFF, 0, len(sl.locs), "pair_keys")
    in_range(a["group"], 0, len(gk), "group")
    if len(a["group_rank"]) != len(gk):
        raise CacheError("group_rank: not one per group")
