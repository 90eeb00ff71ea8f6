"""perf 6.1's use of ``addr2line`` for one user DSO (``tools/perf/util/srcline.c``).

perf asks about a DSO through its symbol file (``dso__name``: the file its symbols came
from), at ``map__rip_2objdump`` of the map-relative address: for a user DSO that is the
file offset plus the runtime file's ``.text`` ``sh_addr - sh_offset`` (perf 6.1 adjusts
every user DSO so).  addr2line reads the DWARF of that file, else of its separate debug
file (binutils' order: ``/usr/lib/debug/.build-id/xx/rest.debug`` with the same build id,
then ``.gnu_debuglink``'s file next to it, in its ``.debug/``, under ``/usr/lib/debug``,
its CRC checked).

What perf makes of the answer (:class:`DsoDwarf`):

* an inline chain (``addr2inlines``, ``new_inline_sym``): every record, innermost first,
  named as perf demangles it; a record whose name is the frame's symbol's is that symbol,
  any other a fake *inlined* symbol (``name (inlined)``) -- so an out-of-line function
  whose DWARF name differs from its symbol's (``__libc_start_main_impl`` at
  ``__libc_start_main``) is shown as inlined, and a record repeated is a frame repeated;
  each record's ``srcline`` is ``basename:line``;
* a source line (``__get_srcline`` for ``--sort srcline``): the first record's
  ``basename:line`` (``??:0`` where addr2line knows the symbol but no line: a DSO without
  DWARF); where addr2line knows nothing, ``symbol+offset`` in decimal, or
  ``dso[address]`` without a symbol; and after the first 123 look-ups of a DSO all failed,
  perf stops asking (``A2L_FAIL_LIMIT``), as here.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..code.elfcode import ElfCodeImage, ElfFileError, open_elf
from ..files.elfheaders import open_elf_headers
from ..files.safefile import SymbolFileError
from ..tables.demangle import demangle
from .addr2line import Addr2Line, Record
from .dwarffile import MAX_FILE, dwarf_file

__all__ = ["DsoDwarf", "InlineFrame"]

A2L_FAIL_LIMIT = 123  # perf's


@dataclass(frozen=True, slots=True)
class InlineFrame:
    """One entry of perf's inline chain of an address."""

    name: str  # as perf shows it (demangled)
    inlined: bool  # a fake symbol (its name is not the frame's symbol's)
    srcline: str  # perf's ilist->srcline: basename:line ("??:0" without a file)


def _text_offset(path: str) -> int:
    """``.text``'s ``sh_addr - sh_offset`` (perf's ``dso->text_offset``), 0 without it."""
    try:
        with open_elf_headers(path) as h:
            sec = h.section(".text")
            return sec.addr - sec.offset if sec is not None else 0
    except SymbolFileError:
        return 0


def _srcline(r: Record) -> str:
    """perf's ``srcline_from_fileline`` of a record, as read back from addr2line's text
    (a file addr2line prints as ``??`` is the file ``??``)."""
    file = r.file if r.file is not None else "??"
    return f"{file.rsplit('/', 1)[-1]}:{r.line}"


class DsoDwarf:
    """perf's addr2line of one DSO: ``syms`` its symbol file, ``runtime`` the file mapped
    at run time (for ``.text``'s offset).  ``problem`` says why it answers nothing."""

    def __init__(self, syms: str, runtime: str | None = None) -> None:
        self.path = syms
        self.text_offset = _text_offset(runtime or syms)
        self.problem: str | None = None
        self.debug: str | None = None
        self._a2l: Addr2Line | None = None
        self._fails = 1  # perf's dso->a2l_fails (1 at first: no success yet)
        self._has_srcline = True
        #: where the DWARF is; None: nowhere (addr2line then names by the ELF symbols only)
        self.debug = dwarf_file(syms)

    @property
    def notes(self) -> list[str]:
        return self._a2l.notes if self._a2l is not None else []

    def _open(self) -> Addr2Line | None:
        if self._a2l is None and self.problem is None:
            try:
                exe: ElfCodeImage = open_elf(self.path, MAX_FILE)
                dbg = exe if self.debug in (None, self.path) else open_elf(
                    self.debug, MAX_FILE)
                self._a2l = Addr2Line(exe, dbg)
            except ElfFileError as e:
                self.problem = str(e)
        return self._a2l

    def address(self, file_offset: int) -> int:
        """The address perf gives addr2line for a map-relative address."""
        return (file_offset + self.text_offset) & ((1 << 64) - 1)

    def records(self, file_offset: int) -> list[Record] | None:
        a2l = self._open()
        return a2l.records(self.address(file_offset)) if a2l is not None else None

    def inline_frames(self, file_offset: int, symbol: str) -> list[InlineFrame]:
        """perf's inline chain at a map-relative address of the symbol ``symbol``
        (empty: perf shows the frame as it is)."""
        recs = self.records(file_offset)
        if recs is None:
            return []
        out = []
        for r in recs:
            name = demangle(r.function or "??")
            out.append(InlineFrame(name, name != symbol, _srcline(r)))
        return out

    def line(self, file_offset: int) -> str | None:
        """The ``file:line`` perf's ``__get_srcline`` gets from addr2line at a map-relative
        address (None: addr2line answered nothing, or perf has stopped asking)."""
        if self._has_srcline:
            recs = self.records(file_offset)
            if recs is not None:
                self._fails = 0
                return _srcline(recs[0])
            if self._fails:
                self._fails += 1
                if self._fails > A2L_FAIL_LIMIT:
                    self._has_srcline = False
        return None
