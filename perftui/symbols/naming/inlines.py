"""Inlined frames in the stacks of the names, as perf 6.1's ``--inline`` (its default).

perf replaces each frame of an *unwound* user stack (``unwind_entry`` in
``tools/perf/util/machine.c``: DWARF unwinding, never a frame-pointer or kernel callchain,
nor a sample's own location) by its inline chain (``append_inlines``): the functions
inlined at the frame's address, innermost first, each its own frame (``mix (inlined)``),
then the symbol itself -- or, when the DWARF names that symbol otherwise, the chain alone
(:mod:`..dwarf.dsodwarf`).  A frame without a symbol, or in a DSO whose DWARF knows
nothing of the address, stays as it is.

Here that is done once per distinct (stack, offsets) pair of the unwound samples, after the
names pass: each distinct frame's chain is read once, the stacks are rebuilt with numpy and
interned again (a stack equal to one already there gets its id), and the samples' stack and
offsets ids point at the new ones.  An inlined frame keeps its frame's offset.  Every view
that reads the stacks (the children column, callers and callees, call trees, the flame
graph, folded stacks) sees the inlined frames; the cache keeps them with the names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..origins import file_ident
from ..tasks.dsonames import MapKind

if TYPE_CHECKING:
    from ..dwarf.dsodwarf import DsoDwarf
    from .locations import Locations
    from .resolver import Resolver
    from .samplelocs import SampleLocs

__all__ = ["InlineNames", "expand_inlines"]


class InlineNames:
    """The inline chains of a recording's frames: a :class:`~..dwarf.dsodwarf.DsoDwarf`
    per user DSO met, its files found as the resolver found them."""

    def __init__(self, res: Resolver) -> None:
        self.res = res
        self._dsos: dict[int, DsoDwarf | None] = {}
        self._chains: dict[tuple[int, int], list[int] | None] = {}
        self.without: list[str] = []  # DSOs whose frames no DWARF could name

    def dwarf(self, d: int) -> DsoDwarf | None:
        """The addr2line of ``Locations.dsos[d]`` (None: not a user DSO, or no file)."""
        if d in self._dsos:
            return self._dsos[d]
        got: DsoDwarf | None = None
        ld = self.res.locs.dsos[d]
        if not ld.kernel and ld.module is None and not ld.name.startswith(("[", "/tmp/perf-")):
            maps = self.res.model.maps
            md = next((m for m in maps.dsos if m.name == ld.name and m.kind == MapKind.USER),
                      None)
            files = self.res.user_files(md.path, md.build_id) if md is not None else None
            if files is not None:
                # (imported here: its readers import numba, ~0.2 s, which a recording without
                # user frames, or `dump`, never needs)
                from ..dwarf.dsodwarf import DsoDwarf

                got = DsoDwarf(files[0], files[1])
                self.res.add_source(f"dwarf\0{files[0]}", {"file": [got.debug,
                                                                   file_ident(got.debug)]})
                if got.debug is None:
                    self.without.append(ld.name)
        self._dsos[d] = got
        return got

    def chain(self, loc: int, off: int) -> list[int] | None:
        """The location ids an unwound frame ``(loc, off)`` becomes (None: itself)."""
        key = (loc, off)
        if key in self._chains:
            return self._chains[key]
        locs = self.res.locs
        got: list[int] | None = None
        name = locs.name[loc]
        dw = self.dwarf(locs.dso[loc]) if name is not None and loc not in locs.inlined \
            else None
        if dw is not None and name is not None:
            frames = dw.inline_frames(locs.start[loc] + off, name)
            if frames:
                got = [locs.add_inlined(locs.dso[loc], f.name, locs.start[loc],
                                        locs.end[loc], locs.section[loc])
                       if f.inlined else loc for f in frames]
        self._chains[key] = got
        return got

    def notes(self) -> list[str]:
        """What the user is told: the DSOs whose frames are shown without inlined calls."""
        out = [f"inlined frames: {name}: no DWARF (no .debug_info, no debug file): its "
               "frames are shown without the calls inlined into them"
               for name in dict.fromkeys(self.without)]
        for dw in self._dsos.values():
            if dw is not None:
                out += [f"inlined frames: {n}" for n in dw.notes[:3]]
        return out


def _user_frames(locs: Locations) -> np.ndarray:
    """Per location: a symbol of a user DSO (a frame perf may expand)."""
    n = len(locs)
    kern = locs.is_kernel() if n else np.zeros(0, bool)
    named = np.array([x is not None for x in locs.name], dtype=bool)
    out: np.ndarray = named & ~kern
    return out


def _intern(starts: np.ndarray, vals: np.ndarray, new: list[np.ndarray]
            ) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """The CSR (starts, vals) with the sequences ``new`` added where they are not already
    there; (starts, vals, the id of each of ``new``)."""
    seen: dict[bytes, int] = {}
    n = len(starts) - 1
    ids: list[int] = []
    extra: list[np.ndarray] = []
    have: dict[bytes, int] | None = None
    for seq in new:
        b = seq.tobytes()
        i = seen.get(b)
        if i is None:
            if have is None:  # the table's own sequences, once
                have = {vals[int(starts[k]):int(starts[k + 1])].tobytes(): k
                        for k in range(n)}
            i = have.get(b)
            if i is None:
                i = n + len(extra)
                extra.append(seq)
            seen[b] = i
        ids.append(i)
    if extra:
        lens = np.array([len(e) for e in extra], np.int64)
        starts = np.concatenate([starts, starts[-1] + np.cumsum(lens)])
        vals = np.concatenate([vals, *extra]).astype(vals.dtype)
    return starts, vals, ids


def expand_inlines(sl: SampleLocs, names: InlineNames, unwound: np.ndarray,
                   progress: Callable[[int, int], None] | None = None) -> int:
    """Put perf's inline chains into the stacks of the samples at index rows ``unwound``
    (those whose user stack was unwound); the number of frames that were replaced."""
    if sl.stack is None or not len(unwound) or not len(sl):
        return 0
    unwound = np.asarray(unwound, np.int64)
    at = np.searchsorted(sl.rows, unwound)
    inside = at < len(sl.rows)
    at = at[inside]
    at = at[sl.rows[at] == unwound[inside]]
    if not len(at):
        return 0
    key = (sl.stack[at].astype(np.int64) << np.int64(32)) | sl.off_stack[at].astype(np.int64)
    pairs, inv = np.unique(key, return_inverse=True)
    st = (pairs >> np.int64(32)).astype(np.int64)
    ot = (pairs & np.int64(0xFFFFFFFF)).astype(np.int64)
    locs = sl.locs
    user = _user_frames(locs)
    s_starts, s_locs = sl.stack_starts, sl.stack_locs
    o_starts, o_vals = sl.off_starts, sl.off_vals
    new_stacks: list[np.ndarray] = []
    new_offs: list[np.ndarray] = []
    changed: list[int] = []
    replaced = 0
    for i, (s, o) in enumerate(zip(st.tolist(), ot.tolist(), strict=True)):
        lv = s_locs[int(s_starts[s]):int(s_starts[s + 1])]
        ov = o_vals[int(o_starts[o]):int(o_starts[o + 1])]
        if len(lv) != len(ov) or len(lv) < 2:
            continue
        out_l: list[int] = []
        out_o: list[int] = []
        hit = False
        for j, (lc, of) in enumerate(zip(lv.tolist(), ov.tolist(), strict=True)):
            ch = names.chain(lc, of) if j and lc < len(user) and user[lc] else None
            if ch is None:
                out_l.append(lc)
                out_o.append(of)
            else:
                hit = True
                replaced += 1
                out_l += ch
                out_o += [of] * len(ch)
        if hit:
            changed.append(i)
            new_stacks.append(np.array(out_l, np.int32))
            new_offs.append(np.array(out_o, np.uint32))
        if progress is not None and i % 4096 == 0:
            progress(i, len(pairs))
    if not changed:
        return 0
    s_starts, s_locs, sid = _intern(s_starts, s_locs, new_stacks)
    o_starts, o_vals, oid = _intern(o_starts, o_vals, new_offs)
    new_s = st.copy()
    new_o = ot.copy()
    new_s[changed] = sid
    new_o[changed] = oid
    sl.stack[at] = new_s[inv]
    sl.off_stack[at] = new_o[inv]
    sl.stack_starts, sl.stack_locs = s_starts, s_locs
    sl.off_starts, sl.off_vals = o_starts, o_vals
    return replaced
