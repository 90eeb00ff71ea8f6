"""perf's ``-q``/``--quiet`` for the text tables: every line but the ``#`` comment lines.

perf report and perf diff with ``-q`` write exactly their usual text without its comment
lines (the header hint, ``# Samples``, the column headers, the tip), which is what
:class:`Uncommented` passes on of what is written through it.
"""

from __future__ import annotations

import io
from typing import TextIO


class Uncommented(io.TextIOBase):
    """A text stream writing to ``out`` every line not starting with ``#`` (a line is held
    until its end is written)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._part = ""  # the line begun, not ended yet

    def write(self, s: str) -> int:
        text = self._part + s
        head, nl, self._part = text.rpartition("\n")
        if nl:
            kept = [ln for ln in (head + nl).splitlines(keepends=True) if not ln.startswith("#")]
            self.out.write("".join(kept))
        return len(s)

    def flush(self) -> None:
        self.out.flush()

    def finish(self) -> None:
        """Write the last line if it has no end (and is no comment), then flush."""
        if self._part and not self._part.startswith("#"):
            self.out.write(self._part)
        self._part = ""
        self.flush()
