"""The bundled demo: real module ELF files and a recording generated from them."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from .. import __version__

MODULES_DIR = Path(__file__).parent / "modules"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "perftui"


#: the generator's revision: a changed generator makes a new demo file, never a stale one
REVISION = 2


def _write_atomically(target: Path, write: Callable[[str], object]) -> Path:
    """``write(tmp)`` into the cache directory, then linked as ``target`` unless another
    process was first (its file is never replaced under a reader: the index cache would
    take the new file for a changed recording and drop the entry the first is naming
    into); a private temporary directory when the cache cannot be written."""
    if target.is_file():
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".demo-", suffix=".tmp")
        os.close(fd)
    except OSError:  # read-only home: use a private temporary directory
        target = Path(tempfile.mkdtemp(prefix="perftui-demo-")) / target.name
        write(str(target))
        return target
    try:
        write(tmp)
        try:  # the first complete copy stays: another perftui may have it open already
            os.link(tmp, target)
        except FileExistsError:
            pass
        except OSError:  # no hard links here
            if not target.is_file():
                os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def demo_kallsyms() -> Path:
    """The demo kernel's kallsyms (``--demo`` reads it as ``--kallsyms``)."""
    from .generate import kallsyms_text

    def write(path: str) -> None:
        with open(path, "w") as f:
            f.write(kallsyms_text())

    return _write_atomically(cache_dir() / f"demo-{__version__}-r{REVISION}.kallsyms", write)


def demo_path(patched: bool = False) -> Path:
    """The demo recording, generated once into the user's cache directory; ``patched``:
    the "after" recording of ``perftui diff --demo``."""
    from .generate import PATCHED_SEED, generate

    seed = PATCHED_SEED if patched else 6116
    name = f"demo-{__version__}-r{REVISION}{'-patched' if patched else ''}.data"
    return _write_atomically(cache_dir() / name, lambda p: generate(p, seed, patched))
