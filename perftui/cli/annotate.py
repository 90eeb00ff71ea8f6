"""``perftui annotate``: one function disassembled with its samples per instruction, as
perf annotate --stdio (also --json)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..textsafe import safe
from .errors import UsageError, report_errors
from .inputs import cache_of, input_path, open_input
from .options import (
    add_cache_options,
    add_input,
    add_symbol_args,
    check_event,
    event_index,
    made_offcpu,
    symbol_options,
)

HELP = ("one function disassembled with its samples per instruction, as perf annotate "
        "--stdio (also --json)")


def add_parser(sp: Any) -> None:
    p = sp.add_parser("annotate", help=HELP,
                      usage="perftui annotate [-i FILE | FILE] SYMBOL [options]",
                      description="One function disassembled (capstone), with its samples "
                      "per instruction, as perf annotate --stdio prints it.  Exit status: "
                      "0 done; 1 unreadable recording or code file (kallsyms-only kernel "
                      "symbols have no code bytes: give --vmlinux); 2 bad usage or no "
                      "function of that name.")
    add_input(p)
    p.add_argument("symbol", nargs="?", metavar="SYMBOL",
                   help="the function (perf's symbol name)")
    p.add_argument("-s", "--symbol", dest="symbol_opt", metavar="SYMBOL",
                   help="the function, as perf annotate -s")
    p.add_argument("-d", "--dso", metavar="DSO",
                   help="only the function of this dso (short or long name, or module)")
    p.add_argument("--event", metavar="NAME",
                   help="only this event's samples; offcpu-time: the time off the CPU of "
                        "the stacks through the function, at the instruction each resumes "
                        "at (made from sched:sched_switch)")
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
    p.add_argument("--group", action="store_true",
                   help="every event in one annotation, a column each (perf's --group; "
                   "a recorded event group is shown so without it)")
    add_symbol_args(p)
    add_cache_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Exit status: 0, 1 (unreadable recording or code file), 2 (usage, unknown function:
    see perftui/present/annotaterun.py)."""
    from ..present.annotaterun import AnnotateRequest, run_annotate

    given = [x for x in (args.file, args.symbol) if x is not None]
    symbol = args.symbol_opt or (given.pop() if given else None)
    args.file = given.pop() if given else None
    if not symbol or given:
        raise UsageError("annotate: give one recording (FILE or -i FILE) and one SYMBOL")
    rec = open_input(input_path(args), spill=True, cache=cache_of(args), mapped=True)
    check_event(rec, args, "annotate")  # from the header: before the walk
    rec.build_index()
    attr = event_index(rec, args.event, "annotate") if args.event else None
    req = AnnotateRequest(symbol=symbol, dso=args.dso, attr=attr, json=args.json,
                          source=args.source, percent_type=args.percent_type,
                          show_nr_samples=args.show_nr_samples, group=args.group,
                          symbols=symbol_options(args),
                          offcpu=made_offcpu(rec, args.event))
    try:
        code = run_annotate(rec, req, sys.stdout, sys.stderr)
    except BrokenPipeError:
        raise
    except OSError as e:
        print(safe(f"perftui annotate: {e}"), file=sys.stderr)
        return 1
    return report_errors(rec) or code
