"""``perftui inject``: add KMOD_SEC_MAP records to a recording (or ``--strip`` them);
never touches the input, writes OUT atomically."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..textsafe import safe
from .errors import report_errors
from .inputs import input_path, open_input
from .options import add_input, add_modules_dir

HELP = "add KMOD_SEC_MAP records to a recording (or --strip them)"


def add_parser(sp: Any) -> None:
    p = sp.add_parser("inject", help=HELP, description=HELP)
    add_input(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="the new recording (never FILE itself; written atomically)")
    p.add_argument("--sysfs", default="/sys", metavar="ROOT",
                   help="root of the sysfs tree with module/*/sections (default /sys)")
    add_modules_dir(p)
    p.add_argument("--include-init", action="store_true", help="also .init* sections")
    p.add_argument("--strip", action="store_true", help="remove KMOD_SEC_MAP records instead")
    p.add_argument("--force", action="store_true", help="replace an existing OUT")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..symbols.modules.inject import PERF_NOTE, InjectError, inject, strip

    rec = open_input(input_path(args), spill=False, mapped=True)  # an index in mapped files
    rec.build_index()
    if rec.errors:
        return report_errors(rec)
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
