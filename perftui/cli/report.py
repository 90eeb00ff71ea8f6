"""``perftui report``: the hotspot table, as perf report --stdio (also --json, --folded,
--speedscope, --pprof).  Every option is checked before the recording is opened (a bad sort key
costs no walk); the event's name once its header is read, before the index."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, TextIO, cast

from ..analysis.sortkeys import DEFAULT_SORT, EVENT_KEYS
from ..textsafe import safe
from .errors import UsageError, report_errors
from .inputs import cache_of, input_path, open_input
from .options import (
    add_cache_options,
    add_field_separator,
    add_input,
    add_quiet,
    add_symbol_args,
    check_event,
    check_sample_options,
    field_separator,
    made_offcpu,
    name_list,
    sample_filter,
    symbol_options,
    time_help,
)

HELP = "the hotspot table, as perf report --stdio (also --json, --folded, --speedscope, --pprof)"


def add_parser(sp: Any) -> None:
    p = sp.add_parser("report", help=HELP, description=HELP)
    add_input(p)
    p.add_argument("-s", "--sort", default=None, metavar="KEYS",
                   help=f"sort keys: {', '.join(EVENT_KEYS)}, and with --event "
                        f"offcpu-time state (default {','.join(DEFAULT_SORT)})")
    p.add_argument("--children", action="store_true", default=None,
                   help="also the cumulative (callchain) overhead (default with callchains)")
    p.add_argument("--no-children", dest="children", action="store_false",
                   help="self overhead only")
    p.add_argument("-n", "--show-nr-samples", action="store_true",
                   help="a Samples column: each row's own samples")
    p.add_argument("--percent-limit", type=float, default=0.0, metavar="PCT",
                   action=_InOrder,
                   help="leave out rows under PCT percent (children's with children) and, "
                        "as perf, take it as the call graphs' threshold too")
    p.add_argument("-g", "--call-graph", nargs="?", const="", default=None, action=_InOrder,
                   metavar="TYPE,THRESHOLD,LIMIT,ORDER,KEY,VALUE",
                   help="the call graph under each row, as perf's -g: graph (default), "
                        "flat, fractal, folded or none; threshold percent (0.5); print "
                        "limit; caller or callee (default caller with children); "
                        "function or address; percent, period or count")
    p.add_argument("-G", "--inverted", action="store_true",
                   help="the call graphs in caller order (perf's alias of -g caller)")
    add_field_separator(p)
    add_quiet(p)
    p.add_argument("--stats", action="store_true",
                   help="record counts by type and samples by event, as perf report --stats")
    p.add_argument("--json", action="store_true", help="the table as one JSON object")
    p.add_argument("--folded", action="store_true",
                   help="folded stacks (comm;outermost;...;leaf COUNT), for flame graphs")
    p.add_argument("--speedscope", metavar="OUT", help="write a speedscope file to OUT")
    p.add_argument("--pprof", metavar="OUT",
                   help="write a gzipped pprof profile.proto to OUT (go tool pprof, "
                        "Pyroscope, Parca)")
    p.add_argument("--time", metavar="START,END", help=time_help())
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
    p.add_argument("--event", metavar="NAME",
                   help="only this event; offcpu-time: time off the CPU, made from "
                        "sched:sched_switch samples")
    add_transform_args(p)
    add_symbol_args(p)
    add_cache_options(p)
    p.set_defaults(func=run)


#: the transforms on the stacks, named as the Firefox Profiler names them
TRANSFORM_HELP = {
    "focus-subtree": ("PATH", "only the stacks that begin with PATH (frame names joined "
                              "with ';', outermost first), its last frame their root"),
    "focus-function": ("NAME", "only the stacks through NAME, each from its outermost "
                               "call of NAME (every call site merged)"),
    "merge-function": ("NAME", "NAME taken out of every stack: its self time charged to "
                               "its caller"),
    "drop-function": ("NAME", "leave out the samples whose stack goes through NAME"),
    "collapse-resource": ("DSO", "each run of frames in DSO (or a module section, "
                                 "[module]section) made one frame named DSO"),
}


def add_transform_args(p: argparse.ArgumentParser) -> None:
    """The transform options (every output: the table, --json, --folded, --speedscope,
    --pprof), applied in the order given."""
    g = p.add_argument_group("transforms", "on the stacks, in the order given (the Firefox "
                                           "Profiler's); a function is named as --folded "
                                           "names its frames")
    for kind, (metavar, text) in TRANSFORM_HELP.items():
        g.add_argument(f"--{kind}", metavar=metavar, action=_Transform, dest="transforms",
                       default=[], help=text)


class _Transform(argparse.Action):
    """A transform option: (kind, value) appended to the list, in order."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        kind = (option_string or "").lstrip("-")
        setattr(namespace, self.dest, [*getattr(namespace, self.dest, []), (kind, values)])


