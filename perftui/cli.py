"""Command line: ``perftui [FILE]`` and the ``info``/``dump`` subcommands.

Exit status: 0 success, 1 unreadable or corrupt input (one line on standard error naming
the file offset), 2 bad usage.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import stat
import sys
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from . import startup
from .perfdata import PerfDataError, Recording, open_recording, type_code
from .perfdata.indexcache import IndexCache
from .present.info import print_info
from .present.records import jsonable, summary
from .textsafe import safe

if TYPE_CHECKING:
    from .analysis.filters import Filter
    from .present.diffrun import DiffRequest
    from .symbols.options import SymbolOptions

SUBCOMMANDS = ("info", "dump", "sections", "inject", "report", "annotate", "diff",
               "cache")
DEFAULT_INPUT = "perf.data"


class UsageError(Exception):
    """Bad usage found after parsing (exit 2)."""


class InputError(Exception):
    """An input that cannot be opened (exit 1): the message names it, nothing else."""


def _fail(err: PerfDataError | str, out: TextIO = sys.stderr) -> None:
    print(safe(f"perftui: {err}"), file=out)


def _report_errors(rec: Recording) -> int:
    _cache_notes(rec)
    for e in rec.errors:
        _fail(e)
    return 1 if rec.errors else 0


def input_path(args: argparse.Namespace) -> str:
    """The recording a command reads: ``--demo``, ``-i FILE``, ``FILE`` or ./perf.data
    (``--demo`` also adds the demo's module files to ``--modules-dir``)."""
    if getattr(args, "demo", False):
        from .demo import demo_path

        if args.input or args.file:
            raise UsageError(f"two inputs given: --demo and {args.input or args.file}")
        _demo_symbols(args)
        return str(demo_path())
    if args.input and args.file and args.input != args.file:
        raise UsageError(f"two inputs given: {args.file} and -i {args.input}")
    return args.input or args.file or DEFAULT_INPUT


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


# -- the index cache ---------------------------------------------------------------------
CACHE_HELP = ("complete indexes are kept in DIR (default $PERFTUI_CACHE_DIR, else "
              "~/.cache/perftui; at most $PERFTUI_CACHE_LIMIT bytes, default 20G) and "
              "mapped again on the next open of the same file")


def _add_cache_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cache-dir", metavar="DIR", help=CACHE_HELP)
    p.add_argument("--no-cache", action="store_true",
                   help="neither read nor write the index cache")


def _cache(args: argparse.Namespace) -> IndexCache | None:
    """The index cache the options ask for (None: --no-cache)."""
    if getattr(args, "no_cache", False):
        return None
    try:
        return IndexCache(getattr(args, "cache_dir", None))
    except ValueError as e:  # a bad PERFTUI_CACHE_LIMIT
        print(safe(f"perftui: index cache off: {e}"), file=sys.stderr)
        return None


def _cache_notes(rec: Recording) -> None:
    """Say once what the cache had to say (read-only, full, a bad entry)."""
    if rec.cache is not None:
        for note in rec.cache.notes:
            print(safe(f"perftui: {note}"), file=sys.stderr)
        rec.cache.notes.clear()


def cmd_cache(args: argparse.Namespace) -> int:
    cache = IndexCache(args.cache_dir)
    if args.clear:
        n = cache.clear()
        print(safe(f"removed {n} cached index{'es' if n != 1 else ''} from {cache.directory}"))
        return 0
    entries = cache.entries()
    total = sum(e.nbytes for e in entries)
    print(safe(f"{cache.directory}: {len(entries)} cached index"
               f"{'es' if len(entries) != 1 else ''}, {total / 1e6:,.1f} MB of "
               f"{cache.limit / 1e6:,.0f} MB"))
    import time as _time

    for e in sorted(entries, key=lambda e: -e.last_used):
        used = _time.strftime("%Y-%m-%d %H:%M", _time.localtime(e.last_used)) if e.ok else "?"
        state = "" if e.ok else "  (unreadable: removed on next use)"
        print(safe(f"  {e.nbytes / 1e6:10,.1f} MB  {e.records:>12,} records  {used}  "
                   f"{e.path}{state}"))
    return 0


# -- info ------------------------------------------------------------------------------
def cmd_info(args: argparse.Namespace) -> int:
    from .analysis.summary import info_dict

    rec = open_input(input_path(args), spill=False, cache=_cache(args))
    rec.scan()  # counts while walking, keeping no index (or the cache's)
    d = info_dict(rec)
    if args.json:
        print(json.dumps(jsonable(d)))
    else:
        print_info(d, rec, sys.stdout)
    return _report_errors(rec)


# -- dump ------------------------------------------------------------------------------
def cmd_dump(args: argparse.Namespace) -> int:
    wanted: set[str] | None = None
    if args.type:
        from .perfdata import type_name

        names = [t.strip() for arg in args.type for t in arg.split(",") if t.strip()]
        try:
            wanted = {type_name(type_code(t)) for t in names}
        except KeyError as e:
            raise UsageError(f"dump: unknown record type {e}") from None
    if args.limit is not None and args.limit < 0:
        raise UsageError("dump: --limit must be 0 or more")
    if args.no_symbols:  # a plain walk: nothing indexed, constant memory
        rec = open_input(input_path(args), spill=False, mapped=True)
        records: Any = ((None, r) for r in rec.records())
        namer = None
    else:  # names need the whole recording (perf's processing order): index it first
        from .present.samplenames import SampleNamer
        from .symbols.resolver import Resolver

        rec = open_input(input_path(args), spill=True, mapped=True)
        rec.build_index()
        namer = SampleNamer(rec, Resolver(rec, symbol_options(args), kernel_first=True))
        records = rec.indexed_records()
    out = sys.stdout
    n = 0
    for row, r in records:
        if wanted is not None and r["type"] not in wanted:
            continue
        if args.limit is not None and n >= args.limit:
            break
        n += 1
        if namer is not None and row is not None and r["type"] == "SAMPLE" and "error" not in r:
            r.update(namer.names(row))
        if args.json:
            out.write(json.dumps(jsonable(r)) + "\n")
        else:
            sfx = "z" if r.get("compressed") else " "
            where = f"{r['file']}:" if "file" in r else ""
            text = f"{where}{r['offset']:#010x}{sfx} {r['type']:<16} misc {r['misc']:#06x} " \
                   f"size {r['size']:>5}  {_when_who(r)}{r.get('error') or _summary(r)}"
            if "dso" in r and "error" not in r:
                from .present.samplenames import where as sample_where

                text += f"  {sample_where(r)}"
            out.write(safe(text) + "\n")
    out.flush()
    for w in rec.warnings:
        print(safe(f"perftui: warning: {w}"), file=sys.stderr)
    return _report_errors(rec)


def _when_who(r: dict[str, Any]) -> str:
    """``cpu N time S.NNNNNNNNN pid/tid P/T: `` as ``perf report -D`` heads a record: from a
    SAMPLE's fields or another record's sample_id trailer ("" when it has none)."""
    f = r if r.get("type") == "SAMPLE" else r.get("sample_id") or {}
    parts = []
    if "cpu" in f:
        parts.append(f"cpu {f['cpu']}")
    if "time" in f:
        parts.append(f"time {f['time'] // 1_000_000_000}.{f['time'] % 1_000_000_000:09d}")
    if "pid" in f and "tid" in f and r.get("type") == "SAMPLE":
        parts.append(f"pid/tid {f['pid']}/{f['tid']}")
    return " ".join(parts) + ": " if parts else ""


def _summary(r: dict[str, Any]) -> str:
    try:
        return summary(r)
    except (KeyError, TypeError, ValueError):
        return ""


# -- sections ---------------------------------------------------------------------------
def _demo_symbols(args: argparse.Namespace) -> None:
    """``--demo``: its module files and its kernel's kallsyms, unless given."""
    if hasattr(args, "modules_dir") and demo_modules_dir() not in args.modules_dir:
        args.modules_dir = [*args.modules_dir, demo_modules_dir()]
    if hasattr(args, "kallsyms") and args.kallsyms is None and \
            getattr(args, "vmlinux", None) is None:
        from .demo import demo_kallsyms

        args.kallsyms = str(demo_kallsyms())


def demo_modules_dir() -> str:
    from .demo import MODULES_DIR

    return str(MODULES_DIR)


def _event_index(rec: Recording, name: str) -> int:
    from .analysis.filters import FilterError

    names = [a.display_name for a in rec.attrs]
    if name in names:
        return names.index(name)
    raise FilterError(f"no event {name!r} in this recording (events: {', '.join(names)})")


def cmd_sections(args: argparse.Namespace) -> int:
    from .analysis.filters import FilterError
    from .analysis.sectionreport import (
        kept_section_report,
        section_report,
        streamed_section_report,
    )
    from .present.sections import print_sections, sections_json

    # no spill: the walk counts as it goes, and a cache entry has its own decompressed data
    rec = open_input(input_path(args), spill=False, cache=_cache(args))
    cached = rec.open_cached()
    if args.time and not cached:
        rec.scan()  # the first and last sample's times, which --time needs: a pass of its own
    try:
        flt = _sample_filter(args, rec)
    except FilterError as e:
        raise UsageError(f"sections: {e}") from None
    rep = None
    if cached and flt.empty and not args.symbols:
        rep = kept_section_report(rec, args.modules_dir)  # no pass over the rows at all
    if rep is None and cached and rec.load_cached():  # its columns, checked block by block
        rep = section_report(rec, args.modules_dir, flt)
    if rep is None:
        rep = streamed_section_report(rec, args.modules_dir, flt)  # one walk, no index
    d = sections_json(rep, symbols=args.symbols)
    if args.json:
        print(json.dumps(jsonable(d)))
    else:
        print_sections(d, sys.stdout, args.symbols, args.all)
    return _report_errors(rec)


def _sample_filter(args: argparse.Namespace, rec: Recording) -> Filter:
    """The samples ``--time``, ``--cpu``, ``--pid``, ``--tid`` (where the command has it) and
    ``--event`` select; raises FilterError."""
    from .analysis.filters import Filter, parse_int_list, parse_time_range
    from .analysis.summary import sample_bounds, time_span

    first, last = sample_bounds(rec)
    tid = getattr(args, "tid", None)
    return Filter(
        time=parse_time_range(args.time, first, last, origin=time_span(rec)[0])
        if args.time is not None else None,
        cpus=parse_int_list(args.cpu, "cpu list") if args.cpu is not None else None,
        pids=parse_int_list(args.pid, "pid list") if args.pid is not None else None,
        tids=parse_int_list(tid, "tid list") if tid is not None else None,
        attr=_event_index(rec, args.event) if args.event else None,
    )


# -- inject -----------------------------------------------------------------------------
def cmd_inject(args: argparse.Namespace) -> int:
    from .symbols.inject import PERF_NOTE, InjectError, inject, strip

    rec = open_input(input_path(args), spill=False, mapped=True)  # an index in mapped files
    rec.build_index()
    if rec.errors:
        return _report_errors(rec)
    try:
        if args.strip:
            res = strip(rec, args.output, force=args.force)
            print(f"wrote {args.output}: {res.records} KMOD_SEC_MAP records removed")
        else:
            res = inject(rec, args.output, args.sysfs, args.modules_dir, args.include_init,
                         args.force)
            print(safe(f"wrote {args.output}: {res.records} KMOD_SEC_MAP records for "
                       f"{len(res.modules)} modules ({', '.join(res.modules)})"))
            print(PERF_NOTE, file=sys.stderr)
        for w in res.warnings:
            print(safe(f"warning: {w}"), file=sys.stderr)
    except (InjectError, OSError) as e:
        print(safe(f"perftui inject: {e}"), file=sys.stderr)
        return 1
    return 0


# -- report -----------------------------------------------------------------------------
def _names(text: str | None, option: str) -> frozenset[str] | None:
    """The names of a comma list option (None: not given); a list with no name in it is
    bad usage, as an empty ``--cpu`` is (never silently "no filter")."""
    if text is None:
        return None
    names = frozenset(x for x in text.split(",") if x)
    if not names:
        raise UsageError(f"report: {option} needs at least one name")
    return names


def symbol_options(args: argparse.Namespace) -> SymbolOptions:
    """The symbol options of a command (perf's names)."""
    from .symbols.options import SymbolOptions

    return SymbolOptions(kallsyms=args.kallsyms, vmlinux=args.vmlinux, symfs=args.symfs,
                         modules_dirs=list(args.modules_dir))


def cmd_report(args: argparse.Namespace) -> int:
    from .analysis.filters import FilterError
    from .analysis.profile import SortKeyError, parse_sort
    from .present.reportrun import ReportRequest, run_report

    dsos, comms = _names(args.dso, "--dso"), _names(args.comm, "--comm")  # before the walk
    # indexed into mapped files; from the cache if it has the file
    rec = open_input(input_path(args), spill=True, cache=_cache(args), mapped=True)
    rec.build_index()
    try:
        keys = parse_sort(args.sort)
        flt = _sample_filter(args, rec)
    except (FilterError, SortKeyError) as e:
        raise UsageError(f"report: {e}") from None
    req = ReportRequest(keys=keys, children=args.children, json=args.json,
                        folded=args.folded, speedscope=args.speedscope, flt=flt,
                        dsos=dsos, comms=comms, percentage=args.percentage, time=args.time,
                        group=args.group,
                        symbols=symbol_options(args))
    try:
        run_report(rec, req, sys.stdout, sys.stderr)
    except BrokenPipeError:
        raise
    except OSError as e:
        print(safe(f"perftui report: {e}"), file=sys.stderr)
        return 1
    return _report_errors(rec)


# -- annotate ---------------------------------------------------------------------------
def cmd_annotate(args: argparse.Namespace) -> int:
    """Exit status: 0, 1 (unreadable recording or code file), 2 (usage, unknown function:
    see perftui/present/annotaterun.py)."""
    from .analysis.filters import FilterError
    from .present.annotaterun import AnnotateRequest, run_annotate

    given = [x for x in (args.file, args.symbol) if x is not None]
    symbol = args.symbol_opt or (given.pop() if given else None)
    args.file = given.pop() if given else None
    if not symbol or given:
        raise UsageError("annotate: give one recording (FILE or -i FILE) and one SYMBOL")
    rec = open_input(input_path(args), spill=True, cache=_cache(args), mapped=True)
    rec.build_index()
    try:
        attr = _event_index(rec, args.event) if args.event else None
    except FilterError as e:
        raise UsageError(f"annotate: {e}") from None
    req = AnnotateRequest(symbol=symbol, dso=args.dso, attr=attr, json=args.json,
                          source=args.source, percent_type=args.percent_type,
                          show_nr_samples=args.show_nr_samples,
                          symbols=symbol_options(args))
    try:
        code = run_annotate(rec, req, sys.stdout, sys.stderr)
    except BrokenPipeError:
        raise
    except OSError as e:
        print(safe(f"perftui annotate: {e}"), file=sys.stderr)
        return 1
    return _report_errors(rec) or code


def _annotate_parser(sp: Any) -> None:
    p = sp.add_parser("annotate", help=COMMAND_HELP["annotate"],
                      usage="perftui annotate [-i FILE | FILE] SYMBOL [options]",
                      description="One function disassembled (capstone), with its samples "
                      "per instruction, as perf annotate --stdio prints it.  Exit status: "
                      "0 done; 1 unreadable recording or code file (kallsyms-only kernel "
                      "symbols have no code bytes: give --vmlinux); 2 bad usage or no "
                      "function of that name.")
    _add_input(p)
    p.add_argument("symbol", nargs="?", metavar="SYMBOL",
                   help="the function (perf's symbol name)")
    p.add_argument("-s", "--symbol", dest="symbol_opt", metavar="SYMBOL",
                   help="the function, as perf annotate -s")
    p.add_argument("-d", "--dso", metavar="DSO",
                   help="only the function of this dso (short or long name, or module)")
    p.add_argument("--event", metavar="NAME", help="only this event's samples")
    p.add_argument("--json", action="store_true", help="one stable JSON object")
    p.add_argument("--stdio", action="store_true", help="text as perf annotate --stdio "
                   "(the default)")
    p.add_argument("--no-source", dest="source", action="store_false",
                   help="no source lines between the instructions")
    p.add_argument("-n", "--show-nr-samples", action="store_true",
                   help="sample counts instead of percentages")
    p.add_argument("--percent-type", default="local-period",
                   choices=("local-period", "local-hits"),
                   help="share of the function's period (perf's default) or samples")
    _symbol_args(p)
    _add_cache_options(p)
    p.set_defaults(func=cmd_annotate)


# -- diff -------------------------------------------------------------------------------
def cmd_diff(args: argparse.Namespace) -> int:
    from .analysis.diff import ComputeError, parse_compute
    from .analysis.filters import FilterError, parse_int_list
    from .analysis.profile import SortKeyError, parse_sort
    from .present.diffrun import DiffRequest, diff_files, time_ranges

    if args.demo:
        from .demo import demo_path

        if args.files:
            raise UsageError(f"diff: --demo compares the demo with itself patched; "
                             f"{' '.join(args.files)} given too")
        args.files = [str(demo_path()), str(demo_path(patched=True))]
        _demo_symbols(args)
    try:
        old_path, new_path = diff_files(args.files)
        req = DiffRequest(keys=parse_sort(args.sort), compute=parse_compute(args.compute),
                          json=args.json, time=args.time, cpu=args.cpu,
                          symbols=symbol_options(args), cache=_cache(args))
        time_ranges(req.time)
        if args.cpu is not None:
            parse_int_list(args.cpu, "cpu list")
    except (ValueError, SortKeyError, ComputeError, FilterError) as e:
        raise UsageError(f"diff: {e}") from None
    if not (args.json or args.stdio) and sys.stdout.isatty():
        return diff_browser(old_path, new_path, req)
    return text_diff(old_path, new_path, req)


def _diff_inputs(*paths: str) -> None:
    for p in paths:
        if p == "-":
            raise UsageError("diff: two files are compared, not standard input")


def text_diff(old_path: str, new_path: str, req: DiffRequest) -> int:
    """``perftui diff`` as text or JSON (perf diff's table)."""
    from .analysis.filters import FilterError
    from .present.diffrun import run_diff

    _diff_inputs(old_path, new_path)
    try:
        errors = run_diff(old_path, new_path, req, sys.stdout, sys.stderr,
                          lambda p: open_input(p, spill=True, cache=req.cache, mapped=True))
    except FilterError as e:
        raise UsageError(f"diff: {e}") from None
    except BrokenPipeError:
        raise
    except OSError as e:
        print(safe(f"perftui diff: {e}"), file=sys.stderr)
        return 1
    for fault in errors:
        _fail(fault)
    return 1 if errors else 0


def diff_browser(old_path: str, new_path: str, req: DiffRequest) -> int:
    """The diff browser on two recordings (its views replace --sort; each recording's
    range is chosen on its timeline)."""
    from .ui.diffapp import DiffApp
    from .ui.diffmodel import DiffModel

    _diff_inputs(old_path, new_path)
    recs = [open_input(p, spill=True, cache=req.cache, mapped=True)
            for p in (old_path, new_path)]
    model = DiffModel.of(recs[0], recs[1], req.symbols.modules_dirs, req.symbols)
    model.compute = req.compute
    app = DiffApp(model)
    code = app.run()
    errors = [e for r in recs for e in r.errors]
    for r in recs:
        r.close()
        _cache_notes(r)
    if app.crash_report is not None:
        from .crash import EXIT_INTERNAL

        print(app.crash_report, file=sys.stderr)
        return EXIT_INTERNAL
    if errors:
        _fail(errors[0])
        return 1
    return int(code or 0)


# -- entry point -------------------------------------------------------------------------
COMMAND_HELP = {
    "info": "header, features, events and record counts (perf report --header-only, --stats)",
    "dump": "every record in file order, decoded, one per line (perf report -D)",
    "sections": "kernel-module sections with their sample counts (and per symbol)",
    "inject": "add KMOD_SEC_MAP records to a recording (or --strip them)",
    "report": "the hotspot table, as perf report --stdio (also --json, --folded, --speedscope)",
    "annotate": "one function disassembled with its samples per instruction, as perf "
                "annotate --stdio (also --json)",
    "diff": "compare two recordings, as perf diff (the diff browser on a terminal)",
    "cache": "list or clear the index cache",
}


def _add_input(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", metavar="FILE",
                   help=f"the recording (default ./{DEFAULT_INPUT}; - reads a pipe-mode "
                        "stream from standard input)")
    p.add_argument("-i", "--input", metavar="FILE", help="the recording, as perf takes it")
    p.add_argument("--demo", action="store_true", help="use the bundled demo recording")


def _add_modules_dir(p: argparse.ArgumentParser) -> None:
    p.add_argument("--modules-dir", action="append", default=[], metavar="DIR",
                   help="also look for module files (.ko, .ko.xz, ...) here (repeatable)")


def build_parser() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """(the browser's parser, the subcommands' parser)."""
    from .analysis.timespec import TIME_HELP

    time_help = TIME_HELP.replace("%", "%%")  # argparse formats help with %

    commands = "\n".join(f"  {name:<10} {text}" for name, text in COMMAND_HELP.items())
    main = argparse.ArgumentParser(
        prog="perftui", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Terminal browser for Linux perf.data recordings.\n\n"
                    "perftui [FILE] opens the browser (a text report when standard output "
                    "is not a terminal).",
        epilog=f"subcommands (perftui SUBCOMMAND --help for their options):\n{commands}\n\n"
               "exit status: 0 success, 1 unreadable or corrupt input, 2 bad usage, "
               "3 internal error")
    _add_input(main)
    main.add_argument("new_file", nargs="?", metavar="NEW",
                      help="a second recording: compare FILE (OLD) with it, as perftui diff")
    _symbol_args(main)
    _add_cache_options(main)
    main.add_argument("--version", action="version", version=_version(),
                      help="print the version and exit")

    sub = argparse.ArgumentParser(prog="perftui")
    sp = sub.add_subparsers(dest="cmd", required=True, metavar="SUBCOMMAND")
    p = sp.add_parser("info", help=COMMAND_HELP["info"], description=COMMAND_HELP["info"])
    _add_input(p)
    p.add_argument("--json", action="store_true", help="one stable JSON object")
    _add_cache_options(p)
    p.set_defaults(func=cmd_info)
    p = sp.add_parser("dump", help=COMMAND_HELP["dump"], description=COMMAND_HELP["dump"])
    _add_input(p)
    p.add_argument("--json", action="store_true", help="one JSON object per record")
    p.add_argument("--type", action="append", metavar="NAME[,NAME...]",
                   help="only records of these types (repeatable), e.g. SAMPLE,COMM")
    p.add_argument("--limit", type=int, metavar="N", help="stop after N records")
    p.add_argument("--no-symbols", action="store_true",
                   help="no names for samples (a plain walk: faster, constant memory)")
    _symbol_args(p)
    p.set_defaults(func=cmd_dump)
    p = sp.add_parser("sections", help=COMMAND_HELP["sections"],
                      description=COMMAND_HELP["sections"])
    _add_input(p)
    p.add_argument("--json", action="store_true", help="one stable JSON object")
    p.add_argument("--symbols", action="store_true", help="per-symbol counts too")
    p.add_argument("--all", action="store_true", help="list sections without samples too")
    _add_modules_dir(p)
    p.add_argument("--time", metavar="START,END", help=time_help)
    p.add_argument("--cpu", metavar="LIST", help="only samples on these CPUs, e.g. 0-3,7")
    p.add_argument("--pid", metavar="LIST", help="only samples of these process ids")
    p.add_argument("--event", metavar="NAME", help="only the samples of this event")
    _add_cache_options(p)
    p.set_defaults(func=cmd_sections)
    p = sp.add_parser("inject", help=COMMAND_HELP["inject"], description=COMMAND_HELP["inject"])
    _add_input(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="the new recording (never FILE itself; written atomically)")
    p.add_argument("--sysfs", default="/sys", metavar="ROOT",
                   help="root of the sysfs tree with module/*/sections (default /sys)")
    _add_modules_dir(p)
    p.add_argument("--include-init", action="store_true", help="also .init* sections")
    p.add_argument("--strip", action="store_true", help="remove KMOD_SEC_MAP records instead")
    p.add_argument("--force", action="store_true", help="replace an existing OUT")
    p.set_defaults(func=cmd_inject)
    p = sp.add_parser("report", help=COMMAND_HELP["report"], description=COMMAND_HELP["report"])
    _add_input(p)
    p.add_argument("-s", "--sort", default="comm,dso,sym", metavar="KEYS",
                   help="sort keys: comm, pid, tid, dso, sym, cpu, module, section "
                        "(default comm,dso,sym)")
    p.add_argument("--children", action="store_true", default=None,
                   help="also the cumulative (callchain) overhead (default with callchains)")
    p.add_argument("--no-children", dest="children", action="store_false",
                   help="self overhead only")
    p.add_argument("--json", action="store_true", help="the table as one JSON object")
    p.add_argument("--folded", action="store_true",
                   help="folded stacks (comm;outermost;...;leaf COUNT), for flame graphs")
    p.add_argument("--speedscope", metavar="OUT", help="write a speedscope file to OUT")
    p.add_argument("--time", metavar="START,END", help=time_help)
    p.add_argument("--cpu", metavar="LIST", help="CPUs, e.g. 0-3,7")
    p.add_argument("--pid", metavar="LIST", help="process ids")
    p.add_argument("--tid", metavar="LIST", help="thread ids")
    p.add_argument("--comm", "--comms", metavar="NAMES",
                   help="only these thread names (comma list)")
    p.add_argument("--dso", "--dsos", metavar="NAMES",
                   help="only samples in these dsos (comma list)")
    p.add_argument("--percentage", choices=("absolute", "relative"), default="absolute",
                   help="the overhead of what --comm, --dso, --pid and --tid keep: of every "
                        "sample of the event (absolute, perf's default) or of those kept "
                        "(relative); --time and --cpu leave other samples out of both")
    p.add_argument("--group", action="store_true", default=None,
                   help="the events in one table, a column each (default: the recording's "
                        "event groups, as perf)")
    p.add_argument("--no-group", dest="group", action="store_false",
                   help="a table per event, groups or not")
    p.add_argument("--event", metavar="NAME", help="only this event")
    _symbol_args(p)
    _add_cache_options(p)
    p.set_defaults(func=cmd_report)
    _annotate_parser(sp)
    p = sp.add_parser("diff", help=COMMAND_HELP["diff"], description=COMMAND_HELP["diff"])
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="OLD NEW (none: perf.data.old perf.data; one: perf.data.old and it)")
    p.add_argument("--demo", action="store_true",
                   help="the bundled demo before and after a driver patch")
    p.add_argument("-s", "--sort", default="dso,sym", metavar="KEYS",
                   help="keys rows are matched by: comm, pid, dso, sym, cpu, module, section "
                        "(default dso,sym; symbols by name, dsos by short name)")
    p.add_argument("-c", "--compute", default="delta-abs", metavar="HOW",
                   help="delta, delta-abs (default) or ratio: the column rows are ordered by")
    p.add_argument("--json", action="store_true", help="the table as one JSON object")
    p.add_argument("--stdio", action="store_true",
                   help="the table as text even on a terminal (where the browser opens)")
    p.add_argument("--time", metavar="RANGE[:RANGE]",
                   help="only these times, one RANGE for both or OLD:NEW (" + time_help + ")")
    p.add_argument("--cpu", metavar="LIST", help="only samples on these CPUs, e.g. 0-3,7")
    _symbol_args(p)
    _add_cache_options(p)
    p.set_defaults(func=cmd_diff)
    p = sp.add_parser("cache", help=COMMAND_HELP["cache"],
                      description="The index cache: " + CACHE_HELP + ".  A recording read "
                      "from standard input has no identity and is never cached.")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--list", action="store_true",
                   help="every cached index: size, records, last use, file (the default)")
    g.add_argument("--clear", action="store_true", help="remove every cached index")
    p.add_argument("--cache-dir", metavar="DIR", help="the cache directory")
    p.set_defaults(func=cmd_cache)
    return main, sub


