"""Where a command's recording comes from: ``--demo``, ``-i FILE``, ``FILE`` or
./perf.data; opened with plain one-line errors; the index cache the options ask for."""

from __future__ import annotations

import argparse
import errno
import os
import stat
import sys

from ..perfdata import Recording, open_recording
from ..perfdata.indexcache import IndexCache
from ..textsafe import safe
from .errors import InputError, UsageError

DEFAULT_INPUT = "perf.data"


def input_path(args: argparse.Namespace) -> str:
    """The recording a command reads: ``--demo``, ``-i FILE``, ``FILE`` or ./perf.data
    (``--demo`` also adds the demo's module files to ``--modules-dir``)."""
    if getattr(args, "demo", False):
        from ..demo import demo_path

        if args.input or args.file:
            raise UsageError(f"two inputs given: --demo and {args.input or args.file}")
        demo_symbols(args)
        return str(demo_path())
    if args.input and args.file and args.input != args.file:
        raise UsageError(f"two inputs given: {args.file} and -i {args.input}")
    return str(args.input or args.file or DEFAULT_INPUT)


def open_input(path: str, spill: bool, cache: IndexCache | None = None,
               mapped: bool = False) -> Recording:
    """Open ``path`` ("-": standard input) with plain one-line errors for what is not
    there or not a file (a FIFO or a device is never opened: it could block or never end)."""
    if path == "-":
        return open_recording(path, spill=spill, mapped=mapped)
    try:
        st = os.stat(path)
    except OSError as e:
        raise InputError(f"{path}: {os.strerror(e.errno or errno.ENOENT)}") from None
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        raise InputError(f"{path}: not a regular file (a FIFO or device is not read; "
                         "use - with a pipe)")
    if not os.access(path, os.R_OK):
        raise InputError(f"{path}: {os.strerror(errno.EACCES)}")
    return open_recording(path, spill=spill, cache=cache, mapped=mapped)


def demo_symbols(args: argparse.Namespace) -> None:
    """``--demo``: its module files and its kernel's kallsyms, unless given."""
    if hasattr(args, "modules_dir") and demo_modules_dir() not in args.modules_dir:
        args.modules_dir = [*args.modules_dir, demo_modules_dir()]
    if hasattr(args, "kallsyms") and args.kallsyms is None and \
            getattr(args, "vmlinux", None) is None:
        from ..demo import demo_kallsyms

        args.kallsyms = str(demo_kallsyms())


def demo_modules_dir() -> str:
    """The bundled demo's module files."""
    from ..demo import MODULES_DIR

    return str(MODULES_DIR)


def cache_of(args: argparse.Namespace) -> IndexCache | None:
    """The index cache the options ask for (None: --no-cache)."""
    if getattr(args, "no_cache", False):
        return None
    try:
        return IndexCache(getattr(args, "cache_dir", None))
    except ValueError as e:  # a bad PERFTUI_CACHE_LIMIT
        print(safe(f"perftui: index cache off: {e}"), file=sys.stderr)
        return None
