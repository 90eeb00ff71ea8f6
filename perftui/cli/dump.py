"""``perftui dump``: every record in file order, decoded, one per line (perf report -D);
a sample's names as perf script gives them."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..present.records import jsonable, summary
from ..textsafe import safe
from .errors import UsageError, report_errors
from .inputs import input_path, open_input
from .options import add_input, add_symbol_args, symbol_options

HELP = "every record in file order, decoded, one per line (perf report -D)"


def add_parser(sp: Any) -> None:
    p = sp.add_parser("dump", help=HELP, description=HELP)
    add_input(p)
    p.add_argument("--json", action="store_true", help="one JSON object per record")
    p.add_argument("--type", action="append", metavar="NAME[,NAME...]",
                   help="only records of these types (repeatable), e.g. SAMPLE,COMM")
    p.add_argument("--limit", type=int, metavar="N", help="stop after N records")
    p.add_argument("--no-symbols", action="store_true",
                   help="no names for samples (a plain walk: faster, constant memory)")
    add_symbol_args(p)
    p.set_defaults(func=run)


def wanted_types(args: argparse.Namespace) -> set[str] | None:
    """The record type names ``--type`` keeps (None: every type); bad usage raises."""
    if not args.type:
        return None
    from ..perfdata import type_code, type_name

    names = [t.strip() for arg in args.type for t in arg.split(",") if t.strip()]
    try:
        return {type_name(type_code(t)) for t in names}
    except KeyError as e:
        raise UsageError(f"dump: unknown record type {e}") from None


def run(args: argparse.Namespace) -> int:
    wanted = wanted_types(args)
    if args.limit is not None and args.limit < 0:
        raise UsageError("dump: --limit must be 0 or more")
    if args.no_symbols:  # a plain walk: nothing indexed, constant memory
        rec = open_input(input_path(args), spill=False, mapped=True)
        records: Any = ((None, r) for r in rec.records())
        namer = None
    else:  # names need the whole recording (perf's processing order): index it first
        from ..present.samplenames import SampleNamer
        from ..symbols.naming.resolver import Resolver

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
            out.write(safe(record_line(r)) + "\n")
    out.flush()
    for w in rec.warnings:
        print(safe(f"perftui: warning: {w}"), file=sys.stderr)
    return report_errors(rec)


def record_line(r: dict[str, Any]) -> str:
    """One decoded record as ``perftui dump`` prints it (not yet escaped)."""
    sfx = "z" if r.get("compressed") else " "
    where = f"{r['file']}:" if "file" in r else ""
    text = f"{where}{r['offset']:#010x}{sfx} {r['type']:<16} misc {r['misc']:#06x} " \
           f"size {r['size']:>5}  {_when_who(r)}{r.get('error') or _summary(r)}"
    if "dso" in r and "error" not in r:
        from ..present.samplenames import where as sample_where

        text += f"  {sample_where(r)}"
    return text


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