def _symbol_args(p: argparse.ArgumentParser) -> None:
    """perf's symbol options."""
    p.add_argument("--kallsyms", metavar="FILE", help="kernel symbols from this kallsyms file")
    p.add_argument("--vmlinux", metavar="FILE", help="kernel symbols from this vmlinux")
    p.add_argument("--symfs", metavar="DIR", help="look for files under DIR (as perf)")
    _add_modules_dir(p)


def _version() -> str:
    from . import __version__

    return f"perftui {__version__}"


def _tune_malloc() -> None:
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
    argv = list(sys.argv[1:] if argv is None else argv)
    _tune_malloc()
    main_p, sub_p = build_parser()
    try:
        if argv and argv[0] in SUBCOMMANDS:
            args = sub_p.parse_args(argv)
            startup.release()
            return int(args.func(args))
        args = main_p.parse_args(argv)
        return run_browser(args)
    except UsageError as e:
        print(safe(f"perftui: {e}"), file=sys.stderr)
        return 2
    except InputError as e:
        _fail(str(e))
        return 1
    except PerfDataError as e:  # NotPerfData too
        _fail(e)
        return 1
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a bug: one line, the traceback in a file
        from .crash import EXIT_INTERNAL, crash_line, write_traceback

        print(crash_line(e, write_traceback(e)), file=sys.stderr)
        return EXIT_INTERNAL


