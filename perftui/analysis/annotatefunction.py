"""Annotate one function of a recording: find it by name, read its code, count its samples.

API:

* :meth:`SampleLeaves.of(res, rows) <SampleLeaves.of>`: the leaf location of every sample
  row, resolved once (block by block, without callchains); ``counts()`` per location.
* :func:`choose_function(res, leaves, name, dso=None) <choose_function>` ->
  :class:`FunctionChoice` or None: the hottest function of that name among the sampled
  ones (``dso``: only in dsos it names), else one from the symbol tables (a function
  without samples still annotates); the others of that name are listed.
* :func:`function_samples(res, leaves, loc) <function_samples>`: the offsets into the
  function and the periods of its own samples (perf annotate counts a sample's ip only,
  never its callchain).
* :func:`annotate_function(res, leaves, ref, images, ...) <annotate_function>` ->
  :class:`FunctionAnnotation`: the disassembly with per-instruction counts
  (:func:`perftui.analysis.annotate.annotate`), or the one-line reason there is none.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..symbols.code.codeloc import (
    CodeImages,
    FunctionCode,
    FunctionRef,
    dso_matches,
    find_functions,
    function_code,
)
from ..symbols.code.elfcode import ElfFileError
from ..symbols.code.srclines import SourceLine
from ..symbols.naming.resolver import Resolver
from .annotate import Annotation, annotate, source_lines

__all__ = [
    "FunctionAnnotation",
    "FunctionChoice",
    "SampleLeaves",
    "annotate_function",
    "choose_function",
    "function_samples",
]

BLOCK = 1 << 16


@dataclass
class SampleLeaves:
    """Sample rows and the location each one's ip resolves to."""

    rows: np.ndarray  # int64 index rows of SAMPLE records
    leaf: np.ndarray  # int32 location id per row

    @classmethod
    def of(cls, res: Resolver, rows: np.ndarray) -> SampleLeaves:
        rows = np.asarray(rows, dtype=np.int64)
        parts = [s.leaf for s in res.blocks(rows, BLOCK, callchains=False)]
        leaf = np.concatenate(parts) if parts else np.zeros(0, np.int32)
        return cls(rows, leaf.astype(np.int32, copy=False))

    def counts(self, n_locations: int) -> np.ndarray:
        """Samples per location id."""
        return np.bincount(self.leaf, minlength=n_locations) if len(self.leaf) else \
            np.zeros(n_locations, np.int64)


@dataclass
class FunctionChoice:
    """The function picked for a name, and the others that have it."""

    ref: FunctionRef
    loc: int
    samples: int
    others: list[tuple[FunctionRef, int]] = field(default_factory=list)  # hottest first


def choose_function(res: Resolver, leaves: SampleLeaves, name: str,
                    dso: str | None = None) -> FunctionChoice | None:
    """The function ``name`` (in ``dso`` when given): the hottest sampled one, else one
    found in the symbol tables of the sampled dsos (all dsos of the recording with
    ``dso``); None when no table has it."""
    locs = res.locs
    counts = leaves.counts(len(locs))
    found: list[tuple[FunctionRef, int]] = []
    for loc in [i for i, n in enumerate(locs.name) if n == name]:
        if dso is not None and not dso_matches(locs.dsos[locs.dso[loc]], dso):
            continue
        ref = FunctionRef.of_location(locs, loc)
        if ref is not None and counts[loc]:
            found.append((ref, int(counts[loc])))
    if not found:
        if dso is None:
            sampled = locs.dso_of()[leaves.leaf] if len(leaves.leaf) else np.zeros(0, int)
            wanted = [int(k) for k in np.unique(sampled)]
        else:
            wanted = _dsos_named(res, dso)
        # (a name found by a module alias is a location the samples may have already)
        refs = find_functions(res, name, wanted)
        locs_of = [ref.location(locs) for ref in refs]
        found = [(ref, int(counts[k]) if k < len(counts) else 0)
                 for ref, k in zip(refs, locs_of, strict=True)]
    if not found:
        return None
    found.sort(key=lambda f: -f[1])  # stable: ties keep their order
    ref, n = found[0]
    return FunctionChoice(ref, ref.location(locs), n, found[1:])


