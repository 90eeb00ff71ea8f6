"""perf 6.1's ``srcline`` and ``srcfile`` of a frame (``tools/perf/util/sort.c``,
``srcline.c``), for the sort keys of those names.

A frame is a location and the offset of its address into it.  Its ``srcline``
(``__get_srcline``) is addr2line's first record at the frame's map-relative address,
``basename:line`` (:mod:`..dwarf.dsodwarf`); where addr2line answers nothing (no DWARF,
a DSO perf does not ask about: the kernel, ``[vdso]``, a JIT map), ``symbol+offset`` in
decimal, or ``dso[address]`` without a symbol; ``??:0`` in no map.  Its ``srcfile``
(``hist_entry__get_srcfile``) is that text up to its first ``:`` when addr2line gave
it, else empty (``??:0`` too).

A frame of an unwound user stack that perf's ``--inline`` made from an inline chain
(``append_inlines``) carries the srcline of its own record of the chain (the line of the
call inlined into it, or for the innermost, of the code): ``chained`` asks for that one.

Where perftui differs from perf 6.1 on purpose: perf makes a ``--children`` row of a
callchain entry with the entry's raw ip (``fill_callchain_info``: ``al->addr =
node->ip``) and passes it to ``map__rip_2objdump`` as if it were map-relative, so a
user frame's srcline is addr2line's answer at a wrong address: ``leaf+94197585350699``
(the raw ip less the symbol's start).  Here every frame is looked up at its map-relative
address, as perf does for the sample's own entry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .inlines import InlineNames
from .locations import UNKNOWN_DSO

if TYPE_CHECKING:
    from .resolver import Resolver

__all__ = ["SRCLINE_UNKNOWN", "SourceLines"]

SRCLINE_UNKNOWN = "??:0"  # perf's


class SourceLines:
    """The srcline and srcfile of frames of ``res``'s locations, each DSO's DWARF found as
    the inline chains find it."""

    def __init__(self, res: Resolver) -> None:
        self.res = res
        self._dwarf = InlineNames(res)

    def texts(self, loc: int, off: int, chained: int = -1) -> tuple[str, str]:
        """``(srcline, srcfile)`` of the frame at offset ``off`` into location ``loc``
        (``chained`` >= 0: a frame of an unwound stack's inline chain, the ``chained``-th
        of the chain's frames named as it is, counted round)."""
        locs = self.res.locs
        d = locs.dso[loc]
        ld = locs.dsos[d]
        if ld.name == UNKNOWN_DSO:
            return SRCLINE_UNKNOWN, ""
        name = locs.name[loc]
        dw = self._dwarf.dwarf(d)
        addr = locs.start[loc] + off
        line: str | None = None
        if dw is not None:
            if chained >= 0 and name is not None:
                # (an inlined call's location is named as its chain names it)
                like = [f.srcline for f in dw.inline_frames(addr, name) if f.name == name]
                line = like[chained % len(like)] if like else None
            if line is None:
                line = dw.line(addr)
        if line is not None:
            return line, "" if line == SRCLINE_UNKNOWN else line.split(":", 1)[0]
        if name is not None:
            return f"{name}+{off}", ""
        shown_addr = dw.address(addr) if dw is not None else addr
        return f"{ld.short_name}[{shown_addr:x}]", ""

    def notes(self) -> list[str]:
        """The DSOs whose frames no DWARF could name."""
        return self._dwarf.notes()
