"""Profiles for other tools: folded stacks (flamegraph.pl and friends) and speedscope.

speedscope's file format is its published JSON schema
(https://www.speedscope.app/file-format-schema.json): shared frames plus profiles; ours
are "sampled" profiles whose samples are the distinct stacks, weighted by their counts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from .. import __version__
from ..analysis.stackcounts import StackCounts

SPEEDSCOPE_SCHEMA = "https://www.speedscope.app/file-format-schema.json"


#: A stack as the exports take it: (comm id, locations outermost first, sample count)
#: (:meth:`~perftui.analysis.stackcounts.StackCounts.paths`).
Path = tuple[int, Sequence[int], int]


def folded_stacks(stacks: Iterable[Path], name_of_loc: Callable[[int], str],
                  name_of_comm: Callable[[int], str]) -> list[tuple[str, int]]:
    """``comm;outermost;...;leaf`` and its sample count, one per distinct line, sorted.

    Frame names have ``;`` replaced (it separates frames) and no line breaks."""
    acc: dict[str, int] = {}
    for comm, frames, count in stacks:
        line = ";".join([_clean(name_of_comm(comm)), *(_clean(name_of_loc(f)) for f in frames)])
        acc[line] = acc.get(line, 0) + count
    return sorted(acc.items())


def _clean(name: str) -> str:
    return name.replace(";", ":").replace("\n", " ").replace("\r", " ")


def speedscope(stacks: Iterable[Path], name_of_loc: Callable[[int], str],
               name_of_comm: Callable[[int], str], dso_of_loc: Callable[[int], str],
               title: str, unit: str = "none") -> dict[str, Any]:
    """A speedscope file (sampled profile, weights in samples, or in ``unit``: a timed
    event's "nanoseconds"): a sample per distinct path (the thread name, then the frames
    outermost first)."""
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

    paths: dict[tuple[int, ...], int] = {}  # (stacks alike but for their ids: one sample)
    for comm, locs, count in stacks:
        key = (-1 - comm, *locs)
        paths[key] = paths.get(key, 0) + count
    samples = [[frame_index(f) for f in p] for p in paths]
    weights = list(paths.values())
    total = int(sum(weights))
    return {
        "$schema": SPEEDSCOPE_SCHEMA,
        "shared": {"frames": frames},
        "profiles": [{
            "type": "sampled", "name": title, "unit": unit,
            "startValue": 0, "endValue": total,
            "samples": samples, "weights": weights,
        }],
        "name": title,
        "activeProfileIndex": 0,
        "exporter": f"perftui {__version__}",
    }


def named_stacks(counts: StackCounts, name_of_loc: Callable[[int], str],
                 name_of_comm: Callable[[int], str]) -> Iterator[tuple[list[str], int]]:
    """Each distinct stack as the folded stacks name it (thread name, then the frames
    outermost first) with its period: what the differential flame graph compares
    (:func:`~perftui.analysis.diffflame.diff_flame`)."""
    for i in range(len(counts)):
        names = [name_of_comm(int(counts.comm[i]))]
        names.extend(name_of_loc(f) for f in counts.frames(i))
        yield names, int(counts.period[i])
