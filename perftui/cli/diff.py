"""``perftui diff``: two recordings compared, as perf diff (the diff browser on a
terminal, perf diff's table otherwise)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, TextIO, cast

from ..analysis.sortkeys import DEFAULT_DIFF_SORT, EVENT_KEYS
from ..textsafe import safe
from .errors import UsageError, cache_notes, fail
from .inputs import cache_of, demo_symbols, open_input
from .options import (
    add_cache_options,
    add_field_separator,
    add_quiet,
    add_symbol_args,
    field_separator,
    symbol_options,
    time_help,
)

if TYPE_CHECKING:
    from ..present.diffrun import DiffRequest

HELP = "compare two recordings, as perf diff (the diff browser on a terminal)"


def add_parser(sp: Any) -> None:
    p = sp.add_parser("diff", help=HELP, description=HELP)
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="OLD NEW (none: perf.data.old perf.data; one: perf.data.old and it)")
    p.add_argument("--demo", action="store_true",
                   help="the bundled demo before and after a driver patch")
    p.add_argument("-s", "--sort", default=",".join(DEFAULT_DIFF_SORT), metavar="KEYS",
                   help=f"keys rows are matched by: {', '.join(EVENT_KEYS)} (default "
                        f"{','.join(DEFAULT_DIFF_SORT)}; symbols by name, dsos by short "
                        "name)")
    p.add_argument("-c", "--compute", default="delta-abs", metavar="HOW",
                   help="delta, delta-abs (default) or ratio: the column rows are ordered by")
    add_field_separator(p)
    add_quiet(p)
    p.add_argument("--json", action="store_true", help="the table as one JSON object")
    p.add_argument("--stdio", action="store_true",
                   help="the table as text even on a terminal (where the browser opens)")
    p.add_argument("--time", metavar="RANGE[:RANGE]",
                   help="only these times, one RANGE for both or OLD:NEW (" + time_help() + ")")
    p.add_argument("--cpu", metavar="LIST", help="only samples on these CPUs, e.g. 0-3,7")
    p.add_argument("--event", metavar="NAME",
                   help="only this event; offcpu-time: time off the CPU, made from "
                        "sched:sched_switch samples (with --children: where the threads "
                        "waited, not __schedule)")
    p.add_argument("--children", action="store_true",
                   help="each row weighs the samples through it (callchains), not only "
                        "its own (perf diff has no such option)")
    add_symbol_args(p)
    add_cache_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis.diff import ComputeError, parse_compute
    from ..analysis.filters import FilterError, parse_int_list
    from ..analysis.sortkeys import SortKeyError, parse_sort
    from ..present.diffrun import DiffRequest, diff_files, time_ranges

    if args.demo:
        from ..demo import demo_path

        if args.files:
            raise UsageError(f"diff: --demo compares the demo with itself patched; "
                             f"{' '.join(args.files)} given too")
        args.files = [str(demo_path()), str(demo_path(patched=True))]
        demo_symbols(args)
    sep = field_separator(args, "diff", *(["--json"] if args.json else []))
    try:
        old_path, new_path = diff_files(args.files)
        req = DiffRequest(keys=parse_sort(args.sort), compute=parse_compute(args.compute),
                          json=args.json, time=args.time, cpu=args.cpu,
                          symbols=symbol_options(args), cache=cache_of(args),
                          event=args.event, children=args.children, field_sep=sep)
        time_ranges(req.time)
        if args.cpu is not None:
            parse_int_list(args.cpu, "cpu list")
    except (ValueError, SortKeyError, ComputeError, FilterError) as e:
        raise UsageError(f"diff: {e}") from None
    if not (args.json or args.stdio or sep or args.quiet) and sys.stdout.isatty():
        return diff_browser(old_path, new_path, req)
    return text_diff(old_path, new_path, req, args.quiet and not args.json)


def _two_files(*paths: str) -> None:
    for p in paths:
        if p == "-":
            raise UsageError("diff: two files are compared, not standard input")


def text_diff(old_path: str, new_path: str, req: DiffRequest, quiet: bool = False) -> int:
    """``perftui diff`` as text or JSON (perf diff's table; ``quiet``: without its comment
    lines, perf's ``-q``)."""
    from ..analysis.filters import FilterError
    from ..present.diffrun import run_diff
    from ..present.quiet import Uncommented

    _two_files(old_path, new_path)
    out = Uncommented(sys.stdout) if quiet else None
    try:
        errors = run_diff(old_path, new_path, req,
                          cast(TextIO, out) if out is not None else sys.stdout, sys.stderr,
                          lambda p: open_input(p, spill=True, cache=req.cache, mapped=True))
        if out is not None:
            out.finish()
    except FilterError as e:
        raise UsageError(f"diff: {e}") from None
    except BrokenPipeError:
        raise
    except OSError as e:
        print(safe(f"perftui diff: {e}"), file=sys.stderr)
        return 1
    for fault in errors:
        fail(fault)
    return 1 if errors else 0


def diff_browser(old_path: str, new_path: str, req: DiffRequest) -> int:
    """The diff browser on two recordings (its views replace --sort; each recording's
    range is chosen on its timeline, within --time's; --cpu, --children and --event apply
    as in the text)."""
    from ..analysis.filters import FilterError, cpu_list
    from ..analysis.offcpu import OFFCPU_EVENT, offcpu_attr
    from ..crash import EXIT_INTERNAL
    from ..present.diffrun import time_ranges
    from ..ui.diffapp import DiffApp
    from ..ui.diffmodel import DiffModel, ViewOptions

    _two_files(old_path, new_path)
    recs = [open_input(p, spill=True, cache=req.cache, mapped=True)
            for p in (old_path, new_path)]
    for r in recs:  # (the text's checks, before the screen opens)
        try:
            if req.cpu is not None:
                cpu_list(r, req.cpu)
        except FilterError as e:
            for o in recs:
                o.close()
            raise UsageError(f"diff: {r.path}: {e}") from None
        names = [a.display_name for a in r.attrs]
        if req.event is not None and req.event not in names and not (
                req.event == OFFCPU_EVENT and offcpu_attr(r) is not None):
            for o in recs:
                o.close()
            raise UsageError(f"diff: no event {req.event!r} in {r.path} "
                             f"(events: {', '.join(names)})")
    t_old, t_new = time_ranges(req.time)
    opts = tuple(ViewOptions(t, req.cpu, req.children, req.event) for t in (t_old, t_new))
    model = DiffModel.of(recs[0], recs[1], req.symbols.modules_dirs, req.symbols,
                         (opts[0], opts[1]))
    model.compute = req.compute
    app = DiffApp(model)
    code = app.run()
    errors = [e for r in recs for e in r.errors]
    for r in recs:
        r.close()
        cache_notes(r)
    if app.crash_report is not None:
        print(app.crash_report, file=sys.stderr)
        return EXIT_INTERNAL
    if errors:
        fail(errors[0])
        return 1
    return int(code or 0)
