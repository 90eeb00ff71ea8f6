"""Symbol tables as sorted numpy arrays, built with perf 6.1's own rules.

:class:`DsoSymbolTable` is what every symbol source returns (ELF files, kallsyms, perf maps):

- ``starts``, ``ends``: sorted ``uint64`` arrays; symbol ``i`` covers ``[starts[i], ends[i])``,
  and a symbol with ``ends[i] == starts[i]`` covers its start address only (perf's
  ``symbols__find``);
- ``names``: the names as perf prints them (demangled where perf demangles);
- ``kinds``: ``uint8`` codes, :data:`KIND_NAMES` gives their words (``"func"``, ``"object"``,
  ``"label"``, ``"plt"``);
- ``space``: what the addresses are (``"file offset"`` for user ELF files, as perf 6.1 keeps
  them, ``"address"`` for kallsyms, vmlinux and perf maps);
- :meth:`DsoSymbolTable.lookup` ``(addrs) -> int64 index or -1`` (vectorised) and
  :meth:`DsoSymbolTable.name_at` ``(addr) -> (name, offset) | None``.

:class:`PerfSymbolBuilder` reproduces how perf 6.1 fills its symbol tree (``tools/perf/util/
symbol.c``): symbols are added in batches; :meth:`~PerfSymbolBuilder.fixup_end` gives
zero-size symbols the start of the next one as their end (``symbols__fixup_end``);
:meth:`~PerfSymbolBuilder.fixup_duplicate` keeps one symbol per start address with perf's
``choose_best_symbol`` (``symbols__fixup_duplicate``).

Where two symbols overlap (one starts inside another), perf's answer depends on the shape
of its red-black tree; :meth:`DsoSymbolTable.lookup` returns the one with the greatest start
that covers the address, else the symbol before it that still covers it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .byteslices import SliceNames, slices_text
from .lookup import as_u64, nearest_start

__all__ = [
    "KIND_FUNC",
    "KIND_LABEL",
    "KIND_NAMES",
    "KIND_OBJECT",
    "KIND_PLT",
    "STB_GLOBAL",
    "STB_LOCAL",
    "STB_WEAK",
    "DsoSymbolTable",
    "PerfSymbolBuilder",
]

KIND_FUNC, KIND_OBJECT, KIND_LABEL, KIND_PLT = 0, 1, 2, 3
#: Words for the ``kinds`` codes.
KIND_NAMES = ("func", "object", "label", "plt")
STB_LOCAL, STB_GLOBAL, STB_WEAK = 0, 1, 2

_U64 = np.uint64
_PAGE = 4096


class NamePool(Sequence[str]):
    """Names added in parts (lists, or lazy :class:`StrtabNames`), indexed as one list."""

    def __init__(self) -> None:
        self._parts: list[Sequence[str]] = []
        self._bases: list[int] = []
        self._n = 0

    @classmethod
    def of(cls, names: Sequence[str]) -> NamePool:
        pool = cls()
        pool.extend(names)
        return pool

    def extend(self, names: Sequence[str]) -> None:
        self._parts.append(names)
        self._bases.append(self._n)
        self._n += len(names)

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        if i < 0:
            i += self._n
        k = bisect_right(self._bases, i) - 1
        return self._parts[k][i - self._bases[k]]

    def take(self, ids: np.ndarray) -> list[str]:
        """``[self[i] for i in ids]`` for sorted ``ids``, a string table's in one decode."""
        ids = np.asarray(ids, dtype=np.int64)
        bases = np.asarray(self._bases, dtype=np.int64)
        cuts = np.searchsorted(ids, bases)
        out: list[str] = []
        for k, part in enumerate(self._parts):
            rows = ids[cuts[k]:cuts[k + 1] if k + 1 < len(cuts) else len(ids)] - bases[k]
            if not len(rows):
                continue
            if isinstance(part, StrtabNames) and len(rows) >= _MANY_NAMES:
                out += part.take(rows)
            else:
                out += [part[i] for i in rows.tolist()]
        return out


    def slices(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Names ``ids`` (any order) as slices ``[starts, ends)`` of one byte buffer
        (UTF-8, surrogateescape), without decoding a string table's names."""
        ids = np.asarray(ids, dtype=np.int64)
        part = np.searchsorted(np.asarray(self._bases, dtype=np.int64), ids, side="right") - 1
        bufs: list[np.ndarray] = []
        starts = np.zeros(len(ids), np.int64)
        ends = np.zeros(len(ids), np.int64)
        at = 0
        for k, names in enumerate(self._parts):
            sel = np.flatnonzero(part == k)
            if not len(sel):
                continue
            rows = ids[sel] - self._bases[k]
            if isinstance(names, StrtabNames):
                buf, a, b = names.slices(rows)
            else:
                raw = [names[i].encode("utf-8", "surrogateescape") for i in rows.tolist()]
                buf = np.frombuffer(b"".join(raw), dtype=np.uint8)
                b = np.cumsum([len(x) for x in raw], dtype=np.int64)
                a = b - np.array([len(x) for x in raw], dtype=np.int64)
            starts[sel], ends[sel] = a + at, b + at
            bufs.append(buf)
            at += len(buf)
        return (np.concatenate(bufs) if bufs else np.zeros(0, np.uint8)), starts, ends


class StrtabNames(Sequence[str]):
    """Names in an ELF string table, decoded on access (a big library has 10^5 of them)."""

    def __init__(self, strtab: bytes, offsets: np.ndarray) -> None:
        self._strtab = strtab
        self._offsets = offsets
        self._nuls: np.ndarray | None = None  # where the table's strings end, once needed

    def __len__(self) -> int:
        return len(self._offsets)

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        off = int(self._offsets[i])
        table = self._strtab
        if off < 0 or off >= len(table):
            return ""
        end = table.find(b"\0", off)
        raw = table[off:] if end < 0 else table[off:end]
        return raw.decode("utf-8", "surrogateescape")

    def take(self, rows: np.ndarray) -> list[str]:
        """``[self[i] for i in rows]``, in one decode."""
        return slices_text(*self.slices(rows), sep=0)

    def slices(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(the table's bytes, starts, ends) of names ``rows``: an offset outside the
        table is the empty name."""
        buf = np.frombuffer(self._strtab, dtype=np.uint8)
        off = np.asarray(self._offsets, dtype=np.int64)[rows]
        inside = (off >= 0) & (off < len(buf))
        starts = np.where(inside, off, 0)
        if self._nuls is None:
            self._nuls = np.append(np.flatnonzero(buf == 0), len(buf))
        nuls = self._nuls
        ends = nuls[np.searchsorted(nuls[:-1], starts)]  # the table's end: no NUL follows
        return buf, starts, np.where(inside, ends, starts)


class _Picked(Sequence[str]):
    """``names[order[i]]`` without materialising the names."""

    def __init__(self, names: Sequence[str], order: np.ndarray) -> None:
        self._names, self._order = names, order

    def __len__(self) -> int:
        return len(self._order)

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        return self._names[int(self._order[i])]

    def slices(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every name, in order, as slices of one byte buffer (:meth:`NamePool.slices`)."""
        if isinstance(self._names, NamePool):
            return self._names.slices(self._order)
        return NamePool.of(self).slices(np.arange(len(self)))


class LazyNames(Sequence[str]):
    """Names turned into their shown form (demangled) on first access, then kept: a big
    C++ or Rust library has 10^5 names and a profile shows a few hundred of them."""

    def __init__(self, raw: Sequence[str], convert: Callable[[str], str]) -> None:
        self._raw = raw
        self._convert = convert
        self._done: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self._raw)

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        if not isinstance(i, int):
            raise TypeError("LazyNames takes integer indexes")
        if i < 0:
            i += len(self._raw)
        got = self._done.get(i)
        if got is None:
            got = self._done[i] = self._convert(self._raw[i])
        return got

    def raw_slices(self) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray],
                                  Callable[[str], str]]:
        """Every name before it is turned into its shown form, as slices of one byte
        buffer, and what turns it."""
        raw = self._raw
        got = raw.slices() if isinstance(raw, _Picked) else \
            NamePool.of(raw).slices(np.arange(len(raw)))
        return got, self._convert

    def reorder(self, order: np.ndarray) -> LazyNames:
        """The same names in another order (still lazy)."""
        return LazyNames(_Picked(self._raw, np.asarray(order, dtype=np.int64)), self._convert)

    def index(self, value: object, start: int = 0, stop: int = 2**63) -> int:
        for i in range(max(start, 0), min(stop, len(self._raw))):
            if self[i] == value:
                return i
        raise ValueError(f"{value!r} is not in the names")


