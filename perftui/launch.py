"""The ``perftui`` command: ``perftui.cli.main`` with start-up's collector held off
(``perftui.startup``); imports nothing else before it holds it."""

from __future__ import annotations

import os

from . import startup


def main() -> int:
    """Run the command line with the cyclic collector off until start-up is over."""
    startup.hold()
    # perftui does no linear algebra: numpy's OpenBLAS need not start a thread per core
    # at import (~10 ms of a launch, and threads that idle-spin after any BLAS call)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        from .cli import main as cli_main

        return cli_main()
    finally:
        startup.release()
