"""The names pass's compiled loops: every address named once, every stack kept once.

Naming an address is a pure function of its *address key*, which tells apart all that the
resolver's answer depends on: whether it is a sample's own ip or a callchain entry (perf
keys an unresolved entry by its raw address), and where it is looked up. A user-space
address is looked up here, in its thread's maps at the sample's processing step (the walk of
:meth:`~.maps.MapTable.lookup`), and keyed by the map's dso (what names its addresses, a JIT
map's perf map too) and the address in it (``ip - start + pgoff`` for a file), plus the raw
address for a frame; a kernel address by itself and the kernel maps' epoch
(:meth:`~.maps.MapTable.kernel_epochs`: the kernel maps at that step); an address no map
covers by itself and its level (``[k]``: the sample's for its own ip, for a frame the level
perf's ``--children`` gives it, :func:`~..tasks.callchain.frame_levels`). A profile repeats
its addresses (the bench recording: 22.8 M addresses, 153 K distinct keys), so
:class:`NameTables` keeps each key's (location, offset) once named and the resolver names
only keys not met before; the same pass gives each sample its stack (own location, then its
callchain's, leaf first, markers left out, as perf walks it) and its offsets as ids among
the distinct ones, kept once each (CSR: ``starts``/``vals``).

Why compiled code (numba), by measurement: the pass is one hash-table probe per address,
and numpy has none; its ways to group (a sort, or a binary search per address in random
order) cost 100-500 ns an address here, as much as naming every address outright (the
numpy path this replaces: ~8.5 s CPU for the bench recording's 22.8 M addresses).

Ids are exact, never a hash's guess: a probe that finds an equal hash compares the whole
key, and a stack the whole sequence.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from ...perfdata.constants import CONTEXT_KERNEL, CONTEXT_USER, PERF_CONTEXT_MAX, Misc
from ..compiledwords import bswap, mix
from .seqtable import SeqTable, grown, pow2, seq_ids

_USER = np.uint8(Misc.USER)
_KERNEL = np.uint8(Misc.KERNEL)
_CTX_USER = np.uint64(CONTEXT_USER)
_CTX_KERNEL = np.uint64(CONTEXT_KERNEL)
_CTX_HV = np.uint64(2**64 - 32)
_CTX_MAX = np.uint64(PERF_CONTEXT_MAX)
#: an address key's third word: flags, and a user map's dso (bits 0-31: what names its
#: addresses, a JIT map's perf map too)
FRAME_BIT = 63  # a callchain entry (else a sample's own ip)
KERNEL_BIT = 62  # a kernel address (looked up in the kernel maps; second word: their epoch)
LEVEL_BIT = 61  # the sample is in the kernel ([k] of an address no map covers)
TAG_BIT = 60  # the kernel maps' kind of key
NOMAP_BIT = 59  # no map covers the address (user space, or no cpumode to look one up in)
_U32_MAX = np.uint64(2**32 - 1)

_PARALLEL_MIN = 4096  # rows of a block worth a second thread
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _helper() -> ThreadPoolExecutor:
    """One worker thread for the compiled loops that can run beside another."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(1, thread_name_prefix="perftui-names")
        return _pool


@njit(cache=True, nogil=True)
def alone_maps(bounds: np.ndarray, m_start: np.ndarray, m_end: np.ndarray, born: np.ndarray,
               died: np.ndarray, scan: int = 64) -> np.ndarray:
    """Per sorted map (of :meth:`~.maps.MapTable.lookup_arrays`): True when no other map of
    its object overlaps it in addresses while both live.  A map whose overlapping
    neighbours are too many to check (``scan``) counts as not alone (the cache then only
    does less)."""
    n = len(m_start)
    alone = np.ones(n, np.bool_)
    for o in range(len(bounds) - 1):
        lo, hi = bounds[o], bounds[o + 1]
        for i in range(lo, hi):
            j = i + 1
            k = 0
            while j < hi and m_start[j] < m_end[i]:
                if born[j] < died[i] and born[i] < died[j]:  # alive at once
                    alone[i] = False
                    alone[j] = False
                j += 1
                k += 1
                if k == scan:
                    if j < hi and m_start[j] < m_end[i]:
                        alone[i] = False  # unchecked overlaps remain: not known alone
                        for r in range(j, hi):
                            if m_start[r] >= m_end[i]:
                                break
                            alone[r] = False
                    break
    return alone


