"""The ``perftui`` command: ``perftui.cli.main`` with start-up's collector held off
(``perftui.startup``); imports nothing else before it holds it."""

from __future__ import annotations

from . import startup


def main() -> int:
    """Run the command line with the cyclic collector off until start-up is over."""
    startup.hold()
    try:
        from .cli import main as cli_main

        return cli_main()
    finally:
        startup.release()
