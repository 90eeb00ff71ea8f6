"""Profiles for other tools: folded stacks (flamegraph.pl and friends) and speedscope.

speedscope's file format is its published JSON schema
(https://www.speedscope.app/file-format-schema.json): shared frames plus profiles; ours
are "sampled" profiles whose samples are the distinct stacks, weighted by their counts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import __version__
from ..analysis.calltree import CallTree

SPEEDSCOPE_SCHEMA = "https://www.speedscope.app/file-format-schema.json"


def _frame_names(tree: CallTree, name_of_loc: Callable[[int], str],
                 name_of_comm: Callable[[int], str]) -> Callable[[int], str]:
    def name(f: int) -> str:
        return name_of_comm(-1 - f) if f < 0 else name_of_loc(f)
    return name


def folded_stacks(tree: CallTree, name_of_loc: Callable[[int], str],
                  name_of_comm: Callable[[int], str]) -> list[tuple[str, int]]:
    """``comm;outermost;...;leaf`` and its sample count, one per distinct stack, sorted.

    Frame names have ``;`` replaced (it separates frames) and no line breaks."""
    assert tree.top_down, "folded stacks come from a top-down tree"
    name = _frame_names(tree, name_of_loc, name_of_comm)
    acc: dict[str, int] = {}
    for n in np.nonzero(tree.self_count)[0].tolist():
        parts = [_clean(name(f)) for f in tree.path(n)]
        line = ";".join(parts)
        acc[line] = acc.get(line, 0) + int(tree.self_count[n])
    return sorted(acc.items())


def _clean(name: str) -> str:
    return name.replace(";", ":").replace("\n", " ").replace("\r", " ")


def speedscope(tree: CallTree, name_of_loc: Callable[[int], str],
               name_of_comm: Callable[[int], str], dso_of_loc: Callable[[int], str],
               title: str) -> dict[str, Any]:
    """A speedscope file (sampled profile, weights in samples) of a top-down tree."""
    assert tree.top_down
    frames: list[dict[str, Any]] = []
    index: dict[int, int] = {}

    def frame_index(f: int) -> int:
        i = index.get(f)
        if i is None:
            i = index[f] = len(frames)
            if f < 0:
                frames.append({"name": name_of_comm(-1 - f)})
            else:
                frames.append({"name": name_of_loc(f), "file": dso_of_loc(f)})
        return i

    samples: list[list[int]] = []
    weights: list[int] = []
    for n in np.nonzero(tree.self_count)[0].tolist():
        samples.append([frame_index(f) for f in tree.path(n)])
        weights.append(int(tree.self_count[n]))
    total = int(sum(weights))
    return {
        "$schema": SPEEDSCOPE_SCHEMA,
        "shared": {"frames": frames},
        "profiles": [{
            "type": "sampled", "name": title, "unit": "none",
            "startValue": 0, "endValue": total,
            "samples": samples, "weights": weights,
        }],
        "name": title,
        "activeProfileIndex": 0,
        "exporter": f"perftui {__version__}",
    }