#: name sequences a table keeps as they are (made on access)
_LAZY = (LazyNames, SliceNames)


class DsoSymbolTable:
    """Sorted, non-empty-or-empty arrays of symbols; see the module docstring."""

    def __init__(
        self,
        starts: np.ndarray,
        ends: np.ndarray,
        names: Sequence[str],
        kinds: np.ndarray | None = None,
        space: str = "address",
        tree: Callable[[], tuple[int, np.ndarray, np.ndarray]] | None = None,
    ) -> None:
        starts = np.ascontiguousarray(starts, dtype=_U64)
        ends = np.ascontiguousarray(ends, dtype=_U64)
        n = len(starts)
        if ends.shape != (n,) or len(names) != n:
            raise ValueError("starts, ends and names must have the same length")
        if kinds is None:
            kinds = np.zeros(n, dtype=np.uint8)
        kinds = np.ascontiguousarray(kinds, dtype=np.uint8)
        if n > 1 and bool(np.any(starts[1:] < starts[:-1])):
            tree = None  # rows reordered: the tree's rows would not match
            order = np.argsort(starts, kind="stable")
            starts, ends, kinds = starts[order], ends[order], kinds[order]
            names = names.reorder(order) if isinstance(names, _LAZY) else \
                [names[i] for i in order]
        self.starts: np.ndarray = starts
        self.ends: np.ndarray = ends
        # lazy names stay lazy: demangling every name of a big library costs seconds
        self.names: Sequence[str] = names if isinstance(names, _LAZY) else list(names)
        self.kinds: np.ndarray = kinds
        self.space = space
        self._tree_source = tree
        self._tree: tuple[int, list[int], list[int]] | None = None
        #: what perf's tree is replayed from (:meth:`PerfSymbolBuilder.table`: every
        #: symbol's start by id, the insert/erase log, the ids of these rows), for
        #: :mod:`.diskcache`; None where no builder made the table
        self.replay_input: tuple[np.ndarray, list[tuple[Any, ...]], np.ndarray] | None = None
        # Overlap zones: [start, end) of every symbol that reaches past the next start;
        # there perf's answer depends on its tree, so lookups descend a replay of it.
        if n > 1:
            container = ends[:-1] > starts[1:]
            zs, ze = starts[:-1][container], ends[:-1][container]
            if len(zs):
                ze = np.maximum.accumulate(ze)
                self._zones: tuple[np.ndarray, np.ndarray] | None = (zs, ze)
            else:
                self._zones = None
        else:
            self._zones = None
        # For addresses past the end of the symbol just before them: the symbol before
        # that reaches furthest (an enclosing symbol, when symbols nest).
        if n:
            reach = np.maximum.accumulate(ends)
            first_at_reach = np.flatnonzero(np.r_[True, reach[1:] != reach[:-1]])
            owner = np.repeat(first_at_reach, np.diff(np.r_[first_at_reach, n]))
            self._reach = reach
            self._reach_owner = owner.astype(np.int64)
        else:
            self._reach = ends
            self._reach_owner = np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.names)

    def __repr__(self) -> str:
        return f"DsoSymbolTable({len(self)} symbols, space={self.space!r})"

    def lookup(self, addrs: np.ndarray | Sequence[int] | int) -> np.ndarray:
        """Index into :attr:`names` of the symbol covering each address, -1 where none does.

        ``addrs`` must be in :attr:`space` (for an ELF file: ``ip - map.start + map.pgoff``).
        Negative values (signed input) give -1.
        """
        u, valid = as_u64(addrs)
        result = np.full(u.shape, -1, dtype=np.int64)
        if not len(self.starts) or not u.size:
            return result
        idx, has = nearest_start(self.starts, u, valid)
        i = np.where(has, idx, 0)
        start, end = self.starts[i], self.ends[i]
        hit = has & ((u < end) | ((u == start) & (end == start)))
        result[hit] = idx[hit]
        # Not in the nearest symbol: an earlier one that reaches over the address.
        miss = has & ~hit
        if miss.any():
            owner = self._reach_owner[i[miss]]
            covered = u[miss] < self._reach[i[miss]]
            result[np.flatnonzero(miss)[covered]] = owner[covered]
        if self._zones is not None and self._tree_source is not None:
            zs, ze = self._zones
            z = np.searchsorted(zs, u, side="right") - 1
            in_zone = valid & (z >= 0) & (u < ze[np.maximum(z, 0)])
            if in_zone.any():
                self._descend_into(u, in_zone, result)
        return result

    @property
    def tree_source(self) -> Callable[[], tuple[int, np.ndarray, np.ndarray]] | None:
        """What gives perf's tree over these rows ``(root, left, right)`` when a lookup
        first needs it (None: the rows were reordered, or no tree is known)."""
        return self._tree_source

    def set_tree_source(self, tree: Callable[[], tuple[int, np.ndarray, np.ndarray]]
                        ) -> None:
        """Another way to the same tree (kept on disk, :mod:`.diskcache`)."""
        self._tree_source = tree
        self._tree = None

    def _descend_into(self, u: np.ndarray, mask: np.ndarray, result: np.ndarray) -> None:
        """perf's tree descent for the addresses in overlap zones."""
        from perftui.symbols.tables.rbtree import descend

        if self._tree is None:
            assert self._tree_source is not None
            root0, left0, right0 = self._tree_source()
            self._tree = (root0, left0.tolist(), right0.tolist())
        root, left, right = self._tree
        starts, ends = self._starts_list, self._ends_list
        flat = result.reshape(-1)
        uf = u.reshape(-1)
        for k in np.flatnonzero(mask.reshape(-1)).tolist():
            flat[k] = descend(root, left, right, starts, ends, int(uf[k]))

    @property
    def _starts_list(self) -> list[int]:
        if not hasattr(self, "_sl"):
            self._sl: list[int] = self.starts.tolist()
            self._el: list[int] = self.ends.tolist()
        return self._sl

    @property
    def _ends_list(self) -> list[int]:
        self._starts_list  # noqa: B018  (fills both)
        return self._el

    def name_at(self, addr: int) -> tuple[str, int] | None:
        """``(name, addr - symbol start)`` for one address in :attr:`space`, or None."""
        if addr < 0 or addr >= 1 << 64:
            return None
        i = int(self.lookup(np.array([addr], dtype=_U64))[0])
        if i < 0:
            return None
        return self.names[i], addr - int(self.starts[i])