@njit(cache=True, nogil=True, inline="always")
def _key_slot(table: np.ndarray, a: np.uint64, b: np.uint64, c: np.uint64) -> np.int64:
    """The slot of an address key: where it is, or the empty slot it would take.  A slot
    holds the key itself and its id + 1 (0: empty) in one row of 32 bytes, so a probe
    reads one cache line (it read four when the keys were apart from the slots).
    (:func:`_probe` has this written out.)"""
    mask = np.int64(len(table) - 1)
    s = np.int64(mix(mix(a, b), c) & np.uint64(mask))
    while True:
        if table[s, 3] == 0 or (table[s, 0] == a and table[s, 1] == b and table[s, 2] == c):
            return s
        s = (s + np.int64(1)) & mask


@njit(cache=True, nogil=True)
def _probe(u8: np.ndarray, u64: np.ndarray, big: bool, at: np.ndarray, count: np.ndarray,
           tail: np.ndarray, cpumode: np.ndarray, ip: np.ndarray, uobj: np.ndarray, kep: np.ndarray,
           seq: np.ndarray, maps: tuple[np.ndarray, ...], table: np.ndarray, k_c: np.ndarray,
           n_keys: int, e_key: np.ndarray,
           e_starts: np.ndarray, miss: np.ndarray, miss_map: np.ndarray,
           miss_ip: np.ndarray, miss_seq: np.ndarray, n_miss: int, row: int, n: int,
           words: np.ndarray, max_keys: int) -> tuple[int, int, int, int]:
    """The address key of every row's own ip and callchain frames from ``row`` on
    (``e_key`` from ``n`` on, CSR by ``e_starts``), the keys not met before added and listed
    in ``miss`` (with a map, a raw address and a processing step to name them by); stops
    before a row that could take the keys past ``max_keys`` (what the key arrays hold, and
    3/4 of the table's slots).  (keys, misses, next row, next entry).
    ``u64``: ``u8`` as 8-byte words when every chain starts on one (else empty: read a
    byte at a time); ``words``: room for the longest chain; ``tail``: per row, how many of
    its chain's last words are unwound frames (never context markers).

    The map walk and the key probe are written out here, not called: numba counts the
    references of an array handed to an inlined function, two atomic operations per
    array per call, which took ~10% of the names pass (measured with perf)."""
    (bounds, m_start, m_end, reach, born, died, order, m_dso, m_tr, mp_start, m_pgoff,
     alone) = maps
    aligned = len(u64) > 0
    mask = np.int64(len(table) - 1)
    # a row's keys before they are probed: (key words, map, address) per entry
    s_ka = np.empty(len(words) + 1, np.uint64)
    s_kb = np.empty(len(words) + 1, np.uint64)
    s_kc = np.empty(len(words) + 1, np.uint64)
    s_a = np.empty(len(words) + 1, np.uint64)
    s_m = np.empty(len(words) + 1, np.int64)
    last = np.int64(-1)  # the sorted position of the user map found last, and its object
    last_obj = np.int64(-1)
    for i in range(row, len(at)):
        if n_keys + count[i] + 1 > max_keys or n_miss + count[i] + 1 > len(miss):
            return n_keys, n_miss, i, n
        e_starts[i] = n
        # the chain's words; a chain with a context marker perf 6.1 does not know is
        # dropped whole (the sample keeps its own ip)
        nw = count[i]
        for e in range(nw):
            if aligned:
                w = u64[(at[i] >> 3) + e]
                if big:
                    w = bswap(w)
            else:
                p = at[i] + 8 * e
                w = np.uint64(0)
                if big:
                    for b in range(8):
                        w = (w << np.uint64(8)) | np.uint64(u8[p + b])
                else:
                    for b in range(7, -1, -1):
                        w = (w << np.uint64(8)) | np.uint64(u8[p + b])
            if (w >= _CTX_MAX and w != _CTX_USER and w != _CTX_KERNEL and w != _CTX_HV
                    and e < count[i] - tail[i]):
                nw = 0
                break
            words[e] = w
        mode = 0
        level = cpumode[i] == _KERNEL  # the sample's own: [k] of its ip if no map covers it
        nj = 0  # the row's keys: the own ip, then each frame (markers left out)
        for e in range(-1, nw):
            frame = e >= 0
            if not frame:
                a = ip[i]
                mode = 0 if cpumode[i] == _USER else (1 if level else 2)
            else:
                if e == 0:
                    mode = 0
                a = words[e]
                if a >= _CTX_MAX and e < nw - tail[i]:
                    mode = 0 if a == _CTX_USER else (1 if a == _CTX_KERNEL else 2)
                    continue
            flags = np.uint64(0)
            if frame:
                flags |= np.uint64(1) << np.uint64(FRAME_BIT)
            m = np.int64(-1)
            if mode == 1:  # the kernel maps: looked up when named (their epoch keys them)
                flags |= np.uint64(1) << np.uint64(KERNEL_BIT)
                if level and not frame:
                    flags |= np.uint64(1) << np.uint64(LEVEL_BIT)
                ka, kb, kc = a, np.uint64(kep[i]), flags | (np.uint64(1) << np.uint64(TAG_BIT))
                m = np.int64(-2)
            else:
                if mode == 0:
                    # MapTable.lookup's walk (the last map of the object starting at or
                    # before the address, then back while an earlier one can still reach
                    # it), tried first with the map found last: when it covers the address
                    # at this step and no other map of its object ever overlaps it while it
                    # lives (alone), it is the only live map there, what the walk finds (a
                    # user stack's frames mostly fall in the map of the frame before: on the
                    # bench recording the walk, over every version of a map the recording
                    # re-maps, was half of the pass)
                    obj, sq = uobj[i], seq[i]
                    c = np.int64(-1)
                    if (last >= 0 and obj == last_obj and alone[last] and m_start[last] <= a
                            and a < m_end[last] and born[last] <= sq and sq < died[last]):
                        c = last
                    elif 0 <= obj < len(bounds) - 1:
                        lo, hi = bounds[obj], bounds[obj + 1]
                        x, y = lo, hi
                        while x < y:  # the first start above the address
                            mid = (x + y) >> 1
                            if m_start[mid] <= a:
                                x = mid + 1
                            else:
                                y = mid
                        r = x - 1
                        while r >= lo and reach[r] > a:
                            if m_end[r] > a and born[r] <= sq and sq < died[r]:
                                c = r
                                break
                            r -= 1
                    if c >= 0:
                        m = np.int64(order[c])
                        last, last_obj = c, obj
                if m >= 0:  # the map's file, the address in it, the raw one for a frame
                    ka = a - mp_start[m] + m_pgoff[m] if m_tr[m] else a
                    kb = a if frame else np.uint64(0)
                    kc = flags | np.uint64(m_dso[m])
                else:  # no map: [unknown] at the raw address, marked by the level
                    if level and not frame:
                        flags |= np.uint64(1) << np.uint64(LEVEL_BIT)
                    ka, kb, kc = a, np.uint64(0), flags | (np.uint64(1) << np.uint64(NOMAP_BIT))
            s_ka[nj], s_kb[nj], s_kc[nj], s_m[nj], s_a[nj] = ka, kb, kc, m, a
            nj += 1
        # a frame's level ([k] of an address no map covers): perf's --children walks the
        # chain outermost first (ORDER_CALLER) and such an entry keeps the level of the
        # frame before it that has a map (fill_callchain_info): a kernel frame's [k], a
        # user one's [.]; the sample's own level when none has (a kernel frame counts as
        # mapped: perf's kernel map covers what kallsyms names)
        lev = level
        for j in range(nj - 1, 0, -1):
            if s_m[j] < 0 and lev:  # no map, or the kernel maps (named when looked up)
                s_kc[j] |= np.uint64(1) << np.uint64(LEVEL_BIT)
            if s_m[j] >= 0:
                lev = False
            elif s_m[j] == -2:
                lev = True
        for j in range(nj):
            ka, kb, kc = s_ka[j], s_kb[j], s_kc[j]
            # _key_slot, written out
            s = np.int64(mix(mix(ka, kb), kc) & np.uint64(mask))
            while True:
                if table[s, 3] == 0 or (table[s, 0] == ka and table[s, 1] == kb
                                        and table[s, 2] == kc):
                    break
                s = (s + np.int64(1)) & mask
            k = int(table[s, 3]) - 1
            if k < 0:
                k = n_keys
                table[s, 0], table[s, 1], table[s, 2] = ka, kb, kc
                table[s, 3] = np.uint64(k + 1)
                k_c[k] = kc
                miss[n_miss] = k
                miss_map[n_miss] = s_m[j]
                miss_ip[n_miss] = s_a[j]
                miss_seq[n_miss] = seq[i]
                n_keys += 1
                n_miss += 1
            e_key[n] = k
            n += 1
    e_starts[len(at)] = n
    return n_keys, n_miss, len(at), n


