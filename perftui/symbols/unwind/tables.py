"""The unwinder's tables, as the compiled walk reads them, filled as samples need them.

Per DSO of the recording's map table: whether its CFI is loaded (-1 not yet, 0 none, 1
yes) and its two CFI sources (``.eh_frame``, ``.debug_frame``; -1 none).  Per map: how its
addresses become the file's link-time addresses (``addr - bias``).  Per source: its FDEs
(first address, end once decoded, state: 0 not decoded, 1 decoded, 2 unusable) and per
decoded FDE its rows (see :mod:`.cfi`).  All of these grow as the walk asks for more
(:meth:`UnwindTables.load_dso`, :meth:`UnwindTables.decode_fde`); the arrays handed to the
walk are views of the filled part.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..files.elfheaders import ElfHeaders, open_elf_headers
from ..files.safefile import SymbolFileError
from ..modules.modlocate import same_build_id
from ..tasks.dsonames import MapKind
from ..tasks.maps import MapTable
from .arch import Arch
from .cfi import CfiError, CfiSource, open_sources


class Grow:
    """A numpy array filled from the front, doubled when full."""

    def __init__(self, dtype: type | str, cols: int = 0, cap: int = 256) -> None:
        self.cols = cols
        self.a = np.zeros((cap, cols) if cols else cap, dtype=dtype)
        self.n = 0

    def add(self, values: np.ndarray) -> int:
        """Append rows; the index of the first."""
        k = len(values)
        while self.n + k > len(self.a):
            bigger = np.zeros((2 * len(self.a), *self.a.shape[1:]), dtype=self.a.dtype)
            bigger[:self.n] = self.a[:self.n]
            self.a = bigger
        self.a[self.n:self.n + k] = values
        self.n += k
        return self.n - k

    @property
    def view(self) -> np.ndarray:
        return self.a[:self.n]


#: finds a user DSO's files: (path, build id, is the vDSO) -> ([file paths] in perf's order,
#: why there are none)
FileFinder = Callable[[str, str, bool], tuple[list[str], str]]


@dataclass
class DsoCfi:
    """What was found for one DSO (for the notes and the cache's sources)."""

    name: str
    files: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # "path: .eh_frame" ...
    problem: str | None = None  # why it has no CFI


class UnwindTables:
    """See the module docstring."""

    def __init__(self, maps: MapTable, arch: Arch, finder: FileFinder) -> None:
        self.mt = maps
        self.arch = arch
        self.finder = finder
        nd = len(maps.dsos)
        self.dso_state = np.full(max(nd, 1), 0, np.int8)
        for d, dso in enumerate(maps.dsos):
            if dso.kind in (MapKind.USER, MapKind.VDSO):
                self.dso_state[d] = -1
        self.dso_src = np.full((max(nd, 1), 2), -1, np.int64)
        self.dso_info: dict[int, DsoCfi] = {}
        self.m_dso = np.asarray(maps.dso, dtype=np.int64)
        self.m_bias = np.zeros(len(maps), np.uint64)
        self.sources: list[CfiSource] = []
        self.src_lo = Grow(np.int64)
        self.src_hi = Grow(np.int64)
        self.fde_start = Grow(np.uint64, cap=4096)
        self.fde_end = Grow(np.uint64, cap=4096)
        self.fde_state = Grow(np.uint8, cap=4096)
        self.fde_lo = Grow(np.int64, cap=4096)
        self.fde_hi = Grow(np.int64, cap=4096)
        self.fde_signal = Grow(np.uint8, cap=4096)
        self.fde_ra = Grow(np.int64, cap=4096)
        self.fde_src = Grow(np.int64, cap=4096)
        n = arch.n_cols
        self.row_pc = Grow(np.uint64, cap=1024)
        self.cfa_kind = Grow(np.uint8, cap=1024)
        self.cfa_reg = Grow(np.int64, cap=1024)
        self.cfa_val = Grow(np.int64, cap=1024)
        self.rule_kind = Grow(np.uint8, n, cap=1024)
        self.rule_val = Grow(np.int64, n, cap=1024)
        self.code = Grow(np.uint8, cap=1024)
        self.e_lo = Grow(np.int64, cap=64)
        self.e_hi = Grow(np.int64, cap=64)
        self.bad_fdes: dict[int, int] = {}  # dso -> FDEs that could not be decoded
        self.decoded = 0

    # -- what the walk reads ----------------------------------------------------------------
    def dsos(self) -> tuple[np.ndarray, np.ndarray]:
        return self.dso_state, self.dso_src

    def cfi(self) -> tuple[np.ndarray, ...]:
        return (self.src_lo.view, self.src_hi.view, self.fde_start.view, self.fde_end.view,
                self.fde_state.view, self.fde_lo.view, self.fde_hi.view,
                self.fde_signal.view, self.fde_ra.view)

    def rows(self) -> tuple[np.ndarray, ...]:
        return (self.row_pc.view, self.cfa_kind.view, self.cfa_reg.view, self.cfa_val.view,
                self.rule_kind.view, self.rule_val.view)

    def exprs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.code.view, self.e_lo.view, self.e_hi.view

    # -- filled on demand -------------------------------------------------------------------
    def load_dso(self, d: int) -> None:
        """Find DSO ``d``'s files and CFI; set its maps' biases."""
        dso = self.mt.dsos[d]
        info = self.dso_info[d] = DsoCfi(dso.name)
        self.dso_state[d] = 0
        try:
            files, why = self.finder(dso.path, dso.build_id, dso.kind == MapKind.VDSO)
        except (SymbolFileError, OSError, ValueError) as e:
            info.problem = str(e)
            return
        info.files = files
        if not files:
            info.problem = why
            return
        layout: ElfHeaders | None = None
        eh: CfiSource | None = None
        dbg: CfiSource | None = None
        for path in files:
            try:
                with open_elf_headers(path) as img:
                    if img.machine != self.arch.machine:
                        info.problem = f"{path}: not an {self.arch.name} ELF file"
                        continue
                    have = img.build_id
                    if dso.build_id and have and not same_build_id(have, dso.build_id):
                        info.problem = f"{path}: build id {have}, the recording has " \
                                       f"{dso.build_id}"
                        continue
                    if layout is None:
                        layout = img
                    for src in open_sources(img):
                        if src.kind == "eh_frame" and eh is None:
                            eh = src
                        elif src.kind == "debug_frame" and dbg is None:
                            dbg = src
            except SymbolFileError as e:
                info.problem = str(e)
        if layout is None:
            return
        if eh is None and dbg is None:
            info.problem = "no .eh_frame or .debug_frame"
            return
        for k, found in enumerate((eh, dbg)):
            if found is not None:
                self.dso_src[d, k] = self._add_source(found)
                info.sources.append(f"{found.path}: .{found.kind}")
        self._set_biases(d, layout)
        self.dso_state[d] = 1
        info.problem = None

    def _add_source(self, src: CfiSource) -> int:
        s = len(self.sources)
        self.sources.append(src)
        n = len(src.starts)
        lo = self.fde_start.add(src.starts)
        self.fde_end.add(np.zeros(n, np.uint64))
        self.fde_state.add(np.zeros(n, np.uint8))
        self.fde_lo.add(np.zeros(n, np.int64))
        self.fde_hi.add(np.zeros(n, np.int64))
        self.fde_signal.add(np.zeros(n, np.uint8))
        self.fde_ra.add(np.zeros(n, np.int64))
        self.fde_src.add(np.full(n, s, np.int64))
        self.src_lo.add(np.array([lo], np.int64))
        self.src_hi.add(np.array([lo + n], np.int64))
        return s

    def _set_biases(self, d: int, img: ElfHeaders) -> None:
        """Per map of DSO ``d``: its file offset ``addr - start + pgoff`` in the PT_LOAD
        holding its pgoff gives the link-time address; ``bias`` is ``addr - vaddr``.  The
        loader maps each PT_LOAD from its offset rounded down to a page, so where two share
        that page (lld puts ``r-x`` right after ``r--``: offsets 0 and 0x28460, a map at
        pgoff 0x28000) the map is of the later one."""
        ids = np.flatnonzero(self.m_dso == d)
        if not len(ids) or not img.loads:
            return
        seg_off = np.array([s.offset for s in img.loads], dtype=np.uint64)
        seg_end = np.array([s.offset + max(s.filesz, 1) for s in img.loads], dtype=np.uint64)
        seg_vaddr = np.array([s.vaddr for s in img.loads], dtype=np.uint64)
        page = np.uint64(4095)
        pg = self.mt.pgoff[ids].astype(np.uint64)
        hit = ((seg_off[None, :] & ~page) <= pg[:, None]) & (pg[:, None] < seg_end[None, :])
        last = len(img.loads) - 1 - hit[:, ::-1].argmax(axis=1)
        which = np.where(hit.any(axis=1), last, 0)
        with np.errstate(over="ignore"):
            self.m_bias[ids] = (self.mt.start[ids].astype(np.uint64) - pg + seg_off[which]
                                - seg_vaddr[which])

    def decode_fde(self, j: int) -> None:
        """Decode FDE ``j`` (its rows appended), or mark it unusable."""
        src = self.sources[int(self.fde_src.a[j])]
        s = int(self.fde_src.a[j])
        k = j - int(self.src_lo.a[s])
        try:
            fr = src.decode(k, self.arch.n_cols)
        except CfiError:
            self.fde_state.a[j] = 2
            d = int(np.flatnonzero((self.dso_src == s).any(axis=1))[0])
            self.bad_fdes[d] = self.bad_fdes.get(d, 0) + 1
            return
        self.decoded += 1
        base = self.e_lo.n
        for x in fr.exprs:
            at = self.code.add(np.frombuffer(x, np.uint8))
            self.e_lo.add(np.array([at], np.int64))
            self.e_hi.add(np.array([at + len(x)], np.int64))
        cfa_val = fr.cfa_val.copy()
        cfa_val[fr.cfa_kind == 1] += base
        val = fr.val.copy()
        val[(fr.kind == 5) | (fr.kind == 6)] += base
        r0 = self.row_pc.add(fr.pc)
        self.cfa_kind.add(fr.cfa_kind)
        self.cfa_reg.add(fr.cfa_reg)
        self.cfa_val.add(cfa_val)
        self.rule_kind.add(fr.kind)
        self.rule_val.add(val)
        self.fde_lo.a[j] = r0
        self.fde_hi.a[j] = r0 + len(fr.pc)
        self.fde_end.a[j] = np.uint64(fr.end & (2**64 - 1))
        self.fde_signal.a[j] = 1 if fr.signal else 0
        self.fde_ra.a[j] = fr.ra_col
        self.fde_state.a[j] = 1
