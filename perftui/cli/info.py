"""``perftui info``: header, features, events and record counts (perf report
--header-only and --stats)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .errors import report_errors
from .inputs import cache_of, input_path, open_input
from .options import add_cache_options, add_input

HELP = "header, features, events and record counts (perf report --header-only, --stats)"


def add_parser(sp: Any) -> None:
    p = sp.add_parser("info", help=HELP, description=HELP)
    add_input(p)
    p.add_argument("--json", action="store_true", help="one stable JSON object")
    add_cache_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis.summary import info_dict
    from ..present.info import print_info
    from ..present.records import jsonable

    rec = open_input(input_path(args), spill=False, cache=cache_of(args))
    rec.scan()  # counts while walking, keeping no index (or the cache's)
    d = info_dict(rec)
    if args.json:
        print(json.dumps(jsonable(d)))
    else:
        print_info(d, rec, sys.stdout)
    return report_errors(rec)
