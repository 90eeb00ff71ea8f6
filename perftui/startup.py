"""Start-up without Python's cyclic garbage collector.

Importing Python, numpy, Textual and perftui makes ~10^5 container objects, and the
collector walks them again and again while they are made: ~55 ms of a ~0.4 s launch
(measured: median 0.42 s with it, 0.36 s without, 10 runs each). Start-up makes no
cyclic garbage worth collecting, so the launcher holds the collector off until the work
proper begins (a command's pass, or the browser's first complete screen) and then
*freezes* what start-up made, so later collections never walk it again.
"""

from __future__ import annotations

import gc


def hold() -> None:
    """Switch the cyclic collector off for start-up."""
    gc.disable()


def release() -> None:
    """Start-up is over: keep what it made out of later collections, collect again."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()

