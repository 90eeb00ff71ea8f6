"""Which engine runs the passes over a recording's rows: compiled (numba) or plain (numpy).

numba costs about 0.9 s of CPU before its first compiled call returns (its import ~0.5 s,
its cached machine code loaded ~0.4 s), where a plain pass over a recording of 10^4-10^5
records takes a few hundredths of a second more than the compiled one (docs/performance.md).
So a recording of fewer than :data:`SMALL_ROWS` index rows is processed plain and numba is
never imported for it; a bigger one compiled.  Both give the same results: the tests run
the perf-equality tests on both, forced by ``PERFTUI_ENGINE=plain`` or ``compiled``.

The choice is made by the whole recording's row count, so every pass of one recording
takes the same engine (one compiled pass would pay numba's fixed cost for all of them).
Until numba has compiled the loops once after an install, a big recording takes the plain
engine too, while :mod:`perftui.warmcompile` compiles them in the background; the line
saying so is in :data:`NOTES` (the command line prints it once, the browser shows it).
"""

from __future__ import annotations

import os
import threading

from . import warmcompile

#: the environment variable that forces an engine: ``plain`` or ``compiled``
ENV = "PERFTUI_ENGINE"
#: recordings of fewer index rows than this are processed plain (measured: the plain
#: passes cost ~2 us a sample more than the compiled ones with callchains, numba ~0.9 s)
SMALL_ROWS = 1 << 18
ENGINES = ("plain", "compiled")


class EngineError(ValueError):
    """``PERFTUI_ENGINE`` names no engine (the command line says so in one line)."""


def forced() -> str | None:
    """The engine ``PERFTUI_ENGINE`` forces (None: chosen by size); any other value than
    ``plain``, ``compiled``, ``auto`` or nothing raises :class:`EngineError`."""
    value = os.environ.get(ENV, "").strip().lower()
    if not value or value == "auto":
        return None
    if value not in ENGINES:
        raise EngineError(f"{ENV}={value[:40]!r}: expected plain, compiled or auto")
    return value


#: what the engine's choice has to say (once a process): the background compile
NOTES: list[str] = []
_warm: bool | None = None  # the compiled loops are ready (None: not asked yet)
_warm_lock = threading.Lock()


def engine_for(rows: int) -> str:
    """``"plain"`` or ``"compiled"``: the engine of a recording of ``rows`` index rows."""
    return forced() or ("plain" if rows < SMALL_ROWS or not _compiled_ready() else "compiled")


def _compiled_ready() -> bool:
    """numba's machine code is there (else the background compile is started, once a
    process, and the plain engine answers meanwhile); True too where it cannot be kept."""
    global _warm
    with _warm_lock:
        if _warm is None:
            _warm = warmcompile.ready()
            if not _warm:
                note = warmcompile.start_background()
                _warm = note is None  # (a tree not writable: compiled in the run, as before)
                if note is not None:
                    NOTES.append(note)
        return _warm


def compiled(rows: int) -> bool:
    """True when a recording of ``rows`` index rows is processed by the compiled passes."""
    return engine_for(rows) == "compiled"
