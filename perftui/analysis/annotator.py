"""Annotation for a browser: one resolver, the leaf of every sample and the open files, made
once and shared by every annotate screen (thread-safe: screens work in workers).

API: :class:`Annotator` ``(rec, symbols=None, resolver=None, leaves=None)`` (a browser
passes the resolver and the leaves it has already built);
:meth:`~Annotator.find` ``(name, dso=None)`` -> :class:`~.annotatefunction.FunctionChoice`
or None; :meth:`~Annotator.of_sample` ``(row)`` -> the function a sample's ip is in;
:meth:`~Annotator.of_location` ``(loc)``; :meth:`~Annotator.annotate` ``(ref, keep=None,
source=True)`` -> :class:`~.annotatefunction.FunctionAnnotation` (``keep``: which samples
count, a mask over :attr:`Annotator.rows`, e.g. the browser's filter).
"""

from __future__ import annotations

import threading

import numpy as np

from ..perfdata import Recording
from ..symbols.code.codeloc import CodeImages, FunctionRef
from ..symbols.naming.resolver import Resolver, SymbolOptions
from .annotatefunction import (
    FunctionAnnotation,
    FunctionChoice,
    SampleLeaves,
    annotate_function,
    choose_function,
)
from .report import sample_rows

__all__ = ["Annotator"]


class Annotator:
    """See the module docstring.  Everything is computed on first use, in the caller's
    thread (call from a worker)."""

    def __init__(self, rec: Recording, symbols: SymbolOptions | None = None,
                 resolver: Resolver | None = None, leaves: SampleLeaves | None = None
                 ) -> None:
        self.rec = rec
        self.symbols = symbols or SymbolOptions()
        self._res = resolver
        self._leaves = leaves
        self.images = CodeImages()
        self._lock = threading.RLock()

    @property
    def resolver(self) -> Resolver:
        with self._lock:
            if self._res is None:
                self._res = Resolver(self.rec, self.symbols)
            return self._res

    @property
    def leaves(self) -> SampleLeaves:
        """Every sample's leaf location (all events)."""
        with self._lock:
            if self._leaves is None:
                self._leaves = SampleLeaves.of(self.resolver, sample_rows(self.rec))
            return self._leaves

    @property
    def rows(self) -> np.ndarray:
        """The sample rows the ``keep`` masks of :meth:`annotate` refer to."""
        return self.leaves.rows

    def find(self, name: str, dso: str | None = None) -> FunctionChoice | None:
        """The function called ``name`` (the hottest; ``dso`` narrows), also one
        without samples."""
        with self._lock:
            return choose_function(self.resolver, self.leaves, name, dso)

    def of_location(self, loc: int) -> FunctionRef | None:
        """The function of a location of :attr:`resolver` (None: an address no symbol
        covers)."""
        return FunctionRef.of_location(self.resolver.locs, loc)

    def of_sample(self, row: int) -> FunctionRef | None:
        """The function the ip of SAMPLE index row ``row`` is in."""
        with self._lock:
            res = self.resolver
            s = res.samples(np.array([row], dtype=np.int64), callchains=False)
            return FunctionRef.of_location(res.locs, int(s.leaf[0])) if len(s.leaf) else None

    def annotate(self, ref: FunctionRef, keep: np.ndarray | None = None,
                 source: bool = True, percent_type: str = "local-period"
                 ) -> FunctionAnnotation:
        """``ref`` disassembled with the samples ``keep`` selects (all by default)."""
        with self._lock:
            leaves = self.leaves
            if keep is not None:
                leaves = SampleLeaves(leaves.rows[keep], leaves.leaf[keep])
            return annotate_function(self.resolver, leaves, ref, self.images,
                                     percent_type=percent_type, source=source)
