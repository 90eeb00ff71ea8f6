"""Interned code locations: what an address resolves to, one id per distinct answer.

A location is a symbol of a dso (``dso`` + symbol start/end), or, when no symbol covers the
address, the address itself within its dso (perf keeps unresolved addresses apart, by their
map-relative address), or a function inlined into a symbol (its DWARF name, the symbol's
range: perf's inline frames of unwound callchains).  Every per-sample array of the symbol
layer holds location ids (int32), so aggregation is ``np.bincount`` and names are looked up
only for what is shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..tasks.dsonames import perf_map_pid

UNKNOWN_DSO = "[unknown]"
_LAST = (1 << 64) - 1


def _unresolved_key(name: str | None, start: int, end: int) -> bool:
    """Whether a location is an unresolved address (kept in the per-dso arrays)."""
    return name is None and end == start + 1 and 0 <= start <= _LAST


@dataclass
class LocationDso:
    """The dso of a location, as perf's report names it: ``name`` is the long name (a path, or
    ``[kernel.kallsyms]``, ``[mod]``, ``[vdso]``, ``[unknown]``...)."""

    name: str
    kernel: bool = False  # kernel or module: perf's ``[k]``
    module: str | None = None  # the kernel module name, for modules
    #: a module resolved without a section map: its ``.text`` assumed at the MMAP start
    assumed_text: bool = False

    @property
    def short_name(self) -> str:
        """perf report's spelling: ``[name]`` for a kernel module, the base name of a path,
        a bracketed name as is, and ``[JIT] tid <pid>`` for a perf map
        (``/tmp/perf-<pid>.map``)."""
        if self.module is not None:
            return f"[{self.module}]"
        if self.name.startswith("[") or "/" not in self.name:
            return self.name
        pid = perf_map_pid(self.name)
        if pid is not None:
            return f"[JIT] tid {pid}"
        return self.name.rsplit("/", 1)[1]


@dataclass
class Locations:
    """The location table: parallel lists, appended to as new locations are met."""

    dsos: list[LocationDso] = field(default_factory=list)
    dso_ids: dict[tuple[str, bool], int] = field(default_factory=dict)
    dso: list[int] = field(default_factory=list)  # location -> dso index
    name: list[str | None] = field(default_factory=list)  # symbol name, None: unresolved
    start: list[int] = field(default_factory=list)  # symbol start, or the address
    end: list[int] = field(default_factory=list)  # symbol end (exclusive), or address + 1
    section: list[str | None] = field(default_factory=list)  # module section, if known
    #: (dso, name, start, end) -> id of the named locations; None: made from the lists
    #: when first needed (a table restored from the cache, which only a resolver made
    #: later adds to)
    _ids: dict[tuple[int, str | None, int, int], int] | None = field(default_factory=dict)
    #: per dso: (sorted unresolved addresses, their ids): every location without a name
    #: covering one address, kept here rather than in ``_ids`` (10^5 of them, added in
    #: blocks: no Python work per address)
    _unres: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    #: the locations that are inlined calls (perf's ``sym->inlined``: a function inlined
    #: into the symbol whose range they keep), and their ids by (dso, name, start, end)
    inlined: set[int] = field(default_factory=set)
    _inl_ids: dict[tuple[int, str, int, int], int] = field(default_factory=dict)
    #: perf's srcline and srcfile of each location, in a table whose locations are split
    #: by them (:mod:`perftui.analysis.srclinelocs`); None elsewhere
    srcline: list[str] | None = None
    srcfile: list[str] | None = None

    def dso_id(self, name: str, kernel: bool = False, module: str | None = None) -> int:
        """The index of a dso, added on first use."""
        key = (name, kernel)
        i = self.dso_ids.get(key)
        if i is None:
            i = self.dso_ids[key] = len(self.dsos)
            self.dsos.append(LocationDso(name, kernel, module))
        return i

    def _id_map(self) -> dict[tuple[int, str | None, int, int], int]:
        if self._ids is None:
            ids: dict[tuple[int, str | None, int, int], int] = {}
            unres: dict[int, tuple[list[int], list[int]]] = {}
            inl: dict[tuple[int, str, int, int], int] = {}
            for i, k in enumerate(zip(self.dso, self.name, self.start, self.end, strict=True)):
                if i in self.inlined and k[1] is not None:
                    inl[(k[0], k[1], k[2], k[3])] = i
                elif _unresolved_key(k[1], k[2], k[3]):
                    a, b = unres.setdefault(k[0], ([], []))
                    a.append(k[2])
                    b.append(i)
                else:
                    ids[k] = i
            self._unres = {}
            for d, (a, b) in unres.items():
                addrs = np.array(a, dtype=np.uint64)
                # the last of repeated entries wins, as in a dict made from the lists
                order = np.lexsort((np.arange(len(addrs)), addrs))
                addrs, got = addrs[order], np.array(b, dtype=np.int32)[order]
                last = np.r_[addrs[1:] != addrs[:-1], True]
                self._unres[d] = (addrs[last], got[last])
            self._ids = ids
            self._inl_ids = inl
        return self._ids

    def add_inlined(self, dso: int, name: str, start: int, end: int,
                    section: str | None = None) -> int:
        """The id of an inlined call named ``name`` inside the symbol ``[start, end)`` of
        ``dso`` (perf's fake inline symbol: the name the DWARF gives, the range of the
        symbol it was inlined into), added on first use."""
        self._id_map()
        key = (dso, name, start, end)
        i = self._inl_ids.get(key)
        if i is None:
            i = self._inl_ids[key] = len(self.dso)
            self.dso.append(dso)
            self.name.append(name)
            self.start.append(start)
            self.end.append(end)
            self.section.append(section)
            self.inlined.add(i)
        return i

    def add(self, dso: int, name: str | None, start: int, end: int,
            section: str | None = None) -> int:
        """The id of a location, added on first use (same dso, name and range: same id)."""
        if _unresolved_key(name, start, end):
            return int(self.unresolved_ids(dso, np.array([start], dtype=np.uint64),
                                           section)[0])
        key = (dso, name, start, end)
        ids = self._id_map()
        i = ids.get(key)
        if i is None:
            i = ids[key] = len(self.dso)
            # (dso last: the length, which readers in other threads go by, counts only
            # whole entries)
            self.name.append(name)
            self.start.append(start)
            self.end.append(end)
            self.section.append(section)
            self.dso.append(dso)
        return i

    def unresolved_ids(self, dso: int, addrs: np.ndarray, section: str | None = None
                       ) -> np.ndarray:
        """The ids of the locations of unresolved addresses of one dso (u64, repeats
        welcome), the new ones added in address order: those met before are found in a
        sorted per-dso array, the new ones appended in one go (callchains repeat the same
        unresolved addresses block after block)."""
        addrs = np.asarray(addrs, dtype=np.uint64)
        self._id_map()
        known, ids = self._unres.get(dso, (np.zeros(0, np.uint64), np.zeros(0, np.int32)))
        out = np.empty(len(addrs), dtype=np.int32)
        if len(known):
            at = np.minimum(np.searchsorted(known, addrs), len(known) - 1)
            hit = known[at] == addrs
            out[hit] = ids[at[hit]]
        else:
            hit = np.zeros(len(addrs), dtype=bool)
        if not hit.all():
            miss = np.flatnonzero(~hit)
            new = np.unique(addrs[miss])
            n = len(new)
            new_ids = np.arange(len(self.dso), len(self.dso) + n, dtype=np.int32)
            starts = new.tolist()
            with np.errstate(over="ignore"):
                ends = (new + np.uint64(1)).tolist()
            if starts[-1] == _LAST:  # its end is 2**64, past what a u64 holds
                ends[-1] = _LAST + 1
            self.name.extend([None] * n)
            self.start.extend(starts)
            self.end.extend(ends)
            self.section.extend([section] * n)
            self.dso.extend([dso] * n)  # (last: see add)
            out[miss] = new_ids[np.searchsorted(new, addrs[miss])]
            merged = np.concatenate([known, new])
            order = np.argsort(merged, kind="stable")
            self._unres[dso] = (merged[order], np.concatenate([ids, new_ids])[order])
        return out

    def __len__(self) -> int:
        return len(self.dso)

    def dso_of(self) -> np.ndarray:
        """dso index of every location (int32 array)."""
        return np.asarray(self.dso, dtype=np.int32)

    def is_kernel(self) -> np.ndarray:
        """True for locations in the kernel or a module (``[k]``), per location."""
        kern = np.array([d.kernel for d in self.dsos], dtype=bool)
        return kern[self.dso_of()] if len(self.dso) else np.zeros(0, dtype=bool)

    def label(self, loc: int) -> str:
        """The symbol as perf report prints it: its name (``name (inlined)`` for an
        inlined call), or the address in hex."""
        n = self.name[loc]
        if n is not None:
            return f"{n} (inlined)" if loc in self.inlined else n
        a = self.start[loc]
        return f"{a:#018x}" if a else "0" * 16  # C's %#llx prints 0 without the 0x

    def identity(self, loc: int) -> tuple[str, bool, str | None, int, int, bool]:
        """What makes location ``loc`` itself in any table: its dso's name and kind, its
        name, range and inlinedness (ids are one table's own)."""
        d = self.dsos[self.dso[loc]]
        return (d.name, d.kernel, self.name[loc], self.start[loc], self.end[loc],
                loc in self.inlined)

    def same_in(self, ids: frozenset[int], other: Locations) -> frozenset[int]:
        """The locations of ``other`` that are ``ids`` of this table (by
        :meth:`identity`; a thread's negative id kept)."""
        want = {self.identity(i) for i in ids if 0 <= i < len(self.dso)}
        names = {w[2] for w in want}
        maybe = [i for i, n in enumerate(other.name) if n in names]  # (then the rest)
        return frozenset({i for i in ids if i < 0} |
                         {i for i in maybe if other.identity(i) in want})

    def dso_name(self, loc: int, short: bool = True) -> str:
        d = self.dsos[self.dso[loc]]
        return d.short_name if short else d.name
