"""perf's one-symbol-per-address rule in numpy against perf's own code, transcribed here
from tools/perf/util/symbol.c (6.1: ``choose_best_symbol``, the generic
``arch__choose_best_symbol``, ``symbols__fixup_duplicate``), on generated symbols; names
decoded many at a time against one at a time."""

from __future__ import annotations

import random

import numpy as np
import pytest

from perftui.symbols.tables import symbuilder
from perftui.symbols.tables.byteslices import slices_text
from perftui.symbols.tables.demangle import demangle
from perftui.symbols.tables.dsotable import (
    STB_GLOBAL,
    STB_LOCAL,
    STB_WEAK,
)
from perftui.symbols.tables.symbuilder import PerfSymbolBuilder
from perftui.symbols.tables.symnames import NamePool, StrtabNames


# -- perf 6.1, transcribed -----------------------------------------------------------------------
def _s64(v: int) -> int:
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >= 1 << 63 else v


def _underscores(name: bytes) -> int:  # prefix_underscores_count
    return len(name) - len(name.lstrip(b"_"))


def perf_choose_a(a: tuple[int, int, int, bytes], b: tuple[int, int, int, bytes]) -> bool:
    """``choose_best_symbol(a, b) == SYMBOL_A``; a symbol is (start, end, binding, name as
    perf stores it: demangled, as C bytes)."""
    la, lb = _s64(a[1] - a[0]), _s64(b[1] - b[0])
    if lb == 0 and la > 0:
        return True
    if la == 0 and lb > 0:
        return False
    wa, wb = a[2] == STB_WEAK, b[2] == STB_WEAK
    if wb and not wa:
        return True
    if wa and not wb:
        return False
    ga, gb = a[2] == STB_GLOBAL, b[2] == STB_GLOBAL
    if ga and not gb:
        return True
    if gb and not ga:
        return False
    ua, ub = _underscores(a[3]), _underscores(b[3])
    if ub > ua:
        return True
    if ua > ub:
        return False
    if len(a[3]) > len(b[3]):
        return True
    if len(a[3]) < len(b[3]):
        return False
    # arch__choose_best_symbol: avoid "SyS" kernel syscall aliases
    return not (a[3].startswith(b"SyS") or a[3].startswith(b"compat_SyS"))


def perf_fixup_duplicate(walk: list[int], sym: dict[int, tuple[int, int, int, bytes]]
                         ) -> list[int]:
    """The symbols ``symbols__fixup_duplicate`` erases, in its order (``walk``: the tree's
    in-order walk)."""
    erased: list[int] = []
    i = 0
    while i < len(walk):
        curr = walk[i]
        j = i + 1
        while j < len(walk) and sym[walk[j]][0] == sym[curr][0]:
            nxt = walk[j]
            if perf_choose_a(sym[curr], sym[nxt]):
                erased.append(nxt)
            else:
                erased.append(curr)
                curr = nxt
            j += 1
        i = j
    return erased


# -- generated symbols ---------------------------------------------------------------------------
# The pool has names whose demangled forms tie or differ in underscores and length, SyS
# aliases, the same name twice, names that are not UTF-8.  (perftui checks SyS on the name
# as it is when both names are the same, perf on the demangled one: they differ only for a
# mangled name that demangles to "SyS...", left out here.)
NAMES = ["foo", "_foo", "__foo", "foo_", "SyS_foo", "compat_SyS_foo", "SyS", "Sy", "compat_Sy",
         "caf\u00e9", "cafe", "caf\udcff", "\udcfe\udcff", "_ZN3foo3barEv", "_ZN3foo3barEi",
         "_ZN3fooC1Ev", "_ZN3fooC2Ev", "_ZN3fooD0Ev", "_ZN3fooD1Ev", "_ZN1a1bE", "_Z1fv",
         "_RNvCs123_4main4main", "camlFoo__bar_12", "x", ""]


def _stored(name: str, mangled: bool) -> bytes:
    return (demangle(name) if mangled else name).encode("utf-8", "surrogateescape")


def _strtab(names: list[str]) -> tuple[bytes, np.ndarray]:
    """An ELF string table holding ``names`` (shared tails reused, as linkers do)."""
    table = b"\0"
    offsets = []
    for n in names:
        raw = n.encode("utf-8", "surrogateescape") + b"\0"
        at = table.find(raw)
        if at < 0:
            at = len(table)
            table += raw
        offsets.append(at)
    return table, np.array(offsets, dtype=np.int64)