def _quiet_stdout() -> None:
    """After a closed pipe (``| head``): no second error when Python flushes at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def run_browser(args: argparse.Namespace) -> int:
    """Open the browser on FILE, ``-`` (a pipe-mode stream on stdin) or the demo; print a
    text report instead when standard output is not a terminal (as perf report does)."""
    path = input_path(args)
    symbols = symbol_options(args)
    modules_dirs = symbols.modules_dirs
    if args.new_file or not sys.stdout.isatty():
        startup.release()  # the browser releases it once its first screen is complete
    if args.new_file:  # two recordings: the diff
        from .present.diffrun import DiffRequest

        req = DiffRequest(symbols=symbols, cache=_cache(args))
        if not sys.stdout.isatty():
            return text_diff(path, args.new_file, req)
        return diff_browser(path, args.new_file, req)
    if not sys.stdout.isatty():
        return text_report(path, modules_dirs, _cache(args))
    stream = None
    if path == "-":
        rec, stream = _open_stdin_keep_tty()  # no identity: never cached
    else:
        rec = open_input(path, spill=True, cache=_cache(args), mapped=True)
    from .ui.app import PerftuiApp

    app = PerftuiApp(rec, modules_dirs, stream=stream, symbols=symbols)
    if stream is None:
        app.reopen_from_cache()  # the first frame has the totals and the section pane
    code = app.run()
    errors = rec.errors
    rec.close()
    _cache_notes(rec)
    if app.crash_report is not None:
        from .crash import EXIT_INTERNAL

        print(app.crash_report, file=sys.stderr)
        return EXIT_INTERNAL
    if app.return_code:
        return int(app.return_code)
    if errors:
        _fail(errors[0])
        return 1
    return int(code or 0)


def text_report(path: str, modules_dirs: list[str], cache: IndexCache | None) -> int:
    """``perftui FILE > out``: what the browser's panes show, as text (info, sections)."""
    from .analysis.sectionreport import section_report
    from .analysis.summary import info_dict
    from .present.sections import print_sections, sections_json

    rec = open_input(path, spill=True, cache=cache, mapped=True)
    rec.build_index()
    out = sys.stdout
    print_info(info_dict(rec), rec, out)
    out.write("\nmodule sections:\n")
    print_sections(sections_json(section_report(rec, modules_dirs)), out, False)
    out.flush()
    return _report_errors(rec)


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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
