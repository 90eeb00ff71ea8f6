"""``perftui``'s entry point: parse, dispatch, and turn every failure into its exit
status (0 success, 1 unreadable or corrupt input, 2 bad usage, 3 internal error)."""

from __future__ import annotations

import os
import sys

from .. import engine, startup
from ..perfdata import PerfDataError
from ..textsafe import safe
from .browser import run_browser
from .errors import InputError, UsageError, fail
from .parser import SUBCOMMANDS, build_parser, subcommand_parser


def tune_malloc() -> None:
    """Fixed glibc thresholds that suit perftui's memory: the index columns live in mapped
    files, so what is allocated is per-chunk temporaries (a few MB) over and over.  They
    come from the heap and stay there between chunks (M_MMAP_THRESHOLD 32 MiB, M_TRIM_
    THRESHOLD 16 MiB): with glibc's small defaults each one was a fresh mmap whose pages
    were faulted in again (``info`` on 4.85 M records: 1.1-1.5 -> 0.8-0.9 s of CPU);
    anything larger is mapped and goes back to the system when freed.  One heap arena
    (M_ARENA_MAX 1) for every thread: the walk's own thread and the workers otherwise get
    arenas of their own, whose freed memory stays apart (a first ``report --children`` on
    the 4.85 M-record bench recording: 101-103 -> 97 MB of RssAnon, in the same time; the
    GIL leaves little for a shared arena's lock to wait on)."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 16 << 20)  # M_TRIM_THRESHOLD
        libc.mallopt(-8, 1)  # M_ARENA_MAX
    except (OSError, AttributeError):
        pass  # not glibc: nothing to tune


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    finally:
        for note in engine.NOTES:  # the background compile's start, said once
            print(note, file=sys.stderr)
        engine.NOTES.clear()


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    tune_malloc()
    main_p, sub_p = build_parser()
    try:
        engine.forced()  # PERFTUI_ENGINE checked before any file is read
        if argv and argv[0] in SUBCOMMANDS:
            args, extra = sub_p.parse_known_args(argv)
            if extra:  # said with the subcommand's usage, not the top level's
                subcommand_parser(sub_p, argv[0]).error(
                    f"unrecognized arguments: {' '.join(extra)}")
            startup.release()
            return int(args.func(args))
        args = main_p.parse_args(argv)
        return run_browser(args)
    except (UsageError, engine.EngineError) as e:
        print(safe(f"perftui: {e}"), file=sys.stderr)
        return 2
    except InputError as e:
        fail(str(e))
        return 1
    except PerfDataError as e:  # NotPerfData too
        fail(e)
        return 1
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a bug: one line, the traceback in a file
        from ..crash import EXIT_INTERNAL, crash_line, write_traceback

        print(crash_line(e, write_traceback(e)), file=sys.stderr)
        return EXIT_INTERNAL


def _quiet_stdout() -> None:
    """After a closed pipe (``| head``): no second error when Python flushes at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
