"""``perftui [FILE]``: the browser on a recording, a pipe-mode stream or the demo (the
diff browser on two recordings); a text report when standard output is not a terminal,
as perf report falls back to --stdio."""

from __future__ import annotations

import argparse
import os
import sys
from typing import BinaryIO

from .. import startup
from ..crash import EXIT_INTERNAL
from ..perfdata import Recording
from ..perfdata.indexcache import IndexCache
from .errors import InputError, cache_notes, fail, report_errors
from .inputs import cache_of, input_path, open_input
from .options import symbol_options


def run_browser(args: argparse.Namespace) -> int:
    """Open the browser on FILE, ``-`` (a pipe-mode stream on stdin) or the demo; print a
    text report instead when standard output is not a terminal (as perf report does)."""
    path = input_path(args)
    symbols = symbol_options(args)
    modules_dirs = symbols.modules_dirs
    if args.new_file or not sys.stdout.isatty():
        startup.release()  # the browser releases it once its first screen is complete
    if args.new_file:  # two recordings: the diff
        from ..present.diffrun import DiffRequest
        from .diff import diff_browser, text_diff

        req = DiffRequest(symbols=symbols, cache=cache_of(args))
        if not sys.stdout.isatty():
            return text_diff(path, args.new_file, req)
        return diff_browser(path, args.new_file, req)
    if not sys.stdout.isatty():
        return text_report(path, modules_dirs, cache_of(args))
    stream = None
    if path == "-":
        rec, stream = _open_stdin_keep_tty()  # no identity: never cached
    else:
        rec = open_input(path, spill=True, cache=cache_of(args), mapped=True)
    from ..ui.app import PerftuiApp

    app = PerftuiApp(rec, modules_dirs, stream=stream, symbols=symbols)
    if stream is None:
        app.reopen_from_cache()  # the first frame has the totals and the section pane
    code = app.run()
    errors = rec.errors
    rec.close()
    cache_notes(rec)
    if app.crash_report is not None:
        print(app.crash_report, file=sys.stderr)
        return EXIT_INTERNAL
    if app.return_code:
        return int(app.return_code)
    if errors:
        fail(errors[0])
        return 1
    return int(code or 0)


def text_report(path: str, modules_dirs: list[str], cache: IndexCache | None) -> int:
    """``perftui FILE > out``: what the browser's panes show, as text (info, sections)."""
    from ..analysis.sectionreport import section_report
    from ..analysis.summary import info_dict
    from ..present.info import print_info
    from ..present.sections import print_sections, sections_json

    rec = open_input(path, spill=True, cache=cache, mapped=True)
    rec.build_index()
    out = sys.stdout
    print_info(info_dict(rec), rec, out)
    out.write("\nmodule sections:\n")
    print_sections(sections_json(section_report(rec, modules_dirs)), out, False)
    out.flush()
    return report_errors(rec)


def _open_stdin_keep_tty() -> tuple[Recording, BinaryIO]:
    """Read the recording from the pipe on fd 0, and give the terminal back to fd 0."""
    if sys.stdin.isatty():
        raise InputError("-: standard input is a terminal: pipe a recording in "
                         "(perf record -o - ... | perftui -)")
    pipe = os.fdopen(os.dup(0), "rb", buffering=0)
    try:
        tty = os.open("/dev/tty", os.O_RDONLY)
    except OSError:
        raise InputError("-: no terminal to read keys from (/dev/tty)") from None
    os.dup2(tty, 0)
    os.close(tty)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115 - fd 0 is the terminal now
    return Recording(None, stream=pipe, spill=True, mapped=True), pipe
