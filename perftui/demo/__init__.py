"""The bundled demo: real module ELF files and a recording generated from them."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .. import __version__

MODULES_DIR = Path(__file__).parent / "modules"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "perftui"


def demo_path(patched: bool = False) -> Path:
    """The demo recording, generated once into the user's cache directory; ``patched``:
    the "after" recording of ``perftui diff --demo``."""
    from .generate import PATCHED_SEED, generate

    seed = PATCHED_SEED if patched else 6116
    target = cache_dir() / f"demo-{__version__}{'-patched' if patched else ''}.data"
    if target.is_file():
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".demo-", suffix=".tmp")
        os.close(fd)
    except OSError:  # read-only home: use a private temporary directory
        target = Path(tempfile.mkdtemp(prefix="perftui-demo-")) / "demo.data"
        return generate(target, seed, patched)
    try:
        generate(tmp, seed, patched)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target
