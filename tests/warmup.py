"""The compiled loops (numba) compiled before the tests start, once, not once a run.

Without it the first tests to name samples with callchains (two workers at once) would pay
the compile, and the terminal tests could time out waiting for names.  It is the product's
own warm-up (:mod:`perftui.warmcompile`, which a first big recording after an install starts
in the background), run in the foreground, and only when its stamp says numba's cache may be
stale.  Nested pytest runs (tests/test_ci_strict.py) and xdist's workers find it fresh.

``python tests/warmup.py`` does the same (``make setup`` runs it).
"""

from __future__ import annotations

from perftui import warmcompile


def ensure_compiled() -> bool:
    """Compile perftui's loops unless the stamp says they are; True when it ran them."""
    if warmcompile.ready():
        return False
    warmcompile.compile_all()
    return True


if __name__ == "__main__":
    ensure_compiled()
