"""``perftui sections``: the kernel-module section map with sample counts (and per
symbol), from one walk, the cache's kept counts, or its checked rows."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .errors import report_errors
from .inputs import cache_of, input_path, open_input
from .options import (
    add_cache_options,
    add_input,
    add_modules_dir,
    check_event,
    check_sample_options,
    sample_filter,
    time_help,
)

HELP = "kernel-module sections with their sample counts (and per symbol)"


def add_parser(sp: Any) -> None:
    p = sp.add_parser("sections", help=HELP, description=HELP)
    add_input(p)
    p.add_argument("--json", action="store_true", help="one stable JSON object")
    p.add_argument("--symbols", action="store_true", help="per-symbol counts too")
    p.add_argument("--all", action="store_true", help="list sections without samples too")
    add_modules_dir(p)
    p.add_argument("--time", metavar="START,END", help=time_help())
    p.add_argument("--cpu", metavar="LIST", help="only samples on these CPUs, e.g. 0-3,7")
    p.add_argument("--pid", metavar="LIST", help="only samples of these process ids")
    p.add_argument("--event", metavar="NAME", help="only the samples of this event")
    add_cache_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis.sectionreport import (
        kept_section_report,
        section_report,
        streamed_section_report,
    )
    from ..present.records import jsonable
    from ..present.sections import print_sections, sections_json

    check_sample_options(args, "sections")
    # no spill: the walk counts as it goes, and a cache entry has its own decompressed data
    rec = open_input(input_path(args), spill=False, cache=cache_of(args))
    check_event(rec, args, "sections")  # from the header: before the walk
    cached = rec.open_cached()
    if args.time and not cached:
        rec.scan()  # the first and last sample's times, which --time needs: a pass of its own
    flt = sample_filter(args, rec, "sections")
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
    return report_errors(rec)
