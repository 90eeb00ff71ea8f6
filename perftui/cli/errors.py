"""How the command line fails: bad usage (exit 2), an input that cannot be read (exit 1),
one line on standard error each."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

from ..textsafe import safe

if TYPE_CHECKING:
    from ..perfdata import PerfDataError, Recording


class UsageError(Exception):
    """Bad usage found after parsing (exit 2)."""


class InputError(Exception):
    """An input that cannot be opened (exit 1): the message names it, nothing else."""


def fail(err: PerfDataError | str, out: TextIO | None = None) -> None:
    """``perftui: <err>`` on standard error, escaped for the terminal."""
    print(safe(f"perftui: {err}"), file=out or sys.stderr)


def cache_notes(rec: Recording) -> None:
    """Say once what the cache had to say (read-only, full, a bad entry)."""
    if rec.cache is not None:
        for note in rec.cache.notes:
            print(safe(f"perftui: {note}"), file=sys.stderr)
        rec.cache.notes.clear()


def report_errors(rec: Recording) -> int:
    """The cache's notes and the recording's decode errors on standard error; the exit
    status they make (1 with an error, else 0)."""
    cache_notes(rec)
    for e in rec.errors:
        fail(e)
    return 1 if rec.errors else 0
