"""The command line: ``perftui [FILE]`` (the browser) and its subcommands, one module
each (``info``, ``dump``, ``sections``, ``inject``, ``report``, ``annotate``, ``diff``,
``cache``: its options in ``add_parser``, its work in ``run``); ``browser`` opens the
browsers, ``parser`` builds the parsers, ``entry`` dispatches and maps failures to exit
statuses (``errors``), ``inputs`` and ``options`` are what the commands share.

Exit status: 0 success, 1 unreadable or corrupt input (one line on standard error naming
the file offset), 2 bad usage, 3 internal error.
"""

from __future__ import annotations

from .entry import main, tune_malloc
from .inputs import demo_modules_dir
from .parser import SUBCOMMANDS, build_parser

__all__ = ["SUBCOMMANDS", "build_parser", "demo_modules_dir", "main", "tune_malloc"]
