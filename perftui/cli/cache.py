"""``perftui cache``: list the cached indexes, or clear them."""

from __future__ import annotations

import argparse
import time
from typing import Any

from ..perfdata.indexcache import IndexCache
from ..symbols.tables import diskcache
from ..textsafe import safe
from .options import CACHE_HELP

HELP = "list or clear the index cache"


def add_parser(sp: Any) -> None:
    p = sp.add_parser("cache", help=HELP,
                      description="The index cache: " + CACHE_HELP + ".  A recording read "
                      "from standard input has no identity and is never cached.")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--list", action="store_true",
                   help="every cached index: size, records, last use, file (the default)")
    g.add_argument("--clear", action="store_true",
                   help="remove every cached index (and the symbol tables kept)")
    p.add_argument("--cache-dir", metavar="DIR", help="the cache directory")
    p.set_defaults(func=run)


def _plural(n: int) -> str:
    return "es" if n != 1 else ""


def run(args: argparse.Namespace) -> int:
    cache = IndexCache(args.cache_dir)
    if args.clear:
        n = cache.clear()
        k = diskcache.clear(cache.directory)
        tables = f" and {k} symbol table{'s' if k != 1 else ''}" if k else ""
        print(safe(f"removed {n} cached index{_plural(n)}{tables} from {cache.directory}"))
        return 0
    entries = cache.entries()
    total = sum(e.nbytes for e in entries)
    print(safe(f"{cache.directory}: {len(entries)} cached index{_plural(len(entries))}, "
               f"{total / 1e6:,.1f} MB of {cache.limit / 1e6:,.0f} MB"))
    for e in sorted(entries, key=lambda e: -e.last_used):
        used = time.strftime("%Y-%m-%d %H:%M", time.localtime(e.last_used)) if e.ok else "?"
        state = "" if e.ok else "  (unreadable: removed on next use)"
        print(safe(f"  {e.nbytes / 1e6:10,.1f} MB  {e.records:>12,} records  {used}  "
                   f"{e.path}{state}"))
    return 0
