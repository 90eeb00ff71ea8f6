"""Command line: ``perftui [FILE]`` and the ``info``/``dump`` subcommands.

Exit status: 0 success, 1 unreadable or corrupt input (one line on standard error naming
the file offset), 2 bad usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from .perfdata import NotPerfData, PerfDataError, Recording, open_recording, type_code
from .perfdata.constants import feature_name
from .perfdata.records import summary
from .textsafe import safe

SUBCOMMANDS = ("info", "dump")


def _jsonable(v: Any) -> Any:
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v


def _fail(err: PerfDataError, out: TextIO = sys.stderr) -> None:
    print(safe(f"perftui: {err}"), file=out)


def _report_errors(rec: Recording) -> int:
    for e in rec.errors:
        _fail(e)
    return 1 if rec.errors else 0


# -- info ------------------------------------------------------------------------------
def cmd_info(args: argparse.Namespace) -> int:
    from .analysis.summary import info_dict

    rec = open_recording(args.file, spill=False)
    rec.build_index()
    d = info_dict(rec)
    if args.json:
        print(json.dumps(_jsonable(d)))
    else:
        print_info(d, rec, sys.stdout)
    return _report_errors(rec)


def print_info(d: dict[str, Any], rec: Recording, out: TextIO) -> None:
    w = out.write

    def line(k: str, v: Any) -> None:
        if v is not None and v != "" and v != []:
            w(safe(f"{k:<16} {v}") + "\n")

    line("file", d["path"])
    line("mode", f"{d['mode']}, {d['byte_order']}-endian")
    line("perf version", d["perf_version"])
    line("hostname", d["hostname"])
    line("os release", d["os_release"])
    line("arch", d["arch"])
    line("cpu", d["cpudesc"])
    if d["nr_cpus_online"] is not None:
        line("cpus", f"{d['nr_cpus_online']} online of {d['nr_cpus_avail']} available")
    if d["total_mem_kb"]:
        line("memory", f"{d['total_mem_kb']} kB")
    line("cmdline", " ".join(d["cmdline"]))
    if d["last_time"]:
        line("time", f"{d['first_time'] / 1e9:.6f} .. {d['last_time'] / 1e9:.6f} s "
             f"({d['duration_ns'] / 1e9:.3f} s)")
    line("features", ", ".join(d["features"]))
    w("\nevents:\n")
    for e in d["events"]:
        w(safe(f"  {e['name']:<24} type {e['type']} config {e['config']:#x} "
               f"samples {e['samples']}  [{'|'.join(e['sample_type'])}]") + "\n")
    if d["samples_with_unknown_id"]:
        w(f"  samples with an id not in the header: {d['samples_with_unknown_id']}\n")
    w(f"\nrecords: {d['total_records']}\n")
    for name, n in sorted(d["records"].items(), key=lambda kv: -kv[1]):
        w(f"  {name:<22} {n:>10}\n")
    for m in d["warnings"]:
        w(safe(f"warning: {m}") + "\n")
    for bit, msg in rec.feature_errors.items():
        w(safe(f"warning: feature {feature_name(bit)}: {msg}") + "\n")


# -- dump ------------------------------------------------------------------------------
def iter_decoded(rec: Recording) -> Iterator[dict[str, Any]]:
    """Every record in file order, decoded, without building an index."""
    for src, ch in rec.chunks():
        rows = rec.builder.rows(ch, max(src, 0))
        types, attrs, sizes = rows["type"], rows["attr"], rows["size"]
        for i in range(len(ch.offs)):
            rel = ch.offs[i] - ch.base
            raw = bytes(ch.buf[rel:rel + int(sizes[i])])
            offset = ch.outer if ch.outer is not None else int(ch.offs[i])
            head: dict[str, Any] = {"offset": offset}
            if ch.outer is not None:
                head["compressed"] = True
            if rec.mode == "directory":
                head["file"] = rec.sources[src].name if ch.outer is None else \
                    rec.sources[src].name if src >= 0 else "?"
            try:
                fields = rec.decoder.decode(raw, int(attrs[i]), int(types[i]))
            except ValueError as e:
                rec.errors.append(PerfDataError(offset, str(e), rec.path))
                fields = {"type": "?", "misc": 0, "size": int(sizes[i]), "error": str(e)}
            head.update(fields)
            yield head


def cmd_dump(args: argparse.Namespace) -> int:
    wanted: set[str] | None = None
    if args.type:
        try:
            from .perfdata import type_name

            wanted = {type_name(type_code(t)) for t in args.type}
        except KeyError as e:
            print(f"perftui dump: unknown record type {e}", file=sys.stderr)
            return 2
    rec = open_recording(args.file, spill=False)
    out = sys.stdout
    n = 0
    for r in iter_decoded(rec):
        if wanted is not None and r["type"] not in wanted:
            continue
        if args.limit is not None and n >= args.limit:
            break
        n += 1
        if args.json:
            out.write(json.dumps(_jsonable(r)) + "\n")
        else:
            sfx = "z" if r.get("compressed") else " "
            text = f"{r['offset']:#010x}{sfx} {r['type']:<16} misc {r['misc']:#06x} " \
                   f"size {r['size']:>5}  {r.get('error') or _summary(r)}"
            out.write(safe(text) + "\n")
    out.flush()
    return _report_errors(rec)


def _summary(r: dict[str, Any]) -> str:
    try:
        return summary(r)
    except (KeyError, TypeError, ValueError):
        return ""


# -- entry point -------------------------------------------------------------------------
def build_parser() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    main = argparse.ArgumentParser(
        prog="perftui", description="Terminal browser for Linux perf.data recordings.",
        epilog="subcommands: info, dump (perftui SUBCOMMAND --help)")
    main.add_argument("file", nargs="?", help="recording (default ./perf.data; - for stdin)")
    main.add_argument("-i", "--input", dest="input", help="recording, as in perf")
    main.add_argument("--demo", action="store_true", help="open the bundled demo recording")
    main.add_argument("--modules-dir", action="append", default=[], metavar="DIR")
    main.add_argument("--version", action="version", version=_version())

    sub = argparse.ArgumentParser(prog="perftui")
    sp = sub.add_subparsers(dest="cmd", required=True)
    p = sp.add_parser("info", help="header, features, events, record counts")
    p.add_argument("file")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_info)
    p = sp.add_parser("dump", help="every record decoded, one per line")
    p.add_argument("file")
    p.add_argument("--json", action="store_true")
    p.add_argument("--type", action="append", metavar="NAME",
                   help="only records of this type (repeatable), e.g. SAMPLE, KMOD_SEC_MAP")
    p.add_argument("--limit", type=int, metavar="N")
    p.set_defaults(func=cmd_dump)
    return main, sub


def _version() -> str:
    from . import __version__

    return f"perftui {__version__}"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    main_p, sub_p = build_parser()
    try:
        if argv and argv[0] in SUBCOMMANDS:
            args = sub_p.parse_args(argv)
            return int(args.func(args))
        args = main_p.parse_args(argv)
        return run_browser(args)
    except NotPerfData as e:
        _fail(e)
        return 1
    except PerfDataError as e:
        _fail(e)
        return 1
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


def run_browser(args: argparse.Namespace) -> int:
    """Until the browser lands, show the ``info`` view of the recording."""
    path = args.input or args.file or "perf.data"
    ns = argparse.Namespace(file=path, json=False)
    return cmd_info(ns)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
