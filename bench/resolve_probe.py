"""Name every sample of FILE and every entry of its callchain with perftui's resolver (the
index from the cache when it is there; the names never from it): what ``perf script -F
comm,tid,ip,sym,dso`` does before it prints.  Prints the counts as JSON on stdout.

``python bench/resolve_probe.py FILE``
"""

from __future__ import annotations

import json
import sys


def main(path: str) -> dict[str, int]:
    from perftui.cli import tune_malloc

    tune_malloc()  # as `perftui` itself does at start
    from perftui.perfdata import open_recording
    from perftui.perfdata.indexcache import IndexCache
    from perftui.symbols.naming.resolver import Resolver
    from perftui.symbols.naming.samplelocs import resolve_all
    from perftui.symbols.naming.samplestore import sample_rows_all

    rec = open_recording(path, cache=IndexCache(), mapped=True)
    rec.build_index()
    res = Resolver(rec)
    sl = resolve_all(res, sample_rows_all(rec), callchains=True)
    return {"samples": len(sl), "locations": len(sl.locs),
            "distinct_stacks": len(sl.stack_starts) - 2}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