@njit(cache=True, nogil=True)
def _rehash_keys(table: np.ndarray, old: np.ndarray) -> None:
    for r in range(len(old)):
        if old[r, 3] != 0:
            s = _key_slot(table, old[r, 0], old[r, 1], old[r, 2])
            for w in range(4):
                table[s, w] = old[r, w]


#: names address keys not met before: (map id, or -1 for none, -2 for the kernel maps at
#: the step; raw address; processing step; frame; kernel; level) -> (location, offset)
KeyNamer = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
                    tuple[np.ndarray, np.ndarray]]


class NameTables:
    """The address keys met so far with their names, and the distinct stacks and offset
    sequences (see the module docstring)."""

    def __init__(self, callchains: bool) -> None:
        self.callchains = callchains
        self.n_keys = 0
        #: the hash table of address keys: per slot the key's three words and its id + 1
        self.table = np.zeros((1 << 13, 4), dtype=np.uint64)
        self.k_c = np.zeros(1 << 12, dtype=np.uint64)  # each key's third word (its flags)
        #: each key's name: its location and offset (uint32 bits, clamped), side by side
        #: (one cache line read per callchain entry)
        self.k_name = np.zeros((1 << 12, 2), dtype=np.int32)
        self.stacks = SeqTable()
        self.offsets = SeqTable()

    @property
    def max_keys(self) -> int:
        """How many keys there is room for: in the key arrays, and the table at most 3/4
        full (linear probing stays short; the table is never full)."""
        return min(len(self.k_c), 3 * len(self.table) // 4)

    def _key_room(self, more: int) -> None:
        need = self.n_keys + more
        if need > len(self.k_c):
            cap = pow2(need)
            self.k_c, self.k_name = grown(self.k_c, cap), grown(self.k_name, cap)
        if 4 * need > 3 * len(self.table):
            rows = pow2(4 * need // 3 + 1)
            old, self.table = self.table, np.zeros((rows, 4), dtype=np.uint64)
            _rehash_keys(self.table, old)

    def name(self, u8: np.ndarray, big: bool, at: np.ndarray, count: np.ndarray,
             cpumode: np.ndarray, ip: np.ndarray, uobj: np.ndarray, kep: np.ndarray,
             seq: np.ndarray, maps: tuple[np.ndarray, ...], namer: KeyNamer,
             tail: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(own location, stack id, offsets id) of each row (callchains of ``count``
        entries at byte ``at`` of ``u8``, the last ``tail`` of them unwound frames; ``uobj``
        the thread's maps object, ``kep`` the
        kernel maps' epoch; ``maps``: :meth:`~.maps.MapTable.lookup_arrays` and per map
        what names its addresses (see the module docstring), whether they go through
        pgoff, its start and pgoff); ``namer`` names the keys not met before."""
        n = len(at)
        at = np.ascontiguousarray(at, dtype=np.int64)
        count = np.ascontiguousarray(count, dtype=np.int64) if self.callchains else \
            np.zeros(n, np.int64)
        tail = np.zeros(n, np.int64) if tail is None or not self.callchains else \
            np.ascontiguousarray(tail, dtype=np.int64)
        if n and int((at + 8 * count).max()) > len(u8):
            raise ValueError("a callchain outside its source")  # never: spans are checked
        cpumode = np.ascontiguousarray(cpumode, dtype=np.uint8)
        ip = np.ascontiguousarray(ip, dtype=np.uint64)
        uobj, kep, seq = (np.ascontiguousarray(x, dtype=np.int64) for x in (uobj, kep, seq))
        total = int(count.sum()) + n
        e_key = np.empty(total, dtype=np.int64)
        e_starts = np.empty(n + 1, dtype=np.int64)
        # the keys not met before: few after the first blocks (grown when there are more)
        miss, miss_map, miss_ip, miss_seq = (np.empty(min(total, 1 << 14), dtype=t)
                                             for t in (np.int64, np.int64, np.uint64, np.int64))
        row = at_entry = n_miss = 0
        # the chains as 8-byte words when they all start on one (perf's records do)
        aligned = u8.ctypes.data % 8 == 0 and not np.any(at & 7)
        u64 = u8[:len(u8) // 8 * 8].view(np.uint64) if aligned else np.empty(0, np.uint64)
        words = np.empty(max(1, int(count.max()) if n else 1), np.uint64)
        while True:
            self.n_keys, n_miss, row, at_entry = _probe(
                u8, u64, big, at, count, tail, cpumode, ip, uobj, kep, seq, maps, self.table,
                self.k_c,
                self.n_keys, e_key, e_starts, miss, miss_map, miss_ip, miss_seq, n_miss, row,
                at_entry, words, self.max_keys)
            if row == n:
                break
            more = int(count[row]) + 1  # room for the next row, at least, and twice what was
            if self.n_keys + more > self.max_keys:
                self._key_room(max(more, self.max_keys - self.n_keys + 1))
            if n_miss + more > len(miss):
                cap = pow2(max(n_miss + more, 2 * len(miss)))
                miss, miss_map, miss_ip, miss_seq = (
                    grown(x, cap) for x in (miss, miss_map, miss_ip, miss_seq))
        if n_miss:
            keys = miss[:n_miss]
            c = self.k_c[keys]
            bit = np.uint64(1)
            loc, off = namer(miss_map[:n_miss], miss_ip[:n_miss], miss_seq[:n_miss],
                             ((c >> np.uint64(FRAME_BIT)) & bit).astype(bool),
                             ((c >> np.uint64(KERNEL_BIT)) & bit).astype(bool),
                             ((c >> np.uint64(LEVEL_BIT)) & bit).astype(bool))
            self.k_name[keys, 0] = loc
            self.k_name[keys, 1] = np.minimum(off, _U32_MAX).astype(np.uint32).view(np.int32)
        self.stacks.room(n, total)
        self.offsets.room(n, total)
        k_name = self.k_name
        leaf = k_name[e_key[e_starts[:-1]], 0] if n else np.empty(0, np.int32)
        stack = np.zeros(n, dtype=np.int32)
        offs = np.empty(n, dtype=np.int32)
        st, of = self.stacks, self.offsets
        # the stacks' and the offsets' tables are apart and seq_ids holds no GIL: with
        # callchains the two run at once, on two cores (measured: the pair took 0.61 s of
        # the bench recording's names pass one after the other)
        stacks = _helper().submit(
            seq_ids, e_key, e_starts, k_name, 0, st.slots, st.hash, st.starts, st.vals,
            st.n, stack) if self.callchains and n >= _PARALLEL_MIN else None
        if self.callchains and stacks is None:
            st.n = seq_ids(e_key, e_starts, k_name, 0, st.slots, st.hash, st.starts,
                            st.vals, st.n, stack)
        of.n = seq_ids(e_key, e_starts, k_name, 1, of.slots, of.hash, of.starts, of.vals,
                        of.n, offs)
        if stacks is not None:
            st.n = stacks.result()
        return leaf, stack, offs
