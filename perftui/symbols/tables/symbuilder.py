"""perf 6.1's symbol tree, filled as perf fills it (``tools/perf/util/symbol.c``): symbols
added in batches, :meth:`PerfSymbolBuilder.fixup_end` (``symbols__fixup_end``),
:meth:`PerfSymbolBuilder.fixup_duplicate` (``symbols__fixup_duplicate`` with perf's
``choose_best_symbol``), then :meth:`PerfSymbolBuilder.table` (a
:class:`~.dsotable.DsoSymbolTable` with the tree's shape where symbols overlap)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .dsotable import STB_GLOBAL, STB_WEAK, DsoSymbolTable
from .symnames import LazyNames, NamePool, _Picked, _same_name

_U64 = np.uint64
_PAGE = 4096


_MANY_PAIRS = 48


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
