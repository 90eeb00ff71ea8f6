"""Describe kernel addresses: ``[module]section symbol+0xoff`` from the section map."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .modfiles import ModuleFiles
from .sectionmap import SectionMap


class Symbolizer:
    """Names addresses with the section map and the module files (cached per address)."""

    def __init__(self, smap: SectionMap, files: ModuleFiles) -> None:
        self.smap = smap
        self.files = files
        self.describe = lru_cache(maxsize=65536)(self._describe)

    def entry_of(self, ip: int) -> int:
        return int(self.smap.lookup(np.array([ip], dtype=np.uint64))[0])

    def _describe(self, ip: int) -> str:
        k = self.entry_of(ip)
        if k < 0:
            return ""
        e = self.smap.entries[k]
        off = ip - e.start
        where = e.label
        mf = self.files.get(e.module, e.path)
        if mf is not None and e.section and e.section in mf.sections:
            r = mf.resolve(e.section, off)
            if r is not None:
                return f"{where} {r[0]}+{r[1]:#x}"
        return f"{where}+{off:#x}"
