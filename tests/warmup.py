"""The compiled loops (numba) compiled before the tests start, once, not once a run.

Without it the first tests to name samples with callchains (two workers at once) would pay
the ~5 s compile, and the terminal tests could time out waiting for names.  A report of the
demo with callchains runs every loop, in a child process (~7 s here, even when numba's
cache is current: the start-up, the demo, the report).  So it runs only when numba's cache
may be stale: the stamp beside it names, for every module with ``@njit``, the modification
time and size numba itself checks its cache against, and the interpreter and numba; a
stamp that still matches, with each module's cache index there, means nothing would
compile.  Nested pytest runs (tests/test_ci_strict.py) and xdist's workers find it fresh.

``python tests/warmup.py`` does the same (``make setup`` runs it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "perftui"
STAMP = PACKAGE / "__pycache__" / "tests-numba-warm.json"


def _numba_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "@njit" in p.read_text(errors="replace"))


def _state() -> dict[str, object]:
    """What numba's cache of perftui depends on (its own check: each source's mtime and
    size), and whether every module's cache index is there."""
    mods = _numba_modules()
    indexed = all(any(c.name.startswith(p.stem + ".") and c.suffix == ".nbi"
                      for c in (p.parent / "__pycache__").glob("*.nbi")) for p in mods)
    return {"python": sys.version, "prefix": str(Path(sys.prefix).resolve()),
            "numba": metadata.version("numba"), "indexed": indexed,
            "sources": {str(p.relative_to(PACKAGE)): [p.stat().st_mtime_ns, p.stat().st_size]
                        for p in mods}}


def ensure_compiled() -> bool:
    """Compile perftui's loops unless the stamp says they are; True when it ran them."""
    state = _state()
    try:
        if state["indexed"] and json.loads(STAMP.read_text()) == state:
            return False
    except (OSError, ValueError):
        pass
    r = subprocess.run([sys.executable, "-m", "perftui", "report", "--demo", "--children",
                        "--no-cache"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=600, check=False)
    # the DWARF unwinder's walk (the demo has no user stacks to unwind): ~15 s of CPU
    u = subprocess.run([sys.executable, "-c", "from perftui.symbols.unwind.walk import "
                        "compile_now; compile_now()"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=600, check=False)
    state = _state()  # the indexes are there now
    if r.returncode == 0 and u.returncode == 0 and state["indexed"]:
        try:
            STAMP.parent.mkdir(exist_ok=True)
            tmp = STAMP.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(state))
            tmp.replace(STAMP)
        except OSError:
            pass  # a read-only tree: warmed again next time
    return True


if __name__ == "__main__":
    ensure_compiled()
