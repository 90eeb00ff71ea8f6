"""The call trees the profile view opens (:mod:`.profile`): of everything shown (top-down
and bottom-up), of a table row (its callers and its callees), or of a function's sandwich
(its callers above, its callees below, over every call site); when first shown, their
heaviest path open a few levels down.  Made in the profile's worker."""

from __future__ import annotations

import numpy as np

from ...analysis.samplegroups import GroupProfile
from ..profiledata import ProfileData, Scope
from .calltrees import Forest

AUTO_OPEN = 3  # levels of the heaviest path opened when trees are first shown


def forests_of(data: ProfileData, gp: GroupProfile, row: int | None, fresh: bool,
               scope: Scope | None = None, sandwich: frozenset[int] | None = None
               ) -> tuple[GroupProfile, list[Forest]]:
    """(the profile the trees are of, the trees): of row ``row`` of ``gp`` (None: of
    everything in it), or the sandwich of the function whose locations are ``sandwich``
    (its row of the ``sym`` table of ``scope``; no tree when it has none).  ``fresh``:
    first shown, the heaviest path opened."""
    if sandwich is not None and scope is not None:
        gp, row = sandwich_row(data, scope, sandwich)
    if row is None and sandwich is not None:
        forests = []
    elif row is None:
        td, bu = data.whole_of(gp.selection)
        forests = [Forest("top-down: callers first", td),
                   Forest("bottom-up: sampled functions first", bu, top_down=False)]
    else:
        callers, callees = data.focus(gp, row)
        forests = [Forest("callers (bottom-up: who calls it)", callers, top_down=False),
                   Forest("callees (top-down: what it calls)", callees)]
    for f in forests:
        f.tree.tree.children(-1)  # the children index, off the UI thread
        if fresh:
            auto_open(f)
    return gp, forests


def sandwich_row(data: ProfileData, scope: Scope, ids: frozenset[int]
                 ) -> tuple[GroupProfile, int | None]:
    """The table by ``sym`` (with Children) and the row of the function ``ids``."""
    gp = data.table(scope, ("sym",), True)
    if gp is None:
        raise RuntimeError("no profile")
    code = gp.codes.of("sym")[min(ids)]
    hit = np.flatnonzero(gp.key[:, 0] == code)
    return gp, (int(hit[0]) if len(hit) else None)


def auto_open(f: Forest) -> None:
    """Open the first root, then follow its heaviest path a few levels down while one
    child carries at least half of its parent (a spread of small ones stays closed)."""
    t = f.tree.tree
    kids = t.children(-1)
    if not len(kids):
        return
    node = int(kids[0])
    path: tuple[int, ...] = (int(t.frame[node]),)
    f.expanded.add(path)
    for _ in range(AUTO_OPEN):
        kids = t.children(node)
        if not len(kids):
            break
        node = int(kids[0])
        if not len(t.children(node)) or \
                2 * int(t.total[t.children(node)[0]]) < int(t.total[node]):
            break
        path = (*path, int(t.frame[node]))
        f.expanded.add(path)
