"""numba's one-time compile, in the background: a first big recording after an install never
waits for it.

numba compiles perftui's loops on their first call and keeps the machine code beside each
module (``__pycache__``); after a ``pip install`` nothing is compiled yet, and the first run
on a recording big enough for the compiled engine (:mod:`perftui.engine`) paid ~17 s of CPU
before its first answer.  Now that run takes the plain engine (same results, slower per
sample) and starts a process that compiles every loop (the demo named and grouped by the
compiled engine: :mod:`perftui.warmexercise`; the DWARF unwinder's walk), then writes
:data:`STAMP`; later runs find the stamp
and take the compiled engine.  The stamp names what numba checks its cache against (each
compiled module's modification time and size, the interpreter, numba's version) and those
modules' cache indexes must be there, so an upgrade compiles again.  A tree that cannot be written
(a system install: numba then compiles in a user-wide cache each run anyway) keeps the old
way: compiled in the run.  ``python -m perftui.warmcompile`` compiles in the foreground
(``make setup`` and the tests' warm-up do).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
#: written once every loop is compiled: what numba's cache was checked against
STAMP = PACKAGE / "__pycache__" / "numba-warm.json"
#: held (its pid inside) while a background compile runs
LOCK = PACKAGE / "__pycache__" / "numba-warm.lock"
#: a lock older than this whose process is gone is taken over
STALE_S = 900.0


def numba_modules() -> list[Path]:
    """perftui's modules with compiled loops."""
    return sorted(p for p in PACKAGE.rglob("*.py")
                  if re.search(r"^@njit", p.read_text(errors="replace"), re.M))


def _indexed(p: Path) -> bool:
    """numba keeps a cache index for module ``p``."""
    return any(c.name.startswith(p.stem + ".") for c in (p.parent / "__pycache__").glob("*.nbi"))


def state() -> dict[str, object]:
    """What numba's cache of perftui depends on (its own check: each compiled module's
    mtime and size; the interpreter, numba), for the modules with a cache index."""
    from importlib import metadata  # (~15 ms of CPU: only where the engine is asked for)

    return {"python": sys.version, "prefix": str(Path(sys.prefix).resolve()),
            "numba": metadata.version("numba"),
            "sources": {str(p.relative_to(PACKAGE)): [p.stat().st_mtime_ns, p.stat().st_size]
                        for p in numba_modules() if _indexed(p)}}


def ready() -> bool:
    """The loops the engines use are compiled and current (the stamp, written after they
    were, still matches: a module changed, or its index gone, compiles again)."""
    try:
        kept = json.loads(STAMP.read_text())
    except (OSError, ValueError):
        return False
    now = state()
    sources = now["sources"]
    assert isinstance(sources, dict)
    return (isinstance(kept, dict) and bool(kept.get("sources"))
            and all(kept.get(k) == now[k] for k in ("python", "prefix", "numba"))
            and all(sources.get(m) == v for m, v in kept["sources"].items()))


def compile_all() -> bool:
    """Compile every loop the engines use in a child process (:mod:`perftui.warmexercise`),
    and the DWARF unwinder's walk in another beside it, then write the stamp; True when it
    is.  The two at once (~16 and ~11 s of CPU) take the longer one's time on two cores, not
    the sum; a module both compile (the byte swap) gets one signature from both, and numba
    adds each to its cache index by replacing the file whole."""
    env = dict(os.environ, PERFTUI_ENGINE="compiled")
    steps = [[sys.executable, "-m", "perftui.warmexercise"],
             [sys.executable, "-c",
              "from perftui.symbols.unwind.walk import compile_now; compile_now()"]]
    procs = [subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env=env) for cmd in steps]
    ok = True
    for p in procs:
        try:
            ok = p.wait(timeout=1800) == 0 and ok
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            ok = False
    return ok and write_stamp()


def write_stamp() -> bool:
    """Write :data:`STAMP` (its folder too: with ``PYTHONDONTWRITEBYTECODE`` set, Python
    never makes the package's ``__pycache__``, and without the stamp every run compiled again
    in the background); True when it is written."""
    try:
        STAMP.parent.mkdir(exist_ok=True)
        tmp = STAMP.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(state()))
        tmp.replace(STAMP)
    except OSError:
        return False
    return True


def _running() -> int | None:
    """The pid of the background compile holding :data:`LOCK` (None: none alive)."""
    try:
        text = LOCK.read_text().strip()
        age = time.time() - LOCK.stat().st_mtime
    except OSError:
        return None
    if text.isdigit():
        with contextlib.suppress(OSError):
            os.kill(int(text), 0)
            return int(text)
    if not text and age < 60:  # being started by another run
        return -1
    if age > STALE_S or text:
        with contextlib.suppress(OSError):
            LOCK.unlink()
    return None


def start_background() -> str | None:
    """Start the background compile unless one runs; the line that says so (None: the tree
    cannot be written: the run compiles as before)."""
    if _running() is not None:
        return ("perftui: its compiled loops are still being compiled in the background "
                "(once after an install); this run takes the plain path")
    try:
        LOCK.parent.mkdir(exist_ok=True)
        fd = os.open(LOCK, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return start_background() if _running() is None else (
            "perftui: its compiled loops are being compiled in the background")
    except OSError:
        return None
    try:
        child = subprocess.Popen([sys.executable, "-m", "perftui.warmcompile", "--locked"],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, start_new_session=True)
        os.write(fd, str(child.pid).encode())
    except OSError:
        os.close(fd)
        with contextlib.suppress(OSError):
            LOCK.unlink()
        return None
    os.close(fd)
    return ("perftui: compiling its compiled loops in the background, once after an install "
            "(~20 s of CPU); until then big recordings take the plain path (same results)")


def main(argv: list[str]) -> int:
    """Compile every loop (``--locked``: as the background process, the lock released at
    the end)."""
    if "--locked" in argv:
        with contextlib.suppress(OSError):
            os.nice(10)  # behind what the user runs
    try:
        return 0 if compile_all() else 1
    finally:
        if "--locked" in argv:
            with contextlib.suppress(OSError):
                LOCK.unlink()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