#: pairs that names decide from which numpy beats one pair at a time
_MANY_PAIRS = 48
#: names from which one decode of them all beats one decode each
_MANY_NAMES = 48


class _NoNameKeys(Exception):
    """Names :func:`_name_keys` cannot handle (a NUL inside, or not encodable)."""


_SYS_PREFIXES = (b"SyS", b"compat_SyS")


def _name_keys(names: list[str], prefixes: tuple[str, ...]
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per name: leading underscores, length in UTF-8 bytes (perf's strlen), whether it
    starts with ``SyS`` or ``compat_SyS``, and whether with one of ``prefixes`` (ASCII),
    from one encode of all the names."""
    try:
        buf = np.frombuffer("\0".join(names).encode("utf-8", "surrogateescape"),
                            dtype=np.uint8)
    except UnicodeEncodeError:
        raise _NoNameKeys from None
    nuls = np.flatnonzero(buf == 0)
    if len(nuls) != len(names) - 1:
        raise _NoNameKeys
    starts = np.concatenate([[0], nuls + 1]).astype(np.int64)
    ends = np.append(nuls, len(buf)).astype(np.int64)
    other = np.flatnonzero(buf != ord("_"))
    first_other = np.append(other, len(buf))[np.searchsorted(other, starts)]
    under = np.minimum(first_other, ends) - starts
    padded = np.concatenate([buf, np.zeros(16, dtype=np.uint8)])

    def starting(with_: tuple[bytes, ...]) -> np.ndarray:
        out = np.zeros(len(names), dtype=bool)
        for prefix in with_:
            p = np.frombuffer(prefix, dtype=np.uint8)
            fits = ends - starts >= len(p)
            out |= fits & (padded[starts[:, None] + np.arange(len(p))] == p).all(axis=1)
        return out

    return (under, ends - starts, starting(_SYS_PREFIXES),
            starting(tuple(p.encode("ascii") for p in prefixes)))


class _NameKeys:
    """What the name rules of ``choose_best_symbol`` compare, per symbol id, made once per
    id when a pair first needs it (a name decoded and demangled once, not per pair)."""

    def __init__(self, names: NamePool, demangle: Callable[[str], str] | None,
                 mangled: tuple[str, ...]) -> None:
        n = len(names)
        self.names, self.demangle, self.mangled = names, demangle, mangled
        self.known = np.zeros(n, dtype=bool)
        self.raw = np.empty(n, dtype=object)
        self.under = np.zeros(n, dtype=np.int64)  # of the name shown (demangled)
        self.size = np.zeros(n, dtype=np.int64)
        self.sys = np.zeros(n, dtype=bool)
        self.raw_sys = np.zeros(n, dtype=bool)  # of the name as it is

    def _fill(self, ids: np.ndarray) -> None:
        raw = self.names.take(ids)
        self.raw[ids] = raw
        under, size, sys_, mangled = _name_keys(raw, self.mangled)
        self.raw_sys[ids] = sys_
        if self.demangle is not None:  # the names the demangler may change
            todo = np.flatnonzero(mangled) if self.mangled else np.arange(len(ids))
            if len(todo):
                shown = [self.demangle(raw[i]) for i in todo.tolist()]
                under[todo], size[todo], sys_[todo], _m = _name_keys(shown, ())
        self.under[ids], self.size[ids], self.sys[ids] = under, size, sys_
        self.known[ids] = True

    def choose_a(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """perf's choice between pairs of ids that tie on size and binding: fewer leading
        underscores, then the longer name (UTF-8 bytes), then not ``SyS``; on the demangled
        names unless both names are the same (then only ``SyS`` decides, as they are)."""
        ids = np.unique(np.concatenate([a, b]))
        ids = ids[~self.known[ids]]
        if len(ids):
            self._fill(ids)
        same = np.asarray(self.raw[a] == self.raw[b], dtype=bool)
        ua, ub, ka, kb = self.under[a], self.under[b], self.size[a], self.size[b]
        out: np.ndarray = np.where(ub != ua, ub > ua,
                                   np.where(ka != kb, ka > kb, ~self.sys[a]))
        out[same] = ~self.raw_sys[a[same]]
        return out


def _same_name(name: str) -> str:
    return name


def _underscores(name: str) -> int:
    return len(name) - len(name.lstrip("_"))


def _signed_len(start: int, end: int) -> int:
    d = (end - start) & ((1 << 64) - 1)
    return d - (1 << 64) if d >= 1 << 63 else d


class PerfSymbolBuilder:
    """Accumulates symbols the way perf 6.1 inserts them into its tree; see module docstring.

    Symbols keep the id of their insertion (an equal start goes after, as in perf's
    tree); erased ones stay in the arrays as dead.  The insert/erase log lets
    :func:`~perftui.symbols.tables.rbtree.replay` rebuild perf's tree where symbols overlap.
    """

    def __init__(self) -> None:
        self._parts: list[tuple[np.ndarray, ...]] = []
        self._arr: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self.alive = np.zeros(0, dtype=bool)
        self.names = NamePool()
        self.ops: list[tuple[Any, ...]] = []
        self._live_order: np.ndarray | None = None  # _order(), kept until symbols change
        #: turns a raw name into the shown one (C++/Rust demangling), applied lazily
        self.demangle: Callable[[str], str] | None = None
        #: ``demangle`` returns names that start with none of these as they are (when
        #: empty, any name may change)
        self.mangled_prefixes: tuple[str, ...] = ()

    def __len__(self) -> int:
        return int(self.alive.sum())

    def add(
        self,
        starts: np.ndarray,
        sizes: np.ndarray,
        bindings: np.ndarray,
        kinds: np.ndarray,
        names: Sequence[str],
        in_module: np.ndarray | None = None,
    ) -> None:
        """Insert symbols (``symbol__new(start, size, ...)``: end is start + size)."""
        starts = np.asarray(starts, dtype=_U64)
        with np.errstate(over="ignore"):
            ends = starts + np.asarray(sizes, dtype=_U64)
        n = len(starts)
        if len(names) != n:
            raise ValueError("starts and names differ in length")
        first = len(self.names)
        module = np.zeros(n, dtype=bool) if in_module is None else np.asarray(in_module, bool)
        self._flatten()
        self._parts.append((starts, ends, np.asarray(bindings, dtype=np.uint8),
                            np.asarray(kinds, dtype=np.uint8), module))
        self.names.extend(names)
        self.alive = np.concatenate([self.alive, np.ones(n, dtype=bool)])
        self.ops.append(("ins", first, first + n))
        self._live_order = None

    def _flatten(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(starts, ends, bindings, kinds, in_module) of every symbol ever added, by id."""
        if self._parts:
            if self._arr is not None:
                self._parts.insert(0, self._arr)
            self._arr = tuple(np.concatenate(c) for c in zip(*self._parts, strict=True)
                              )  # type: ignore[assignment]
            self._parts = []
        if self._arr is None:
            e = np.zeros(0, dtype=_U64)
            self._arr = (e, e.copy(), np.zeros(0, np.uint8), np.zeros(0, np.uint8),
                         np.zeros(0, bool))
        return self._arr

    def live_order(self) -> np.ndarray:
        """Ids of the live symbols in the order :meth:`table` puts them (by start, then
        insertion)."""
        return self._order()

    def live_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(ids, starts, ends, kinds)`` of the live symbols in :meth:`table`'s order."""
        starts, ends, _b, kinds, _m = self._flatten()
        order = self._order()
        return order, starts[order], ends[order], kinds[order]

    def _order(self) -> np.ndarray:
        """Ids of the live symbols sorted by (start, id): perf's in-order walk."""
        if self._live_order is None:
            starts = self._flatten()[0]
            live = np.flatnonzero(self.alive)
            self._live_order = live[np.argsort(starts[live], kind="stable")]
        return self._live_order

    def fixup_end(self, is_kallsyms: bool = False) -> None:
        """perf's ``symbols__fixup_end``: a zero-size symbol ends where the next one starts.

        With ``is_kallsyms``, a zero-size symbol followed by one on the other side of the
        kernel/module divide ends at the next page instead; the last zero-size symbol ends
        one page past its start rounded up to a page.
        """
        starts, ends, _b, _k, module = self._flatten()
        order = self._order()
        n = len(order)
        if not n:
            return
        s, e = starts[order], ends[order]
        zero = e == s
        new_end = e.copy()
        if n > 1:
            fill = s[1:].copy()
            if is_kallsyms:
                m = module[order]
                cross = m[:-1] != m[1:]
                with np.errstate(over="ignore"):
                    page_end = (s[:-1] + _U64(_PAGE) + _U64(_PAGE - 1)) & ~_U64(_PAGE - 1)
                fill = np.where(cross, page_end, fill)
            new_end[:-1] = np.where(zero[:-1], fill, e[:-1])
        if zero[-1]:
            with np.errstate(over="ignore"):
                last = (s[-1] + _U64(_PAGE - 1)) & ~_U64(_PAGE - 1)
                new_end[-1] = last + _U64(_PAGE)
        ends[order] = new_end

    def fixup_duplicate(self) -> None:
        """perf's ``symbols__fixup_duplicate``: one symbol per start, by ``choose_best_symbol``.

        perf walks each run of equal starts keeping a best-so-far; here step ``j`` of every
        run is taken at once, the pairs that size and binding decide in numpy, the rest
        (names decide) one by one.  Erasures are logged in perf's order (run, then step)."""
        starts, ends, bind, _k, _m = self._flatten()
        order = self._order()
        if len(order) < 2:
            return
        s = starts[order]
        same = s[1:] == s[:-1]
        if not same.any():
            return
        run_starts = np.flatnonzero(np.r_[True, ~same])
        lengths = np.diff(np.r_[run_starts, len(order)])
        multi = lengths >= 2
        run_starts, lengths = run_starts[multi], lengths[multi]
        best = order[run_starts].copy()
        steps: list[tuple[np.ndarray, int, np.ndarray]] = []  # (runs, step, erased ids)
        keys = _NameKeys(self.names, self.demangle, self.mangled_prefixes)
        for j in range(1, int(lengths.max())):
            runs = np.flatnonzero(lengths > j)
            a, b = best[runs], order[run_starts[runs] + j]
            keep_a = self._choose_a_many(a, b, starts, ends, bind, keys)
            steps.append((runs, j, np.where(keep_a, b, a)))
            best[runs] = np.where(keep_a, a, b)
        run_of = np.concatenate([r for r, _j, _e in steps])
        step_of = np.concatenate([np.full(len(r), j) for r, j, _e in steps])
        erased_ids = np.concatenate([e for _r, _j, e in steps])
        erased = erased_ids[np.lexsort((step_of, run_of))].tolist()
        self.alive[erased] = False
        self.ops.append(("del", erased))
        order = self._order()
        self._live_order = order[self.alive[order]]

    def _choose_a_many(self, a: np.ndarray, b: np.ndarray, starts: np.ndarray,
                       ends: np.ndarray, bind: np.ndarray, keys: _NameKeys) -> np.ndarray:
        """:meth:`_choose_a` of pairs of ids: sizes and bindings in numpy, names (rare
        ties) by :meth:`_choose_a`."""
        with np.errstate(over="ignore"):
            la = (ends[a] - starts[a]).view(np.int64)  # perf's signed lengths
            lb = (ends[b] - starts[b]).view(np.int64)
        ba, bb = bind[a], bind[b]
        wa, wb = ba == STB_WEAK, bb == STB_WEAK
        ga, gb = ba == STB_GLOBAL, bb == STB_GLOBAL
        rules = [((lb == 0) & (la > 0), (la == 0) & (lb > 0)), (wb & ~wa, wa & ~wb),
                 (ga & ~gb, gb & ~ga)]
        out = np.zeros(len(a), dtype=bool)
        open_ = np.ones(len(a), dtype=bool)
        for pick_a, pick_b in rules:
            out |= open_ & pick_a
            open_ &= ~(pick_a | pick_b)
        todo = np.flatnonzero(open_)
        if len(todo) >= _MANY_PAIRS:
            try:
                out[todo] = keys.choose_a(a[todo], b[todo])
                todo = todo[:0]
            except _NoNameKeys:  # names numpy cannot split: one pair at a time
                pass
        for k in todo.tolist():  # a few pairs: cheaper one by one than in numpy
            out[k] = self._choose_a(int(a[k]), int(b[k]), starts, ends, bind)
        return out

    def _choose_a(self, a: int, b: int, starts: np.ndarray, ends: np.ndarray,
                  bind: np.ndarray) -> bool:
        """perf's ``choose_best_symbol(a, b) == SYMBOL_A`` (x86: the generic arch rule)."""
        la = _signed_len(int(starts[a]), int(ends[a]))
        lb = _signed_len(int(starts[b]), int(ends[b]))
        if lb == 0 and la > 0:
            return True
        if la == 0 and lb > 0:
            return False
        wa, wb = bind[a] == STB_WEAK, bind[b] == STB_WEAK
        if wb and not wa:
            return True
        if wa and not wb:
            return False
        ga, gb = bind[a] == STB_GLOBAL, bind[b] == STB_GLOBAL
        if ga and not gb:
            return True
        if gb and not ga:
            return False
        na, nb = self.names[a], self.names[b]
        if self.demangle is not None and na != nb:  # perf compares the demangled names
            na, nb = self.demangle(na), self.demangle(nb)
        ua, ub = _underscores(na), _underscores(nb)
        if ub > ua:
            return True
        if ua > ub:
            return False
        # perf compares strlen(): bytes of the UTF-8 name
        ka = len(na.encode("utf-8", "surrogateescape"))
        kb = len(nb.encode("utf-8", "surrogateescape"))
        if ka != kb:
            return ka > kb
        return not (na.startswith("SyS") or na.startswith("compat_SyS"))

    def table(self, space: str) -> DsoSymbolTable:
        """The live symbols as a :class:`DsoSymbolTable` (sorted by start, then insertion),
        with perf's tree shape for the overlapping ones."""
        starts, ends, _b, kinds, _m = self._flatten()
        order = self._order()
        ops = list(self.ops)

        def tree() -> tuple[int, np.ndarray, np.ndarray]:
            from perftui.symbols.tables.rbtree import replay

            root, left, right = replay(starts.tolist(), ops)
            pos = np.full(len(starts) + 1, -1, dtype=np.int64)  # id -> table row
            pos[order] = np.arange(len(order))
            return (int(pos[root]) if root >= 0 else -1,
                    pos[np.asarray(left, dtype=np.int64)[order]],
                    pos[np.asarray(right, dtype=np.int64)[order]])

        shown: Sequence[str] = LazyNames(_Picked(self.names, order),
                                         self.demangle or _same_name)
        table = DsoSymbolTable(starts[order], ends[order], shown, kinds[order], space,
                               tree=tree)
        if table.tree_source is not None:
            table.replay_input = (starts, ops, order)
        return table
