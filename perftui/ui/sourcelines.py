"""The samples grouped with every frame's location split by source line, for the browser's
``srcline`` and ``srcfile`` sort keys.

Made the first time a view asks (:meth:`SourceGroups.groups`, from that view's worker: every
DSO's DWARF is read), from the model's names as ``perftui report --sort srcline`` makes them
(:func:`~perftui.present.session.by_source_line`), then grouped as the names are
(:func:`~perftui.analysis.groupstore.sample_groups`).  Both are kept with the index cache
entry (``srclines-`` and ``srcgroups-`` attachments, tied to the names they were split
from), so a reopened browser reads no DWARF for them.  New names (a live pipe's next pass)
make them anew.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np

from ..symbols.naming.samplelocs import SampleLocs, plain_alloc

if TYPE_CHECKING:
    from ..analysis.samplegroups import SampleGroups
    from .model import Model


class SourceGroups:
    """A model's samples grouped by source line, made once per set of names."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self._lock = threading.Lock()
        self._made: tuple[SampleLocs, SampleLocs, SampleGroups] | None = None
        #: what lacked DWARF (the ``i`` screen shows them)
        self.notes: list[str] = []

    def groups(self) -> SampleGroups | None:
        """The grouped samples split by source line (None before the names): slow the
        first time, from a worker."""
        made = self._make()
        return None if made is None else made[2]

    def names(self) -> SampleLocs | None:
        """The names split by source line, once :meth:`groups` made them (else None)."""
        made = self._made
        return made[1] if made is not None and made[0] is self.model.names else None

    def _make(self) -> tuple[SampleLocs, SampleLocs, SampleGroups] | None:
        from ..analysis.groupstore import sample_groups
        from ..present.session import by_source_line
        from ..symbols.naming.samplestore import attachment_name

        m = self.model
        sl, base = m.names, m.groups
        if sl is None or base is None:
            return None
        with self._lock:
            made = self._made
            if made is not None and made[0] is sl:
                return made
            split = by_source_line(m.rec, m.symbol_options, sl, [], keep=True)
            c = m.rec.columns

            def columns(r: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
                return c["tid"][r], c["cpu"][r], c["attr"][r]

            grouped = sample_groups(m.rec, split, attachment_name(m.symbol_options),
                                    base.callchains, columns, plain_alloc,
                                    prefix="srcgroups-")
            self.notes = [n for n in split.notes if n not in sl.notes]
            self._made = (sl, split, grouped)
            return self._made

    def srcline(self, row: int) -> str | None:
        """The srcline of a SAMPLE row's own location, once made (else None)."""
        split = self.names()
        k = split.position(row) if split is not None else None
        if split is None or k is None or split.locs.srcline is None:
            return None
        return split.locs.srcline[int(split.leaf[k])]