class _InOrder(argparse.Action):
    """An option whose place among others of its kind counts (perf applies ``-g`` and
    ``--percent-limit`` as they come: the last threshold given wins)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, _option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)
        namespace.in_order = [*getattr(namespace, "in_order", []), (self.dest, values)]


def run(args: argparse.Namespace) -> int:
    from ..analysis.callgraph import CallGraphError, CallGraphOptions, parse_call_graph
    from ..analysis.report import has_callchains
    from ..analysis.sortkeys import SortKeyError, parse_sort
    from ..present.report import TableOptions
    from ..present.reportrun import ReportRequest, run_report
    from ..present.transformnames import TransformSpec

    # every option's value first: nothing is read before they are known to be good
    try:
        keys = parse_sort(args.sort if args.sort is not None else ",".join(DEFAULT_SORT),
                          offcpu=args.event == "offcpu-time")
    except SortKeyError as e:
        raise UsageError(f"report: {e}") from None
    call_graph = CallGraphOptions()
    for dest, value in getattr(args, "in_order", []):
        if dest == "percent_limit":
            call_graph.threshold = value
            continue
        try:
            call_graph = parse_call_graph(value, call_graph)
        except CallGraphError as e:
            # "-g FILE": -g takes an optional word, and this one is the recording
            if args.file is None and os.path.exists(value):
                args.file = value
                continue
            raise UsageError(f"report: {e}") from None
    if args.inverted:  # (perf: after every option, whatever -g said)
        call_graph.order = "caller"
    sep = field_separator(args, "report", *(o for o, given in (
        ("--json", args.json), ("--folded", args.folded), ("--speedscope", args.speedscope),
        ("--pprof", args.pprof)) if given))
    dsos = name_list(args.dso, "--dso", "report")
    comms = name_list(args.comm, "--comm", "report")
    check_sample_options(args, "report")
    transforms = tuple(TransformSpec(k, v) for k, v in args.transforms)
    for t in transforms:
        if not t.value.strip():
            raise UsageError(f"report: --{t.kind} needs a name")
    # indexed into mapped files; from the cache if it has the file
    rec = open_input(input_path(args), spill=True, cache=cache_of(args), mapped=True)
    if args.stats:  # (perf: every other option aside)
        from ..present.stats import print_stats

        rec.build_index()
        print_stats(rec, sys.stdout)
        return report_errors(rec)
    check_event(rec, args, "report")  # from the header: before the walk
    rec.build_index()
    req = ReportRequest(keys=keys, children=args.children, json=args.json,
                        folded=args.folded, speedscope=args.speedscope, pprof=args.pprof,
                        flt=sample_filter(args, rec, "report"), dsos=dsos, comms=comms,
                        percentage=args.percentage, time=args.time, group=args.group,
                        symbols=symbol_options(args), call_graph=call_graph,
                        sort_given=args.sort,
                        table=TableOptions(args.show_nr_samples, args.percent_limit, sep),
                        offcpu=made_offcpu(rec, args.event), transforms=transforms)
    graph_given = any(dest == "call_graph" for dest, _v in getattr(args, "in_order", []))
    if graph_given and call_graph.mode != "none" and not has_callchains(rec):
        # (perf 6.1 prints "Selected -g ... But no callchain or branch data." and no table)
        print(safe(f"perftui report: {rec.path}: no call chains (recorded without -g or "
                   "--call-graph): the table has no call graphs"), file=sys.stderr)
    try:
        if args.quiet and not (args.json or args.folded):
            from ..present.quiet import Uncommented

            out = Uncommented(sys.stdout)
            run_report(rec, req, cast(TextIO, out), sys.stderr)
            out.finish()
        else:
            run_report(rec, req, sys.stdout, sys.stderr)
    except BrokenPipeError:
        raise
    except OSError as e:
        what = f"{e.filename}: {e.strerror}" if e.filename and e.strerror else str(e)
        print(safe(f"perftui report: {what}"), file=sys.stderr)
        return 1
    return report_errors(rec)