def _dsos_named(res: Resolver, dso: str) -> list[int]:
    """Location dsos ``dso`` names, after registering every dso of the recording's maps
    (a dso without samples has no location yet)."""
    from ..symbols.modules.modnames import module_name
    from ..symbols.tasks.dsonames import KERNEL_DSO, MapKind

    locs = res.locs
    for d in res.model.maps.dsos:
        if d.kind in (MapKind.USER, MapKind.VDSO):
            locs.dso_id(d.name)
        elif d.kind == MapKind.MODULE:
            mod = module_name(d.path or d.name)
            locs.dso_id(d.name, kernel=True, module=mod)
            if any(e.module == mod for e in res.smap.entries):
                locs.dso_id(f"[{mod}]", kernel=True, module=mod)
        elif d.kind in (MapKind.KERNEL, MapKind.KERNEL_EXTRA):
            locs.dso_id(KERNEL_DSO, kernel=True)
    for e in res.smap.entries:
        locs.dso_id(f"[{e.module}]", kernel=True, module=e.module)
    return [k for k, d in enumerate(locs.dsos) if dso_matches(d, dso)]


def function_samples(res: Resolver, leaves: SampleLeaves, loc: int
                     ) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets into the function, periods)`` of the samples whose ip is in ``loc``."""
    mine = leaves.rows[leaves.leaf == loc]
    offs, periods = [], []
    for s in res.blocks(mine, BLOCK, callchains=False):
        keep = s.leaf == loc  # the same answer as before: the resolver is deterministic
        offs.append(s.leaf_off[keep])
        periods.append(s.period[keep])
    if not offs:
        return np.zeros(0, np.uint64), np.zeros(0, np.uint64)
    return (np.concatenate(offs).astype(np.uint64),
            np.concatenate(periods).astype(np.uint64))


@dataclass
class FunctionAnnotation:
    """A function's annotation, or why there is none (``problem``, one line)."""

    code: FunctionCode
    annotation: Annotation | None
    samples: int  # the function's own samples (also when its code cannot be read)
    problem: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def ref(self) -> FunctionRef:
        return self.code.ref


def annotate_function(res: Resolver, leaves: SampleLeaves, ref: FunctionRef,
                      images: CodeImages, *, percent_type: str = "local-period",
                      source: bool = True,
                      samples: tuple[np.ndarray, np.ndarray] | None = None
                      ) -> FunctionAnnotation:
    """Disassemble ``ref`` from its file and count its samples per instruction
    (``samples``: their offsets into it and periods given, not found from ``leaves``)."""
    code = function_code(res, ref)
    warnings = list(code.notes)
    offs, periods = samples if samples is not None else \
        function_samples(res, leaves, ref.location(res.locs))
    if code.problem is not None:
        return FunctionAnnotation(code, None, len(offs), code.problem, warnings)
    try:
        disasm, image = images.disassemble(code)
    except ElfFileError as e:
        return FunctionAnnotation(code, None, len(offs), str(e), warnings)
    warnings += disasm.warnings
    ips = offs + np.uint64(disasm.start)
    lines: list[SourceLine | None] | None = None
    if source and disasm.is_code:
        try:
            lines = source_lines(images.lines_image(code, image), disasm)
        except ElfFileError as e:
            warnings.append(f"no source lines: {e}")
    ann = annotate(disasm, ips, periods, percent_type=percent_type, source=lines)
    outside = len(offs) - ann.samples
    if outside:
        warnings.append(f"{outside} samples of {ref.name} lie past the bytes disassembled")
    return FunctionAnnotation(code, ann, len(offs), None, warnings)
