"""An annotated function as text, in ``perf annotate --stdio``'s shape.

::

     Percent |<TAB>Source code & Disassembly of hotprog for cpu-clock (154 samples, perc...
    --------------------------------------------------------------------------------------...
             : 28   SPIN_LOOP(3 * units * UNIT);
        0.00 :   11d8:   movq   $0x0,-0x8(%rbp)
       90.26 :   11f5:   add    %rax,%rdx

The title and the dashes under it are perf's (``symbol__annotate_printf``: the dashes are as
long as the title line, its tab counted as one character, plus four).  Each instruction is
``" %7.2f :   %*x:   asm"`` (``-n``: the sample count ``" %7d"``), the address as wide
as the function's last one.  A source line is printed when an instruction's line differs
from the one before (``: LINE TEXT``); perf shows what ``objdump -S`` prints there,
including the file's context lines and objdump's headers, perftui only the line itself
(or ``file:line`` when the source file cannot be read).  Strings from files pass through
:func:`perftui.textsafe.safe`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from ..analysis.annotate import Annotation
from ..symbols.code.srclines import SourceLine
from ..symbols.code.srctext import SourceFiles
from ..textsafe import safe

__all__ = ["PERCENT_TITLES", "print_annotation"]

#: perf's words for the percent types in the title
PERCENT_TITLES = {"local-period": "local period", "local-hits": "local hits"}


def print_annotation(anns: Sequence[Annotation], dso: str, event: str, out: TextIO, *,
                     show_nr_samples: bool = False, source: bool = True,
                     files: SourceFiles | None = None) -> None:
    """Write one function's annotation (``dso``: perf's short dso name): a column per
    annotation of ``anns`` (the same disassembly; several for an event group, as perf's
    ``symbol__annotate_printf``: 8 characters a member, the title's samples the leader's)."""
    ann = anns[0]
    column = "Samples" if show_nr_samples else "Percent"
    width = 8 * len(anns)
    blank = " " * (width + 1) + ":"
    title = (f" {column:<{width}}|\tSource code & Disassembly of {safe(dso)} for "
             f"{safe(event)} ({ann.samples} samples, percent: "
             f"{PERCENT_TITLES[ann.percent_type]})")
    out.write(title + "\n")
    out.write("-" * (len(title) + 1 + 4) + "\n")
    d = ann.disasm
    if not d.is_code:
        out.write(f"{blank}      {safe(d.note or 'not code')}\n")
        return
    addr_width = len(f"{d.instructions[-1].addr:x}") if d.instructions else 1
    files = files if files is not None else SourceFiles()
    prev: SourceLine | None = None
    for k, insn in enumerate(d.instructions):
        line = ann.source[k] if (source and ann.source is not None) else None
        if line is not None and line != prev:
            text = files.line(line.file, line.line)
            shown = text.strip() if text is not None else str(line)
            out.write(safe(f"{blank} {line.line:<4} {shown}") + "\n")
        prev = line if line is not None else prev
        values = "".join(f" {int(a.counts.hits[k]):7d}" if show_nr_samples else
                         f" {float(a.percent[k]):7.2f}" for a in anns)
        out.write(values + " :   " + f"{insn.addr:>{addr_width}x}:   " + safe(insn.asm) + "\n")