def _builder(rng: random.Random, n: int, spread: int, mangled: bool
             ) -> tuple[PerfSymbolBuilder, list[str]]:
    b = PerfSymbolBuilder()
    if mangled:
        b.demangle = demangle
        b.mangled_prefixes = ("_Z", "_R", "caml")
    all_names: list[str] = []
    for part in range(2):  # two tables' worth, as .symtab then .dynsym
        k = n // 2 + part
        starts = np.array([rng.randrange(spread) * 16 for _ in range(k)], dtype=np.uint64)
        sizes = np.array([rng.choice([0, 0, 4, 8, 16, 2**64 - 8]) for _ in range(k)],
                         dtype=np.uint64)
        binds = np.array([rng.choice([STB_LOCAL, STB_GLOBAL, STB_WEAK]) for _ in range(k)],
                         dtype=np.uint8)
        names = [rng.choice(NAMES) for _ in range(k)]
        all_names += names
        table, offsets = _strtab(names)
        seq = StrtabNames(table, offsets) if part == 0 else names
        b.add(starts, sizes, binds, np.zeros(k, dtype=np.uint8), seq)
        b.fixup_end()
    return b, all_names


@pytest.mark.parametrize("numpy_from", [0, 10**9])  # the names rule in numpy, or one by one
@pytest.mark.parametrize("mangled", [False, True])
@pytest.mark.parametrize("n,spread", [(12, 4), (60, 10), (400, 30), (3000, 400)])
def test_fixup_duplicate_erases_what_perf_erases(mangled: bool, n: int, spread: int,
                                                 numpy_from: int,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Few ties and many, names demangled or not, the names rule in numpy or not."""
    monkeypatch.setattr(symbuilder, "_MANY_PAIRS", numpy_from)
    for seed in range(25 if n < 1000 else 4):
        rng = random.Random(seed * 1000 + n)
        b, names = _builder(rng, n, spread, mangled)
        starts, ends, bind, _k, _m = b._flatten()
        sym = {i: (int(starts[i]), int(ends[i]), int(bind[i]), _stored(names[i], mangled))
               for i in range(len(names))}
        walk = b.live_arrays()[0].tolist()  # the live ids by (start, id): perf's walk
        want = perf_fixup_duplicate(walk, sym)
        b.fixup_duplicate()
        if want:
            assert b.ops[-1] == ("del", want), seed
        alive = set(np.flatnonzero(b.alive).tolist())
        assert alive == set(range(len(names))) - set(want)
        assert b.live_arrays()[0].tolist() == [i for i in walk if i in alive]


def test_names_taken_many_at_a_time_are_the_names_one_at_a_time() -> None:
    rng = random.Random(7)
    names = [rng.choice(NAMES) for _ in range(300)]
    table, offsets = _strtab(names)
    table += b"no terminating NUL"
    offsets[5] = len(table) + 10  # outside the table: ""
    offsets[6] = -1
    offsets[7] = len(table) - 3
    st = StrtabNames(table, offsets)
    pool = NamePool()
    pool.extend(st)
    pool.extend(names[:40])
    pool.extend(StrtabNames(table, offsets[:3]))
    one_by_one = [pool[i] for i in range(len(pool))]
    assert one_by_one[5] == one_by_one[6] == "" and one_by_one[7] == "NUL"
    for ids in (np.arange(len(pool)), np.array([0, 5, 6, 7, 299, 300, 339, 340, 342]),
                np.array(sorted(rng.sample(range(len(pool)), 120)))):
        assert pool.take(ids) == [one_by_one[i] for i in ids.tolist()]
    assert st.take(np.arange(len(st))) == [st[i] for i in range(len(st))]


def test_slices_decode_as_each_slice_alone() -> None:
    rng = random.Random(3)
    alphabet = [b"a", b"\xc3", b"\xa9", b"\xff", b"\n", b"\0", b"\xe2\x82", b"\xac", b"z"]
    for _ in range(300):
        buf = b"".join(rng.choice(alphabet) for _ in range(rng.randrange(60)))
        arr = np.frombuffer(buf, dtype=np.uint8)
        k = rng.randrange(12)
        starts = np.array([rng.randrange(len(buf) + 1) for _ in range(k)], dtype=np.int64)
        ends = np.array([min(len(buf), s + rng.randrange(8)) for s in starts.tolist()],
                        dtype=np.int64)
        for errors in ("replace", "surrogateescape"):
            for sep in (0, 10):
                want = [buf[s:e].decode("utf-8", errors)
                        for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]
                assert slices_text(arr, starts, ends, sep=sep, errors=errors) == want
