"""The options several commands share (perf's names), and the checks of their values that
need no recording: a command makes them before it opens any file, so a typo costs
nothing (``report -s bogus`` on a 5 GB recording answers at once)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .errors import UsageError
from .inputs import DEFAULT_INPUT

if TYPE_CHECKING:
    from ..analysis.filters import Filter
    from ..perfdata import Recording
    from ..symbols.options import SymbolOptions

CACHE_HELP = ("complete indexes are kept in DIR (default $PERFTUI_CACHE_DIR, else "
              "~/.cache/perftui; at most $PERFTUI_CACHE_LIMIT bytes, default 20G) and "
              "mapped again on the next open of the same file")


def time_help() -> str:
    """``--time``'s help, with argparse's % escaped (perf's 10%/2)."""
    from ..analysis.timespec import TIME_HELP

    return TIME_HELP.replace("%", "%%")


def add_input(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", metavar="FILE",
                   help=f"the recording (default ./{DEFAULT_INPUT}; - reads a pipe-mode "
                        "stream from standard input)")
    p.add_argument("-i", "--input", metavar="FILE", help="the recording, as perf takes it")
    p.add_argument("--demo", action="store_true", help="use the bundled demo recording")


def add_modules_dir(p: argparse.ArgumentParser) -> None:
    p.add_argument("--modules-dir", action="append", default=[], metavar="DIR",
                   help="also look for module files (.ko, .ko.xz, ...) here (repeatable)")


def add_symbol_args(p: argparse.ArgumentParser) -> None:
    """perf's symbol options."""
    p.add_argument("--kallsyms", metavar="FILE", help="kernel symbols from this kallsyms file")
    p.add_argument("--vmlinux", metavar="FILE", help="kernel symbols from this vmlinux")
    p.add_argument("--symfs", metavar="DIR", help="look for files under DIR (as perf)")
    p.add_argument("--stitch-lbr", action="store_true",
                   help="continue each LBR call stack with the calls its thread's earlier "
                        "samples saw (perf's --stitch-lbr; needs --call-graph lbr)")
    add_modules_dir(p)


def add_cache_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cache-dir", metavar="DIR", help=CACHE_HELP)
    p.add_argument("--no-cache", action="store_true",
                   help="neither read nor write the index cache")


def symbol_options(args: argparse.Namespace) -> SymbolOptions:
    """The symbol options of a command (perf's names)."""
    from ..symbols.options import SymbolOptions

    return SymbolOptions(kallsyms=args.kallsyms, vmlinux=args.vmlinux, symfs=args.symfs,
                         modules_dirs=list(args.modules_dir),
                         stitch_lbr=bool(getattr(args, "stitch_lbr", False)))


def name_list(text: str | None, option: str, command: str) -> frozenset[str] | None:
    """The names of a comma list option (None: not given); a list with no name in it is
    bad usage, as an empty ``--cpu`` is (never silently "no filter")."""
    if text is None:
        return None
    names = frozenset(x for x in text.split(",") if x)
    if not names:
        raise UsageError(f"{command}: {option} needs at least one name")
    return names


def check_sample_options(args: argparse.Namespace, command: str) -> None:
    """``--time``, ``--cpu``, ``--pid`` and ``--tid`` (where the command has them) checked
    before any file is read: bad usage raises :class:`UsageError`.  A percentage of a
    recording without timed samples is only found once it is open."""
    from ..analysis.filters import FilterError, parse_int_list
    from ..analysis.timespec import NSEC, TimeSpecError, parse_time_spec

    try:
        for name in ("cpu", "pid", "tid"):
            text = getattr(args, name, None)
            if text is not None:
                parse_int_list(text, f"{name} list")
        if getattr(args, "time", None) is not None:
            # any span will do for the syntax: the recording's own comes once it is open
            parse_time_spec(args.time, NSEC, 2 * NSEC)
    except (FilterError, TimeSpecError) as e:
        raise UsageError(f"{command}: {e}") from None


def event_index(rec: Recording, name: str, command: str) -> int:
    """The index of the event called ``name`` (its attr), from the header: bad usage when
    the recording has none of that name."""
    from ..analysis.offcpu import OFFCPU_EVENT, offcpu_attr

    names = [a.display_name for a in rec.attrs]
    if name in names:
        return names.index(name)
    made = offcpu_attr(rec)
    if made is not None and name == OFFCPU_EVENT:
        return made  # (its samples are sched_switch's)
    if name == OFFCPU_EVENT and rec.tracing_error is not None:
        raise rec.tracing_error  # (the formats that name sched_switch cannot be read)
    events = names + ([OFFCPU_EVENT] if made is not None else [])
    why = ("; offcpu-time is made from sched:sched_switch samples, whose stacks it charges "
           "(record with -e sched:sched_switch -g), or from the SWITCH records of "
           "--switch-events (charged to the samples before them), or read from perf's "
           "--off-cpu") if name == OFFCPU_EVENT else ""
    raise UsageError(f"{command}: no event {name!r} in this recording "
                     f"(events: {', '.join(events)}){why}")


def check_event(rec: Recording, args: argparse.Namespace, command: str) -> None:
    """``--event``'s name checked against the header's events, before any walk (a pipe's
    events come as records: checked once it is read)."""
    if getattr(args, "event", None) and rec.mode != "pipe":
        event_index(rec, args.event, command)


def sample_filter(args: argparse.Namespace, rec: Recording, command: str) -> Filter:
    """The samples ``--time``, ``--cpu``, ``--pid``, ``--tid`` (where the command has it) and
    ``--event`` select, once the recording is indexed (``--time``'s percentages are of its
    span); bad usage raises :class:`UsageError`."""
    from ..analysis.filters import Filter, FilterError, cpu_list, parse_int_list, parse_time_range
    from ..analysis.summary import sample_bounds, time_span

    tid = getattr(args, "tid", None)
    try:
        first, last = sample_bounds(rec)
        return Filter(
            time=parse_time_range(args.time, first, last, origin=time_span(rec)[0])
            if args.time is not None else None,
            cpus=cpu_list(rec, args.cpu) if args.cpu is not None else None,
            pids=parse_int_list(args.pid, "pid list") if args.pid is not None else None,
            tids=parse_int_list(tid, "tid list") if tid is not None else None,
            attr=event_index(rec, args.event, command) if args.event else None,
        )
    except FilterError as e:
        raise UsageError(f"{command}: {e}") from None


def made_offcpu(rec: Recording, event: str | None) -> bool:
    """Whether ``--event`` asks for the ``offcpu-time`` made from sched_switch (not a
    recorded event of that name: perf's ``--off-cpu`` one is read as it is)."""
    from ..analysis.offcpu import OFFCPU_EVENT, offcpu_attr

    return event == OFFCPU_EVENT and offcpu_attr(rec) is not None


def add_field_separator(p: argparse.ArgumentParser) -> None:
    """perf's ``-t``/``--field-separator`` (report and diff)."""
    p.add_argument("-t", "--field-separator", metavar="SEP", default=None,
                   help="between the text table's columns (and a folded graph's frames), "
                        "no spaces added, as perf's; a key's SEP written '.'")


def field_separator(args: argparse.Namespace, command: str, *other_outputs: str
                    ) -> str | None:
    """``-t``'s separator (None: none given, or empty, as perf's); a usage error for ``.``
    (perf's one refused separator: a key's separator is written ``.``) or beside
    ``other_outputs`` (the options given for another output than the text table)."""
    sep: str | None = args.field_separator or None
    if sep is None:
        return None
    if sep.startswith("."):
        raise UsageError(f"{command}: -t '.': '.' is the one separator that cannot be used "
                         "(a key's separator is written '.')")
    if other_outputs:
        raise UsageError(f"{command}: -t is for the text table, not {other_outputs[0]}")
    return sep


def add_quiet(p: argparse.ArgumentParser) -> None:
    """perf's ``-q``/``--quiet`` (report and diff): the text table without its ``#`` lines."""
    p.add_argument("-q", "--quiet", action="store_true",
                   help="the text table without its comment lines (perf's -q)")
