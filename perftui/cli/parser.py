"""The command line's parsers: the browser's (``perftui [FILE] [NEW]``) and the
subcommands', each subcommand's options declared in its own module."""

from __future__ import annotations

import argparse
from types import ModuleType

from . import annotate, cache, diff, dump, info, inject, report, sections
from .options import add_cache_options, add_input, add_symbol_args

#: the subcommands in the order ``perftui --help`` lists them
COMMANDS: dict[str, ModuleType] = {
    "info": info, "dump": dump, "sections": sections, "inject": inject, "report": report,
    "annotate": annotate, "diff": diff, "cache": cache,
}
SUBCOMMANDS = tuple(COMMANDS)


def _version() -> str:
    from .. import __version__

    return f"perftui {__version__}"


def build_parser() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """(the browser's parser, the subcommands' parser)."""
    commands = "\n".join(f"  {name:<10} {mod.HELP}" for name, mod in COMMANDS.items())
    main = argparse.ArgumentParser(
        prog="perftui", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Terminal browser for Linux perf.data recordings.\n\n"
                    "perftui [FILE] opens the browser (a text report when standard output "
                    "is not a terminal).",
        epilog=f"subcommands (perftui SUBCOMMAND --help for their options):\n{commands}\n\n"
               "exit status: 0 success, 1 unreadable or corrupt input, 2 bad usage, "
               "3 internal error")
    add_input(main)
    main.add_argument("new_file", nargs="?", metavar="NEW",
                      help="a second recording: compare FILE (OLD) with it, as perftui diff")
    add_symbol_args(main)
    add_cache_options(main)
    main.add_argument("--version", action="version", version=_version(),
                      help="print the version and exit")

    sub = argparse.ArgumentParser(prog="perftui")
    sp = sub.add_subparsers(dest="cmd", required=True, metavar="SUBCOMMAND")
    for mod in COMMANDS.values():
        mod.add_parser(sp)
    return main, sub


def subcommand_parser(sub: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    """The parser of one subcommand (its usage is what a bad option of it prints)."""
    for action in sub._actions:
        if isinstance(action, argparse._SubParsersAction):
            parser: argparse.ArgumentParser = action.choices[name]
            return parser
    raise KeyError(name)
